/** One market's YES limit order book with price-time priority, holding simulated maker quotes and own orders. */
import * as F from "../../Domain/Fixed.ts"
import type { BookLevel, Side } from "../../Domain/Market.ts"

/** How long an order lives: good till canceled, good till `expiresAt`, immediate-or-cancel, fill-or-kill. */
export type TimeInForce = "gtc" | "gtd" | "ioc" | "fok"

/** Status of an own order; terminal are all but `open`. */
export type OwnOrderStatus = "open" | "closed" | "canceled" | "expired" | "rejected"

/** An own order as handed to the book; price and amount are assumed already checked against tick and lot. */
export interface OwnOrderInput {
  readonly id: string
  readonly clientOrderId: string
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly tif: TimeInForce
  readonly postOnly: boolean
  /** When a resting order expires (ms); honoured whenever it is not null. */
  readonly expiresAt: number | null
}

/** An own order's live state as the book keeps it (read it, never write it from outside the book). */
export interface OwnOrder extends OwnOrderInput {
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly filled: F.Fixed
  readonly status: OwnOrderStatus
  /** Set by each amend: whether the order kept its place in the queue. Null until amended. */
  readonly queuePriorityPreserved: boolean | null
}

type OrderState = { -readonly [K in keyof OwnOrder]: OwnOrder[K] }

interface Slot {
  /** Null for the simulator's maker liquidity. */
  readonly own: OrderState | null
  size: F.Fixed
}

interface Level {
  readonly price: F.Fixed
  readonly queue: Array<Slot>
  total: F.Fixed
  maker: F.Fixed
}

/** One execution: a resting order (maker) against an incoming one (taker), at the resting price. */
export interface Match {
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly takerSide: Side
  /** The incoming own order, or null when the simulator took. */
  readonly taker: OwnOrder | null
  /** The resting own order, or null when the simulator's quote was hit. */
  readonly maker: OwnOrder | null
  /** True when this match filled the resting own order completely. */
  readonly makerClosed: boolean
}

/** What became of a placement. `rejected` leaves the book untouched. */
export interface PlaceResult {
  readonly order: OwnOrder
  readonly matches: ReadonlyArray<Match>
  readonly reason: "post_only_would_cross" | "fok_not_filled" | null
}

/** Outcome of an amend: either the amended order (and any executions when a new price crossed) or why not. */
export type AmendResult =
  | { readonly _tag: "Amended"; readonly order: OwnOrder; readonly matches: ReadonlyArray<Match> }
  | { readonly _tag: "Refused"; readonly reason: string }

/** A price and size the simulator's maker wants to show. */
export interface Quote {
  readonly price: F.Fixed
  readonly size: F.Fixed
}

/** True when a price `level` on the opposite side is reachable by an order of `side` limited at `limit`. */
const reaches = (side: Side, limit: F.Fixed, level: F.Fixed): boolean =>
  side === "buy" ? level <= limit : level >= limit

/**
 * The YES book: `buy` orders are bids, `sell` orders are asks, every price a YES price. Each level is a FIFO
 * queue; own orders join at the back and fill only when trades or depletions of the size ahead reach them.
 *
 * Amend rule: an order keeps its place in the queue only when its price is unchanged and its amount is not
 * increased; any other amend moves it to the back of its (new) level.
 */
export class OrderBook {
  private readonly bids: Array<Level> = []
  private readonly asks: Array<Level> = []
  private readonly own = new Map<string, OrderState>()
  /** Resting orders with an expiry, by (expiresAt, arrival); finished ones are dropped lazily. */
  private readonly expiring: Array<OrderState> = []
  private changes = 0

  /** Grows by one on every change to the displayed book. */
  get version(): number {
    return this.changes
  }

  bestBid(): F.Fixed | null {
    return this.bids[0]?.price ?? null
  }

  bestAsk(): F.Fixed | null {
    return this.asks[0]?.price ?? null
  }

