/** The Polymarket and Kalshi converters against the recorded transcripts, excerpts of them, and made-up lines. */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { convertKalshi } from "../../sim/convert/Kalshi.ts"
import { convertPolymarket } from "../../sim/convert/Polymarket.ts"
import { envelopeMs, secondsTextToMs } from "../../sim/convert/Transcript.ts"
import { formatTape, parseTape, type SnapshotEvent, type TapeEvent } from "../../sim/Tape.ts"
import { checkQuotes, TapeBook } from "../../sim/TapeBook.ts"

const SHARED = new URL("../../../shared/fixtures/recorded/", import.meta.url)
const haveShared = existsSync(fileURLToPath(SHARED))
const recorded = (path: string) => readFileSync(new URL(path, SHARED), "utf8")
const excerpt = (name: string) => readFileSync(new URL(`../../fixtures/tapes/${name}`, import.meta.url), "utf8")
const KALSHI = "kalshi:KXGOLDH-26SEP1713-T4387.99"

const roundTrips = (header: Parameters<typeof formatTape>[0], events: ReadonlyArray<TapeEvent>) => {
  const text = formatTape(header, events)
  expect(parseTape(text)).toEqual({ header, events })
  return text
}

/** Replays `from` and the changes after it up to `to` (exclusive) for one market. */
const replayBetween = (events: ReadonlyArray<TapeEvent>, market: string, from: number, to: number) => {
  const book = new TapeBook()
  let changes = 0
  for (let i = from; i < to; i++) {
    const e = events[i]!
    if (e.market !== market) continue
    if (e.type === "change") changes++
    book.apply(e)
  }
  return { book, changes }
}

/** Drops the transcript line carrying the Kalshi orderbook_delta with this seq. */
const withoutDelta = (text: string, seq: number) => {
  const lines = text.split("\n")
  const i = lines.findIndex((l) => l.includes('"type": "orderbook_delta"') && l.includes(`"seq": ${seq},`))
  expect(i).toBeGreaterThan(0)
  return { text: lines.filter((_, j) => j !== i).join("\n"), line: i + 1 }
}

