import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { FaultRule, SimVenue } from "../../src/Venues/SimVenue.ts"
import { OwnerToken, request, testServer } from "./TestServer.ts"

const exchange = Effect.map(VenueGateway, (g) => (g.venue("sim") as SimVenue).exchange)

const placeTwice = (clientOrderId: string) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    const m = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0]
    const body = {
      market_id: m.id,
      side: "buy",
      type: "limit",
      amount: "2",
      price: String(Math.round(Number(m.best_bid) * 100 - 4) / 100),
      client_order_id: clientOrderId
    }
    const first = yield* request("POST", "/trading/orders", { token, json: body })
    const retry = yield* request("POST", "/trading/orders", { token, json: body })
    const orders = (yield* request("GET", "/trading/orders?status=all", { token })).body.data
    const onVenue = (yield* exchange).openOrders()
    return { first, retry, orders, onVenue }
  })

const CASES: ReadonlyArray<{ fault: FaultRule; status: number; code: string; retryable: boolean }> = [
  {
    fault: { op: "place", nth: 1, kind: "insufficient_funds" },
    status: 400,
    code: "insufficient_funds",
    retryable: false
  },
  { fault: { op: "place", nth: 1, kind: "rejected" }, status: 400, code: "order_rejected", retryable: false },
  {
    fault: { op: "place", nth: 1, kind: "rate_limited", retry_after_s: 2 },
    status: 429,
    code: "rate_limit_exceeded",
    retryable: true
  },
  { fault: { op: "place", nth: 1, kind: "timeout" }, status: 504, code: "venue_timeout", retryable: true },
  { fault: { op: "place", nth: 1, kind: "unavailable" }, status: 502, code: "venue_error", retryable: true }
]

describe("venue failures", () => {
  for (const c of CASES) {
    it.effect(
      `${c.fault.kind}: ${c.status} ${c.code}, retryable ${c.retryable}; a retry places exactly one order`,
      () =>
        Effect.gen(function* () {
          const { first, retry, orders, onVenue } = yield* placeTwice(`cid-${c.fault.kind}`)
          assert.strictEqual(first.status, c.status, first.text)
          assert.strictEqual(first.body.error.code, c.code)
          assert.strictEqual(first.body.error.details.venue, "sim")
          assert.strictEqual(first.body.error.details.retryable, c.retryable)
          assert.isString(first.body.error.details.reason)
          if (c.fault.kind === "rate_limited") {
            assert.strictEqual(first.headers["retry-after"], "2")
            assert.strictEqual(first.body.error.details.retry_after, 2)
          }
          // The failed attempt left nothing; the retry with the same client id placed one order, on both sides.
          assert.strictEqual(retry.status, 201, retry.text)
          assert.strictEqual(orders.length, 1)
          assert.strictEqual(onVenue.length, 1)
          assert.strictEqual(onVenue[0]!.clientOrderId, orders[0].id)
        }).pipe(Effect.provide(testServer({ faults: [c.fault] })))
    )
  }

  it.effect("a timeout whose request reached the venue is reconciled: the order is found, never doubled", () =>
    Effect.gen(function* () {
      const { first, retry, orders, onVenue } = yield* placeTwice("cid-reached")
      assert.strictEqual(first.status, 201, first.text)
      assert.isTrue(first.body.info.reconciled)
      assert.strictEqual(retry.status, 200)
      assert.strictEqual(retry.body.id, first.body.id)
      assert.strictEqual(orders.length, 1)
      assert.strictEqual(onVenue.length, 1)
    }).pipe(Effect.provide(testServer({ faults: [{ op: "place", nth: 1, kind: "timeout", reached: true }] })))
  )

  it.effect("a cancel the venue fails keeps the order open and says so", () =>
    Effect.gen(function* () {
      const { first } = yield* placeTwice("cid-cancel")
      const token = yield* OwnerToken
      const failed = yield* request("DELETE", `/trading/orders/${first.body.id}`, { token })
      assert.strictEqual(failed.status, 502)
      assert.strictEqual(failed.body.error.code, "venue_error")
      assert.strictEqual((yield* request("GET", `/trading/orders/${first.body.id}`, { token })).body.status, "open")
      const again = yield* request("DELETE", `/trading/orders/${first.body.id}`, { token })
      assert.strictEqual(again.body.status, "canceled")
      assert.strictEqual((yield* exchange).openOrders().length, 0)
    }).pipe(Effect.provide(testServer({ faults: [{ op: "cancel", nth: 1, kind: "unavailable" }] })))
  )

  it.effect("the desk refuses for funds before the venue when cash cannot cover the order", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const m = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0]
      const res = yield* request("POST", "/trading/orders", {
        token,
        json: { market_id: m.id, side: "buy", type: "limit", amount: "100", price: "0.5" }
      })
      assert.strictEqual(res.status, 400)
      assert.strictEqual(res.body.error.code, "insufficient_funds")
      assert.strictEqual((yield* exchange).openOrders().length, 0)
      const fits = yield* request("POST", "/trading/orders", {
        token,
        json: { market_id: m.id, side: "buy", type: "limit", amount: "2", price: "0.01" }
      })
      assert.strictEqual(fits.status, 201)
    }).pipe(Effect.provide(testServer({ startingCash: "10" })))
  )
})
