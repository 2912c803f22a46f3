/** A venue fed by a tape: the recorded book is the market, own orders queue behind its displayed size. */
import { Clock, Effect, PubSub } from "effect"
import * as F from "../src/Domain/Fixed.ts"
import type { MarketView } from "../src/Engine/Core.ts"
import type { Market, Trade } from "../src/Domain/Market.ts"
import type { PlaceOrderRequest, Venue, VenueEvent } from "../src/Services/VenueGateway.ts"
import { VenueError } from "../src/Services/VenueGateway.ts"
import { type Answer, type FeeRule, makeOrderModel, viewOf } from "../src/Venues/Paper/Model.ts"
import { takerFee } from "../src/Venues/Sim/Exchange.ts"
import { SIM_CAPABILITIES } from "../src/Venues/SimVenue.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"
import { TapeBook } from "./TapeBook.ts"

const MAX_TRADES = 1000

/** A market's newest prints, at most `MAX_TRADES`, in a ring: a print costs the same however many came before. */
class RecentTrades {
  private readonly ring: Array<Trade> = []
  private next = 0
  /** How many are kept. */
  get size(): number {
    return this.ring.length
  }
  add(trade: Trade): void {
    if (this.ring.length < MAX_TRADES) this.ring.push(trade)
    else this.ring[this.next] = trade
    this.next = (this.next + 1) % MAX_TRADES
  }
  latest(): Trade | undefined {
    return this.ring.length === 0 ? undefined : this.ring[(this.next - 1 + MAX_TRADES) % MAX_TRADES]
  }
  /** Newest first. */
  list(): Array<Trade> {
    const out: Array<Trade> = []
    for (let k = 1; k <= this.ring.length; k++) out.push(this.ring[(this.next - k + MAX_TRADES) % MAX_TRADES]!)
    return out
  }
}
const EMPTY = new TapeBook()
/** Takers pay the sim's fee, makers nothing. */
const TAKER_ONLY: FeeRule = (price, amount, liquidity) => (liquidity === "taker" ? takerFee(price, amount) : F.ZERO)

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
    const trades = new Map<string, RecentTrades>()
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
      trades.set(nativeId, new RecentTrades())
    }
    const model = makeOrderModel({
      orderId: (n) => `tape-${String(n).padStart(6, "0")}`,
      tradeId: (nativeId, n) => `${nativeId}-own-${n}`,
      fees: () => TAKER_ONLY
    })
    const events = yield* PubSub.unbounded<VenueEvent>()

    /** Applies a tape event to the books and own orders, in plain TypeScript; answers what it reported. */
    const applyNow = (event: TapeEvent): Array<VenueEvent> => {
      const nativeId = event.market.slice(event.market.indexOf(":") + 1)
      const book = books.get(nativeId)
      const market = markets.get(nativeId)
      if (book === undefined || market === undefined) return []
      switch (event.type) {
        case "snapshot":
        case "change": {
          book.apply(event)
          // A change touches one level (the others are as they were); a snapshot, any of them.
          const reported = model.bookChanged(
            nativeId,
            book,
            event.ts,
            event.type === "change"
              ? { side: event.side === "bid" ? "buy" : "sell", price: F.of(event.price) }
              : undefined
          )
          reported.push({ _tag: "Book", nativeId, ts: event.ts })
          return reported
        }
        case "trade": {
          const price = F.of(event.price)
          const amount = F.of(event.amount)
          const recent = trades.get(nativeId)!
          recent.add({
            id: `${nativeId}-${event.ts}-${recent.size}`,
            ts: event.ts,
            price,
            amount,
            takerSide: event.taker_side
          })
          return model.traded(nativeId, price, amount, event.taker_side, event.ts)
        }
        case "status": {
          markets.set(nativeId, { ...market, status: event.status, result: event.result ?? null })
          return event.status !== "open" ? model.closed(nativeId, event.ts) : []
        }
        case "quote":
        case "gap":
          return []
      }
    }

    /** Publishes what an applied event reported to the subscribers, but the book updates. */
    const publish = (reported: ReadonlyArray<VenueEvent>) => {
      const own = reported.filter((e) => e._tag !== "Book")
      return own.length > 0 ? PubSub.publishAll(events, own) : Effect.void
    }

    /** The model's answer as the venue gives it: what it reported is published and comes with the order. */
    const answer = (result: Answer) =>
      result._tag === "Refused"
        ? Effect.fail(new VenueError({ venue: venueId, ...result.refusal }))
        : Effect.as(result.events.length > 0 ? PubSub.publishAll(events, result.events) : Effect.void, {
            ...viewOf(result.order),
            events: result.events
          })

    const placeOrder = Effect.fnUntraced(function* (r: PlaceOrderRequest) {
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
      return yield* answer(model.place(r, book, now))
    })

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
      trades: (nativeId) => Effect.sync(() => trades.get(nativeId)?.list() ?? []),
      placeOrder,
      cancelOrder: (id) => Effect.flatMap(Clock.currentTimeMillis, (now) => answer(model.cancel(id, now))),
      amendOrder: (id, changes) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const o = model.get(id)
          const book = o === undefined ? undefined : books.get(o.nativeId)
          return answer(model.amend(id, changes, book ?? EMPTY, now))
        }),
      orderByClientId: (clientOrderId) =>
        Effect.sync(() => {
          const o = model.byClientId(clientOrderId)
          return o === undefined ? undefined : viewOf(o)
        }),
      subscribe: PubSub.subscribe(events),
      applyNow,
      publish,
      view: (nativeId) => {
        const book = books.get(nativeId)
        if (book === undefined) return undefined
        return { bestBid: book.bestBid(), bestAsk: book.bestAsk(), last: trades.get(nativeId)?.latest()?.price ?? null }
      }
    }
    return venue
  })
