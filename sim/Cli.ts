/** The `crossbook sim …` commands: replay a tape with a scenario, and (with the converters) make tapes. */
import { Args, Command, Options } from "@effect/cli"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { closeSync, mkdirSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Tapes } from "../src/Data/Tapes.ts"
import { BUILT_IN_VENUES } from "../src/Venues/BuiltIn.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"
import type { ConvertReport } from "./convert/Transcript.ts"

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
    if (line !== null)
      return Effect.fail(
        new SimError({ message: `${file} line ${line[1]} is not a tape event (the format is in sim/TAPES.md)` })
      )
    const arrow = /^(?:not an Arrow tape|arrow tape)/.test(firstLine(defect))
    return arrow
      ? Effect.fail(new SimError({ message: `${file}: ${firstLine(defect)} (the format is in docs/tapes.md)` }))
      : Effect.die(defect)
  })

/** A tape file of either format (NDJSON or Arrow IPC) opened as a stream, or a sentence naming it. */
const openTape = (file: string) =>
  Effect.flatMap(
    load(() => import("./TapeStream.ts")),
    ({ streamTapeFile }) =>
      Effect.try({
        try: () => streamTapeFile(file),
        catch: (error) => {
          const line = /^tape line (\d+)/.exec(firstLine(error))
          return new SimError({
            message:
              line === null
                ? `cannot read the tape ${file} (${firstLine(error)})`
                : `${file} line ${line[1]} is not a tape event (the format is in sim/TAPES.md)`
          })
        }
      })
  )

/** A strategy module, loaded (sim/StrategyLoader.ts); a module that does not load fails with its sentence. */
const importStrategy = (file: string) =>
  Effect.tryPromise({
    try: () => import("./StrategyLoader.ts").then((loader) => loader.loadStrategyModule(file)),
    catch: (error) => new SimError({ message: firstLine(error) })
  })

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
      const tape = yield* openTape(o.tape)
      const orders = Option.isSome(o.orders)
        ? yield* Effect.flatMap(readText(o.orders.value, "scenario"), (text) =>
            orFail(
              `the scenario ${o.orders.pipe(Option.getOrElse(() => ""))} is not a JSON array of {at_ms, order}`,
              () => Schema.decodeUnknownSync(Scenario)(JSON.parse(text))
            )
          )
        : []
      let shown = -1
      mkdirSync(o.out, { recursive: true })
      // The event log goes to its file as it is written.
      const fd = openSync(join(o.out, "events.jsonl"), "w")
      const { summary } = yield* Effect.suspend(() =>
        replay({
          tape,
          orders,
          seed: o.seed,
          keepLog: false,
          onLogBytes: (lines) => {
            for (let at = 0; at < lines.length;) at += writeSync(fd, lines, at)
          },
          onProgress: (done, total) => {
            const pct = Math.floor((done / total) * 100)
            if (pct >= shown + 10 || done === total) {
              shown = pct
              process.stderr.write(`replay: ${pct}% (${done}/${total} events)\n`)
            }
          }
        })
      ).pipe(badTape(o.tape), Effect.ensuring(Effect.sync(() => closeSync(fd))))
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
    venues: Options.integer("venues").pipe(
      Options.withDescription(
        "Venues 1-3: sim2 and sim3 list every market again, every other one stated the other way round (…-no)"
      ),
      Options.withDefault(1)
    ),
    out: Args.file({ name: "OUT" })
  },
  (o) =>
    Effect.gen(function* () {
      const { generateTape } = yield* load(() => import("./Generator.ts"))
      const { formatTape } = yield* load(() => import("./Tape.ts"))
      if (o.venues < 1 || o.venues > 3)
        return yield* Effect.fail(new SimError({ message: `--venues must be 1 to 3, not ${o.venues}` }))
      const { header, events } = generateTape({
        seed: o.seed,
        markets: o.markets,
        durationS: o.durationS,
        venues: o.venues
      })
      writeFileSync(o.out, formatTape(header, events))
      yield* Console.log(`wrote ${events.length} events for ${header.markets.length} markets to ${o.out}`)
    })
).pipe(Command.withDescription("Write a generated tape: seeded markets with drifting fair values, makers and takers"))

