import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { SqlClient } from "@effect/sql"
import { Context, Effect, Exit, Layer, Scope, TestContext } from "effect"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { type OrderRequest, submitOrder } from "../../src/Orders.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { type Fill, Ledger, type Position, positionOfRow } from "../../src/Trading/Ledger.ts"

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

/** Every method of the store that writes, whatever the seam calls them. */
const WRITES = ["write", "append", "putOrder", "putParent", "putSetting"]

/** The store of a process that is killed once `alive` writes have been committed: every later write dies. */
const dying = (alive: number, count: { n: number }) =>
  Layer.effect(
    OrderStore,
    Effect.map(OrderStore, (inner) => {
      const out: Record<string, unknown> = { ...inner }
      for (const name of WRITES) {
        const write = (inner as unknown as Record<string, unknown>)[name]
        if (typeof write !== "function") continue
        out[name] = (...args: Array<unknown>) =>
          Effect.suspend(() => {
            count.n += 1
            return count.n > alive
              ? Effect.die(new Error("killed"))
              : (write as (...a: Array<unknown>) => Effect.Effect<unknown>)(...args)
          })
      }
      // The synchronous write, where the store can do one: counted only when it wrote (else `write` comes next).
      const writeNow = (inner as unknown as Record<string, unknown>)["writeNow"]
      if (typeof writeNow === "function") {
        out["writeNow"] = (batch: unknown) => {
          if (count.n >= alive) {
            count.n += 1
            throw new Error("killed")
          }
          const written = (writeNow as (b: unknown) => unknown)(batch)
          if (written !== undefined) count.n += 1
          return written
        }
      }
      return out as unknown as Context.Tag.Service<OrderStore>
    })
  )

/** One run of the server on the database file, with `use` given its services; the scope ends with the run. */
const life = <A>(
  file: string,
  store: (inner: Layer.Layer<OrderStore>) => Layer.Layer<OrderStore>,
  use: (context: Context.Context<any>) => Effect.Effect<A, unknown, any>
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const database = engineDatabase(file)
    const inner = OrderStore.layerSql.pipe(Layer.provide(database))
    const context = yield* Layer.buildWithScope(
      Layer.merge(serverServices({ seed: 3, store: store(inner), auth: authLayer(":memory:") }), database),
      scope
    )
    yield* settle
    const result = yield* Effect.exit(use(context).pipe(Effect.provide(context)))
    yield* settle
    yield* Scope.close(scope, Exit.void)
    return result
  })

/** What a restart finds on the database, checked against what must hold whatever write the kill came after. */
const inspect = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const orders = yield* sql<{ id: string; client_order_id: string; record: string }>`SELECT * FROM orders`
  const parents = yield* sql<{ id: string }>`SELECT id FROM parents`
  const journal = yield* sql<{ kind: string; key: string; payload: string }>`SELECT * FROM journal ORDER BY seq`
  const events = journal.map((e) => ({ ...e, payload: JSON.parse(e.payload) }))
  const problems: Array<string> = []
  for (const row of orders) {
    const record = JSON.parse(row.record)
    const mine = events.filter((e) => e.key === row.id)
    if (!mine.some((e) => e.kind === "order.accepted")) problems.push(`${row.id} is stored without order.accepted`)
    const last = mine.filter((e) => e.kind.startsWith("order.")).at(-1)
    if (last !== undefined && last.payload.status !== record.status) {
      problems.push(`${row.id} is stored ${record.status}; its last event says ${last.payload.status}`)
    }
    const filled = mine.filter((e) => e.kind === "fill.new").reduce((sum, e) => sum + Number(e.payload.amount), 0)
    if (record.held_by !== "engine" && record.heldBy !== "engine" && filled !== Number(record.filled) / 1e6) {
      problems.push(`${row.id} has filled ${record.filled} (millionths) and fill events for ${filled}`)
    }
    if (row.id.startsWith("mo_")) {
      if (!parents.some((p) => p.id === row.id)) problems.push(`${row.id} has its record without its state`)
      if (!mine.some((e) => e.kind === "managed.created")) problems.push(`${row.id} is stored without managed.created`)
    }
  }
  for (const p of parents) {
    if (!orders.some((o) => o.id === p.id)) problems.push(`${p.id} has its state without its record`)
  }
  // Each fill is stored with its fill.new event and the ledger rows it leaves, never one without the others.
  const fills = yield* sql<{ seq: number; id: string; record: string }>`SELECT seq, id, record FROM fills ORDER BY seq`
  const fillEvents = journal.filter((e) => e.kind === "fill.new")
  const seqs = (yield* sql<{ seq: number }>`SELECT seq FROM journal WHERE kind = 'fill.new' ORDER BY seq`).map(
    (r) => r.seq
  )
  assert.strictEqual(fillEvents.length, seqs.length)
  if (JSON.stringify(fills.map((f) => f.seq)) !== JSON.stringify(seqs)) {
    problems.push(`fill rows at seqs ${fills.map((f) => f.seq)}, fill.new events at ${seqs}`)
  }
  const ledger = new Ledger(() => F.ZERO)
  for (const f of fills) ledger.record(parseStoredFill(JSON.parse(f.record)))
  const rows = yield* sql<{ account: string; market_id: string; value: string }>`SELECT * FROM positions`
  const stored = rows.map((r) => positionOfRow(r.account, r.market_id, JSON.parse(r.value)))
  if (JSON.stringify(sortPositions(stored)) !== JSON.stringify(sortPositions(ledger.allPositions()))) {
    problems.push("the position rows are not what the stored fills add up to")
  }
  const cash = yield* sql<{ account: string; cash_moved: string }>`SELECT * FROM balances`
  for (const account of new Set(ledger.allPositions().map((p) => p.account))) {
    const row = cash.find((c) => c.account === account)
    if (row?.cash_moved !== F.format(ledger.cashMoved(account))) {
      problems.push(`${account}'s cash row says ${row?.cash_moved}, its fills ${F.format(ledger.cashMoved(account))}`)
    }
  }
  for (const e of events) {
    if (e.kind.startsWith("order.") && e.kind !== "order.rejected" && !orders.some((o) => o.id === e.key)) {
      problems.push(`${e.kind} of ${e.key} without the order`)
    }
  }
  return { problems, orders, events }
})

