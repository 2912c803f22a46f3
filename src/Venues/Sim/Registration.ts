/** The embedded sim venue as the server registers it: no settings of its own, built from the server's seed. */
import { Effect } from "effect"
import { lazyModule, type VenueRegistration } from "../Registration.ts"

const simVenue = lazyModule(() => import("../SimVenue.ts"))

/** `sim` (and `sim2`, … with `--sim-venues`): a deterministic simulated exchange, always there, no credentials. */
export const simRegistration: VenueRegistration<undefined> = {
  id: "sim",
  description: "The embedded simulated exchange (sim, sim2, … with --sim-venues): no network, no credentials",
  settings: {
    variables: ["CROSSBOOK_SIM_SEED", "CROSSBOOK_SIM_VENUES", "CROSSBOOK_SIM_CASH"],
    credentials: [],
    read: () => Effect.succeed(undefined)
  },
  build: (_, context) =>
    Effect.flatMap(simVenue, (m) =>
      m.makeSimVenues({
        seed: context.seed,
        stepMs: 1000,
        markets: 24,
        count: context.simVenues,
        faults: context.faults
      })
    )
}
