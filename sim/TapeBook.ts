/** A YES order book rebuilt from tape events, with exact Fixed prices and sizes, plus a quote checker for replays. */
import * as F from "../src/Domain/Fixed.ts"
import type { TapeEvent } from "./Tape.ts"

/** Which side of the YES book. */
export type BookSide = "bid" | "ask"

/** A price level: [price, size]. */
export type BookLevel = readonly [F.Fixed, F.Fixed]

const fixed = (text: string): F.Fixed => {
  const v = F.parse(text)
  if (v === undefined) throw new Error(`not a decimal: ${text}`)
  return v
}

class Ladder {
  readonly sizes = new Map<number, F.Fixed>()
  /** Prices best first. */
  readonly prices: Array<number> = []
  constructor(private readonly falling: boolean) {}

  private search(price: number): number {
    const p = this.prices
    let lo = 0
    let hi = p.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const v = p[mid]!
      if (this.falling ? v > price : v < price) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  set(price: F.Fixed, size: F.Fixed): void {
    const had = this.sizes.has(price)
    if (size <= 0) {
      if (!had) return
      this.sizes.delete(price)
      this.prices.splice(this.search(price), 1)
      return
    }
    this.sizes.set(price, size)
    if (!had) this.prices.splice(this.search(price), 0, price)
  }

  clear(): void {
    this.sizes.clear()
    this.prices.length = 0
  }
}

/** One market's YES book: a Map of sizes per side plus a sorted price array kept up to date on every change. */
export class TapeBook {
  private readonly bids = new Ladder(true)
  private readonly asks = new Ladder(false)

  /** Applies a snapshot or change (the event's market is not checked); other event kinds leave the book alone. Returns whether the book was touched. */
  apply(event: TapeEvent): boolean {
    if (event.type === "snapshot") {
      this.bids.clear()
      this.asks.clear()
      for (const [p, s] of event.bids) this.bids.set(fixed(p), fixed(s))
      for (const [p, s] of event.asks) this.asks.set(fixed(p), fixed(s))
      return true
    }
    if (event.type === "change") {
      this.set(event.side, fixed(event.price), fixed(event.size))
      return true
    }
    return false
  }

  /** Sets the total size at one level; zero or less removes it. */
  set(side: BookSide, price: F.Fixed, size: F.Fixed): void {
    ;(side === "bid" ? this.bids : this.asks).set(price, size)
  }

  clear(): void {
    this.bids.clear()
    this.asks.clear()
  }

  bestBid(): F.Fixed | null {
    const p = this.bids.prices[0]
    return p === undefined ? null : (p as F.Fixed)
  }

  bestAsk(): F.Fixed | null {
    const p = this.asks.prices[0]
    return p === undefined ? null : (p as F.Fixed)
  }

  /** Size resting at a level, zero when there is none. */
  sizeAt(side: BookSide, price: F.Fixed): F.Fixed {
    return (side === "bid" ? this.bids : this.asks).sizes.get(price) ?? F.ZERO
  }

  /** Levels best first, at most `depth` of them (all when omitted). */
  levels(side: BookSide, depth?: number): Array<BookLevel> {
    const ladder = side === "bid" ? this.bids : this.asks
    const n = depth === undefined ? ladder.prices.length : Math.min(depth, ladder.prices.length)
    const out = new Array<BookLevel>(n)
    for (let i = 0; i < n; i++) {
      const p = ladder.prices[i]! as F.Fixed
      out[i] = [p, ladder.sizes.get(p)!]
    }
    return out
  }

  /** Number of levels on a side. */
  depth(side: BookSide): number {
    return (side === "bid" ? this.bids : this.asks).prices.length
  }

  /** True when the best bid is at or above the best ask. */
  isCrossed(): boolean {
    const b = this.bestBid()
    const a = this.bestAsk()
    return b !== null && a !== null && b >= a
  }

  /** Levels as tape strings, best first: what a snapshot event of this book would carry. */
  toSnapshotLevels(side: BookSide): Array<[string, string]> {
    return this.levels(side).map(([p, s]) => [F.format(p), F.format(s)])
  }
}

/** A quote event whose stated best bid/ask differed from the replayed book. */
export interface QuoteMismatch {
  /** Index of the quote in the event list. */
  readonly index: number
  readonly market: string
  readonly ts: number
  readonly stated: { readonly bid: string | null; readonly ask: string | null }
  readonly book: { readonly bid: string | null; readonly ask: string | null }
}

/** Outcome of replaying a tape's books against its quote events. */
export interface QuoteCheck {
  readonly checked: number
  readonly matched: number
  readonly mismatches: ReadonlyArray<QuoteMismatch>
  /** Quotes for a market before its first snapshot (nothing to compare against). */
  readonly beforeSnapshot: number
  /** The final book of every market. */
  readonly books: ReadonlyMap<string, TapeBook>
}

/**
 * Replays snapshots and changes per market and compares each quote with the replayed book. By default
 * (`"end-of-ts"`, the tape format's meaning of a quote) a quote is compared after every snapshot and change of
 * its market with the same ts: venues split one book update into several messages with one timestamp and state
 * the best prices as of the whole update. `"event"` compares at the quote's own position.
 */
export const checkQuotes = (
  events: ReadonlyArray<TapeEvent>,
  options: { readonly at?: "end-of-ts" | "event" } = {}
): QuoteCheck => {
  const atEvent = options.at === "event"
  const books = new Map<string, TapeBook>()
  const pending = new Map<string, Array<number>>()
  const mismatches: Array<QuoteMismatch> = []
  let checked = 0
  let beforeSnapshot = 0

  const compare = (i: number): void => {
    const e = events[i]!
    if (e.type !== "quote") return
    const book = books.get(e.market)!
    checked++
    const bid = F.formatOrNull(book.bestBid())
    const ask = F.formatOrNull(book.bestAsk())
    if (bid !== e.best_bid || ask !== e.best_ask) {
      mismatches.push({
        index: i,
        market: e.market,
        ts: e.ts,
        stated: { bid: e.best_bid, ask: e.best_ask },
        book: { bid, ask }
      })
    }
  }
  const settle = (market: string, beforeTs: number): void => {
    const waiting = pending.get(market)
    if (waiting === undefined || waiting.length === 0) return
    const keep: Array<number> = []
    for (const i of waiting) {
      if (events[i]!.ts < beforeTs) compare(i)
      else keep.push(i)
    }
    pending.set(market, keep)
  }

  for (let i = 0; i < events.length; i++) {
    const e = events[i]!
    if (e.type === "snapshot" || e.type === "change") {
      settle(e.market, e.ts)
      let book = books.get(e.market)
      if (book === undefined) {
        if (e.type === "change") continue
        book = new TapeBook()
        books.set(e.market, book)
      }
      book.apply(e)
    } else if (e.type === "quote") {
      if (!books.has(e.market)) beforeSnapshot++
      else if (atEvent) compare(i)
      else {
        const waiting = pending.get(e.market)
        if (waiting === undefined) pending.set(e.market, [i])
        else waiting.push(i)
      }
    }
  }
  for (const market of pending.keys()) settle(market, Infinity)
  mismatches.sort((a, b) => a.index - b.index)
  return { checked, matched: checked - mismatches.length, mismatches, beforeSnapshot, books }
}