const sortPositions = (ps: ReadonlyArray<Position>) =>
  [...ps].sort((a, b) => (`${a.account} ${a.marketId}` < `${b.account} ${b.marketId}` ? -1 : 1))

/** A fill's stored record (the API's form) as the ledger takes it. */
const parseStoredFill = (r: Record<string, any>): Fill => ({
  id: r.id,
  orderId: r.order_id,
  clientOrderId: r.client_order_id,
  parentId: r.parent_id,
  account: r.account,
  marketId: r.market_id,
  side: r.side,
  price: F.of(r.price),
  amount: F.of(r.amount),
  fee: F.of(r.fee),
  liquidity: r.liquidity,
  tradeId: r.trade_id,
  book: r.book,
  ts: r.ts
})

const placements = (marketId: string, bid: string, ask: string): ReadonlyArray<[string, OrderRequest]> => [
  ["a resting limit", { market_id: marketId, side: "buy", type: "limit", amount: "2", price: bid }],
  ["a market order that fills", { market_id: marketId, side: "buy", type: "market", amount: "2", price: "0.99" }],
  ["a stop that waits", { market_id: marketId, side: "sell", type: "stop_market", amount: "2", stop_price: "0.01" }],
  [
    "a stop that fires at once",
    { market_id: marketId, side: "sell", type: "stop_market", amount: "2", stop_price: bid }
  ],
  [
    "a twap whose first slice goes out",
    { market_id: marketId, side: "buy", type: "twap", amount: "4", price: ask, params: { window_s: 60, slices: 2 } }
  ]
]

describe("a kill between any two writes of a placement", () => {
  it.effect(
    "leaves nothing of the order or the order with its events, and a retry places it exactly once",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "kill-"))
        try {
          let round = 0
          const market = yield* life(
            join(dir, "probe.db"),
            (s) => s,
            () =>
              Effect.gen(function* () {
                const sim = (yield* VenueGateway).venue("sim")!
                const m = (yield* sim.markets).find((x) => x.status === "open")!
                const book = yield* sim.book(m.nativeId)
                const format = (p: number) => String(p / 1e6)
                return { id: `sim:${m.nativeId}`, bid: format(book.bids[0]!.price), ask: format(book.asks[0]!.price) }
              })
          )
          assert.isTrue(Exit.isSuccess(market))
          const { id, bid, ask } = (market as Exit.Success<{ id: string; bid: string; ask: string }, never>).value
          let killsTried = 0
          for (const [name, body] of placements(id, bid, ask)) {
            const request = { ...body, client_order_id: "c1" }
            const place = submitOrder(request, "sim:default", "test")
            // How many writes the whole placement makes, uninterrupted.
            const counted = { n: 0 }
            yield* life(
              join(dir, `count-${round++}.db`),
              (s) => dying(Infinity, counted).pipe(Layer.provide(s)),
              () => place
            )
            assert.isAbove(counted.n, 0, name)
            for (let alive = 0; alive < counted.n; alive++) {
              killsTried += 1
              const file = join(dir, `kill-${round++}.db`)
              yield* life(
                file,
                (s) => dying(alive, { n: 0 }).pipe(Layer.provide(s)),
                () => place
              )
              const after = yield* life(
                file,
                (s) => s,
                () =>
                  Effect.gen(function* () {
                    const found = yield* inspect
                    const retry = yield* Effect.either(place)
                    yield* settle
                    const again = yield* inspect
                    return { found, retry, again }
                  })
              )
              assert.isTrue(Exit.isSuccess(after), `${name}, killed after ${alive} writes: the restart runs`)
              const { found, retry, again } = (after as Exit.Success<any, never>).value
              assert.deepStrictEqual(found.problems, [], `${name}, killed after ${alive} writes`)
              assert.strictEqual(retry._tag, "Right", `${name}, killed after ${alive} writes: the retry is answered`)
              assert.deepStrictEqual(again.problems, [], `${name}, killed after ${alive} writes, then retried`)
              const placed = again.orders.filter((o: any) => o.client_order_id === "c1")
              assert.strictEqual(placed.length, 1, `${name}, killed after ${alive} writes: one order`)
              const accepted = again.events.filter((e: any) => e.kind === "order.accepted" && e.key === placed[0].id)
              assert.strictEqual(accepted.length, 1, `${name}, killed after ${alive} writes: accepted once`)
            }
          }
          assert.isAbove(killsTried, 10)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    120_000
  )
})
