/** `sim:paper` across a restart on the same database: its ledger stays, its resting orders end, new fills count. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as F from "../../../src/Domain/Fixed.ts"
import { OwnerToken, request, testServer } from "../../Http/TestServer.ts"

describe("sim:paper across a restart", () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-paper-restart-"))
  const files = { control: join(dir, "control.db"), engine: join(dir, "engine.db") }
  const options = { ...files, simStepMs: 3_600_000, paper: { cash: "500" } }

  it.effect("the paper ledger carries on; an order left resting ends; the next run's fills are new fills", () =>
    Effect.gen(function* () {
      const take = (token: string, m: { id: string; best_ask: string }) =>
        request("POST", "/trading/orders", {
          token,
          json: {
            account: "sim:paper",
            market_id: m.id,
            side: "buy",
            type: "limit",
            amount: "1",
            price: m.best_ask,
            time_in_force: "ioc"
          }
        })
      const first = yield* Effect.gen(function* () {
        const token = yield* OwnerToken
        const m = (yield* request("GET", "/venues/sim/markets?limit=100")).body.data.find(
          (x: any) => x.best_ask !== null
        )
        const taken = yield* take(token, m)
        assert.strictEqual(taken.body.filled, "1", taken.text)
        const resting = yield* request("POST", "/trading/orders", {
          token,
          json: { account: "sim:paper", market_id: m.id, side: "buy", type: "limit", amount: "1", price: "0.01" }
        })
        assert.strictEqual(resting.body.status, "open", resting.text)
        return { token, m, resting: resting.body.id as string }
      }).pipe(Effect.provide(testServer(options)))

      yield* TestClock.adjust("1 minute")
      yield* Effect.gen(function* () {
        const get = (path: string) => request("GET", path, { token: first.token })
        const ended = (yield* get(`/trading/orders/${first.resting}?account=sim:paper`)).body
        assert.strictEqual(ended.status, "canceled", JSON.stringify(ended))
        const again = yield* take(first.token, first.m)
        assert.strictEqual(again.body.filled, "1", again.text)
        const fills = (yield* get("/trading/fills?account=sim:paper")).body.data
        assert.strictEqual(fills.length, 2, JSON.stringify(fills))
        assert.notStrictEqual(fills[0].trade_id, fills[1].trade_id)
        let spent = F.ZERO
        for (const f of fills) spent = F.add(spent, F.add(F.mul(F.of(f.price), F.of(f.amount)), F.of(f.fee)))
        const balance = (yield* get("/trading/balances?account=sim:paper")).body.data[0]
        assert.strictEqual(balance.cash, F.format(F.sub(F.of("500"), spent)))
        const position = (yield* get("/trading/positions?account=sim:paper")).body.data[0]
        assert.strictEqual(position.contracts, "2")
      }).pipe(Effect.provide(testServer({ ...options, owner: first.token })))
    })
  )
})
