/** Kalshi's streamed order book, pure: bid ladders kept as a YES book, message fields read exactly, `seq` per subscription. */
import * as F from "../../Domain/Fixed.ts"
import type { Book, BookLevel } from "../../Domain/Market.ts"

const HUNDRED = F.fromInt(100)

type Fields = Readonly<Record<string, unknown>>

/** A price from `<dollars>` (decimal string) or, in the older form, `<cents>` in integer cents. */
export const priceField = (m: Fields, dollars: string, cents: string): F.Fixed | undefined => {
  const d = m[dollars]
  if (typeof d === "string") return F.parse(d)
  const c = m[cents]
  return typeof c === "number" && Number.isSafeInteger(c) ? F.div(F.fromInt(c), HUNDRED) : undefined
}

/** A contract count from `<fp>` (decimal string) or `<plain>` (integer or decimal string). */
export const countField = (m: Fields, fp: string, plain: string): F.Fixed | undefined => {
  const x = m[fp] ?? m[plain]
  if (typeof x === "string") return F.parse(x)
  return typeof x === "number" && Number.isSafeInteger(x) ? F.fromInt(x) : undefined
}

/**
 * A snapshot's ladder of one side: `[["0.0100","450.00"], ...]` (`<side>_dollars_fp`), `[["0.01", 450], ...]`
 * (`<side>_dollars`) or `[[1, 450], ...]` (cents). Undefined when a level is unreadable.
 */
export const ladderField = (m: Fields, side: "yes" | "no"): Array<[F.Fixed, F.Fixed]> | undefined => {
  const raw = m[`${side}_dollars_fp`] ?? m[`${side}_dollars`] ?? m[side] ?? []
  if (!Array.isArray(raw)) return undefined
  const out: Array<[F.Fixed, F.Fixed]> = []
  for (const l of raw) {
    if (!Array.isArray(l) || l.length !== 2) return undefined
    const [p, n] = l as [unknown, unknown]
    const price =
      typeof p === "string"
        ? F.parse(p)
        : typeof p === "number" && Number.isSafeInteger(p)
          ? F.div(F.fromInt(p), HUNDRED)
          : undefined
    const count =
      typeof n === "string" ? F.parse(n) : typeof n === "number" && Number.isSafeInteger(n) ? F.fromInt(n) : undefined
    if (price === undefined || count === undefined) return undefined
    out.push([price, count])
  }
  return out
}

/**
 * The YES-book side and price of a Kalshi ladder entry: YES bids are bids; NO bids are asks at 1 − p, unless the
 * subscription asked for `use_yes_price`, in which case the NO side already speaks YES prices.
 */
export const yesLevel = (
  side: "yes" | "no",
  price: F.Fixed,
  yesPricing: boolean
): { readonly side: "bid" | "ask"; readonly price: F.Fixed } =>
  side === "yes" ? { side: "bid", price } : { side: "ask", price: yesPricing ? price : F.sub(F.ONE, price) }

const levels = (side: ReadonlyMap<number, F.Fixed>, falling: boolean): Array<BookLevel> =>
  [...side.entries()]
    .sort((a, b) => (falling ? b[0] - a[0] : a[0] - b[0]))
    .map(([price, size]) => ({ price: price as F.Fixed, size }))

/** One market's book as Kalshi streams it, held as a YES book (sizes by YES price; empty levels are removed). */
export class LadderBook {
  readonly bids = new Map<number, F.Fixed>()
  readonly asks = new Map<number, F.Fixed>()

  /** Replaces the whole book with a snapshot's two ladders. */
  snapshot(
    yes: ReadonlyArray<readonly [F.Fixed, F.Fixed]>,
    no: ReadonlyArray<readonly [F.Fixed, F.Fixed]>,
    yesPricing: boolean
  ): void {
    this.bids.clear()
    this.asks.clear()
    for (const [p, n] of yes) if (n > 0) this.bids.set(p, F.add(this.bids.get(p) ?? F.ZERO, n))
    for (const [q, n] of no) {
      if (n <= 0) continue
      const { price } = yesLevel("no", q, yesPricing)
      this.asks.set(price, F.add(this.asks.get(price) ?? F.ZERO, n))
    }
  }

  /**
   * Adds `delta` at one level; answers the level's resulting size. A result below zero (a delta the book cannot
   * hold) leaves the level empty and says so with `clamped`.
   */
  change(
    side: "yes" | "no",
    price: F.Fixed,
    delta: F.Fixed,
    yesPricing: boolean
  ): { readonly side: "bid" | "ask"; readonly price: F.Fixed; readonly size: F.Fixed; readonly clamped: boolean } {
    const at = yesLevel(side, price, yesPricing)
    const ladder = at.side === "bid" ? this.bids : this.asks
    let size = F.add(ladder.get(at.price) ?? F.ZERO, delta)
    const clamped = size < 0
    if (clamped) size = F.ZERO
    if (size > 0) ladder.set(at.price, size)
    else ladder.delete(at.price)
    return { ...at, size, clamped }
  }

  /** The book as our Domain states it: bids best first, asks best first. */
  book(ts: number): Book {
    return { ts, bids: levels(this.bids, true), asks: levels(this.asks, false) }
  }
}

/**
 * Kalshi numbers the messages of each subscription (`sid`) with `seq`, snapshots included. `next` answers the
 * jump when a message is not the one expected (a message was lost: the book is suspect until a fresh snapshot),
 * and expects `seq + 1` after it either way.
 */
export class Sequencer {
  private readonly expected = new Map<number, number>()

  next(sid: number, seq: number): { readonly expected: number; readonly got: number } | undefined {
    const want = this.expected.get(sid)
    this.expected.set(sid, seq + 1)
    return want !== undefined && want !== seq ? { expected: want, got: seq } : undefined
  }

  /** Forgets a subscription (unsubscribed, or the connection closed). */
  forget(sid: number): void {
    this.expected.delete(sid)
  }

  clear(): void {
    this.expected.clear()
  }
}
