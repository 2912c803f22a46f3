/** A venue fed by a tape: the recorded book is the market, own orders queue behind its displayed size. */
import { Clock, Effect, PubSub } from "effect"
import * as F from "../src/Domain/Fixed.ts"
import type { Market, Touch, Trade } from "../src/Domain/Market.ts"
import type { PlaceOrderRequest, Venue, VenueEvent, VenueOrder } from "../src/Services/VenueGateway.ts"
import { VenueError } from "../src/Services/VenueGateway.ts"
import { type Answer, answerOf, type FeeRule, makeOrderModel, NO_EVENTS, viewOf } from "../src/Venues/Paper/Model.ts"
import { takerFee } from "../src/Venues/Sim/Exchange.ts"
import { SIM_CAPABILITIES } from "../src/Venues/SimVenue.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"
import { TapeBook } from "./TapeBook.ts"
import * as Id from "../src/Domain/Ids.ts"

const MAX_TRADES = 1000

/** Room a market's ring of prints starts with; it doubles as prints come, up to `MAX_TRADES`. */
const FIRST_ROOM = 16

/** `wider` holding what `column` holds, at its start. */
const widened = <A extends Float64Array | Uint8Array>(column: A, wider: A): A => {
  wider.set(column)
  return wider
}

/**
 * A market's newest prints, at most `MAX_TRADES`, in a ring of typed columns: a print costs the same however many came
 * before and allocates nothing once the ring has grown, the columns sit outside the collected heap, and its record is
 * made only once someone reads the list (then kept until the print leaves the ring). The `n`th print of the market
 * (from 0) sits at `n` modulo the room: the room grows only while no print has wrapped, and `n` is its id's last part.
 */
class RecentTrades {
  private ts = new Float64Array(FIRST_ROOM)
  private prices = new Float64Array(FIRST_ROOM)
  private amounts = new Float64Array(FIRST_ROOM)
  private sells = new Uint8Array(FIRST_ROOM)
  private made: Array<Trade | undefined> | undefined
  /** Prints added since the start. */
  private added = 0
  constructor(private readonly nativeId: string) {}
  /** How many are kept. */
  get size(): number {
    return Math.min(this.added, MAX_TRADES)
  }
  add(ts: number, price: F.Fixed, amount: F.Fixed, takerSide: "buy" | "sell"): void {
    if (this.added === this.ts.length && this.added < MAX_TRADES) this.grow()
    const at = this.added % this.ts.length
    this.ts[at] = ts
    this.prices[at] = price
    this.amounts[at] = amount
    this.sells[at] = takerSide === "sell" ? 1 : 0
    if (this.made !== undefined) this.made[at] = undefined
    this.added += 1
  }
  /** Twice the room (at most `MAX_TRADES`), the kept prints where they were. */
  private grow(): void {
    const room = Math.min(MAX_TRADES, this.ts.length * 2)
    this.ts = widened(this.ts, new Float64Array(room))
    this.prices = widened(this.prices, new Float64Array(room))
    this.amounts = widened(this.amounts, new Float64Array(room))
    this.sells = widened(this.sells, new Uint8Array(room))
    this.made?.push(...Array.from({ length: room - this.made.length }, () => undefined))
  }
  /** The newest print's price, null when none. */
  latestPrice(): F.Fixed | null {
    return this.added === 0 ? null : (this.prices[(this.added - 1) % this.ts.length]! as F.Fixed)
  }
  /** Newest first. */
  list(): Array<Trade> {
    const made = (this.made ??= Array.from({ length: this.ts.length }, () => undefined))
    const out: Array<Trade> = []
    for (let n = this.added - 1; n >= this.added - this.size; n--) {
      const i = n % this.ts.length
      let trade = made[i]
      if (trade === undefined) {
        trade = {
          id: `${this.nativeId}-${this.ts[i]!}-${n}`,
          ts: this.ts[i]!,
          price: this.prices[i]! as F.Fixed,
          amount: this.amounts[i]! as F.Fixed,
          takerSide: this.sells[i] === 1 ? "sell" : "buy"
        }
        made[i] = trade
      }
      out.push(trade)
    }
    return out
  }
}
const EMPTY = new TapeBook()

/**
 * A market's best bid, best ask and last print, read off its book and its prints (no copy of either); the object of
 * the last time it was read when none of its numbers moved since (most changes of a book are behind its touch), so a
 * view costs no allocation then.
 */
const touchNow = (parts: Parts): Touch => {
  const bestBid = parts.book.bestBid()
  const bestAsk = parts.book.bestAsk()
  const last = parts.trades.latestPrice()
  const seen = parts.touch
  if (seen !== null && seen.bestBid === bestBid && seen.bestAsk === bestAsk && seen.last === last) return seen
  return (parts.touch = { bestBid, bestAsk, last })
}

