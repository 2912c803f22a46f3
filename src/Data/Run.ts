/** What `crossbook data serve|invite|import` and `crossbook record` do, loaded when one of them runs. */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Console, Context, Data, Duration, Effect, Layer, Option } from "effect"
import { readFileSync } from "node:fs"
import { ensureHome, homeFolder, privateFiles, tightenModes } from "../Home.ts"
import { makeNodeServer } from "../Http/Server.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { makeSimVenue } from "../Venues/SimVenue.ts"
import { parseVenueList, servedVenuesLayer, simVenueCountFrom, venuesLayerFromList } from "../Venues/Venues.ts"
import { localMatchingLayer } from "../Matching/Local.ts"
import { dataHostMatchingRoutes } from "./Matching.ts"
import { NAME, VERSION } from "../Version.ts"
import { record, summarize } from "./Record.ts"
import { DataHost, dataHostApp } from "./Server.ts"
import { DataStore, storeFile } from "./Store.ts"
import { Tapes, TapesUnavailable } from "./Tapes.ts"
import { Keys } from "./Keys.ts"
import * as Id from "../Domain/Ids.ts"

/** A failure the user can act on: one sentence on stderr, exit status 1. */
export class DataError extends Data.TaggedError("DataError")<{ readonly message: string }> {}

const firstLine = (error: unknown): string =>
  ((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").trim()

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

/** What `data serve` serves besides the store: the matching routes over these venues' catalogs. */
export interface ServeVenues {
  readonly venues: string | undefined
  readonly simSeed: number | undefined
  readonly simVenues: number | undefined
}

/**
 * The data host's app over a store, on whatever HttpServer is provided: the history API, login and keys, and the
 * matching protocol (`/match/market`, `/match/event`, behind an API key) answered by the local matcher over the
 * venues' catalogs (default $CROSSBOOK_VENUES or every built-in venue; the sim needs no network).
 */
export const dataServeApp = (store: DataStore, options: ServeVenues & { readonly maxRangeMs?: number }) =>
  Effect.gen(function* () {
    const simVenues = yield* Effect.mapError(
      simVenueCountFrom(options.simVenues, process.env["CROSSBOOK_SIM_VENUES"]),
      (message) => new DataError({ message })
    )
    const venues = servedVenuesLayer({
      list: parseVenueList(options.venues ?? process.env["CROSSBOOK_VENUES"]),
      env: process.env,
      seed: options.simSeed ?? Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1),
      simVenues
    }).pipe(Layer.mapError((message) => new DataError({ message })))
    const matching = dataHostMatchingRoutes.pipe(Layer.provide(localMatchingLayer()), Layer.provide(venues))
    // The tape format, where this entry point has it: the host then serves ranges as columnar tapes too.
    const tapes = yield* Effect.serviceOption(Tapes)
    return dataHostApp(matching).pipe(
      Layer.provide(DataHost.layer(store, options.maxRangeMs === undefined ? {} : { maxRangeMs: options.maxRangeMs })),
      Layer.provide(tapes._tag === "Some" ? Layer.succeed(Tapes, tapes.value) : Layer.empty)
    )
  })

/** `crossbook data serve`: the data host's app on the given address until stopped. */
export const runServe = (o: {
  readonly host: string
  readonly port: number
  readonly store: Option.Option<string>
  readonly maxRangeDays: Option.Option<number>
  readonly venues: Option.Option<string>
  readonly simSeed: Option.Option<number>
  readonly simVenues: Option.Option<number>
}) =>
  Effect.gen(function* () {
    const store = yield* openStore(o.store)
    yield* Console.log(`${NAME} ${VERSION} data host: store ${store.file}`)
    const maxRangeDays = Option.getOrUndefined(o.maxRangeDays)
    const app = yield* dataServeApp(store, {
      venues: Option.getOrUndefined(o.venues),
      simSeed: Option.getOrUndefined(o.simSeed),
      simVenues: Option.getOrUndefined(o.simVenues),
      ...(maxRangeDays === undefined ? {} : { maxRangeMs: maxRangeDays * 86_400_000 })
    })
    return yield* Layer.launch(app.pipe(HttpServer.withLogAddress, Layer.provide(boundPort(o.host, o.port))))
  }).pipe(Effect.scoped)

/** `crossbook data invite`: a one-time login code, alone on stdout. */
export const runInvite = (o: { readonly store: Option.Option<string>; readonly name: string }) =>
  Effect.gen(function* () {
    const store = yield* openStore(o.store)
    const now = yield* Clock.currentTimeMillis
    const { code } = new Keys(store).invite(o.name, now)
    yield* Console.log(code)
  }).pipe(Effect.scoped)

/** `crossbook data import`: a tape's books and trades into the store, and what was added. */
export const runImport = (o: { readonly store: Option.Option<string>; readonly tape: string }) =>
  Effect.gen(function* () {
    const tapes = yield* Tapes
    const store = yield* openStore(o.store)
    const text = yield* Effect.try({
      try: () => readFileSync(o.tape, "utf8"),
      catch: (error) => new DataError({ message: `cannot read ${o.tape} (${firstLine(error)})` })
    })
    const summary = yield* tapes
      .importTape(store, text)
      .pipe(
        Effect.mapError((error) =>
          error instanceof TapesUnavailable
            ? new DataError({ message: error.message })
            : new DataError({ message: `${o.tape} is not a tape (${firstLine(error)}; the format is in sim/TAPES.md)` })
        )
      )
    yield* Console.log(JSON.stringify(summary))
  }).pipe(Effect.scoped)

/** `crossbook record`: a venue's markets into the store, for a while or until stopped; the summary at the end. */
export const runRecord = (o: {
  readonly venue: string
  readonly markets: string
  readonly duration: Option.Option<number>
  readonly store: Option.Option<string>
  readonly simSeed: Option.Option<number>
  readonly envFile: Option.Option<string>
}) =>
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
      .map((s) => {
        const id = Id.nativeIn(o.venue, s)
        return "native" in id ? id.native : s
      })
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
