/** The trading server's layers with the Polymarket venue pointed at the fake CLOB: market data, orders, streams. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as F from "../../../src/Domain/Fixed.ts"
import { signerOf } from "../../../src/Venues/Polymarket/Signing.ts"
import { request } from "../../Http/TestServer.ts"
import { OrderStore } from "../../../src/Services/OrderStore.ts"
import { Owner, serveVenues } from "../ServeVenues.ts"
import { CONDITION, type FakePolymarket, GAMMA_ID, NO_TOKEN, startFake, YES_TOKEN } from "./Fake.ts"

const KEY = "0x" + "3c".repeat(32)
const SIGNER = signerOf(KEY).address
const M = `polymarket:${CONDITION}`

class Clob extends Context.Tag("test/FakePolymarket")<Clob, FakePolymarket>() {}

const clobLayer = Layer.scoped(
  Clob,
  Effect.acquireRelease(
    Effect.promise(() => startFake(SIGNER)),
    (x) => Effect.promise(() => x.close())
  )
)

/** The server as `serve` builds it, its venues from the list `sim,polymarket` with the fake behind the URL settings. */
const server = (
  env: (fake: FakePolymarket) => Record<string, string>,
  given?: { readonly fake?: FakePolymarket; readonly engineFile?: string; readonly reconcileEveryMs?: number }
) =>
  serveVenues({
    list: ["sim", "polymarket"],
    env: Effect.map(Clob, env),
    sim: { seed: 7, markets: 4 },
    engineFile: given?.engineFile,
    reconcileEveryMs: given?.reconcileEveryMs
  }).pipe(Layer.provideMerge(given?.fake === undefined ? clobLayer : Layer.succeed(Clob, given.fake))) as Layer.Layer<
    Owner | Clob | any
  >

const hosts = (x: FakePolymarket) => ({
  POLYMARKET_CLOB_URL: x.url,
  POLYMARKET_GAMMA_URL: x.url,
  POLYMARKET_DATA_URL: x.url,
  POLYMARKET_WS_URL: x.wsUrl
})
const trading = (x: FakePolymarket) => ({ ...hosts(x), POLYMARKET_PRIVATE_KEY: KEY })

const place = (json: Record<string, unknown>) =>
  Effect.flatMap(Owner, (token) =>
    request("POST", "/trading/orders", { token, json: { account: "polymarket:default", market_id: M, ...json } })
  )
const authed = (method: "GET" | "DELETE", path: string) =>
  Effect.flatMap(Owner, (token) => request(method, path, { token }))

/** Polls until `check` holds (the streams are asynchronous); fails the test after ~8 s. */
const eventually = <A>(read: Effect.Effect<A, any, any>, check: (a: A) => boolean, what = "condition") =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      const a = yield* read
      if (check(a)) return a
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage(
      `${what} not reached in time: ${String(JSON.stringify(yield* read)).slice(0, 1500)}`
    )
  })

const settled = (id: string) =>
  eventually(authed("GET", `/trading/orders/${id}`), (r) => ["closed", "canceled", "rejected"].includes(r.body.status))

/** Nothing reached the fake with a bad HMAC or a signature of another key. */
const allSigned = Effect.map(Clob, (x) => assert.deepStrictEqual(x.refusals, []))

