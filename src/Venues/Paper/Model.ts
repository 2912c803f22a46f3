/**
 * A venue's matching of own orders against a book it does not own: own orders queue behind the size the book
 * displays at their level and fill from the public trades that work through it, from the level thinning out ahead of
 * them, and from the book moving through their price. Taking liquidity fills at the displayed levels without moving
 * the book (the book stays the truth). Plain TypeScript: whoever feeds it says when each thing happened.
 */
import * as F from "../../Domain/Fixed.ts"
import type { Book, Side } from "../../Domain/Market.ts"
import type {
  FeeRule,
  PlaceOrderRequest,
  VenueError,
  VenueEvent,
  VenueFill,
  VenueOrder,
  VenueOrderStatus
} from "../../Services/VenueGateway.ts"

/** Which side of the YES book. */
export type BookSide = "bid" | "ask"

/** What the model reads of a market's book. */
export interface ModelBook {
  readonly bestBid: () => F.Fixed | null
  readonly bestAsk: () => F.Fixed | null
  /** Levels best first, as [price, size]. */
  readonly levels: (side: BookSide) => ReadonlyArray<readonly [F.Fixed, F.Fixed]>
  /** Size displayed at one level, zero when there is none. */
  readonly sizeAt: (side: BookSide, price: F.Fixed) => F.Fixed
}

/** A venue's book (bids and asks best first) as the model reads it. */
export const modelBook = (book: Book): ModelBook => {
  const bids = book.bids.map((l) => [l.price, l.size] as const)
  const asks = book.asks.map((l) => [l.price, l.size] as const)
  const sizes = { bid: new Map<number, F.Fixed>(), ask: new Map<number, F.Fixed>() }
  for (const [p, s] of bids) sizes.bid.set(p, F.add(sizes.bid.get(p) ?? F.ZERO, s))
  for (const [p, s] of asks) sizes.ask.set(p, F.add(sizes.ask.get(p) ?? F.ZERO, s))
  return {
    bestBid: () => bids[0]?.[0] ?? null,
    bestAsk: () => asks[0]?.[0] ?? null,
    levels: (side) => (side === "bid" ? bids : asks),
    sizeAt: (side, price) => sizes[side].get(price) ?? F.ZERO
  }
}

export type { FeeRule }

export const NO_FEES: FeeRule = () => F.ZERO

export interface ModelOptions {
  /** The venue order id of the n-th order placed (from 1). */
  readonly orderId: (n: number) => string
  /** The trade id of the n-th own fill (from 1) in a market. */
  readonly tradeId: (nativeId: string, n: number) => string
  /** The fee schedule of a market. */
  readonly fees: (nativeId: string) => FeeRule
}

export interface OwnOrder {
  readonly id: string
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: Side
  price: F.Fixed
  amount: F.Fixed
  filled: F.Fixed
  cost: F.Fixed
  fee: F.Fixed
  status: VenueOrderStatus
  /** Displayed size ahead of this order at its level; it fills once trades have worked through it. */
  ahead: F.Fixed
  /** When it took its place in the queue (placed, or queued again by an amend). */
  queuedAt: number
  queuePriorityPreserved: boolean | null
  updatedAt: number
}

/** Why the model refused a request. */
export interface Refusal {
  readonly kind: VenueError["kind"]
  readonly reason: string
}

export type Answer =
  | { readonly _tag: "Done"; readonly order: OwnOrder; readonly events: Array<VenueEvent> }
  | { readonly _tag: "Refused"; readonly refusal: Refusal }

export const viewOf = (o: OwnOrder): VenueOrder => ({
  venueOrderId: o.id,
  clientOrderId: o.clientOrderId,
  nativeId: o.nativeId,
  side: o.side,
  price: o.price,
  amount: o.amount,
  filled: o.filled,
  status: o.status,
  averagePrice: o.filled === 0 ? null : F.div(o.cost, o.filled),
  cost: o.cost,
  fee: o.fee,
  queuePriorityPreserved: o.queuePriorityPreserved,
  updatedAt: o.updatedAt
})

/**
 * The order as an answer gives it: its view with what the answer reported. The events are set on the view made above,
 * not spread into a copy of it: V8 gave every such copy a map of its own, and each reader of answers then missed.
 */
