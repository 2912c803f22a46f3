/**
 * Orders on a venue that answers over a network: admitted under the desk's lock, sent in the account's lane outside
 * it, bounded by the venue's timeout. An answer that was lost leaves the order `pending` with an unknown outcome for
 * the venue's record to settle; a cancel asked for while the placement is in flight goes out once the venue's id is
 * known; what the venue reported before its answer is applied once, after it.
 */
import { Clock, Effect } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, TERMINAL } from "../Domain/Order.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import { type PlaceOrderRequest, type Venue, VenueError, type VenueEvent } from "../Services/VenueGateway.ts"
import { amendAtVenue, cancelAtVenue, type Changing } from "./Changes.ts"
import type { PlaceInput } from "./Desk.ts"
import type { Held } from "./Held.ts"
import type { InFlight } from "./InFlight.ts"
import type { Lanes } from "./Lanes.ts"
import { type Admitted, admitOrder, type Placing, type PlacementReads, recordPlaced, refused } from "./Placement.ts"
import * as Id from "../Domain/Ids.ts"

/** What the remote flows need of the desk. */
export interface RemoteDesk {
  readonly placing: Placing
  readonly memory: Held
  readonly inflight: InFlight
  readonly lanes: Lanes
  /** The desk's lock: held only while the desk's own state changes, never across a venue call. */
  readonly serialized: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How long a placement may wait for its venue's answer. */
  readonly timeoutMs: number
  /** Whether the price collar is set (the book is read for it before the lock). */
  readonly needsBook: () => boolean
  readonly bookOf: Placing["bookOf"]
  readonly setOrder: Placing["setOrder"]
  /** Applies venue reports as the subscription does; runs with the lock held. */
  readonly applyEvents: (venue: string, events: ReadonlyArray<VenueEvent>) => Effect.Effect<void>
  /** Changing orders with the lock taken only to apply an answer. */
  readonly changing: Changing
  readonly tradingOf: Changing["tradingOf"]
}

/** Whether a failed placement certainly did not place the order: only a clear refusal, or a request never sent. */
export const clearlyRefused = (e: VenueError): boolean =>
  e.sent === false || (e.kind !== "timeout" && e.kind !== "unavailable")

/** The request an order was sent with, rebuilt from its record (a look-up by its key passes it to the venue). */
export const requestOf = (order: Order): PlaceOrderRequest => ({
  clientOrderId: venueClientIdOf(order),
  nativeId: Id.nativeOf(order.marketId),
  side: order.side,
  price: order.price ?? F.ZERO,
  amount: order.amount,
  timeInForce: order.timeInForce,
  postOnly: order.postOnly,
  reduceOnly: order.reduceOnly,
  expiresAt: order.expiresAt
})

/** The client id an order is known by at its venue. */
export const venueClientIdOf = (order: Order): string => {
  const id = order.info["venue_client_order_id"]
  return typeof id === "string" ? id : order.id
}

/** The answer to a placement whose outcome is unknown: retryable, naming the order that is kept. */
const unknownOutcome = (order: Order, e: VenueError) => {
  const timeout = e.kind === "timeout"
  return new ApiError({
    status: timeout ? 504 : 502,
    code: timeout ? "venue_timeout" : "venue_error",
    message:
      `${e.venue} ${timeout ? "did not answer" : "failed"} (${e.reason}); order ${order.id} is kept pending until ` +
      "the venue's record shows whether it was placed",
    details: {
      venue: e.venue,
      retryable: true,
      reason: e.reason,
      outcome: "unknown",
      order_id: order.id,
      client_order_id: order.clientOrderId,
      ...(e.retryAfterS === undefined ? {} : { retry_after: e.retryAfterS })
    }
  })
}

/** Reads what a placement needs of a remote venue before the lock: its market, and the book for the collar. */
const readsFor = (r: RemoteDesk, input: PlaceInput): Effect.Effect<PlacementReads | undefined> => {
  const venue = r.placing.venueOrError(Id.venueOf(input.market_id))
  if (venue instanceof ApiError) return Effect.succeed(undefined)
  const nativeId = Id.nativeOf(input.market_id)
  return Effect.gen(function* () {
    const market = yield* Effect.either(venue.market(nativeId))
    const book = r.needsBook() ? yield* r.bookOf(input.market_id) : undefined
    return { market: market._tag === "Left" ? market.left : market.right, book }
  })
}