  /** Aggregated levels of one side, best first (`buy` = bids). */
  levels(side: Side, depth = Infinity): Array<BookLevel> {
    const levels = side === "buy" ? this.bids : this.asks
    const n = Math.min(depth, levels.length)
    const out: Array<BookLevel> = []
    for (let i = 0; i < n; i++) {
      const l = levels[i]!
      out.push({ price: l.price, size: l.total })
    }
    return out
  }

  /** The simulator's own size at one price of one side. */
  makerSize(side: Side, price: F.Fixed): F.Fixed {
    const levels = side === "buy" ? this.bids : this.asks
    const i = this.search(levels, side, price)
    const l = levels[i]
    return l !== undefined && l.price === price ? l.maker : F.ZERO
  }

  /** Size resting ahead of an own order in its level's queue; undefined when it does not rest. */
  queueAhead(id: string): F.Fixed | undefined {
    const o = this.own.get(id)
    if (o === undefined || o.status !== "open") return undefined
    const level = this.levelOf(o.side, o.price, false)
    if (level === undefined) return undefined
    let ahead = 0
    for (const slot of level.queue) {
      if (slot.own === o) return ahead as F.Fixed
      ahead += slot.size
    }
    return undefined
  }

  order(id: string): OwnOrder | undefined {
    return this.own.get(id)
  }

  /** Lets go of an own order that no longer rests; one still resting stays. */
  forget(id: string): void {
    if (this.own.get(id)?.status !== "open") this.own.delete(id)
  }

  /** Every own order still resting, in arrival order. */
  openOrders(): Array<OwnOrder> {
    const out: Array<OwnOrder> = []
    for (const o of this.own.values()) if (o.status === "open") out.push(o)
    return out
  }

  /** Places an own order: post-only and fill-or-kill checks, matching at resting prices, then rest or cancel. */
  place(input: OwnOrderInput): PlaceResult {
    const order: OrderState = { ...input, filled: F.ZERO, status: "open", queuePriorityPreserved: null }
    this.own.set(order.id, order)
    if (order.postOnly && this.crosses(order.side, order.price)) {
      order.status = "rejected"
      return { order, matches: [], reason: "post_only_would_cross" }
    }
    if (order.tif === "fok" && this.available(order.side, order.price, order.amount) < order.amount) {
      order.status = "rejected"
      return { order, matches: [], reason: "fok_not_filled" }
    }
    const matches: Array<Match> = []
    this.sweep(order.side, order.price, order.amount, order, matches)
    if (order.filled === order.amount) order.status = "closed"
    else if (order.tif === "ioc" || order.tif === "fok") order.status = "canceled"
    else this.rest(order)
    return { order, matches, reason: null }
  }

  /** Cancels a resting own order; undefined when there is none open with that id. */
  cancel(id: string): OwnOrder | undefined {
    return this.finish(id, "canceled")
  }

  /** Changes price and/or amount of a resting own order (see the class note for the queue rule). */
  amend(id: string, changes: { readonly price?: F.Fixed; readonly amount?: F.Fixed }): AmendResult {
    const o = this.own.get(id)
    if (o === undefined || o.status !== "open") return { _tag: "Refused", reason: "order_not_open" }
    const price = changes.price ?? o.price
    const amount = changes.amount ?? o.amount
    if (amount < o.filled) return { _tag: "Refused", reason: "amount_below_filled" }
    const moved = price !== o.price
    if (moved && o.postOnly && this.crosses(o.side, price)) return { _tag: "Refused", reason: "post_only_would_cross" }
    const keep = !moved && amount <= o.amount
    if (!moved && amount === o.amount) {
      o.queuePriorityPreserved = true
      return { _tag: "Amended", order: o, matches: [] }
    }
    const level = this.levelOf(o.side, o.price, false)!
    const slot = level.queue.find((s) => s.own === o)!
    const remaining = (amount - o.filled) as F.Fixed
    o.queuePriorityPreserved = keep
    this.changes++
    if (keep) {
      const cut = (slot.size - remaining) as F.Fixed
      o.amount = amount
      slot.size = remaining
      level.total = (level.total - cut) as F.Fixed
      if (remaining === 0) {
        o.status = "closed"
        this.unslot(o.side, level, slot)
      }
      return { _tag: "Amended", order: o, matches: [] }
    }
    this.unslot(o.side, level, slot)
    o.price = price
    o.amount = amount
    const matches: Array<Match> = []
    if (remaining > 0) this.sweep(o.side, price, remaining, o, matches)
    if (o.filled === o.amount) o.status = "closed"
    else this.rest(o)
    return { _tag: "Amended", order: o, matches }
  }

