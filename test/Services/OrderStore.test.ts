import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore, type StoredOrder } from "../../src/Services/OrderStore.ts"
import { storeOnFile } from "./StoreFiles.ts"

const order = (id: string, status: string, clientOrderId = `c-${id}`): StoredOrder => ({
  id,
  account: "sim:default",
  clientOrderId,
  venue: "sim",
  marketId: "sim:M",
  status,
  parentId: null,
  book: "",
  createdAt: 1,
  updatedAt: 2,
  record: { id, status, price: "0.35" }
})

const layers = {
  memory: OrderStore.layerMemory,
  sqlite: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
  // On a file, writes go through the engine database's own writing connection.
  "sqlite file": storeOnFile()
}

for (const [name, layer] of Object.entries(layers)) {
  describe(`OrderStore (${name})`, () => {
    it.effect("the journal gives strictly increasing seqs with no gap, and reads back in order", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        assert.strictEqual(yield* store.lastSeq, 0)
        const a = yield* store.write({
          entries: [
            { ts: 5, kind: "order.accepted", key: "o1", payload: { x: 1 } },
            { ts: 5, kind: "fill.new", key: "o1", payload: { price: "0.35" } }
          ]
        })
        const b = yield* store.write({ entries: [{ ts: 6, kind: "order.canceled", key: "o1", payload: null }] })
        assert.deepStrictEqual(
          [...a, ...b].map((e) => e.seq),
          [1, 2, 3]
        )
        assert.strictEqual(yield* store.lastSeq, 3)
        const after1 = yield* store.eventsAfter(1, 10)
        assert.deepStrictEqual(
          after1.map((e) => e.kind),
          ["fill.new", "order.canceled"]
        )
        assert.deepStrictEqual(after1[0]!.payload, { price: "0.35" })
        assert.strictEqual((yield* store.eventsAfter(0, 1)).length, 1)
        // Only one kind, as a reader of one kind of event asks.
        assert.deepStrictEqual(
          (yield* store.eventsAfter(0, 10, "fill.new")).map((e) => e.seq),
          [2]
        )
        assert.deepStrictEqual(yield* store.eventsAfter(2, 10, "fill.new"), [])
      }).pipe(Effect.provide(layer))
    )

    it.effect("orders are kept by id and by client order id, and updated in place", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        yield* store.write({ orders: [order("o1", "open")] })
        yield* store.write({ orders: [order("o2", "closed")] })
        yield* store.write({ orders: [{ ...order("o1", "canceled"), updatedAt: 9 }] })
        const o1 = yield* store.getOrder("o1")
        assert.strictEqual(o1?.status, "canceled")
        assert.strictEqual(o1?.updatedAt, 9)
        assert.deepStrictEqual(o1?.record, { id: "o1", status: "canceled", price: "0.35" })
        assert.strictEqual((yield* store.orderByClientId("sim:default", "c-o2"))?.id, "o2")
        assert.isUndefined(yield* store.orderByClientId("sim:other", "c-o2"))
        assert.strictEqual(yield* store.countOrders(["canceled", "closed"]), 2)
        assert.strictEqual(yield* store.countOrders(["open"]), 0)
      }).pipe(Effect.provide(layer))
    )

    it.effect("live parents are restored in id order; finished ones are not", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        yield* store.write({ parents: [{ id: "mo_2", live: true, state: { level: "0.4" }, updatedAt: 1 }] })
        yield* store.write({ parents: [{ id: "mo_1", live: true, state: { level: "0.3" }, updatedAt: 1 }] })
        yield* store.write({ parents: [{ id: "mo_3", live: true, state: {}, updatedAt: 1 }] })
        yield* store.write({ parents: [{ id: "mo_3", live: false, state: { done: true }, updatedAt: 2 }] })
        const live = yield* store.liveParents
        assert.deepStrictEqual(
          live.map((p) => p.id),
          ["mo_1", "mo_2"]
        )
        assert.deepStrictEqual(live[0]!.state, { level: "0.3" })
        assert.strictEqual(yield* store.countLiveParents, 2)
      }).pipe(Effect.provide(layer))
    )

    it.effect("at start, a live parent with a summary comes without its state where the store reads it later", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        const summarize = (state: unknown) => ((state as { quiet: boolean }).quiet ? "quiet" : null)
        yield* store.write({
          parents: [
            { id: "mo_2", live: true, state: { quiet: true, n: 2 }, updatedAt: 1, summarize },
            { id: "mo_1", live: true, state: { quiet: false, n: 1 }, updatedAt: 3, summarize },
            { id: "mo_3", live: true, state: { quiet: true, n: 3 }, updatedAt: 1, summarize }
          ]
        })
        // Finished: no longer started, whatever its summary.
        yield* store.write({ parents: [{ id: "mo_3", live: false, state: { quiet: true }, updatedAt: 2, summarize }] })
        const started = yield* store.startParents
        assert.deepStrictEqual(
          started.map((p) => p.id),
          ["mo_1", "mo_2"]
        )
        assert.deepStrictEqual(started[0], {
          id: "mo_1",
          summary: name === "memory" ? undefined : null,
          state: { quiet: false, n: 1 },
          updatedAt: 3
        })
        // A file's store reads a summarized state later, one by one; the others give it now.
        if (name === "sqlite file") assert.deepStrictEqual(started[1], { id: "mo_2", summary: "quiet" })
        else assert.deepStrictEqual(started[1]!.state, { quiet: true, n: 2 })
        const later = store.parentState("mo_2")
        if (name !== "sqlite") assert.deepStrictEqual(later?.state, { quiet: true, n: 2 })
        assert.isUndefined(store.parentState("mo_9"))
      }).pipe(Effect.provide(layer))
    )

    it.effect(
      "at start, live orders are read whole and named or open engine parents by their heads, oldest first",
      () =>
        Effect.gen(function* () {
          const store = yield* OrderStore
          const at = (o: StoredOrder, createdAt: number) => ({ ...o, createdAt })
          yield* store.write({
            orders: [
              at({ ...order("mo_000003", "waiting"), record: { id: "mo_000003", digest: "d-3" } }, 3),
              at(order("o_000002", "open"), 2),
              at(order("o_000004", "closed"), 4),
              at(order("mo_000001", "pending_cancel"), 1),
              at(order("mo_000005", "canceled"), 5),
              // An id that only looks like a parent's to a pattern with wildcards.
              at(order("mox000006", "open"), 6),
              // Parents without a client id of their own: filed when open, not read when waiting.
              at(order("mo_000007", "pending_cancel", "mo_000007"), 7),
              at(order("mo_000009", "waiting", "mo_000009"), 9),
              at(order("o_000011", "filled"), 11)
            ]
          })
          const statuses = ["open", "pending_cancel", "waiting"]
          assert.deepStrictEqual(
            (yield* store.ordersWithStatus(statuses)).map((o) => o.id),
            ["o_000002", "mox000006"]
          )
          assert.deepStrictEqual(yield* store.parentHeads(statuses, ["open", "pending_cancel"]), [
            {
              id: "mo_000001",
              account: "sim:default",
              clientOrderId: "c-mo_000001",
              status: "pending_cancel",
              digest: undefined
            },
            { id: "mo_000003", account: "sim:default", clientOrderId: "c-mo_000003", status: "waiting", digest: "d-3" },
            {
              id: "mo_000007",
              account: "sim:default",
              clientOrderId: "mo_000007",
              status: "pending_cancel",
              digest: undefined
            }
          ])
          // The highest number counts every order of those statuses, parents read or not, and no other.
          assert.strictEqual(yield* store.highestNumber(statuses), 9)
          assert.strictEqual(yield* store.highestNumber(["closed"]), 4)
          assert.strictEqual(yield* store.highestNumber(["expired"]), 0)
        }).pipe(Effect.provide(layer))
    )

    it.effect("writeNow stores what write would, in the same seqs, where the store can write at once", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        // From here on the store knows its last seq.
        yield* store.write({ entries: [{ ts: 1, kind: "order.accepted", key: "o0", payload: null }] })
        const now = store.writeNow({
          orders: [order("o1", "open")],
          entries: [{ ts: 2, kind: "order.accepted", key: "o1", payload: { n: 1 } }]
        })
        if (name === "sqlite") {
          // An in-memory SQLite database has no writing connection of its own: `write` is the way.
          assert.isUndefined(now)
          return
        }
        assert.deepStrictEqual(
          now!.map((e) => [e.seq, e.key]),
          [[2, "o1"]]
        )
        assert.strictEqual((yield* store.getOrder("o1"))?.status, "open")
        assert.deepStrictEqual((yield* store.eventsAfter(1, 10))[0]!.payload, { n: 1 })
        if (name === "sqlite file") {
          // A batch the database refuses throws and leaves nothing of itself; the seqs go on from the last stored.
          assert.throws(() =>
            store.writeNow({
              orders: [order("o2", "open", "c-o1")],
              entries: [{ ts: 3, kind: "order.accepted", key: "o2", payload: null }]
            })
          )
          assert.isUndefined(yield* store.getOrder("o2"))
        }
        const next = yield* store.write({ entries: [{ ts: 4, kind: "order.canceled", key: "o1", payload: null }] })
        assert.deepStrictEqual(
          next.map((e) => e.seq),
          [3]
        )
      }).pipe(Effect.provide(layer))
    )

    it.effect("a lookup by client id and a fill's check answer the same before the first write and after it", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        // Before anything is written (on a file, before the writing connection is open).
        assert.isUndefined(yield* store.orderByClientId("sim:default", "c-o1"))
        assert.isFalse(yield* store.hasFill("sim:t1:v1"))
        yield* store.write({
          orders: [order("o1", "open")],
          fills: [
            {
              fill: {
                id: "sim:t1:v1",
                account: "sim:default",
                marketId: "sim:M",
                orderId: "o1",
                book: "",
                ts: 3,
                record: { id: "sim:t1:v1" }
              },
              entry: 0
            }
          ],
          entries: [{ ts: 3, kind: "fill.new", key: "o1", payload: { id: "sim:t1:v1" } }]
        })
        // After it (on a file, on the writing connection): the whole stored order, as the order's own read gives it.
        assert.deepStrictEqual(yield* store.orderByClientId("sim:default", "c-o1"), yield* store.getOrder("o1"))
        assert.deepStrictEqual((yield* store.orderByClientId("sim:default", "c-o1"))?.record, {
          id: "o1",
          status: "open",
          price: "0.35"
        })
        assert.isUndefined(yield* store.orderByClientId("sim:default", "c-o9"))
        assert.isTrue(yield* store.hasFill("sim:t1:v1"))
        assert.isFalse(yield* store.hasFill("sim:t2:v1"))
      }).pipe(Effect.provide(layer))
    )

    it.effect("a batch is stored whole or not at all", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        yield* store.write({ orders: [order("o1", "open", "dup")] })
        // The second order reuses a client id: the batch fails, and none of it is stored.
        const failed = yield* Effect.exit(
          store.write({
            parents: [{ id: "mo_1", live: true, state: {}, updatedAt: 1 }],
            orders: [order("o3", "open"), order("o2", "open", "dup")],
            entries: [{ ts: 1, kind: "order.accepted", key: "o2", payload: null }]
          })
        )
        if (name === "sqlite") {
          assert.isTrue(Exit.isFailure(failed))
          assert.isUndefined(yield* store.getOrder("o3"))
          assert.deepStrictEqual(yield* store.liveParents, [])
          assert.strictEqual(yield* store.lastSeq, 0)
        }
        const events = yield* store.write({
          orders: [order("o4", "open")],
          entries: [{ ts: 2, kind: "order.accepted", key: "o4", payload: null }]
        })
        assert.deepStrictEqual(
          events.map((e) => e.seq),
          [yield* store.lastSeq]
        )
        assert.strictEqual((yield* store.getOrder("o4"))?.status, "open")
      }).pipe(Effect.provide(layer))
    )
  })
}
