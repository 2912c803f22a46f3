/** The venues of a server from a `--venues` / `CROSSBOOK_VENUES` list, built from the venues' registrations. */
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Layer, type Scope } from "effect"
import { capabilityGaps, type Venue, VenueGateway } from "../Services/VenueGateway.ts"
import { BUILT_IN_VENUES, registrationsWith } from "./BuiltIn.ts"
import { makePaperVenue } from "./Paper/Venue.ts"
import {
  buildRegistered,
  DEFAULT_CONTEXT,
  loadVenueCode,
  type Env,
  type VenueContext,
  type VenueRegistration
} from "./Registration.ts"
import type { FaultRule } from "./SimVenue.ts"

export { BUILT_IN_VENUES, DEFAULT_VENUES, registrationsWith } from "./BuiltIn.ts"

// The server's modules load the built-in venues' code with them, before any port is bound.
await loadVenueCode()

/** How a venue id is built, in place of its registration (a venue made by the caller, as tests do). */
export type VenueBuilders = Readonly<
  Record<string, Effect.Effect<Venue | ReadonlyArray<Venue>, string, Scope.Scope | HttpClient.HttpClient>>
>

/**
 * A `--venues` / `CROSSBOOK_VENUES` list: comma-separated ids, trimmed, lower-case, each once; empty means every
 * venue of `registrations` (the built-in ones unless given, see `registrationsWith`).
 */
export const parseVenueList = (
  text: string | undefined,
  registrations: ReadonlyArray<VenueRegistration> = BUILT_IN_VENUES
): ReadonlyArray<string> => {
  const ids = (text ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== "")
  return ids.length === 0 ? registrations.map((r) => r.id) : [...new Set(ids)]
}

/**
 * The venues of a server, in the order listed (a builder may stand for several, the sim for `sim`, `sim2`, …).
 * Building a venue never reaches the network, so a venue that cannot be reached still starts: its routes answer
 * 502/504 until it can be. A remote venue that claims a capability without the members to serve it is refused.
 */
export const buildVenues = <R>(
  list: ReadonlyArray<string>,
  builders: Readonly<Record<string, Effect.Effect<Venue | ReadonlyArray<Venue>, string, R>>>
) =>
  Effect.gen(function* () {
    const venues: Array<Venue> = []
    const skipped: Array<string> = []
    for (const id of list) {
      const build = builders[id]
      if (build === undefined) {
        skipped.push(id)
        continue
      }
      const built = yield* build
      for (const venue of Array.isArray(built) ? built : [built as Venue]) {
        const gaps = capabilityGaps(venue)
        if (gaps.length > 0) return yield* Effect.fail(`venue ${venue.info.id} is not consistent: ${gaps.join("; ")}`)
        venues.push(venue)
      }
    }
    return { venues, skipped }
  })

/**
 * The VenueGateway of `serve` from a venue list: each id built from its registration (the built-in ones and any
 * `registrations` given) with the settings `env` holds, or by the builder given for it (`sim`, `others`). Ids that
 * name no venue are logged and left out; every venue served has its paper account beside its own.
 */
export const venuesLayerFromList = (options: {
  readonly list: ReadonlyArray<string>
  readonly env: Env
  /** The embedded sim as the caller made it, in place of its registration's. */
  readonly sim?: Effect.Effect<Venue | ReadonlyArray<Venue>, never, Scope.Scope>
  readonly others?: VenueBuilders
  /** Venues registered beside the built-in ones. */
  readonly registrations?: ReadonlyArray<VenueRegistration>
  readonly context?: VenueContext
}): Layer.Layer<VenueGateway, string> =>
  Layer.scoped(
    VenueGateway,
    Effect.gen(function* () {
      const context = options.context ?? DEFAULT_CONTEXT
      const registered = Object.fromEntries(
        registrationsWith(options.registrations).map((r) => [r.id, buildRegistered(r, options.env, context)])
      )
      const { venues, skipped } = yield* buildVenues(options.list, {
        ...registered,
        ...(options.sim === undefined ? {} : { sim: options.sim }),
        ...options.others
      })
      if (skipped.length > 0)
        yield* Effect.logWarning(`venues not available in this build, left out: ${skipped.join(", ")}`)
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

/** A venue list without `sim2` … `simN`: those venues are served in `sim`'s place, as many as `--sim-venues` says. */
export const withoutSimCopies = (list: ReadonlyArray<string>): ReadonlyArray<string> =>
  list.filter((id) => !/^sim\d+$/.test(id))

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
  /** Venues registered beside the built-in ones. */
  readonly registrations?: ReadonlyArray<VenueRegistration>
}): Layer.Layer<VenueGateway, string> =>
  venuesLayerFromList({
    list: withoutSimCopies(options.list),
    env: options.env,
    context: { seed: options.seed, simVenues: options.simVenues, faults: options.faults ?? [] },
    ...(options.others === undefined ? {} : { others: options.others }),
    ...(options.registrations === undefined ? {} : { registrations: options.registrations })
  })
