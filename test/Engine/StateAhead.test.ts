import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Engine } from "../../src/Engine/Engine.ts"
import type { Runtime } from "../../src/Engine/Runtime.ts"
import { type Batch, OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { settle } from "./Support.ts"
import { makeMarketId } from "../../src/Domain/Ids.ts"

/** Every write the store takes, as it was when taken (states are copied: the engine keeps changing its own). */
const writes: Array<{ orders: Array<{ id: string; status: string }>; parents: Array<Runtime> }> = []
const record = (batch: Batch) =>
  writes.push({
    orders: (batch.orders ?? []).map((o) => ({ id: o.id, status: o.status })),
    parents: (batch.parents ?? []).map((p) => JSON.parse(JSON.stringify(p.state)) as Runtime)
  })
const RecordingStore = Layer.effect(
  OrderStore,
  Effect.map(OrderStore, (store) => ({
    ...store,
    write: (batch: Batch) =>
      Effect.zipRight(
        Effect.sync(() => record(batch)),
        store.write(batch)
      ),
    // The in-memory store always writes at once.
    writeNow: (batch: Batch) => {
      record(batch)
      return store.writeNow(batch)
    }
  }))
).pipe(Layer.provide(OrderStore.layerMemory))

describe("a parent's state and its child's write ahead", () => {
  it.effect("a stop that fires writes its state in its child's write ahead: one write, before the venue is asked", () =>
    Effect.gen(function* () {
      const context = yield* Layer.build(
        serverServices({ seed: 5, store: RecordingStore, auth: authLayer(":memory:") })
      )
      const engine = Context.get(context, Engine)
      const sim = Context.get(context, VenueGateway).venue("sim")!
      const market = (yield* sim.markets).find((m) => m.status === "open")!
      // The writes the store had taken when the venue was asked for each order.
      const asked: Array<number> = []
      const placeOrder = sim.placeOrder
      ;(sim as { placeOrder: typeof placeOrder }).placeOrder = (r) => {
        asked.push(writes.length)
        return placeOrder(r)
      }
      // A sell stop at the bid: its first look fires it, as part of its creation.
      const bid = (yield* sim.book(market.nativeId)).bids[0]!.price
      const before = writes.length
      const created = yield* engine.create(
        {
          account: "sim:default",
          market_id: makeMarketId("sim", market.nativeId),
          side: "sell",
          type: "stop_market",
          amount: "1",
          stop_price: String(bid / 1_000_000),
          params: {}
        },
        "test"
      )
      yield* settle
      const id = created.order.id
      assert.strictEqual(asked.length, 1, "the stop fired and its child was sent")
      // Up to the venue's call: the parent's acceptance, then one write for the step that fired it — the child's
      // write ahead, holding the parent's state with the child filed as being placed (no write of the state alone).
      const sent = writes.slice(before, asked[0])
      assert.deepStrictEqual(
        sent.map((w) => w.orders.map((o) => (o.id === id ? "parent" : o.status))),
        [["parent"], ["pending"]]
      )
      assert.deepStrictEqual(
        sent.map((w) => w.parents.map((p) => [p.id, Object.values(p.children).map((c) => [c.spec.child, c.status])])),
        [[[id, []]], [[id, [[1, "placing"]]]]]
      )
    }).pipe(Effect.scoped)
  )
})