/** Takers pay the sim's fee, makers nothing. */
const TAKER_ONLY: FeeRule = (price, amount, liquidity) => (liquidity === "taker" ? takerFee(price, amount) : F.ZERO)

export interface TapeVenue extends Venue {
  /**
   * Applies one tape event at its time, in plain TypeScript; answers what it did to own orders (fills and order
   * updates; whoever applies the tape hands the engine the market's view itself, so no book update is reported).
   */
  readonly applyNow: (event: TapeEvent) => ReadonlyArray<VenueEvent>
  /** Publishes what an applied event reported to the subscribers. */
  readonly publish: (reported: ReadonlyArray<VenueEvent>) => Effect.Effect<void>
  /** How many subscribe to its events now: with one only (the desk), what it reported can be handed to the desk itself. */
  readonly subscribers: () => number
  /** A market's best bid, best ask and last trade now, by its id (`venue:native`; no copy of the book). */
  readonly view: (marketId: string) => Touch | undefined
  /** One market of the tape by its id (`venue:native`), to apply its events with no lookup of the id each time. */
  readonly marketOf: (marketId: string) => TapeMarket | undefined
}

/** One market of a tape venue. */
export interface TapeMarket {
  /** `applyNow` for an event of this market. */
  readonly apply: (event: TapeEvent) => ReadonlyArray<VenueEvent>
  /** The market's view now: `view` of its id. */
  readonly view: () => Touch
}

/** What a tape venue holds of each market. */
interface Parts {
  readonly nativeId: string
  readonly book: TapeBook
  readonly trades: RecentTrades
  /** The model's resting own orders of the market (the same set while the venue lives). */
  readonly resting: ReadonlySet<unknown>
  handle: TapeMarket
  /** The touch as last read (`touchNow`); null before the first read. */
  touch: Touch | null
}

/**
 * The venue of a tape. Taking liquidity fills at the displayed levels without moving the recorded book (the tape
 * stays the truth); a resting order fills when recorded trades reach it in its queue, when the level ahead of it
 * thins out and trades follow, or when the book moves through its price.
 */
