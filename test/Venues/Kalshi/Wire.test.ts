/** Every recorded Kalshi REST body parses into our records, exactly; the tick grid and fees come from the venue. */
import { Either } from "effect"
import fc from "fast-check"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import * as W from "../../../src/Venues/Kalshi/Wire.ts"

const REST = new URL("../../../../shared/fixtures/recorded/kalshi/rest/", import.meta.url)
const haveRest = existsSync(fileURLToPath(REST))
const body = (name: string): unknown => JSON.parse(readFileSync(new URL(name, REST), "utf8"))
const decode = <A, I>(schema: Parameters<typeof W.decodeEither<A, I>>[0], name: string): A =>
  Either.getOrThrowWith(W.decodeEither(schema)(body(name)), (e) => new Error(`${name}: ${e}`))
const right = <A>(e: Either.Either<A, string>): A => Either.getOrThrowWith(e, (s) => new Error(s))
const f = F.of

describe.skipIf(!haveRest)(
  haveRest ? "recorded REST bodies" : "recorded REST bodies — SKIPPED: ../shared/fixtures/recorded/kalshi is absent",
  () => {
    it("events.json: the event's market with its title, status, times and the grid of price_ranges", () => {
      const r = decode(W.EventsResponse, "events.json")
      expect(r.cursor).toBe("CgYI8Oj1nQ8SDUtYRUxPTk1BUlMtOTk")
      const markets = W.marketsOfEvents(r.events)
      expect(markets).toEqual([
        {
          venue: "kalshi",
          nativeId: "KXELONMARS-99",
          eventId: "KXELONMARS-99",
          title: "Will Elon Musk visit Mars before Aug 1, 2099?",
          subtitle: "Mars",
          category: "World",
          status: "open",
          openTime: Date.UTC(2025, 7, 28, 20, 45),
          closeTime: Date.UTC(2099, 7, 1, 4, 59),
          tick: f("0.01"),
          lot: F.ONE,
          result: null,
          // the catalog's own quote, which market lists show without reading the book
          quote: { bestBid: f("0.1"), bestAsk: f("0.12"), last: f("0.1") }
        }
      ])
      const m = r.events[0]!.markets![0]!
      expect(m.yes_bid_dollars).toBe(f("0.1"))
      expect(m.yes_ask_dollars).toBe(f("0.12"))
      expect(m.open_interest_fp).toBe(f("40065.58"))
      expect(W.tickGrid(m)).toEqual([{ start: F.ZERO, end: F.ONE, step: f("0.01") }])
    })

    it("orderbook.json: YES bids as they come, YES asks are the NO bids at 1 − p, best first", () => {
      const book = W.toBook(decode(W.OrderbookResponse, "orderbook.json"), 7)
      expect(book.ts).toBe(7)
      expect(book.bids).toHaveLength(10)
      expect(book.asks).toHaveLength(28)
      expect(book.bids[0]).toEqual({ price: f("0.1"), size: f("79.35") })
      expect(book.bids.at(-1)).toEqual({ price: f("0.01"), size: f("4008.78") })
      // the best NO bid 0.88 × 265.22 is the YES ask 0.12 × 265.22: the market's yes_ask in events.json
      expect(book.asks[0]).toEqual({ price: f("0.12"), size: f("265.22") })
      expect(book.asks.at(-1)).toEqual({ price: f("0.99"), size: f("13501") })
      expect(book.asks.find((l) => l.price === f("0.53"))).toEqual({ price: f("0.53"), size: f("72.5") })
      for (let i = 1; i < book.asks.length; i++) expect(book.asks[i]!.price).toBeGreaterThan(book.asks[i - 1]!.price)
    })

    it("series.json and trading_get_series_id.json: the fee schedule", () => {
      for (const name of ["series.json", "trading_get_series_id.json"]) {
        const s = decode(W.SeriesResponse, name).series
        expect(right(W.feeSchedule(s))).toEqual({ type: "quadratic", multiplier: F.ONE })
      }
    })

    it("trades.json: exact counts and prices, taker NO is our sell", () => {
      const r = decode(W.TradesResponse, "trades.json")
      const trades = r.trades.map((t) => right(W.toTrade(t)))
      expect(trades.map((t) => [F.format(t.price), F.format(t.amount), t.takerSide])).toEqual([
        ["0.1", "30.3", "sell"],
        ["0.1", "17.7", "sell"],
        ["0.1", "20", "sell"]
      ])
      expect(trades[0]).toMatchObject({
        id: "0722fcf3-4e49-8b90-bb6f-5f402b4c5d55",
        ts: Date.parse("2026-09-14T06:18:43.130Z")
      })
    })

    it("candles.json", () => {
      const r = decode(W.CandlesticksResponse, "candles.json")
      expect(r.candlesticks).toHaveLength(6)
      expect(r.candlesticks[0]!.yes_ask.close_dollars).toBe(f("0.12"))
    })

    it("trading_get_orders.json and trading_get_orders_id.json: resting bids and an ask (a NO bid) at YES prices", () => {
      const r = decode(W.OrdersResponse, "trading_get_orders.json")
      const orders = r.orders.map((o) => right(W.toOrder(o, 0)))
      expect(orders.length).toBeGreaterThan(2)
      expect(orders.map((o) => [o.side, F.format(o.price), o.status, F.format(o.filled)])).toEqual([
        ["buy", "0.02", "open", "0"],
        ["buy", "0.02", "open", "0"],
        ["buy", "0.02", "open", "0"],
        ["sell", "0.98", "open", "0"],
        ["buy", "0.03", "open", "0"]
      ])
      expect(orders[0]).toMatchObject({
        venueOrderId: "01a0afc0-4eb8-7bda-8572-a31aa5cee4c9",
        clientOrderId: "4bb9a138-daab-4bf5-96ee-999fc3a613d4",
        nativeId: "KXGOLDH-26SEP1712-T4407.99",
        amount: F.ONE,
        averagePrice: null,
        updatedAt: Date.parse("2026-09-17T14:23:31.336Z")
      })
      const withExpiry = r.orders.find((o) => o.expiration_time)!
      expect(right(W.toOrder(withExpiry, Date.parse("2026-09-18T00:00:00Z"))).status).toBe("open")
      const one = right(W.toOrder(decode(W.OrderResponse, "trading_get_orders_id.json").order, 0))
      expect(one).toMatchObject({
        venueOrderId: "01a0afc0-46e8-7596-b183-1ff448331615",
        amount: f("2"),
        status: "open"
      })
    })

    it("trading_get_fills.json: a taker fill with its exact fee", () => {
      const fills = decode(W.FillsResponse, "trading_get_fills.json").fills.map((x) => right(W.toFill(x)))
      expect(fills).toEqual([
        {
          tradeId: "072210b7-9701-9f67-dbeb-8607028b7a25",
          venueOrderId: "01a0afc0-4eb8-78d3-93cb-98d2093a3f2f",
          clientOrderId: "",
          nativeId: "KXGOLDH-26SEP1712-T4407.99",
          side: "buy",
          price: f("0.98"),
          amount: F.ONE,
          fee: f("0.0014"),
          liquidity: "taker",
          ts: 1789655011000
        }
      ])
      // the quadratic schedule gives the same fee Kalshi charged: 0.07 × 1 × 0.98 × 0.02 = 0.001372, up to 0.0014
      expect(W.estimateFee({ type: "quadratic", multiplier: F.ONE }, F.ONE, f("0.98"), "taker")).toBe(f("0.0014"))
    })

    it("trading_get_positions.json, trading_get_balance.json, trading_get_account_limits.json", () => {
      const p = decode(W.PositionsResponse, "trading_get_positions.json")
      expect(p.market_positions!.map(W.toPosition)).toEqual([
        {
          nativeId: "KXGOLDH-26SEP1712-T4407.99",
          contracts: F.ONE,
          exposure: f("0.98"),
          realizedPnl: F.ZERO,
          feesPaid: f("0.0014")
        }
      ])
      expect(W.toBalance(decode(W.BalanceResponse, "trading_get_balance.json"))).toBe(f("100"))
      expect(decode(W.AccountLimitsResponse, "trading_get_account_limits.json")).toEqual({
        usage_tier: "basic",
        read: { bucket_capacity: 600, refill_rate: 200 },
        write: { bucket_capacity: 100, refill_rate: 100 }
      })
    })

    it("the v2 order answers: create, batch create, amend, decrease, cancel, batch cancel", () => {
      expect(decode(W.CreateOrderV2Response, "trading_post_events_orders.json")).toMatchObject({
        order_id: "01a0afc0-46e8-7596-b183-1ff448331615",
        fill_count: F.ZERO,
        remaining_count: f("2")
      })
      expect(decode(W.BatchCreateOrdersV2Response, "trading_post_events_orders_batched.json").orders).toHaveLength(2)
      expect(decode(W.AmendOrderV2Response, "trading_post_events_orders_id_amend.json").ts_ms).toBe(1789655010295)
      expect(decode(W.DecreaseOrderV2Response, "trading_post_events_orders_id_decrease.json").remaining_count).toBe(
        F.ONE
      )
      expect(decode(W.CancelOrderV2Response, "trading_delete_events_orders_id.json").reduced_by).toBe(F.ONE)
      expect(decode(W.BatchCancelOrdersV2Response, "trading_delete_events_orders_batched.json").orders).toHaveLength(2)
    })

    it("order groups, settlements and the queue position", () => {
      expect(decode(W.CreateOrderGroupResponse, "trading_post_order_groups_create.json").order_group_id).toBe(
        "699f1df0-2284-4cd5-9c27-6bc130110b53"
      )
      expect(decode(W.OrderGroupResponse, "trading_get_order_groups_id.json").contracts_limit_fp).toBe(f("5"))
      expect(decode(W.SettlementsResponse, "trading_get_settlements.json").settlements).toEqual([])
      expect(decode(W.QueuePositionResponse, "trading_get_orders_id_queue_position.json").queue_position_fp).toBe(
        F.ZERO
      )
    })
  }
)

