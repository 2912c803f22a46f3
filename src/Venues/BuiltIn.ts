/** The venues every build of the server knows, registered in one list: the embedded sim, Kalshi and Polymarket. */
import { kalshiRegistration } from "./Kalshi/Registration.ts"
import { polymarketRegistration } from "./Polymarket/Registration.ts"
import type { VenueRegistration } from "./Registration.ts"
import { simRegistration } from "./Sim/Registration.ts"

/** The built-in venues, in the order `serve` offers them when none are named. */
export const BUILT_IN_VENUES: ReadonlyArray<VenueRegistration> = [
  simRegistration,
  kalshiRegistration,
  polymarketRegistration
]

/** The venues `serve` offers when none are named: every built-in one. */
export const DEFAULT_VENUES: ReadonlyArray<string> = BUILT_IN_VENUES.map((r) => r.id)

/** The built-in registrations followed by `extra` ones; an extra one with a built-in id takes its place. */
export const registrationsWith = (extra: ReadonlyArray<VenueRegistration> = []): ReadonlyArray<VenueRegistration> => {
  const ids = new Set(extra.map((r) => r.id))
  return [...BUILT_IN_VENUES.filter((r) => !ids.has(r.id)), ...extra]
}
