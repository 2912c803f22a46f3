/** Converts a recorded Kalshi market-data WebSocket transcript into a tape. */
import * as F from "../../src/Domain/Fixed.ts"
import { countField, LadderBook, ladderField as ladder, priceField, Sequencer } from "../../src/Venues/Kalshi/Book.ts"
import type { TapeEvent, TapeHeader } from "../Tape.ts"
import {
  Collector,
  type ConvertReport,
  integerMs,
  isRecord,
  readTranscript,
  type TranscriptLine
} from "./Transcript.ts"

/** The tape market id of a Kalshi market. */
export const kalshiMarketId = (ticker: string): string => `kalshi:${ticker}`

const CENT = F.of("0.01")

const levelsOf = (side: Map<number, F.Fixed>, falling: boolean): Array<[string, string]> =>
  [...side.entries()]
    .filter(([, s]) => s > 0)
    .sort((a, b) => (falling ? b[0] - a[0] : a[0] - b[0]))
    .map(([p, s]) => [F.format(p as F.Fixed), F.format(s)])

/**
 * Converts a Kalshi WebSocket transcript (envelope lines `{"dir","t","msg"}`) into tape events for every market
 * ticker it carries (`kalshi:<ticker>`).
 *
 * - Kalshi books hold bids only: YES bids and NO bids. The tape's YES bids are the YES bids; its YES asks are
 *   the NO bids mirrored to `1 − p` (a NO bid at 0.02 is a YES ask at 0.98). When the orderbook subscription
 *   asked for `use_yes_price: true`, NO-side prices are already YES prices and are not mirrored.
 * - `orderbook_snapshot` → `snapshot`; `orderbook_delta` is applied to the converter's own book and written as a
 *   `change` carrying the level's resulting total (a negative result is reported and written as "0");
 *   `ticker` → `quote` (`yes_bid` 0 and `yes_ask` 1 mean no bid / no ask); `trade` → `trade` (taker outcome
 *   side yes → buy, no → sell, at the YES price).
 * - Prices and counts are read from the `_dollars`/`_fp` decimal strings the current API sends, or from the
 *   older integer cents and counts (cents become Fixed through exact division by 100).
 * - Sequence numbers are tracked per `sid` for the converted channels. A message whose `seq` is not the one
 *   expected writes a `gap` event (and `report.gaps`); a delta after a gap is still applied, so the book is
 *   suspect until the next snapshot. A snapshot's `seq` continues its subscription's sequence (a `get_snapshot`
 *   reply shares it); a snapshot resets the expectation to its `seq` + 1.
 * - Times: `ts_ms` of deltas, tickers and trades (the venue's clock; a ticker states the book as of its `ts_ms`,
 *   which is earlier than its arrival). Snapshots carry no time and take the envelope `t`, truncated to the
 *   ms. A book event that would sort before the same market's previous book event is raised to its ts
 *   (`report.clamped`). Events are sorted by ts, ties in transcript order.
 * - Acks, private channels (fills, orders, positions, order groups), lifecycle messages, errors and outgoing
 *   commands are skipped and listed in the report.
 */
