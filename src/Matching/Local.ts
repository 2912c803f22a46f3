/**
 * The local matcher over the server's own venues: an index of every venue's catalog, filled in the background and
 * on demand, so that a venue that cannot be reached never holds up the start or another venue's answers.
 */
import { Clock, Duration, Effect, Layer, Schedule } from "effect"
import { MatchingClient, checkQuery, type MatchResult, parseMarketId } from "../Services/MatchingClient.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { listingOfMarket } from "./Eval.ts"
import { MatchIndex } from "./Matcher.ts"

export interface LocalMatcherOptions {
  /** How long one venue's catalog may take to load (default 10 s). */
  readonly loadTimeout?: Duration.DurationInput
  /** A venue whose catalog failed to load is tried again on demand after this long (default 60 s). */
  readonly retryAfter?: Duration.DurationInput
}

/**
 * A MatchingClient over the venues of a gateway and the `refresh` that reloads every catalog. A venue's catalog is
 * loaded the first time a match needs it (the anchor's venue, then the others or the target), and again by
 * `refresh`. A venue that fails to load keeps the catalog it had (none, the first time) until a later try succeeds.
 */
export const makeLocalMatcher = (gateway: VenueGateway["Type"], options: LocalMatcherOptions = {}) => {
  const index = new MatchIndex()
  const timeout = Duration.decode(options.loadTimeout ?? "10 seconds")
  const retryAfter = Duration.toMillis(options.retryAfter ?? "60 seconds")
  /** The venues loaded at least once, and when each last failed to load. */
  const loaded = new Set<string>()
  const failedAt = new Map<string, number>()

  const load = (venueId: string) =>
    Effect.gen(function* () {
      const venue = gateway.venue(venueId)
      if (venue === undefined) return
      const markets = yield* venue.markets.pipe(Effect.timeout(timeout))
      index.setCatalog(venueId, markets.map(listingOfMarket))
      loaded.add(venueId)
      failedAt.delete(venueId)
    }).pipe(
      Effect.catchAll((error) =>
        Effect.gen(function* () {
          failedAt.set(venueId, yield* Clock.currentTimeMillis)
          // Offline, or a venue down: no warning on every start; matches are answered without that venue meanwhile.
          yield* Effect.logDebug(`matching: the catalog of ${venueId} did not load (${String(error)})`)
        })
      )
    )

  /** Loads a venue's catalog unless it is loaded, or failed less than `retryAfter` ago. */
  const ensure = (venueId: string) =>
    Effect.gen(function* () {
      if (loaded.has(venueId)) return
      const failed = failedAt.get(venueId)
      if (failed !== undefined && (yield* Clock.currentTimeMillis) - failed < retryAfter) return
      yield* load(venueId)
    })

  const refresh = Effect.forEach(gateway.venues, (v) => load(v.info.id), { discard: true, concurrency: "unbounded" })

  /** Loads the anchor's venue, then the others (or the target alone); the anchor's venue, if the gateway has it. */
  const prepare = (id: string, target: string | undefined) =>
    Effect.gen(function* () {
      yield* checkQuery(id, target)
      const venue = parseMarketId(id)!.venue
      if (gateway.venue(venue) === undefined) return false
      yield* ensure(venue)
      const others = gateway.venues.map((v) => v.info.id).filter((v) => v !== venue)
      yield* Effect.forEach(target === undefined ? others : others.filter((v) => v === target), ensure, {
        discard: true,
        concurrency: "unbounded"
      })
      return true
    })

  const client: MatchingClient["Type"] = {
    match: (id, target) =>
      Effect.map(prepare(id, target), (known) =>
        known ? (index.match(id, target) as MatchResult | undefined) : undefined
      ),
    event: (id) => Effect.map(prepare(id, undefined), (known) => (known ? index.matchEvent(id) : undefined))
  }
  return { client, refresh, index }
}

/** How often `serve` reloads the venues' catalogs for the local matcher. */
export const REFRESH_EVERY = Duration.minutes(10)

/**
 * The local matcher as the server's MatchingClient: every venue's catalog loaded in the background at start (the
 * start does not wait) and again every `REFRESH_EVERY`.
 */
export const localMatchingLayer = (options: LocalMatcherOptions & { readonly every?: Duration.DurationInput } = {}) =>
  Layer.scoped(
    MatchingClient,
    Effect.gen(function* () {
      const gateway = yield* VenueGateway
      const local = makeLocalMatcher(gateway, options)
      yield* Effect.forkScoped(Effect.repeat(local.refresh, Schedule.spaced(options.every ?? REFRESH_EVERY)))
      return local.client
    })
  )
