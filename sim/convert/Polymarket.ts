/** Converts a recorded Polymarket CLOB market-channel WebSocket transcript into a tape. */
import * as F from "../../src/Domain/Fixed.ts"
import { statedBest as streamStatedBest } from "../../src/Venues/Polymarket/Stream.ts"
import type { TapeEvent, TapeHeader } from "../Tape.ts"
import {
  canonicalDecimal,
  Collector,
  type ConvertReport,
  integerMs,
  isRecord,
  readTranscript,
  type TranscriptLine
} from "./Transcript.ts"

/** The tape market id of a Polymarket token. */
export const polymarketMarketId = (assetId: string): string => `polymarket:${assetId}`

type Levels = Array<[string, string]>

const sortedLevels = (raw: unknown, falling: boolean): Levels | undefined => {
  if (!Array.isArray(raw)) return undefined
  const byPrice = new Map<number, [string, string]>()
  for (const l of raw) {
    if (!isRecord(l)) return undefined
    const price = canonicalDecimal(l["price"])
    const size = canonicalDecimal(l["size"])
    if (price === undefined || size === undefined) return undefined
    const p = F.of(price)
    if (p <= 0 || p >= F.ONE) return undefined
    if (F.of(size) > 0) byPrice.set(p, [price, size])
    else byPrice.delete(p)
  }
  return [...byPrice.entries()].sort((a, b) => (falling ? b[0] - a[0] : a[0] - b[0])).map(([, l]) => l)
}

/** A stated best price: "0"/"" for no bid, "1"/"" for no ask, both as null; read as the venue's stream reads it. */
const statedBest = (x: unknown): string | null | undefined => {
  if (x !== null && typeof x !== "string") return undefined
  const v = streamStatedBest(x)
  return v === null || v === undefined ? v : F.format(v)
}

/**
 * Converts a Polymarket market-channel transcript (envelope lines `{"dir","t","msg"}`) into tape events.
 *
 * - Every token (`asset_id`) is its own tape market `polymarket:<asset_id>`, and its YES book is that token's
 *   own book: buying the token is buying "YES" of the tape market. The two complementary tokens of a
 *   condition therefore appear as two markets whose books mirror each other (price p ↔ 1 − p).
 * - `book` → `snapshot` (levels re-sorted best first, zero sizes dropped; the venue sends bids rising).
 * - `price_change` → per entry a `change` (BUY → bid, SELL → ask, `size` is the level's new total) and, when
 *   the entry carries `best_bid`/`best_ask`, a `quote` with them ("0" bid / "1" ask → null). The older
 *   `changes` form (one asset per message, no best prices) is read too.
 * - `best_bid_ask` → `quote`; `last_trade_price` → `trade` (`side` is the taker's side).
 * - Times: the message's own `timestamp` (ms, the venue's clock; exact, and unaffected by the receiver
 *   batching several messages into one read) is used; the envelope `t` only when a message has none. A book
 *   event that the venue clock would place before the same market's previous book event is raised to it
 *   (counted in `report.clamped`); trades keep their own ts. Events are sorted by ts, ties in line order.
 * - Outgoing lines, "PONG" frames and other message kinds are skipped and listed in the report.
 */
