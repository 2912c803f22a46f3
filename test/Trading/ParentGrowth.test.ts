import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, TestClock, TestContext } from "effect"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { OrderStore, type StoredOrder, type StoredParent } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import { makeMarketId } from "../../src/Domain/Ids.ts"

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

/** Each write of the parent: how many of its children had finished, and the bytes of what the driver wrote. */
interface Write {
  readonly finished: number
  readonly state: number
  readonly record: number
}

describe("a parent's save", () => {
  it.effect("writes the same few bytes after 80 finished children as after 10, and a read lists them all", () =>
    Effect.gen(function* () {
      const writes: Array<Write> = []
      let parentId = ""
      let finished = 0
      const see = (orders: ReadonlyArray<StoredOrder>, parents: ReadonlyArray<StoredParent>) =>
        Effect.sync(() => {
          for (const o of orders) {
            if (o.parentId === parentId && ["closed", "canceled", "expired", "rejected"].includes(o.status))
              finished += 1
          }
          const state = parents.find((p) => p.id === parentId)
          const record = orders.find((o) => o.id === parentId)
          if (state === undefined && record === undefined) return
          // The core's own state is another engineer's part; what the driver adds around it must not grow.
          const driver = state === undefined ? 0 : JSON.stringify({ ...(state.state as object), state: null }).length
          writes.push({ finished, state: driver, record: record === undefined ? 0 : JSON.stringify(record).length })
        })
      // Whatever the seam calls its writes: one batch, or an order and a parent apart.
      const store = Layer.effect(
        OrderStore,
        Effect.map(OrderStore, (inner) => {
          const methods = inner as unknown as Record<string, (arg: any) => Effect.Effect<any>>
          const out: Record<string, unknown> = { ...inner }
          if (methods["write"] !== undefined) {
            out["write"] = (batch: any) =>
              Effect.zipRight(see(batch.orders ?? [], batch.parents ?? []), methods["write"]!(batch))
          }
          const writeNow = (inner as unknown as Record<string, (arg: any) => unknown>)["writeNow"]
          if (writeNow !== undefined) {
            out["writeNow"] = (batch: any) => {
              const written = writeNow(batch)
              if (written !== undefined) Effect.runSync(see(batch.orders ?? [], batch.parents ?? []))
              return written
            }
          }
          if (methods["putOrder"] !== undefined) {
            out["putOrder"] = (o: any) => Effect.zipRight(see([o], []), methods["putOrder"]!(o))
          }
          if (methods["putParent"] !== undefined) {
            out["putParent"] = (p: any) => Effect.zipRight(see([], [p]), methods["putParent"]!(p))
          }
          return out as unknown as Context.Tag.Service<OrderStore>
        })
      ).pipe(Layer.provide(OrderStore.layerMemory))
      const context = yield* Layer.build(serverServices({ seed: 5, store, auth: authLayer(":memory:") }))
      const engine = Context.get(context, Engine)
      const desk = Context.get(context, Desk)
      const sim = Context.get(context, VenueGateway).venue("sim")!
      const market = (yield* sim.markets).find((m) => m.status === "open")!
      const slices = 90
      const created = yield* engine.create(
        {
          account: "sim:default",
          market_id: makeMarketId("sim", market.nativeId),
          side: "buy",
          type: "twap",
          amount: String(slices),
          params: { window_s: slices, slices, style: "taker", limit: "0.99" }
        },
        "test"
      )
      parentId = created.order.id
      for (let s = 0; s < slices + 5; s++) {
        yield* TestClock.adjust("1 second")
        yield* settle
      }
      const kids = [...(yield* desk.list({ parentId }))].reverse()
      assert.isAbove(kids.length, 80, "every slice went out")
      const early = writes.filter((w) => w.finished >= 5 && w.finished <= 10)
      const late = writes.filter((w) => w.finished >= 80)
      assert.isAbove(early.length, 0)
      assert.isAbove(late.length, 0)
      const most = (ws: ReadonlyArray<Write>, key: "state" | "record") => Math.max(...ws.map((w) => w[key]))
      // A few digits more in the sums, nothing per child.
      assert.isAtMost(most(late, "state"), most(early, "state") + 64)
      assert.isAtMost(most(late, "record"), most(early, "record") + 64)
      // A client reading the parent still sees every child, oldest first.
      const read = (yield* desk.get(parentId))!
      assert.deepStrictEqual(
        read.info["children"],
        kids.map((k) => k.id)
      )
      assert.strictEqual(
        read.filled,
        kids.reduce((sum, k) => sum + k.filled, 0)
      )
      assert.strictEqual(
        read.fee,
        kids.reduce((sum, k) => sum + k.fee, 0)
      )
    }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext))
  )
})
