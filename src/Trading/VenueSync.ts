/**
 * The venue's record wins: at start, after a stream reopened and on a schedule, the desk reads back a remote venue's
 * fills (every page, since the last one booked) and its open orders, books what it missed exactly once, settles
 * orders the venue no longer lists by reading them, and reports as drift whatever it found that it did not know.
 */
import { Clock, Effect } from "effect"
import { type Order, TERMINAL } from "../Domain/Order.ts"
import type { JournalEntry } from "../Services/OrderStore.ts"
import type { Venue, VenueEvent, VenueFill, VenueOrder } from "../Services/VenueGateway.ts"

/** How far back the first read of a venue's fills goes when the desk has booked none there yet. */
const FIRST_LOOK_BACK_MS = 86_400_000
/** Fills are read again from a little before the last one booked: a venue may publish a trade late. */
const OVERLAP_MS = 5 * 60_000

/** What one venue's last reconcile found, for `GET /trading/status`. */
export interface SyncRecord {
  lastAt: number | null
  lastError: string | null
  /** Drift found over the server's life, and what the last reconcile found. */
  driftTotal: number
  lastDrift: ReadonlyArray<Record<string, unknown>>
  runs: number
}

export interface Syncing {
  readonly serialized: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The desk's order a venue id names, held or stored. */
  readonly find: (venue: string, venueOrderId: string) => Effect.Effect<Order | undefined>
  /** The order a venue client id names, if it is one of this home's. */
  readonly byVenueClientId: (clientOrderId: string) => Order | undefined
  readonly hasFill: (id: string) => Effect.Effect<boolean>
  /** Applies venue reports as the subscription does; runs with the lock held. */
  readonly applyEvents: (venue: string, events: ReadonlyArray<VenueEvent>) => Effect.Effect<void>
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => Effect.Effect<void>
  /** The live orders the desk holds itself (the engine's working parents, never at a venue, left out). */
  readonly liveOrders: () => ReadonlyArray<Order>
  /** The order as the desk holds it now. */
  readonly lookup: (id: string) => Order | undefined
  /** Settles now an order of unknown outcome the venue lists. */
  readonly settleUnknown: (id: string) => Effect.Effect<void>
  readonly getWatermark: (venue: string) => Effect.Effect<number | undefined>
  readonly setWatermark: (venue: string, ts: number) => Effect.Effect<void>
  readonly emit: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<unknown>
  /** Books the markets the venue reports resolved since the last settlement booked (its read outside the lock). */
  readonly settlements: (handle: Venue) => Effect.Effect<void>
  /** Marks redeemed the settled positions whose tokens the venue no longer holds (a venue with `unredeemed`). */
  readonly redemptions: (handle: Venue) => Effect.Effect<void>
  readonly records: Map<string, SyncRecord>
}

export const recordOf = (records: Map<string, SyncRecord>, venue: string): SyncRecord => {
  let r = records.get(venue)
  if (r === undefined) {
    r = { lastAt: null, lastError: null, driftTotal: 0, lastDrift: [], runs: 0 }
    records.set(venue, r)
  }
  return r
}

