import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { OwnerToken, type RawResponse, request, TestServerLive } from "./TestServer.ts"

const assert422 = (res: RawResponse, field: string) => {
  assert.strictEqual(res.status, 422, res.text)
  assert.strictEqual(res.body.error.code, "validation_error")
  assert.include(
    res.body.error.details.errors.map((e: any) => e.field),
    field,
    res.text
  )
  assert.include(res.body.error.message, field)
}

const aMarket = Effect.map(request("GET", "/venues/sim/markets?limit=1"), (r) => r.body.data[0].id as string)

const order = (market: string, extra: Record<string, unknown> = {}) => ({
  market_id: market,
  side: "buy",
  type: "limit",
  amount: "1",
  price: "0.01",
  ...extra
})

describe("request shapes", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("an unknown top-level field is 422 naming it, on every JSON body, and nothing is placed", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const market = yield* aMarket
        const before = (yield* request("GET", "/trading/orders?status=all&limit=1000", { token })).body.count
        for (const [field, value] of [
          ["reload_delay", 5],
          ["id", "o_1"],
          ["status", "closed"],
          ["filled", "1"]
        ] as const) {
          assert422(
            yield* request("POST", "/trading/orders", { token, json: order(market, { [field]: value }) }),
            field
          )
        }
        const iceberg = order(market, { type: "iceberg", amount: "4", params: { display: "1" }, reload_delay: 1 })
        assert422(yield* request("POST", "/trading/orders", { token, json: iceberg }), "reload_delay")
        const after = (yield* request("GET", "/trading/orders?status=all&limit=1000", { token })).body.count
        assert.strictEqual(after, before)
        const placed = yield* request("POST", "/trading/orders", { token, json: order(market) })
        assert.strictEqual(placed.status, 201, placed.text)
        const id = placed.body.id
        const bodies: ReadonlyArray<[string, string, unknown]> = [
          ["PATCH", `/trading/orders/${id}`, { price: "0.02", status: "open" }],
          ["PUT", "/trading/fair-values", { values: {}, market: "x" }],
          ["PUT", "/trading/risk", { kill_switch: false, extra_rule: 1 }],
          ["POST", "/trading/halt", { reason: "r", scope: "*", force: true }],
          ["POST", "/trading/keys", { name: "k", permissions: ["view"] }],
          ["POST", "/trading/grants", { user: "u", account: "sim:default", permission: "view", role: "admin" }]
        ]
        for (const [method, path, body] of bodies) {
          const res = yield* request(method as "POST", path, { token, json: body })
          const field = Object.keys(body as object).at(-1)!
          assert422(res, field)
        }
        const halted = (yield* request("GET", "/trading/status", { token })).body.halted
        assert.isFalse(halted)
      })
    )

    it.effect(
      "the status counts the engine's waiting parents: one more for a stop that waits, none once canceled",
      () =>
        Effect.gen(function* () {
          const token = yield* OwnerToken
          const market = yield* aMarket
          const waiting = Effect.map(
            request("GET", "/trading/status", { token }),
            (r) => r.body.waiting_parents as number
          )
          const before = yield* waiting
          const stop = yield* request("POST", "/trading/orders", {
            token,
            json: order(market, { type: "stop_market", side: "sell", stop_price: "0.01", price: undefined })
          })
          assert.strictEqual(stop.status, 201, stop.text)
          assert.strictEqual(yield* waiting, before + 1)
          const canceled = yield* request("DELETE", `/trading/orders/${stop.body.id}`, { token })
          assert.isBelow(canceled.status, 300, canceled.text)
          assert.strictEqual(yield* waiting, before)
        })
    )

    it.effect("an account is taken as '<venue>:<name>' or as the object an Order record carries", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const market = yield* aMarket
        const asObject = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: { venue: "sim", name: "default", subaccount: null } })
        })
        assert.strictEqual(asObject.status, 201, asObject.text)
        assert.deepStrictEqual(asObject.body.account, { venue: "sim", name: "default", subaccount: null })
        // The record's own account goes back as it came.
        const again = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: asObject.body.account, client_order_id: "obj-2" })
        })
        assert.strictEqual(again.status, 201, again.text)
        const noSub = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: { venue: "sim", name: "default" } })
        })
        assert.strictEqual(noSub.status, 201, noSub.text)
        const asString = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: "sim:default" })
        })
        assert.strictEqual(asString.status, 201, asString.text)
        const other = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: { venue: "sim", name: "elsewhere", subaccount: null } })
        })
        assert.strictEqual(other.status, 400, other.text)
        assert.strictEqual(other.body.error.details.errors[0].field, "account")
        const sub = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: { venue: "sim", name: "default", subaccount: "a" } })
        })
        assert.strictEqual(sub.status, 422, sub.text)
        const extra = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { account: { venue: "sim", name: "default", id: 1 } })
        })
        assert.strictEqual(extra.status, 422, extra.text)
        const grant = yield* request("POST", "/trading/grants", {
          token,
          json: { user: "obj-user", account: { venue: "sim", name: "default", subaccount: null }, permission: "view" }
        })
        assert.strictEqual(grant.status, 201, grant.text)
        assert.strictEqual(grant.body.account, "sim:default")
      })
    )

    it.effect(
      "GET /trading/orders lists the live orders by default, every order with status=all, every child of a parent",
      () =>
        Effect.gen(function* () {
          const token = yield* OwnerToken
          const market = yield* aMarket
          const kept = yield* request("POST", "/trading/orders", { token, json: order(market, { book: "dflt" }) })
          const gone = yield* request("POST", "/trading/orders", { token, json: order(market, { book: "dflt" }) })
          assert.strictEqual((yield* request("DELETE", `/trading/orders/${gone.body.id}`, { token })).status, 200)
          const ids = (query: string) =>
            Effect.map(request("GET", `/trading/orders?book=dflt${query}`, { token }), (r) => {
              assert.strictEqual(r.status, 200, r.text)
              return r.body.data.map((o: any) => o.id as string)
            })
          assert.deepStrictEqual(yield* ids(""), [kept.body.id])
          assert.deepStrictEqual(yield* ids("&status=all"), [gone.body.id, kept.body.id])
          assert.deepStrictEqual(yield* ids("&status=canceled"), [gone.body.id])
          assert.deepStrictEqual(yield* ids("&status=open,canceled"), [gone.body.id, kept.body.id])
          const bad = yield* request("GET", "/trading/orders?status=done", { token })
          assert.strictEqual(bad.status, 400, bad.text)
          // A parent's children, whatever their status: an iceberg whose first slice is canceled with it.
          const parent = yield* request("POST", "/trading/orders", {
            token,
            json: order(market, { type: "iceberg", amount: "4", params: { display: "1" } })
          })
          assert.strictEqual(parent.status, 201, parent.text)
          const children = (status: string) =>
            Effect.map(
              request("GET", `/trading/orders?parent_id=${parent.body.id}${status}`, { token }),
              (r) => r.body.data as Array<any>
            )
          let live: Array<any> = []
          for (let i = 0; i < 50 && live.length === 0; i++) {
            live = yield* children("")
            if (live.length === 0) yield* Effect.sleep("10 millis")
          }
          assert.isAbove(live.length, 0)
          yield* request("DELETE", `/trading/orders/${parent.body.id}`, { token })
          const afterCancel = yield* children("")
          assert.deepStrictEqual(
            afterCancel.map((o) => o.id),
            live.map((o) => o.id)
          )
          assert.isTrue(afterCancel.every((o) => o.status === "canceled"))
          assert.deepStrictEqual(yield* children("&status=open"), [])
        })
    )
  })
})
