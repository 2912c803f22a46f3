import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import { OwnerToken, type RawResponse, request, testServer } from "./TestServer.ts"

const cents = (p: string) => Math.round(Number(p) * 100)
const price = (c: number) => String(c / 100)

const NO_LIMITS = {
  kill_switch: false,
  max_order_contracts: null,
  max_order_notional: null,
  price_collar: null,
  max_open_orders: null,
  max_position_contracts: null,
  max_orders_per_minute: null,
  daily_loss_limit: null
}

const venueOrders = Effect.map(VenueGateway, (g) => (g.venue("sim") as SimVenue).exchange.openOrders().length)

const market = Effect.gen(function* () {
  const m = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0]
  return { id: m.id as string, bid: cents(m.best_bid), ask: cents(m.best_ask) }
})

const assertRefused = (res: RawResponse, rule: string) => {
  assert.strictEqual(res.status, 409, res.text)
  assert.strictEqual(res.body.error.code, "risk_rejected")
  assert.strictEqual(res.body.error.details.rule, rule)
  assert.isNull(res.body.error.details.venue)
  assert.isFalse(res.body.error.details.retryable)
  assert.include(res.body.error.message, "")
}

/** Each case: the rules to set, an order that passes them, and one the named rule refuses. */
const CASES: ReadonlyArray<{
  rule: string
  rules: Record<string, unknown>
  prepare?: (token: string, m: { id: string; bid: number; ask: number }) => Effect.Effect<void, unknown, any>
  ok: (m: { id: string; bid: number; ask: number }) => Record<string, unknown>
  refused: (m: { id: string; bid: number; ask: number }) => Record<string, unknown>
}> = [
  {
    rule: "kill_switch",
    rules: { kill_switch: true },
    ok: () => ({}),
    refused: (m) => ({ price: price(m.bid - 5) })
  },
  {
    rule: "max_order_contracts",
    rules: { max_order_contracts: "10" },
    ok: (m) => ({ amount: "10", price: price(m.bid - 5) }),
    refused: (m) => ({ amount: "11", price: price(m.bid - 5) })
  },
  {
    rule: "max_order_notional",
    rules: { max_order_notional: "2" },
    ok: () => ({ amount: "10", price: "0.2" }),
    refused: () => ({ amount: "11", price: "0.2" })
  },
  {
    rule: "price_collar",
    rules: { price_collar: "0.05" },
    prepare: (token, m) =>
      Effect.asVoid(request("PUT", "/trading/fair-values", { token, json: { values: { [m.id]: price(m.bid) } } })),
    ok: (m) => ({ price: price(m.bid - 5) }),
    refused: (m) => ({ price: price(m.bid - 6) })
  },
  {
    rule: "max_open_orders",
    rules: { max_open_orders: 1 },
    ok: (m) => ({ price: price(m.bid - 5) }),
    refused: (m) => ({ price: price(m.bid - 6) })
  },
  {
    rule: "max_position_contracts",
    rules: { max_position_contracts: "5" },
    ok: (m) => ({ amount: "5", price: price(m.bid - 5) }),
    refused: (m) => ({ amount: "6", price: price(m.bid - 5) })
  },
  {
    rule: "max_orders_per_minute",
    rules: { max_orders_per_minute: 1 },
    ok: (m) => ({ price: price(m.bid - 5) }),
    refused: (m) => ({ price: price(m.bid - 6) })
  },
  {
    rule: "daily_loss_limit",
    rules: { daily_loss_limit: "0.5" },
    // Buy at the ask, then mark the position far below: today's loss passes the limit.
    prepare: (token, m) =>
      Effect.gen(function* () {
        const res = yield* request("POST", "/trading/orders", {
          token,
          json: { market_id: m.id, side: "buy", type: "limit", amount: "3", price: price(m.ask + 2) }
        })
        assert.strictEqual(res.body.status, "closed", res.text)
        yield* request("PUT", "/trading/fair-values", { token, json: { values: { [m.id]: price(m.bid - 30) } } })
      }),
    ok: () => undefined as never,
    refused: (m) => ({ price: price(m.bid - 40) })
  }
]

