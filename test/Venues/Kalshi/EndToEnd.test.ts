/** The trading server's layers with the Kalshi venue pointed at the fake exchange: market data, orders, streams, failures. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as F from "../../../src/Domain/Fixed.ts"
import { request } from "../../Http/TestServer.ts"
import { eventually, Owner } from "../ServeVenues.ts"
import { FakeKalshi, type FakeMarketSpec } from "./Fake.ts"
import { Exchange, placeOn, publicKey, serverOn, TWO_LEVELS, tradingEnv } from "./Helpers.ts"
import { commandErrors, requestErrors } from "./Spec.ts"

const MARKETS: ReadonlyArray<FakeMarketSpec> = [
  TWO_LEVELS,
  {
    ticker: "KXTEST-26-B",
    event: "KXTEST-26",
    title: "Will the fake hold?",
    yes: [["0.10", "3"]],
    no: [["0.80", "3"]]
  },
  { ticker: "KXSHUT-26", event: "KXSHUT-26", title: "A paused market", status: "paused", yes: [], no: [] }
]
const A = "kalshi:KXTEST-26-A"

/** The server as `serve` builds it, its venues from the list `sim,kalshi` with the fake behind Kalshi's settings. */
const server = (
  env: (fake: FakeKalshi) => Record<string, string>,
  fake: FakeKalshi | ReadonlyArray<FakeMarketSpec> = MARKETS,
  engineFile?: string
) => serverOn(fake, { env, sim: { seed: 7, markets: 4 }, engineFile })

const trading = (x: FakeKalshi) => tradingEnv(x, 1500)

const place = placeOn(A)
const authed = (method: "GET" | "DELETE" | "PATCH", path: string, json?: unknown) =>
  Effect.flatMap(Owner, (token) => request(method, path, { token, ...(json === undefined ? {} : { json }) }))

/** Every request and command the adapter sent is valid against the venue's documents, and every one was signed. */
const checkedAgainstSpecs = Effect.gen(function* () {
  const x = yield* Exchange
  assert.deepStrictEqual(
    x.requests.flatMap((r) => requestErrors(r) ?? []),
    []
  )
  assert.deepStrictEqual(commandErrors(x.commands) ?? [], [])
  assert.deepStrictEqual(x.rejectedSignatures, [])
})

