/** The Polymarket venue against a fake that behaves as the venue documents: its refusals, lost answers, own cancels. */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Exit, Queue, type Scope } from "effect"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import { polymarketAccount } from "../../../src/Venues/Polymarket/Registration.ts"
import * as F from "../../../src/Domain/Fixed.ts"
import type { PlaceOrderRequest, Venue, VenueError, VenueEvent } from "../../../src/Services/VenueGateway.ts"
import {
  exchangeFor,
  l2Headers,
  marketOrderAmounts,
  type Order,
  orderAmounts,
  orderJson,
  signerOf,
  signOrder,
  ZERO_ADDRESS,
  ZERO_BYTES32
} from "../../../src/Venues/Polymarket/Signing.ts"
import { configFromEnv, makePolymarketVenue, type PolymarketConfig } from "../../../src/Venues/Polymarket/Venue.ts"
import { CONDITION, type FakePolymarket, NO_TOKEN, SECRET, startFake, YES_TOKEN } from "./Fake.ts"

const KEY = "0x" + "5a".repeat(32)
const signer = signerOf(KEY)
let fake: FakePolymarket | undefined
afterEach(async () => {
  await fake?.close()
  fake = undefined
})

type Watchable = Venue & { readonly watch: (ids: ReadonlyArray<string>) => Effect.Effect<void, unknown, Scope.Scope> }

const configFor = (x: FakePolymarket, env: Record<string, string> = {}): PolymarketConfig => ({
  ...configFromEnv({
    POLYMARKET_CLOB_URL: x.url,
    POLYMARKET_GAMMA_URL: x.url,
    POLYMARKET_DATA_URL: x.url,
    POLYMARKET_WS_URL: x.wsUrl,
    POLYMARKET_PRIVATE_KEY: KEY,
    ...env
  }),
  timeout: "600 millis",
  heartbeatEvery: "40 millis",
  pingEvery: "50 millis",
  staleAfter: "300 millis"
})

const venueOn = (x: FakePolymarket, env?: Record<string, string>) =>
  Effect.map(makePolymarketVenue(configFor(x, env)), (v) => v as Watchable)

const run = async <A>(
  f: (venue: Watchable, x: FakePolymarket) => Effect.Effect<A, unknown, Scope.Scope>,
  env?: Record<string, string>
): Promise<A> => {
  fake = await startFake(signer.address)
  const x = fake
  const exit = await Effect.runPromiseExit(
    Effect.gen(function* () {
      return yield* f(yield* venueOn(x, env), x)
    }).pipe(Effect.scoped, Effect.timeout("20 seconds"), Effect.provide(FetchHttpClient.layer))
  )
  if (Exit.isFailure(exit)) throw new Error(`failed: ${JSON.stringify(exit.cause)}`)
  return exit.value
}

