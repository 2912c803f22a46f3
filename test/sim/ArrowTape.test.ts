import { assert, describe, expect, it } from "@effect/vitest"
import { tableFromArrays, tableToIPC } from "apache-arrow"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"
import { arrowTapeBytes, isArrowTape, readArrowTape, writeArrowTapeFile } from "../../sim/ArrowTape.ts"
import { convertKalshi } from "../../sim/convert/Kalshi.ts"
import { convertPolymarket } from "../../sim/convert/Polymarket.ts"
import { generateTape } from "../../sim/Generator.ts"
import { replay, Scenario } from "../../sim/Replay.ts"
import { formatTape, parseTape, type TapeEvent, type TapeHeader } from "../../sim/Tape.ts"
import { streamNdjsonFile, streamTapeFile, streamTapeText } from "../../sim/TapeStream.ts"
import * as F from "../../src/Domain/Fixed.ts"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tapes/${name}`, import.meta.url), "utf8")
const dir = mkdtempSync(join(tmpdir(), "crossbook-arrow-tape-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const tapes: Array<[string, string]> = [
  ["demo", fixture("demo.jsonl")],
  [
    "kalshi",
    (() => {
      const c = convertKalshi(fixture("kalshi_ws_excerpt.jsonl"))
      return formatTape(c.header, c.events)
    })()
  ],
  [
    "polymarket",
    (() => {
      const c = convertPolymarket(fixture("polymarket_ws_excerpt.jsonl"))
      return formatTape(c.header, c.events)
    })()
  ],
  [
    "generated, two venues",
    (() => {
      const g = generateTape({ seed: 5, markets: 3, durationS: 120, venues: 2 })
      return formatTape(g.header, g.events)
    })()
  ]
]

const header: TapeHeader = {
  type: "header",
  version: 1,
  source: "kalshi",
  markets: [
    { id: "kalshi:A", title: "A", tick: "0.01", lot: "1" },
    { id: "kalshi:B-2", title: "B", tick: "0.001", lot: "0.5" }
  ]
}

const price = fc.integer({ min: 1, max: F.SCALE - 1 }).map((v) => F.format(v as F.Fixed))
const size = fc.integer({ min: 0, max: 2 ** 52 }).map((v) => F.format(v as F.Fixed))
const positive = fc.integer({ min: 1, max: 2 ** 52 }).map((v) => F.format(v as F.Fixed))
const market = fc.constantFrom("kalshi:A", "kalshi:B-2")
const levels = (falling: boolean) =>
  fc
    .uniqueArray(fc.integer({ min: 1, max: F.SCALE - 1 }), { maxLength: 6 })
    .chain((ps) =>
      fc.tuple(
        fc.constant([...ps].sort((a, b) => (falling ? b - a : a - b))),
        fc.array(positive, { minLength: ps.length, maxLength: ps.length })
      )
    )
    .map(([ps, sizes]) => ps.map((p, i) => [F.format(p as F.Fixed), sizes[i]!] as const))
/** Any event of any type, its `ts` set later. */
const event: fc.Arbitrary<TapeEvent> = fc.oneof(
  fc
    .record({ market, bids: levels(true), asks: levels(false) })
    .map((e) => ({ type: "snapshot" as const, ts: 0, ...e })),
  fc
    .record({ market, side: fc.constantFrom("bid" as const, "ask" as const), price, size })
    .map((e) => ({ type: "change" as const, ts: 0, ...e })),
  fc
    .record({ market, price, amount: positive, taker_side: fc.constantFrom("buy" as const, "sell" as const) })
    .map((e) => ({ type: "trade" as const, ts: 0, ...e })),
  fc
    .record({ market, status: fc.constantFrom("open" as const, "closed" as const) })
    .map((e) => ({ type: "status" as const, ts: 0, ...e })),
  fc.record({ market, result: fc.constantFrom("yes" as const, "no" as const) }).map((e) => ({
    type: "status" as const,
    ts: 0,
    status: "settled" as const,
    ...e
  })),
  fc
    .record({ market, best_bid: fc.option(price, { nil: null }), best_ask: fc.option(price, { nil: null }) })
    .map((e) => ({ type: "quote" as const, ts: 0, ...e })),
  fc
    .record({ market, expected: fc.nat(), got: fc.nat() })
    .filter((e) => e.expected !== e.got)
    .map((e) => ({ type: "gap" as const, ts: 0, ...e }))
)
const tape = fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 40 }), event), { maxLength: 60 }).map((pairs) => {
  let ts = 1_700_000_000_000
  return pairs.map(([step, e]) => ({ ...e, ts: (ts += step % 5 === 0 ? step : 0) }))
})

describe("the Arrow tape", () => {
  it.each(tapes)("%s: NDJSON to Arrow and back gives the same bytes", (_, text) => {
    const { header: h, events } = parseTape(text)
    const bytes = arrowTapeBytes(h, events, 7)
    assert.isTrue(isArrowTape(bytes))
    const back = readArrowTape(bytes)
    assert.strictEqual(formatTape(back.header, [...back.events]), text)
  })

  it("any events of every type, in batches of any size, come back as they went in", () => {
    fc.assert(
      fc.property(tape, fc.integer({ min: 1, max: 20 }), (events, rows) => {
        const back = readArrowTape(arrowTapeBytes(header, events, rows))
        expect([...back.events]).toEqual(events)
        // And what comes back is a valid tape: the NDJSON parser takes its text.
        expect(parseTape(formatTape(back.header, events)).events).toEqual(events)
      }),
      { seed: 42, numRuns: 60 }
    )
  })

  it("a file is written a batch at a time and read back from disk the same", async () => {
    const text = tapes[3]![1]
    const { header: h, events } = parseTape(text)
    const path = join(dir, "generated.arrow")
    await writeArrowTapeFile(path, h, events)
    const stream = streamTapeFile(path)
    assert.strictEqual(formatTape(stream.header, [...stream.events]), text)
    assert.strictEqual(stream.progress(), 1)
  })

  it("refuses Arrow data that is not a tape, and a tape whose events go back in time", () => {
    const other = tableToIPC(tableFromArrays({ ts: Float64Array.from([1, 2]) }), "file")
    expect(() => readArrowTape(other)).toThrow(/not an Arrow tape/)
    const events: Array<TapeEvent> = [
      { type: "trade", ts: 20, market: "kalshi:A", price: "0.5", amount: "1", taker_side: "buy" },
      { type: "trade", ts: 10, market: "kalshi:A", price: "0.5", amount: "1", taker_side: "buy" }
    ]
    const stream = readArrowTape(arrowTapeBytes(header, events))
    expect(() => [...stream.events]).toThrow(/arrow tape event 2: ts 10 is before/)
  })
})

describe("tapes as streams", () => {
  it.each(tapes)("%s: an NDJSON file and the text stream the events parseTape reads", (name, text) => {
    const path = join(dir, `${name.replace(/\W/g, "-")}.jsonl`)
    writeFileSync(path, text)
    const parsed = parseTape(text)
    expect([...streamNdjsonFile(path).events]).toEqual(parsed.events)
    expect([...streamTapeText(text).events]).toEqual(parsed.events)
    // Without its final newline too.
    writeFileSync(path, text.slice(0, -1))
    expect([...streamTapeFile(path).events]).toEqual(parsed.events)
  })

  it("a bad line is named by its number when the stream reaches it", () => {
    const lines = tapes[0]![1].split("\n")
    lines[5] = '{"type":"change","ts":1}'
    const path = join(dir, "bad.jsonl")
    writeFileSync(path, lines.join("\n"))
    const stream = streamNdjsonFile(path)
    expect(() => [...stream.events]).toThrow(/^tape line 6: /)
  })

  it.live("a replay over a stream of either format writes the event log it writes over the text", () =>
    Effect.gen(function* () {
      const text = fixture("demo.jsonl")
      const orders = Schema.decodeUnknownSync(Scenario)(JSON.parse(fixture("demo-orders.json")))
      const path = join(dir, "demo.jsonl")
      writeFileSync(path, text)
      const parsed = parseTape(text)
      const plain = yield* replay({ tape: text, orders, seed: 3 })
      let written = ""
      const streamed = yield* replay({
        tape: streamTapeFile(path),
        orders,
        seed: 3,
        keepLog: false,
        onLog: (lines) => (written += lines)
      })
      const arrow = yield* replay({
        tape: readArrowTape(arrowTapeBytes(parsed.header, parsed.events, 50)),
        orders,
        seed: 3
      })
      assert.strictEqual(written, plain.log)
      assert.strictEqual(streamed.log, "")
      assert.strictEqual(arrow.log, plain.log)
      assert.deepStrictEqual(streamed.summary, plain.summary)
      assert.deepStrictEqual(arrow.summary, plain.summary)
    })
  )
})
