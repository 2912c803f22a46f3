import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Effect, Layer } from "effect"
import { orderNumber } from "../../src/Domain/Order.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore, type StoredOrder } from "../../src/Services/OrderStore.ts"

const layers = {
  memory: () => OrderStore.layerMemory,
  sqlite: () => OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:")))
}

const STATUSES = ["pending", "open", "closed", "canceled"]
const ACCOUNTS = ["sim:default", "sim:other"]
const MARKETS = ["sim:A", "sim:B"]

const orderArb = fc.record({
  createdAt: fc.integer({ min: 1, max: 4 }),
  status: fc.constantFrom(...STATUSES),
  account: fc.constantFrom(...ACCOUNTS),
  marketId: fc.constantFrom(...MARKETS),
  parent: fc.boolean()
})

const queryArb = fc.record({
  statuses: fc.option(fc.subarray(STATUSES, { minLength: 1 }), { nil: undefined }),
  accounts: fc.option(fc.subarray(ACCOUNTS, { minLength: 1 }), { nil: undefined }),
  marketId: fc.option(fc.constantFrom(...MARKETS), { nil: undefined }),
  limit: fc.integer({ min: 1, max: 7 })
})

const run = <A>(layer: Layer.Layer<OrderStore>, effect: Effect.Effect<A, never, OrderStore>) =>
  Effect.runSync(effect.pipe(Effect.provide(layer)))

for (const [name, layer] of Object.entries(layers)) {
  describe(`OrderStore pages (${name})`, () => {
    it("an order list read page by page after each page's last order is the whole list, newest first", () => {
      fc.assert(
        fc.property(fc.array(orderArb, { maxLength: 30 }), queryArb, (specs, q) => {
          // Ids share one counter and one order number may pass 999999, as the desk's do.
          const orders: Array<StoredOrder> = specs.map((s, i) => {
            const num = i % 3 === 0 ? 999_990 + i : i + 1
            const id = s.parent ? `mo_${String(num).padStart(6, "0")}` : `o_${String(num).padStart(6, "0")}`
            return {
              id,
              account: s.account,
              clientOrderId: `c${i}`,
              venue: "sim",
              marketId: s.marketId,
              status: s.status,
              parentId: null,
              book: "",
              createdAt: s.createdAt,
              updatedAt: s.createdAt,
              venueOrderId: null,
              record: { id }
            }
          })
          const expected = orders
            .filter(
              (o) =>
                (q.statuses === undefined || q.statuses.includes(o.status)) &&
                (q.accounts === undefined || q.accounts.includes(o.account)) &&
                (q.marketId === undefined || o.marketId === q.marketId)
            )
            .sort((a, b) => b.createdAt - a.createdAt || orderNumber(b.id) - orderNumber(a.id))
            .map((o) => o.id)
          const pages = run(
            layer(),
            Effect.gen(function* () {
              const store = yield* OrderStore
              if (orders.length > 0) yield* store.write({ orders })
              const out: Array<Array<string>> = []
              let after: { createdAt: number; num: number } | undefined
              for (;;) {
                const page = yield* store.listOrders({ ...q, after, limit: q.limit })
                if (page.length === 0) break
                out.push(page.map((o) => o.id))
                const last = page[page.length - 1]!
                after = { createdAt: last.createdAt, num: orderNumber(last.id) }
              }
              return out
            })
          )
          assert.isTrue(pages.every((p) => p.length <= q.limit))
          assert.deepStrictEqual(pages.flat(), expected)
        }),
        { seed: 16, numRuns: 60 }
      )
    })

    it("fills page newest first by time then seq, and each (account, market) knows the books it was filled under", () => {
      fc.assert(
        fc.property(
          fc.array(
            fc.record({
              ts: fc.integer({ min: 1, max: 4 }),
              account: fc.constantFrom(...ACCOUNTS),
              book: fc.constantFrom("", "alpha")
            }),
            { maxLength: 25 }
          ),
          fc.integer({ min: 1, max: 6 }),
          (specs, limit) => {
            const result = run(
              layer(),
              Effect.gen(function* () {
                const store = yield* OrderStore
                const seqs: Array<number> = []
                for (const [i, s] of specs.entries()) {
                  const fill = {
                    id: `f${i}`,
                    account: s.account,
                    marketId: "sim:A",
                    orderId: `o_${i}`,
                    book: s.book,
                    ts: s.ts,
                    record: { id: `f${i}` }
                  }
                  const [event] = yield* store.write({
                    entries: [{ ts: s.ts, kind: "fill.new", key: `o_${i}`, payload: fill.record }],
                    fills: [{ fill, entry: 0 }]
                  })
                  seqs.push(event!.seq)
                }
                const pages: Array<Array<string>> = []
                let after: { ts: number; seq: number } | undefined
                for (;;) {
                  const page = yield* store.listFills({ accounts: ["sim:default"], after, limit })
                  if (page.length === 0) break
                  pages.push(page.map((f) => f.id))
                  after = { ts: page[page.length - 1]!.ts, seq: page[page.length - 1]!.seq }
                }
                return {
                  seqs,
                  pages,
                  has: yield* store.hasFill("f0"),
                  books: yield* store.fillBooks(["sim:default"])
                }
              })
            )
            const mine = specs
              .map((s, i) => ({ ...s, id: `f${i}`, seq: result.seqs[i]! }))
              .filter((f) => f.account === "sim:default")
            const expected = [...mine].sort((a, b) => b.ts - a.ts || b.seq - a.seq)
            assert.deepStrictEqual(
              result.pages.flat(),
              expected.map((f) => f.id)
            )
            assert.strictEqual(result.has, specs.length > 0)
            // The most recently filled book first, once each.
            const books = [...new Set([...mine].reverse().map((f) => f.book))]
            assert.deepStrictEqual(
              result.books.map((b) => b.book),
              books
            )
          }
        ),
        { seed: 16, numRuns: 60 }
      )
    })

    it.effect("an order is found by its venue id once the venue took it, whatever its status", () =>
      Effect.gen(function* () {
        const store = yield* OrderStore
        const base: StoredOrder = {
          id: "o_000001",
          account: "sim:default",
          clientOrderId: "c",
          venue: "sim",
          marketId: "sim:A",
          status: "pending",
          parentId: null,
          book: "",
          createdAt: 1,
          updatedAt: 1,
          venueOrderId: null,
          record: { id: "o_000001" }
        }
        yield* store.write({ orders: [base] })
        assert.isUndefined(yield* store.orderByVenueOrderId("sim", "v-9"))
        yield* store.write({ orders: [{ ...base, status: "canceled", updatedAt: 2, venueOrderId: "v-9" }] })
        assert.strictEqual((yield* store.orderByVenueOrderId("sim", "v-9"))?.status, "canceled")
        assert.isUndefined(yield* store.orderByVenueOrderId("other", "v-9"))
        // An order written ahead and removed leaves nothing behind, its client id free again.
        yield* store.write({ orders: [{ ...base, id: "o_000002", clientOrderId: "d" }] })
        yield* store.write({ removeOrders: ["o_000002"] })
        assert.isUndefined(yield* store.getOrder("o_000002"))
        assert.isUndefined(yield* store.orderByClientId("sim:default", "d"))
      }).pipe(Effect.provide(layer()))
    )
  })
}