describe("Kalshi wire forms", () => {
  it("legacy cent fields are the fallback, exact", () => {
    const t = right(
      W.toTrade(
        right(
          W.decodeEither(W.KTrade)({
            trade_id: "t",
            ticker: "X",
            created_time: "2026-01-01T00:00:00Z",
            yes_price: 37,
            count: 4,
            taker_side: "yes"
          })
        )
      )
    )
    expect(t).toMatchObject({ price: f("0.37"), amount: f("4"), takerSide: "buy" })
    const book = W.toBook(
      right(W.decodeEither(W.OrderbookResponse)({ orderbook: { yes: [[3, 10]], no: [[95, 2]] } })),
      0
    )
    expect(book).toEqual({
      ts: 0,
      bids: [{ price: f("0.03"), size: f("10") }],
      asks: [{ price: f("0.05"), size: f("2") }]
    })
    const m = right(W.decodeEither(W.KMarket)({ ticker: "X", event_ticker: "E", status: "active", tick_size: 1 }))
    expect(W.tickGrid(m)).toEqual([{ start: F.ZERO, end: F.ONE, step: f("0.01") }])
  })

  it("a decimal with more than six places or a float is refused, not rounded", () => {
    expect(Either.isLeft(W.decodeEither(W.FixedFromString)("0.1234567"))).toBe(true)
    expect(Either.isLeft(W.decodeEither(W.Price)(0.5))).toBe(true)
    expect(Either.isLeft(W.decodeEither(W.Count)(1.5))).toBe(true)
  })

  it("an order or fill of the bid book is our buy, of the ask book our sell; legacy side × action agrees", () => {
    expect(W.sideOf({ book_side: "bid" })).toBe("buy")
    expect(W.sideOf({ book_side: "ask" })).toBe("sell")
    expect(W.sideOf({ side: "yes", action: "buy" })).toBe("buy")
    expect(W.sideOf({ side: "no", action: "sell" })).toBe("buy")
    expect(W.sideOf({ side: "no", action: "buy" })).toBe("sell")
    expect(W.sideOf({ side: "yes", action: "sell" })).toBe("sell")
  })

  it("market statuses: active is open, paused and closed are closed, determined and finalized settled", () => {
    expect(["active", "open", "paused", "inactive", "closed", "determined", "finalized"].map(W.marketStatus)).toEqual([
      "open",
      "open",
      "closed",
      "closed",
      "closed",
      "settled",
      "settled"
    ])
  })

  it("a tapered grid: sub-cent steps at the ends, cents in the middle", () => {
    const grid = [
      { start: F.ZERO, end: f("0.1"), step: f("0.001") },
      { start: f("0.1"), end: f("0.9"), step: f("0.01") },
      { start: f("0.9"), end: F.ONE, step: f("0.001") }
    ]
    expect(W.finestTick(grid)).toBe(f("0.001"))
    expect(W.onGrid(grid, f("0.055"))).toBe(true)
    expect(W.onGrid(grid, f("0.555"))).toBe(false)
    expect(W.onGrid(grid, f("0.56"))).toBe(true)
    expect(W.onGrid(grid, F.ONE)).toBe(false)
    expect(W.nearestOnGrid(grid, f("0.555"))).toEqual({ below: f("0.55"), above: f("0.56") })
    expect(W.nearestOnGrid(grid, f("0.0005"))).toEqual({ below: undefined, above: f("0.001") })
  })

  it("property: every price the grid calls valid lies on one band's steps, and the nearest prices bracket any price", () => {
    const grid = [
      { start: F.ZERO, end: f("0.1"), step: f("0.001") },
      { start: f("0.1"), end: f("0.9"), step: f("0.01") },
      { start: f("0.9"), end: F.ONE, step: f("0.001") }
    ]
    fc.assert(
      fc.property(fc.integer({ min: 1, max: F.SCALE - 1 }), (n) => {
        const p = n as F.Fixed
        const { below, above } = W.nearestOnGrid(grid, p)
        if (below !== undefined) expect(W.onGrid(grid, below) && below <= p).toBe(true)
        if (above !== undefined) expect(W.onGrid(grid, above) && above >= p).toBe(true)
        if (W.onGrid(grid, p)) expect([below, above]).toEqual([p, p])
        else expect(below !== p && above !== p).toBe(true)
      })
    )
  })

  it("fees: maker fees only on the maker schedules, the multiplier scales, rounding is up to $0.0001", () => {
    const q = { type: "quadratic" as const, multiplier: F.ONE }
    expect(W.estimateFee(q, f("10"), f("0.5"), "maker")).toBe(F.ZERO)
    expect(W.estimateFee(q, f("10"), f("0.5"), "taker")).toBe(f("0.175"))
    expect(W.estimateFee({ type: "quadratic_with_maker_fees", multiplier: F.ONE }, f("10"), f("0.5"), "maker")).toBe(
      f("0.0438")
    )
    expect(W.estimateFee({ type: "quadratic", multiplier: f("0.5") }, f("10"), f("0.5"), "taker")).toBe(f("0.0875"))
    expect(W.estimateFee({ type: "flat", multiplier: F.ONE }, f("10"), f("0.5"), "taker")).toBeUndefined()
  })
})