/** The format a tape is written in: asked for, else `arrow` for a file named `.arrow`, `.feather` or `.ipc`. */
const formatOf = (asked: Option.Option<"ndjson" | "arrow">, out: string) =>
  Option.getOrElse(asked, () => (/\.(arrow|feather|ipc)$/i.test(out) ? "arrow" : "ndjson"))

/** Writes a tape to `out` in `format`, a batch or a line at a time. */
const writeTape = (
  out: string,
  format: "ndjson" | "arrow",
  header: import("./Tape.ts").TapeHeader,
  events: Iterable<import("./Tape.ts").TapeEvent>
) =>
  Effect.gen(function* () {
    if (format === "arrow") {
      const { writeArrowTapeFile } = yield* load(() => import("./ArrowTape.ts"))
      return yield* Effect.promise(() => writeArrowTapeFile(out, header, events))
    }
    const { formatTapeLine } = yield* load(() => import("./Tape.ts"))
    const fd = openSync(out, "w")
    try {
      let chunk = formatTapeLine(header) + "\n"
      for (const e of events) {
        chunk += formatTapeLine(e) + "\n"
        if (chunk.length > 1 << 20) {
          writeSync(fd, chunk)
          chunk = ""
        }
      }
      writeSync(fd, chunk)
    } finally {
      closeSync(fd)
    }
  })

const toOption = Options.choice("to", ["ndjson", "arrow"]).pipe(
  Options.withDescription("The format written (default: arrow for OUT named .arrow, .feather or .ipc, else ndjson)"),
  Options.optional
)

/** A recorded venue stream's text as a tape, with the report of what was read and skipped. */
type Converter = (text: string) => { header: TapeHeader; events: Array<TapeEvent>; report: ConvertReport }

/** How a registered venue's recorded stream becomes a tape, by the venue's id: the venues `--from` offers. */
const CONVERTERS: Readonly<Record<string, () => Promise<Converter>>> = {
  kalshi: () => import("./convert/Kalshi.ts").then((m) => m.convertKalshi),
  polymarket: () => import("./convert/Polymarket.ts").then((m) => m.convertPolymarket)
}

/** The registered venues whose recordings convert, in registration order. */
const RECORDED_VENUES = BUILT_IN_VENUES.map((r) => r.id).filter((id) => CONVERTERS[id] !== undefined)

