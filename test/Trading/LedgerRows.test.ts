import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import fc from "fast-check"
import { Context, Effect, Exit, Layer, Queue, Scope, TestContext } from "effect"
import { authLayer, serverServices, venuesLayer } from "../../src/Assembly.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { submitOrder } from "../../src/Orders.ts"
import { EngineMigrations } from "../../src/Persistence/migrations/engine.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { type Venue, type VenueEvent, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { Desk, renderFill } from "../../src/Trading/Desk.ts"
import { Journal } from "../../src/Trading/Journal.ts"
import { type Fill, Ledger, positionOfRow, positionRow } from "../../src/Trading/Ledger.ts"

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

/** A store that notes every method called on it, by name and first argument. */
const spying = (calls: Array<[string, unknown]>) =>
  Layer.effect(
    OrderStore,
    Effect.map(OrderStore, (inner) => {
      const out: Record<string, unknown> = {}
      for (const [name, value] of Object.entries(inner)) {
        out[name] =
          typeof value === "function"
            ? (...args: Array<unknown>) => {
                calls.push([name, args])
                return (value as (...a: Array<unknown>) => unknown)(...args)
              }
            : Effect.suspend(() => {
                calls.push([name, undefined])
                return value as Effect.Effect<unknown>
              })
      }
      return out as unknown as Context.Tag.Service<OrderStore>
    })
  )

/** One run of the server on a database file, on the venues given; the run ends with `use`. */
const life = <A>(
  file: string,
  venues: Layer.Layer<VenueGateway>,
  use: (context: Context.Context<any>) => Effect.Effect<A, unknown, any>,
  calls?: Array<[string, unknown]>
) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const inner = OrderStore.layerSql.pipe(Layer.provide(engineDatabase(file)))
    const store = calls === undefined ? inner : spying(calls).pipe(Layer.provide(inner))
    const context = yield* Layer.buildWithScope(
      serverServices({ seed: 5, store, auth: authLayer(":memory:"), venues }),
      scope
    )
    yield* settle
    const result = yield* Effect.exit(use(context).pipe(Effect.provide(context)))
    yield* settle
    yield* Scope.close(scope, Exit.void)
    return yield* result
  })

/** The desk's ledger as clients read it. */
const ledgerOf = Effect.gen(function* () {
  const desk = yield* Desk
  return {
    positions: (yield* desk.ledgerPositions).map(positionRow),
    balances: (yield* desk.balances(["sim:default"])).map((b) => [F.format(b.cash), F.format(b.locked)])
  }
})

