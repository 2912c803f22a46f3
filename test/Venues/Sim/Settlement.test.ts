// The sim exchange resolves markets: after their close on their own, or when told; seeded, once, orders canceled.
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import { generateMarkets } from "../../../src/Venues/Sim/Catalog.ts"
import { type SimEvent, SimExchange } from "../../../src/Venues/Sim/Exchange.ts"

const START = Date.UTC(2026, 11, 1, 14, 0, 0)
const HOUR = 3_600_000
const TICK = F.of("0.01")

const settledOf = (events: ReadonlyArray<SimEvent>) =>
  events.flatMap((e) => (e._tag === "Settled" ? [[e.marketId, F.format(e.payout), e.ts] as const] : []))

/** The exchange moved an hour a step until every open market has closed and resolved; answers what resolved. */
const runOut = (seed: number) => {
  const ex = new SimExchange({ seed, startMs: START, stepMs: HOUR })
  const last = Math.max(...ex.markets().map((m) => m.closeTime))
  return { ex, settled: settledOf(ex.advanceTo(last + 4 * HOUR)) }
}

describe("sim markets resolve", () => {
  it("two hours after their close, each once, YES or NO drawn from the seed; the same seed, the same results", () => {
    const { ex, settled } = runOut(11)
    const open = generateMarkets(11, START).filter((s) => s.market.status === "open")
    expect(settled.map(([id]) => id).sort()).toEqual(open.map((s) => s.market.nativeId).sort())
    for (const [id, payout, ts] of settled) {
      const market = ex.market(id)!
      expect(market.status).toBe("settled")
      expect(market.result).toBe(payout === "1" ? "yes" : "no")
      // Closed at the first step at or after its close time, resolved two hours after that.
      expect(ts - market.closeTime).toBeGreaterThanOrEqual(2 * HOUR)
      expect(ts - market.closeTime).toBeLessThan(3 * HOUR)
      expect(ex.book(id).bids).toEqual([])
      expect(ex.book(id).asks).toEqual([])
    }
    expect(new Set(settled.map(([, p]) => p))).toEqual(new Set(["0", "1"]))
    expect(runOut(11).settled).toEqual(settled)
    expect(runOut(12).settled.map(([, p]) => p)).not.toEqual(settled.map(([, p]) => p))
    // What resolved is there to read back, from a time on.
    const since = settled[Math.floor(settled.length / 2)]![2]
    expect(ex.settlements(since).map((r) => [r.nativeId, F.format(r.payout), r.ts])).toEqual(
      settled.filter(([, , ts]) => ts >= since)
    )
  })

  it("a market whose catalog states its result resolves so", () => {
    const specs = generateMarkets(11, START).map((s) =>
      s.market.status === "open" ? { ...s, market: { ...s.market, result: "no" as const } } : s
    )
    const ex = new SimExchange({ seed: 11, startMs: START, stepMs: HOUR, catalog: specs })
    const last = Math.max(...ex.markets().map((m) => m.closeTime))
    const settled = settledOf(ex.advanceTo(last + 4 * HOUR))
    expect(settled.length).toBeGreaterThan(0)
    for (const [, payout] of settled) expect(payout).toBe("0")
  })

  it("when told: own orders resting there are canceled first, a second resolution changes nothing", () => {
    const ex = new SimExchange({ seed: 11, startMs: START, stepMs: 1000 })
    const id = ex.markets().find((m) => m.status === "open")!.nativeId
    const placed = ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE }, START)
    expect(placed._tag).toBe("Accepted")
    const events = ex.resolve(id, F.of("0.3"), START + 500)
    const cancel = events.findIndex((e) => e._tag === "OrderUpdate" && e.order.status === "canceled")
    const settled = events.findIndex((e) => e._tag === "Settled")
    expect(cancel).toBeGreaterThanOrEqual(0)
    expect(settled).toBeGreaterThan(cancel)
    expect(settledOf(events)).toEqual([[id, "0.3", START + 500]])
    expect(ex.market(id)).toMatchObject({ status: "settled", result: null })
    expect(settledOf(ex.resolve(id, F.ONE, START + 900))).toEqual([])
    expect(ex.settlements(0)).toHaveLength(1)
    const refused = ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE }, START + 1000)
    expect(refused._tag === "Refused" && refused.code).toBe("market_closed")
  })
})
