/** The `crossbook sim …` commands: replay a tape with a scenario, and (with the converters) make tapes. */
import { Args, Command, Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { resolve } from "node:path"

/**
 * The modules a command runs on, loaded when it runs: the engine, the desk and the converters stay out of `--help`
 * and of the commands that do not use them.
 */
const load = <A>(module: () => Promise<A>) => Effect.promise(module)

/** A failure the user can act on; the entry point prints its message as one sentence on stderr and exits 1. */
class SimError extends Data.TaggedError("SimError")<{ readonly message: string }> {}

const firstLine = (error: unknown): string =>
  ((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").trim()

/** Reads a text file, or fails with a sentence naming it. */
const readText = (file: string, what: string) =>
  Effect.try({
    try: () => readFileSync(file, "utf8"),
    catch: (error) => new SimError({ message: `cannot read the ${what} ${file} (${firstLine(error)})` })
  })

/** Runs a step that throws on bad input (a tape, a scenario), turning the throw into a sentence naming the file. */
const orFail = <A>(what: string, run: () => A) =>
  Effect.try({ try: run, catch: (error) => new SimError({ message: `${what} (${firstLine(error)})` }) })

/** A tape the parser refuses is the user's input, not a bug: says which line, and where the format is written. */
const badTape = (file: string) =>
  Effect.catchAllDefect((defect: unknown) => {
    const line = /^tape line (\d+)/.exec(firstLine(defect))
    return line === null
      ? Effect.die(defect)
      : Effect.fail(
          new SimError({ message: `${file} line ${line[1]} is not a tape event (the format is in sim/TAPES.md)` })
        )
  })

/**
 * A strategy module, loaded: JavaScript as it is; TypeScript (an ES module or CommonJS) through tsx, which the
 * project's own install has and an installed package asks for.
 */
const importStrategy = (file: string) => {
  const url = pathToFileURL(resolve(file)).href
  const failed = (error: unknown) =>
    new SimError({ message: `the strategy ${file} does not load: ${firstLine(error)}` })
  if (!/\.[cm]?tsx?$/.test(file)) {
    return Effect.tryPromise({ try: () => import(url) as Promise<Record<string, unknown>>, catch: failed })
  }
  return Effect.tryPromise({
    try: () => import("tsx/esm/api"),
    catch: () =>
      new SimError({
        message: `the strategy ${file} is TypeScript, which needs tsx: \`npm install tsx\` beside crossbook, or compile it to JavaScript`
      })
  }).pipe(
    Effect.flatMap((tsx) =>
      Effect.tryPromise({
        try: () => tsx.tsImport(url, import.meta.url) as Promise<Record<string, unknown>>,
        catch: failed
      })
    )
  )
}

const seed = Options.integer("seed").pipe(Options.withDescription("Seed of the run"), Options.withDefault(1))

const replayCommand = Command.make(
  "replay",
  {
    orders: Options.file("orders").pipe(
      Options.withDescription("Scenario: JSON array of {at_ms, order} (order = a POST /trading/orders body)"),
      Options.optional
    ),
    seed,
    out: Options.directory("out").pipe(
      Options.withDescription("Where events.jsonl and summary.json go"),
      Options.withDefault("replay-out")
    ),
    tape: Args.file({ name: "TAPE" })
  },
  (o) =>
    Effect.gen(function* () {
      const { replay, Scenario } = yield* load(() => import("./Replay.ts"))
      const tape = yield* readText(o.tape, "tape")
      const orders = Option.isSome(o.orders)
        ? yield* Effect.flatMap(readText(o.orders.value, "scenario"), (text) =>
            orFail(
              `the scenario ${o.orders.pipe(Option.getOrElse(() => ""))} is not a JSON array of {at_ms, order}`,
              () => Schema.decodeUnknownSync(Scenario)(JSON.parse(text))
            )
          )
        : []
      let shown = -1
      const { log, summary } = yield* Effect.suspend(() =>
        replay({
          tape,
          orders,
          seed: o.seed,
          onProgress: (done, total) => {
            const pct = Math.floor((done / total) * 100)
            if (pct >= shown + 10 || done === total) {
              shown = pct
              process.stderr.write(`replay: ${pct}% (${done}/${total} events)\n`)
            }
          }
        })
      ).pipe(badTape(o.tape))
      mkdirSync(o.out, { recursive: true })
      writeFileSync(join(o.out, "events.jsonl"), log)
      writeFileSync(join(o.out, "summary.json"), JSON.stringify(summary, null, 2) + "\n")
      yield* Console.log(JSON.stringify(summary, null, 2))
    })
).pipe(Command.withDescription("Run the engine and a tape-fed venue over TAPE; writes events.jsonl and summary.json"))

const generateCommand = Command.make(
  "generate",
  {
    seed,
    markets: Options.integer("markets").pipe(Options.withDescription("How many markets"), Options.withDefault(4)),
    durationS: Options.integer("duration-s").pipe(
      Options.withDescription("Seconds of market"),
      Options.withDefault(3600)
    ),
    out: Args.file({ name: "OUT" })
  },
  (o) =>
    Effect.gen(function* () {
      const { generateTape } = yield* load(() => import("./Generator.ts"))
      const { formatTape } = yield* load(() => import("./Tape.ts"))
      const { header, events } = generateTape({ seed: o.seed, markets: o.markets, durationS: o.durationS })
      writeFileSync(o.out, formatTape(header, events))
      yield* Console.log(`wrote ${events.length} events for ${header.markets.length} markets to ${o.out}`)
    })
).pipe(Command.withDescription("Write a generated tape: seeded markets with drifting fair values, makers and takers"))

const convertCommand = Command.make(
  "convert",
  {
    from: Options.choice("from", ["polymarket", "kalshi"]).pipe(Options.withDescription("The recording's venue")),
    input: Args.file({ name: "IN", exists: "yes" }),
    out: Args.file({ name: "OUT" })
  },
  (o) =>
    Effect.gen(function* () {
      const { convertKalshi } = yield* load(() => import("./convert/Kalshi.ts"))
      const { convertPolymarket } = yield* load(() => import("./convert/Polymarket.ts"))
      const { formatTape } = yield* load(() => import("./Tape.ts"))
      const text = yield* readText(o.input, "recording")
      const { header, events, report } = yield* orFail(`${o.input} is not a ${o.from} recording`, () =>
        o.from === "kalshi" ? convertKalshi(text) : convertPolymarket(text)
      )
      if (events.length === 0) {
        process.stderr.write(JSON.stringify(report, null, 2) + "\n")
        return yield* new SimError({
          message:
            `${o.input} holds no ${o.from} market data (${report.lines} lines, ${report.skipped.length} skipped; ` +
            `the report above says why): nothing written to ${o.out}`
        })
      }
      writeFileSync(o.out, formatTape(header, events))
      yield* Console.log(JSON.stringify(report, null, 2))
      yield* Console.log(`wrote ${events.length} events for ${header.markets.length} markets to ${o.out}`)
    })
).pipe(
  Command.withDescription("Turn a recorded venue stream into a tape; sequence gaps are reported, not papered over")
)

export const simCommand = Command.make("sim").pipe(
  Command.withDescription("Simulation: replay tapes, generate and convert them"),
  Command.withSubcommands([replayCommand, generateCommand, convertCommand])
)

export const backtestCommand = Command.make(
  "backtest",
  {
    tape: Options.file("tape").pipe(
      Options.withDescription("A tape to run over (default: a generated one from the seed, 2 markets, 30 minutes)"),
      Options.optional
    ),
    seed,
    out: Options.directory("out").pipe(
      Options.withDescription("Where report.json and report.html go"),
      Options.withDefault("backtest-out")
    ),
    strategy: Args.file({ name: "STRATEGY", exists: "yes" })
  },
  (o) =>
    Effect.gen(function* () {
      const { backtest } = yield* load(() => import("./Backtest.ts"))
      const { renderReport } = yield* load(() => import("./Report.ts"))
      const { strategyFromModule } = yield* load(() => import("./Strategy.ts"))
      const { generateTape } = yield* load(() => import("./Generator.ts"))
      const { formatTape } = yield* load(() => import("./Tape.ts"))
      const module = yield* importStrategy(o.strategy)
      const loaded = strategyFromModule(module)
      if ("error" in loaded) {
        return yield* new SimError({
          message: `the strategy ${o.strategy} is not usable: ${loaded.error} (see sim/Strategy.ts)`
        })
      }
      const strategy = loaded.strategy
      const tape = Option.isSome(o.tape)
        ? yield* readText(o.tape.value, "tape")
        : (() => {
            const g = generateTape({ seed: o.seed, markets: 2, durationS: 1800 })
            return formatTape(g.header, g.events)
          })()
      let shown = -1
      const report = yield* Effect.suspend(() =>
        backtest({
          tape,
          strategy,
          seed: o.seed,
          onProgress: (done, total) => {
            const pct = Math.floor((done / total) * 100)
            if (pct >= shown + 10 || done === total) {
              shown = pct
              process.stderr.write(`backtest: ${pct}% (${done}/${total} events)\n`)
            }
          }
        })
      ).pipe(badTape(Option.getOrElse(o.tape, () => "the generated tape")))
      mkdirSync(o.out, { recursive: true })
      writeFileSync(join(o.out, "report.json"), JSON.stringify(report, null, 2) + "\n")
      writeFileSync(join(o.out, "report.html"), renderReport(report))
      yield* Console.log(
        `${report.strategy}: net ${report.pnl.net ?? "unmarked"} (realized ${report.pnl.realized}, fees ${report.pnl.fees}), ` +
          `${report.fills.length} fills, max drawdown ${report.max_drawdown}; report in ${join(o.out, "report.html")}`
      )
    })
).pipe(
  Command.withDescription("Run a strategy module against the engine over a tape; writes report.json and report.html")
)
