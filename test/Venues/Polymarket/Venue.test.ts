/** The Polymarket venue against the fake CLOB, Gamma and market channel on loopback. */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Exit, Queue, type Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import { mirrorBook } from "../../../src/Domain/Market.ts"
import type { PlaceOrderRequest, Venue, VenueEvent } from "../../../src/Services/VenueGateway.ts"
import { signerOf } from "../../../src/Venues/Polymarket/Signing.ts"
import { configFromEnv, makePolymarketVenue } from "../../../src/Venues/Polymarket/Venue.ts"
import { CONDITION, type FakePolymarket, GAMMA_ID, NO_TOKEN, SLUG, startFake, YES_TOKEN } from "./Fake.ts"

const KEY = "0x" + "5a".repeat(32)
const signer = signerOf(KEY)
let fake: FakePolymarket | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

type WatchableVenue = Venue & {
  readonly watch: (ids: ReadonlyArray<string>) => Effect.Effect<void, unknown, Scope.Scope>
}

const withVenue = async <A>(
  env: Record<string, string>,
  f: (venue: WatchableVenue) => Effect.Effect<A, unknown, Scope.Scope>
): Promise<Exit.Exit<A, unknown>> => {
  fake = await startFake(signer.address)
  const config = configFromEnv({
    POLYMARKET_CLOB_URL: fake.url,
    POLYMARKET_GAMMA_URL: fake.url,
    POLYMARKET_DATA_URL: fake.url,
    POLYMARKET_WS_URL: fake.wsUrl,
    ...env
  })
  return Effect.runPromiseExit(
    Effect.gen(function* () {
      const venue = (yield* makePolymarketVenue({
        ...config,
        timeout: "2 seconds",
        heartbeatEvery: "40 millis"
      })) as WatchableVenue
      return yield* f(venue)
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
  )
}

const value = <A>(exit: Exit.Exit<A, unknown>): A => {
  if (Exit.isFailure(exit)) throw new Error(`failed: ${JSON.stringify(exit.cause)}`)
  return exit.value
}

const order = (o: Partial<PlaceOrderRequest>): PlaceOrderRequest => ({
  clientOrderId: "c1",
  nativeId: CONDITION,
  side: "buy",
  price: F.of("0.5"),
  amount: F.of("10"),
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  expiresAt: null,
  ...o
})

describe("Polymarket venue, public data (no credentials)", () => {
  it("finds the market by condition id, Gamma id and slug; the book is the YES token's, best first", async () => {
    const out = value(
      await withVenue({}, (venue) =>
        Effect.gen(function* () {
          const byCondition = yield* venue.market(CONDITION)
          const byGamma = yield* venue.market(GAMMA_ID)
          const bySlug = yield* venue.market(SLUG)
          const book = yield* venue.book(CONDITION)
          const trades = yield* venue.trades(CONDITION)
          const all = yield* venue.markets
          return { byCondition, byGamma, bySlug, book, trades, all, venue }
        })
      )
    )
    expect(out.byCondition?.nativeId).toBe(CONDITION)
    expect(out.byGamma?.nativeId).toBe(CONDITION)
    expect(out.bySlug?.nativeId).toBe(CONDITION)
    expect(out.all.map((m) => m.nativeId)).toEqual([CONDITION])
    expect(out.book.asks.map((l) => F.format(l.price))).toEqual(["0.6", "0.62"])
    expect(out.book.bids.map((l) => F.format(l.price))).toEqual(["0.55"])
    expect(mirrorBook(out.book, F.ONE).bids.map((l) => F.format(l.price))).toEqual(["0.4", "0.38"])
    // newest first; the NO trade at 0.45 is a YES sale at 0.55
    expect(out.trades.map((t) => [F.format(t.price), t.takerSide])).toEqual([
      ["0.55", "sell"],
      ["0.6", "buy"]
    ])
    expect(out.venue.info.has.create_order).toBe(false)
    expect(out.venue.info.has.edit_order).toBe(false)
    expect(out.venue.accounts).toEqual([])
  })

  it("refuses to trade without a key, before anything reaches the venue", async () => {
    const exit = await withVenue({}, (venue) => venue.placeOrder(order({})))
    expect(exit).toMatchObject({ _tag: "Failure" })
    expect(JSON.stringify(exit)).toContain("not_supported")
    expect(fake?.orders ?? []).toEqual([])
  })

  it("a 429 passes through as rate_limited with its Retry-After", async () => {
    const exit = await withVenue({}, (venue) =>
      Effect.gen(function* () {
        fake!.rateLimitNext = 1
        return yield* venue.book(CONDITION)
      })
    )
    expect(JSON.stringify(exit)).toMatch(
      /"kind":"rate_limited".*"retryAfterS":3|"retryAfterS":3.*"kind":"rate_limited"/
    )
  })
})

describe("Polymarket venue, trading against the fake CLOB", () => {
  const env = { POLYMARKET_PRIVATE_KEY: KEY }

  it("derives L2 credentials with L1, signs orders the fake recovers, maps buy/sell onto the two tokens", async () => {
    const out = value(
      await withVenue(env, (venue) =>
        Effect.gen(function* () {
          const resting = yield* venue.placeOrder(order({ clientOrderId: "rest" }))
          const no = yield* venue.placeOrder(order({ clientOrderId: "no", side: "sell", price: F.of("0.7") }))
          // a reduce-only sell spends YES shares held: the venue refuses a SELL of shares the wallet lacks
          fake!.holdings.set(YES_TOKEN, F.of("10"))
          const reduce = yield* venue.placeOrder(
            order({ clientOrderId: "reduce", side: "sell", price: F.of("0.7"), reduceOnly: true })
          )
          const taken = yield* venue.placeOrder(
            order({ clientOrderId: "take", price: F.of("0.6"), amount: F.of("20") })
          )
          const canceled = yield* venue.cancelOrder(resting.venueOrderId)
          const byClient = yield* venue.orderByClientId("take")
          return { resting, no, reduce, taken, canceled, byClient, venue }
        })
      )
    )
    expect(fake!.refusals).toEqual([])
    expect(fake!.orders.map((o) => [o.tokenId, o.side, F.format(o.price), F.format(o.size)])).toEqual([
      [YES_TOKEN, "BUY", "0.5", "10"],
      [NO_TOKEN, "BUY", "0.3", "10"],
      [YES_TOKEN, "SELL", "0.7", "10"],
      [YES_TOKEN, "BUY", "0.6", "20"]
    ])
    expect(fake!.orders.every((o) => o.signer === signer.address)).toBe(true)
    expect([out.resting.status, out.no.status, out.no.side, F.format(out.no.price)]).toEqual([
      "open",
      "open",
      "sell",
      "0.7"
    ])
    expect([out.taken.status, F.format(out.taken.filled)]).toEqual(["closed", "20"])
    expect(out.canceled.status).toBe("canceled")
    expect(out.byClient?.venueOrderId).toBe(out.taken.venueOrderId)
    expect(out.venue.info.has.create_order).toBe(true)
    expect(out.venue.accounts).toEqual(["default"])
  })

  it("a price off the grid is refused naming the two nearest valid prices; amend is not supported", async () => {
    const exit = await withVenue(env, (venue) => venue.placeOrder(order({ price: F.of("0.505") })))
    expect(JSON.stringify(exit)).toContain("nearest valid prices 0.5 and 0.51")
    expect(fake!.orders).toEqual([])
    const amend = await withVenue(env, (venue) => venue.amendOrder("x", { price: F.of("0.4") }))
    expect(JSON.stringify(amend)).toContain("not_supported")
  })

  it("a crossing post-only order is refused with the venue's reason", async () => {
    const exit = await withVenue(env, (venue) => venue.placeOrder(order({ price: F.of("0.6"), postOnly: true })))
    expect(JSON.stringify(exit)).toContain("INVALID_POST_ONLY_ORDER")
    expect(JSON.stringify(exit)).toContain('"kind":"rejected"')
  })
})

describe("Polymarket venue, keep-alive and bulk cancels", () => {
  const env = { POLYMARKET_PRIVATE_KEY: KEY }

  it("the heartbeat runs while an order rests, stops after cancel-all, and a missed one is surfaced", async () => {
    const out = value(
      await withVenue(env, (venue) =>
        Effect.gen(function* () {
          const idle = yield* venue.heartbeat!
          yield* Effect.sleep("150 millis")
          const beforeOrders = fake!.heartbeats
          yield* venue.placeOrder(order({ clientOrderId: "a" }))
          yield* venue.placeOrder(order({ clientOrderId: "b", price: F.of("0.51") }))
          yield* Effect.sleep("200 millis")
          const beating = yield* venue.heartbeat!
          fake!.failHeartbeats = true
          yield* Effect.sleep("200 millis")
          const missed = yield* venue.heartbeat!
          fake!.failHeartbeats = false
          const canceled = yield* venue.cancelAll!
          yield* Effect.sleep("100 millis")
          const afterCancel = fake!.heartbeats
          yield* Effect.sleep("200 millis")
          return { idle, beforeOrders, beating, missed, canceled, afterCancel, stopped: yield* venue.heartbeat! }
        })
      )
    )
    expect(out.idle.active).toBe(false)
    expect(out.beforeOrders).toBe(0)
    expect([out.beating.active, out.beating.ok, out.beating.lastOkAt !== null]).toEqual([true, true, true])
    expect([out.missed.ok, out.missed.lastError]).toEqual([false, "Invalid heartbeat id"])
    // the fake canceled the resting orders when its heartbeat failed; cancel-all finds none left
    expect(out.canceled).toBe(0)
    expect(fake!.heartbeats).toBe(out.afterCancel)
    expect(out.stopped.active).toBe(false)
  })

  it("cancel by market cancels only the resting orders, answering the count", async () => {
    const n = value(
      await withVenue(env, (venue) =>
        Effect.gen(function* () {
          yield* venue.placeOrder(order({ clientOrderId: "a" }))
          yield* venue.placeOrder(order({ clientOrderId: "b", price: F.of("0.6") })) // fills at once
          yield* venue.placeOrder(order({ clientOrderId: "c", side: "sell", price: F.of("0.9") }))
          return yield* venue.cancelMarket!(CONDITION)
        })
      )
    )
    expect(n).toBe(2)
    expect(fake!.orders.map((o) => o.status)).toEqual(["CANCELED", "MATCHED", "CANCELED"])
  })
})

describe("Polymarket venue, own fills on the user channel", () => {
  it("a fill reaches subscribers once when matched, is not counted again when confirmed, and a failed one adds none", async () => {
    const out = value(
      await withVenue({ POLYMARKET_PRIVATE_KEY: KEY }, (venue) =>
        Effect.gen(function* () {
          const queue = yield* venue.subscribe
          const resting = yield* venue.placeOrder(order({ clientOrderId: "mine", side: "sell", price: F.of("0.7") }))
          while (fake!.userConnections() === 0) yield* Effect.sleep("10 millis")
          const trade = (status: string) => ({
            event_type: "trade",
            id: "t1",
            market: CONDITION,
            asset_id: YES_TOKEN,
            side: "BUY",
            price: "0.3",
            size: "4",
            status,
            taker_order_id: "0xsomeone",
            maker_orders: [{ order_id: resting.venueOrderId, asset_id: NO_TOKEN, matched_amount: "4", price: "0.3" }],
            matchtime: "1800000000"
          })
          fake!.broadcastUser([trade("MATCHED")])
          fake!.broadcastUser(trade("MINED"))
          fake!.broadcastUser(trade("CONFIRMED"))
          fake!.broadcastUser({ ...trade("FAILED"), id: "t2" })
          const first = yield* Queue.take(queue)
          yield* Effect.sleep("150 millis")
          const rest = yield* Queue.takeAll(queue)
          return { first, rest: [...rest] }
        }).pipe(Effect.timeout("10 seconds"))
      )
    )
    expect(out.first).toMatchObject({
      _tag: "Fill",
      fill: { clientOrderId: "mine", side: "sell", price: F.of("0.7"), amount: F.of("4"), liquidity: "maker" }
    })
    expect(out.rest.filter((e) => e._tag === "Fill")).toEqual([])
  })
})

describe("Polymarket venue, streamed book", () => {
  it("a streamed price_change moves the book and reaches subscribers; a dropped socket resyncs from a fresh book", async () => {
    const out = value(
      await withVenue({}, (venue) =>
        Effect.gen(function* () {
          const queue = yield* venue.subscribe
          yield* venue.watch([CONDITION])
          const next = (): Effect.Effect<VenueEvent> => Queue.take(queue)
          yield* next() // the snapshot after subscribing
          fake!.broadcast({
            event_type: "price_change",
            market: CONDITION,
            timestamp: "1800000001000",
            price_changes: [{ asset_id: YES_TOKEN, price: "0.58", size: "7", side: "BUY" }]
          })
          const moved = yield* next()
          const afterChange = yield* venue.book(CONDITION)
          fake!.bids.set(F.of("0.57"), F.of("3"))
          fake!.dropSockets()
          yield* next() // the fresh book on the new connection
          const afterResync = yield* venue.book(CONDITION)
          return { moved, afterChange, afterResync }
        }).pipe(Effect.timeout("10 seconds"))
      )
    )
    expect(out.moved).toEqual({ _tag: "Book", nativeId: CONDITION, ts: 1800000001000 })
    expect(out.afterChange.bids[0]).toEqual({ price: F.of("0.58"), size: F.of("7") })
    // the change the socket carried is gone after the resync: the fresh book is the truth
    expect(out.afterResync.bids.map((l) => F.format(l.price))).toEqual(["0.57", "0.55"])
  })
})
