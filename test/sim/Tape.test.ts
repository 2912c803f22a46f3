/** The tape format: canonical bytes, round trips, and errors that name the bad line. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import { formatTape, parseTape, parseTapeLine, type TapeEvent, type TapeHeader } from "../../sim/Tape.ts"

const header: TapeHeader = {
  type: "header",
  version: 1,
  source: "generated",
  markets: [{ id: "sim:A", title: "A", tick: "0.01", lot: "1" }],
  seed: 1
}
const events: Array<TapeEvent> = [
  { type: "snapshot", ts: 1000, market: "sim:A", bids: [["0.45", "100"]], asks: [["0.47", "30"]] },
  { type: "change", ts: 1000, market: "sim:A", side: "bid", price: "0.46", size: "5" },
  { type: "trade", ts: 1001, market: "sim:A", price: "0.47", amount: "10", taker_side: "buy" },
  { type: "quote", ts: 1001, market: "sim:A", best_bid: "0.46", best_ask: null },
  { type: "gap", ts: 1002, market: "sim:A", expected: 5, got: 7 },
  { type: "status", ts: 1003, market: "sim:A", status: "settled", result: "yes" }
]

const EXPECTED = `{"type":"header","version":1,"source":"generated","markets":[{"id":"sim:A","title":"A","tick":"0.01","lot":"1"}],"seed":1}
{"type":"snapshot","ts":1000,"market":"sim:A","bids":[["0.45","100"]],"asks":[["0.47","30"]]}
{"type":"change","ts":1000,"market":"sim:A","side":"bid","price":"0.46","size":"5"}
{"type":"trade","ts":1001,"market":"sim:A","price":"0.47","amount":"10","taker_side":"buy"}
{"type":"quote","ts":1001,"market":"sim:A","best_bid":"0.46","best_ask":null}
{"type":"gap","ts":1002,"market":"sim:A","expected":5,"got":7}
{"type":"status","ts":1003,"market":"sim:A","status":"settled","result":"yes"}
`

describe("tape format", () => {
  it("writes the documented canonical bytes whatever the key order of the objects", () => {
    expect(formatTape(header, events)).toBe(EXPECTED)
    const shuffled = events.map((e) => Object.fromEntries(Object.entries(e).reverse()) as TapeEvent)
    const h = Object.fromEntries(Object.entries(header).reverse()) as TapeHeader
    expect(formatTape(h, shuffled)).toBe(EXPECTED)
    expect(parseTape(EXPECTED)).toEqual({ header, events })
  })

  const price = fc.integer({ min: 1, max: F.SCALE - 1 }).map((n) => F.format(n as F.Fixed))
  const size = fc.integer({ min: 0, max: 10 ** 12 }).map((n) => F.format(n as F.Fixed))
  const positive = fc.integer({ min: 1, max: 10 ** 12 }).map((n) => F.format(n as F.Fixed))
  const ids = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}:\S{1,12}$/), { minLength: 1, maxLength: 4 })
  const levels = (falling: boolean) =>
    fc
      .uniqueArray(fc.integer({ min: 1, max: F.SCALE - 1 }), { maxLength: 6 })
      .chain((ps) => fc.tuple(fc.constant(ps), fc.array(positive, { minLength: ps.length, maxLength: ps.length })))
      .map(([ps, sizes]) =>
        ps
          .slice()
          .sort((a, b) => (falling ? b - a : a - b))
          .map((p, i) => [F.format(p as F.Fixed), sizes[i]!] as [string, string])
      )
  const tape = ids.chain((markets) => {
    const market = fc.constantFrom(...markets)
    const body = fc.oneof(
      fc.record({ type: fc.constant("snapshot" as const), market, bids: levels(true), asks: levels(false) }),
      fc.record({
        type: fc.constant("change" as const),
        market,
        side: fc.constantFrom("bid" as const, "ask" as const),
        price,
        size
      }),
      fc.record({
        type: fc.constant("trade" as const),
        market,
        price,
        amount: positive,
        taker_side: fc.constantFrom("buy" as const, "sell" as const)
      }),
      fc.record({
        type: fc.constant("status" as const),
        market,
        status: fc.constantFrom("open" as const, "closed" as const)
      }),
      fc.record({
        type: fc.constant("status" as const),
        market,
        status: fc.constant("settled" as const),
        result: fc.constantFrom("yes" as const, "no" as const)
      }),
      fc.record({
        type: fc.constant("quote" as const),
        market,
        best_bid: fc.option(price, { nil: null }),
        best_ask: fc.option(price, { nil: null })
      }),
      fc.record({
        type: fc.constant("gap" as const),
        market,
        expected: fc.nat(1000),
        got: fc.integer({ min: 1001, max: 5000 })
      })
    )
    return fc.record({
      header: fc.record(
        {
          type: fc.constant("header" as const),
          version: fc.constant(1 as const),
          source: fc.constantFrom("generated" as const, "polymarket" as const, "kalshi" as const),
          markets: fc.constant(markets.map((id) => ({ id, title: `title "${id}" ✓`, tick: "0.01", lot: "1" }))),
          seed: fc.integer(),
          notes: fc.string()
        },
        { requiredKeys: ["type", "version", "source", "markets"] }
      ),
      events: fc.array(fc.tuple(fc.nat(5000), body), { maxLength: 40 }).map((xs) => {
        let ts = 1_767_225_600_000
        return xs.map(([dt, b]) => ({ ...b, ts: (ts += dt) }) as TapeEvent)
      })
    })
  })

  it("parseTape(formatTape(x)) equals x, and formatting is stable", () => {
    fc.assert(
      fc.property(tape, ({ header, events }) => {
        const text = formatTape(header, events)
        const back = parseTape(text)
        expect(back).toEqual({ header, events })
        expect(formatTape(back.header, back.events)).toBe(text)
      }),
      { numRuns: 200 }
    )
  })

  it("names the line of the first bad line", () => {
    const lines = EXPECTED.split("\n")
    const withLine = (n: number, text: string) => lines.map((l, i) => (i === n - 1 ? text : l)).join("\n")
    const cases: Array<[number, string, RegExp]> = [
      [3, lines[2]!.replace('"0.46"', '"0.460"'), /canonical/],
      [3, lines[2]!.replace('"size":"5"', '"size":"-5"'), /canonical/],
      [4, lines[3]!.replace('"0.47"', '"1"'), /price/],
      [2, lines[1]!.replace("}", ',"extra":1}'), /unknown key "extra"/],
      [5, "{not json", /not JSON/],
      [6, lines[5]!.replace('"ts":1002', '"ts":999'), /before the previous line/],
      [6, lines[5]!.replace('"sim:A"', '"sim:B"'), /not in the header/],
      [2, lines[1]!.replace('[["0.45","100"]]', '[["0.44","1"],["0.45","100"]]'), /best first/],
      [7, lines[6]!.replace('"settled"', '"closed"'), /result is only allowed/],
      [3, "", /not JSON/],
      [4, lines[0]!, /second header/]
    ]
    for (const [n, text, why] of cases) {
      const run = () => parseTape(withLine(n, text))
      expect(run).toThrow(new RegExp(`^tape line ${n}: `))
      expect(run).toThrow(why)
    }
    expect(() => parseTape(lines.slice(1).join("\n"))).toThrow(/^tape line 1: /)
  })

  it("reports the line number of a damaged line anywhere in a tape", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 7 }),
        fc.constantFrom('"ts":-1', '"type":"nope"', '"market":7'),
        (n, junk) => {
          const lines = EXPECTED.split("\n")
          lines[n - 1] = lines[n - 1]!.replace(/"ts":\d+|"type":"[a-z]+"|"market":"sim:A"/, junk)
          expect(() => parseTape(lines.join("\n"))).toThrow(new RegExp(`^tape line ${n}: `))
        }
      )
    )
  })

  it("parses single lines", () => {
    expect(parseTapeLine('{"type":"quote","ts":1,"market":"kalshi:X","best_bid":null,"best_ask":"0.98"}')).toEqual({
      type: "quote",
      ts: 1,
      market: "kalshi:X",
      best_bid: null,
      best_ask: "0.98"
    })
    expect(() => parseTapeLine('{"type":"gap","ts":1,"market":"kalshi:X","expected":3,"got":3}', 9)).toThrow(
      /^tape line 9: a gap needs/
    )
  })
})