const convertCommand = Command.make(
  "convert",
  {
    from: Options.choice("from", [...RECORDED_VENUES, "tape"]).pipe(
      Options.withDescription("The recording's venue, or `tape` for a tape of either format (NDJSON or Arrow IPC)")
    ),
    to: toOption,
    input: Args.file({ name: "IN", exists: "yes" }),
    out: Args.file({ name: "OUT" })
  },
  (o) =>
    Effect.gen(function* () {
      const format = formatOf(o.to, o.out)
      if (o.from === "tape") {
        const tape = yield* openTape(o.input)
        let count = 0
        const counted = {
          *[Symbol.iterator]() {
            for (const e of tape.events) {
              count += 1
              yield e
            }
          }
        }
        yield* writeTape(o.out, format, tape.header, counted).pipe(badTape(o.input))
        return yield* Console.log(
          `wrote ${count} events for ${tape.header.markets.length} markets to ${o.out} (${format})`
        )
      }
      const convert = yield* load(CONVERTERS[o.from]!)
      const text = yield* readText(o.input, "recording")
      const { header, events, report } = yield* orFail(`${o.input} is not a ${o.from} recording`, () => convert(text))
      if (events.length === 0) {
        process.stderr.write(JSON.stringify(report, null, 2) + "\n")
        return yield* new SimError({
          message:
            `${o.input} holds no ${o.from} market data (${report.lines} lines, ${report.skipped.length} skipped; ` +
            `the report above says why): nothing written to ${o.out}`
        })
      }
      yield* writeTape(o.out, format, header, events)
      yield* Console.log(JSON.stringify(report, null, 2))
      yield* Console.log(`wrote ${events.length} events for ${header.markets.length} markets to ${o.out}`)
    })
).pipe(
  Command.withDescription(
    "Turn a recorded venue stream into a tape (sequence gaps are reported, not papered over), or a tape into the other format"
  )
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
      const { BACKTEST_GENERATED } = yield* load(() => import("./Sweep/Spec.ts"))
      const module = yield* importStrategy(o.strategy)
      const loaded = strategyFromModule(module)
      if ("error" in loaded) {
        return yield* new SimError({
          message: `the strategy ${o.strategy} is not usable: ${loaded.error} (see sim/Strategy.ts)`
        })
      }
      const strategy = loaded.strategy
      const tape = Option.isSome(o.tape)
        ? yield* openTape(o.tape.value)
        : (() => {
            const g = generateTape({ seed: o.seed, ...BACKTEST_GENERATED })
            return { header: g.header, events: g.events, total: g.events.length, progress: () => 1 }
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

/** `--workers N` of `sweep` and `runner`: worker processes running jobs, one per core unless said. */
const workersOption = Options.integer("workers").pipe(
  Options.withDescription("Worker processes running jobs (default: one per core)"),
  Options.optional
)

/** The number of worker processes asked for (else one per core), or a sentence saying what is allowed. */
const workerCount = (asked: Option.Option<number>, perCore: () => number) => {
  const workers = Option.getOrElse(asked, perCore)
  return Number.isSafeInteger(workers) && workers >= 1 && workers <= 256
    ? Effect.succeed(workers)
    : Effect.fail(new SimError({ message: `--workers must be a whole number from 1 to 256, not ${workers}` }))
}

export const sweepCommand = Command.make(
  "sweep",
  {
    out: Options.directory("out").pipe(
      Options.withDescription("Where sweep.jsonl and sweep.html go"),
      Options.withDefault("sweep-out")
    ),
    workers: workersOption,
    cluster: Options.text("cluster").pipe(
      Options.withDescription("Run the jobs on the runners of a cluster whose storage is this Postgres URL"),
      Options.optional
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print the summary as one JSON document")),
    spec: Args.file({ name: "SPEC", exists: "yes" })
  },
  (o) =>
    Effect.gen(function* () {
      const { resolveSpec, runSweep } = yield* load(() => import("./Sweep/Sweep.ts"))
      const { makePool, defaultWorkers } = yield* load(() => import("./Sweep/Workers.ts"))
      const { declaredParams } = yield* load(() => import("./Strategy.ts"))
      const { loadStrategyModule } = yield* load(() => import("./StrategyLoader.ts"))
      const { historyTapeText } = yield* load(() => import("../src/Hosted/Run.ts"))
      const workers = yield* workerCount(o.workers, defaultWorkers)
      const text = yield* readText(o.spec, "sweep spec")
      const tapes = yield* Tapes
      const resolved = yield* resolveSpec(o.spec, text, o.out, {
        declaredParams: (strategy) => loadStrategyModule(strategy).then(declaredParams),
        historyTape: (marketId, from, to) =>
          historyTapeText(marketId, from, to).pipe(
            Effect.mapError((e) => new Error(e.message)),
            Effect.provideService(Tapes, tapes)
          )
      }).pipe(Effect.mapError((e) => new SimError({ message: e.message })))
      const size = Math.min(workers, resolved.jobs.length)
      process.stderr.write(
        Option.isSome(o.cluster)
          ? `sweep: ${resolved.jobs.length} jobs to the cluster's runners\n`
          : `sweep: ${resolved.jobs.length} jobs on ${size} worker processes\n`
      )
      const { clusterExecutor, localCluster, localStorageFile, remoteClient, sweepId } = yield* load(
        () => import("./Sweep/Cluster.ts")
      )
      mkdirSync(o.out, { recursive: true })
      const summary = yield* Effect.scoped(
        Effect.gen(function* () {
          // On a cluster: the jobs go to its storage and its runners take them; nothing runs here.
          // Otherwise a cluster of one runner in this process, its messages and replies stored beside the results.
          const cluster = Option.isSome(o.cluster)
            ? yield* Layer.build(remoteClient(o.cluster.value))
            : yield* Layer.build(localCluster(localStorageFile(o.out), yield* makePool(size)))
          const execute = yield* clusterExecutor(sweepId(resolved.jobs)).pipe(Effect.provide(cluster))
          return yield* runSweep({
            resolved,
            out: o.out,
            execute,
            // Enough jobs in flight to keep every thread busy; the rest wait their turn here.
            concurrency: Option.isSome(o.cluster) ? resolved.jobs.length : size * 2,
            progress: (line) => process.stderr.write(line + "\n")
          })
        }).pipe(
          Effect.catchTag("ConfigError", (e) => new SimError({ message: `the cluster's settings: ${String(e)}` })),
          Effect.catchTag("SqlError", (e) => new SimError({ message: `the cluster's storage: ${e.message}` }))
        )
      )
      if (o.json) return yield* Console.log(JSON.stringify({ ...summary, out: o.out }))
      yield* Console.log(
        `${summary.jobs} jobs in ${summary.seconds.toFixed(1)} s${summary.failed > 0 ? ` (${summary.failed} failed)` : ""}; ` +
          `best by ${summary.metric}:`
      )
      for (const r of summary.best) {
        const value = r.metrics[summary.metric]
        yield* Console.log(
          `  ${r.job}  ${summary.metric} ${value ?? "unmarked"}  params ${JSON.stringify(r.params)}  seed ${r.seed}  ${r.tape}`
        )
      }
      yield* Console.log(`results in ${join(o.out, "sweep.jsonl")}, table and curves in ${join(o.out, "sweep.html")}`)
      if (summary.failed > 0)
        return yield* new SimError({ message: `${summary.failed} of ${summary.jobs} jobs failed (see sweep.jsonl)` })
    })
).pipe(
  Command.withDescription(
    "Run a strategy over a grid of params, tapes and seeds on every core; writes sweep.jsonl and sweep.html"
  )
)

export const runnerCommand = Command.make(
  "runner",
  {
    storage: Options.text("storage").pipe(Options.withDescription("The cluster's Postgres URL (postgres://…)")),
    host: Options.text("host").pipe(
      Options.withDescription("The address other runners reach this one at"),
      Options.withDefault("127.0.0.1")
    ),
    port: Options.integer("port").pipe(
      Options.withDescription("The port this runner listens on for the others"),
      Options.withDefault(34431)
    ),
    workers: workersOption
  },
  (o) =>
    Effect.gen(function* () {
      const { makePool, defaultWorkers } = yield* load(() => import("./Sweep/Workers.ts"))
      const { remoteRunner } = yield* load(() => import("./Sweep/Cluster.ts"))
      const workers = yield* workerCount(o.workers, defaultWorkers)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const pool = yield* makePool(workers)
          const logged = {
            ...pool,
            run: (job: Parameters<typeof pool.run>[0]) =>
              Effect.sync(() => process.stderr.write(`runner: ${job.id} started\n`)).pipe(
                Effect.zipRight(pool.run(job)),
                Effect.tap(() => Effect.sync(() => process.stderr.write(`runner: ${job.id} done\n`)))
              )
          }
          yield* Layer.build(remoteRunner({ url: o.storage, host: o.host, port: o.port, pool: logged }))
          process.stderr.write(`runner: listening at ${o.host}:${o.port} with ${workers} worker processes\n`)
          return yield* Effect.never
        })
      ).pipe(
        Effect.catchTag("ConfigError", (e) => new SimError({ message: `the cluster's settings: ${String(e)}` })),
        Effect.catchTag("SqlError", (e) => new SimError({ message: `the cluster's storage: ${e.message}` })),
        Effect.catchTag(
          "SocketServerError",
          (e) => new SimError({ message: `cannot listen at ${o.host}:${o.port} (${String(e.reason)})` })
        )
      )
    })
).pipe(Command.withDescription("Join a sweep cluster through its Postgres storage and run its jobs until stopped"))

/** The simulator's commands, in the order `crossbook --help` lists them. */
export const simulationCommands = [simCommand, backtestCommand, sweepCommand, runnerCommand] as const
