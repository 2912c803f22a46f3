/** A venue fed by a tape: the recorded book is the market, own orders queue behind its displayed size. */
import { Clock, Effect, PubSub } from "effect"
import * as F from "../src/Domain/Fixed.ts"
import type { MarketView } from "../src/Engine/Core.ts"
import type { Market, Side, Trade } from "../src/Domain/Market.ts"
import type {
  PlaceOrderRequest,
  Venue,
  VenueEvent,
  VenueFill,
  VenueOrder,
  VenueOrderStatus
} from "../src/Services/VenueGateway.ts"
import { VenueError } from "../src/Services/VenueGateway.ts"
import { takerFee } from "../src/Venues/Sim/Exchange.ts"
import { SIM_CAPABILITIES } from "../src/Venues/SimVenue.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"
import { TapeBook } from "./TapeBook.ts"

interface OwnOrder {
  id: string
  clientOrderId: string
  nativeId: string
  side: Side
  price: F.Fixed
  amount: F.Fixed
  filled: F.Fixed
  cost: F.Fixed
  fee: F.Fixed
  status: VenueOrderStatus
  /** Displayed size ahead of this order at its level; it fills once trades have worked through it. */
  ahead: F.Fixed
  queuePriorityPreserved: boolean | null
  updatedAt: number
}

const MAX_TRADES = 1000

export interface TapeVenue extends Venue {
  /** Applies one tape event at its time, in plain TypeScript; answers what it reported. */
  readonly applyNow: (event: TapeEvent) => ReadonlyArray<VenueEvent>
  /**
   * Publishes what an applied event reported to the subscribers: fills and order updates, not book updates (whoever
   * applies the tape hands the engine the market's view itself).
   */
  readonly publish: (reported: ReadonlyArray<VenueEvent>) => Effect.Effect<void>
  /** A market's best bid, best ask and last trade now (plain TypeScript, no copy of the book). */
  readonly view: (nativeId: string) => MarketView | undefined
}

/**
 * The venue of a tape. Taking liquidity fills at the displayed levels without moving the recorded book (the tape
 * stays the truth); a resting order fills when recorded trades reach it in its queue, when the level ahead of it
 * thins out and trades follow, or when the book moves through its price.
 */
