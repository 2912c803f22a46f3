import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Scope, Exit, TestContext } from "effect"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { submitOrder } from "../../src/Orders.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { Desk } from "../../src/Trading/Desk.ts"

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

const start = (file: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      serverServices({
        seed: 9,
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(file))),
        auth: authLayer(":memory:")
      }),
      scope
    )
    yield* settle
    return { context, scope }
  })

describe("a restart on a database with much history", () => {
  it.effect(
    "holds only the live orders and parents, and answers for the finished ones from the store",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "restore-"))
        try {
          const file = join(dir, "engine.db")
          const first = yield* start(file)
          const sim = Context.get(first.context, VenueGateway).venue("sim")!
          const market = (yield* sim.markets).find((m) => m.status === "open")!
          const marketId = `sim:${market.nativeId}`
          const bid = String((yield* sim.book(market.nativeId)).bids[0]!.price / 1e6)
          const submit = (body: Record<string, unknown>, clientId: string) =>
            submitOrder(
              { market_id: marketId, amount: "1", ...body, client_order_id: clientId } as any,
              "sim:default",
              "t"
            ).pipe(Effect.provide(first.context))
          // History: 300 market orders that fill and 20 stops that fire at once, all finished.
          for (let i = 0; i < 300; i++) yield* submit({ side: "buy", type: "market", price: "0.99" }, `m${i}`)
          for (let i = 0; i < 20; i++) yield* submit({ side: "sell", type: "stop_market", stop_price: bid }, `s${i}`)
          // Live: 4 resting limits and 3 stops far from the market.
          for (let i = 0; i < 4; i++) yield* submit({ side: "buy", type: "limit", price: "0.01" }, `l${i}`)
          for (let i = 0; i < 3; i++) yield* submit({ side: "sell", type: "stop_market", stop_price: "0.01" }, `w${i}`)
          yield* settle
          const firedStop = (yield* submitOrder(
            {
              market_id: marketId,
              amount: "1",
              side: "sell",
              type: "stop_market",
              stop_price: bid,
              client_order_id: "s0"
            },
            "sim:default",
            "t"
          ).pipe(Effect.provide(first.context))).order
          yield* Scope.close(first.scope, Exit.void)

          const second = yield* start(file)
          const desk = Context.get(second.context, Desk)
          const engine = Context.get(second.context, Engine)
          // The sim venue kept its book in memory, so the resting limits end at the restart; the stops stay.
          assert.deepStrictEqual(yield* desk.held, { live: 3, recent: 4 })
          assert.strictEqual(yield* engine.heldCount, 3)
          const all = yield* desk.list({})
          assert.strictEqual(all.length, 300 + 20 * 2 + 4 + 3)
          // A finished order and a finished parent read back whole, the parent with its child.
          const oldest = all[all.length - 1]!
          assert.strictEqual(oldest.clientOrderId, "m0")
          assert.strictEqual((yield* desk.get(oldest.id))?.status, "closed")
          const parent = (yield* desk.get(firedStop.id))!
          assert.strictEqual(parent.status, "closed")
          const kids = yield* desk.list({ parentId: parent.id })
          assert.deepStrictEqual(
            parent.info["children"],
            kids.map((k) => k.id)
          )
          assert.strictEqual(kids.length, 1)
          // A retry of a finished order's client id answers it (200), and places nothing.
          const retry = yield* submitOrder(
            { market_id: marketId, amount: "1", side: "buy", type: "market", price: "0.99", client_order_id: "m0" },
            "sim:default",
            "t"
          ).pipe(Effect.provide(second.context))
          assert.isFalse(retry.created)
          assert.strictEqual(retry.order.id, oldest.id)
          // Canceling a finished parent answers its record.
          assert.strictEqual((yield* engine.cancel(parent.id)).status, "closed")
          assert.strictEqual((yield* desk.list({})).length, all.length)
          yield* Scope.close(second.scope, Exit.void)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )
})
