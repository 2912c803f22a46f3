/** When parents wake: market views and the parents they reach, lazy bands, and the heap of expiries and timers. */
import { Effect } from "effect"
import { NO_FEES } from "../Domain/Fees.ts"
import * as F from "../Domain/Fixed.ts"
import type { MarketView, MemberQuote } from "./Core.ts"
import { feesOf } from "../Services/VenueGateway.ts"
import { type Driver, kindOf, type Runtime } from "./Runtime.ts"
import * as Id from "../Domain/Ids.ts"

/** The parents a view wakes, counted. */
export const wakeFor = (d: Driver, marketId: string, view: MarketView) => {
  d.stats.views += 1
  const woken = d.sleeping.woken(marketId, view)
  if (woken !== null) {
    d.stats.woken += woken.length
    for (const id of woken) {
      const type = d.parents.get(id)?.type
      if (type !== undefined) d.wokenByType[type] = (d.wokenByType[type] ?? 0) + 1
    }
  }
  return woken
}

export const dueAdded = (d: Driver, at: number, rt: Runtime) => d.due.push(at, rt.id)

const stillDue = (d: Driver, at: number, id: string) => {
  const rt = d.parents.get(id)
  if (rt === undefined || rt.done) return false
  return (rt.expiresAt === at && rt.ending === null) || rt.timers.some((t) => t.at === at)
}

/** Files the parent under what its core watches now; a parent that is ending or done watches nothing. */
export const rewatch = (d: Driver, rt: Runtime) => {
  d.lazyBands.delete(rt.id)
  if (rt.done || rt.ending !== null) return d.sleeping.delete(rt.id)
  const watch = kindOf(d, rt).core.watch?.(rt.spec, rt.params, rt.state) ?? "all"
  d.sleeping.set(rt.id, rt.marketId, watch)
  if (watch !== "all" && watch.some((b) => b.lazy === true)) {
    d.lazyBands.set(
      rt.id,
      watch.filter((b) => b.lazy === true)
    )
  }
}

/**
 * `viewOf` in plain code, from a venue in this process that answers the touch itself; `null` when the venue must be
 * asked (then `viewOf` reads it).
 */
export const viewNow = (d: Driver, marketId: Id.MarketId): MarketView | undefined | null => {
  const venue = d.gateway.venue(Id.venueOf(marketId))
  if (venue === undefined) return undefined
  return venue.now?.touch?.(Id.nativeOf(marketId)) ?? null
}

/** The market as the venue shows it now (best bid, best ask, last trade); undefined when it cannot be read. */
export const viewOf = Effect.fnUntraced(function* (d: Driver, marketId: Id.MarketId) {
  // A venue in this process answers the touch itself, with no copy of its book or its trades.
  const known = viewNow(d, marketId)
  if (known !== null) return known
  const venue = d.gateway.venue(Id.venueOf(marketId))!
  const nativeId = Id.nativeOf(marketId)
  const book = yield* venue.book(nativeId).pipe(Effect.orElseSucceed(() => undefined))
  if (book === undefined) return undefined
  // A venue that streams the market keeps its last trade from the stream; any other is asked.
  const streamed = venue.streamsTrades === true && d.parents.watched(marketId)
  if (!streamed) d.lastTrades.delete(marketId)
  let last = streamed ? d.lastTrades.get(marketId) : undefined
  if (last === undefined) {
    const trades = yield* venue.trades(nativeId).pipe(Effect.orElseSucceed(() => undefined))
    last = trades?.[0]?.price ?? null
    if (streamed && trades !== undefined) d.lastTrades.set(marketId, last)
  }
  const view: MarketView = {
    bestBid: book.bids[0]?.price ?? null,
    bestAsk: book.asks[0]?.price ?? null,
    last
  }
  return view
})

const CLOSED: MemberQuote = { open: false, bids: [], asks: [], tick: F.of("0.01"), lot: F.ONE, fees: NO_FEES }

/**
 * Each member's books, grid and fees as its venue shows them now, in member order; a member whose market cannot be
 * read, or is not open, is `open: false` (no leg goes there this round).
 */
export const quotesOf = (d: Driver, rt: Runtime) =>
  Effect.forEach(rt.members ?? [], (member) =>
    Effect.gen(function* () {
      const venue = d.gateway.venue(Id.venueOf(member.marketId))
      if (venue === undefined) return CLOSED
      const nativeId = Id.nativeOf(member.marketId)
      const market = yield* venue.market(nativeId).pipe(Effect.orElseSucceed(() => undefined))
      if (market === undefined || market.status !== "open") return CLOSED
      const book = yield* venue.book(nativeId).pipe(Effect.orElseSucceed(() => undefined))
      if (book === undefined) return CLOSED
      const quote: MemberQuote = {
        open: true,
        bids: book.bids,
        asks: book.asks,
        tick: market.tick,
        lot: market.lot,
        fees: (yield* feesOf(venue, market).pipe(Effect.orElseSucceed(() => undefined))) ?? NO_FEES
      }
      return quote
    })
  )

/** Live parents with an expiry or timer due by `now` that `pick` takes, in id order; no scan of every parent. */
export const dueById = (d: Driver, now: number, pick: (rt: Runtime) => boolean) => {
  const found = new Map<string, Runtime>()
  const kept: Array<{ readonly at: number; readonly id: string }> = []
  for (let top = d.due.peek(); top !== undefined && top.at <= now; top = d.due.peek()) {
    d.due.pop()
    if (!stillDue(d, top.at, top.id)) continue
    kept.push(top)
    const rt = d.parents.get(top.id)!
    if (pick(rt)) found.set(rt.id, rt)
  }
  // They stay in the heap until their parent no longer has them.
  for (const e of kept) d.due.push(e.at, e.id)
  return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : 1))
}

/** The next expiry or timer of any live parent (Infinity when none). */
export const nextDue = (d: Driver) => {
  for (;;) {
    const top = d.due.peek()
    if (top === undefined) return Number.POSITIVE_INFINITY
    if (stillDue(d, top.at, top.id)) return top.at
    d.due.pop()
  }
}