export const answerOf = (o: OwnOrder, events: ReadonlyArray<VenueEvent>): VenueOrder => {
  const answer: { -readonly [K in keyof VenueOrder]: VenueOrder[K] } = viewOf(o)
  answer.events = events
  return answer
}

const restingSide = (side: Side): BookSide => (side === "buy" ? "bid" : "ask")

/** What an event that reached no own order answers: one list for all of them. */
export const NO_EVENTS: ReadonlyArray<VenueEvent> = Object.freeze([])

/** How many finished orders a model keeps (as the desk keeps the last ones that finished). */
const KEEP_FINISHED = 1024

/** Own orders of one venue and how they fill against the books and trades they are fed. */
export const makeOrderModel = (options: ModelOptions) => {
  const orders = new Map<string, OwnOrder>()
  const byClientId = new Map<string, string>()
  /** Finished orders still kept, oldest first: a late cancel or a retry finds them; older ones are let go. */
  const finished = new Set<OwnOrder>()
  const finish = (o: OwnOrder) => {
    resting.get(o.nativeId)?.delete(o)
    unfile(o)
    finished.add(o)
    if (finished.size <= KEEP_FINISHED) return
    const oldest = finished.values().next().value!
    finished.delete(oldest)
    orders.delete(oldest.id)
    if (byClientId.get(oldest.clientOrderId) === oldest.id) byClientId.delete(oldest.clientOrderId)
  }
  let counter = 0
  let fillCounter = 0

  const fill = (
    o: OwnOrder,
    price: F.Fixed,
    amount: F.Fixed,
    liquidity: "maker" | "taker",
    ts: number,
    out: Array<VenueEvent>
  ) => {
    const fee = options.fees(o.nativeId)(price, amount, liquidity)
    o.filled = F.add(o.filled, amount)
    o.cost = F.add(o.cost, F.mul(price, amount))
    o.fee = F.add(o.fee, fee)
    o.updatedAt = ts
    fillCounter += 1
    const f: VenueFill = {
      tradeId: options.tradeId(o.nativeId, fillCounter),
      venueOrderId: o.id,
      clientOrderId: o.clientOrderId,
      nativeId: o.nativeId,
      side: o.side,
      price,
      amount,
      fee,
      liquidity,
      ts
    }
    out.push({ _tag: "Fill", fill: f })
    if (o.filled >= o.amount) {
      o.status = "closed"
      finish(o)
      out.push({ _tag: "Order", order: viewOf(o) })
    }
  }

  /** Own orders per market in the order they were placed; an order that ends leaves it (`finish`). */
  const resting = new Map<string, Set<OwnOrder>>()
  /**
   * Per market, the own orders at each level of each side (an order that ends leaves them too), so a
   * change of one level looks at the orders there only; and bounds on the open own prices (the highest buy, the lowest
   * sell), which only a placement or an amend widens: an order that ends leaves them wider than they need be, never
   * narrower, so a book that stays inside them reaches no own order, and the scan that finds one outside narrows them.
   */
  type Index = {
    readonly buy: Map<F.Fixed, Set<OwnOrder>>
    readonly sell: Map<F.Fixed, Set<OwnOrder>>
    highestBuy: F.Fixed | null
    lowestSell: F.Fixed | null
  }
  const indexes = new Map<string, Index>()
  const file = (o: OwnOrder) => {
    let index = indexes.get(o.nativeId)
    if (index === undefined) {
      indexes.set(o.nativeId, (index = { buy: new Map(), sell: new Map(), highestBuy: null, lowestSell: null }))
    }
    const levels = index[o.side]
    let level = levels.get(o.price)
    if (level === undefined) levels.set(o.price, (level = new Set()))
    level.add(o)
    if (o.side === "buy") index.highestBuy = index.highestBuy === null ? o.price : F.max(index.highestBuy, o.price)
    else index.lowestSell = index.lowestSell === null ? o.price : F.min(index.lowestSell, o.price)
  }
  const unfile = (o: OwnOrder) => {
    const levels = indexes.get(o.nativeId)?.[o.side]
    const level = levels?.get(o.price)
    if (level === undefined) return
    level.delete(o)
    if (level.size === 0) levels!.delete(o.price)
  }
  const NONE: ReadonlyArray<OwnOrder> = []
  /** The market's resting own orders, as a list of their own (what is done with them may end some). */
  const live = (nativeId: string): ReadonlyArray<OwnOrder> => {
    const set = resting.get(nativeId)
    return set === undefined || set.size === 0 ? NONE : [...set]
  }
  const anyLive = (nativeId: string): boolean => (resting.get(nativeId)?.size ?? 0) > 0
  /** The market's set of resting own orders, made when first asked for and kept while the model lives. */
  const restingOf = (nativeId: string): Set<OwnOrder> => {
    let set = resting.get(nativeId)
    if (set === undefined) resting.set(nativeId, (set = new Set()))
    return set
  }

  /** Whether an own order on `side` at `price` is at `at` or better than it. */
  const reaches = (side: Side, price: F.Fixed, at: F.Fixed): boolean => (side === "buy" ? price >= at : price <= at)

  /** Better price first (a buy's higher, a sell's lower), then earlier: the order a counterparty meets them in. */
  const byPriority = (rest: ReadonlyArray<OwnOrder>, side: Side): Array<OwnOrder> =>
    rest
      .filter((o) => o.side === side)
      .map((o, i) => [o, i] as const)
      .sort(([a, i], [b, j]) => (a.price === b.price ? i - j : side === "buy" ? b.price - a.price : a.price - b.price))
      .map(([o]) => o)

  /**
   * Resting orders the book now crosses fill at their own price. The crossing size is shared once: orders take it in
   * priority order, each from what the side shows up to its price less what the orders before it took.
   */
  const crossings = (rest: ReadonlyArray<OwnOrder>, book: ModelBook, ts: number, out: Array<VenueEvent>) => {
    for (const side of ["buy", "sell"] as const) {
      const best = side === "buy" ? book.bestAsk() : book.bestBid()
      if (best === null) continue
      // Only the orders the book reaches are sorted (most books reach none).
      const crossed = byPriority(
        rest.filter((o) => o.side === side && reaches(side, o.price, best)),
        side
      )
      if (crossed.length === 0) continue
      const levels = book.levels(side === "buy" ? "ask" : "bid")
      let taken = F.ZERO
      for (const o of crossed) {
        let available = F.ZERO
        for (const [p, s] of levels) {
          if (side === "buy" ? p > o.price : p < o.price) break
          available = F.add(available, s)
        }
        const amount = F.min(F.sub(available, taken), F.sub(o.amount, o.filled))
        if (amount <= 0) continue
        taken = F.add(taken, amount)
        fill(o, o.price, amount, "maker", ts, out)
      }
    }
  }

  /**
   * A print of `amount` at `price` that hit `side` is shared once across the queue: own orders priced through it
   * first (better price first, then earlier), then the level at the price in queue order, where each own order
   * waits behind the displayed size ahead of it when it was placed and behind the own orders placed before it.
   * Displayed size the print works through is ahead of every later own order at the level too, so it leaves each
   * one's `ahead` smaller.
   */
  const shareTrade = (
    rest: ReadonlyArray<OwnOrder>,
    side: Side,
    price: F.Fixed,
    amount: F.Fixed,
    ts: number,
    out: Array<VenueEvent>
  ) => {
    let left = amount
    const level: Array<OwnOrder> = []
    // Only the orders the print reaches are sorted (those it does not reach take nothing).
    for (const o of byPriority(
      rest.filter((o) => o.side === side && reaches(side, o.price, price)),
      side
    )) {
      if (o.price === price) {
        level.push(o)
        continue
      }
      if (side === "buy" ? o.price < price : o.price > price) continue
      const size = F.min(left, F.sub(o.amount, o.filled))
      if (size <= 0) continue
      left = F.sub(left, size)
      fill(o, o.price, size, "maker", ts, out)
    }
    let shown = F.ZERO
    for (const o of level) {
      const eat = F.min(left, F.max(F.ZERO, F.sub(o.ahead, shown)))
      shown = F.add(shown, eat)
      left = F.sub(left, eat)
      o.ahead = F.max(F.ZERO, F.sub(o.ahead, shown))
      const size = F.min(left, F.sub(o.amount, o.filled))
      if (size <= 0) continue
      left = F.sub(left, size)
      fill(o, o.price, size, "maker", ts, out)
    }
  }

  return {
    /** An order by its venue order id. */
    get: (id: string): OwnOrder | undefined => orders.get(id),
    byClientId: (clientOrderId: string): OwnOrder | undefined => {
      const id = byClientId.get(clientOrderId)
      return id === undefined ? undefined : orders.get(id)
    },
    /** Every open order, in the order they were placed. */
    open: (): ReadonlyArray<OwnOrder> => [...orders.values()].filter((o) => o.status === "open"),
    /** The markets where own orders rest now. */
    restingMarkets: (): ReadonlyArray<string> => [...resting.keys()].filter(anyLive),
    hasResting: anyLive,
    /**
     * The market's resting own orders as a set that stays the same object while the model lives, for whoever asks
     * `hasResting` of one market at every input: its size, with no lookup by the market's id.
     */
    restingOf: (nativeId: string): ReadonlySet<OwnOrder> => restingOf(nativeId),

    /**
     * A book changed. `side` and `price` name the one level a change touched (the others are as they were, and no order is
     * queued behind more than its level shows); without them, any level may have changed. `readAt`, when the book was
     * read some time ago, leaves out the orders queued since. A level that thins out in
     * front of a resting order moves it up its queue; a book that moved through a resting order's price fills it.
     */
    bookChanged: (
      nativeId: string,
      book: ModelBook,
      ts: number,
      side?: Side,
      price?: F.Fixed,
      readAt?: number
    ): ReadonlyArray<VenueEvent> => {
      const index = indexes.get(nativeId)
      if (index === undefined) return NO_EVENTS
      const bestAsk = book.bestAsk()
      const bestBid = book.bestBid()
      if (side !== undefined && price !== undefined && readAt === undefined) {
        // One level changed: only the orders queued there can move up; and a book inside the bounds crosses none.
        const level = (side === "buy" ? index.buy : index.sell).get(price)
        if (level !== undefined) {
          // Every order of the level rests on that side at that price: the size shown there is read once.
          const shown = book.sizeAt(restingSide(side), price)
          for (const o of level) if (shown < o.ahead) o.ahead = shown
        }
        const mayReach =
          (bestAsk !== null && index.highestBuy !== null && bestAsk <= index.highestBuy) ||
          (bestBid !== null && index.lowestSell !== null && bestBid >= index.lowestSell)
        if (!mayReach) return NO_EVENTS
      }
      const set = resting.get(nativeId)
      if (set === undefined || set.size === 0) return NO_EVENTS
      // One pass, with no list made: most changes reach no own order, and only then are the orders gathered. The
      // bounds are made exact on the way.
      let highestBuy: F.Fixed | null = null
      let lowestSell: F.Fixed | null = null
      let reached = false
      for (const o of set) {
        if (o.side === "buy") highestBuy = highestBuy === null ? o.price : F.max(highestBuy, o.price)
        else lowestSell = lowestSell === null ? o.price : F.min(lowestSell, o.price)
        // A book read before an order took its place says nothing of that order's queue.
        if (readAt !== undefined && o.queuedAt > readAt) continue
        if (side === undefined || (o.side === side && o.price === price)) {
          const shown = book.sizeAt(restingSide(o.side), o.price)
          if (shown < o.ahead) o.ahead = shown
        }
        const best = o.side === "buy" ? bestAsk : bestBid
        if (best !== null && reaches(o.side, o.price, best)) reached = true
      }
      index.highestBuy = highestBuy
      index.lowestSell = lowestSell
      if (!reached) return NO_EVENTS
      const out: Array<VenueEvent> = []
      const rest: Array<OwnOrder> = []
      for (const o of set) if (readAt === undefined || o.queuedAt <= readAt) rest.push(o)
      crossings(rest, book, ts, out)
      return out
    },

    /** A public trade printed: it fills the own orders it reaches in their queue. */
    traded: (
      nativeId: string,
      price: F.Fixed,
      amount: F.Fixed,
      takerSide: Side,
      ts: number
    ): ReadonlyArray<VenueEvent> => {
      const side = takerSide === "sell" ? "buy" : "sell"
      const set = resting.get(nativeId)
      const index = indexes.get(nativeId)
      if (set === undefined || index === undefined) return NO_EVENTS
      // Most prints reach no own order: none when the price is outside the bounds, and the orders are gathered only
      // when one is reached.
      const bound = side === "buy" ? index.highestBuy : index.lowestSell
      if (bound === null || !reaches(side, bound, price)) return NO_EVENTS
      let reached = false
      for (const o of set) {
        if (o.side === side && reaches(side, o.price, price)) {
          reached = true
          break
        }
      }
      if (!reached) return NO_EVENTS
      const out: Array<VenueEvent> = []
      shareTrade(live(nativeId), side, price, amount, ts, out)
      return out
    },

    /** A market stopped trading: its resting own orders end canceled. */
    closed: (nativeId: string, ts: number): Array<VenueEvent> => {
      const out: Array<VenueEvent> = []
      for (const o of live(nativeId)) {
        o.status = "canceled"
        finish(o)
        o.updatedAt = ts
        out.push({ _tag: "Order", order: viewOf(o) })
      }
      return out
    },

    /** Places an order against the book as it is now: it takes what crosses, and the rest queues behind the level. */
    place: (r: PlaceOrderRequest, book: ModelBook, now: number): Answer => {
      const takeSide = r.side === "buy" ? "ask" : "bid"
      const crossing = book.levels(takeSide).filter(([p]) => (r.side === "buy" ? p <= r.price : p >= r.price))
      const available = crossing.reduce((sum, [, s]) => F.add(sum, s), F.ZERO)
      if (r.postOnly && crossing.length > 0) {
        return { _tag: "Refused", refusal: { kind: "rejected", reason: "post_only_would_cross" } }
      }
      if (r.timeInForce === "fok" && available < r.amount) {
        return { _tag: "Refused", refusal: { kind: "rejected", reason: "fok_not_filled" } }
      }
      counter += 1
      const o: OwnOrder = {
        id: options.orderId(counter),
        clientOrderId: r.clientOrderId,
        nativeId: r.nativeId,
        side: r.side,
        price: r.price,
        amount: r.amount,
        filled: F.ZERO,
        cost: F.ZERO,
        fee: F.ZERO,
        status: "open",
        ahead: book.sizeAt(restingSide(r.side), r.price),
        queuedAt: now,
        queuePriorityPreserved: null,
        updatedAt: now
      }
      orders.set(o.id, o)
      byClientId.set(o.clientOrderId, o.id)
      const set = restingOf(o.nativeId)
      set.add(o)
      file(o)
      const out: Array<VenueEvent> = []
      for (const [p, s] of crossing) {
        const left = F.sub(o.amount, o.filled)
        if (left <= 0) break
        fill(o, p, F.min(left, s), "taker", now, out)
      }
      if (o.status === "open" && (r.timeInForce === "ioc" || r.timeInForce === "fok")) {
        o.status = "canceled"
        finish(o)
        out.push({ _tag: "Order", order: viewOf(o) })
      }
      return { _tag: "Done", order: o, events: out }
    },

    cancel: (id: string, now: number): Answer => {
      const o = orders.get(id)
      if (o === undefined) return { _tag: "Refused", refusal: { kind: "rejected", reason: `no order ${id}` } }
      const out: Array<VenueEvent> = []
      if (o.status === "open") {
        o.status = "canceled"
        finish(o)
        o.updatedAt = now
        out.push({ _tag: "Order", order: viewOf(o) })
      }
      return { _tag: "Done", order: o, events: out }
    },

    /**
     * Changes a resting order: a smaller amount at the same price keeps its place; anything else queues it again,
     * behind the displayed size at its (new) price and behind the own orders already there.
     */
    amend: (
      id: string,
      changes: { readonly price?: F.Fixed; readonly amount?: F.Fixed },
      book: ModelBook,
      now: number
    ): Answer => {
      const o = orders.get(id)
      if (o === undefined) return { _tag: "Refused", refusal: { kind: "rejected", reason: `no order ${id}` } }
      if (o.status !== "open") return { _tag: "Refused", refusal: { kind: "rejected", reason: `order is ${o.status}` } }
      const price = changes.price ?? o.price
      const amount = changes.amount ?? o.amount
      const keeps = price === o.price && amount <= o.amount
      o.amount = amount
      if (!keeps) {
        unfile(o)
        o.price = price
        o.ahead = book.sizeAt(restingSide(o.side), price)
        o.queuedAt = now
        const set = resting.get(o.nativeId)
        if (set !== undefined && set.delete(o)) set.add(o)
        file(o)
      }
      o.queuePriorityPreserved = keeps
      o.updatedAt = now
      const out: Array<VenueEvent> = []
      if (o.filled >= o.amount) {
        o.status = "closed"
        finish(o)
        out.push({ _tag: "Order", order: viewOf(o) })
      }
      return { _tag: "Done", order: o, events: out }
    }
  }
}

export type OrderModel = ReturnType<typeof makeOrderModel>