  /** The earliest expiry among resting own orders, or null. */
  nextExpiry(): number | null {
    while (this.expiring.length > 0 && this.expiring[0]!.status !== "open") this.expiring.shift()
    return this.expiring[0]?.expiresAt ?? null
  }

  /** Expires every resting own order whose expiry is at or before `t`, earliest first. */
  expireUpTo(t: number): Array<OwnOrder> {
    const out: Array<OwnOrder> = []
    for (;;) {
      const next = this.nextExpiry()
      if (next === null || next > t) return out
      const o = this.expiring.shift()!
      this.finish(o.id, "expired")
      out.push(o)
    }
  }

  /** A simulator taker: takes up to `amount` from the opposite side at prices within `limit`. */
  take(side: Side, limit: F.Fixed, amount: F.Fixed): Array<Match> {
    const matches: Array<Match> = []
    this.sweep(side, limit, amount, null, matches)
    return matches
  }

  /**
   * Re-lays the simulator's quotes: maker size at prices not quoted any more is pulled, shrinking levels lose
   * their newest maker size first, growing ones add size at the back. A quote that reaches a resting own order
   * trades with it first at the own order's price (the maker is the aggressor), so the book is never crossed.
   */
  setMakerQuotes(bids: ReadonlyArray<Quote>, asks: ReadonlyArray<Quote>): Array<Match> {
    this.pullMakerOutside("buy", bids)
    this.pullMakerOutside("sell", asks)
    const matches: Array<Match> = []
    for (const q of asks) this.quote("sell", q, matches)
    for (const q of bids) this.quote("buy", q, matches)
    return matches
  }

  private quote(side: Side, q: Quote, matches: Array<Match>): void {
    let size = q.size
    if (this.crosses(side, q.price)) size = (size - this.sweep(side, q.price, size, null, matches)) as F.Fixed
    const level = this.levelOf(side, q.price, size > 0)
    if (level === undefined) return
    if (size > level.maker) this.addMaker(level, (size - level.maker) as F.Fixed)
    else if (size < level.maker) this.removeMaker(side, level, (level.maker - size) as F.Fixed)
  }

  private pullMakerOutside(side: Side, quotes: ReadonlyArray<Quote>): void {
    const levels = side === "buy" ? this.bids : this.asks
    for (let i = levels.length - 1; i >= 0; i--) {
      const level = levels[i]!
      if (level.maker === 0) continue
      let quoted = false
      for (const q of quotes) if (q.price === level.price) quoted = true
      if (!quoted) this.removeMaker(side, level, level.maker)
    }
  }

  private addMaker(level: Level, size: F.Fixed): void {
    const last = level.queue[level.queue.length - 1]
    if (last !== undefined && last.own === null) last.size = (last.size + size) as F.Fixed
    else level.queue.push({ own: null, size })
    level.maker = (level.maker + size) as F.Fixed
    level.total = (level.total + size) as F.Fixed
    this.changes++
  }

  /** Removes maker size from the back of the queue (the newest first). */
  private removeMaker(side: Side, level: Level, size: F.Fixed): void {
    let left = size as number
    for (let i = level.queue.length - 1; i >= 0 && left > 0; i--) {
      const slot = level.queue[i]!
      if (slot.own !== null) continue
      const cut = Math.min(left, slot.size)
      slot.size = (slot.size - cut) as F.Fixed
      left -= cut
      if (slot.size === 0) level.queue.splice(i, 1)
    }
    level.maker = (level.maker - size) as F.Fixed
    level.total = (level.total - size) as F.Fixed
    this.changes++
    if (level.queue.length === 0) this.dropLevel(side, level)
  }

