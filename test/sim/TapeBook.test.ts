/** TapeBook against a naive model, and the quote checker. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import { checkQuotes, TapeBook } from "../../sim/TapeBook.ts"
import type { TapeEvent } from "../../sim/Tape.ts"

describe("TapeBook", () => {
  it("applies snapshots and changes exactly", () => {
    const book = new TapeBook()
    expect(book.bestBid()).toBeNull()
    expect(book.bestAsk()).toBeNull()
    book.apply({
      type: "snapshot",
      ts: 0,
      market: "sim:A",
      bids: [
        ["0.45", "100"],
        ["0.44", "1.5"]
      ],
      asks: [["0.47", "30"]]
    })
    expect(book.bestBid()).toBe(F.of("0.45"))
    expect(book.bestAsk()).toBe(F.of("0.47"))
    book.apply({ type: "change", ts: 1, market: "sim:A", side: "bid", price: "0.46", size: "0.000001" })
    book.apply({ type: "change", ts: 1, market: "sim:A", side: "ask", price: "0.47", size: "0" })
    book.apply({ type: "trade", ts: 1, market: "sim:A", price: "0.47", amount: "30", taker_side: "buy" })
    expect(book.bestBid()).toBe(F.of("0.46"))
    expect(book.bestAsk()).toBeNull()
    expect(book.levels("bid")).toEqual([
      [F.of("0.46"), F.of("0.000001")],
      [F.of("0.45"), F.of("100")],
      [F.of("0.44"), F.of("1.5")]
    ])
    expect(book.levels("bid", 1)).toEqual([[F.of("0.46"), F.of("0.000001")]])
    expect(book.toSnapshotLevels("bid")).toEqual([
      ["0.46", "0.000001"],
      ["0.45", "100"],
      ["0.44", "1.5"]
    ])
    book.apply({ type: "snapshot", ts: 2, market: "sim:A", bids: [], asks: [] })
    expect(book.depth("bid") + book.depth("ask")).toBe(0)
  })

  it("agrees with a sort-everything model on random changes", () => {
    const op = fc.record({
      side: fc.constantFrom("bid" as const, "ask" as const),
      price: fc.integer({ min: 1, max: 99 }),
      size: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 10 ** 9 }))
    })
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), fc.integer({ min: 1, max: 8 }), (ops, depth) => {
        const book = new TapeBook()
        const model = { bid: new Map<number, number>(), ask: new Map<number, number>() }
        for (const o of ops) {
          const price = F.div(F.fromInt(o.price), F.fromInt(100))
          book.set(o.side, price, o.size as F.Fixed)
          if (o.size === 0) model[o.side].delete(price)
          else model[o.side].set(price, o.size)
          const bids = [...model.bid.entries()].sort((a, b) => b[0] - a[0])
          const asks = [...model.ask.entries()].sort((a, b) => a[0] - b[0])
          expect(book.levels("bid")).toEqual(bids)
          expect(book.levels("ask", depth)).toEqual(asks.slice(0, depth))
          expect(book.bestBid()).toBe(bids[0]?.[0] ?? null)
          expect(book.bestAsk()).toBe(asks[0]?.[0] ?? null)
          expect(book.sizeAt(o.side, price)).toBe(o.size)
        }
      }),
      { numRuns: 100 }
    )
  })

  it("checks stated quotes per market and counts those before any snapshot", () => {
    const events: Array<TapeEvent> = [
      { type: "quote", ts: 0, market: "sim:A", best_bid: "0.4", best_ask: null },
      { type: "snapshot", ts: 1, market: "sim:A", bids: [["0.4", "1"]], asks: [] },
      { type: "snapshot", ts: 1, market: "sim:B", bids: [], asks: [["0.6", "1"]] },
      { type: "quote", ts: 2, market: "sim:A", best_bid: "0.4", best_ask: null },
      { type: "quote", ts: 2, market: "sim:B", best_bid: null, best_ask: "0.61" }
    ]
    const r = checkQuotes(events)
    expect(r.checked).toBe(2)
    expect(r.matched).toBe(1)
    expect(r.beforeSnapshot).toBe(1)
    expect(r.mismatches).toEqual([
      { index: 4, market: "sim:B", ts: 2, stated: { bid: null, ask: "0.61" }, book: { bid: null, ask: "0.6" } }
    ])
  })
  it("compares a quote after the rest of its market's book events at the same ts, or at its own position when asked", () => {
    const events: Array<TapeEvent> = [
      { type: "snapshot", ts: 1, market: "sim:A", bids: [["0.4", "1"]], asks: [["0.6", "1"]] },
      { type: "change", ts: 5, market: "sim:A", side: "bid", price: "0.41", size: "2" },
      { type: "quote", ts: 5, market: "sim:A", best_bid: "0.41", best_ask: "0.59" },
      { type: "change", ts: 5, market: "sim:A", side: "ask", price: "0.59", size: "3" },
      { type: "change", ts: 6, market: "sim:A", side: "ask", price: "0.59", size: "0" }
    ]
    expect(checkQuotes(events)).toMatchObject({ checked: 1, matched: 1, mismatches: [] })
    expect(checkQuotes(events, { at: "event" })).toMatchObject({
      checked: 1,
      matched: 0,
      mismatches: [{ index: 2, book: { bid: "0.41", ask: "0.6" } }]
    })
  })
})
