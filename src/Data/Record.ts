/**
 * `crossbook record`: follows chosen markets of one venue through its event stream and appends every book change and
 * trade to the data store, stamped with the venue's time and the time it was received. A market whose reads fail is
 * re-read from a fresh snapshot once the venue answers again, and the stretch between is written as absent; so is a
 * stretch the recorder fell behind on. Stopping (the duration, or Ctrl-C) closes each market's span at that moment.
 */
import { Clock, Duration, Effect, Queue, Schedule } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { BookLevel } from "../Domain/Market.ts"
import { followBooks, newTrades, sideChanges } from "../Services/MarketChanges.ts"
import type { Venue, VenueError } from "../Services/VenueGateway.ts"
import type { DataStore, Levels } from "./Store.ts"

export interface RecordOptions {
  readonly store: DataStore
  readonly venue: Venue
  readonly nativeIds: ReadonlyArray<string>
  /** How many book events may wait before the recorder counts itself behind and starts again from snapshots. */
  readonly capacity?: number
  /** How often a market that failed is tried again (default 1 s). */
  readonly retryMs?: number
  /** How often the books of a venue that does not stream them (`has.watch_order_book` false) are read (default 1 s). */
  readonly pollMs?: number
  /** Called with each market's whole book after each row written (tests compare replays against it). */
  readonly onBook?: (marketId: string, ts: number, bids: Levels, asks: Levels) => void
}

export interface RecordSummary {
  readonly markets: ReadonlyArray<string>
  readonly book_rows: number
  readonly trades: number
  readonly absent: number
}

interface Followed {
  readonly marketId: string
  readonly nativeId: string
  span: number | undefined
  /** Why the next span starts after a break. */
  reason: string
  bids: ReadonlyArray<BookLevel>
  asks: ReadonlyArray<BookLevel>
  lastTradeId: string | undefined
}

const levels = (side: ReadonlyArray<BookLevel>): Levels =>
  side.map((l) => [F.format(l.price), F.format(l.size)] as const)

