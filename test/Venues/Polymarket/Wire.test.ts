/** Every recorded Polymarket REST body parses into our records: markets, books, trades. */
import { Either } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import {
  ClobBook,
  ClobPriceHistory,
  DataTrades,
  decode,
  fillFee,
  GammaEventsPage,
  GammaMarkets,
  GammaSearch,
  marketsOfEvents,
  toBook,
  toMarket,
  toTrade,
  yesIndex
} from "../../../src/Venues/Polymarket/Wire.ts"

const REST = new URL("../../../../shared/fixtures/recorded/polymarket/rest/", import.meta.url)
const haveShared = existsSync(fileURLToPath(REST))
const json = (name: string): unknown => JSON.parse(readFileSync(new URL(name, REST), "utf8"))
const ok = <A>(e: Either.Either<A, string>): A => {
  if (Either.isLeft(e)) throw new Error(e.left)
  return e.right
}

const NO_FEE = { taker: F.ZERO, maker: F.ZERO, step: F.of("0.00001") }
const FED_NO_CHANGE = "0xa3b36b2d6104d34af4e6c6215fc818e43352e78a748fbfb0b85e3a35f71dec9a"
const FED_YES_TOKEN = "5615282760875985231868508008056959876238536896643315063916840237042205273721"

describe.skipIf(!haveShared)(
  haveShared
    ? "recorded Polymarket REST bodies"
    : "recorded Polymarket REST bodies — SKIPPED: ../shared/fixtures is absent",
  () => {
    const market = () => toMarket(ok(decode(GammaMarkets)(json("market.json")))[0]!)!

    it("a Gamma market: condition id, both tokens from the JSON-encoded strings, tick, min size, neg risk, fees", () => {
      const m = market()
      expect(m.nativeId).toBe(FED_NO_CHANGE)
      expect(m.gammaId).toBe("2252244")
      expect(m.slug).toMatch(/^will-there-be-no-change-in-fed-interest-rates/)
      expect(m.yesToken).toBe(FED_YES_TOKEN)
      expect(m.noToken).toMatch(/^97050921740416192996/)
      expect([m.yesOutcome, m.noOutcome]).toEqual(["Yes", "No"])
      expect(m.tick).toBe(F.of("0.01"))
      expect(m.minSize).toBe(F.of("5"))
      expect(m.lot).toBe(F.of("0.01"))
      expect(m.negRisk).toBe(true)
      expect(m.status).toBe("open")
      expect(m.eventId).toBe("481717")
      expect(m.closeTime).toBe(Date.UTC(2026, 8, 16))
      expect(m.fees).toEqual({
        enabled: true,
        type: "economics_fees",
        rate: F.of("0.05"),
        exponent: 1,
        takerOnly: true,
        rebateRate: F.of("0.25"),
        makerBaseFeeBps: 1000,
        takerBaseFeeBps: 1000
      })
    })

    it("an events page: every market with a book, the one awaiting deployment left out, the cursor kept", () => {
      const page = ok(decode(GammaEventsPage)(json("events.json")))
      expect(page.events).toHaveLength(1)
      expect(page.events[0]!.markets).toHaveLength(7)
      expect(page.next_cursor).toMatch(/^S8oZ0z/)
      const markets = marketsOfEvents(page.events)
      expect(markets).toHaveLength(6)
      expect(new Set(markets.map((m) => m.eventId))).toEqual(new Set(["16183"]))
      expect(markets.map((m) => F.format(m.tick)).sort()).toEqual(["0.001", "0.001", "0.001", "0.01", "0.01", "0.01"])
      expect(markets.every((m) => m.category === "Crypto")).toBe(true)
      const settled = markets.filter((m) => m.status === "settled")
      expect(settled.map((m) => m.result)).toEqual(["no", "no"])
      expect(settled.every((m) => !m.acceptingOrders)).toBe(true)
      expect(markets.filter((m) => m.status === "open")).toHaveLength(4)
    })

    it("a search answer: ten markets over two events, ticks 0.01 and 0.001", () => {
      const s = ok(decode(GammaSearch)(json("search.json")))
      expect(s.pagination).toEqual({ hasMore: true, totalResults: 719 })
      const markets = marketsOfEvents(s.events ?? [])
      expect(markets).toHaveLength(10)
      expect(markets.some((m) => m.nativeId === FED_NO_CHANGE)).toBe(true)
      expect(new Set(markets.map((m) => F.format(m.tick)))).toEqual(new Set(["0.01", "0.001"]))
      expect(markets.every((m) => m.negRisk)).toBe(true)
    })

    it("a CLOB book arrives best-last and comes out best first, exact", () => {
      const raw = ok(decode(ClobBook)(json("book.json")))
      expect(raw.asks[0]!.price).toBe(F.of("0.99"))
      const book = toBook(raw, market())
      expect(book.ts).toBe(1789471790532)
      expect(book.bids[0]).toEqual({ price: F.of("0.1"), size: F.of("153102.72") })
      expect(book.bids.at(-1)).toEqual({ price: F.of("0.01"), size: F.of("1141330.3") })
      expect(book.asks[0]!.price).toBeGreaterThan(book.bids[0]!.price)
      for (let i = 1; i < book.bids.length; i++) expect(book.bids[i]!.price).toBeLessThan(book.bids[i - 1]!.price)
      for (let i = 1; i < book.asks.length; i++) expect(book.asks[i]!.price).toBeGreaterThan(book.asks[i - 1]!.price)
      expect(raw.tick_size).toBe(F.of("0.01"))
      expect(raw.neg_risk).toBe(true)
    })

    it("the NO token's book is the YES book mirrored at 1 − p", () => {
      const raw = ok(decode(ClobBook)(json("book.json")))
      const m = market()
      const asNo = toBook({ ...raw, asset_id: m.noToken }, m)
      // the NO token's best ask (0.11) is a YES bid at 0.89; its best bid (0.10) a YES ask at 0.90
      expect(asNo.bids[0]).toEqual({ price: F.of("0.89"), size: F.of("99515.25") })
      expect(asNo.asks[0]).toEqual({ price: F.of("0.9"), size: F.of("153102.72") })
      expect(asNo.bids.length + asNo.asks.length).toBe(raw.bids.length + raw.asks.length)
    })

    it("Data API trades become YES trades; a NO trade is turned", () => {
      const trades = ok(decode(DataTrades)(json("trades.json")))
      const m = market()
      const ours = trades.map((t) => toTrade(t, m)!)
      expect(ours.map((t) => [F.format(t.price), F.format(t.amount), t.takerSide, t.ts])).toEqual([
        ["0.11", "36", "buy", 1789471768000],
        ["0.11", "725", "buy", 1789471768000]
      ])
      expect(new Set(ours.map((t) => t.id)).size).toBe(2)
      const no = toTrade({ ...trades[0]!, asset: m.noToken }, m)!
      expect([F.format(no.price), no.takerSide]).toEqual(["0.89", "sell"])
    })

    it("price history parses exactly", () => {
      const h = ok(decode(ClobPriceHistory)(json("prices.json")))
      expect(h.history).toHaveLength(25)
      expect(h.history[0]!.p).toBe(F.of("0.195"))
    })
  }
)

