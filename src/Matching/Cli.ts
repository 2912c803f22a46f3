/** `crossbook match ID` and `crossbook match eval`: the local matcher over catalog files, or the configured matcher. */
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { DEFAULT_VENUES } from "../Venues/BuiltIn.ts"

// The matcher, its evaluation and the hosted client load when a match command runs, not with the command tree.
const run = Effect.promise(() => import("./Run.ts"))

/** The sim venues a local matcher reads, given as `serve` takes them (shared by the commands that build one). */
export const simSeedOption = Options.integer("sim-seed").pipe(
  Options.withDescription("Seed of the sim venues (default $CROSSBOOK_SIM_SEED or 1), as serve uses"),
  Options.optional
)
export const simVenuesOption = Options.integer("sim-venues").pipe(
  Options.withDescription("How many sim venues (default $CROSSBOOK_SIM_VENUES or 1), as serve uses"),
  Options.optional
)

const catalogs = Options.file("catalog").pipe(
  Options.withDescription("A catalog of markets, one JSON record a line (venue, native_id, title, rules?, yes_label?)"),
  Options.repeated
)

const evalCommand = Command.make(
  "eval",
  {
    catalogs,
    pairs: Options.file("pairs").pipe(Options.withDescription("Labelled pairs, one JSON case a line"))
  },
  ({ catalogs, pairs }) => Effect.flatMap(run, (m) => m.runEval({ catalogs, pairs }))
).pipe(
  Command.withDescription(
    "Run the local matcher on each labelled case's `a`: one JSON line per case, then precision, recall, side_map accuracy and refusals"
  )
)

/** `crossbook match ID [--event] [--venue v] [--json]`: the market on another venue asking the same question. */
export const matchCommand = Command.make(
  "match",
  {
    catalogs,
    venue: Options.text("venue").pipe(Options.withDescription("Only a market on this venue"), Options.optional),
    event: Options.boolean("event").pipe(
      Options.withDescription("Match every market of the ID's event (ID a market, or <venue>:<event_id>)")
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print the answer as one JSON document")),
    venues: Options.text("venues").pipe(
      Options.withDescription(
        `Venues whose catalogs the local matcher reads (default $CROSSBOOK_VENUES or ${DEFAULT_VENUES.join(",")})`
      ),
      Options.optional
    ),
    simSeed: simSeedOption,
    simVenues: simVenuesOption,
    id: Args.text({ name: "ID" }).pipe(
      Args.withDescription("<venue>:<native_id> of the market to match"),
      Args.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      if (Option.isNone(o.id)) return yield* Effect.fail(new Error("match needs an ID (<venue>:<native_id>), or eval"))
      const m = yield* run
      return yield* m.runMatch({
        id: o.id.value,
        venue: Option.getOrUndefined(o.venue),
        event: o.event,
        json: o.json,
        catalogs: o.catalogs,
        venues: Option.getOrUndefined(o.venues),
        simSeed: Option.getOrUndefined(o.simSeed),
        simVenues: Option.getOrUndefined(o.simVenues)
      })
    })
).pipe(
  Command.withDescription(
    "The market on another venue asking the same question, with its side_map: from SERVICE_MATCHING_URL when set, else the local matcher (over --catalog files, else the configured venues)"
  ),
  Command.withSubcommands([evalCommand])
)
