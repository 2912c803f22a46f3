/** `sim:paper` through real HTTP: live sim market data, orders that never reach the sim, fills by queue position. */
import { assert, describe, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect, TestClock } from "effect"
import WebSocket from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import { VenueGateway } from "../../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../../src/Venues/SimVenue.ts"
import { tradingFee, TAKER_FEE_RATE } from "../../../src/Venues/Sim/Exchange.ts"
import { OwnerToken, request, testServer } from "../../Http/TestServer.ts"

const PAPER_CASH = "500"

/** The sim moves once an hour, so what trades in a test is what the test trades; the paper feed reads every second. */
const server = testServer({ simStepMs: 3_600_000, paper: { cash: PAPER_CASH } })

const exchange = Effect.map(VenueGateway, (g) => (g.venue("sim") as SimVenue).exchange)

const settle = Effect.forEach(Array.from({ length: 30 }), () => Effect.yieldNow())
/** A second of the Clock: the paper account reads the books and trades of the markets where its orders rest. */
const tick = Effect.zipRight(TestClock.adjust("1 second"), settle)

let others = 0
/** Another trader on the sim sells `amount` into the bids at `price` and takes what is there (never the desk's). */
const hitBids = (nativeId: string, price: F.Fixed, amount: string) =>
  Effect.gen(function* () {
    const x = yield* exchange
    const result = x.placeOrder(
      { marketId: nativeId, side: "sell", price, amount: F.of(amount), tif: "ioc", clientOrderId: `other-${++others}` },
      x.now()
    )
    assert.strictEqual(result._tag, "Accepted")
    yield* tick
  })

const get = (path: string) => Effect.flatMap(OwnerToken, (token) => request("GET", path, { token }))
const post = (json: Record<string, unknown>) =>
  Effect.flatMap(OwnerToken, (token) => request("POST", "/trading/orders", { token, json }))

/**
 * A market with both sides quoted, 2 or more shown at the best bid and 4 or more below it, read from the sim itself;
 * its best bid and ask and its tick.
 */
const aMarket = Effect.gen(function* () {
  const x = yield* exchange
  const market = x.markets().find((m) => {
    const b = x.book(m.nativeId)
    const below = b.bids.slice(1).reduce((a, l) => F.add(a, l.size), F.ZERO)
    return (
      m.status === "open" &&
      b.asks.length > 0 &&
      b.bids.length > 1 &&
      b.bids[0]!.size >= F.of("2") &&
      below >= F.of("4")
    )
  })!
  const book = x.book(market.nativeId)
  return {
    nativeId: market.nativeId,
    id: `sim:${market.nativeId}`,
    bid: book.bids[0]!,
    ask: book.asks[0]!,
    tick: market.tick
  }
})