/** Records until interrupted; the scope's end closes the spans. */
export const record = (options: RecordOptions) =>
  Effect.gen(function* () {
    const { store, venue } = options
    const followed = new Map<string, Followed>()
    for (const nativeId of options.nativeIds) {
      const market = yield* venue.market(nativeId)
      if (market === undefined) {
        return yield* Effect.fail(`no market '${nativeId}' on venue '${venue.info.id}'`)
      }
      const marketId = `${venue.info.id}:${nativeId}`
      store.upsertMarket({ id: marketId, title: market.title, tick: F.format(market.tick), lot: F.format(market.lot) })
      followed.set(nativeId, {
        marketId,
        nativeId,
        span: undefined,
        reason: "recorder_stopped",
        bids: [],
        asks: [],
        lastTradeId: undefined
      })
    }
    // One market step at a time: the retry timer and the event loop never read and write the same market at once.
    const lock = yield* Effect.makeSemaphore(1)
    const seen = (f: Followed, ts: number) => options.onBook?.(f.marketId, ts, levels(f.bids), levels(f.asks))

    // Subscribe before the first snapshots: a change in between arrives as an event, never lost.
    const changes = yield* followBooks([[venue, followed]], options.capacity ?? 10_000)
    const pending = changes.queue
    if (venue.watch !== undefined) yield* venue.watch(options.nativeIds)
    // A venue that streams no books (Kalshi without credentials) is read on a timer: each read writes what changed.
    if (venue.info.has.watch_order_book === false) {
      yield* Effect.forkScoped(
        Effect.repeat(
          Effect.suspend(() =>
            Effect.forEach([...followed.values()], (f) => Queue.offer(pending, f), { discard: true })
          ),
          Schedule.spaced(Duration.millis(options.pollMs ?? 1000))
        )
      )
    }

    const broken = (f: Followed, reason: string) =>
      Effect.sync(() => {
        f.span = undefined
        f.reason = reason
      })

    const snapshot = (f: Followed) =>
      Effect.gen(function* () {
        const book = yield* venue.book(f.nativeId)
        const trades = venue.info.has.fetch_trades === false ? [] : yield* venue.trades(f.nativeId)
        const received = yield* Clock.currentTimeMillis
        f.bids = book.bids
        f.asks = book.asks
        f.lastTradeId = trades[0]?.id
        const opened = store.openSpan(f.marketId, book.ts, received, levels(f.bids), levels(f.asks), f.reason)
        f.span = opened.span
        seen(f, opened.ts)
      })

    const update = (f: Followed) =>
      Effect.gen(function* () {
        if (f.span === undefined) return yield* snapshot(f)
        const span = f.span
        const book = yield* venue.book(f.nativeId)
        const trades = venue.info.has.fetch_trades === false ? [] : yield* venue.trades(f.nativeId)
        const received = yield* Clock.currentTimeMillis
        for (const t of newTrades(trades, f.lastTradeId)) {
          store.appendTrade(
            f.marketId,
            span,
            {
              trade_id: t.id,
              ts: t.ts,
              price: F.format(t.price),
              amount: F.format(t.amount),
              taker_side: t.takerSide
            },
            received
          )
          f.lastTradeId = t.id
        }
        const bids = sideChanges(f.bids, book.bids).map((l) => [l.price, l.size] as const)
        const asks = sideChanges(f.asks, book.asks).map((l) => [l.price, l.size] as const)
        f.bids = book.bids
        f.asks = book.asks
        if (bids.length === 0 && asks.length === 0) return
        seen(f, store.appendBook(f.marketId, span, book.ts, received, "change", bids, asks))
      })

    /** A read that fails breaks the market's span; it starts again from a snapshot when the venue answers. */
    const guarded = (f: Followed, step: Effect.Effect<void, VenueError>) =>
      lock.withPermits(1)(
        Effect.catchAll(step, (error) => {
          const reason = `venue_error:${error.kind}`
          // Said once per break, not on every retry.
          const say =
            f.span !== undefined || f.reason !== reason
              ? Effect.logWarning(
                  `recording ${f.marketId}: ${error.kind} (${error.reason}); will start again from a snapshot`
                )
              : Effect.void
          return Effect.zipRight(say, broken(f, reason))
        })
      )

    yield* Effect.addFinalizer(() =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          for (const f of followed.values()) if (f.span !== undefined) store.extendSpan(f.marketId, f.span, now)
        })
      )
    )

    for (const f of followed.values()) yield* guarded(f, snapshot(f))

    // Markets that failed are tried again on a timer too, so a quiet market does not wait for its next event.
    yield* Effect.forkScoped(
      Effect.repeat(
        Effect.suspend(() =>
          Effect.forEach(
            [...followed.values()].filter((f) => f.span === undefined),
            (f) => guarded(f, snapshot(f)),
            { discard: true }
          )
        ),
        Schedule.spaced(Duration.millis(options.retryMs ?? 1000))
      )
    )

    for (;;) {
      const f = yield* Queue.take(pending)
      if (changes.behind) {
        changes.behind = false
        yield* Queue.takeAll(pending)
        for (const g of followed.values()) {
          yield* broken(g, "fell_behind")
          yield* guarded(g, snapshot(g))
        }
        continue
      }
      yield* guarded(f, update(f))
    }
  }).pipe(Effect.as(undefined as never))

/** A summary for the console of what a store holds for these markets. */
export const summarize = (store: DataStore, marketIds: ReadonlyArray<string>): RecordSummary => {
  const count = (sql: string) => marketIds.reduce((n, id) => n + (store.db.prepare(sql).get(id) as { n: number }).n, 0)
  return {
    markets: marketIds,
    book_rows: count("SELECT COUNT(*) AS n FROM book WHERE market_id = ?"),
    trades: count("SELECT COUNT(*) AS n FROM trades WHERE market_id = ?"),
    absent: count("SELECT COUNT(*) AS n FROM absent WHERE market_id = ?")
  }
}