/**
 * Places an order on a remote venue. With `wait`, answers once the venue answered (or the bound passed); without
 * (an engine's child), answers the order as written ahead, and what the venue says reaches the engine as the
 * child's updates.
 */
export const placeRemote = Effect.fnUntraced(function* (
  r: RemoteDesk,
  input: PlaceInput,
  actor: string,
  wait: boolean
) {
  const reads = yield* readsFor(r, input)
  type Admission =
    | { readonly _tag: "existing"; readonly order: Order }
    | {
        readonly _tag: "sent"
        readonly pending: Order
        readonly answer: Effect.Effect<{ order: Order; created: boolean }, ApiError>
      }
  const admitted: Admission = yield* r.serialized(
    Effect.flatMap(admitOrder(r.placing, input, actor, reads), (a): Effect.Effect<Admission> =>
      a._tag === "existing"
        ? Effect.succeed({ _tag: "existing", order: a.order })
        : Effect.map(
            Effect.suspend(() => {
              r.inflight.sent(a.pending)
              return r.lanes.admit(accountId(a.pending.account), send(r, a))
            }),
            (answer) => ({ _tag: "sent", answer, pending: a.pending })
          )
    )
  )
  if (admitted._tag === "existing") return { order: admitted.order, created: false }
  if (!wait) return { order: r.memory.lookup(admitted.pending.id) ?? admitted.pending, created: true }
  return yield* admitted.answer
})

/** Sends an admitted order and records what the venue said; runs in the account's lane. */
const send = (r: RemoteDesk, a: Admitted) =>
  Effect.gen(function* () {
    const { pending, request, trading } = a
    const answer = yield* Effect.either(bounded(trading.placeOrder(request), pending.venue, r.timeoutMs))
    const now = yield* Clock.currentTimeMillis
    if (answer._tag === "Right") {
      yield* r.serialized(
        Effect.gen(function* () {
          r.inflight.answered(pending.id)
          yield* recordPlaced(r.placing, pending, answer.right)
          yield* claim(r, pending.id, pending.venue, answer.right.venueOrderId)
          yield* releaseOrphans(r, pending.venue, now)
        })
      )
      if (r.inflight.takeCancel(pending.id)) yield* cancelNow(r, r.memory.lookup(pending.id)!)
      return { order: r.memory.lookup(pending.id)!, created: true }
    }
    const e = answer.left
    if (clearlyRefused(e)) {
      return yield* r.serialized(
        Effect.gen(function* () {
          r.inflight.answered(pending.id)
          r.inflight.forget(pending.id)
          yield* releaseOrphans(r, pending.venue, now)
          // An engine's child keeps its record, rejected, so the engine hears of it (and whether to retry); a
          // client's order is removed and its client id may be sent again.
          if (pending.parentId !== null) {
            const current = r.memory.lookup(pending.id) ?? pending
            const error = fromVenueError(e)
            yield* r.setOrder(
              {
                ...current,
                status: "rejected",
                updatedAt: Math.max(now, current.updatedAt),
                info: {
                  ...current.info,
                  detail: error.message,
                  kind: e.kind,
                  retryable: error.details.retryable,
                  ...(e.retryAfterS === undefined ? {} : { retry_after: e.retryAfterS })
                }
              },
              "order.rejected"
            )
            return yield* Effect.fail(error)
          }
          return yield* refused(r.placing, pending, now, e)
        })
      )
    }
    return yield* r.serialized(
      Effect.gen(function* () {
        r.inflight.answered(pending.id)
        const current = r.memory.lookup(pending.id) ?? pending
        r.inflight.unknown.set(pending.id, {
          id: pending.id,
          account: accountId(pending.account),
          venue: pending.venue,
          request,
          sentAt: pending.createdAt,
          absences: 0,
          lastLookAt: now,
          failures: 0
        })
        yield* r.setOrder(
          {
            ...current,
            updatedAt: Math.max(now, current.updatedAt),
            info: { ...current.info, outcome: "unknown", outcome_reason: `${e.kind}: ${e.reason}` }
          },
          "order.updated"
        )
        return yield* Effect.fail(unknownOutcome(current, e))
      })
    )
  })