describe("direction, settlements and fee overrides as the venue states them", () => {
  it("every documented action is read; book_side decides, then outcome_side; a fill without either is unreadable", () => {
    for (const action of ["buy", "sell", "sell_partial", "sell_to_close", ""] as const) {
      expect(W.sideOf({ book_side: "bid", side: "no", action })).toBe("buy")
      expect(W.sideOf({ book_side: "ask", side: "yes", action })).toBe("sell")
      expect(W.sideOf({ outcome_side: "no", action })).toBe("sell")
    }
    expect(W.sideOf({ side: "yes", action: "sell_to_close" })).toBe("sell")
    expect(W.sideOf({ side: "no", action: "sell_partial" })).toBe("buy")
    const fill = (over: Record<string, unknown>) =>
      Either.flatMap(
        W.decodeEither(W.KFill)({
          trade_id: "t",
          order_id: "o",
          market_ticker: "M",
          is_taker: true,
          yes_price_dollars: "0.4000",
          count_fp: "1.00",
          ...over
        }),
        W.toFill
      )
    expect(Either.isRight(fill({ action: "sell_to_close", book_side: "ask" }))).toBe(true)
    expect(Either.isLeft(fill({ action: "" }))).toBe(true)
    expect(Either.isLeft(fill({ action: "short" }))).toBe(true)
  })

  it("status unknown is not terminal", () => {
    expect(W.orderStatus("unknown", f("2"), false)).toBe("open")
    expect(W.orderStatus("unknown", F.ZERO, false)).toBe("closed")
  })

  it("a settlement pays 1, 0, or the venue's figure for a scalar result", () => {
    const s = (market_result: string, value: number | null) =>
      W.toSettlement({ ticker: "M", market_result, settled_time: "2026-01-02T00:00:00Z", value })
    expect(right(s("yes", 100))).toEqual({ nativeId: "M", payout: F.ONE, ts: Date.parse("2026-01-02T00:00:00Z") })
    expect(right(s("no", 0)).payout).toBe(F.ZERO)
    expect(right(s("scalar", 37)).payout).toBe(f("0.37"))
    expect(Either.isLeft(s("scalar", null))).toBe(true)
  })

  it("the override in force is the latest scheduled before now; a cleared one falls back to the series", () => {
    const change = (id: string, at: number, type: string | null, multiplier: number | null) => ({
      id,
      event_ticker: "E",
      fee_type_override: type,
      fee_multiplier_override: multiplier,
      scheduled_ts: new Date(at).toISOString()
    })
    const now = Date.parse("2026-06-01T00:00:00Z")
    expect(right(W.feeOverride([], now))).toBeNull()
    expect(
      right(W.feeOverride([change("a", now - 10, "quadratic", 2), change("b", now + 10, "flat", 1)], now))
    ).toEqual({ type: "quadratic", multiplier: f("2") })
    expect(
      right(W.feeOverride([change("a", now - 20, "quadratic", 2), change("b", now - 10, null, null)], now))
    ).toBeNull()
  })
})