const order = (o: Partial<PlaceOrderRequest>): PlaceOrderRequest => ({
  clientOrderId: "k1",
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

const failure = <A>(e: Effect.Effect<A, VenueError>) => Effect.flip(e)

/** Takes events until one matches, or fails after a while. */
const until = (q: Queue.Dequeue<VenueEvent>, check: (e: VenueEvent) => boolean) =>
  Effect.gen(function* () {
    for (;;) {
      const e = yield* Queue.take(q)
      if (check(e)) return e
    }
  }).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no such event") }))

describe("Polymarket as documented: order shapes", () => {
  it("market-order amounts: a BUY spends whole cents for at most 4 decimals of shares, never above its price or size", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 500, max: 1_000_000 }), (cents, hundredths) => {
        const price = F.of((cents / 100).toFixed(2))
        const size = F.of((hundredths / 100).toFixed(2))
        const a = marketOrderAmounts("BUY", price, size, F.of("0.01"))
        const maker = Number(a.makerAmount)
        const taker = Number(a.takerAmount)
        expect(maker % F.of("0.01")).toBe(0)
        expect(taker % F.of("0.0001")).toBe(0)
        expect(taker).toBeLessThanOrEqual(size)
        // the worst price the amounts imply stays within the limit
        if (taker > 0) expect(maker * F.ONE).toBeLessThanOrEqual(price * taker)
      })
    )
  })

  it("an IOC buy at 0.57 for 10.33 goes out as a FAK market order the venue accepts (whole cents, 4-decimal shares)", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.asks.set(F.of("0.57"), F.of("100"))
        const taken = yield* venue.placeOrder(order({ price: F.of("0.57"), amount: F.of("10.33"), timeInForce: "ioc" }))
        return { taken, sent: x.orders[0]! }
      })
    )
    expect(fake!.refusals).toEqual([])
    expect([out.sent.orderType, F.format(out.sent.size)]).toEqual(["FAK", "10.3158"])
    expect(out.taken.status).toBe("closed")
    expect(out.taken.venueOrderId).toBe(out.sent.id)
  })

  it("the venue refuses a FOK BUY sent with limit-order amounts (5.8881 USDC): the fake says so", async () => {
    fake = await startFake(signer.address)
    const x = fake
    const amounts = orderAmounts("BUY", F.of("0.57"), F.of("10.33"), F.of("0.01"))
    const o: Order = {
      salt: 1n,
      maker: signer.address,
      signer: signer.address,
      tokenId: YES_TOKEN,
      ...amounts,
      side: "BUY",
      signatureType: 0,
      timestamp: 1_800_000_000_000n,
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
      expiration: 0n,
      taker: ZERO_ADDRESS,
      nonce: 0n,
      feeRateBps: 0n
    }
    const exchange = exchangeFor(137, 2, false)!
    const body = JSON.stringify({
      order: orderJson(o, await signOrder(signer, exchange, o), 2),
      owner: "fake-key",
      orderType: "FOK"
    })
    const headers = l2Headers(
      { key: "fake-key", secret: SECRET, passphrase: "fake-pass" },
      signer.address,
      1,
      "POST",
      "/order",
      body
    )
    const answer = await fetch(`${x.url}/order`, { method: "POST", headers, body })
    expect(answer.status).toBe(400)
    expect(await answer.text()).toContain("max accuracy of 2 decimals")
    expect(x.orders).toEqual([])
  })

  it("a sell while YES is held sells YES; a buy while NO is held sells NO; more than the held side is refused", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.holdings.set(YES_TOKEN, F.of("10"))
        x.holdings.set(NO_TOKEN, F.of("6"))
        const sellYes = yield* venue.placeOrder(order({ clientOrderId: "a", side: "sell", price: F.of("0.9") }))
        const sellNo = yield* venue.placeOrder(
          order({ clientOrderId: "b", side: "buy", price: F.of("0.3"), amount: F.of("6") })
        )
        const over = yield* failure(
          venue.placeOrder(order({ clientOrderId: "c", side: "buy", price: F.of("0.3"), amount: F.of("8") }))
        )
        return { sellYes, sellNo, over }
      })
    )
    expect(fake!.orders.map((o) => [o.tokenId, o.side, F.format(o.price), F.format(o.size)])).toEqual([
      [YES_TOKEN, "SELL", "0.9", "10"],
      [NO_TOKEN, "SELL", "0.7", "6"]
    ])
    expect([out.sellYes.side, F.format(out.sellYes.price), out.sellNo.side, F.format(out.sellNo.price)]).toEqual([
      "sell",
      "0.9",
      "buy",
      "0.3"
    ])
    expect(out.over.kind).toBe("rejected")
    expect(out.over.reason).toContain("YES and NO do not net")
  })

  it("an exchange upgrade: order_version_mismatch reads /version again and the order goes out signed for version 3", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        yield* venue.placeOrder(order({ clientOrderId: "v2" }))
        x.version = 3
        const after = yield* venue.placeOrder(order({ clientOrderId: "v3", price: F.of("0.51") }))
        const again = yield* venue.placeOrder(order({ clientOrderId: "v3b", price: F.of("0.52") }))
        return { after, again, versions: x.calls.filter((c) => c === "GET /version").length }
      })
    )
    expect(out.versions).toBe(2)
    expect(fake!.orders.length).toBe(3)
    expect(out.after.venueOrderId).toBe(fake!.orders[1]!.id)
    expect(exchangeFor(137, 3, true)?.address).toBe(exchangeFor(137, 3, false)?.address)
  })

  it("new accounts: an EOA maker is refused naming the deposit-wallet settings; a deposit wallet (type 3) is accepted", async () => {
    const refused = await run((venue, x) =>
      Effect.gen(function* () {
        x.depositWalletOnly = true
        return yield* failure(venue.placeOrder(order({})))
      })
    )
    expect(refused.kind).toBe("rejected")
    expect(refused.reason).toContain("POLYMARKET_SIGNATURE_TYPE=3")
    const wallet = "0x" + "77".repeat(20)
    const placed = await run(
      (venue, x) =>
        Effect.gen(function* () {
          x.depositWalletOnly = true
          return yield* venue.placeOrder(order({}))
        }),
      { POLYMARKET_FUNDER: wallet }
    )
    expect(placed.status).toBe("open")
    expect(fake!.orders[0]!.signatureType).toBe(3)
    expect(configFromEnv({ POLYMARKET_FUNDER: wallet }).signatureType).toBe(3)
    expect(configFromEnv({}).signatureType).toBe(0)
    expect(() => configFromEnv({ POLYMARKET_PRIVATE_KEY: KEY, POLYMARKET_SIGNATURE_TYPE: "3" })).toThrow(
      /POLYMARKET_FUNDER/
    )
    // doctor says which type the settings sign with and what a new account needs
    expect(polymarketAccount({ POLYMARKET_PRIVATE_KEY: KEY })).toMatchObject({ status: "warn", detail: /type 3/ })
    expect(polymarketAccount({ POLYMARKET_PRIVATE_KEY: KEY, POLYMARKET_FUNDER: wallet })).toMatchObject({
      status: "ok",
      detail: /deposit wallet \(type 3\)/
    })
    expect(polymarketAccount({ POLYMARKET_PRIVATE_KEY: KEY, POLYMARKET_SIGNATURE_TYPE: "2" })?.status).toBe("fail")
  })

  it("a 503 (cancel-only) carries its Retry-After", async () => {
    const e = await run((venue, x) =>
      Effect.gen(function* () {
        x.placementFaults.push("503-cancel-only")
        return yield* failure(venue.placeOrder(order({})))
      })
    )
    expect([e.kind, e.retryAfterS]).toEqual(["unavailable", 5])
  })

  it("paged reads of /data/orders are signed as the venue checks them, every page read", async () => {
    const open = await run((venue, x) =>
      Effect.gen(function* () {
        x.pageSize = 1
        for (const [i, p] of ["0.5", "0.51", "0.52"].entries()) {
          yield* venue.placeOrder(order({ clientOrderId: `p${i}`, price: F.of(p) }))
        }
        return yield* venue.openOrders!
      })
    )
    expect(fake!.refusals).toEqual([])
    expect(open.map((o) => F.format(o.price))).toEqual(["0.5", "0.51", "0.52"])
  })
})