/**
 * A venue call bounded by the venue's timeout: interruptible even inside a lane's task (which is not), so that the
 * bound can end a call that would never answer.
 */
export const bounded = <A>(call: Effect.Effect<A, VenueError>, venue: string, ms: number) =>
  Effect.interruptible(call).pipe(
    Effect.timeoutFail({
      duration: ms,
      onTimeout: () => new VenueError({ venue, kind: "timeout", reason: `no answer within ${ms} ms` })
    })
  )

/** A trading handle whose order calls are each bounded by `ms`. */
export const boundedVenue = (venue: Venue, ms: number): Venue => ({
  ...venue,
  cancelOrder: (id) => bounded(venue.cancelOrder(id), venue.info.id, ms),
  amendOrder: (id, changes) => bounded(venue.amendOrder(id, changes), venue.info.id, ms),
  ...(venue.decreaseOrder === undefined
    ? {}
    : { decreaseOrder: (id, remaining) => bounded(venue.decreaseOrder!(id, remaining), venue.info.id, ms) })
})

/** Applies what the venue reported of an order before its id was known, now that it is (with the lock held). */
export const claim = (r: RemoteDesk, id: string, venue: string, venueOrderId: string) =>
  Effect.suspend(() => {
    const held = r.inflight.claim(id, venue, venueOrderId)
    return held.length === 0 ? Effect.void : r.applyEvents(venue, held)
  })

/** Applies the reports no placement claimed once nothing they could belong to is in flight (with the lock held). */
export const releaseOrphans = (r: RemoteDesk, venue: string, now: number) =>
  Effect.suspend(() => {
    const released = r.inflight.release(venue, now)
    return released.length === 0 ? Effect.void : r.applyEvents(venue, released)
  })

/** Cancels at the venue now (in the lane already), applying the answer under the lock. */
const cancelNow = (r: RemoteDesk, order: Order) =>
  cancelAtVenue(r.changing, order).pipe(
    Effect.catchAll((e) => Effect.logWarning(`cancel of ${order.id} after its placement failed: ${e.message}`))
  )

/**
 * Cancels an order on a remote venue. One still in flight (or of unknown outcome) is marked `pending_cancel` and
 * canceled the moment its venue id is known; any other is canceled in its account's lane. Without `wait` (an engine
 * pulling a child) the cancel is queued and the order answered as it is.
 */
export const cancelRemote = Effect.fnUntraced(function* (r: RemoteDesk, id: string, order: Order, wait: boolean) {
  const queued = yield* r.serialized(
    Effect.gen(function* () {
      const current = r.memory.lookup(id) ?? order
      if (TERMINAL.has(current.status)) return { _tag: "done" as const, order: current }
      if (current.venueOrderId === null) {
        r.inflight.wantCancel(id)
        if (current.status !== "pending_cancel") {
          const now = yield* Clock.currentTimeMillis
          yield* r.setOrder(
            { ...current, status: "pending_cancel", updatedAt: Math.max(now, current.updatedAt) },
            "order.updated"
          )
        }
        return { _tag: "done" as const, order: r.memory.lookup(id)! }
      }
      const answer = yield* r.lanes.admit(
        accountId(current.account),
        Effect.suspend(() => cancelAtVenue(r.changing, r.memory.lookup(id) ?? current))
      )
      return { _tag: "queued" as const, answer, order: current }
    })
  )
  if (queued._tag === "done" || !wait) return queued.order
  return yield* queued.answer
})

/** Amends an order on a remote venue in its account's lane; an order still in flight cannot be amended yet. */
export const amendRemote = (
  r: RemoteDesk,
  order: Order,
  changes: { price?: string | undefined; amount?: string | undefined; expiresAt?: number | undefined }
) =>
  order.venueOrderId === null && !TERMINAL.has(order.status)
    ? Effect.fail(ApiError.field("id", `order ${order.id} is still being placed; amend it once its venue has answered`))
    : Effect.flatten(r.lanes.admit(accountId(order.account), amendAtVenue(r.changing, order.id, changes)))
