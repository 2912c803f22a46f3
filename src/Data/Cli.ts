/** `crossbook data serve|invite|import` and `crossbook record`: the data host, its owner's invites, and what fills it. */
import { Args, Command, Options } from "@effect/cli"
import { simSeedOption, simVenuesOption } from "../Matching/Cli.ts"
import * as Effect from "effect/Effect"
import { DEFAULT_VENUES } from "../Venues/BuiltIn.ts"

// The store, the HTTP server and the venues load when one of these commands runs, not with the command tree.
const run = Effect.promise(() => import("./Run.ts"))

const storeOption = Options.file("store").pipe(
  Options.withDescription("The data store (default <home>/data.db)"),
  Options.optional
)

const serve = Command.make(
  "serve",
  {
    host: Options.text("host").pipe(Options.withDescription("Address to listen on"), Options.withDefault("127.0.0.1")),
    port: Options.integer("port").pipe(Options.withDescription("Port to listen on"), Options.withDefault(8100)),
    store: storeOption,
    maxRangeDays: Options.integer("max-range-days").pipe(
      Options.withDescription("The longest range one history request may ask for (default 7); longer is a 413"),
      Options.optional
    ),
    venues: Options.text("venues").pipe(
      Options.withDescription(
        `Venues whose catalogs the matching routes read (default $CROSSBOOK_VENUES or ${DEFAULT_VENUES.join(",")})`
      ),
      Options.optional
    ),
    simSeed: simSeedOption,
    simVenues: simVenuesOption
  },
  (o) => Effect.flatMap(run, (m) => m.runServe(o))
).pipe(
  Command.withDescription(
    "Serve the history API, login, API keys and the matching routes (/match/market, /match/event) over the data store (127.0.0.1:8100)"
  )
)

const invite = Command.make(
  "invite",
  {
    store: storeOption,
    name: Options.text("name").pipe(
      Options.withDescription("Who the code is for; their keys are listed and revoked under this name"),
      Options.withDefault("owner")
    )
  },
  (o) => Effect.flatMap(run, (m) => m.runInvite(o))
).pipe(
  Command.withDescription("Print a one-time code for `crossbook login` (alone on stdout; valid for a day, used once)")
)

const importCommand = Command.make(
  "import",
  { store: storeOption, tape: Args.file({ name: "TAPE", exists: "yes" }) },
  (o) => Effect.flatMap(run, (m) => m.runImport(o))
).pipe(Command.withDescription("Add a tape's books and trades to the data store; its gaps become absent stretches"))

export const dataCommand = Command.make("data").pipe(
  Command.withDescription("The data host: serve recorded history, invite users, import tapes"),
  Command.withSubcommands([serve, invite, importCommand])
)

export const recordCommand = Command.make(
  "record",
  {
    venue: Options.text("venue").pipe(
      Options.withDescription(`The venue (${DEFAULT_VENUES.join(", ")})`),
      Options.withDefault("sim")
    ),
    markets: Options.text("markets").pipe(
      Options.withDescription("Comma list of market ids (`<venue>:<id>` or the bare id)")
    ),
    duration: Options.integer("duration").pipe(
      Options.withDescription("Seconds to record; without it, until Ctrl-C"),
      Options.optional
    ),
    store: storeOption,
    simSeed: Options.integer("sim-seed").pipe(
      Options.withDescription("Seed of the sim venue (default $CROSSBOOK_SIM_SEED or 1, as `serve`)"),
      Options.optional
    ),
    envFile: Options.file("env-file").pipe(Options.withDescription("A .env file with venue settings"), Options.optional)
  },
  (o) => Effect.flatMap(run, (m) => m.runRecord(o))
).pipe(
  Command.withDescription(
    "Record markets' book changes and trades into the data store (venue and receive times); breaks become absent stretches"
  )
)
