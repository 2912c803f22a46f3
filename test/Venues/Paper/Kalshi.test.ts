/** `kalshi:paper` on the fake Kalshi exchange: orders that never reach it, fills by queue position from its stream. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import type { FakeKalshi, FakeMarketSpec } from "../Kalshi/Fake.ts"
import { Exchange, publicEnv, serverOn, tradingEnv, TWO_LEVELS } from "../Kalshi/Helpers.ts"
import { authed, eventually } from "../ServeVenues.ts"

const MARKETS: ReadonlyArray<FakeMarketSpec> = [
  { ...TWO_LEVELS, ticker: "KXPAPER-26-A", event: "KXPAPER-26", title: "Will paper fill?" }
]
const TICKER = "KXPAPER-26-A"
const A = `kalshi:${TICKER}`

/** The server over `sim,kalshi`, Kalshi pointed at the fake, with the account's key or with public data only. */
const server = (withKey: boolean) =>
  serverOn(MARKETS, { env: (x) => (withKey ? tradingEnv : publicEnv)(x, 1500), sim: { seed: 7, markets: 4 } })

/** A paper buy of 3 at 0.40, behind the 10 YES the fake shows there. */
const placeBehind = authed("POST", "/trading/orders", {
  account: "kalshi:paper",
  market_id: A,
  side: "buy",
  type: "limit",
  amount: "3",
  price: "0.40"
})

/** Requests that would have placed, changed or canceled an order on the fake. */
const orderRequests = (x: FakeKalshi) => x.requests.filter((r) => r.method !== "GET" && r.path.includes("/portfolio/"))