describe("Polymarket end to end", () => {
  it.live(
    "a market resolves: the position closes at the payout with position.settled, cash and realized P&L",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        const done = yield* settled(taken.body.id)
        assert.strictEqual(done.body.filled, "5")
        const before = (yield* authed("GET", "/trading/balances?account=polymarket:default")).body.data[0]
        x.resolve("yes")
        const positions = yield* eventually(
          authed("GET", "/trading/positions?account=polymarket:default"),
          (r) => r.body.data.some((p: any) => p.market_id === M && p.settled !== null),
          "the settled position"
        )
        const position = positions.body.data.find((p: any) => p.market_id === M)
        assert.strictEqual(position.contracts, "0")
        assert.strictEqual(position.settled.payout, "1")
        assert.strictEqual(position.settled.contracts, "5")
        const after = (yield* authed("GET", "/trading/balances?account=polymarket:default")).body.data[0]
        assert.strictEqual(Number(after.cash) - Number(before.cash), 5, JSON.stringify([before, after]))
        const store = yield* OrderStore
        const events = (yield* store.eventsAfter(0, 10_000)).filter((e) => e.kind === "position.settled")
        assert.strictEqual(events.length, 1)
        assert.strictEqual((events[0]!.payload as any).cash_change, "5")
      }).pipe(
        // a market the desk does not stream is read back: its resolution is booked by the next reconcile
        Effect.provide(server(trading, { reconcileEveryMs: 300 }))
      ),
    30_000
  )

  it.live(
    "a won position is redeemable with its amount until the wallet redeems its tokens, then it shows redeemed",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        assert.strictEqual((yield* settled(taken.body.id)).body.filled, "5")
        x.resolve("yes")
        const position = (r: any) => r.body.data.find((p: any) => p.market_id === M)
        const read = authed("GET", "/trading/positions?account=polymarket:default")
        const waiting = position(yield* eventually(read, (r) => position(r)?.settled != null, "the settled position"))
        assert.deepStrictEqual(waiting.settled, {
          payout: "1",
          contracts: "5",
          realized_pnl: "2",
          ts: waiting.settled.ts,
          redeemable: true,
          redeemable_amount: "5",
          redeemed_at: null
        })
        // The Data API lists the tokens still held but not (yet, or no longer) flagged redeemable: they are not
        // redeemed while the wallet holds them, whatever the flag says.
        x.indexLag = true
        const status = authed("GET", "/trading/status")
        const runs = (r: any) => r.body.venue_state?.polymarket?.last_reconcile_at ?? 0
        const from = runs(yield* status)
        yield* eventually(status, (r) => runs(r) > from + 600, "two more reconciles")
        assert.strictEqual(position(yield* read).settled.redeemable, true)
        // asked for the markets waiting, every size
        assert.isTrue(
          x.positionQueries.some((q) => q.includes(`market=${CONDITION}`) && q.includes("sizeThreshold=0")),
          JSON.stringify(x.positionQueries)
        )

        // The wallet redeems on chain: the tokens are burned and the Data API lists the position no more.
        x.indexLag = false
        const cash = (yield* authed("GET", "/trading/balances?account=polymarket:default")).body.data[0].cash
        x.redeem()
        const done = position(
          yield* eventually(read, (r) => position(r).settled.redeemed_at !== null, "the redeemed position")
        )
        assert.strictEqual(done.settled.redeemable, false)
        assert.strictEqual(done.settled.redeemable_amount, "0")
        assert.strictEqual(done.realized_pnl, waiting.realized_pnl)
        // The ledger booked the payout as cash at settlement: redeeming it books nothing more.
        assert.strictEqual(
          (yield* authed("GET", "/trading/balances?account=polymarket:default")).body.data[0].cash,
          cash
        )
        const store = yield* OrderStore
        const events = (yield* store.eventsAfter(0, 10_000)).filter((e) => e.kind === "position.redeemed")
        assert.deepStrictEqual(
          events.map((e) => e.payload),
          [{ account: "polymarket:default", market_id: M, amount: "5", ts: done.settled.redeemed_at }]
        )
        yield* allSigned
      }).pipe(Effect.provide(server(trading, { reconcileEveryMs: 300 }))),
    30_000
  )

  it.live(
    "a position redeemable when the server stops and redeemed while it was down shows redeemed after the start",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "polymarket-redeem-"))
        const fake = yield* Effect.promise(() => startFake(SIGNER))
        const given = { fake, engineFile: join(dir, "engine.db"), reconcileEveryMs: 300 }
        const position = (r: any) => r.body.data.find((p: any) => p.market_id === M)
        const read = authed("GET", "/trading/positions?account=polymarket:default")
        try {
          yield* Effect.gen(function* () {
            const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
            assert.strictEqual((yield* settled(taken.body.id)).body.filled, "5")
            fake.resolve("yes")
            const waiting = yield* eventually(read, (r) => position(r)?.settled != null, "the settled position")
            assert.strictEqual(position(waiting).settled.redeemable_amount, "5")
          }).pipe(Effect.provide(server(trading, given)))
          // stored as it was: still redeemable after a restart while the wallet holds the tokens
          yield* Effect.gen(function* () {
            const again = position(yield* read)
            assert.strictEqual(again.settled.redeemable, true)
            assert.strictEqual(again.settled.redeemable_amount, "5")
          }).pipe(Effect.provide(server(trading, { ...given, reconcileEveryMs: 60_000 })))
          fake.redeem()
          // the start's read-back finds the tokens gone (the periodic one is a minute away)
          yield* Effect.gen(function* () {
            const done = position(
              yield* eventually(read, (r) => position(r).settled.redeemed_at !== null, "the redeemed position")
            )
            assert.strictEqual(done.settled.redeemable, false)
            assert.strictEqual(done.settled.redeemable_amount, "0")
          }).pipe(Effect.provide(server(trading, { ...given, reconcileEveryMs: 60_000 })))
          assert.deepStrictEqual(fake.refusals, [])
        } finally {
          yield* Effect.promise(() => fake.close())
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    40_000
  )

  it.live(
    "a lost position has nothing to redeem: not redeemable, amount 0, and never asked about",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        assert.strictEqual((yield* settled(taken.body.id)).body.filled, "5")
        x.resolve("no")
        const position = (r: any) => r.body.data.find((p: any) => p.market_id === M)
        const read = authed("GET", "/trading/positions?account=polymarket:default")
        const lost = position(yield* eventually(read, (r) => position(r)?.settled != null, "the settled position"))
        assert.strictEqual(lost.settled.payout, "0")
        assert.strictEqual(lost.settled.realized_pnl, "-3")
        assert.strictEqual(lost.settled.redeemable, false)
        assert.strictEqual(lost.settled.redeemable_amount, "0")
        assert.strictEqual(lost.settled.redeemed_at, null)
        // The Data API still lists the losing tokens as redeemable (for nothing); the desk does not ask about them.
        const status = authed("GET", "/trading/status")
        const runs = (r: any) => r.body.venue_state?.polymarket?.last_reconcile_at ?? 0
        const from = runs(yield* status)
        yield* eventually(status, (r) => runs(r) > from + 600, "two more reconciles")
        x.redeem()
        yield* eventually(status, (r) => runs(r) > from + 1200, "two more reconciles")
        assert.strictEqual(position(yield* read).settled.redeemed_at, null)
        const store = yield* OrderStore
        assert.isFalse((yield* store.eventsAfter(0, 10_000)).some((e) => e.kind === "position.redeemed"))
        // the Data API was read for resolutions only, never for tokens left to redeem
        assert.isTrue(x.positionQueries.length > 0)
        assert.isFalse(
          x.positionQueries.some((q) => q.includes("market=")),
          JSON.stringify(x.positionQueries)
        )
      }).pipe(Effect.provide(server(trading, { reconcileEveryMs: 300 }))),
    30_000
  )

  it.live(
    "market data: the venue with its has map, the catalog, search, a market by alias, the YES and NO books, trades",
    () =>
      Effect.gen(function* () {
        const venue = yield* request("GET", "/venues/polymarket")
        assert.strictEqual(venue.status, 200, venue.text)
        assert.strictEqual(venue.body.has.create_order, true)
        assert.strictEqual(venue.body.has.edit_order, false)
        const list = yield* request("GET", "/venues/polymarket/markets?limit=10")
        assert.strictEqual(list.status, 200, list.text)
        assert.deepStrictEqual(
          list.body.data.map((m: any) => m.id),
          [M]
        )
        const found = yield* request("GET", "/venues/polymarket/markets?search=fake%20resolve")
        assert.deepStrictEqual(
          found.body.data.map((m: any) => m.id),
          [M]
        )
        const byGamma = yield* request("GET", `/venues/polymarket/markets/${GAMMA_ID}`)
        assert.strictEqual(byGamma.status, 200, byGamma.text)
        assert.strictEqual(byGamma.body.id, M)
        // the venue sends each side best-last; ours is best first
        const book = yield* request("GET", `/venues/polymarket/markets/${M}/book`)
        assert.strictEqual(book.status, 200, book.text)
        assert.deepStrictEqual(book.body.bids[0], { price: "0.55", size: "80" })
        assert.deepStrictEqual(
          book.body.asks.map((l: any) => l.price),
          ["0.6", "0.62"]
        )
        const no = yield* request("GET", `/venues/polymarket/markets/${M}/book?side=no`)
        assert.deepStrictEqual(no.body.bids[0], { price: "0.4", size: "100" })
        const trades = yield* request("GET", `/venues/polymarket/markets/${M}/trades`)
        assert.strictEqual(trades.status, 200, trades.text)
        assert.deepStrictEqual(
          trades.body.data.map((t: any) => t.price),
          ["0.55", "0.6"]
        )
      }).pipe(Effect.provide(server(trading))),
    20_000
  )

  it.live(
    "plain orders: a resting buy, a taker fill counted once through matched and confirmed, a sell of the YES held, cancel and cancel-all",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const resting = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        assert.strictEqual(resting.status, 201, resting.text)
        assert.strictEqual(resting.body.status, "open")
        // With no price collar set, placing reads no book: no request beyond the order's own
        assert.deepStrictEqual(
          x.calls.filter((c) => c === "GET /book"),
          []
        )
        const onVenue = x.orders[0]!
        assert.deepStrictEqual([onVenue.tokenId, onVenue.side, onVenue.status], [YES_TOKEN, "BUY", "LIVE"])

        const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        assert.strictEqual(x.orders[1]!.orderType, "FAK")
        const closed = yield* settled(taken.body.id)
        assert.strictEqual(closed.body.status, "closed")
        assert.strictEqual(closed.body.filled, "5")
        // matched, then confirmed: one fill, not two
        yield* Effect.sleep("150 millis")
        const fills = yield* authed("GET", "/trading/fills?account=polymarket:default")
        assert.deepStrictEqual(
          fills.body.data.map((f: any) => [f.order_id, f.price, f.amount]),
          [[taken.body.id, "0.6", "5"]]
        )

        // YES and NO do not net: selling more than the 5 YES held would hold both, and is refused naming the rule
        const oversold = yield* place({ side: "sell", type: "limit", amount: "6", price: "0.7" })
        assert.strictEqual(oversold.status, 400, oversold.text)
        assert.match(oversold.body.error.message, /YES and NO do not net/)
        // our sell of the 5 YES held at 0.7 is a SELL of the YES token; an outside taker fills it in part
        const sell = yield* place({ side: "sell", type: "limit", amount: "5", price: "0.7" })
        assert.strictEqual(sell.status, 201, sell.text)
        const noOrder = x.orders[2]!
        assert.deepStrictEqual([noOrder.tokenId, noOrder.side], [YES_TOKEN, "SELL"])
        x.fillResting(noOrder.id, "2")
        const partly = yield* eventually(authed("GET", `/trading/orders/${sell.body.id}`), (r) => r.body.filled === "2")
        assert.strictEqual(partly.body.status, "open")
        const position = yield* authed("GET", "/trading/positions?account=polymarket:default")
        assert.strictEqual(position.body.data[0].contracts, "3", position.text)

        const canceled = yield* authed("DELETE", `/trading/orders/${resting.body.id}`)
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")
        assert.strictEqual(onVenue.status, "CANCELED")

        const all = yield* authed("DELETE", "/trading/orders?venue=polymarket")
        assert.strictEqual(all.status, 200, all.text)
        assert.strictEqual(all.body.canceled, 1)
        // one venue call for the lot, none per order
        assert.strictEqual(x.calls.filter((c) => c === "DELETE /cancel-all").length, 1)
        assert.strictEqual(x.calls.filter((c) => c === "DELETE /order").length, 1)
        assert.strictEqual(noOrder.status, "CANCELED")
        assert.strictEqual((yield* authed("GET", `/trading/orders/${sell.body.id}`)).body.status, "canceled")
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a trailing_stop follows the streamed bid up and fires on a streamed drop; its child sells on the NO token",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const stop = yield* place({ side: "sell", type: "trailing_stop", amount: "5", params: { trail: "0.05" } })
        assert.strictEqual(stop.status, 201, stop.text)
        // the engine asks the venue to stream the market of its live parent
        yield* eventually(
          Effect.sync(() => x.connections()),
          (n) => n >= 1
        )
        yield* Effect.sleep("100 millis")
        // the bid rises to 0.58: the level follows it from 0.50 to 0.53
        x.move("BUY", "0.58", "20")
        yield* eventually(
          request("GET", `/venues/polymarket/markets/${M}/book`),
          (r) => r.body.bids?.[0]?.price === "0.58"
        )
        yield* Effect.sleep("300 millis")
        assert.strictEqual((yield* authed("GET", `/trading/orders/${stop.body.id}`)).body.status, "waiting")
        // the bid falls to 0.52: above the first level, under the trailed one, so the stop fires an IOC into it
        x.move("BUY", "0.52", "20")
        x.move("BUY", "0.58", "0")
        x.move("BUY", "0.55", "0")
        const done = yield* settled(stop.body.id)
        assert.strictEqual(done.body.status, "closed", JSON.stringify(done.body.info))
        assert.strictEqual(done.body.filled, "5")
        const child = x.orders.find((o) => o.tokenId === NO_TOKEN)!
        assert.deepStrictEqual([child.side, child.orderType, child.status], ["BUY", "FAK", "MATCHED"])
        const fills = yield* eventually(
          authed("GET", "/trading/fills?account=polymarket:default"),
          (r) => r.body.data?.length === 1
        )
        assert.strictEqual(fills.body.data[0].price, "0.52")
        // the parent has ended: the market is let go
        yield* eventually(
          Effect.sync(() => x.connections()),
          (n) => n === 0
        )
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a bracket: the entry fills, the take-profit rests as a SELL of the YES held, a streamed drop fires the stop-loss and pulls it",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const bracket = yield* place({
          side: "buy",
          type: "bracket",
          amount: "5",
          params: { entry: { price: "0.6" }, take_profit: { price: "0.7" }, stop_loss: { stop_price: "0.5" } }
        })
        assert.strictEqual(bracket.status, 201, bracket.text)
        // the exits reduce the YES held: the take-profit is a SELL of the YES token at 0.7, resting
        const takeProfit = yield* eventually(
          Effect.sync(() => x.orders.find((o) => o.tokenId === YES_TOKEN && o.side === "SELL" && o.status === "LIVE")),
          (o) => o !== undefined,
          "a resting take-profit"
        )
        yield* eventually(
          Effect.sync(() => x.connections()),
          (n) => n >= 1
        )
        yield* Effect.sleep("100 millis")
        x.move("BUY", "0.49", "20")
        x.move("BUY", "0.55", "0")
        const done = yield* settled(bracket.body.id)
        assert.strictEqual(done.body.status, "closed", JSON.stringify(done.body.info))
        assert.strictEqual(takeProfit!.status, "CANCELED")
        const exit = x.orders.find((o) => o.orderType === "FAK")!
        assert.deepStrictEqual([exit.tokenId, exit.side, exit.status], [YES_TOKEN, "SELL", "MATCHED"])
        const position = yield* eventually(
          authed("GET", "/trading/positions?account=polymarket:default"),
          (r) => r.body.data?.[0]?.contracts === "0"
        )
        assert.strictEqual(position.status, 200)
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "canceling a bracket pulls its resting entry from the venue",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const bracket = yield* place({
          side: "buy",
          type: "bracket",
          amount: "5",
          params: { entry: { price: "0.5" }, take_profit: { price: "0.7" }, stop_loss: { stop_price: "0.4" } }
        })
        assert.strictEqual(bracket.status, 201, bracket.text)
        const entry = yield* eventually(
          Effect.sync(() => x.orders.find((o) => o.status === "LIVE")),
          (o) => o !== undefined
        )
        const canceled = yield* authed("DELETE", `/trading/orders/${bracket.body.id}`)
        assert.strictEqual(canceled.status, 200, canceled.text)
        yield* settled(bracket.body.id)
        assert.strictEqual(entry!.status, "CANCELED")
        assert.isTrue(x.orders.every((o) => o.status !== "LIVE"))
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a trade that fails after it matched is reversed: ledger, order and events agree",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        x.failNextTrades = 1
        const taken = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        const reversed = yield* eventually(
          authed("GET", `/trading/orders/${taken.body.id}`),
          (r) => Array.isArray(r.body.info?.reversed),
          "the reversal"
        )
        assert.strictEqual(reversed.body.filled, "0")
        const fills = yield* authed("GET", `/trading/fills?account=polymarket:default&order_id=${taken.body.id}`)
        assert.deepStrictEqual(fills.body.data.map((f: any) => [f.side, f.price, f.amount]).sort(), [
          ["buy", "0.6", "5"],
          ["sell", "0.6", "5"]
        ])
        const positions = yield* authed("GET", "/trading/positions?account=polymarket:default")
        assert.isTrue(
          positions.body.data.every((p: any) => p.contracts === "0"),
          positions.text
        )
        const balances = yield* authed("GET", "/trading/balances?account=polymarket:default")
        assert.include(balances.text, '"10000"')
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a price off the tick the venue uses now is 400 naming the two nearest valid prices on it",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        x.tick = F.of("0.1")
        const refused = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.55" })
        assert.strictEqual(refused.status, 400, refused.text)
        assert.strictEqual(refused.body.error.code, "validation_error")
        assert.strictEqual(refused.body.error.details.errors[0].field, "price")
        assert.include(refused.body.error.message, "nearest valid prices 0.5 and 0.6", refused.text)
        // the desk now knows the tick: the next off-grid price is refused before it is sent
        const sent = x.orders.length
        const again = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.45" })
        assert.strictEqual(again.status, 400, again.text)
        assert.include(again.text, "0.4")
        assert.strictEqual(x.orders.length, sent)
        const fine = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        assert.strictEqual(fine.status, 201, fine.text)
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "the heartbeat shows in /trading/status: ok while orders rest, failing when the venue refuses it",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const status = () => Effect.map(authed("GET", "/trading/status"), (r) => r.body.heartbeats?.polymarket)
        const idle = yield* status()
        assert.deepStrictEqual([idle.active, idle.state], [false, "ok"])
        const resting = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        assert.strictEqual(resting.status, 201, resting.text)
        const beating = yield* eventually(status(), (h) => h.last_ok_at !== null, "a heartbeat")
        assert.deepStrictEqual([beating.active, beating.state], [true, "ok"])
        x.failHeartbeats = true
        const failing = yield* eventually(status(), (h) => h.state === "failing", "a failed heartbeat")
        assert.strictEqual(failing.last_error, "Invalid heartbeat id")
      }).pipe(Effect.provide(server((x) => ({ ...trading(x), POLYMARKET_HEARTBEAT_MS: "100" })))),
    30_000
  )

  it.live(
    "a restart adopts the orders still resting on the venue and ends those it no longer has",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "polymarket-restart-"))
        const fake = yield* Effect.promise(() => startFake(SIGNER))
        const given = { fake, engineFile: join(dir, "engine.db") }
        try {
          const [kept, gone] = yield* Effect.gen(function* () {
            const one = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
            const two = yield* place({ side: "sell", type: "limit", amount: "5", price: "0.8" })
            assert.deepStrictEqual([one.status, two.status], [201, 201])
            return [one.body.id, two.body.id] as const
          }).pipe(Effect.provide(server(trading, given)))
          // while the server is down the venue cancels one (a missed heartbeat does that)
          fake.orders[1]!.status = "CANCELED"
          yield* Effect.gen(function* () {
            assert.strictEqual((yield* authed("GET", `/trading/orders/${kept}`)).body.status, "open")
            assert.strictEqual((yield* authed("GET", `/trading/orders/${gone}`)).body.status, "canceled")
            // the adopted order is the venue's still: its fills are heard and a cancel reaches it
            fake.fillResting(fake.orders[0]!.id, "2")
            yield* eventually(authed("GET", `/trading/orders/${kept}`), (r) => r.body.filled === "2", "the fill")
            const canceled = yield* authed("DELETE", `/trading/orders/${kept}`)
            assert.strictEqual(canceled.body.status, "canceled", canceled.text)
            assert.strictEqual(fake.orders[0]!.status, "CANCELED")
          }).pipe(Effect.provide(server(trading, given)))
          assert.deepStrictEqual(fake.refusals, [])
        } finally {
          yield* Effect.promise(() => fake.close())
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    40_000
  )

  it.live(
    "a 429 passes through with Retry-After; a dropped market socket reconnects and a stop still fires on its stream",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        // the desk reads the venue's record back at start: the next request after it is the one limited
        yield* eventually(
          authed("GET", "/trading/status"),
          (r) => r.body.venue_state?.polymarket?.last_reconcile_at != null,
          "the reconcile at start"
        )
        x.rateLimitNext = 1
        const limited = yield* request("GET", `/venues/polymarket/markets/${M}/book`)
        assert.strictEqual(limited.status, 429, limited.text)
        assert.strictEqual(limited.headers["retry-after"], "3")
        assert.strictEqual(limited.body.error.code, "rate_limit_exceeded")
        assert.strictEqual(limited.body.error.details.retryable, true)
        assert.strictEqual(limited.body.error.details.venue, "polymarket")

        const stop = yield* place({ side: "sell", type: "stop_market", amount: "5", stop_price: "0.5" })
        assert.strictEqual(stop.status, 201, stop.text)
        yield* eventually(
          Effect.sync(() => x.connections()),
          (n) => n >= 1,
          "the market channel"
        )
        const before = x.opened()
        x.dropSockets()
        yield* eventually(
          Effect.sync(() => [x.opened(), x.connections()] as const),
          ([opened, open]) => opened > before && open >= 1,
          "the reconnect"
        )
        yield* Effect.sleep("200 millis")
        // on the new connection: the bid falls through the stop, which fires and sells into it
        x.move("BUY", "0.48", "20")
        x.move("BUY", "0.55", "0")
        const done = yield* settled(stop.body.id)
        assert.strictEqual(done.body.status, "closed", JSON.stringify(done.body.info))
        assert.strictEqual(done.body.filled, "5")
        yield* allSigned
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "without a key: public data only, trading capabilities false; unreachable, routes answer 502 and serve starts",
    () =>
      Effect.gen(function* () {
        const venue = yield* request("GET", "/venues/polymarket")
        assert.strictEqual(venue.body.has.create_order, false)
        const list = yield* request("GET", "/venues/polymarket/markets")
        assert.include([502, 504], list.status, list.text)
        assert.strictEqual(list.body.error.details.venue, "polymarket")
        const sim = yield* request("GET", "/venues/sim/markets?limit=1")
        assert.strictEqual(sim.status, 200)
      }).pipe(
        Effect.provide(
          server(() => ({
            POLYMARKET_CLOB_URL: "http://127.0.0.1:9",
            POLYMARKET_GAMMA_URL: "http://127.0.0.1:9",
            POLYMARKET_DATA_URL: "http://127.0.0.1:9",
            POLYMARKET_WS_URL: "ws://127.0.0.1:9"
          }))
        )
      ),
    20_000
  )

  it.live(
    "placed, then answered 500: the order stays pending with an unknown outcome and is adopted once with its fills",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        x.placementFaults.push("500-after")
        const r = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.6" })
        // the answer was lost: 502, retryable, the order kept pending until the venue's record says
        assert.strictEqual(r.status, 502, r.text)
        assert.strictEqual(r.body.error.details.outcome, "unknown")
        const id = r.body.error.details.order_id
        assert.isString(id, r.text)
        const done = yield* eventually(authed("GET", `/trading/orders/${id}`), (o) => o.body.status === "closed")
        assert.strictEqual(done.body.filled, "5", done.text)
        yield* Effect.sleep("150 millis")
        const fills = yield* authed("GET", "/trading/fills?account=polymarket:default")
        assert.deepStrictEqual(
          fills.body.data.map((f: any) => [f.order_id, f.amount]),
          [[id, "5"]]
        )
        assert.strictEqual(x.orders.length, 1)
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "answered 500 without placing: rejected once the look-up finds nothing; a venue-side cancel reaches the desk",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        x.placementFaults.push("500-before")
        const r = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        const id = r.body.id ?? r.body.error?.details?.order_id
        assert.isString(id, r.text)
        yield* eventually(authed("GET", `/trading/orders/${id}`), (o) => o.body.status === "rejected")
        assert.deepStrictEqual(x.orders, [])
        const resting = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        assert.strictEqual(resting.status, 201, resting.text)
        x.cancelOnVenue(x.orders[0]!.id)
        yield* eventually(authed("GET", `/trading/orders/${resting.body.id}`), (o) => o.body.status === "canceled")
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a hung placement answers 504 venue_timeout, retryable, and the order is kept",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        x.placementFaults.push("hang-after")
        const r = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
        assert.strictEqual(r.status, 504, r.text)
        assert.strictEqual(r.body.error.code, "venue_timeout")
        assert.strictEqual(r.body.error.details.retryable, true)
        const id = r.body.error.details.order_id
        yield* eventually(authed("GET", `/trading/orders/${id}`), (o) => o.body.status === "open")
      }).pipe(Effect.provide(server(trading))),
    40_000
  )

  it.live(
    "an order filled while the server was down is booked filled at start, with its fill, not marked canceled",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "polymarket-down-"))
        const fake = yield* Effect.promise(() => startFake(SIGNER))
        const given = { fake, engineFile: join(dir, "engine.db") }
        try {
          const id = yield* Effect.gen(function* () {
            const one = yield* place({ side: "buy", type: "limit", amount: "5", price: "0.5" })
            assert.strictEqual(one.status, 201, one.text)
            return one.body.id as string
          }).pipe(Effect.provide(server(trading, given)))
          // while the server is down an outside taker fills the whole order: the venue no longer lists it as open
          fake.fillResting(fake.orders[0]!.id, "5")
          yield* Effect.gen(function* () {
            const done = yield* eventually(authed("GET", `/trading/orders/${id}`), (r) => r.body.status !== "open")
            assert.deepStrictEqual([done.body.status, done.body.filled], ["closed", "5"], done.text)
            const fills = yield* eventually(
              authed("GET", "/trading/fills?account=polymarket:default"),
              (r) => r.body.data.length > 0
            )
            assert.deepStrictEqual(
              fills.body.data.map((f: any) => [f.order_id, f.amount]),
              [[id, "5"]]
            )
          }).pipe(Effect.provide(server(trading, given)))
        } finally {
          yield* Effect.promise(() => fake.close())
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    40_000
  )
})
