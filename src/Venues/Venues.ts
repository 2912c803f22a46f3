/** The venues of a server from a `--venues` / `CROSSBOOK_VENUES` list: the embedded sim, Kalshi and Polymarket. */
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, type Scope } from "effect"
import { type Venue, VenueGateway } from "../Services/VenueGateway.ts"
import { makePaperVenue } from "./Paper/Venue.ts"
import { simVenueId } from "./Sim/Catalog.ts"
import { type FaultRule, makeSimVenues } from "./SimVenue.ts"
import { kalshiBuilder } from "./Kalshi/Venue.ts"
import { configFromEnv as polymarketConfig, makePolymarketVenue } from "./Polymarket/Venue.ts"

type Env = Readonly<Record<string, string | undefined>>

/** How each venue id is built; a venue whose builder is absent here is left out and named in `skipped`. */
export type VenueBuilders = Readonly<Record<string, Effect.Effect<Venue, string, Scope.Scope | HttpClient.HttpClient>>>

/** The Polymarket builder from the environment: a settings error fails with its sentence. */
export const polymarketBuilder = (env: Env): Effect.Effect<Venue, string, Scope.Scope | HttpClient.HttpClient> =>
  Effect.flatMap(
    Effect.try({
      try: () => polymarketConfig(env),
      catch: (e) => (e instanceof Error ? e.message : String(e))
    }),
    makePolymarketVenue
  )

/** The venues `serve` offers when none are named. */
export const DEFAULT_VENUES = ["sim", "kalshi", "polymarket"] as const

/** A `--venues` / `CROSSBOOK_VENUES` list: comma-separated ids, trimmed, lower-case, each once; empty means the default. */
export const parseVenueList = (text: string | undefined): ReadonlyArray<string> => {
  const ids = (text ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "")
  return ids.length === 0 ? DEFAULT_VENUES : [...new Set(ids)]
}

/**
 * The venues of a server, in the order listed. Building a venue never reaches the network, so a venue that
 * cannot be reached still starts: its routes answer 502/504 until it can be.
 */
export const buildVenues = <R>(
  list: ReadonlyArray<string>,
  builders: Readonly<Record<string, Effect.Effect<Venue, string, R>>>
) =>
  Effect.gen(function* () {
    const venues: Array<Venue> = []
    const skipped: Array<string> = []
    for (const id of list) {
      const build = builders[id]
      if (build === undefined) skipped.push(id)
      else venues.push(yield* build)
    }
    return { venues, skipped }
  })

/**
 * The VenueGateway of `serve` from a venue list: `sim` (given, always built by the caller's layer), `kalshi` and
 * `polymarket` from the environment, and any other builders given. Skipped ids are logged.
 */
export const venuesLayerFromList = (options: {
  readonly list: ReadonlyArray<string>
  readonly env: Env
  readonly sim: Effect.Effect<Venue, never, Scope.Scope>
  readonly others?: VenueBuilders
}): Layer.Layer<VenueGateway, string> =>
  Layer.scoped(
    VenueGateway,
    Effect.gen(function* () {
      const { venues, skipped } = yield* buildVenues(options.list, {
        sim: options.sim,
        kalshi: kalshiBuilder(options.env),
        polymarket: polymarketBuilder(options.env),
        ...options.others
      })
      if (skipped.length > 0)
        yield* Effect.logWarning(`venues not available in this build, left out: ${skipped.join(", ")}`)
      // Every venue served has its paper account beside its own.
      const paper = yield* Effect.forEach(venues, (v) => makePaperVenue(v))
      return VenueGateway.fromVenues(venues, paper)
    })
  ).pipe(Layer.provide(NodeHttpClient.layer))

/** `--sim-venues`, else `CROSSBOOK_SIM_VENUES`, else 1; anything but a whole number from 1 to 9 is refused. */
export const simVenueCountFrom = (
  given: number | undefined,
  env: string | undefined
): Effect.Effect<number, string> => {
  const n = given ?? (env === undefined || env.trim() === "" ? 1 : Number(env))
  return Number.isInteger(n) && n >= 1 && n <= 9
    ? Effect.succeed(n)
    : Effect.fail(`--sim-venues must be a whole number from 1 to 9, not ${given ?? env}`)
}

/** A venue list with `sim2` … `simN` in place after `sim`; those ids named on their own are left to `sim`'s place. */
export const withSimVenues = (list: ReadonlyArray<string>, count: number): ReadonlyArray<string> =>
  list.flatMap((id) =>
    id === "sim" ? Array.from({ length: count }, (_, i) => simVenueId(i + 1)) : /^sim\d+$/.test(id) ? [] : [id]
  )

/**
 * The VenueGateway of a venue list with the embedded sim run as `simVenues` venues (`sim`, `sim2`, …, in `sim`'s
 * place), made together, once, so that their linked markets step together. The fault plan applies to `sim`.
 */
export const servedVenuesLayer = (options: {
  readonly list: ReadonlyArray<string>
  readonly env: Env
  readonly seed: number
  readonly simVenues: number
  readonly faults?: ReadonlyArray<FaultRule>
  readonly others?: VenueBuilders
}): Layer.Layer<VenueGateway, string> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.cached(
        makeSimVenues({
          seed: options.seed,
          stepMs: 1000,
          markets: 24,
          count: options.simVenues,
          ...(options.faults === undefined ? {} : { faults: options.faults })
        })
      ),
      (sims) =>
        venuesLayerFromList({
          list: withSimVenues(options.list, options.simVenues),
          env: options.env,
          sim: Effect.map(sims, (all) => all[0]!),
          others: {
            ...options.others,
            ...Object.fromEntries(
              Array.from({ length: options.simVenues - 1 }, (_, i) => [
                simVenueId(i + 2),
                Effect.map(sims, (all) => all[i + 1]!)
              ])
            )
          }
        })
    )
  )