describe.skipIf(!haveShared)(
  haveShared ? "recorded transcripts" : "recorded transcripts — SKIPPED: ../shared/fixtures/recorded/ is absent",
  () => {
    it("Polymarket: the replayed books match all 242 stated best bid/ask quotes", () => {
      const { header, events, report } = convertPolymarket(recorded("polymarket/ws_market_transcript.jsonl"))
      expect(report.messages).toEqual({ "out:subscribe": 2, book: 10, price_change: 121, PONG: 2, last_trade_price: 2 })
      expect(report.emitted).toEqual({ snapshot: 10, change: 242, quote: 242, trade: 2 })
      expect(report.gaps).toEqual([])
      expect(report.clamped).toBe(0)
      expect(report.skipped.map((s) => s.kind)).toEqual(["out:subscribe", "PONG", "out:subscribe", "PONG"])
      expect(header.markets).toHaveLength(6)
      roundTrips(header, events)

      const check = checkQuotes(events)
      console.info(`Polymarket: ${check.checked} quotes checked, ${check.matched} matched`)
      expect(check).toMatchObject({ checked: 242, matched: 242, beforeSnapshot: 0, mismatches: [] })

      // Compared at their own position, the two quotes of line 53 disagree: the same venue update (same timestamp,
      // same entry hashes) continues on line 54, which removes the touch level those quotes already exclude.
      const atEvent = checkQuotes(events, { at: "event" })
      expect(atEvent.checked).toBe(242)
      expect(atEvent.mismatches).toHaveLength(2)
      for (const m of atEvent.mismatches) {
        expect(m.ts).toBe(1789659377523)
        const later = events.slice(m.index + 1).find((e) => e.market === m.market && e.type === "change")
        expect(later).toMatchObject({ ts: m.ts, size: "0" })
      }
    })

    it("Polymarket: times are the venue's message timestamps", () => {
      const { events } = convertPolymarket(recorded("polymarket/ws_market_transcript.jsonl"))
      expect(events[0]).toMatchObject({ type: "snapshot", ts: 1789659361018 })
      expect(events.filter((e) => e.type === "trade")).toEqual([
        {
          type: "trade",
          ts: 1789659377561,
          market: "polymarket:91702670092197358329157407057769524483919239248439417819070465967716824465138",
          price: "0.89",
          amount: "7431.792472",
          taker_side: "buy"
        },
        {
          type: "trade",
          ts: 1789659377665,
          market: "polymarket:55159722761418013044126414276680602270318000841690689684819994448621694923050",
          price: "0.47",
          amount: "100",
          taker_side: "buy"
        }
      ])
    })

    it("Kalshi: the replayed book matches all 14 ticker quotes", () => {
      const { header, events, report } = convertKalshi(recorded("kalshi/ws_transcript.jsonl"))
      expect(report.messages).toMatchObject({ orderbook_snapshot: 2, orderbook_delta: 166, ticker: 14, trade: 1 })
      expect(report.emitted).toEqual({ snapshot: 2, change: 166, quote: 14, trade: 1 })
      expect(report.gaps).toEqual([])
      expect(report.warnings).toEqual([])
      expect(header.markets).toEqual([{ id: KALSHI, title: "KXGOLDH-26SEP1713-T4387.99", tick: "0.01", lot: "1" }])
      roundTrips(header, events)
      const check = checkQuotes(events)
      console.info(`Kalshi: ${check.checked} quotes checked, ${check.matched} matched`)
      expect(check).toMatchObject({ checked: 14, matched: 14, beforeSnapshot: 0 })
      expect(checkQuotes(events, { at: "event" }).matched).toBe(14)
      expect(events.find((e) => e.type === "trade")).toEqual({
        type: "trade",
        ts: 1789659332660,
        market: KALSHI,
        price: "0.98",
        amount: "1",
        taker_side: "buy"
      })
    })

    it("Kalshi: deltas 2–137 replayed on snapshot 1 reproduce snapshot 138 exactly", () => {
      const text = recorded("kalshi/ws_transcript.jsonl")
      const seqs = text
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l).msg)
        .filter((m) => m.type === "orderbook_snapshot" || m.type === "orderbook_delta")
        .map((m) => `${m.type === "orderbook_snapshot" ? "S" : "D"}${m.seq}`)
      const s138 = seqs.indexOf("S138")
      expect(seqs[0]).toBe("S1")
      expect(seqs.slice(1, s138)).toEqual(Array.from({ length: 136 }, (_, i) => `D${i + 2}`))

      const { events } = convertKalshi(text)
      const snaps = events.flatMap((e, i) => (e.type === "snapshot" ? [i] : []))
      expect(snaps).toHaveLength(2)
      const [first, second] = snaps as [number, number]
      const { book, changes } = replayBetween(events, KALSHI, first, second)
      expect(changes).toBe(136)
      const target = events[second] as SnapshotEvent
      expect(target.bids).toEqual([["0.01", "471"]])
      expect(target.asks).toEqual([
        ["0.98", "2499"],
        ["0.99", "100"]
      ])
      expect(book.toSnapshotLevels("bid")).toEqual(target.bids)
      expect(book.toSnapshotLevels("ask")).toEqual(target.asks)
    })

    it("Kalshi: a missing delta is reported as a gap and written as a gap event", () => {
      const { text, line } = withoutDelta(recorded("kalshi/ws_transcript.jsonl"), 50)
      const { events, report } = convertKalshi(text)
      expect(report.gaps).toEqual([{ line, market: KALSHI, sid: 1, expected: 50, got: 51 }])
      const gap = events.findIndex((e) => e.type === "gap")
      expect(events[gap]).toEqual({ type: "gap", ts: 1789659328013, market: KALSHI, expected: 50, got: 51 })
      expect(events[gap + 1]).toMatchObject({ type: "change", ts: 1789659328013 })
      expect(events.filter((e) => e.type === "gap")).toHaveLength(1)

      // The book after the gap is wrong (it missed −10) until snapshot 138 replaces it.
      const snaps = events.flatMap((e, i) => (e.type === "snapshot" ? [i] : []))
      const { book } = replayBetween(events, KALSHI, snaps[0]!, snaps[1]!)
      expect(book.toSnapshotLevels("bid")).toEqual([["0.01", "481"]])

      // A delta missing right before the second snapshot: the snapshot's own seq shows the gap.
      const before = convertKalshi(withoutDelta(recorded("kalshi/ws_transcript.jsonl"), 137).text)
      expect(before.report.gaps).toMatchObject([{ expected: 137, got: 138 }])
      expect(before.events.filter((e) => e.type === "gap")).toMatchObject([{ expected: 137, got: 138 }])
    })
  }
)

