import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock, TestContext } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { authLayer, deskServices, serverServices, venuesLayer } from "../../src/Assembly.ts"
import { renderOrder } from "../../src/Domain/Order.ts"
import type { AccountRequest } from "../../src/Domain/OrderRequest.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { REGISTRY } from "../../src/Engine/Registry.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { Desk, renderFill } from "../../src/Trading/Desk.ts"
import { price } from "./Support.ts"
import { makeMarketId, type MarketId } from "../../src/Domain/Ids.ts"

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })
const run = (seconds: number) =>
  Effect.forEach(Array.from({ length: seconds }), () => Effect.zipRight(TestClock.adjust("1 second"), settle), {
    discard: true
  })

/** Parents of every type that are still working twenty seconds in. */
const parentsFor = (marketId: MarketId, bid: number, ask: number): ReadonlyArray<AccountRequest> =>
  [
    { type: "stop_market", side: "sell", amount: "3", stop_price: price(Math.max(1, bid - 2)), params: {} },
    {
      type: "stop_limit",
      side: "buy",
      amount: "3",
      stop_price: price(Math.min(99, ask + 2)),
      price: price(Math.min(99, ask + 4)),
      params: {}
    },
    { type: "trailing_stop", side: "sell", amount: "2", params: { trail: "0.03" } },
    {
      type: "iceberg",
      side: "buy",
      amount: "40",
      price: price(ask),
      params: { display: "3", reload_delay_s: 4, jitter_s: 2 }
    },
    {
      type: "oco",
      side: "buy",
      amount: "6",
      params: {
        legs: [
          { side: "buy", type: "limit", price: price(bid) },
          { side: "sell", type: "limit", price: price(Math.min(99, ask + 1)) }
        ]
      }
    },
    {
      type: "bracket",
      side: "buy",
      amount: "6",
      params: {
        entry: { price: price(bid) },
        take_profit: { price: price(Math.min(99, ask + 2)) },
        stop_loss: { stop_price: price(Math.max(1, bid - 3)) }
      }
    },
    { type: "twap", side: "buy", amount: "12", price: price(bid), params: { window_s: 60, slices: 6 } },
    { type: "peg", side: "buy", amount: "5", params: { reference: "near", min_stay_s: 5 } },
    {
      type: "smart_taker",
      side: "buy",
      amount: "30",
      params: { clip: "2", interval_s: 3, limit: price(ask), expires_s: 50 }
    }
  ].map((p) => ({ ...p, market_id: marketId, account: "sim:default" }) as AccountRequest)

/** A parent's stored state as an earlier version wrote it: its live children by number, not in a list. */
const childrenByNumber = (state: unknown) => {
  const rt = state as { children: ReadonlyArray<{ spec: { child: number } }> }
  return { ...rt, children: Object.fromEntries(rt.children.map((c) => [String(c.spec.child), c])) }
}

/**
 * The same parents over the same market for 80 s; with `restart` the driver stops and starts again at 20 s, finding
 * the stored states as `rewrite` leaves them.
 */
const scenario = (restart: boolean, rewrite?: (state: unknown) => unknown) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const base = yield* Layer.buildWithScope(
      deskServices({
        seed: 11,
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
        auth: authLayer(":memory:")
      }),
      scope
    )
    const startEngine = Effect.gen(function* () {
      const engineScope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(Engine.layer(REGISTRY), engineScope).pipe(Effect.provide(base))
      return { engine: Context.get(context, Engine), engineScope }
    })
    let started = yield* startEngine
    const desk = Context.get(base, Desk)
    const store = Context.get(base, OrderStore)
    const sim = Context.get(base, VenueGateway).venue("sim")!
    const market = (yield* sim.markets).find((m) => m.status === "open")!
    const book = yield* sim.book(market.nativeId)
    const bid = Math.round(book.bids[0]!.price / 10_000)
    const ask = Math.round(book.asks[0]!.price / 10_000)
    for (const input of parentsFor(makeMarketId("sim", market.nativeId), bid, ask)) {
      yield* started.engine.create(input, "test")
    }
    yield* run(20)
    const live = (yield* store.liveParents).length
    if (restart) {
      yield* Scope.close(started.engineScope, Exit.void)
      if (rewrite !== undefined) {
        const stored = yield* store.liveParents
        yield* store.write({ parents: stored.map((p) => ({ ...p, state: rewrite(p.state) })) })
      }
      started = yield* startEngine
    }
    yield* run(60)
    const orders = (yield* desk.list({})).map(renderOrder)
    const fills = (yield* desk.fills({})).map(renderFill)
    yield* Scope.close(started.engineScope, Exit.void)
    yield* Scope.close(scope, Exit.void)
    return { live, orders, fills }
  }).pipe(Effect.provide(TestContext.TestContext))