export const convertPolymarket = (
  transcriptText: string
): { header: TapeHeader; events: Array<TapeEvent>; report: ConvertReport } => {
  const { lines, bad } = readTranscript(transcriptText)
  const c = new Collector(lines.length + bad.length)
  for (const b of bad) c.skip(b.line, "unreadable", b.reason)
  const withBook = new Set<string>()

  const tsOf = (m: Record<string, unknown>, l: TranscriptLine): number | undefined => integerMs(m["timestamp"]) ?? l.tMs

  const ensureMarket = (asset: string, condition: unknown, tick?: string): string => {
    const id = polymarketMarketId(asset)
    const title = typeof condition === "string" ? `Polymarket ${condition} token ${asset}` : `Polymarket token ${asset}`
    c.market({ id, title, tick: tick ?? "0.01", lot: "0.01" })
    if (tick !== undefined) c.updateMarket(id, { tick })
    return id
  }

  const book = (m: Record<string, unknown>, l: TranscriptLine): void => {
    const asset = m["asset_id"]
    const ts = tsOf(m, l)
    const bids = sortedLevels(m["bids"] ?? m["buys"], true)
    const asks = sortedLevels(m["asks"] ?? m["sells"], false)
    if (typeof asset !== "string" || ts === undefined || bids === undefined || asks === undefined) {
      c.skip(l.line, "book", "missing asset_id, time or readable levels")
      return
    }
    const tick = canonicalDecimal(m["tick_size"])
    const market = ensureMarket(asset, m["market"], tick)
    withBook.add(asset)
    c.emit({ type: "snapshot", ts: c.bookTs(market, ts), market, bids, asks })
  }

  const priceChange = (m: Record<string, unknown>, l: TranscriptLine): void => {
    const ts = tsOf(m, l)
    const entries: Array<unknown> = Array.isArray(m["price_changes"])
      ? m["price_changes"]
      : Array.isArray(m["changes"])
        ? m["changes"].map((e) => (isRecord(e) ? { asset_id: m["asset_id"], ...e } : e))
        : []
    if (ts === undefined || entries.length === 0) {
      c.skip(l.line, "price_change", "no time or no entries")
      return
    }
    for (const e of entries) {
      if (!isRecord(e) || typeof e["asset_id"] !== "string") {
        c.skip(l.line, "price_change", "entry without asset_id")
        continue
      }
      const asset = e["asset_id"]
      const price = canonicalDecimal(e["price"])
      const size = canonicalDecimal(e["size"])
      const side = e["side"] === "BUY" ? "bid" : e["side"] === "SELL" ? "ask" : undefined
      if (price === undefined || size === undefined || side === undefined || F.of(price) <= 0 || F.of(price) >= F.ONE) {
        c.skip(l.line, "price_change", `unreadable entry for ${asset}`)
        continue
      }
      if (!withBook.has(asset)) {
        c.skip(l.line, "price_change", `entry for ${asset} before its first book`)
        continue
      }
      const market = ensureMarket(asset, m["market"])
      const at = c.bookTs(market, ts)
      c.emit({ type: "change", ts: at, market, side, price, size })
      if ("best_bid" in e || "best_ask" in e) {
        const bid = statedBest(e["best_bid"])
        const ask = statedBest(e["best_ask"])
        if (bid === undefined || ask === undefined) c.warnings.push(`line ${l.line}: unreadable best_bid/best_ask`)
        else c.emit({ type: "quote", ts: at, market, best_bid: bid, best_ask: ask })
      }
    }
  }

  const bestBidAsk = (m: Record<string, unknown>, l: TranscriptLine): void => {
    const asset = m["asset_id"]
    const ts = tsOf(m, l)
    const bid = statedBest(m["best_bid"])
    const ask = statedBest(m["best_ask"])
    if (typeof asset !== "string" || ts === undefined || bid === undefined || ask === undefined) {
      c.skip(l.line, "best_bid_ask", "unreadable")
      return
    }
    c.emit({ type: "quote", ts, market: ensureMarket(asset, m["market"]), best_bid: bid, best_ask: ask })
  }

  const lastTrade = (m: Record<string, unknown>, l: TranscriptLine): void => {
    const asset = m["asset_id"]
    const ts = tsOf(m, l)
    const price = canonicalDecimal(m["price"])
    const amount = canonicalDecimal(m["size"])
    const side = m["side"] === "BUY" ? "buy" : m["side"] === "SELL" ? "sell" : undefined
    if (
      typeof asset !== "string" ||
      ts === undefined ||
      price === undefined ||
      amount === undefined ||
      side === undefined ||
      F.of(price) <= 0 ||
      F.of(price) >= F.ONE ||
      F.of(amount) <= 0
    ) {
      c.skip(l.line, "last_trade_price", "unreadable")
      return
    }
    c.emit({ type: "trade", ts, market: ensureMarket(asset, m["market"]), price, amount, taker_side: side })
  }

  for (const l of lines) {
    if (l.dir === "out") {
      const kind = isRecord(l.msg) && typeof l.msg["operation"] === "string" ? l.msg["operation"] : "subscribe"
      c.count(`out:${kind}`)
      c.skip(l.line, `out:${kind}`, "outgoing command")
      continue
    }
    if (typeof l.msg === "string") {
      c.count(l.msg)
      c.skip(l.line, l.msg, "text frame (keep-alive)")
      continue
    }
    const items = Array.isArray(l.msg) ? l.msg : [l.msg]
    for (const m of items) {
      const kind = isRecord(m) && typeof m["event_type"] === "string" ? m["event_type"] : "unknown"
      c.count(kind)
      if (!isRecord(m)) {
        c.skip(l.line, kind, "not an object")
        continue
      }
      switch (kind) {
        case "book":
          book(m, l)
          break
        case "price_change":
          priceChange(m, l)
          break
        case "best_bid_ask":
          bestBidAsk(m, l)
          break
        case "last_trade_price":
          lastTrade(m, l)
          break
        default:
          c.skip(l.line, kind, "not converted to tape events")
      }
    }
  }

  const { markets, events, report } = c.finish()
  const header: TapeHeader = {
    type: "header",
    version: 1,
    source: "polymarket",
    markets,
    notes:
      "Converted from a Polymarket market-channel transcript by sim/convert/Polymarket.ts. Each token is its own market; " +
      "its YES book is the token's book. Times are the venue's message timestamps."
  }
  return { header, events, report }
}