describe("sim:paper", () => {
  it.layer(server)((it) => {
    it.effect(
      "a limit rests behind the shown size and fills by queue position as the sim's trades consume the level",
      () =>
        Effect.gen(function* () {
          const x = yield* exchange
          const { nativeId, id, bid, ask, tick } = yield* aMarket
          const accounts = (yield* get("/trading/accounts")).body
          assert.include(JSON.stringify(accounts), "sim:paper")

          const placed = yield* post({
            account: "sim:paper",
            market_id: id,
            side: "buy",
            type: "limit",
            amount: "3",
            price: F.format(bid.price)
          })
          assert.strictEqual(placed.status, 201, placed.text)
          assert.strictEqual(placed.body.status, "open")
          assert.strictEqual(placed.body.info.paper, true)
          assert.strictEqual(placed.body.account.name, "paper")
          // The order never left: the sim holds no order of the desk.
          assert.strictEqual(x.openOrders().length, 0)

          // Others sell all but one of what was shown ahead at the bid: nothing reaches the paper order.
          const shown = Math.round(bid.size / F.SCALE)
          yield* hitBids(nativeId, bid.price, String(shown - 1))
          const after1 = (yield* get(`/trading/orders/${placed.body.id}?account=sim:paper`)).body
          assert.strictEqual(after1.filled, "0", JSON.stringify(after1))
          // A seller of 2 down to the lowest price: 1 finishes the size ahead at the bid, 1 trades below it and so
          // reaches the paper order first, which fills at its own price.
          yield* hitBids(nativeId, tick, "2")
          const after2 = (yield* get(`/trading/orders/${placed.body.id}?account=sim:paper`)).body
          assert.strictEqual(after2.filled, "1", JSON.stringify(after2))
          assert.strictEqual(after2.status, "open")
          yield* hitBids(nativeId, tick, "2")
          const after3 = (yield* get(`/trading/orders/${placed.body.id}?account=sim:paper`)).body
          assert.strictEqual(after3.filled, "3", JSON.stringify(after3))
          assert.strictEqual(after3.status, "closed")
          assert.strictEqual(after3.info.paper, true)

          // A crossing buy takes the sim's best ask as a taker and pays the sim's taker fee.
          const taker = yield* post({
            account: "sim:paper",
            market_id: id,
            side: "buy",
            type: "limit",
            amount: "2",
            price: F.format(ask.price),
            time_in_force: "ioc"
          })
          assert.strictEqual(taker.status, 201, taker.text)
          assert.strictEqual(taker.body.filled, "2", taker.text)
          assert.strictEqual(taker.body.fee, F.format(tradingFee(TAKER_FEE_RATE, ask.price, F.of("2"))))
          assert.strictEqual(x.openOrders().length, 0)

          // Fills, positions, balances and P&L of sim:paper agree with one another to the last decimal.
          const fills = (yield* get("/trading/fills?account=sim:paper&limit=100")).body.data
          assert.deepStrictEqual(fills.map((f: any) => [f.side, f.price, f.amount, f.liquidity]).reverse(), [
            ["buy", F.format(bid.price), "1", "maker"],
            ["buy", F.format(bid.price), "2", "maker"],
            ["buy", F.format(ask.price), "2", "taker"]
          ])
          let cost = F.ZERO
          let fees = F.ZERO
          let contracts = F.ZERO
          for (const f of fills) {
            assert.strictEqual(f.account, "sim:paper")
            cost = F.add(cost, F.mul(F.of(f.price), F.of(f.amount)))
            fees = F.add(fees, F.of(f.fee))
            contracts = F.add(contracts, F.of(f.amount))
          }
          assert.isAbove(fees, 0)
          const cash = F.sub(F.sub(F.of(PAPER_CASH), cost), fees)
          const balances = (yield* get("/trading/balances?account=sim:paper")).body.data
          assert.strictEqual(balances.length, 1)
          assert.strictEqual(balances[0].cash, F.format(cash))
          assert.strictEqual(balances[0].locked, "0")
          const positions = (yield* get("/trading/positions?account=sim:paper")).body.data
          assert.strictEqual(positions.length, 1)
          assert.strictEqual(positions[0].contracts, F.format(contracts))
          assert.strictEqual(positions[0].average_price, F.format(F.div(cost, contracts)))
          assert.strictEqual(positions[0].fees, F.format(fees))
          const pnl = (yield* get("/trading/pnl?account=sim:paper&level=account")).body.data
          assert.strictEqual(pnl.length, 1, JSON.stringify(pnl))
          assert.strictEqual(pnl[0].key, "sim:paper")
          assert.strictEqual(pnl[0].fees, F.format(fees))
          assert.strictEqual(pnl[0].realized, "0")
          // Unrealized at the position's mark, and net = realized + unrealized − fees.
          const mark = F.of(positions[0].mark)
          assert.strictEqual(pnl[0].unrealized, F.format(F.sub(F.mul(mark, contracts), cost)))
          assert.strictEqual(pnl[0].net, F.format(F.sub(F.sub(F.mul(mark, contracts), cost), fees)))

          // The real account is untouched: no fills, its cash as it started.
          assert.deepStrictEqual((yield* get("/trading/fills?account=sim:default")).body.data, [])
          const real = (yield* get("/trading/balances?account=sim:default")).body.data[0]
          assert.strictEqual(real.cash, "10000")
          // A request naming no account still means sim:default.
          assert.deepStrictEqual((yield* get("/trading/fills")).body.data, [])
        })
    )

    it.effect("the events socket carries paper orders and fills like any other", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port
        const frames = yield* Effect.async<Array<any>>((resume) => {
          const got: Array<any> = []
          const socket = new WebSocket(`ws://127.0.0.1:${port}/trading/ws/events?since=0&kinds=fill`, {
            headers: { authorization: `Bearer ${token}` }
          })
          socket.on("message", (data) => {
            got.push(JSON.parse(String(data)))
            if (got.length >= 3) {
              socket.close()
              resume(Effect.succeed(got))
            }
          })
          socket.on("error", () => resume(Effect.succeed(got)))
        })
        assert.strictEqual(frames.length, 3)
        for (const f of frames) {
          assert.strictEqual(f.kind, "fill.new")
          assert.strictEqual(f.payload.account, "sim:paper")
        }
      })
    )

    it.effect("grants on sim:paper work as on any account: trade there, nothing on sim:default", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const { id, bid } = yield* aMarket
        for (const permission of ["view", "trade"]) {
          const granted = yield* request("POST", "/trading/grants", {
            token: owner,
            json: { user: "paper-trader", account: "sim:paper", permission }
          })
          assert.strictEqual(granted.status, 201, granted.text)
        }
        const key = yield* request("POST", "/trading/keys", { token: owner, json: { user: "paper-trader" } })
        const token = key.body.token as string
        const order = { market_id: id, side: "buy", type: "limit", amount: "1", price: F.format(bid.price) }
        const onPaper = yield* request("POST", "/trading/orders", { token, json: { ...order, account: "sim:paper" } })
        assert.strictEqual(onPaper.status, 201, onPaper.text)
        const onReal = yield* request("POST", "/trading/orders", { token, json: { ...order, account: "sim:default" } })
        assert.strictEqual(onReal.status, 403, onReal.text)
        // Naming no account means sim:default, which this token may not see.
        assert.strictEqual((yield* request("GET", "/trading/orders", { token })).status, 403)
        const mine = yield* request("GET", "/trading/orders?account=sim:paper", { token })
        assert.strictEqual(mine.status, 200, mine.text)
        assert.include(
          mine.body.data.map((o: any) => o.id),
          onPaper.body.id
        )
        const canceled = yield* request("DELETE", `/trading/orders/${onPaper.body.id}?account=sim:paper`, { token })
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")
      })
    )

    it.effect("a stop_market on sim:paper fires on the sim's book and its child fills on paper", () =>
      Effect.gen(function* () {
        const x = yield* exchange
        const { id, bid } = yield* aMarket
        // A sell stop at the best bid is touched already: it fires, and its child sells into the bids.
        const stop = yield* post({
          account: "sim:paper",
          market_id: id,
          side: "sell",
          type: "stop_market",
          amount: "2",
          stop_price: F.format(bid.price)
        })
        assert.strictEqual(stop.status, 201, stop.text)
        assert.strictEqual(stop.body.info.paper, true, stop.text)
        let parent: any = undefined
        for (let i = 0; i < 20 && parent?.status !== "closed"; i++) {
          yield* tick
          parent = (yield* get(`/trading/orders/${stop.body.id}?account=sim:paper`)).body
        }
        assert.strictEqual(parent.status, "closed", JSON.stringify(parent))
        const children = (yield* get(`/trading/orders?parent_id=${stop.body.id}&account=sim:paper`)).body.data
        assert.strictEqual(children.length, 1, JSON.stringify(children))
        assert.strictEqual(children[0].account.name, "paper")
        assert.strictEqual(children[0].info.paper, true)
        assert.strictEqual(children[0].filled, "2")
        assert.isUndefined(x.orderByClientId(children[0].id))
        const fills = (yield* get(`/trading/fills?account=sim:paper&order_id=${children[0].id}`)).body.data
        assert.strictEqual(fills.length > 0, true)
        assert.strictEqual(
          fills.reduce((a: F.Fixed, f: any) => F.add(a, F.of(f.amount)), F.ZERO),
          F.of("2")
        )
        assert.strictEqual(x.openOrders().length, 0)
        assert.deepStrictEqual((yield* get("/trading/fills?account=sim:default")).body.data, [])
      })
    )
  })
})
