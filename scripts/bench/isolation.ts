/**
 * `desk.isolation_p99_ms`: the p99 of a plain order placed on `sim` while placements on a remote venue hang, against
 * the same with nothing hanging. A venue that never answers holds up only its own lane.
 */
import { Context, Effect, Fiber, Layer } from "effect"
import { performance } from "node:perf_hooks"
import { submitOrder } from "../../src/Orders.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { type Venue, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { serverServices } from "../../src/Assembly.ts"
import { makeSimVenues } from "../../src/Venues/SimVenue.ts"
import { type Figure, ratio } from "./common.ts"

const ORDERS = 2_000
const HUNG = 8

/** `sim2` as a remote venue whose placements never answer. */
const silent = (venue: Venue): Venue => ({ ...venue, remote: true, placeOrder: () => Effect.never })

const p99 = (samples: Array<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!
}

/** Milliseconds per sim placement, each timed alone, with `hung` placements on the silent venue unanswered. */
const latencies = (hung: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const venues = Layer.scoped(
        VenueGateway,
        Effect.map(makeSimVenues({ seed: 1, stepMs: 1000, markets: 12, count: 2 }), ([sim, sim2]) =>
          VenueGateway.fromVenues([sim!, silent(sim2!)])
        )
      )
      const layer = serverServices({
        seed: 1,
        venues,
        startingCash: "100000000",
        store: OrderStore.layerMemory,
        auth: Auth.layerAllowAll,
        remote: { placementTimeoutMs: 3_600_000 }
      })
      const context = yield* Layer.build(layer)
      const gateway = Context.get(context, VenueGateway)
      const open = async (id: string) => (await Effect.runPromise(Effect.orDie(gateway.venue(id)!.markets)))[0]!
      const near = yield* Effect.promise(() => open("sim"))
      const far = yield* Effect.promise(() => open("sim2"))
      const order = (venue: string, nativeId: string) =>
        submitOrder(
          { market_id: `${venue}:${nativeId}`, side: "buy", type: "limit", amount: "1", price: "0.01" } as never,
          `${venue}:default`,
          "bench"
        ).pipe(Effect.provide(context))
      // Left to the scope's end: closing the desk ends their lane, and them with it.
      const stuck: Array<Fiber.RuntimeFiber<unknown, unknown>> = []
      for (let i = 0; i < hung; i++) stuck.push(yield* Effect.forkDaemon(order("sim2", far.nativeId)))
      yield* Effect.sleep(10)
      const samples: Array<number> = []
      for (let i = 0; i < ORDERS; i++) {
        const start = performance.now()
        yield* Effect.orDie(order("sim", near.nativeId))
        samples.push(performance.now() - start)
      }
      for (const f of stuck) if ((yield* Fiber.poll(f))._tag === "Some") throw new Error("a hung placement answered")
      return p99(samples.slice(ORDERS / 10))
    })
  )

export const isolationFigures = async (): Promise<ReadonlyArray<Figure>> => {
  const calm = await Effect.runPromise(latencies(0))
  const hanging = await Effect.runPromise(latencies(HUNG))
  return [
    {
      name: "desk.isolation_p99_ms",
      value: Number(hanging.toFixed(3)),
      unit: "ms",
      baseline: Number(calm.toFixed(3)),
      ratio: ratio(hanging, calm),
      target: "≤ 1.5",
      hung_placements: HUNG,
      orders: ORDERS
    }
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await isolationFigures()) console.log(JSON.stringify(f))
}