describe("Kalshi end to end", () => {
  it.live(
    "market data: venues, catalog, search, market, the YES and NO books",
    () =>
      Effect.gen(function* () {
        const venues = yield* request("GET", "/venues")
        const kalshi = venues.body.data.find((v: any) => v.id === "kalshi")
        assert.strictEqual(kalshi.has.create_order, true)
        assert.deepStrictEqual(
          venues.body.data.map((v: any) => v.id),
          ["sim", "kalshi"]
        )
        const x = yield* Exchange
        const list = yield* request("GET", "/venues/kalshi/markets?limit=10")
        assert.strictEqual(list.status, 200, list.text)
        assert.deepStrictEqual(
          list.body.data.map((m: any) => m.id),
          ["kalshi:KXTEST-26-A", "kalshi:KXTEST-26-B"]
        )
        // a page is answered from the catalog's quotes: no book or trades read per row
        assert.deepStrictEqual(
          list.body.data.map((m: any) => [m.best_bid, m.best_ask]),
          [
            ["0.4", "0.45"],
            ["0.1", "0.2"]
          ]
        )
        assert.deepStrictEqual(
          x.requests.filter((r) => /orderbook|trades/.test(r.path)).map((r) => r.path),
          []
        )
        const found = yield* request("GET", "/venues/kalshi/markets?search=fake")
        assert.deepStrictEqual(
          found.body.data.map((m: any) => m.id),
          ["kalshi:KXTEST-26-B"]
        )
        const book = yield* request("GET", `/venues/kalshi/markets/${A}/book`)
        assert.strictEqual(book.status, 200, book.text)
        // the YES ask is 1 − the best NO bid: 1 − 0.55 = 0.45
        assert.deepStrictEqual(book.body.bids[0], { price: "0.4", size: "10" })
        assert.deepStrictEqual(book.body.asks[0], { price: "0.45", size: "5" })
        const no = yield* request("GET", `/venues/kalshi/markets/${A}/book?side=no`)
        assert.deepStrictEqual(no.body.bids[0], { price: "0.55", size: "5" })
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    20_000
  )

  it.live(
    "place, fill, amend and cancel; a market the venue paused is 409 market_halted; a sell is an ask",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const resting = yield* place({ side: "buy", type: "limit", amount: "4", price: "0.30" })
        assert.strictEqual(resting.status, 201, resting.text)
        assert.strictEqual(resting.body.status, "open")
        // With no price collar set, placing reads no book: no request beyond the order's own
        assert.deepStrictEqual(
          x.requests.filter((r) => /orderbook/.test(r.path)).map((r) => r.path),
          []
        )
        // the venue knows it by a client id that never repeats: this home's prefix, then the order's id
        const onVenue = x.orders.find((o) => o.client_order_id === resting.body.info.venue_client_order_id)!
        assert.isTrue(onVenue.client_order_id.endsWith(`-${resting.body.id}`))
        assert.strictEqual(onVenue.side, "bid")

        // a taker order crosses: buy 3 at 0.46 takes 3 of the NO bids at 0.55 (YES 0.45)
        const taken = yield* place({ side: "buy", type: "limit", amount: "3", price: "0.46", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        assert.strictEqual(taken.body.filled, "3")
        assert.strictEqual(taken.body.status, "closed")
        const fills = yield* eventually(
          authed("GET", "/trading/fills?account=kalshi:default"),
          (r) => r.body.data?.length === 1
        )
        assert.strictEqual(fills.body.data[0].price, "0.45")
        // 0.07 × 3 × 0.45 × 0.55 = 0.051975, rounded up to 0.0520
        assert.strictEqual(fills.body.data[0].fee, "0.052")

        // a taker order that fills reads its order and its fills back at once, not one after the other: both reads
        // are in before either is answered (each is held a while)
        x.trick("GET", /^\/portfolio\/orders\/[^/]+$/, { kind: "delay", ms: 150 })
        x.trick("GET", /^\/portfolio\/fills$/, { kind: "delay", ms: 150 })
        const from = x.timeline.length
        const again = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.46", time_in_force: "ioc" })
        assert.strictEqual(again.status, 201, again.text)
        assert.strictEqual(again.body.filled, "1")
        const reads = x.timeline
          .slice(from)
          .filter((e) => e.method === "GET" && /\/portfolio\/(orders\/|fills)/.test(e.path))
          .map((e) => `${e.at} ${e.path.replace(/.*\/portfolio\//, "").replace(/orders\/.+/, "orders/:id")}`)
        assert.deepStrictEqual(reads.slice(0, 2).sort(), ["in fills", "in orders/:id"])
        assert.deepStrictEqual(reads.slice(2).sort(), ["out fills", "out orders/:id"])

        // the resting order is filled in part by an outside taker: the fill arrives on the socket
        x.fillResting(onVenue.order_id, "1")
        const partly = yield* eventually(
          authed("GET", `/trading/orders/${resting.body.id}`),
          (r) => r.body.filled === "1"
        )
        assert.strictEqual(partly.body.status, "open")

        // a smaller size at the same price keeps the queue; a new price does not
        const smaller = yield* authed("PATCH", `/trading/orders/${resting.body.id}`, { amount: "3" })
        assert.strictEqual(smaller.status, 200, smaller.text)
        assert.strictEqual(smaller.body.queue_priority_preserved, true)
        assert.strictEqual(onVenue.initial, 3_000_000)
        const moved = yield* authed("PATCH", `/trading/orders/${resting.body.id}`, { price: "0.31" })
        assert.strictEqual(moved.status, 200, moved.text)
        assert.strictEqual(moved.body.queue_priority_preserved, false)
        assert.strictEqual(onVenue.price, 310_000)

        const canceled = yield* authed("DELETE", `/trading/orders/${resting.body.id}`)
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")
        assert.strictEqual(onVenue.status, "canceled")

        // the venue pauses a market our catalog still lists as open: its refusal is 409 market_halted
        yield* request("GET", "/venues/kalshi/markets")
        x.markets.get("KXTEST-26-B")!.status = "paused"
        const halted = yield* place({
          market_id: "kalshi:KXTEST-26-B",
          side: "buy",
          type: "limit",
          amount: "1",
          price: "0.5"
        })
        assert.strictEqual(halted.status, 409, halted.text)
        assert.strictEqual(halted.body.error.details.rule, "market_halted")
        assert.strictEqual(halted.body.error.details.venue, "kalshi")

        const sell = yield* place({ side: "sell", type: "limit", amount: "2", price: "0.70" })
        assert.strictEqual(sell.status, 201, sell.text)
        assert.strictEqual(x.orders.at(-1)!.side, "ask")
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "balances and positions of the Kalshi account are the venue's own figures",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const taken = yield* place({ side: "buy", type: "limit", amount: "3", price: "0.46", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        yield* eventually(authed("GET", "/trading/fills?account=kalshi:default"), (r) => r.body.data?.length === 1)
        // the venue holds a position the desk never saw (placed elsewhere): the venue's count wins
        x.fills.push({ ticker: "KXTEST-26-B", count_fp: "2.00", book_side: "ask" })
        const positions = yield* authed("GET", "/trading/positions?account=kalshi:default")
        assert.strictEqual(positions.status, 200, positions.text)
        assert.deepStrictEqual(positions.body.data.map((p: any) => [p.market_id, p.contracts]).sort(), [
          ["kalshi:KXTEST-26-A", "3"],
          ["kalshi:KXTEST-26-B", "-2"]
        ])
        x.balance = F.of("123.45")
        const balances = yield* authed("GET", "/trading/balances?account=kalshi:default")
        assert.strictEqual(balances.status, 200, balances.text)
        assert.strictEqual(balances.body.data[0].cash, "123.45")
        assert.strictEqual(balances.body.data[0].available, "123.45")
        const sim = yield* authed("GET", "/trading/balances?account=sim:default")
        assert.strictEqual(sim.body.data[0].cash, "10000")
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "cancel-all is one venue request when it covers every live order there",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const one = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.30" })
        const two = yield* place({ side: "sell", type: "limit", amount: "1", price: "0.70" })
        assert.deepStrictEqual([one.status, two.status], [201, 201])
        const all = yield* authed("DELETE", "/trading/orders?account=kalshi:default")
        assert.strictEqual(all.status, 200, all.text)
        assert.strictEqual(all.body.canceled, 2)
        const deletes = x.requests.filter((r) => r.method === "DELETE").map((r) => r.path)
        assert.deepStrictEqual(deletes, ["/trade-api/v2/portfolio/events/orders"])
        assert.isTrue(x.orders.every((o) => o.status === "canceled"))
        for (const id of [one.body.id, two.body.id]) {
          assert.strictEqual((yield* authed("GET", `/trading/orders/${id}`)).body.status, "canceled")
        }
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a 429 passes through with Retry-After; a timed-out placement is kept pending and found by its client id",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        x.trick("POST", /^\/portfolio\/events\/orders$/, {
          kind: "fail",
          status: 429,
          body: { error: { code: "too_many_requests", message: "rate limit exceeded" } },
          headers: { "retry-after": "3" }
        })
        const limited = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.2", client_order_id: "rl" })
        assert.strictEqual(limited.status, 429, limited.text)
        assert.strictEqual(limited.headers["retry-after"], "3")
        assert.strictEqual(limited.body.error.code, "rate_limit_exceeded")
        assert.strictEqual(limited.body.error.details.retryable, true)
        assert.strictEqual(limited.body.error.details.venue, "kalshi")

        x.trick("POST", /^\/portfolio\/events\/orders$/, { kind: "swallow" })
        const body = { side: "buy", type: "limit", amount: "1", price: "0.2", client_order_id: "lost" }
        const lost = yield* place(body)
        assert.strictEqual(lost.status, 504, lost.text)
        assert.strictEqual(lost.body.error.code, "venue_timeout")
        assert.strictEqual(lost.body.error.details.retryable, true)
        const id = lost.body.error.details.order_id as string
        const kept = yield* authed("GET", `/trading/orders/${id}`)
        assert.strictEqual(kept.body.status, "pending")
        assert.strictEqual(kept.body.info.outcome, "unknown")
        // a retry by the same client id answers the same order and places nothing
        const retry = yield* place(body)
        assert.strictEqual(retry.status, 200, retry.text)
        assert.strictEqual(retry.body.id, id)
        let found = kept.body
        for (let i = 0; i < 200 && found.status === "pending"; i++) {
          yield* Effect.sleep("25 millis")
          found = (yield* authed("GET", `/trading/orders/${id}`)).body
        }
        assert.strictEqual(found.status, "open")
        assert.strictEqual(found.info.outcome, "found")
        assert.strictEqual(found.info.reconciled, true)
        assert.strictEqual(x.orders.filter((o) => o.client_order_id === found.info.venue_client_order_id).length, 1)
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a stop on the last trade fires on a streamed trade; book changes cost no request for the last price",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const tradeReads = () => x.requests.filter((r) => r.path.endsWith("/markets/trades")).length
        const stop = yield* place({
          side: "sell",
          type: "stop_market",
          amount: "2",
          stop_price: "0.36",
          params: { trigger_source: "last" }
        })
        assert.strictEqual(stop.status, 201, stop.text)
        yield* eventually(
          Effect.sync(() => x.connections[0]?.subs.find((s) => s.channel === "trade")),
          (s) => s?.tickers.has("KXTEST-26-A") === true
        )
        const read = tradeReads()
        // The book moves (no trade): the stop's view is read again each time, its last price from the stream.
        for (const delta of ["5", "-5", "3", "-3"]) x.move("KXTEST-26-A", "yes", "0.39", delta)
        yield* Effect.sleep("200 millis")
        assert.strictEqual(tradeReads(), read, "no request for the last trade on a book change")
        assert.strictEqual((yield* authed("GET", `/trading/orders/${stop.body.id}`)).body.status, "waiting")
        // A trade at 0.35 streams on the trade channel: the last price goes through the stop.
        x.print("KXTEST-26-A", "no", "0.35", "1")
        const fired = yield* eventually(authed("GET", `/trading/orders/${stop.body.id}`), (r) =>
          ["closed", "canceled"].includes(r.body.status)
        )
        assert.strictEqual(fired.body.status, "closed", JSON.stringify(fired.body.info))
        assert.strictEqual(tradeReads(), read)
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a stop_market fires on streamed deltas; a dropped socket reconnects, resubscribes, and a lost delta is healed",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        // the engine watches the market: the first book read subscribes it on the socket
        const stop = yield* place({ side: "sell", type: "stop_market", amount: "2", stop_price: "0.36" })
        assert.strictEqual(stop.status, 201, stop.text)
        yield* eventually(
          Effect.sync(() => x.connections[0]?.subs.find((s) => s.channel === "orderbook_delta")),
          (s) => s?.tickers.has("KXTEST-26-A") === true
        )

        x.dropSockets()
        yield* eventually(
          Effect.sync(() => x.connections[0]?.subs.length ?? 0),
          (n) => n >= 3
        )
        yield* eventually(
          Effect.sync(() => x.connections[0]?.subs.find((s) => s.channel === "orderbook_delta")),
          (s) => s?.tickers.has("KXTEST-26-A") === true
        )

        // a delta is lost on the way: the gap asks for a snapshot, and the book is right again
        x.dropDeltas = 1
        x.move("KXTEST-26-A", "yes", "0.40", "-10")
        x.move("KXTEST-26-A", "yes", "0.38", "-20")
        // the best bid is now 0.35: the stop at 0.36 fires its IOC child, which sells into the YES bids
        x.move("KXTEST-26-A", "yes", "0.35", "4")
        const fired = yield* eventually(
          authed("GET", `/trading/orders/${stop.body.id}`),
          (r) => r.body.status === "closed" || r.body.status === "canceled"
        )
        assert.strictEqual(fired.body.status, "closed", JSON.stringify(fired.body.info))
        const child = x.orders.find((o) => o.side === "ask")!
        assert.strictEqual(child.filled, 2_000_000)
        const book = yield* request("GET", `/venues/kalshi/markets/${A}/book`)
        assert.deepStrictEqual(book.body.bids[0], { price: "0.35", size: "2" })
        assert.isTrue(
          x.commands.some((c: any) => c.cmd === "update_subscription" && c.params.action === "get_snapshot")
        )
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "an oco fires on streamed deltas: the stop leg's child sells, the limit leg is pulled",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const oco = yield* place({
          side: "sell",
          type: "oco",
          amount: "2",
          params: {
            legs: [
              { side: "sell", type: "limit", price: "0.60" },
              { side: "sell", type: "stop_market", stop_price: "0.36" }
            ]
          }
        })
        assert.strictEqual(oco.status, 201, oco.text)
        // the limit leg rests on the venue as an ask at 0.60
        const limitLeg = yield* eventually(
          Effect.sync(() => x.orders.find((o) => o.side === "ask" && o.price === 600_000 && o.status === "resting")),
          (o) => o !== undefined
        )
        yield* eventually(
          Effect.sync(() => x.connections[0]?.subs.find((s) => s.channel === "orderbook_delta")),
          (s) => s?.tickers.has("KXTEST-26-A") === true
        )
        x.move("KXTEST-26-A", "yes", "0.40", "-10")
        x.move("KXTEST-26-A", "yes", "0.38", "-20")
        x.move("KXTEST-26-A", "yes", "0.35", "5")
        const done = yield* eventually(authed("GET", `/trading/orders/${oco.body.id}`), (r) =>
          ["closed", "canceled"].includes(r.body.status)
        )
        assert.strictEqual(done.body.status, "closed", JSON.stringify(done.body.info))
        assert.strictEqual(limitLeg!.status, "canceled")
        assert.strictEqual(x.orders.filter((o) => o.side === "ask" && o.filled === 2_000_000).length, 1)
        yield* checkedAgainstSpecs
      }).pipe(Effect.provide(server(trading))),
    30_000
  )

  it.live(
    "a restart reconciles what changed on the venue while the server was down",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "kalshi-restart-"))
        const file = join(dir, "engine.db")
        const fake = new FakeKalshi(publicKey, MARKETS)
        try {
          const ids = yield* Effect.gen(function* () {
            const one = yield* place({ side: "buy", type: "limit", amount: "4", price: "0.30" })
            const two = yield* place({ side: "buy", type: "limit", amount: "2", price: "0.31" })
            const three = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.32" })
            assert.deepStrictEqual([one.status, two.status, three.status], [201, 201, 201])
            return [one.body.id, two.body.id, three.body.id] as const
          }).pipe(Effect.provide(server(trading, fake, file)))
          const onVenue = (id: string) => fake.orders.find((o) => o.client_order_id.endsWith(`-${id}`))!
          // while the server is down: one fills, one is canceled by the venue, one stays
          fake.fillResting(onVenue(ids[0]).order_id, "4")
          fake.cancelOutside(onVenue(ids[1]).order_id)
          yield* Effect.gen(function* () {
            const one = yield* authed("GET", `/trading/orders/${ids[0]}`)
            assert.strictEqual(one.body.status, "closed", one.text)
            assert.strictEqual(one.body.filled, "4")
            const fills = yield* authed("GET", `/trading/fills?account=kalshi:default&order_id=${ids[0]}`)
            assert.strictEqual(fills.body.data.length, 1, fills.text)
            assert.strictEqual(fills.body.data[0].liquidity, "maker")
            assert.strictEqual((yield* authed("GET", `/trading/orders/${ids[1]}`)).body.status, "canceled")
            assert.strictEqual((yield* authed("GET", `/trading/orders/${ids[2]}`)).body.status, "open")
            yield* checkedAgainstSpecs
          }).pipe(Effect.provide(server(trading, fake, file)))
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      }),
    40_000
  )

  it.live(
    "without credentials: public data only, trading capabilities false; unreachable, routes answer 502 and serve starts",
    () =>
      Effect.gen(function* () {
        const venues = yield* request("GET", "/venues/kalshi")
        assert.strictEqual(venues.status, 200)
        assert.strictEqual(venues.body.has.create_order, false)
        assert.strictEqual(venues.body.has.fetch_markets, true)
        const list = yield* request("GET", "/venues/kalshi/markets")
        assert.strictEqual(list.status, 502, list.text)
        assert.strictEqual(list.body.error.code, "venue_error")
        assert.strictEqual(list.body.error.details.venue, "kalshi")
        const sim = yield* request("GET", "/venues/sim/markets?limit=1")
        assert.strictEqual(sim.status, 200)
      }).pipe(Effect.provide(server(() => ({ KALSHI_API_URL: "http://127.0.0.1:9/trade-api/v2" })))),
    20_000
  )
})
