// Several sim venues: twin catalogs worded their own way, some flipped, fair values walking together, own fees.
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as F from "../../../src/Domain/Fixed.ts"
import { MatchIndex } from "../../../src/Matching/Matcher.ts"
import { listingOfMarket } from "../../../src/Matching/Eval.ts"
import { generateMarkets, generateVenueCatalogs, simVenueId } from "../../../src/Venues/Sim/Catalog.ts"
import { SimExchange } from "../../../src/Venues/Sim/Exchange.ts"
import { simVenueFees } from "../../../src/Venues/SimVenue.ts"

const START = Date.UTC(2026, 11, 1, 14, 33, 12)
const DAY = 86_400_000
const DAY_START = Math.floor(START / DAY) * DAY

describe("generateVenueCatalogs", () => {
  it("with one venue is the single sim venue's catalog, unlinked", () => {
    const [only, ...rest] = generateVenueCatalogs(7, START, 24, 1)
    expect(rest).toHaveLength(0)
    expect(JSON.stringify(only)).toBe(JSON.stringify(generateMarkets(7, START)))
    expect(only!.every((s) => s.link === undefined)).toBe(true)
  })

  it("lists on sim2 part of sim's open markets, reworded, some the other way round, fair values tied", () => {
    for (const seed of [1, 7, 42]) {
      const [sim, sim2] = generateVenueCatalogs(seed, START, 24, 2)
      const byId = new Map(sim!.map((s) => [s.market.nativeId, s]))
      expect(sim2!.length).toBeGreaterThan(4)
      expect(sim2!.length).toBeLessThan(sim!.length)
      for (const twin of sim2!) {
        expect(twin.market.venue).toBe("sim2")
        const base = byId.get(twin.link!.key)!
        expect(base.market.status).toBe("open")
        expect(base.link).toEqual({ key: base.market.nativeId, flipped: false })
        expect(twin.market.title).not.toBe(base.market.title)
        expect(twin.market.closeTime).toBe(base.market.closeTime)
        expect(twin.fairValue).toBe(twin.link!.flipped ? F.sub(F.ONE, base.fairValue) : base.fairValue)
      }
      expect(new Set(sim2!.map((s) => s.market.nativeId)).size).toBe(sim2!.length)
    }
    const all = [1, 2, 3, 7, 42].flatMap((seed) => generateVenueCatalogs(seed, START, 24, 2)[1]!)
    expect(all.some((s) => s.link!.flipped)).toBe(true)
    expect(all.some((s) => !s.link!.flipped)).toBe(true)
  })

  it("is deterministic from the seed and gives each venue its own catalog", () => {
    expect(JSON.stringify(generateVenueCatalogs(3, START, 24, 3))).toBe(
      JSON.stringify(generateVenueCatalogs(3, START, 24, 3))
    )
    const [, sim2, sim3] = generateVenueCatalogs(3, START, 24, 3)
    expect(sim3!.every((s) => s.market.venue === simVenueId(3))).toBe(true)
    expect(JSON.stringify(sim2!.map((s) => s.market.title))).not.toBe(JSON.stringify(sim3!.map((s) => s.market.title)))
  })

  it("the matcher finds each twin with the side_map its wording implies", () => {
    for (const seed of [1, 2, 7, 42]) {
      const catalogs = generateVenueCatalogs(seed, START, 48, 2)
      const index = new MatchIndex()
      catalogs.forEach((c, i) =>
        index.setCatalog(
          simVenueId(i + 1),
          c.map((s) => listingOfMarket(s.market))
        )
      )
      for (const twin of catalogs[1]!) {
        const answer = index.match(`sim:${twin.link!.key}`, "sim2")
        expect(answer?.matched, `sim:${twin.link!.key}`).toEqual({
          id: `sim2:${twin.market.nativeId}`,
          venue: "sim2",
          side_map: twin.link!.flipped ? { yes: "no", no: "yes" } : { yes: "yes", no: "no" }
        })
        // and back: a game's twin may answer with the other team's market of the game, then stated the same way
        const back = index.match(`sim2:${twin.market.nativeId}`, "sim")!.matched!
        if (back.id === `sim:${twin.link!.key}`)
          expect(back.side_map).toEqual(twin.link!.flipped ? { yes: "no", no: "yes" } : { yes: "yes", no: "no" })
        else {
          expect(twin.market.category).toBe("Sports")
          expect(index.listing(back.id)!.eventId).toBe(twin.market.eventId.toUpperCase())
          expect(back.side_map).toEqual({ yes: "yes", no: "no" })
        }
      }
    }
  })
})

describe("linked sim exchanges", () => {
  it("a twin's fair value moves exactly with its market's (as the complement when flipped)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 400 }), (seed, steps) => {
        const [sim, sim2] = generateVenueCatalogs(seed, DAY_START, 24, 2)
        const a = new SimExchange({ seed, startMs: START, catalog: sim! })
        const b = new SimExchange({ seed, startMs: START, catalog: sim2!, fees: simVenueFees(2) })
        a.advanceTo(START + steps * 1000)
        b.advanceTo(START + steps * 1000)
        for (const twin of sim2!) {
          const base = a.fairValue(twin.link!.key)
          const own = b.fairValue(twin.market.nativeId)
          if (a.market(twin.link!.key)!.status !== "open") continue
          expect(own).toBe(twin.link!.flipped ? F.sub(F.ONE, base) : base)
        }
      }),
      { numRuns: 25 }
    )
  })

  it("each venue charges its own fees", () => {
    const [, sim2] = generateVenueCatalogs(5, DAY_START, 24, 2)
    const b = new SimExchange({ seed: 5, startMs: START, catalog: sim2!, fees: simVenueFees(2) })
    const market = sim2![0]!.market.nativeId
    const ask = b.book(market).asks[0]!
    const result = b.placeOrder(
      { marketId: market, side: "buy", price: ask.price, amount: F.of("10"), tif: "ioc" },
      START
    )
    expect(result._tag).toBe("Accepted")
    if (result._tag !== "Accepted") return
    const p = ask.price
    // 0.04 × 10 × p × (1 − p), rounded up to the cent
    const raw = F.mul(F.mul(F.mul(F.of("0.04"), F.of("10")), p), F.sub(F.ONE, p))
    expect(result.order.fee).toBe(F.roundTo(raw, F.of("0.01"), "up"))
    expect(simVenueFees(1).takerRate).toBe(F.of("0.07"))
    expect(simVenueFees(2).makerRate).toBe(F.of("0.01"))
  })
})
