// The sim catalog: seeded, unique, sorted markets with sane times, grids, statuses and fair values.
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import { generateMarkets } from "../../../src/Venues/Sim/Catalog.ts"

const START = Date.UTC(2026, 11, 1, 14, 33, 12)
const DAY = 86_400_000

describe("generateMarkets", () => {
  it("is a pure function of seed and start", () => {
    expect(JSON.stringify(generateMarkets(7, START))).toBe(JSON.stringify(generateMarkets(7, START)))
    expect(JSON.stringify(generateMarkets(7, START))).not.toBe(JSON.stringify(generateMarkets(8, START)))
    expect(JSON.stringify(generateMarkets(7, START))).not.toBe(JSON.stringify(generateMarkets(7, START + 3 * DAY)))
  })

  it("gives 24 unique markets sorted by native id, in events, across categories", () => {
    for (const seed of [1, 2, 3, 42, 1234]) {
      const specs = generateMarkets(seed, START)
      expect(specs).toHaveLength(24)
      const ids = specs.map((s) => s.market.nativeId)
      expect(new Set(ids).size).toBe(24)
      expect([...ids].sort()).toEqual(ids)
      const events = new Map<string, number>()
      for (const s of specs) events.set(s.market.eventId, (events.get(s.market.eventId) ?? 0) + 1)
      expect([...events.values()].some((k) => k >= 3)).toBe(true)
      expect(new Set(specs.map((s) => s.market.category)).size).toBeGreaterThanOrEqual(5)
      for (const s of specs) expect(s.market.nativeId.startsWith(s.market.eventId + "-")).toBe(true)
    }
  })

  it("has two closed and one settled market, the rest open", () => {
    const specs = generateMarkets(5, START)
    const by = (status: string) => specs.filter((s) => s.market.status === status)
    expect(by("closed")).toHaveLength(2)
    expect(by("settled")).toHaveLength(1)
    expect(by("open")).toHaveLength(21)
    expect(["yes", "no"]).toContain(by("settled")[0]!.market.result)
    for (const s of by("open")) expect(s.market.result).toBeNull()
  })

  it("uses the sim grid, whole-minute times around the start, fair values on 0.01 in [0.05, 0.95]", () => {
    for (const seed of [1, 99, 31337]) {
      for (const { market, fairValue } of generateMarkets(seed, START)) {
        expect(market.venue).toBe("sim")
        expect(market.tick).toBe(F.of("0.01"))
        expect(market.lot).toBe(F.ONE)
        expect(market.openTime).toBeLessThan(START)
        expect(market.closeTime % 60_000).toBe(0)
        expect(market.openTime % 60_000).toBe(0)
        if (market.status === "open") {
          expect(market.closeTime).toBeGreaterThan(START + DAY)
          expect(market.closeTime).toBeLessThan(START + 60 * DAY)
        } else expect(market.closeTime).toBeLessThan(START)
        expect(F.isMultipleOf(fairValue, F.of("0.01"))).toBe(true)
        expect(fairValue).toBeGreaterThanOrEqual(F.of("0.05"))
        expect(fairValue).toBeLessThanOrEqual(F.of("0.95"))
        expect(market.title.length).toBeGreaterThan(10)
      }
    }
  })

  it("honours the count", () => {
    expect(generateMarkets(3, START, 40)).toHaveLength(40)
    expect(new Set(generateMarkets(3, START, 40).map((s) => s.market.nativeId)).size).toBe(40)
    expect(generateMarkets(3, START, 20)).toHaveLength(20)
  })
})