describe("the ledger is stored with each fill", () => {
  it.effect(
    "a restart after many fills reads back the same positions and cash without reading a single fill",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "ledger-"))
        try {
          const file = join(dir, "engine.db")
          const venues = venuesLayer({ seed: 5 })
          const before = yield* life(file, venues, () =>
            Effect.gen(function* () {
              const sim = (yield* VenueGateway).venue("sim")!
              const open = (yield* sim.markets).filter((m) => m.status === "open").slice(0, 3)
              // Buys and sells across three markets, so positions open, close and flip sides.
              for (let i = 0; i < 90; i++) {
                const market = open[i % 3]!
                const side = i % 5 < 3 ? "buy" : "sell"
                yield* submitOrder(
                  {
                    market_id: `sim:${market.nativeId}`,
                    side,
                    type: "market",
                    amount: String(1 + (i % 4)),
                    price: side === "buy" ? "0.99" : "0.01"
                  },
                  "sim:default",
                  "t"
                )
              }
              const fills = yield* (yield* Desk).fills({})
              assert.isAbove(fills.length, 60)
              return yield* ledgerOf
            })
          )
          assert.isTrue(before.positions.some((p) => p.contracts !== "0"))
          const calls: Array<[string, unknown]> = []
          const after = yield* life(file, venues, () => ledgerOf, calls)
          assert.deepStrictEqual(after, before)
          // The start read the ledger rows, not the fills: no fill list, no walk of fill.new events.
          const readFills = calls.filter(
            ([name, args]) =>
              name === "listFills" || (name === "eventsAfter" && (args as ReadonlyArray<unknown>)[2] === "fill.new")
          )
          assert.deepStrictEqual(readFills, [])
          assert.isTrue(calls.some(([name]) => name === "ledgerRows"))
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )

  it("a ledger restored from its rows at any point goes on exactly as one that never stopped", () => {
    const fillArb = fc.record({
      market: fc.integer({ min: 0, max: 2 }),
      side: fc.constantFrom("buy" as const, "sell" as const),
      price: fc.integer({ min: 1, max: 99 }),
      amount: fc.integer({ min: 1, max: 20 }),
      fee: fc.integer({ min: 0, max: 3 })
    })
    fc.assert(
      fc.property(fc.array(fillArb, { maxLength: 60 }), fc.nat(), (specs, cut) => {
        const fills: Array<Fill> = specs.map((s, i) => ({
          id: `f${i}`,
          orderId: `o_${i}`,
          clientOrderId: `c${i}`,
          parentId: null,
          account: "sim:default",
          marketId: `sim:m${s.market}`,
          side: s.side,
          price: F.of(`0.${String(s.price).padStart(2, "0")}`),
          amount: F.fromInt(s.amount),
          fee: F.of(`0.0${s.fee}`),
          liquidity: "taker",
          tradeId: `t${i}`,
          book: "",
          ts: i
        }))
        const at = fills.length === 0 ? 0 : cut % (fills.length + 1)
        const whole = new Ledger(() => F.of("100"))
        for (const f of fills) whole.record(f)
        const first = new Ledger(() => F.of("100"))
        for (const f of fills.slice(0, at)) first.record(f)
        // What a fill's write stores, read back into a new ledger.
        const second = new Ledger(() => F.of("100"))
        for (const p of first.allPositions()) {
          second.restore(positionOfRow(p.account, p.marketId, JSON.parse(JSON.stringify(positionRow(p)))))
        }
        second.restoreCash("sim:default", F.of(F.format(first.cashMoved("sim:default"))))
        for (const f of fills.slice(at)) second.record(f)
        assert.deepStrictEqual(second.allPositions(), whole.allPositions())
        assert.strictEqual(second.cashOf("sim:default"), whole.cashOf("sim:default"))
      }),
      { seed: 16, numRuns: 300 }
    )
  })
})

/** The sim venue built once, outliving server runs, with its event stream replaced by one the test feeds. */
const lastingVenue = Effect.gen(function* () {
  const scope = yield* Scope.make()
  const built = yield* Layer.buildWithScope(venuesLayer({ seed: 5 }), scope)
  const sim = Context.get(built, VenueGateway).venue("sim")!
  const feed = yield* Queue.unbounded<VenueEvent>()
  const venue: Venue = { ...sim, subscribe: Effect.succeed(feed) }
  const gateway = (v: Venue) => Layer.succeed(VenueGateway, VenueGateway.fromVenues([v]))
  return {
    sim,
    feed,
    layer: gateway(venue),
    /** The process dies once the venue has taken a placement, before anything after the call runs. */
    diesAfterPlacing: gateway({
      ...venue,
      placeOrder: (request) => Effect.flatMap(sim.placeOrder(request), () => Effect.die(new Error("killed")))
    }),
    /** The process dies on the way to the venue: the venue never sees the placement. */
    diesBeforePlacing: gateway({ ...venue, placeOrder: () => Effect.die(new Error("killed")) }),
    scope
  }
})