describe("Polymarket as documented: what the venue does on its own", () => {
  it("a venue-side cancel, a heartbeat lapse and a GTD expiry reach subscribers as Order events", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        const a = yield* venue.placeOrder(order({ clientOrderId: "a" }))
        const b = yield* venue.placeOrder(order({ clientOrderId: "b", price: F.of("0.51") }))
        const c = yield* venue.placeOrder(
          order({ clientOrderId: "c", price: F.of("0.52"), timeInForce: "gtd", expiresAt: 1_700_000_000_000 })
        )
        x.cancelOnVenue(a.venueOrderId)
        const first = yield* until(q, (e) => e._tag === "Order")
        x.expire(1_700_000_000 + 60)
        const expired = yield* until(q, (e) => e._tag === "Order")
        x.lapseHeartbeat()
        const lapsed = yield* until(q, (e) => e._tag === "Order")
        return { a, b, c, first, expired, lapsed }
      })
    )
    const view = (e: VenueEvent) => (e._tag === "Order" ? [e.order.venueOrderId, e.order.status] : [])
    expect(view(out.first)).toEqual([out.a.venueOrderId, "canceled"])
    expect(view(out.expired)).toEqual([out.c.venueOrderId, "expired"])
    expect(view(out.lapsed)).toEqual([out.b.venueOrderId, "canceled"])
  })

  it("a delayed FAK is open, not canceled, and its fill arrives later", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        x.placementFaults.push("delayed")
        const answer = yield* venue.placeOrder(order({ price: F.of("0.6"), amount: F.of("5"), timeInForce: "ioc" }))
        const fill = yield* until(q, (e) => e._tag === "Fill")
        return { answer, fill }
      })
    )
    expect(out.answer.status).toBe("open")
    expect(out.fill).toMatchObject({ _tag: "Fill", fill: { venueOrderId: out.answer.venueOrderId, amount: F.of("5") } })
  })

  it("fees: each fill books the fee its trade reports; the market states its rate for the desk to reserve", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.feeSchedule = { rate: 0.1, exponent: 1, takerOnly: true }
        x.feeRateBps = 1000
        const q = yield* venue.subscribe
        const m = yield* venue.market(CONDITION)
        yield* venue.placeOrder(order({ price: F.of("0.6"), amount: F.of("5") }))
        const fill = yield* until(q, (e) => e._tag === "Fill")
        const back = yield* venue.fillsSince!(0)
        return { m, fill, back }
      })
    )
    expect(out.m?.feeSchedule).toEqual({ taker: F.of("0.1"), maker: F.ZERO, step: F.of("0.00001") })
    // 5 × 0.1 × 0.6 × 0.4
    expect(out.fill._tag === "Fill" && F.format(out.fill.fill.fee)).toBe("0.12")
    expect(out.back.map((f) => F.format(f.fee))).toEqual(["0.12"])
  })

  it("a market that resolves: a Settled event, and settlementsSince names it with its payout", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        yield* venue.watch([CONDITION])
        yield* until(q, (e) => e._tag === "Book")
        yield* venue.placeOrder(order({ price: F.of("0.6"), amount: F.of("5") }))
        x.resolve("yes")
        const settled = yield* until(q, (e) => e._tag === "Settled")
        const since = yield* venue.settlementsSince!(0)
        return { settled, since }
      })
    )
    expect(out.settled).toMatchObject({ _tag: "Settled", nativeId: CONDITION, payout: F.ONE })
    expect(out.since.map((s) => [s.nativeId, s.payout])).toEqual([[CONDITION, F.ONE]])
  })
})

