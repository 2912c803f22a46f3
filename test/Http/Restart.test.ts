import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { OwnerToken, request, testServer } from "./TestServer.ts"

describe("restart", () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-restart-"))
  const files = { control: join(dir, "control.db"), engine: join(dir, "engine.db") }
  const snapshot = (token: string) =>
    Effect.gen(function* () {
      const orders = (yield* request("GET", "/trading/orders?status=all", { token })).body
      const fills = (yield* request("GET", "/trading/fills", { token })).body
      const positions = (yield* request("GET", "/trading/positions", { token })).body
      const balances = (yield* request("GET", "/trading/balances", { token })).body
      const risk = (yield* request("GET", "/trading/risk", { token })).body
      const seq = (yield* request("GET", "/trading/status", { token })).body.journal_seq
      return { orders, fills, positions, balances, risk, seq }
    })

  it.effect(
    "orders, fills, positions, cash, risk rules and the journal survive a restart on the same database; orders the venue lost end",
    () =>
      Effect.gen(function* () {
        const { before, token } = yield* Effect.gen(function* () {
          const token = yield* OwnerToken
          const m = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0]
          const ask = Math.round(Number(m.best_ask) * 100)
          yield* request("POST", "/trading/orders", {
            token,
            json: { market_id: m.id, side: "buy", type: "limit", amount: "4", price: String((ask + 1) / 100) }
          })
          yield* request("POST", "/trading/orders", {
            token,
            json: { market_id: m.id, side: "buy", type: "limit", amount: "2", price: "0.01", client_order_id: "keep" }
          })
          yield* request("PUT", "/trading/risk", {
            token,
            json: {
              kill_switch: false,
              max_order_contracts: "50",
              max_order_notional: null,
              price_collar: null,
              max_open_orders: null,
              max_position_contracts: null,
              max_orders_per_minute: null,
              daily_loss_limit: null
            }
          })
          return { before: yield* snapshot(token), token }
        }).pipe(Effect.provide(testServer(files)))
        assert.isAbove(before.fills.count, 0)
        const after = yield* Effect.gen(function* () {
          const again = yield* request("POST", "/trading/orders", {
            token,
            json: {
              market_id: before.orders.data[0].market_id,
              side: "buy",
              type: "limit",
              amount: "2",
              price: "0.01",
              client_order_id: "keep"
            }
          })
          assert.strictEqual(again.status, 200, "the client id still names the order placed before the restart")
          return yield* snapshot(token)
        }).pipe(Effect.provide(testServer({ ...files, owner: token })))
        // The sim venue keeps its book in memory: the resting order is gone after the restart, and the desk says so.
        const resting = after.orders.data.find((o: any) => o.client_order_id === "keep")
        assert.strictEqual(resting.status, "canceled")
        assert.strictEqual(resting.info.detail, "absent on the venue after a restart")
        assert.strictEqual(after.seq, before.seq + 1, "one order.canceled event")
        const unchanged = (x: typeof before) => ({
          ...x,
          orders: x.orders.data.filter((o: any) => o.client_order_id !== "keep"),
          seq: 0,
          balances: x.balances.data.map((b: any) => b.cash)
        })
        assert.deepStrictEqual(unchanged(after), unchanged(before))
        assert.strictEqual(after.balances.data[0].locked, "0")
      })
  )
})
