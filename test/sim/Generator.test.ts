/** The seeded tape generator: determinism, book invariants, trades at the touch, settlements, speed. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import { DEFAULT_START_MS, generateTape, type GenerateOptions } from "../../sim/Generator.ts"
import { formatTape, parseTape, type TapeEvent } from "../../sim/Tape.ts"
import { TapeBook } from "../../sim/TapeBook.ts"

const CENT = F.of("0.01")
const onGrid = (price: string) => {
  const p = F.of(price)
  return F.isMultipleOf(p, CENT) && p >= CENT && p <= F.of("0.99")
}

/** Replays a generated tape and checks every invariant the generator promises (plain checks: tapes are long). */
const checkInvariants = (options: GenerateOptions, events: ReadonlyArray<TapeEvent>) => {
  const count = options.markets
  const start = options.startMs ?? DEFAULT_START_MS
  const step = options.stepMs ?? 250
  const books = new Map<string, TapeBook>()
  const settled = new Set<string>()
  const settling = new Map<string, number>()
  let trades = 0
  const check = (ok: boolean, i: number, what: string) => {
    if (!ok) throw new Error(`event ${i} ${JSON.stringify(events[i])}: ${what}`)
  }
  const whole = (s: string) => F.isMultipleOf(F.of(s), F.ONE)
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    check(i >= count || (e.type === "snapshot" && e.ts === start), i, "one opening snapshot per market")
    check((e.ts - start) % step === 0 && e.ts >= (events[i - 1]?.ts ?? start), i, "ts on the step grid, in order")
    check(!settled.has(e.market), i, "nothing after settlement")
    let book = books.get(e.market)
    if (book === undefined) books.set(e.market, (book = new TapeBook()))
    switch (e.type) {
      case "snapshot":
        for (const [p, sz] of [...e.bids, ...e.asks]) check(onGrid(p) && whole(sz), i, "levels on the grid, whole lots")
        if (i >= count) {
          check(e.bids.length + e.asks.length === 0 && settling.get(e.market) === 1, i, "empty snapshot after closed")
          settling.set(e.market, 2)
        }
        break
      case "change":
        check(onGrid(e.price) && whole(e.size), i, "change on the grid, whole lots")
        break
      case "trade": {
        trades++
        const side = e.taker_side === "buy" ? "ask" : "bid"
        const touch = side === "ask" ? book.bestAsk() : book.bestBid()
        const price = F.of(e.price)
        const before = book.sizeAt(side, price)
        check(onGrid(e.price) && touch === price, i, "trade at the touch")
        check(F.of(e.amount) <= before, i, "trade no larger than the level")
        const next = events[i + 1]
        check(
          next?.type === "change" &&
            next.market === e.market &&
            next.ts === e.ts &&
            next.side === side &&
            next.price === e.price &&
            next.size === F.format(F.sub(before, F.of(e.amount))),
          i,
          "trade followed by the change it caused"
        )
        break
      }
      case "status":
        if (e.status === "closed") settling.set(e.market, 1)
        else {
          check(
            e.status === "settled" && e.result !== undefined && settling.get(e.market) === 2,
            i,
            "closed, cleared, settled"
          )
          settled.add(e.market)
        }
        break
      default:
        check(false, i, "unexpected event type")
    }
    book.apply(e)
    check(!book.isCrossed(), i, "book not crossed")
  }
  return { trades, settled: settled.size }
}

describe("generateTape", () => {
  it("gives byte-identical text for the same options and different text for another seed", () => {
    const a = generateTape({ seed: 42, markets: 3, durationS: 300 })
    const b = generateTape({ seed: 42, markets: 3, durationS: 300 })
    const c = generateTape({ seed: 43, markets: 3, durationS: 300 })
    const text = formatTape(a.header, a.events)
    expect(formatTape(b.header, b.events)).toBe(text)
    expect(formatTape(c.header, c.events)).not.toBe(text)
    expect(parseTape(text)).toEqual(a)
    expect(a.header).toMatchObject({ source: "generated", seed: 42 })
    expect(a.header.markets.map((m) => m.id)).toEqual(["sim:GEN-001", "sim:GEN-002", "sim:GEN-003"])
  })

  it("keeps one market's path when other markets are added", () => {
    const one = generateTape({ seed: 5, markets: 1, durationS: 120 }).events
    const three = generateTape({ seed: 5, markets: 3, durationS: 120 }).events.filter((e) => e.market === "sim:GEN-001")
    expect(three).toEqual(one)
  })

  it("never crosses the book, stays on the grid in [0.01, 0.99], and trades only at the touch", () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 600 }),
        fc.constantFrom(50, 250, 1000),
        (seed, markets, durationS, stepMs) => {
          const options = { seed, markets, durationS, stepMs, startMs: 1_000_000 }
          const { header, events } = generateTape(options)
          expect(parseTape(formatTape(header, events)).events).toEqual(events)
          checkInvariants(options, events)
        }
      ),
      { numRuns: 30 }
    )
  })

  it("has busy and quiet stretches, news, and settlements over a long run", () => {
    const options = { seed: 11, markets: 8, durationS: 4 * 3600 }
    const { events } = generateTape(options)
    const { trades, settled } = checkInvariants(options, events)
    expect(trades).toBeGreaterThan(1000)
    expect(settled).toBeGreaterThan(0)
    const perMinute = new Map<number, number>()
    for (const e of events) {
      if (e.type !== "trade" || e.market !== "sim:GEN-001") continue
      const minute = Math.floor((e.ts - DEFAULT_START_MS) / 60_000)
      perMinute.set(minute, (perMinute.get(minute) ?? 0) + 1)
    }
    const counts = Array.from({ length: 60 }, (_, m) => perMinute.get(m) ?? 0)
    expect(Math.max(...counts)).toBeGreaterThan(5 * Math.max(1, Math.min(...counts)))
  })

  it("rejects bad options", () => {
    expect(() => generateTape({ seed: 1.5, markets: 1, durationS: 1 })).toThrow(/seed/)
    expect(() => generateTape({ seed: 1, markets: 0, durationS: 1 })).toThrow(/markets/)
    expect(() => generateTape({ seed: 1, markets: 1, durationS: -1 })).toThrow(/durationS/)
    expect(() => generateTape({ seed: 1, markets: 1, durationS: 1, stepMs: 0 })).toThrow(/stepMs/)
  })
})