  private crosses(side: Side, price: F.Fixed): boolean {
    const best = side === "buy" ? this.bestAsk() : this.bestBid()
    return best !== null && reaches(side, price, best)
  }

  private available(side: Side, limit: F.Fixed, wanted: F.Fixed): F.Fixed {
    const levels = side === "buy" ? this.asks : this.bids
    let sum = 0
    for (const l of levels) {
      if (!reaches(side, limit, l.price) || sum >= wanted) break
      sum += l.total
    }
    return sum as F.Fixed
  }

  /** Matches an incoming order against the opposite side; returns the amount executed. */
  private sweep(side: Side, limit: F.Fixed, amount: F.Fixed, taker: OrderState | null, out: Array<Match>): F.Fixed {
    const levels = side === "buy" ? this.asks : this.bids
    let left = amount as number
    while (left > 0) {
      const level = levels[0]
      if (level === undefined || !reaches(side, limit, level.price)) break
      while (left > 0 && level.queue.length > 0) {
        const slot = level.queue[0]!
        const q = Math.min(left, slot.size) as F.Fixed
        left -= q
        slot.size = (slot.size - q) as F.Fixed
        level.total = (level.total - q) as F.Fixed
        const maker = slot.own
        if (maker === null) level.maker = (level.maker - q) as F.Fixed
        else maker.filled = (maker.filled + q) as F.Fixed
        if (slot.size === 0) {
          level.queue.shift()
          if (maker !== null) maker.status = "closed"
        }
        if (taker !== null) taker.filled = (taker.filled + q) as F.Fixed
        out.push({
          price: level.price,
          amount: q,
          takerSide: side,
          taker,
          maker,
          makerClosed: maker !== null && slot.size === 0
        })
      }
      if (level.queue.length === 0) levels.shift()
      this.changes++
    }
    return (amount - left) as F.Fixed
  }

  private rest(o: OrderState): void {
    const level = this.levelOf(o.side, o.price, true)!
    const size = (o.amount - o.filled) as F.Fixed
    level.queue.push({ own: o, size })
    level.total = (level.total + size) as F.Fixed
    this.changes++
    if (o.expiresAt !== null && !this.expiring.includes(o)) {
      let i = this.expiring.length
      while (i > 0 && this.expiring[i - 1]!.expiresAt! > o.expiresAt) i--
      this.expiring.splice(i, 0, o)
    }
  }

  private finish(id: string, status: "canceled" | "expired"): OwnOrder | undefined {
    const o = this.own.get(id)
    if (o === undefined || o.status !== "open") return undefined
    const level = this.levelOf(o.side, o.price, false)!
    const slot = level.queue.find((s) => s.own === o)!
    this.unslot(o.side, level, slot)
    o.status = status
    this.changes++
    return o
  }

  private unslot(side: Side, level: Level, slot: Slot): void {
    const i = level.queue.indexOf(slot)
    if (i >= 0) level.queue.splice(i, 1)
    if (slot.size !== 0) level.total = (level.total - slot.size) as F.Fixed
    slot.size = F.ZERO
    if (level.queue.length === 0) this.dropLevel(side, level)
  }

  private dropLevel(side: Side, level: Level): void {
    const levels = side === "buy" ? this.bids : this.asks
    const i = levels.indexOf(level)
    if (i >= 0) levels.splice(i, 1)
  }

  /** Index of the first level not better than `price` on `side` (bids descend, asks ascend). */
  private search(levels: ReadonlyArray<Level>, side: Side, price: F.Fixed): number {
    let lo = 0
    let hi = levels.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const p = levels[mid]!.price
      if (side === "buy" ? p > price : p < price) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  private levelOf(side: Side, price: F.Fixed, create: boolean): Level | undefined {
    const levels = side === "buy" ? this.bids : this.asks
    const i = this.search(levels, side, price)
    const found = levels[i]
    if (found !== undefined && found.price === price) return found
    if (!create) return undefined
    const level: Level = { price, queue: [], total: F.ZERO, maker: F.ZERO }
    levels.splice(i, 0, level)
    return level
  }
}