describe("transcript excerpts in fixtures/tapes (no dependency on ../shared)", () => {
  it("Kalshi excerpt: quotes match and a dropped delta is a gap", () => {
    const text = excerpt("kalshi_ws_excerpt.jsonl")
    const { header, events, report } = convertKalshi(text)
    expect(report.emitted).toEqual({ snapshot: 1, change: 42, quote: 4 })
    roundTrips(header, events)
    expect(checkQuotes(events)).toMatchObject({ checked: 4, matched: 4 })
    const dropped = convertKalshi(withoutDelta(text, 20).text)
    expect(dropped.report.gaps).toMatchObject([{ sid: 1, expected: 20, got: 21 }])
    expect(dropped.events.filter((e) => e.type === "gap")).toMatchObject([{ expected: 20, got: 21 }])
  })

  it("Polymarket excerpt: quotes match", () => {
    const { header, events, report } = convertPolymarket(excerpt("polymarket_ws_excerpt.jsonl"))
    expect(report.emitted).toEqual({ snapshot: 4, change: 24, quote: 24 })
    roundTrips(header, events)
    expect(checkQuotes(events)).toMatchObject({ checked: 24, matched: 24 })
  })
})

const env = (dir: "in" | "out", t: number | null, msg: unknown) =>
  JSON.stringify(t === null ? { dir, msg } : { dir, t, msg })

