/**
 * What changed on a venue's markets since they were last seen: the followed markets whose book moved (subscribed and
 * queued), the levels of a side that moved, and the trades that are new.
 */
import { Effect, Queue, type Scope, Stream } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { BookLevel, Trade } from "../Domain/Market.ts"
import type { Venue } from "./VenueGateway.ts"

/** The followed markets whose book changed, in the order their venues said so. */
export interface BookChanges<A> {
  readonly queue: Queue.Queue<A>
  /** Set when a change found the queue full and was dropped: the reader has fallen behind (it may clear this). */
  behind: boolean
}

/**
 * Subscribes to each venue and, for as long as the scope lasts, queues a followed market (by native id) at each `Book`
 * event of it, at most `capacity` waiting. Called before the first snapshots are read, a change made in between
 * arrives in the queue, never lost.
 */
export const followBooks = <A>(
  venues: Iterable<readonly [Venue, ReadonlyMap<string, A>]>,
  capacity: number
): Effect.Effect<BookChanges<A>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const changes: BookChanges<A> = { queue: yield* Queue.dropping<A>(capacity), behind: false }
    for (const [venue, markets] of venues) {
      const events = yield* venue.subscribe
      yield* Stream.fromQueue(events).pipe(
        Stream.runForEach((event) => {
          if (event._tag !== "Book") return Effect.void
          const market = markets.get(event.nativeId)
          if (market === undefined) return Effect.void
          return Effect.map(Queue.offer(changes.queue, market), (taken) => {
            if (!taken) changes.behind = true
          })
        }),
        Effect.forkScoped
      )
    }
    return changes
  })

/** A level as the wire carries it: decimal strings. */
export interface WireLevel {
  readonly price: string
  readonly size: string
}

export const wireLevel = (l: BookLevel): WireLevel => ({ price: F.format(l.price), size: F.format(l.size) })

/**
 * The levels of one side that differ between two views of it: each price whose size changed or that appeared with
 * its new size, each price that left the view with size "0"; best first as the view orders them, removals last.
 * Applying them to `before` (set each level, drop those at "0") gives `after` exactly.
 */
export const sideChanges = (
  before: ReadonlyArray<BookLevel>,
  after: ReadonlyArray<BookLevel>
): ReadonlyArray<WireLevel> => {
  const old = new Map(before.map((l) => [l.price as number, l.size as number]))
  const now = new Set(after.map((l) => l.price as number))
  const out: Array<WireLevel> = []
  for (const l of after) if (old.get(l.price) !== l.size) out.push(wireLevel(l))
  for (const l of before) if (!now.has(l.price)) out.push({ price: F.format(l.price), size: "0" })
  return out
}

/** Trades newer than `lastId` in time order, from a newest-first list; all of them when `lastId` is not in it. */
export const newTrades = (trades: ReadonlyArray<Trade>, lastId: string | undefined): ReadonlyArray<Trade> => {
  const out: Array<Trade> = []
  for (const t of trades) {
    if (t.id === lastId) break
    out.push(t)
  }
  return out.reverse()
}