describe("venue reports and placements across restarts", () => {
  it.effect(
    "a late fill on an order that finished before the restart is recorded once: fill, ledger and event",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "late-"))
        try {
          const file = join(dir, "engine.db")
          const venue = yield* lastingVenue
          const market = (yield* venue.sim.markets).find((m) => m.status === "open")!
          const marketId = `sim:${market.nativeId}`
          const canceled = yield* life(file, venue.layer, () =>
            Effect.gen(function* () {
              const desk = yield* Desk
              const { order } = yield* submitOrder(
                { market_id: marketId, side: "buy", type: "limit", amount: "3", price: "0.02", client_order_id: "x" },
                "sim:default",
                "t"
              )
              return yield* desk.cancel(order.id)
            })
          )
          assert.strictEqual(canceled.status, "canceled")
          const late: VenueEvent = {
            _tag: "Fill",
            fill: {
              tradeId: "late-1",
              venueOrderId: canceled.venueOrderId!,
              clientOrderId: canceled.id,
              nativeId: market.nativeId,
              side: "buy",
              price: F.of("0.02"),
              amount: F.of("2"),
              fee: F.ZERO,
              liquidity: "maker",
              ts: canceled.updatedAt + 1
            }
          }
          const seen = yield* life(file, venue.layer, () =>
            Effect.gen(function* () {
              const desk = yield* Desk
              // After a restart no finished order is held: the report must find it in the store.
              assert.deepStrictEqual(yield* desk.held, { live: 0, recent: 0 })
              yield* Queue.offer(venue.feed, late)
              yield* settle
              // The same report again (a venue resending) changes nothing.
              yield* Queue.offer(venue.feed, late)
              yield* settle
              const events = yield* (yield* Journal).after(0, 1000, "fill.new")
              return {
                order: (yield* desk.get(canceled.id))!,
                fills: yield* desk.fills({ orderId: canceled.id }),
                events: events.filter((e) => e.key === canceled.id).length,
                ledger: yield* ledgerOf
              }
            })
          )
          assert.strictEqual(seen.fills.length, 1)
          assert.strictEqual(seen.events, 1)
          assert.strictEqual(F.format(seen.order.filled), "2")
          assert.strictEqual(seen.order.status, "canceled")
          assert.deepStrictEqual(
            seen.ledger.positions.map((p) => p.contracts),
            ["2"]
          )
          // The ledger row was written with the fill: a further restart finds the position.
          const again = yield* life(file, venue.layer, () => ledgerOf)
          assert.deepStrictEqual(again, seen.ledger)
          yield* Scope.close(venue.scope, Exit.void)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )

  it.effect(
    "an order the venue took before the process died, with nothing written after, is accepted once at the restart",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "pending-"))
        try {
          const file = join(dir, "engine.db")
          const venue = yield* lastingVenue
          const market = (yield* venue.sim.markets).find((m) => m.status === "open")!
          const body = {
            market_id: `sim:${market.nativeId}`,
            side: "buy" as const,
            type: "limit" as const,
            amount: "2",
            price: "0.03",
            client_order_id: "p1"
          }
          const killed = yield* Effect.exit(
            life(file, venue.diesAfterPlacing, () => submitOrder(body, "sim:default", "t"))
          )
          assert.isTrue(Exit.isFailure(killed))
          const onVenue = yield* venue.sim.orderByClientId("o_000001")
          assert.isDefined(onVenue, "the venue holds the order")
          const seen = yield* life(file, venue.layer, () =>
            Effect.gen(function* () {
              const desk = yield* Desk
              const listed = yield* desk.list({})
              const retry = yield* submitOrder(body, "sim:default", "t")
              const events = yield* (yield* Journal).after(0, 1000)
              return { listed, retry, events, after: yield* desk.list({}) }
            })
          )
          assert.strictEqual(seen.listed.length, 1)
          const order = seen.listed[0]!
          assert.strictEqual(order.status, "open")
          assert.strictEqual(order.venueOrderId, onVenue!.venueOrderId)
          assert.strictEqual(order.info["reconciled"], true)
          // The retry with the same client id answers that order: placed once, accepted once.
          assert.isFalse(seen.retry.created)
          assert.strictEqual(seen.retry.order.id, order.id)
          assert.strictEqual(seen.after.length, 1)
          assert.strictEqual(seen.events.filter((e) => e.kind === "order.accepted").length, 1)
          yield* Scope.close(venue.scope, Exit.void)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )

  it.effect(
    "an order written ahead that the venue never took is removed at the restart, and a retry places it once",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "pending-"))
        try {
          const file = join(dir, "engine.db")
          const venue = yield* lastingVenue
          const market = (yield* venue.sim.markets).find((m) => m.status === "open")!
          const body = {
            market_id: `sim:${market.nativeId}`,
            side: "buy" as const,
            type: "limit" as const,
            amount: "2",
            price: "0.03",
            client_order_id: "p2"
          }
          const killed = yield* Effect.exit(
            life(file, venue.diesBeforePlacing, () => submitOrder(body, "sim:default", "t"))
          )
          assert.isTrue(Exit.isFailure(killed))
          // A start without that venue cannot tell whether it took the order: it stays pending, nothing is journaled.
          const unserved = yield* life(file, Layer.succeed(VenueGateway, VenueGateway.fromVenues([])), () =>
            Effect.gen(function* () {
              return { listed: yield* (yield* Desk).list({}), events: yield* (yield* Journal).after(0, 1000) }
            })
          )
          assert.deepStrictEqual(
            unserved.listed.map((o) => o.status),
            ["pending"]
          )
          assert.deepStrictEqual(unserved.events, [])
          const settled = yield* life(file, venue.layer, () =>
            Effect.gen(function* () {
              const listed = yield* (yield* Desk).list({})
              return { listed, events: yield* (yield* Journal).after(0, 1000) }
            })
          )
          // The retry comes at a later start still, when nothing stored holds the removed order's number.
          const seen = yield* life(file, venue.layer, () =>
            Effect.gen(function* () {
              const retry = yield* submitOrder(body, "sim:default", "t")
              return { ...settled, retry, after: yield* (yield* Desk).list({}) }
            })
          )
          assert.deepStrictEqual(seen.listed, [])
          assert.deepStrictEqual(
            seen.events.map((e) => e.kind),
            ["order.rejected"]
          )
          assert.isTrue(seen.retry.created)
          assert.strictEqual(seen.retry.order.status, "open")
          // The removed order's id stays its own in the journal: the retry is given the next one, never it again.
          assert.strictEqual(seen.events[0]!.key, "o_000001")
          assert.strictEqual(seen.retry.order.id, "o_000002")
          assert.strictEqual(seen.after.length, 1)
          yield* Scope.close(venue.scope, Exit.void)
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )
})