describe("Polymarket wire rules", () => {
  it("the YES leg is the outcome named Yes, else the first", () => {
    expect(yesIndex(["No", "Yes"])).toBe(1)
    expect(yesIndex(["Lakers", "Celtics"])).toBe(0)
  })

  it("a market whose outcomes put No first takes its YES token from the second place", () => {
    const m = toMarket({
      id: "1",
      conditionId: "0xc",
      outcomes: ["No", "Yes"],
      clobTokenIds: ["111", "222"],
      active: true,
      closed: false
    })!
    expect([m.yesToken, m.noToken]).toEqual(["222", "111"])
  })

  it("a market of the venue's second protocol trades its positionIds as tokens", () => {
    const m = toMarket({
      id: "1",
      conditionId: "0xc",
      outcomes: ["Yes", "No"],
      clobTokenIds: ["111", "222"],
      version: "v2",
      positionIds: ["333", "444"],
      active: true,
      closed: false
    })!
    expect([m.protocol, m.yesToken, m.noToken]).toEqual([2, "333", "444"])
    expect(toMarket({ id: "1", conditionId: "0xc", clobTokenIds: ["111", "222"], active: true })!.protocol).toBe(1)
  })

  it("fees: the market states its schedule for the desk to reserve; a fill's fee is the trade's rate on p × (1 − p)", () => {
    const base = { id: "1", conditionId: "0xc", clobTokenIds: ["111", "222"], active: true, feesEnabled: true }
    const m = toMarket({ ...base, feeSchedule: { rate: F.of("0.02"), exponent: 2, takerOnly: true } })!
    expect(m.feeSchedule).toEqual({ taker: F.of("0.02"), maker: F.ZERO, step: F.of("0.00001") })
    expect(toMarket({ ...base, feeSchedule: { rate: F.of("0.02"), exponent: 0.5 } })!.feeSchedule).toBeUndefined()
    expect(toMarket({ ...base, feesEnabled: false })!.feeSchedule).toEqual(NO_FEE)
    // 100 shares at 0.3, 200 bps: 100 × 0.02 × 0.21 = 0.42; squared curve: 100 × 0.02 × 0.0441 = 0.0882
    expect(F.format(fillFee(200, 1, F.of("0.3"), F.of("100")))).toBe("0.42")
    expect(F.format(fillFee(200, 2, F.of("0.3"), F.of("100")))).toBe("0.0882")
    expect(fillFee(0, 1, F.of("0.3"), F.of("100"))).toBe(F.ZERO)
  })

  it("a closed market priced 0/1 is settled with its result on the YES leg", () => {
    const m = toMarket({
      id: "1",
      conditionId: "0xc",
      outcomes: ["No", "Yes"],
      outcomePrices: ["1", "0"],
      clobTokenIds: ["111", "222"],
      active: true,
      closed: true
    })!
    expect([m.status, m.result]).toEqual(["settled", "no"])
  })

  it("a price with more than six places is refused rather than rounded", () => {
    expect(
      Either.isLeft(
        decode(ClobBook)({
          market: "m",
          asset_id: "a",
          timestamp: "1",
          bids: [{ price: "0.1234567", size: "1" }],
          asks: []
        })
      )
    ).toBe(true)
  })
})
