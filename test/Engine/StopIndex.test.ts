import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock } from "effect"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { settle } from "./Support.ts"
import { makeMarketId } from "../../src/Domain/Ids.ts"

/** The in-memory store, counting how often a parent's state is written (once per input a parent is fed). */
const counted = { writes: 0 }
const CountingStore = Layer.effect(
  OrderStore,
  Effect.map(OrderStore, (store) => ({
    ...store,
    write: (batch: Parameters<typeof store.write>[0]) =>
      Effect.zipRight(
        Effect.sync(() => void (counted.writes += batch.parents?.length ?? 0)),
        store.write(batch)
      ),
    // The in-memory store always writes at once.
    writeNow: (batch: Parameters<typeof store.write>[0]) => {
      counted.writes += batch.parents?.length ?? 0
      return store.writeNow(batch)
    }
  }))
).pipe(Layer.provide(OrderStore.layerMemory))

describe("the index of waiting stops", () => {
  it.effect("a market update reaches only the stops it can fire, not every stop on the market", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(serverServices({ seed: 7, store: CountingStore, auth: authLayer(":memory:") }))
      const engine = Context.get(context, Engine)
      const sim = Context.get(context, VenueGateway).venue("sim")!
      const market = (yield* sim.markets).find((m) => m.status === "open")!
      const marketId = makeMarketId("sim", market.nativeId)
      // 200 sell stops far below the market: no update of the next minute can reach them.
      for (let i = 0; i < 200; i++) {
        yield* engine.create(
          {
            account: "sim:default",
            market_id: marketId,
            side: "sell",
            type: "stop_market",
            amount: "1",
            stop_price: "0.01",
            params: {}
          },
          "test"
        )
      }
      const before = counted.writes
      // The count sees every write: placing the 200 stops wrote each one's state.
      assert.isAtLeast(before, 200)
      for (let i = 0; i < 30; i++) {
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      // Thirty updates of this market reached none of the 200 stops: nothing was fed, nothing written.
      assert.strictEqual(counted.writes - before, 0)
      assert.strictEqual(yield* engine.liveCount, 200)
      // A stop at the touch is reached on the next update and fires.
      const near = (yield* sim.book(market.nativeId)).bids[0]!.price
      yield* engine.create(
        {
          account: "sim:default",
          market_id: marketId,
          side: "sell",
          type: "stop_market",
          amount: "1",
          stop_price: String(near / 1_000_000),
          params: {}
        },
        "test"
      )
      yield* TestClock.adjust("1 second")
      yield* settle
      assert.strictEqual(yield* engine.liveCount, 200, "the near stop fired and ended; the far ones still wait")
    }).pipe(Effect.scoped)
  )
})