describe("a database of an older version", () => {
  it.effect(
    "gets its fills and ledger rows from its fill.new events once, then starts from the rows",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "upgrade-"))
        try {
          const file = join(dir, "engine.db")
          const fills: Array<Fill> = [
            ["buy", "0.40", "5"],
            ["sell", "0.55", "2"],
            ["sell", "0.70", "6"]
          ].map(([side, price, amount], i) => ({
            id: `sim:t${i}:v1`,
            orderId: "o_000001",
            clientOrderId: "o_000001",
            parentId: null,
            account: "sim:default",
            marketId: "sim:M",
            side: side as "buy" | "sell",
            price: F.of(price!),
            amount: F.of(amount!),
            fee: F.of("0.01"),
            liquidity: "taker",
            tradeId: `t${i}`,
            book: "",
            ts: 1000 + i
          }))
          // The schema an older version left, with its fills only as events.
          yield* Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            let seq = 0
            for (const fill of fills) {
              seq += 1
              yield* sql`INSERT INTO journal (seq, ts, kind, key, payload)
                VALUES (${seq}, ${fill.ts}, 'fill.new', ${fill.orderId}, ${JSON.stringify(renderFill(fill))})`
            }
          }).pipe(
            Effect.provide(
              SqliteMigrator.layer({
                loader: SqliteMigrator.fromRecord({
                  "0001_orders_and_journal": EngineMigrations["0001_orders_and_journal"],
                  "0002_settings": EngineMigrations["0002_settings"]
                })
              }).pipe(Layer.provideMerge(SqliteClient.layer({ filename: file })), Layer.provide(NodeContext.layer))
            ),
            Effect.orDie
          )
          const expected = new Ledger(() => F.of("10000"))
          for (const fill of fills) expected.record(fill)
          const venues = venuesLayer({ seed: 5 })
          const first = yield* life(file, venues, () => ledgerOf)
          assert.deepStrictEqual(first.positions, expected.allPositions().map(positionRow))
          assert.strictEqual(first.balances[0]![0], F.format(expected.cashOf("sim:default")))
          const listed = yield* life(file, venues, () => Effect.flatMap(Desk, (d) => d.fills({})))
          assert.deepStrictEqual(
            listed.map((f) => f.id),
            fills.map((f) => f.id).reverse()
          )
          // The second start reads the rows the first one wrote: no fill is read again.
          const calls: Array<[string, unknown]> = []
          const second = yield* life(file, venues, () => ledgerOf, calls)
          assert.deepStrictEqual(second, first)
          assert.isFalse(calls.some(([name]) => name === "listFills"))
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )
})
