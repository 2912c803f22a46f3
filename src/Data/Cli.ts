/** `crossbook data serve|invite|import` and `crossbook record`: the data host, its owner's invites, and what fills it. */
import { Args, Command, Options } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Console, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { ensureHome, homeFolder, privateFiles, tightenModes } from "../Home.ts"
import { makeNodeServer } from "../Http/Server.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { makeSimVenue } from "../Venues/SimVenue.ts"
import { venuesLayerFromList } from "../Venues/Venues.ts"
import { NAME, VERSION } from "../Version.ts"
import { record, summarize } from "./Record.ts"
import { DataHost, dataHostApp } from "./Server.ts"
import { DataStore, storeFile } from "./Store.ts"
import { Tapes } from "./Tapes.ts"
import { Keys } from "./Keys.ts"

/** A failure the user can act on: one sentence on stderr, exit status 1. */
export class DataError extends Data.TaggedError("DataError")<{ readonly message: string }> {}

const firstLine = (error: unknown): string =>
  ((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").trim()

const storeOption = Options.file("store").pipe(
  Options.withDescription("The data store (default <home>/data.db)"),
  Options.optional
)

/** The store file, opened with the home's file modes; closed with the scope. */
export const openStore = (file: Option.Option<string>) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        privateFiles()
        const home = ensureHome(homeFolder())
        const path = Option.getOrElse(file, () => storeFile(home))
        const store = new DataStore(path)
        tightenModes(home, [path])
        return store
      },
      catch: (error) => new DataError({ message: `cannot open the data store (${firstLine(error)})` })
    }),
    (store) => Effect.sync(() => store.close())
  )

const boundPort = (host: string, port: number) =>
  NodeHttpServer.layer(makeNodeServer, { host, port }).pipe(
    Layer.catchAll((error) => {
      const code = (error.cause as { code?: string } | undefined)?.code
      return Layer.fail(
        new DataError({
          message:
            code === "EADDRINUSE"
              ? `port ${port} on ${host} is in use: stop what listens there, or pick another --port`
              : `cannot listen on ${host}:${port} (${code ?? String(error.cause)})`
        })
      )
    })
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
    )
  },
  (o) =>
    Effect.gen(function* () {
      const store = yield* openStore(o.store)
      yield* Console.log(`${NAME} ${VERSION} data host: store ${store.file}`)
      const maxRangeDays = Option.getOrUndefined(o.maxRangeDays)
      const host = DataHost.layer(store, maxRangeDays === undefined ? {} : { maxRangeMs: maxRangeDays * 86_400_000 })
      return yield* Layer.launch(
        dataHostApp().pipe(HttpServer.withLogAddress, Layer.provide(host), Layer.provide(boundPort(o.host, o.port)))
      )
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Serve the history API, login and API keys over the data store (127.0.0.1:8100)"))

const invite = Command.make(
  "invite",
  {
    store: storeOption,
    name: Options.text("name").pipe(
      Options.withDescription("Who the code is for; their keys are listed and revoked under this name"),
      Options.withDefault("owner")
    )
  },
  (o) =>
    Effect.gen(function* () {
      const store = yield* openStore(o.store)
      const now = yield* Clock.currentTimeMillis
      const { code } = new Keys(store).invite(o.name, now)
      yield* Console.log(code)
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription("Print a one-time code for `crossbook login` (alone on stdout; valid for a day, used once)")
)

const importCommand = Command.make(
  "import",
  { store: storeOption, tape: Args.file({ name: "TAPE", exists: "yes" }) },
  (o) =>
    Effect.gen(function* () {
      const tapes = yield* Tapes
      const store = yield* openStore(o.store)
      const summary = yield* Effect.try({
        try: () => tapes.importTape(store, readFileSync(o.tape, "utf8")),
        catch: (error) =>
          new DataError({ message: `${o.tape} is not a tape (${firstLine(error)}; the format is in sim/TAPES.md)` })
      })
      yield* Console.log(JSON.stringify(summary))
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Add a tape's books and trades to the data store; its gaps become absent stretches"))

export const dataCommand = Command.make("data").pipe(
  Command.withDescription("The data host: serve recorded history, invite users, import tapes"),
  Command.withSubcommands([serve, invite, importCommand])
)

export const recordCommand = Command.make(
  "record",
  {
    venue: Options.text("venue").pipe(
      Options.withDescription("The venue (sim, kalshi, polymarket)"),
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
  (o) =>
    Effect.gen(function* () {
      if (Option.isSome(o.envFile)) {
        const file = o.envFile.value
        yield* Effect.try({
          try: () => process.loadEnvFile(file),
          catch: (error) => new DataError({ message: `cannot load the env file ${file} (${firstLine(error)})` })
        })
      }
      const ids = o.markets
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
        .map((s) => (s.startsWith(`${o.venue}:`) ? s.slice(o.venue.length + 1) : s))
      if (ids.length === 0) return yield* new DataError({ message: "give one or more markets with --markets" })
      const store = yield* openStore(o.store)
      const seed = Option.getOrElse(o.simSeed, () => Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1))
      const gateway = yield* Layer.build(
        venuesLayerFromList({
          list: [o.venue],
          env: process.env,
          sim: makeSimVenue({ seed, stepMs: 1000, markets: 24, faults: [] })
        }).pipe(Layer.mapError((message) => new DataError({ message })))
      )
      const venue = Context.get(gateway, VenueGateway).venue(o.venue)
      if (venue === undefined) return yield* new DataError({ message: `venue '${o.venue}' is not available here` })
      const marketIds = ids.map((id) => `${o.venue}:${id}`)
      yield* Console.log(`recording ${marketIds.join(", ")} into ${store.file}; Ctrl-C stops`)
      const run = Effect.scoped(record({ store, venue, nativeIds: ids })).pipe(
        Effect.mapError(
          (e) => new DataError({ message: typeof e === "string" ? e : `${e.venue}: ${e.kind} (${e.reason})` })
        )
      )
      yield* (
        Option.isSome(o.duration) ? Effect.raceFirst(run, Effect.sleep(Duration.seconds(o.duration.value))) : run
      ).pipe(
        Effect.onExit(() => Effect.sync(() => process.stdout.write(JSON.stringify(summarize(store, marketIds)) + "\n")))
      )
    }).pipe(Effect.scoped)
).pipe(
  Command.withDescription(
    "Record markets' book changes and trades into the data store (venue and receive times); breaks become absent stretches"
  )
)