describe("Polymarket as documented: lost answers and silent sockets", () => {
  it("placed, then answered 500: unknown outcome, and the hash computed before sending finds the live order", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.placementFaults.push("500-after")
        const r = order({ clientOrderId: "lost" })
        const e = yield* failure(venue.placeOrder(r))
        const found = yield* venue.orderByClientId("lost", r)
        return { e, found }
      })
    )
    expect([out.e.kind, out.e.sent]).toEqual(["unavailable", undefined])
    expect(out.found?.venueOrderId).toBe(fake!.orders[0]!.id)
    expect([out.found?.status, out.found?.clientOrderId]).toEqual(["open", "lost"])
  })

  it("answered 500 without placing: unknown outcome, and the look-up says the venue certainly has none", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.placementFaults.push("500-before")
        const r = order({ clientOrderId: "none" })
        const e = yield* failure(venue.placeOrder(r))
        return { e, found: yield* venue.orderByClientId("none", r) }
      })
    )
    expect(out.e.kind).toBe("unavailable")
    expect(out.found).toBeUndefined()
    expect(fake!.orders).toEqual([])
  })

  it("a hung answer is a timeout; an unreadable one is unavailable; both orders are found by their hash", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.placementFaults.push("hang-after", "unreadable-after", "hang")
        const r1 = order({ clientOrderId: "hung" })
        const r2 = order({ clientOrderId: "garbled", price: F.of("0.51") })
        const r3 = order({ clientOrderId: "never", price: F.of("0.52") })
        const e1 = yield* failure(venue.placeOrder(r1))
        const e2 = yield* failure(venue.placeOrder(r2))
        const e3 = yield* failure(venue.placeOrder(r3))
        return {
          kinds: [e1.kind, e2.kind, e3.kind],
          found: [
            yield* venue.orderByClientId("hung", r1),
            yield* venue.orderByClientId("garbled", r2),
            yield* venue.orderByClientId("never", r3)
          ]
        }
      })
    )
    expect(out.kinds).toEqual(["timeout", "unavailable", "timeout"])
    expect(out.found.map((o) => o?.venueOrderId)).toEqual([fake!.orders[0]!.id, fake!.orders[1]!.id, undefined])
  })

  it("after a restart the order is found again from the request alone; another client id finds nothing", async () => {
    fake = await startFake(signer.address)
    const x = fake
    const r = order({ clientOrderId: "before-restart", price: F.of("0.53") })
    const exit = await Effect.runPromiseExit(
      Effect.gen(function* () {
        yield* Effect.scoped(Effect.flatMap(venueOn(x), (v) => v.placeOrder(r)))
        return yield* Effect.scoped(
          Effect.gen(function* () {
            const fresh = yield* venueOn(x)
            return [
              yield* fresh.orderByClientId(r.clientOrderId, r),
              yield* fresh.orderByClientId("other", { ...r, clientOrderId: "other" })
            ] as const
          })
        )
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
    if (Exit.isFailure(exit)) throw new Error(JSON.stringify(exit.cause))
    const [found, other] = exit.value
    expect(found?.venueOrderId).toBe(x.orders[0]!.id)
    expect([found?.side, F.format(found!.price), F.format(found!.amount)]).toEqual(["buy", "0.53", "10"])
    expect(other).toBeUndefined()
  })

  it("a request that never left is `sent: false`", async () => {
    const e = await run((venue) => failure(venue.placeOrder(order({}))), { POLYMARKET_CLOB_URL: "http://127.0.0.1:9" })
    expect(e.sent).toBe(false)
  })

  it("orderById reads any order whatever its state; fillsSince reads every page, oldest first", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        x.pageSize = 1
        const resting = yield* venue.placeOrder(order({ clientOrderId: "r", price: F.of("0.5") }))
        yield* venue.placeOrder(order({ clientOrderId: "t1", price: F.of("0.6"), amount: F.of("5") }))
        yield* venue.placeOrder(order({ clientOrderId: "t2", price: F.of("0.6"), amount: F.of("6") }))
        x.fillResting(resting.venueOrderId, "3")
        const canceled = yield* venue.cancelOrder(resting.venueOrderId)
        return {
          byId: yield* venue.orderById!(resting.venueOrderId),
          missing: yield* venue.orderById!("0xnothing"),
          canceled,
          fills: yield* venue.fillsSince!(0)
        }
      })
    )
    expect([out.byId?.status, F.format(out.byId!.filled)]).toEqual(["canceled", "3"])
    expect(out.missing).toBeUndefined()
    expect(out.fills.map((f) => [f.clientOrderId, F.format(f.amount), f.liquidity])).toEqual([
      ["t1", "5", "taker"],
      ["t2", "6", "taker"],
      ["r", "3", "maker"]
    ])
  })

  it("a silent market socket is dropped and reopened: stale, then resumed with a fresh book; streams shows it", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        yield* venue.watch([CONDITION])
        yield* until(q, (e) => e._tag === "Book")
        x.stallSockets()
        const stale = yield* until(q, (e) => e._tag === "Stream")
        const resumed = yield* until(q, (e) => e._tag === "Stream")
        return { stale, resumed, streams: yield* venue.streams!, opened: x.opened() }
      })
    )
    expect(out.stale).toMatchObject({ _tag: "Stream", state: "stale" })
    expect(out.resumed).toMatchObject({ _tag: "Stream", state: "resumed" })
    expect(out.opened).toBe(2)
    expect(out.streams).toEqual([expect.objectContaining({ channel: "market:1", state: "live", reconnects: 1 })])
  })

  it("a silent user socket is reopened with a resync: what the venue did meanwhile is to be read back", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        yield* venue.placeOrder(order({}))
        x.stallSockets()
        const stale = yield* until(q, (e) => e._tag === "Stream")
        const resync = yield* until(q, (e) => e._tag === "Stream")
        return { stale, resync, opened: x.userOpened() }
      })
    )
    expect(out.stale).toMatchObject({ channel: "user", state: "stale" })
    expect(out.resync).toMatchObject({ channel: "user", state: "resync" })
    expect(out.opened).toBe(2)
  })

  it("an own trade the adapter cannot read is not skipped in silence: it asks for a read-back (resync)", async () => {
    const out = await run((venue, x) =>
      Effect.gen(function* () {
        const q = yield* venue.subscribe
        yield* venue.placeOrder(order({}))
        while (x.userConnections() === 0) yield* Effect.sleep("10 millis")
        x.broadcastUser({ event_type: "trade", id: "garbled", market: CONDITION })
        return yield* until(q, (e) => e._tag === "Stream")
      })
    )
    expect(out).toMatchObject({ channel: "user", state: "resync" })
  })
})
