/**
 * A venue's paper account: the venue's live market data, with orders that never leave. They match in the order model
 * (queue position behind the displayed size, fills from the venue's public trades, from the level thinning out ahead
 * of them and from the book moving through their price), with the venue's fees and tick grid.
 */
import { Clock, Effect, PubSub, Queue, Schedule, type Scope } from "effect"
import { quadraticFee } from "../../Domain/Fees.ts"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Market } from "../../Domain/Market.ts"
import {
  type FeeRule,
  feesOf,
  PAPER,
  type PlaceOrderRequest,
  type Venue,
  VenueError,
  type VenueEvent
} from "../../Services/VenueGateway.ts"
import { type Answer, answerOf, makeOrderModel, modelBook, NO_FEES, viewOf } from "./Model.ts"

export interface PaperOptions {
  /** How often the books and trades of markets where paper orders rest are read besides the venue's stream (ms). */
  readonly pollMs?: number
  /** How old a book read must be before it counts (ms): long enough for the venue to list the trades behind it. */
  readonly bookLagMs?: number
}

/** How many trade ids of a market are remembered as applied (the venue lists its recent trades, newest first). */
const SEEN_TRADES = 2000

/** The paper handle of a live venue: its id and market data, the one account `paper`, and orders in the model. */
export const makePaperVenue = (live: Venue, options: PaperOptions = {}): Effect.Effect<Venue, never, Scope.Scope> =>
  Effect.gen(function* () {
    const venueId = live.info.id
    const scope = yield* Effect.scope
    const feeRules = new Map<string, FeeRule>()
    // Ids carry when this run began: the desk keeps orders and fills of earlier runs, and a fill id seen before is a
    // repeat to it.
    const run = (yield* Clock.currentTimeMillis).toString(36)
    const model = makeOrderModel({
      orderId: (n) => `${PAPER}-${run}-${String(n).padStart(6, "0")}`,
      tradeId: (nativeId, n) => `${PAPER}-${run}-${nativeId}-${n}`,
      fees: (nativeId) => feeRules.get(nativeId) ?? NO_FEES
    })
    const events = yield* PubSub.unbounded<VenueEvent>()
    /** Trades already applied, per market: the ones listed when its first paper order came, then every one since. */
    const seen = new Map<string, Set<string>>()
    const watched = new Set<string>()
    /** Books read and not yet counted, oldest first, per market. */
    const waiting = new Map<string, Array<{ readonly at: number; readonly book: Book }>>()
    const bookLag = options.bookLagMs ?? 1000
    // The model changes under one permit: a placement never interleaves with the feed reading a book.
    const lock = yield* Effect.makeSemaphore(1)

    const publish = (out: ReadonlyArray<VenueEvent>) => (out.length > 0 ? PubSub.publishAll(events, out) : Effect.void)

    const fail = (kind: VenueError["kind"], reason: string) => new VenueError({ venue: venueId, kind, reason })

    const answer = (result: Answer) =>
      result._tag === "Refused"
        ? Effect.fail(new VenueError({ venue: venueId, ...result.refusal }))
        : Effect.as(publish(result.events), answerOf(result.order, result.events))

    /**
     * Reads a market's trades and book and feeds them to the model: trades not applied yet (oldest first), then the
     * book, so a level that a trade thinned out is not counted twice.
     */
    const feed = (nativeId: string) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          if (!model.hasResting(nativeId)) {
            waiting.delete(nativeId)
            return
          }
          const trades = yield* live.trades(nativeId).pipe(Effect.orElseSucceed(() => undefined))
          const book = yield* live.book(nativeId).pipe(Effect.orElseSucceed(() => undefined))
          const now = yield* Clock.currentTimeMillis
          const out: Array<VenueEvent> = []
          if (trades !== undefined) {
            const known = seen.get(nativeId) ?? new Set<string>()
            for (let i = trades.length - 1; i >= 0; i--) {
              const t = trades[i]!
              if (known.has(t.id)) continue
              known.add(t.id)
              out.push(...model.traded(nativeId, t.price, t.amount, t.takerSide, now))
            }
            if (known.size > SEEN_TRADES) seen.set(nativeId, new Set(trades.map((t) => t.id)))
            else seen.set(nativeId, known)
          }
          // A book counts once it is `bookLagMs` old: a venue streams a level thinning out before it lists the trade
          // that thinned it, and the trade, applied first, must not find the size ahead gone already.
          const books = waiting.get(nativeId) ?? []
          if (book !== undefined) books.push({ at: now, book })
          while (books.length > 0 && books[0]!.at <= now - bookLag) {
            const { at, book: read } = books.shift()!
            out.push(...model.bookChanged(nativeId, modelBook(read), now, undefined, undefined, at))
          }
          waiting.set(nativeId, books)
          yield* publish(out)
        })
      )

    /** A market that no longer trades (closed, settled, paused) ends the paper orders resting in it, canceled. */
    const closeIfShut = (nativeId: string) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const market = yield* live.market(nativeId).pipe(Effect.orElseSucceed(() => null))
          if (market === null || (market !== undefined && market.status === "open")) return
          yield* publish(model.closed(nativeId, yield* Clock.currentTimeMillis))
        })
      )

    /** Everything the venue reported so far on a market counts as before the first paper order there. */
    const start = (market: Market) =>
      Effect.gen(function* () {
        const nativeId = market.nativeId
        if (!feeRules.has(nativeId)) {
          // The schedule the market record carries, else the one the venue states for it, else none.
          const schedule = yield* feesOf(live, market)
          const rule: FeeRule =
            schedule !== undefined
              ? (price, amount, liquidity) =>
                  quadraticFee(liquidity === "taker" ? schedule.taker : schedule.maker, price, amount, schedule.step)
              : NO_FEES
          feeRules.set(nativeId, rule)
        }
        if (!seen.has(nativeId)) {
          const trades = yield* live.trades(nativeId)
          seen.set(nativeId, new Set(trades.map((t) => t.id)))
        }
        if (!watched.has(nativeId) && live.watch !== undefined) {
          watched.add(nativeId)
          const watch = live.watch([nativeId])
          yield* Effect.forkIn(
            Effect.scoped(Effect.zipRight(watch, Effect.never)).pipe(
              Effect.tapError((e) => Effect.logWarning(`${venueId}:${PAPER}: cannot watch ${nativeId} (${e.reason})`)),
              Effect.ignore,
              Effect.ensuring(Effect.sync(() => watched.delete(nativeId))),
              // A placement runs uninterruptible in the desk: the watch it starts must still end with the account.
              Effect.interruptible
            ),
            scope
          )
        }
      })

    /**
     * A market the venue reports resolved: the paper orders resting in it end canceled, then the paper account hears
     * of the resolution itself, so the desk settles its paper positions there.
     */
    const settled = (event: Extract<VenueEvent, { _tag: "Settled" }>) =>
      lock.withPermits(1)(Effect.suspend(() => publish([...model.closed(event.nativeId, event.ts), event])))

    // Fed live: a book change the venue streams for a market where paper orders rest, and a read every so often.
    const stream = yield* live.subscribe
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(stream), (first) =>
          Effect.flatMap(Queue.takeAll(stream), (rest) => {
            const markets = new Set<string>()
            const resolved: Array<Extract<VenueEvent, { _tag: "Settled" }>> = []
            for (const e of [first, ...rest]) {
              if (e._tag === "Book" && model.hasResting(e.nativeId)) markets.add(e.nativeId)
              else if (e._tag === "Settled") resolved.push(e)
            }
            return Effect.zipRight(
              Effect.forEach(markets, feed, { discard: true }),
              Effect.forEach(resolved, settled, { discard: true })
            )
          })
        )
      )
    )
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.suspend(() =>
          Effect.forEach(model.restingMarkets(), (m) => Effect.zipRight(closeIfShut(m), feed(m)), { discard: true })
        ),
        Schedule.spaced(options.pollMs ?? 1000)
      )
    )

    const placeOrder = (r: PlaceOrderRequest) =>
      lock.withPermits(1)(
        Effect.gen(function* () {
          const market = yield* live.market(r.nativeId)
          if (market === undefined) return yield* Effect.fail(fail("rejected", "no such market"))
          if (market.status !== "open") return yield* Effect.fail(fail("market_closed", `market is ${market.status}`))
          if (!F.isMultipleOf(r.price, market.tick)) {
            return yield* Effect.fail(fail("rejected", `price is off the tick grid of ${F.format(market.tick)}`))
          }
          yield* start(market)
          const book = yield* live.book(r.nativeId)
          const now = yield* Clock.currentTimeMillis
          return yield* answer(model.place(r, modelBook(book), now))
        })
      )

    const cancelOrder = (id: string) =>
      lock.withPermits(1)(Effect.flatMap(Clock.currentTimeMillis, (now) => answer(model.cancel(id, now))))

    const venue: Venue = {
      info: live.info,
      accounts: [PAPER],
      markets: live.markets,
      market: live.market,
      book: live.book,
      trades: live.trades,
      ...(live.watch === undefined ? {} : { watch: live.watch }),
      ...(live.fees === undefined ? {} : { fees: live.fees }),
      placeOrder,
      cancelOrder,
      amendOrder: (id, changes) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const o = model.get(id)
            if (o === undefined) return yield* answer(model.amend(id, changes, modelBook(EMPTY), 0))
            if (changes.price !== undefined) {
              const market = yield* live.market(o.nativeId)
              if (market !== undefined && !F.isMultipleOf(changes.price, market.tick)) {
                return yield* Effect.fail(fail("rejected", `price is off the tick grid of ${F.format(market.tick)}`))
              }
            }
            const book = yield* live.book(o.nativeId)
            const now = yield* Clock.currentTimeMillis
            return yield* answer(model.amend(id, changes, modelBook(book), now))
          })
        ),
      orderByClientId: (clientOrderId) =>
        Effect.sync(() => {
          const o = model.byClientId(clientOrderId)
          return o === undefined ? undefined : viewOf(o)
        }),
      openOrders: Effect.sync(() => model.open().map(viewOf)),
      // The venue's resolutions are the markets' own: a paper position settles on them as the venue's would.
      ...(live.settlementsSince === undefined ? {} : { settlementsSince: live.settlementsSince }),
      cancelAll: Effect.gen(function* () {
        let count = 0
        for (const o of model.open()) {
          const after = yield* cancelOrder(o.id)
          if (after.status === "canceled") count++
        }
        return count
      }),
      subscribe: PubSub.subscribe(events)
    }
    return venue
  })

const EMPTY = { ts: 0, bids: [], asks: [] }