export const convertKalshi = (
  transcriptText: string
): { header: TapeHeader; events: Array<TapeEvent>; report: ConvertReport } => {
  const { lines, bad } = readTranscript(transcriptText)
  const c = new Collector(lines.length + bad.length)
  for (const b of bad) c.skip(b.line, "unreadable", b.reason)
  const yesPricingByCommand = new Map<number, boolean>()
  const yesPricingBySid = new Map<number, boolean>()
  const sequencer = new Sequencer()
  const books = new Map<string, LadderBook>()
  let offCent = false
  let fractional = false

  const ensureMarket = (ticker: string): string => {
    const id = kalshiMarketId(ticker)
    c.market({ id, title: ticker, tick: "0.01", lot: "1" })
    return id
  }
  const notePrice = (p: F.Fixed): void => {
    if (!F.isMultipleOf(p, CENT)) offCent = true
  }
  const noteCount = (n: F.Fixed): void => {
    if (!F.isMultipleOf(n, F.ONE)) fractional = true
  }

  /** Checks `seq` for the message's sid; writes a gap event at `ts` when it jumps. */
  const sequence = (l: TranscriptLine, envelope: Record<string, unknown>, market: string, ts: number): void => {
    const sid = envelope["sid"]
    const seq = envelope["seq"]
    if (typeof sid !== "number" || typeof seq !== "number") return
    const gap = sequencer.next(sid, seq)
    if (gap !== undefined) {
      c.gaps.push({ line: l.line, market, sid, ...gap })
      c.emit({ type: "gap", ts, market, ...gap })
    }
  }

  const yesPricing = (envelope: Record<string, unknown>): boolean => {
    const sid = envelope["sid"]
    return typeof sid === "number" && yesPricingBySid.get(sid) === true
  }

  const snapshot = (l: TranscriptLine, envelope: Record<string, unknown>, m: Record<string, unknown>): void => {
    const ticker = m["market_ticker"]
    const yes = ladder(m, "yes")
    const no = ladder(m, "no")
    if (typeof ticker !== "string" || yes === undefined || no === undefined || l.tMs === undefined) {
      c.skip(l.line, "orderbook_snapshot", "missing ticker, time or readable levels")
      return
    }
    const market = ensureMarket(ticker)
    for (const [p, n] of [...yes, ...no]) {
      notePrice(p)
      noteCount(n)
    }
    const book = new LadderBook()
    book.snapshot(yes, no, yesPricing(envelope))
    books.set(market, book)
    const ts = c.bookTs(market, l.tMs)
    sequence(l, envelope, market, ts)
    c.emit({ type: "snapshot", ts, market, bids: levelsOf(book.bids, true), asks: levelsOf(book.asks, false) })
  }

  const delta = (l: TranscriptLine, envelope: Record<string, unknown>, m: Record<string, unknown>): void => {
    const ticker = m["market_ticker"]
    const price = priceField(m, "price_dollars", "price")
    const change = countField(m, "delta_fp", "delta")
    const side = m["side"]
    const ts = integerMs(m["ts_ms"]) ?? l.tMs
    if (
      typeof ticker !== "string" ||
      price === undefined ||
      change === undefined ||
      (side !== "yes" && side !== "no") ||
      ts === undefined
    ) {
      c.skip(l.line, "orderbook_delta", "missing ticker, price, delta, side or time")
      return
    }
    const market = ensureMarket(ticker)
    const at = c.bookTs(market, ts)
    sequence(l, envelope, market, at)
    const book = books.get(market)
    if (book === undefined) {
      c.skip(l.line, "orderbook_delta", "delta before the market's first snapshot")
      return
    }
    notePrice(price)
    noteCount(change)
    const level = book.change(side, price, change, yesPricing(envelope))
    if (level.clamped) {
      c.warnings.push(`line ${l.line}: delta takes ${ticker} ${side} ${F.format(price)} below zero; written as 0`)
    }
    c.emit({
      type: "change",
      ts: at,
      market,
      side: level.side,
      price: F.format(level.price),
      size: F.format(level.size)
    })
  }

  const ticker = (l: TranscriptLine, m: Record<string, unknown>): void => {
    const t = m["market_ticker"]
    const bid = priceField(m, "yes_bid_dollars", "yes_bid")
    const ask = priceField(m, "yes_ask_dollars", "yes_ask")
    const ts = integerMs(m["ts_ms"]) ?? (typeof m["ts"] === "number" ? m["ts"] * 1000 : undefined) ?? l.tMs
    if (typeof t !== "string" || bid === undefined || ask === undefined || ts === undefined) {
      c.skip(l.line, "ticker", "missing ticker, yes bid/ask or time")
      return
    }
    c.emit({
      type: "quote",
      ts,
      market: ensureMarket(t),
      best_bid: bid <= 0 || bid >= F.ONE ? null : F.format(bid),
      best_ask: ask <= 0 || ask >= F.ONE ? null : F.format(ask)
    })
  }

  const trade = (l: TranscriptLine, envelope: Record<string, unknown>, m: Record<string, unknown>): void => {
    const t = m["market_ticker"]
    const price = priceField(m, "yes_price_dollars", "yes_price")
    const amount = countField(m, "count_fp", "count")
    const outcome = m["taker_outcome_side"] ?? m["taker_side"]
    const bookSide = m["taker_book_side"]
    const taker =
      outcome === "yes" || bookSide === "bid" ? "buy" : outcome === "no" || bookSide === "ask" ? "sell" : undefined
    const ts = integerMs(m["ts_ms"]) ?? (typeof m["ts"] === "number" ? m["ts"] * 1000 : undefined) ?? l.tMs
    if (
      typeof t !== "string" ||
      price === undefined ||
      price <= 0 ||
      price >= F.ONE ||
      amount === undefined ||
      amount <= 0 ||
      taker === undefined ||
      ts === undefined
    ) {
      c.skip(l.line, "trade", "missing ticker, price, count, taker side or time")
      return
    }
    const market = ensureMarket(t)
    sequence(l, envelope, market, ts)
    c.emit({ type: "trade", ts, market, price: F.format(price), amount: F.format(amount), taker_side: taker })
  }

  for (const l of lines) {
    const env = l.msg
    if (!isRecord(env)) {
      c.count("unknown")
      c.skip(l.line, "unknown", "not an object")
      continue
    }
    if (l.dir === "out") {
      const cmd = typeof env["cmd"] === "string" ? env["cmd"] : "unknown"
      c.count(`out:${cmd}`)
      const params = env["params"]
      if (cmd === "subscribe" && typeof env["id"] === "number" && isRecord(params)) {
        yesPricingByCommand.set(env["id"], params["use_yes_price"] === true)
      }
      c.skip(l.line, `out:${cmd}`, "outgoing command")
      continue
    }
    const type = typeof env["type"] === "string" ? env["type"] : "unknown"
    c.count(type)
    const m = env["msg"]
    if (type === "subscribed") {
      if (isRecord(m) && typeof m["sid"] === "number" && typeof env["id"] === "number") {
        yesPricingBySid.set(m["sid"], yesPricingByCommand.get(env["id"]) === true)
      }
      c.skip(l.line, type, "subscription ack")
      continue
    }
    if (!isRecord(m)) {
      c.skip(l.line, type, "no msg object")
      continue
    }
    switch (type) {
      case "orderbook_snapshot":
        snapshot(l, env, m)
        break
      case "orderbook_delta":
        delta(l, env, m)
        break
      case "ticker":
        ticker(l, m)
        break
      case "trade":
        trade(l, env, m)
        break
      case "fill":
      case "user_order":
      case "market_position":
      case "order_group_updates":
        c.skip(l.line, type, "private channel, not market data")
        break
      case "error":
        c.skip(l.line, type, `venue error: ${JSON.stringify(m)}`)
        break
      default:
        c.skip(l.line, type, "not converted to tape events")
    }
  }

  const { markets, events, report } = c.finish()
  const header: TapeHeader = {
    type: "header",
    version: 1,
    source: "kalshi",
    markets: markets.map((m) => ({ ...m, tick: offCent ? "0.001" : m.tick, lot: fractional ? "0.01" : m.lot })),
    notes:
      "Converted from a Kalshi WebSocket transcript by sim/convert/Kalshi.ts. YES asks are NO bids at 1 − p. " +
      "Times are the venue's ts_ms; snapshots take the receive time."
  }
  return { header, events, report }
}
