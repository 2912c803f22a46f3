/** Venue-neutral market data: markets, books and trades, with exact prices and sizes. */
import type { MarketFees } from "./Fees.ts"
import type { Fixed } from "./Fixed.ts"

export type MarketStatus = "open" | "closed" | "settled"

/** `buy` is YES, `sell` is NO; every price is a YES price. */
export type Side = "buy" | "sell"

export interface Market {
  readonly venue: string
  readonly nativeId: string
  readonly eventId: string
  readonly title: string
  readonly subtitle: string
  readonly category: string
  readonly status: MarketStatus
  readonly openTime: number
  readonly closeTime: number
  readonly tick: Fixed
  readonly lot: Fixed
  /** Settlement result once settled. */
  readonly result: "yes" | "no" | null
  /**
   * The top of the book and the last price as the venue's catalog states them, when it does: lists show these
   * instead of reading every row's book and trades.
   */
  readonly quote?: MarketQuote
  /** The venue's fee schedule for this market, when it is known as data. */
  readonly feeSchedule?: MarketFees
}

export interface MarketQuote {
  readonly bestBid: Fixed | null
  readonly bestAsk: Fixed | null
  readonly last: Fixed | null
}

export interface BookLevel {
  readonly price: Fixed
  readonly size: Fixed
}

/** The YES book: bids best (highest) first, asks best (lowest) first. */
export interface Book {
  readonly ts: number
  readonly bids: ReadonlyArray<BookLevel>
  readonly asks: ReadonlyArray<BookLevel>
}

/** A market's best bid and best ask (YES prices) and the price of its last trade; null where there is none. */
export interface Touch {
  readonly bestBid: Fixed | null
  readonly bestAsk: Fixed | null
  readonly last: Fixed | null
}

export interface Trade {
  readonly id: string
  readonly ts: number
  readonly price: Fixed
  readonly amount: Fixed
  /** The side that took liquidity. */
  readonly takerSide: Side
}

/** The NO book is the YES book mirrored at 1 − p: NO bids are YES asks at 1 − p, and the other way round. */
export const mirrorBook = (book: Book, one: Fixed): Book => ({
  ts: book.ts,
  bids: book.asks.map((l) => ({ price: (one - l.price) as Fixed, size: l.size })),
  asks: book.bids.map((l) => ({ price: (one - l.price) as Fixed, size: l.size }))
})
