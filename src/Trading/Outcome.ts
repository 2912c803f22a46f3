/**
 * The orders whose placement's answer was lost are settled by the venue's record: each is looked up by the key fixed
 * before it was sent (its venue client id, or the order's hash), until the venue shows it — adopted once, with its
 * fills — or has certainly not got it — rejected, with the reason.
 */
import { Clock, Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Order } from "../Domain/Order.ts"
import type { JournalEntry } from "../Services/OrderStore.ts"
import type { PlaceOrderRequest, Venue, VenueOrder } from "../Services/VenueGateway.ts"
import type { UnknownOrder } from "./InFlight.ts"
import { recordPlaced } from "./Placement.ts"
import { claim, releaseOrphans, type RemoteDesk } from "./Remote.ts"
import { cancelAtVenue } from "./Changes.ts"

export interface OutcomeConfig {
  /** An order is taken as never placed only after its venue has not had it this long since it was sent. */
  readonly absentAfterMs: number
  /** The first look-up waits this long; each next one twice as long, up to `maxBackoffMs`. */
  readonly firstLookMs: number
  readonly maxBackoffMs: number
}

export const DEFAULT_OUTCOME: OutcomeConfig = { absentAfterMs: 5_000, firstLookMs: 1_000, maxBackoffMs: 30_000 }

/** Whether the venue's order is the one that was sent: same market, side, price and amount. */
export const sameOrder = (found: VenueOrder, sent: PlaceOrderRequest): boolean =>
  found.nativeId === sent.nativeId &&
  found.side === sent.side &&
  found.price === sent.price &&
  found.amount === sent.amount

/** When an unknown order is next looked up. */
const nextLookAt = (u: UnknownOrder, c: OutcomeConfig) =>
  u.lastLookAt + Math.min(c.maxBackoffMs, c.firstLookMs * 2 ** Math.min(16, u.absences + u.failures))

/** What settling unknown orders needs besides the remote desk: the venue of an account, and drift to report. */
export interface Settling {
  readonly r: RemoteDesk
  readonly config: OutcomeConfig
  readonly tradingOf: (account: string) => Venue | undefined
  readonly drift: (
    venue: string,
    account: string,
    ts: number,
    found: ReadonlyArray<Record<string, unknown>>
  ) => JournalEntry
  readonly emit: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<unknown>
}

/** One pass over the unknown orders that are due for a look-up. */
export const settleUnknown = (s: Settling) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const due = [...s.r.inflight.unknown.values()].filter((u) => nextLookAt(u, s.config) <= now)
    for (const u of due) yield* settleOne(s, u)
  })

/** Looks one unknown order up and settles it if the venue's answer allows. */
export const settleOne = Effect.fnUntraced(function* (s: Settling, u: UnknownOrder) {
  const trading = s.tradingOf(u.account)
  if (trading === undefined) return
  const look = yield* Effect.either(trading.orderByClientId(u.request.clientOrderId, u.request))
  const now = yield* Clock.currentTimeMillis
  u.lastLookAt = now
  if (look._tag === "Left") {
    u.failures++
    return
  }
  const found = look.right
  const { r } = s
  if (found === undefined) {
    u.absences++
    if (u.absences < 2 || now - u.sentAt < s.config.absentAfterMs) return
    yield* r.serialized(
      Effect.gen(function* () {
        const order = r.memory.lookup(u.id)
        r.inflight.forget(u.id)
        if (order === undefined || order.venueOrderId !== null) return
        yield* r.setOrder(
          {
            ...order,
            status: "rejected",
            updatedAt: Math.max(now, order.updatedAt),
            info: {
              ...order.info,
              outcome: "absent",
              detail: `${u.venue} has no order under client id ${u.request.clientOrderId}: it was never placed`,
              // An engine's child whose answer was lost and that never reached the venue is tried again, as a
              // timeout answered at once would be (under a new client id: this one stays with the rejected record).
              ...(order.parentId === null ? {} : { retryable: true })
            }
          },
          "order.rejected"
        )
        yield* releaseOrphans(r, u.venue, now)
      })
    )
    return
  }
  if (!sameOrder(found, u.request)) {
    yield* r.serialized(
      Effect.gen(function* () {
        const order = r.memory.lookup(u.id)
        r.inflight.forget(u.id)
        if (order === undefined || order.venueOrderId !== null) return
        const detail =
          `${u.venue}'s order ${found.venueOrderId} under client id ${u.request.clientOrderId} is not the one sent ` +
          `(${found.nativeId} ${found.side} ${F.format(found.amount)} at ${F.format(found.price)}): not adopted`
        yield* r.setOrder(
          {
            ...order,
            status: "rejected",
            updatedAt: Math.max(now, order.updatedAt),
            info: { ...order.info, outcome: "differs", detail }
          },
          "order.rejected"
        )
        yield* s.emit([
          s.drift(u.venue, u.account, now, [
            { found: "order_differs", venue_order_id: found.venueOrderId, order_id: u.id }
          ])
        ])
      })
    )
    return
  }
  yield* adopt(s, u, trading, found)
})

/** Takes the venue's order as the placement's answer (once), its reports held meanwhile, and fills read back. */
const adopt = Effect.fnUntraced(function* (s: Settling, u: UnknownOrder, trading: Venue, found: VenueOrder) {
  const { r } = s
  const now = yield* Clock.currentTimeMillis
  const adopted = yield* r.serialized(
    Effect.gen(function* () {
      const order = r.memory.lookup(u.id)
      r.inflight.unknown.delete(u.id)
      if (order === undefined || order.venueOrderId !== null) return undefined
      yield* recordPlaced(r.placing, order, found, { outcome: "found", reconciled: true })
      yield* claim(r, u.id, u.venue, found.venueOrderId)
      yield* releaseOrphans(r, u.venue, now)
      return r.memory.lookup(u.id)
    })
  )
  if (adopted === undefined) return
  // Fills the venue counts that no report brought: read back, each trade booked once.
  if (found.filled > adopted.filled && trading.fillsSince !== undefined) {
    const fills = yield* Effect.either(trading.fillsSince(Math.max(0, u.sentAt - 60_000)))
    if (fills._tag === "Right") {
      const mine = fills.right.filter((f) => f.venueOrderId === found.venueOrderId)
      if (mine.length > 0) {
        yield* r.serialized(
          r.applyEvents(
            u.venue,
            mine.map((fill) => ({ _tag: "Fill" as const, fill }))
          )
        )
      }
    }
  }
  if (r.inflight.takeCancel(u.id)) {
    const current: Order = r.memory.lookup(u.id) ?? adopted
    yield* Effect.flatten(
      r.lanes.admit(
        u.account,
        cancelAtVenue(r.changing, current).pipe(
          Effect.catchAll((e) => Effect.logWarning(`cancel of ${u.id} after it was found failed: ${e.message}`))
        )
      )
    )
  }
})
