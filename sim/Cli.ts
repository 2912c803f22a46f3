/** The `crossbook sim …` commands: replay a tape with a scenario, and (with the converters) make tapes. */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { resolve } from "node:path"
import { backtest } from "./Backtest.ts"
import { convertKalshi } from "./convert/Kalshi.ts"
import { renderReport } from "./Report.ts"
import { type StrategyExport, strategyOf } from "./Strategy.ts"
import { convertPolymarket } from "./convert/Polymarket.ts"
import { generateTape } from "./Generator.ts"
import { replay, Scenario } from "./Replay.ts"
import { formatTape } from "./Tape.ts"

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
      const tape = readFileSync(o.tape, "utf8")
      const orders = Option.isSome(o.orders)
        ? Schema.decodeUnknownSync(Scenario)(JSON.parse(readFileSync(o.orders.value, "utf8")))
        : []
      let shown = -1
      const { log, summary } = yield* replay({
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
      const text = readFileSync(o.input, "utf8")
      const { header, events, report } = o.from === "kalshi" ? convertKalshi(text) : convertPolymarket(text)
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
      const module = yield* Effect.promise(() => import(pathToFileURL(resolve(o.strategy)).href))
      const strategy = strategyOf((module.default ?? module.strategy) as StrategyExport)
      const tape = Option.isSome(o.tape)
        ? readFileSync(o.tape.value, "utf8")
        : (() => {
            const g = generateTape({ seed: o.seed, markets: 2, durationS: 1800 })
            return formatTape(g.header, g.events)
          })()
      let shown = -1
      const report = yield* backtest({
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