describe("risk rules", () => {
  for (const c of CASES) {
    it.effect(`${c.rule}: a refusal is 409 risk_rejected naming the rule, and nothing reaches the venue`, () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const m = yield* market
        const put = yield* request("PUT", "/trading/risk", { token, json: { ...NO_LIMITS, ...c.rules } })
        assert.strictEqual(put.status, 200, put.text)
        assert.strictEqual(put.body.version, 1)
        assert.match(put.body.updated_by, /^owner/)
        if (c.prepare !== undefined) yield* c.prepare(token, m)
        const order = (patch: Record<string, unknown>) =>
          request("POST", "/trading/orders", {
            token,
            json: { market_id: m.id, side: "buy", type: "limit", amount: "1", ...patch }
          })
        if (c.rule !== "kill_switch" && c.rule !== "daily_loss_limit") {
          const passed = yield* order(c.ok(m))
          assert.strictEqual(passed.status, 201, passed.text)
        }
        const before = yield* venueOrders
        const seqBefore = (yield* request("GET", "/trading/status", { token })).body.journal_seq
        const refused = yield* order(c.refused(m))
        assertRefused(refused, c.rule)
        assert.strictEqual(yield* venueOrders, before)
        const status = (yield* request("GET", "/trading/status", { token })).body
        assert.strictEqual(status.journal_seq, seqBefore + 1, "one risk.rejected event")
      }).pipe(Effect.provide(testServer()))
    )
  }

  it.effect("price_collar with no fair value set measures from the book's mid", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const m = yield* market
      const put = yield* request("PUT", "/trading/risk", { token, json: { ...NO_LIMITS, price_collar: "0.05" } })
      assert.strictEqual(put.status, 200, put.text)
      const order = (cents: number) =>
        request("POST", "/trading/orders", {
          token,
          json: { market_id: m.id, side: "buy", type: "limit", amount: "1", price: price(cents) }
        })
      // The mid is half way between the bid and the ask: the bid is within five cents of it, ten under it is not.
      assert.isAtMost(m.ask - m.bid, 10)
      const passed = yield* order(m.bid)
      assert.strictEqual(passed.status, 201, passed.text)
      const before = yield* venueOrders
      assertRefused(yield* order(m.bid - 10), "price_collar")
      assert.strictEqual(yield* venueOrders, before)
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("the rules are versioned; a rule set off its schema is 422", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const first = yield* request("GET", "/trading/risk", { token })
      assert.strictEqual(first.body.version, 0)
      assert.deepStrictEqual(first.body.rules, NO_LIMITS)
      yield* request("PUT", "/trading/risk", { token, json: { ...NO_LIMITS, max_open_orders: 3 } })
      const second = yield* request("PUT", "/trading/risk", { token, json: { ...NO_LIMITS, max_open_orders: 4 } })
      assert.strictEqual(second.body.version, 2)
      assert.strictEqual((yield* request("GET", "/trading/risk", { token })).body.rules.max_open_orders, 4)
      const bad = yield* request("PUT", "/trading/risk", { token, json: { ...NO_LIMITS, max_order_contracts: 5 } })
      assert.strictEqual(bad.status, 422)
      assert.strictEqual(bad.body.error.details.errors[0].field, "max_order_contracts")
    }).pipe(Effect.provide(testServer()))
  )
})

describe("halt and resume", () => {
  for (const policy of ["cancel", "hold"] as const) {
    it.effect(
      `policy ${policy}: new orders get 409 kill_switch until resumed; resting orders are ${policy === "cancel" ? "pulled" : "left"}`,
      () =>
        Effect.gen(function* () {
          const token = yield* OwnerToken
          const m = yield* market
          const order = (c: number) =>
            request("POST", "/trading/orders", {
              token,
              json: { market_id: m.id, side: "buy", type: "limit", amount: "2", price: price(c) }
            })
          const resting = (yield* order(m.bid - 4)).body
          const halted = yield* request("POST", "/trading/halt", {
            token,
            json: { reason: "news", scope: "*", policy }
          })
          assert.strictEqual(halted.status, 200, halted.text)
          assert.isTrue(halted.body.halted)
          assert.strictEqual(halted.body.canceled, policy === "cancel" ? 1 : 0)
          assert.isTrue((yield* request("GET", "/trading/status", { token })).body.halted)
          const after = (yield* request("GET", `/trading/orders/${resting.id}`, { token })).body
          assert.strictEqual(after.status, policy === "cancel" ? "canceled" : "open")
          assert.strictEqual(yield* venueOrders, policy === "cancel" ? 0 : 1)
          const before = yield* venueOrders
          const refused = yield* order(m.bid - 5)
          assertRefused(refused, "kill_switch")
          assert.include(refused.body.error.message, "news")
          assert.strictEqual(yield* venueOrders, before)
          const resumed = yield* request("POST", "/trading/resume", { token })
          assert.isFalse(resumed.body.halted)
          assert.isFalse((yield* request("GET", "/trading/status", { token })).body.halted)
          assert.strictEqual((yield* order(m.bid - 5)).status, 201)
        }).pipe(Effect.provide(testServer()))
    )
  }
})