export const makeTapeVenue = (header: TapeHeader) =>
  Effect.gen(function* () {
    const venueId = Id.parseMarketId(header.markets[0]?.id ?? "")?.venue ?? "sim"
    const model = makeOrderModel({
      orderId: (n) => `tape-${String(n).padStart(6, "0")}`,
      tradeId: (nativeId, n) => `${nativeId}-own-${n}`,
      fees: () => TAKER_ONLY
    })
    const markets = new Map<string, Market>()
    /** Each market's parts by its venue's id for it. */
    const byNativeId = new Map<string, Parts>()
    /** Each market's parts by its id as the tape writes it, so an event needs one lookup and no slice of its id. */
    const byMarketId = new Map<string, Parts>()
    for (const m of header.markets) {
      const nativeId = Id.parseMarketId(m.id)?.native ?? m.id
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
      const parts: Parts = {
        nativeId,
        book: new TapeBook(),
        trades: new RecentTrades(nativeId),
        resting: model.restingOf(nativeId),
        handle: undefined as unknown as TapeMarket,
        touch: null
      }
      parts.handle = { apply: (event) => applyTo(parts, event), view: () => touchNow(parts) }
      byNativeId.set(nativeId, parts)
      byMarketId.set(m.id, parts)
    }
    const events = yield* PubSub.unbounded<VenueEvent>()
    let subscribers = 0

    /** Applies a tape event to its market's book and own orders, in plain TypeScript; answers what it did to own orders. */
    function applyTo(parts: Parts, event: TapeEvent): ReadonlyArray<VenueEvent> {
      const { nativeId, book } = parts
      switch (event.type) {
        case "snapshot":
          book.apply(event)
          return parts.resting.size > 0 ? model.bookChanged(nativeId, book, event.ts) : NO_EVENTS
        case "change": {
          // A change touches one level (the others are as they were); with no own order resting there is no more to do.
          const price = F.of(event.price)
          book.set(event.side, price, F.of(event.size))
          if (parts.resting.size === 0) return NO_EVENTS
          return model.bookChanged(nativeId, book, event.ts, event.side === "bid" ? "buy" : "sell", price)
        }
        case "trade": {
          const price = F.of(event.price)
          const amount = F.of(event.amount)
          parts.trades.add(event.ts, price, amount, event.taker_side)
          return parts.resting.size > 0 ? model.traded(nativeId, price, amount, event.taker_side, event.ts) : NO_EVENTS
        }
        case "status": {
          const market = markets.get(nativeId)!
          markets.set(nativeId, { ...market, status: event.status, result: event.result ?? null })
          if (event.status === "open") return NO_EVENTS
          const closed = model.closed(nativeId, event.ts)
          // A result settles what the account holds there: a YES contract pays 1 on `yes`, 0 on `no`.
          if (event.status !== "settled" || event.result === undefined) return closed
          const payout = event.result === "yes" ? F.ONE : F.ZERO
          return [...closed, { _tag: "Settled", nativeId, payout, ts: event.ts }]
        }
        case "quote":
        case "gap":
          return NO_EVENTS
      }
    }
    /** Applies a tape event at its time (an event of a market the tape did not name changes nothing). */
    const applyNow = (event: TapeEvent): ReadonlyArray<VenueEvent> => {
      const parts = byMarketId.get(event.market)
      return parts === undefined ? NO_EVENTS : applyTo(parts, event)
    }

    /** Publishes what an applied event reported to the subscribers. */
    const publish = (reported: ReadonlyArray<VenueEvent>) =>
      reported.length > 0 ? PubSub.publishAll(events, reported) : Effect.void

    /**
     * The model's answer as the venue gives it, in plain code: what it reported comes with the order, and is published
     * too unless `published` is false (an answer given in plain code: the desk applies it with the answer).
     */
    const answerNow = (result: Answer, published = true): VenueOrder | VenueError => {
      if (result._tag === "Refused") return new VenueError({ venue: venueId, ...result.refusal })
      if (published) for (const event of result.events) events.unsafeOffer(event)
      return answerOf(result.order, result.events)
    }
    /** A plain answer as the Effect the venue's interface gives. */
    const asEffect = (answered: VenueOrder | VenueError) =>
      answered instanceof VenueError ? Effect.fail(answered) : Effect.succeed(answered)
    const answer = (result: Answer) => asEffect(answerNow(result))

    const placeNow = (r: PlaceOrderRequest, now: number, published = true): VenueOrder | VenueError => {
      const market = markets.get(r.nativeId)
      const book = byNativeId.get(r.nativeId)?.book
      if (market === undefined || book === undefined) {
        return new VenueError({ venue: venueId, kind: "rejected", reason: "no such market" })
      }
      if (market.status !== "open") {
        return new VenueError({ venue: venueId, kind: "market_closed", reason: `market is ${market.status}` })
      }
      return answerNow(model.place(r, book, now), published)
    }
    const placeOrder = (r: PlaceOrderRequest) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => asEffect(placeNow(r, now)))

    const venue: TapeVenue = {
      info: { id: venueId, name: `Replay of a ${header.source} tape`, book_model: "yes_book", has: SIM_CAPABILITIES },
      accounts: ["default"],
      markets: Effect.sync(() => [...markets.values()].sort((a, b) => (a.nativeId < b.nativeId ? -1 : 1))),
      market: (nativeId) => Effect.sync(() => markets.get(nativeId)),
      book: (nativeId) =>
        Effect.map(Clock.currentTimeMillis, (ts) => {
          const book = byNativeId.get(nativeId)?.book
          const level = ([price, size]: readonly [F.Fixed, F.Fixed]) => ({ price, size })
          return {
            ts,
            bids: book === undefined ? [] : book.levels("bid").map(level),
            asks: book === undefined ? [] : book.levels("ask").map(level)
          }
        }),
      trades: (nativeId) => Effect.sync(() => byNativeId.get(nativeId)?.trades.list() ?? []),
      placeOrder,
      cancelOrder: (id) => Effect.flatMap(Clock.currentTimeMillis, (now) => answer(model.cancel(id, now))),
      amendOrder: (id, changes) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const o = model.get(id)
          const book = o === undefined ? undefined : byNativeId.get(o.nativeId)?.book
          return answer(model.amend(id, changes, book ?? EMPTY, now))
        }),
      orderByClientId: (clientOrderId) =>
        Effect.sync(() => {
          const o = model.byClientId(clientOrderId)
          return o === undefined ? undefined : viewOf(o)
        }),
      subscribe: Effect.zipRight(
        Effect.acquireRelease(
          Effect.sync(() => void subscribers++),
          () => Effect.sync(() => void subscribers--)
        ),
        PubSub.subscribe(events)
      ),
      subscribers: () => subscribers,
      now: {
        market: (nativeId) => markets.get(nativeId),
        placeOrder: (r, now) => placeNow(r, now, false),
        cancelOrder: (id, now) => answerNow(model.cancel(id, now), false),
        touch: (nativeId) => {
          const parts = byNativeId.get(nativeId)
          return parts === undefined ? undefined : touchNow(parts)
        }
      },
      applyNow,
      publish,
      view: (marketId) => {
        const parts = byMarketId.get(marketId)
        return parts === undefined ? undefined : touchNow(parts)
      },
      marketOf: (marketId) => byMarketId.get(marketId)?.handle
    }
    return venue
  })