describe("made-up transcripts", () => {
  it("reads envelope seconds to whole ms by digits, never by a float multiply", () => {
    expect(secondsTextToMs("1789659362.29631")).toBe(1789659362296)
    expect(secondsTextToMs("12")).toBe(12000)
    expect(secondsTextToMs("1e9")).toBeUndefined()
    expect(envelopeMs(1789659323.4639869)).toBe(1789659323463)
    expect(Math.floor(1.005 * 1000)).toBe(1004)
    expect(envelopeMs(1.005)).toBe(1005)
    expect(envelopeMs(-1)).toBeUndefined()
  })

  it("Kalshi: older integer-cent messages, mirrored NO bids, tickers with no bid, and taker sides", () => {
    const text = [
      env("out", null, { id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], market_tickers: ["X"] } }),
      env("in", 100.5, { type: "subscribed", id: 1, msg: { channel: "orderbook_delta", sid: 4 } }),
      env("in", 100.5, {
        type: "orderbook_snapshot",
        sid: 4,
        seq: 1,
        msg: {
          market_ticker: "X",
          yes: [[40, 10]],
          no: [
            [55, 5],
            [50, 7]
          ]
        }
      }),
      env("in", 101, {
        type: "orderbook_delta",
        sid: 4,
        seq: 2,
        msg: { market_ticker: "X", price: 55, delta: -5, side: "no", ts_ms: 100900 }
      }),
      env("in", 101, {
        type: "orderbook_delta",
        sid: 4,
        seq: 3,
        msg: { market_ticker: "X", price: 40, delta: -15, side: "yes", ts_ms: 100950 }
      }),
      env("in", 102, { type: "ticker", sid: 2, msg: { market_ticker: "X", yes_bid: 0, yes_ask: 50, ts: 101 } }),
      env("in", 102, {
        type: "trade",
        sid: 3,
        seq: 7,
        msg: { market_ticker: "X", yes_price: 50, count: 3, taker_side: "no", ts: 101 }
      }),
      env("in", 103, { type: "error", id: 5, msg: { code: 8, msg: "Unknown channel" } }),
      "not json"
    ].join("\n")
    const { header, events, report } = convertKalshi(text)
    expect(events).toEqual([
      {
        type: "snapshot",
        ts: 100500,
        market: "kalshi:X",
        bids: [["0.4", "10"]],
        asks: [
          ["0.45", "5"],
          ["0.5", "7"]
        ]
      },
      { type: "change", ts: 100900, market: "kalshi:X", side: "ask", price: "0.45", size: "0" },
      { type: "change", ts: 100950, market: "kalshi:X", side: "bid", price: "0.4", size: "0" },
      { type: "quote", ts: 101000, market: "kalshi:X", best_bid: null, best_ask: "0.5" },
      { type: "trade", ts: 101000, market: "kalshi:X", price: "0.5", amount: "3", taker_side: "sell" }
    ])
    expect(report.warnings).toEqual(["line 5: delta takes X yes 0.4 below zero; written as 0"])
    expect(report.skipped.map((s) => [s.line, s.kind])).toEqual([
      [9, "unreadable"],
      [1, "out:subscribe"],
      [2, "subscribed"],
      [8, "error"]
    ])
    expect(checkQuotes(events)).toMatchObject({ checked: 1, matched: 1 })
    roundTrips(header, events)
  })

  it("Kalshi: use_yes_price subscriptions are not mirrored, and out-of-order venue times are clamped per market", () => {
    const text = [
      env("out", null, { id: 1, cmd: "subscribe", params: { channels: ["orderbook_delta"], use_yes_price: true } }),
      env("in", 1, { type: "subscribed", id: 1, msg: { channel: "orderbook_delta", sid: 1 } }),
      env("in", 1, {
        type: "orderbook_snapshot",
        sid: 1,
        seq: 1,
        msg: { market_ticker: "Y", yes_dollars_fp: [["0.3000", "1.00"]], no_dollars_fp: [["0.3500", "2.00"]] }
      }),
      env("in", 2, {
        type: "orderbook_delta",
        sid: 1,
        seq: 2,
        msg: { market_ticker: "Y", price_dollars: "0.3500", delta_fp: "1.50", side: "no", ts_ms: 1900 }
      }),
      env("in", 2, {
        type: "orderbook_delta",
        sid: 1,
        seq: 4,
        msg: { market_ticker: "Y", price_dollars: "0.3000", delta_fp: "1.00", side: "yes", ts_ms: 1800 }
      })
    ].join("\n")
    const { header, events, report } = convertKalshi(text)
    expect(events).toEqual([
      { type: "snapshot", ts: 1000, market: "kalshi:Y", bids: [["0.3", "1"]], asks: [["0.35", "2"]] },
      { type: "change", ts: 1900, market: "kalshi:Y", side: "ask", price: "0.35", size: "3.5" },
      { type: "gap", ts: 1900, market: "kalshi:Y", expected: 3, got: 4 },
      { type: "change", ts: 1900, market: "kalshi:Y", side: "bid", price: "0.3", size: "2" }
    ])
    expect(report.clamped).toBe(1)
    expect(header.markets[0]).toMatchObject({ tick: "0.01", lot: "0.01" })
  })

  it("Polymarket: skips changes before a book, maps stated 0/1 to null, and falls back to the envelope time", () => {
    const book = { event_type: "book", asset_id: "7", market: "0xm", bids: [{ price: "0.2", size: "5" }], asks: [] }
    const text = [
      env("in", 1, {
        event_type: "price_change",
        market: "0xm",
        timestamp: "900",
        price_changes: [{ asset_id: "7", price: "0.2", size: "1", side: "BUY" }]
      }),
      env("in", 1.0015, [book]),
      env("in", 2, {
        event_type: "price_change",
        market: "0xm",
        timestamp: "1500",
        price_changes: [{ asset_id: "7", price: "0.20", size: "0", side: "BUY", best_bid: "0", best_ask: "1" }]
      }),
      env("in", 3, { event_type: "tick_size_change", asset_id: "7" }),
      env("in", 3, "PONG")
    ].join("\n")
    const { header, events, report } = convertPolymarket(text)
    expect(events).toEqual([
      { type: "snapshot", ts: 1001, market: "polymarket:7", bids: [["0.2", "5"]], asks: [] },
      { type: "change", ts: 1500, market: "polymarket:7", side: "bid", price: "0.2", size: "0" },
      { type: "quote", ts: 1500, market: "polymarket:7", best_bid: null, best_ask: null }
    ])
    expect(report.skipped.map((s) => [s.line, s.kind])).toEqual([
      [1, "price_change"],
      [4, "tick_size_change"],
      [5, "PONG"]
    ])
    expect(header.markets).toEqual([{ id: "polymarket:7", title: "Polymarket 0xm token 7", tick: "0.01", lot: "0.01" }])
    expect(checkQuotes(events)).toMatchObject({ checked: 1, matched: 1 })
  })
})
