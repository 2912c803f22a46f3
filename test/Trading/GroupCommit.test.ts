/** The journal's group commit: batches queued together share one write, in order, each answered once it commits. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Fiber, Layer } from "effect"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { type Batch, OrderStore, type StoredOrder } from "../../src/Services/OrderStore.ts"
import { Journal } from "../../src/Trading/Journal.ts"
import { storeOnFile } from "../Services/StoreFiles.ts"

const order = (id: string, status = "pending"): StoredOrder => ({
  id,
  account: "sim:default",
  clientOrderId: id,
  venue: "sim",
  marketId: "sim:m",
  status,
  parentId: null,
  book: "",
  createdAt: 1,
  updatedAt: 1,
  venueOrderId: null,
  record: { id, status }
})
const entry = (key: string, kind = "order.updated") => ({ ts: 1, kind, key, payload: { id: key } })

const stores = {
  // Every write goes through the store's Effect.
  "SQLite in memory": () => OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
  // Once the last seq is known, a group is written synchronously on the writing connection (`writeNow`).
  "SQLite on a file": storeOnFile
}

for (const [storeName, storeLayer] of Object.entries(stores)) {
  /** A journal on a SQLite store whose writes are counted, and made to fail while `failing` is set. */
  const journalWith = (gather: boolean) =>
    Effect.gen(function* () {
      const writes: Array<Batch> = []
      const control = { failing: false }
      const counted = Layer.effect(
        OrderStore,
        Effect.map(OrderStore, (inner) => ({
          ...inner,
          write: (batch: Batch) =>
            Effect.suspend(() => {
              writes.push(batch)
              return control.failing ? Effect.die(new Error("disk gone")) : inner.write(batch)
            }),
          writeNow: (batch: Batch) => {
            if (control.failing) throw new Error("disk gone")
            const written = inner.writeNow(batch)
            if (written !== undefined) writes.push(batch)
            return written
          }
        }))
      ).pipe(Layer.provide(storeLayer()))
      const context = yield* Layer.build(Layer.provideMerge(Journal.layerWith({ gather }), counted))
      return { journal: Context.get(context, Journal), store: Context.get(context, OrderStore), writes, control }
    })

  describe(`group commit (${storeName})`, () => {
    it.scoped("batches queued together go out in one write, in queue order, and the store holds all of them", () =>
      Effect.gen(function* () {
        const { journal, store, writes } = yield* journalWith(true)
        yield* journal.enqueue({ orders: [order("o_1", "open")], entries: [entry("o_1")] })
        yield* journal.enqueue({ entries: [entry("x", "risk.rejected")] })
        yield* journal.enqueue({ orders: [order("o_2", "open")], entries: [entry("o_2"), entry("o_2", "fill.new")] })
        assert.strictEqual(writes.length, 0, "queued, not written")
        yield* journal.flushed
        assert.strictEqual(writes.length, 1, "one write for the three")
        const events = yield* store.eventsAfter(0, 100)
        assert.deepStrictEqual(
          events.map((e) => [e.seq, e.key, e.kind]),
          [
            [1, "o_1", "order.updated"],
            [2, "x", "risk.rejected"],
            [3, "o_2", "order.updated"],
            [4, "o_2", "fill.new"]
          ]
        )
        assert.strictEqual((yield* store.getOrder("o_2"))?.status, "open")
      })
    )

    it.scoped("a commit after queued batches writes them with it and answers with its own events only", () =>
      Effect.gen(function* () {
        const { journal, writes } = yield* journalWith(true)
        yield* journal.enqueue({ orders: [order("o_1")], entries: [entry("o_1")] })
        const mine = yield* journal.commit({ orders: [order("o_2")], entries: [entry("o_2")] })
        assert.strictEqual(writes.length, 1)
        assert.deepStrictEqual(
          mine.map((e) => [e.seq, e.key]),
          [[2, "o_2"]]
        )
      })
    )

    it.scoped("a batch that removes an order stored earlier in the queue is written after it, not merged", () =>
      Effect.gen(function* () {
        const { journal, store, writes } = yield* journalWith(true)
        yield* journal.enqueue({ orders: [order("o_1")] })
        yield* journal.enqueue({ removeOrders: ["o_1"], entries: [entry("o_1", "order.rejected")] })
        yield* journal.flushed
        assert.strictEqual(writes.length, 2)
        assert.isUndefined(yield* store.getOrder("o_1"), "the order is gone, as written in that order")
      })
    )

    it.scoped("a write that fails fails every caller of its group, and nothing of it is stored", () =>
      Effect.gen(function* () {
        const { control, journal, store } = yield* journalWith(true)
        control.failing = true
        yield* journal.enqueue({ orders: [order("o_1")], entries: [entry("o_1")] })
        const committing = yield* Effect.fork(journal.commit({ orders: [order("o_2")], entries: [entry("o_2")] }))
        const exit = yield* Fiber.await(committing)
        assert.isTrue(Exit.isFailure(exit))
        control.failing = false
        // A caller that queued nothing after the failure does not inherit it.
        assert.isTrue(Exit.isSuccess(yield* Effect.exit(journal.flushed)))
        assert.deepStrictEqual(yield* store.eventsAfter(0, 10), [])
        // The journal still writes afterwards.
        yield* journal.commit({ orders: [order("o_3")], entries: [entry("o_3")] })
        assert.deepStrictEqual(
          (yield* store.eventsAfter(0, 10)).map((e) => [e.seq, e.key]),
          [[1, "o_3"]]
        )
      })
    )

    it.scoped("a fill queued and not yet written is known, so a second report of it is not stored twice", () =>
      Effect.gen(function* () {
        const { journal } = yield* journalWith(false)
        const fill = {
          id: "f_1",
          account: "sim:default",
          marketId: "sim:m",
          orderId: "o_1",
          book: "",
          ts: 1,
          record: {}
        }
        yield* journal.enqueue({ fills: [{ fill, entry: 0 }], entries: [entry("o_1", "fill.new")] })
        assert.isTrue(journal.holdsFill("f_1"))
        yield* journal.flushed
        assert.isFalse(journal.holdsFill("f_1"), "written: the store answers for it now")
      })
    )
  })
}
