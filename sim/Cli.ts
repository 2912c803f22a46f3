/** The `crossbook sim …` commands: replay a tape with a scenario, and (with the converters) make tapes. */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option, Schema } from "effect"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { replay, Scenario } from "./Replay.ts"

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

export const simCommand = Command.make("sim").pipe(
  Command.withDescription("Simulation: replay tapes, generate and convert them"),
  Command.withSubcommands([replayCommand])
)