describe("kalshi:paper on the fake exchange", () => {
  const scenario = (withKey: boolean) =>
    Effect.gen(function* () {
      const x = yield* Exchange
      const accounts = (yield* authed("GET", "/trading/accounts")).body
      assert.include(JSON.stringify(accounts), "kalshi:paper")

      const placed = yield* placeBehind
      assert.strictEqual(placed.status, 201, placed.text)
      assert.strictEqual(placed.body.status, "open")
      assert.strictEqual(placed.body.info.paper, true)
      assert.deepStrictEqual(orderRequests(x), [])
      const order = authed("GET", `/trading/orders/${placed.body.id}?account=kalshi:paper`)

      // Others sell 9 of the 10 YES ahead at 0.40: the paper order is still behind one.
      x.trade(TICKER, "no", "0.40", "9")
      yield* Effect.sleep("1500 millis")
      assert.strictEqual((yield* order).body.filled, "0")
      // The last one at 0.40, then 2 through it at 0.38: the paper order, priced better, takes those 2.
      x.trade(TICKER, "no", "0.40", "1")
      x.trade(TICKER, "no", "0.38", "2")
      const partly = yield* eventually(order, (r) => r.body.filled !== "0")
      assert.strictEqual(partly.body.filled, "2", partly.text)
      assert.strictEqual(partly.body.status, "open")
      x.trade(TICKER, "no", "0.38", "5")
      const done = yield* eventually(order, (r) => r.body.status === "closed")
      assert.strictEqual(done.body.filled, "3", done.text)
      assert.strictEqual(done.body.average_price, "0.4")

      // A crossing buy takes the YES ask (NO bids at 0.55) as a taker and pays Kalshi's taker fee:
      // 0.07 × 2 × 0.45 × 0.55 = 0.03465, up to the hundredth of a cent.
      const taker = yield* authed("POST", "/trading/orders", {
        account: "kalshi:paper",
        market_id: A,
        side: "buy",
        type: "limit",
        amount: "2",
        price: "0.45",
        time_in_force: "ioc"
      })
      assert.strictEqual(taker.status, 201, taker.text)
      assert.strictEqual(taker.body.filled, "2", taker.text)
      assert.strictEqual(taker.body.fee, "0.0347")
      assert.deepStrictEqual(orderRequests(x), [])
      assert.deepStrictEqual(x.orders, [])

      const fills = (yield* authed("GET", "/trading/fills?account=kalshi:paper&limit=100")).body.data
      assert.deepStrictEqual(fills.map((f: any) => [f.price, f.amount, f.liquidity, f.fee]).reverse(), [
        ["0.4", "2", "maker", "0"],
        ["0.4", "1", "maker", "0"],
        ["0.45", "2", "taker", "0.0347"]
      ])
      let cost = F.ZERO
      let fees = F.ZERO
      let contracts = F.ZERO
      for (const f of fills) {
        cost = F.add(cost, F.mul(F.of(f.price), F.of(f.amount)))
        fees = F.add(fees, F.of(f.fee))
        contracts = F.add(contracts, F.of(f.amount))
      }
      const balance = (yield* authed("GET", "/trading/balances?account=kalshi:paper")).body.data[0]
      assert.strictEqual(balance.cash, F.format(F.sub(F.sub(F.of("10000"), cost), fees)))
      assert.strictEqual(balance.cash, "9997.8653")
      const position = (yield* authed("GET", "/trading/positions?account=kalshi:paper")).body.data[0]
      assert.strictEqual(position.contracts, F.format(contracts))
      assert.strictEqual(position.average_price, F.format(F.div(cost, contracts)))
      assert.strictEqual(position.fees, F.format(fees))
      const pnl = (yield* authed("GET", "/trading/pnl?account=kalshi:paper&level=account")).body.data
      assert.strictEqual(pnl[0].fees, F.format(fees))
      assert.strictEqual(pnl[0].realized, "0")

      // The real account on the venue has none of it; without a key there is none, and nothing private was asked.
      if (withKey) {
        assert.deepStrictEqual((yield* authed("GET", "/trading/fills?account=kalshi:default")).body.data, [])
        // The market pauses: a paper order resting there ends canceled, as the venue's own would.
        const resting = yield* authed("POST", "/trading/orders", {
          account: "kalshi:paper",
          market_id: A,
          side: "buy",
          type: "limit",
          amount: "1",
          price: "0.30"
        })
        assert.strictEqual(resting.body.status, "open", resting.text)
        x.lifecycle(TICKER, "deactivated", "paused")
        const ended = yield* eventually(
          authed("GET", `/trading/orders/${resting.body.id}?account=kalshi:paper`),
          (r) => r.body.status !== "open"
        )
        assert.strictEqual(ended.body.status, "canceled", ended.text)
      } else {
        assert.notInclude(JSON.stringify(accounts), "kalshi:default")
        assert.deepStrictEqual(
          x.requests.filter((r) => r.path.includes("/portfolio/")),
          []
        )
      }
    }).pipe(Effect.provide(server(withKey)))

  it.live(
    "orders never reach the venue; they fill by queue position from its streamed book and trades; P&L agrees",
    () => scenario(true),
    30_000
  )

  it.live(
    "a level the stream thins out before the venue lists the trade that thinned it counts once",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const placed = yield* placeBehind
        assert.strictEqual(placed.status, 201, placed.text)
        const order = authed("GET", `/trading/orders/${placed.body.id}?account=kalshi:paper`)
        // 9 of the 10 ahead trade: the socket says so first, the trade list a moment later.
        x.move(TICKER, "yes", "0.40", "-9")
        yield* Effect.sleep("300 millis")
        x.print(TICKER, "no", "0.40", "9")
        yield* Effect.sleep("2500 millis")
        assert.strictEqual((yield* order).body.filled, "0")
        // One is left ahead: a trade of 2 at the level fills 1.
        x.trade(TICKER, "no", "0.40", "2")
        const filled = yield* eventually(order, (r) => r.body.filled !== "0")
        assert.strictEqual(filled.body.filled, "1", filled.text)
        assert.deepStrictEqual(orderRequests(x), [])
      }).pipe(Effect.provide(server(true))),
    30_000
  )

  it.live(
    "without credentials, kalshi:paper trades on the public book and trades it reads",
    () => scenario(false),
    30_000
  )
})