/** Reads one venue's record back and applies what the desk missed. */
export const syncVenue = (s: Syncing, handle: Venue, why: string) =>
  Effect.gen(function* () {
    const venue = handle.info.id
    const record = recordOf(s.records, venue)
    const drift: Array<Record<string, unknown>> = []
    const errors: Array<string> = []
    if (handle.fillsSince !== undefined) {
      const now = yield* Clock.currentTimeMillis
      const mark = yield* s.getWatermark(venue)
      const since = mark === undefined ? now - FIRST_LOOK_BACK_MS : mark - OVERLAP_MS
      const read = yield* Effect.either(handle.fillsSince(Math.max(0, since)))
      if (read._tag === "Left") errors.push(`fills: ${read.left.reason}`)
      else {
        let newest = mark ?? 0
        const events: Array<VenueEvent> = []
        for (const fill of read.right) {
          newest = Math.max(newest, fill.ts)
          const order = yield* orderOfFill(s, venue, fill)
          if (order === undefined) {
            drift.push({
              found: "fill_of_unknown_order",
              trade_id: fill.tradeId,
              venue_order_id: fill.venueOrderId,
              did: "not booked"
            })
            continue
          }
          // An order whose placement's answer is still unknown takes its fills when it is adopted.
          if (order.venueOrderId === null) continue
          if (!(yield* s.hasFill(`${venue}:${fill.tradeId}:${fill.venueOrderId}`))) {
            drift.push({ found: "missed_fill", trade_id: fill.tradeId, order_id: order.id, did: "booked" })
            events.push({ _tag: "Fill", fill })
          }
        }
        if (events.length > 0) yield* s.serialized(s.applyEvents(venue, events))
        if (newest > (mark ?? 0)) yield* s.setWatermark(venue, newest)
      }
    }
    if (handle.openOrders !== undefined) {
      const read = yield* Effect.either(handle.openOrders)
      if (read._tag === "Left") errors.push(`open orders: ${read.left.reason}`)
      else {
        const listed = new Map(read.right.map((o) => [o.venueOrderId, o]))
        for (const order of s.liveOrders()) {
          if (order.venue !== venue || order.heldBy !== "venue" || order.account.name === "paper") continue
          if (order.venueOrderId === null || TERMINAL.has(order.status)) continue
          const open = listed.get(order.venueOrderId)
          if (open !== undefined) {
            // A cancel on its way is left to its answer; otherwise the venue's state is taken, on the order as it is now.
            if (order.status === "pending_cancel") continue
            yield* s.serialized(
              Effect.suspend(() => {
                const current = s.lookup(order.id)
                return current === undefined || current.status === "pending_cancel"
                  ? Effect.void
                  : s.applySnapshot(current, open)
              })
            )
            continue
          }
          // Not listed: read it by id; filled means filled (its fills were read above), never canceled by guess.
          const one =
            handle.orderById === undefined ? undefined : yield* Effect.either(handle.orderById(order.venueOrderId))
          if (one === undefined || one._tag === "Left" || one.right === undefined) {
            drift.push({ found: "order_not_listed", order_id: order.id, did: "left as it is" })
            continue
          }
          const snapshot = one.right
          if (snapshot.status !== "open") {
            drift.push({ found: `order_${snapshot.status}`, order_id: order.id, did: "taken from the venue" })
          }
          yield* s.serialized(
            Effect.gen(function* () {
              if (snapshot.events !== undefined && snapshot.events.length > 0) {
                yield* s.applyEvents(venue, snapshot.events)
              }
              const current = s.lookup(order.id) ?? order
              yield* s.applySnapshot(current, snapshot)
            })
          )
        }
        for (const open of read.right) {
          if ((yield* s.find(venue, open.venueOrderId)) !== undefined) continue
          const ours = s.byVenueClientId(open.clientOrderId)
          if (ours !== undefined && ours.venueOrderId === null) {
            yield* s.settleUnknown(ours.id)
            continue
          }
          drift.push({
            found: "untracked_order",
            venue_order_id: open.venueOrderId,
            client_order_id: open.clientOrderId,
            did: "left alone"
          })
        }
      }
    }
    yield* s.settlements(handle)
    yield* s.redemptions(handle)
    const now = yield* Clock.currentTimeMillis
    record.lastAt = now
    record.runs++
    record.lastError = errors.length === 0 ? null : errors.join("; ")
    record.lastDrift = drift
    record.driftTotal += drift.length
    if (drift.length > 0) {
      yield* s.emit([{ ts: now, kind: "venue.drift", key: venue, payload: { venue, why, found: drift } }])
    }
  })

/** The desk's order a fill names: by the venue's id, else by this home's client id. */
const orderOfFill = (s: Syncing, venue: string, fill: VenueFill) =>
  Effect.map(s.find(venue, fill.venueOrderId), (order) => order ?? s.byVenueClientId(fill.clientOrderId))
