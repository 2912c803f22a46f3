/** The account as Kalshi states it, read through the venue against the fake exchange: balance, positions, open orders, decrease. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import { configFromEnv, makeKalshiVenue } from "../../../src/Venues/Kalshi/Venue.ts"
import { orderOn } from "./Fake.ts"
import { exchange, live, venueOn } from "./Helpers.ts"
import { requestErrors } from "./Spec.ts"

const order = orderOn

describe("the Kalshi account", () => {
  it.live("balance, positions and open orders are read back; decrease keeps the order's place", () =>
    Effect.gen(function* () {
      const x = yield* exchange([
        { ticker: "KXA-1", event: "KXA", title: "A", yes: [["0.20", "10"]], no: [["0.60", "10"]] }
      ])
      const venue = yield* venueOn(x)
      assert.deepStrictEqual(yield* venue.balance!, { cash: F.of("1000"), portfolioValue: null })

      // takes 2 at YES 0.40 (the NO bid at 0.60): cash pays 0.80 and the taker fee 0.07 × 2 × 0.4 × 0.6 = 0.0336
      const taken = yield* venue.placeOrder(
        order({ clientOrderId: "t", price: F.of("0.4"), amount: F.of("2"), timeInForce: "ioc" })
      )
      assert.strictEqual(taken.filled, F.of("2"))
      assert.strictEqual(taken.fee, F.of("0.0336"))
      assert.strictEqual(taken.events?.length, 1)
      assert.deepStrictEqual(yield* venue.balance!, { cash: F.of("999.1664"), portfolioValue: null })
      assert.deepStrictEqual(
        (yield* venue.positions!).map((p) => [p.nativeId, p.contracts]),
        [["KXA-1", F.of("2")]]
      )

      const resting = yield* venue.placeOrder(order({ clientOrderId: "r" }))
      assert.strictEqual(resting.status, "open")
      const open = yield* venue.openOrders!
      assert.deepStrictEqual(
        open.map((o) => [o.clientOrderId, o.status, o.amount]),
        [["r", "open", F.of("5")]]
      )
      const smaller = yield* venue.decreaseOrder!(resting.venueOrderId, F.of("3"))
      assert.strictEqual(smaller.amount, F.of("3"))
      assert.strictEqual(smaller.queuePriorityPreserved, true)
      assert.deepStrictEqual(
        x.requests.flatMap((r) => requestErrors(r) ?? []),
        []
      )
    }).pipe(live)
  )

  it.live(
    "a lifecycle message makes the venue read the market again: a paused market is refused before it is sent",
    () =>
      Effect.gen(function* () {
        const x = yield* exchange([
          { ticker: "KXA-1", event: "KXA", title: "A", yes: [["0.20", "10"]], no: [["0.60", "10"]] }
        ])
        const venue = yield* venueOn(x)
        assert.strictEqual((yield* venue.market("KXA-1"))?.status, "open")
        yield* venue.book("KXA-1") // watched: the market channels are subscribed for it
        for (let i = 0; i < 200; i++) {
          const sub = x.connections[0]?.subs.find((s) => s.channel === "market_lifecycle_v2")
          if (sub?.tickers.has("KXA-1")) break
          yield* Effect.sleep("10 millis")
        }
        x.lifecycle("KXA-1", "deactivated", "inactive")
        let status: string | undefined
        for (let i = 0; i < 200 && status !== "closed"; i++) {
          yield* Effect.sleep("10 millis")
          status = (yield* venue.market("KXA-1"))?.status
        }
        assert.strictEqual(status, "closed")
        const posted = x.requests.filter((r) => r.method === "POST").length
        const refused = yield* Effect.flip(venue.placeOrder(order({ clientOrderId: "p" })))
        assert.strictEqual(refused.kind, "market_closed")
        assert.strictEqual(x.requests.filter((r) => r.method === "POST").length, posted)
      }).pipe(live)
  )

  it.live("without credentials the account members answer not_supported and send nothing", () =>
    Effect.gen(function* () {
      const x = yield* exchange([])
      const venue = yield* makeKalshiVenue(Either.getOrThrow(configFromEnv({ KALSHI_API_URL: x.apiUrl })))
      const e = yield* Effect.flip(venue.balance!)
      assert.strictEqual(e.kind, "not_supported")
      assert.strictEqual((yield* Effect.flip(venue.placeOrder(order({})))).kind, "not_supported")
      assert.deepStrictEqual(venue.accounts, [])
      assert.strictEqual(x.requests.length, 0)
    }).pipe(live)
  )
})