describe("restart", () => {
  it.effect("parents of every type restored mid-way reach the same orders and fills as an uninterrupted run", () =>
    Effect.gen(function* () {
      const straight = yield* scenario(false)
      const restarted = yield* scenario(true)
      assert.isAtLeast(straight.live, 5, "most parents are still working when the driver stops")
      assert.isAbove(straight.fills.length, 0)
      assert.deepStrictEqual(restarted.orders, straight.orders)
      assert.deepStrictEqual(restarted.fills, straight.fills)
      const types = new Set(straight.orders.filter((o) => o.held_by === "engine").map((o) => o.type))
      assert.strictEqual(types.size, 9)
    })
  )

  it.effect("parents whose state an earlier version wrote (children by number) restore to the same run", () =>
    Effect.gen(function* () {
      const straight = yield* scenario(false)
      const restarted = yield* scenario(true, childrenByNumber)
      assert.deepStrictEqual(restarted.orders, straight.orders)
      assert.deepStrictEqual(restarted.fills, straight.fills)
    })
  )
})

describe("the write before the commands go out", () => {
  it.effect("holds every child the core has sent, so a restart finds each one and can place it again", () =>
    Effect.gen(function* () {
      // At every write of a parent's state, each child its core has numbered must be among the parent's children,
      // unless it has finished (its order is terminal, or the parent is ending and never sent it).
      const missing: Array<string> = []
      let checked = 0
      const store = Layer.effect(
        OrderStore,
        Effect.map(OrderStore, (inner) => ({
          ...inner,
          // Every write goes through the check below (it reads the store on the way).
          writeNow: () => undefined,
          write: (batch: Parameters<typeof inner.write>[0]) =>
            Effect.gen(function* () {
              for (const parent of batch.parents ?? []) {
                const rt = JSON.parse(JSON.stringify(parent.state)) as {
                  state: { nextChild?: number; fired?: boolean }
                  children: Array<{ spec: { child: number } }>
                  ending: string | null
                }
                const sent = typeof rt.state.nextChild === "number" ? rt.state.nextChild - 1 : rt.state.fired ? 1 : 0
                for (let n = 1; n <= sent; n++) {
                  checked += 1
                  if (rt.children.some((c) => c.spec.child === n)) continue
                  const order = yield* inner.orderByClientId("sim:default", `${parent.id}-${n}`)
                  const finished =
                    order !== undefined && ["closed", "canceled", "expired", "rejected"].includes(order.status)
                  if (!finished && rt.ending === null) missing.push(`${parent.id}-${n}`)
                }
              }
              return yield* inner.write(batch)
            })
        }))
      ).pipe(Layer.provide(OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:")))))
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        Layer.provideMerge(Engine.layer(REGISTRY), deskServices({ seed: 11, store, auth: authLayer(":memory:") })),
        scope
      )
      const engine = Context.get(context, Engine)
      const sim = Context.get(context, VenueGateway).venue("sim")!
      const market = (yield* sim.markets).find((m) => m.status === "open")!
      const book = yield* sim.book(market.nativeId)
      const bid = Math.round(book.bids[0]!.price / 10_000)
      const ask = Math.round(book.asks[0]!.price / 10_000)
      for (const input of parentsFor(makeMarketId("sim", market.nativeId), bid, ask))
        yield* engine.create(input, "test")
      yield* run(40)
      yield* Scope.close(scope, Exit.void)
      assert.isAbove(checked, 100)
      assert.deepStrictEqual(missing, [])
    }).pipe(Effect.provide(TestContext.TestContext))
  )
})

describe("a working parent's info after a restart", () => {
  it.effect("reads as the restored state has it: the level trailed to last before the stop", () =>
    Effect.gen(function* () {
      const scope = yield* Scope.make()
      const base = yield* Layer.buildWithScope(
        deskServices({
          seed: 11,
          store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
          auth: authLayer(":memory:")
        }),
        scope
      )
      const startEngine = Effect.gen(function* () {
        const engineScope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(Engine.layer(REGISTRY), engineScope).pipe(Effect.provide(base))
        return { engine: Context.get(context, Engine), engineScope }
      })
      let started = yield* startEngine
      const desk = Context.get(base, Desk)
      const store = Context.get(base, OrderStore)
      const sim = Context.get(base, VenueGateway).venue("sim")!
      const market = (yield* sim.markets).find((m) => m.status === "open")!
      const { order } = yield* started.engine.create(
        {
          type: "trailing_stop",
          side: "sell",
          amount: "2",
          params: { trail: "0.05" },
          market_id: makeMarketId("sim", market.nativeId),
          account: "sim:default"
        } as AccountRequest,
        "test"
      )
      const lastTrailed = Effect.map(store.eventsAfter(0, 1_000_000), (all) => {
        const trailed = all.filter((e) => e.kind === "managed.trailed" && (e.payload as any).parent_id === order.id)
        return trailed.length === 0 ? undefined : ((trailed[trailed.length - 1]!.payload as any).level as string)
      })
      yield* run(20)
      const before = yield* lastTrailed
      assert.isString(before, "the level was set from the market")
      assert.strictEqual((yield* desk.get(order.id))!.info["fired"], false, "still waiting at the stop")
      yield* Scope.close(started.engineScope, Exit.void)
      started = yield* startEngine
      const restored = (yield* desk.get(order.id))!
      assert.strictEqual(restored.info["level"], before)
      yield* run(20)
      const after = (yield* desk.get(order.id))!
      if (after.info["fired"] === false) assert.strictEqual(after.info["level"], yield* lastTrailed)
      yield* Scope.close(started.engineScope, Exit.void)
      yield* Scope.close(scope, Exit.void)
    }).pipe(Effect.provide(TestContext.TestContext))
  )
})

/**
 * Many parents of every type on three markets, every other one named by a client id, for 80 s; with `restart` the
 * whole server (desk and engine) stops at 20 s and starts again on the same database file, the venue carrying on.
 * After the restart a named parent is sent again (the same body, then another one) and one more parent is placed; at
 * the end every named one is sent again.
 */
const wholeRestart = (restart: boolean) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "crossbook-restart-"))
    const outer = yield* Scope.make()
    yield* Scope.addFinalizer(
      outer,
      Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const venues = yield* Layer.buildWithScope(venuesLayer({ seed: 17 }), outer)
    const start = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const layer = serverServices({
        seed: 17,
        engineSeed: 5,
        venues: Layer.succeedContext(venues),
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(join(dir, "engine.db")))),
        auth: Auth.layerAllowAll
      })
      const context = yield* Layer.buildWithScope(layer, scope)
      return { scope, engine: Context.get(context, Engine), desk: Context.get(context, Desk) }
    })
    let server = yield* start
    const sim = Context.get(venues, VenueGateway).venue("sim")!
    const markets = (yield* sim.markets).filter((m) => m.status === "open").slice(0, 3)
    const inputs: Array<AccountRequest> = []
    for (const market of markets) {
      const book = yield* sim.book(market.nativeId)
      const bid = Math.round(book.bids[0]!.price / 10_000)
      const ask = Math.round(book.asks[0]!.price / 10_000)
      for (let round = 0; round < 3; round++) {
        for (const input of parentsFor(makeMarketId("sim", market.nativeId), bid, ask)) {
          const n = inputs.length
          inputs.push(n % 2 === 0 ? { ...input, client_order_id: `c-${n}` } : input)
        }
      }
    }
    for (const input of inputs) yield* server.engine.create(input, "test")
    yield* run(20)
    const live = yield* server.engine.liveCount
    if (restart) {
      yield* Scope.close(server.scope, Exit.void)
      server = yield* start
    }
    const again = yield* Effect.either(server.engine.create(inputs[0]!, "test"))
    const other = yield* Effect.either(server.engine.create({ ...inputs[0]!, amount: "4" }, "test"))
    const after = yield* server.engine.create({ ...inputs[1]!, client_order_id: "c-after" }, "test")
    yield* run(60)
    // Each named parent sent again at the end: answered with itself, whatever was written of it since the restart.
    const late: Array<string> = []
    for (const input of inputs.filter((i) => i.client_order_id !== undefined)) {
      const answer = yield* Effect.either(server.engine.create(input, "test"))
      late.push(answer._tag === "Right" ? `${answer.right.order.id} ${answer.right.created}` : answer.left.message)
    }
    const orders = (yield* server.desk.list({})).map(renderOrder)
    const fills = (yield* server.desk.fills({})).map(renderFill)
    yield* Scope.close(server.scope, Exit.void)
    yield* Scope.close(outer, Exit.void)
    return {
      live,
      parents: inputs.length,
      again: again._tag === "Right" ? { id: again.right.order.id, created: again.right.created } : "refused",
      other: other._tag,
      after: after.order.id,
      late,
      orders,
      fills
    }
  }).pipe(Effect.provide(TestContext.TestContext))

describe("a whole restart on a database file", () => {
  it.effect("many parents of every type, named or not, continue as if the server had never stopped", () =>
    Effect.gen(function* () {
      const straight = yield* wholeRestart(false)
      const restarted = yield* wholeRestart(true)
      assert.strictEqual(straight.parents, 81)
      assert.isAtLeast(straight.live, 30, "many parents are still working when the server stops")
      assert.isAbove(straight.fills.length, 0)
      assert.deepStrictEqual(restarted.again, straight.again)
      assert.strictEqual(typeof straight.again === "object" ? straight.again.created : "refused", false)
      assert.strictEqual(restarted.other, "Left")
      assert.strictEqual(straight.other, "Left")
      assert.strictEqual(restarted.after, straight.after)
      assert.deepStrictEqual(restarted.late, straight.late)
      assert.isTrue(straight.late.every((answer) => answer.endsWith(" false")))
      assert.deepStrictEqual(restarted.orders, straight.orders)
      assert.deepStrictEqual(restarted.fills, straight.fills)
      const types = new Set(straight.orders.filter((o) => o.held_by === "engine").map((o) => o.type))
      assert.strictEqual(types.size, 9)
    })
  )
})
