import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import { testServer } from "../Http/TestServer.ts"
import { cancel, children, events, market, parent, place, price, run } from "./Support.ts"

const simOrders = Effect.map(VenueGateway, (g) => (g.venue("sim") as SimVenue).exchange)

/** An iceberg of 4 showing 2, five ticks under the bid: its first child goes out at once and rests. */
const restingIceberg = Effect.flatMap(market(), (m) =>
  place({
    market_id: m.id,
    side: "buy",
    type: "iceberg",
    amount: "4",
    price: price(m.bid - 5),
    params: { display: "2" }
  })
)

describe("child failures", () => {
  it.effect("a retryable refusal is retried with backoff under the same client id; the child is placed once", () =>
    Effect.gen(function* () {
      const res = yield* restingIceberg
      assert.strictEqual(res.status, 201, res.text)
      yield* run(5)
      const kids = yield* children(res.body.id)
      assert.strictEqual(kids.length, 1)
      assert.strictEqual(kids[0].client_order_id, `${res.body.id}-1`)
      assert.strictEqual(kids[0].status, "open")
      const exchange = yield* simOrders
      assert.strictEqual(exchange.openOrders().filter((o) => o.clientOrderId === kids[0].id).length, 1)
      assert.strictEqual((yield* parent(res.body.id)).status, "triggered")
    }).pipe(
      Effect.provide(
        testServer({
          faults: [
            { op: "place", nth: 1, kind: "rate_limited", retry_after_s: 1 },
            { op: "place", nth: 2, kind: "timeout" }
          ]
        })
      )
    )
  )

  it.effect("a refusal that says when to come back is not retried sooner, even when the backoff is shorter", () =>
    Effect.gen(function* () {
      const res = yield* restingIceberg
      assert.strictEqual(res.status, 201, res.text)
      // The first backoff is 0.2 s; the venue asked for 3 s.
      yield* run(2)
      assert.strictEqual((yield* children(res.body.id)).length, 0)
      yield* run(2)
      const kids = yield* children(res.body.id)
      assert.strictEqual(kids.length, 1)
      assert.strictEqual(kids[0].status, "open")
    }).pipe(Effect.provide(testServer({ faults: [{ op: "place", nth: 1, kind: "rate_limited", retry_after_s: 3 }] })))
  )

  it.effect("a non-retryable refusal ends the parent rejected with the venue's reason", () =>
    Effect.gen(function* () {
      const m = yield* market()
      const res = yield* place({
        market_id: m.id,
        side: "sell",
        type: "stop_market",
        amount: "2",
        stop_price: price(m.bid)
      })
      yield* run(2)
      const p = yield* parent(res.body.id)
      assert.strictEqual(p.status, "rejected")
      assert.include(p.info.detail, "order refused by the venue")
      assert.strictEqual((yield* children(res.body.id)).length, 0)
      assert.strictEqual((yield* events(res.body.id, "managed.done")).length, 1)
    }).pipe(Effect.provide(testServer({ faults: [{ op: "place", nth: 1, kind: "rejected" }] })))
  )
})

describe("a cancel while a refused child waits for its retry", () => {
  it.effect("ends the parent canceled at once, and the child is never placed", () =>
    Effect.gen(function* () {
      const res = yield* restingIceberg
      assert.strictEqual(res.status, 201, res.text)
      const canceled = yield* cancel(res.body.id)
      assert.strictEqual(canceled.status, 200, canceled.text)
      yield* run(5)
      const p = yield* parent(res.body.id)
      assert.strictEqual(p.status, "canceled")
      assert.strictEqual((yield* children(res.body.id)).length, 0)
      assert.strictEqual((yield* events(res.body.id, "managed.done")).length, 1)
      assert.strictEqual((yield* simOrders).openOrders().length, 0)
    }).pipe(Effect.provide(testServer({ faults: [{ op: "place", nth: 1, kind: "rate_limited", retry_after_s: 1 }] })))
  )
})
