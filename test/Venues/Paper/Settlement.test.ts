/** A paper account hears of its venue's resolutions: its resting orders there end canceled, then the market settles. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import { makePaperVenue } from "../../../src/Venues/Paper/Venue.ts"
import { makeSimVenue } from "../../../src/Venues/SimVenue.ts"

const settle = Effect.forEach(Array.from({ length: 40 }), () => Effect.yieldNow(), { discard: true })

describe("paper settlement", () => {
  it.scoped("the venue's Settled reaches the paper account after the paper orders resting there are canceled", () =>
    Effect.gen(function* () {
      const sim = yield* makeSimVenue({ seed: 3, stepMs: 3_600_000, markets: 24 })
      const paper = yield* makePaperVenue(sim)
      const heard = yield* paper.subscribe
      const [a, b] = (yield* sim.markets).filter((m) => m.status === "open")
      const place = (nativeId: string, clientOrderId: string) =>
        paper.placeOrder({
          clientOrderId,
          nativeId,
          side: "buy",
          price: F.of("0.01"),
          amount: F.ONE,
          timeInForce: "gtc",
          postOnly: false,
          reduceOnly: false,
          expiresAt: null
        })
      const resting = yield* place(a!.nativeId, "p1")
      const elsewhere = yield* place(b!.nativeId, "p2")
      assert.strictEqual(resting.status, "open")
      yield* Queue.takeAll(heard)
      yield* sim.resolve(a!.nativeId, F.ZERO)
      yield* settle
      const events = [...(yield* Queue.takeAll(heard))]
      const tags = events.map((e) =>
        e._tag === "Order" ? `Order ${e.order.venueOrderId} ${e.order.status}` : `${e._tag}`
      )
      assert.deepStrictEqual(tags, [`Order ${resting.venueOrderId} canceled`, "Settled"])
      const settled = events[1]!
      assert.deepStrictEqual(settled._tag === "Settled" && [settled.nativeId, settled.payout], [a!.nativeId, F.ZERO])
      // The order in another market rests on.
      const still = yield* paper.orderByClientId("p2")
      assert.strictEqual(still?.venueOrderId, elsewhere.venueOrderId)
      assert.strictEqual(still?.status, "open")
      // What resolved is read back through the paper account too, for a start after it.
      const since = yield* paper.settlementsSince!(0)
      assert.deepStrictEqual(
        since.map((r) => [r.nativeId, r.payout]),
        [[a!.nativeId, F.ZERO]]
      )
    })
  )
})