export const makeTapeVenue = (header: TapeHeader) =>
  Effect.gen(function* () {
    const venueId = header.markets[0]?.id.slice(0, header.markets[0].id.indexOf(":")) ?? "sim"
    const markets = new Map<string, Market>()
    const books = new Map<string, TapeBook>()
    const trades = new Map<string, Array<Trade>>()
    for (const m of header.markets) {
      const nativeId = m.id.slice(m.id.indexOf(":") + 1)
      markets.set(nativeId, {
        venue: venueId,
        nativeId,
        eventId: nativeId,
        title: m.title,
        subtitle: "",
        category: header.source,
        status: "open",
        openTime: 0,
        closeTime: 0,
        tick: F.of(m.tick),
        lot: F.of(m.lot),
        result: null
      })
      books.set(nativeId, new TapeBook())
      trades.set(nativeId, [])
    }
    const orders = new Map<string, OwnOrder>()
    const byClientId = new Map<string, string>()
    let counter = 0
    let fillCounter = 0
    const events = yield* PubSub.unbounded<VenueEvent>()

    const view = (o: OwnOrder): VenueOrder => ({
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

    const fill = (
      o: OwnOrder,
      price: F.Fixed,
      amount: F.Fixed,
      liquidity: "maker" | "taker",
      ts: number,
      out: Array<VenueEvent>
    ) => {
      const fee = liquidity === "taker" ? takerFee(price, amount) : F.ZERO
      o.filled = F.add(o.filled, amount)
      o.cost = F.add(o.cost, F.mul(price, amount))
      o.fee = F.add(o.fee, fee)
      o.updatedAt = ts
      fillCounter += 1
      const f: VenueFill = {
        tradeId: `${o.nativeId}-own-${fillCounter}`,
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
        out.push({ _tag: "Order", order: view(o) })
      }
    }

    /** Own orders per market in the order they were placed; ones no longer open are dropped as they are met. */
    const resting = new Map<string, Set<OwnOrder>>()
    const NONE: ReadonlyArray<OwnOrder> = []
    const live = (nativeId: string): ReadonlyArray<OwnOrder> => {
      const set = resting.get(nativeId)
      if (set === undefined || set.size === 0) return NONE
      const out: Array<OwnOrder> = []
      for (const o of set) {
        if (o.status === "open") out.push(o)
        else set.delete(o)
      }
      return out
    }

    /** Better price first (a buy's higher, a sell's lower), then earlier: the order a counterparty meets them in. */
    const byPriority = (rest: ReadonlyArray<OwnOrder>, side: Side): Array<OwnOrder> =>
      rest
        .filter((o) => o.side === side)
        .map((o, i) => [o, i] as const)
        .sort(([a, i], [b, j]) =>
          a.price === b.price ? i - j : side === "buy" ? b.price - a.price : a.price - b.price
        )
        .map(([o]) => o)

    /**
     * Resting orders the book now crosses fill at their own price. The crossing size is shared once: orders take it in
     * priority order, each from what the side shows up to its price less what the orders before it took.
     */
    const crossings = (rest: ReadonlyArray<OwnOrder>, book: TapeBook, ts: number, out: Array<VenueEvent>) => {
      for (const side of ["buy", "sell"] as const) {
        const best = side === "buy" ? book.bestAsk() : book.bestBid()
        if (best === null) continue
        const crossed = byPriority(rest, side).filter((o) => (side === "buy" ? best <= o.price : best >= o.price))
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
     * waits behind the recorded size shown ahead of it when it was placed and behind the own orders placed before it.
     * Recorded size the print works through is ahead of every later own order at the level too, so it leaves each
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
      for (const o of byPriority(rest, side)) {
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
      let recorded = F.ZERO
      for (const o of level) {
        const eat = F.min(left, F.max(F.ZERO, F.sub(o.ahead, recorded)))
        recorded = F.add(recorded, eat)
        left = F.sub(left, eat)
        o.ahead = F.max(F.ZERO, F.sub(o.ahead, recorded))
        const size = F.min(left, F.sub(o.amount, o.filled))
        if (size <= 0) continue
        left = F.sub(left, size)
        fill(o, o.price, size, "maker", ts, out)
      }
    }

    /** Applies a tape event to the books and own orders, in plain TypeScript; answers what it reported. */
    const applyNow = (event: TapeEvent): Array<VenueEvent> => {
      const nativeId = event.market.slice(event.market.indexOf(":") + 1)
      const book = books.get(nativeId)
      const market = markets.get(nativeId)
      const out: Array<VenueEvent> = []
      if (book === undefined || market === undefined) return out
      switch (event.type) {
        case "snapshot":
        case "change": {
          book.apply(event)
          const rest = live(nativeId)
          if (rest.length > 0) {
            // A level that thins out in front of a resting order moves it up its queue. A change touches one level
            // (the others are as they were, and no order is queued behind more than its level shows); a snapshot,
            // any of them.
            const side = event.type === "change" ? (event.side === "bid" ? "buy" : "sell") : null
            const at = event.type === "change" ? F.of(event.price) : null
            for (const o of rest) {
              if (side !== null && (o.side !== side || o.price !== at)) continue
              const shown = book.sizeAt(o.side === "buy" ? "bid" : "ask", o.price)
              if (shown < o.ahead) o.ahead = shown
            }
            crossings(rest, book, event.ts, out)
          }
          out.push({ _tag: "Book", nativeId, ts: event.ts })
          break
        }
        case "trade": {
          const price = F.of(event.price)
          const amount = F.of(event.amount)
          const list = trades.get(nativeId)!
          list.unshift({
            id: `${nativeId}-${event.ts}-${list.length}`,
            ts: event.ts,
            price,
            amount,
            takerSide: event.taker_side
          })
          if (list.length > MAX_TRADES) list.length = MAX_TRADES
          shareTrade(live(nativeId), event.taker_side === "sell" ? "buy" : "sell", price, amount, event.ts, out)
          break
        }
        case "status": {
          markets.set(nativeId, { ...market, status: event.status, result: event.result ?? null })
          if (event.status !== "open") {
            for (const o of live(nativeId)) {
              o.status = "canceled"
              o.updatedAt = event.ts
              out.push({ _tag: "Order", order: view(o) })
            }
          }
          break
        }
        case "quote":
        case "gap":
          break
      }
      return out
    }

    /** Publishes what an applied event reported to the subscribers, but the book updates. */
    const publish = (reported: ReadonlyArray<VenueEvent>) => {
      const own = reported.filter((e) => e._tag !== "Book")
      return own.length > 0 ? PubSub.publishAll(events, own) : Effect.void
    }

    const answer = (o: OwnOrder, out: Array<VenueEvent>) =>
      Effect.as(out.length > 0 ? PubSub.publishAll(events, out) : Effect.void, { ...view(o), events: out })

    const placeOrder = (r: PlaceOrderRequest) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const market = markets.get(r.nativeId)
        const book = books.get(r.nativeId)
        if (market === undefined || book === undefined) {
          return yield* Effect.fail(new VenueError({ venue: venueId, kind: "rejected", reason: "no such market" }))
        }
        if (market.status !== "open") {
          return yield* Effect.fail(
            new VenueError({ venue: venueId, kind: "market_closed", reason: `market is ${market.status}` })
          )
        }
        const takeSide = r.side === "buy" ? "ask" : "bid"
        const crossing = book.levels(takeSide).filter(([p]) => (r.side === "buy" ? p <= r.price : p >= r.price))
        const available = crossing.reduce((sum, [, s]) => F.add(sum, s), F.ZERO)
        if (r.postOnly && crossing.length > 0) {
          return yield* Effect.fail(
            new VenueError({ venue: venueId, kind: "rejected", reason: "post_only_would_cross" })
          )
        }
        if (r.timeInForce === "fok" && available < r.amount) {
          return yield* Effect.fail(new VenueError({ venue: venueId, kind: "rejected", reason: "fok_not_filled" }))
        }
        counter += 1
        const o: OwnOrder = {
          id: `tape-${String(counter).padStart(6, "0")}`,
          clientOrderId: r.clientOrderId,
          nativeId: r.nativeId,
          side: r.side,
          price: r.price,
          amount: r.amount,
          filled: F.ZERO,
          cost: F.ZERO,
          fee: F.ZERO,
          status: "open",
          ahead: book.sizeAt(r.side === "buy" ? "bid" : "ask", r.price),
          queuePriorityPreserved: null,
          updatedAt: now
        }
        orders.set(o.id, o)
        byClientId.set(o.clientOrderId, o.id)
        let set = resting.get(o.nativeId)
        if (set === undefined) resting.set(o.nativeId, (set = new Set()))
        set.add(o)
        const out: Array<VenueEvent> = []
        for (const [p, s] of crossing) {
          const left = F.sub(o.amount, o.filled)
          if (left <= 0) break
          fill(o, p, F.min(left, s), "taker", now, out)
        }
        if (o.status === "open" && (r.timeInForce === "ioc" || r.timeInForce === "fok")) {
          o.status = "canceled"
          out.push({ _tag: "Order", order: view(o) })
        }
        return yield* answer(o, out)
      })

    const known = (id: string) => {
      const o = orders.get(id)
      return o === undefined
        ? Effect.fail(new VenueError({ venue: venueId, kind: "rejected", reason: `no order ${id}` }))
        : Effect.succeed(o)
    }

    const venue: TapeVenue = {
      info: { id: venueId, name: `Replay of a ${header.source} tape`, book_model: "yes_book", has: SIM_CAPABILITIES },
      accounts: ["default"],
      markets: Effect.sync(() => [...markets.values()].sort((a, b) => (a.nativeId < b.nativeId ? -1 : 1))),
      market: (nativeId) => Effect.sync(() => markets.get(nativeId)),
      book: (nativeId) =>
        Effect.map(Clock.currentTimeMillis, (ts) => {
          const book = books.get(nativeId)
          const level = ([price, size]: readonly [F.Fixed, F.Fixed]) => ({ price, size })
          return {
            ts,
            bids: book === undefined ? [] : book.levels("bid").map(level),
            asks: book === undefined ? [] : book.levels("ask").map(level)
          }
        }),
      trades: (nativeId) => Effect.sync(() => trades.get(nativeId) ?? []),
      placeOrder,
      cancelOrder: (id) =>
        Effect.gen(function* () {
          const o = yield* known(id)
          const out: Array<VenueEvent> = []
          if (o.status === "open") {
            o.status = "canceled"
            o.updatedAt = yield* Clock.currentTimeMillis
            out.push({ _tag: "Order", order: view(o) })
          }
          return yield* answer(o, out)
        }),
      amendOrder: (id, changes) =>
        Effect.gen(function* () {
          const o = yield* known(id)
          if (o.status !== "open") {
            return yield* Effect.fail(
              new VenueError({ venue: venueId, kind: "rejected", reason: `order is ${o.status}` })
            )
          }
          const price = changes.price ?? o.price
          const amount = changes.amount ?? o.amount
          const keeps = price === o.price && amount <= o.amount
          o.amount = amount
          if (!keeps) {
            o.price = price
            o.ahead = books.get(o.nativeId)!.sizeAt(o.side === "buy" ? "bid" : "ask", price)
            // It lost its place: behind the own orders already at the level too.
            const set = resting.get(o.nativeId)
            if (set !== undefined && set.delete(o)) set.add(o)
          }
          o.queuePriorityPreserved = keeps
          o.updatedAt = yield* Clock.currentTimeMillis
          const out: Array<VenueEvent> = []
          if (o.filled >= o.amount) {
            o.status = "closed"
            out.push({ _tag: "Order", order: view(o) })
          }
          return yield* answer(o, out)
        }),
      orderByClientId: (clientOrderId) =>
        Effect.sync(() => {
          const id = byClientId.get(clientOrderId)
          return id === undefined ? undefined : view(orders.get(id)!)
        }),
      subscribe: PubSub.subscribe(events),
      applyNow,
      publish,
      view: (nativeId) => {
        const book = books.get(nativeId)
        if (book === undefined) return undefined
        return { bestBid: book.bestBid(), bestAsk: book.bestAsk(), last: trades.get(nativeId)?.[0]?.price ?? null }
      }
    }
    return venue
  })
