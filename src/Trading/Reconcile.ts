/** Start-up reconciliation: orders the last run left open follow their venue if still there, else they end. */
import { type Context, Clock, Effect } from "effect"
import { accountId, type Order, type OrderStatus } from "../Domain/Order.ts"
import type { JournalEntry } from "../Services/OrderStore.ts"
import type { Venue, VenueGateway, VenueOrder } from "../Services/VenueGateway.ts"
import { sameOrder } from "./Outcome.ts"
import { requestOf } from "./Remote.ts"

/** What reconciling needs of the desk: the orders restored, its lookups and its ways to apply a venue's answer. */
export interface Reconciling {
  readonly orders: ReadonlyArray<Order>
  readonly openStatuses: ReadonlySet<OrderStatus>
  readonly gateway: Context.Tag.Service<typeof VenueGateway>
  readonly lookup: (id: string) => Order | undefined
  readonly setOrder: (order: Order, kind: string) => Effect.Effect<void>
  /** Removes an order written ahead of a placement the venue never took, with its event. */
  readonly withdraw: (order: Order, entry: JournalEntry) => Effect.Effect<unknown>
  readonly applyAnswer: (venue: string, answer: VenueOrder) => Effect.Effect<void>
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => Effect.Effect<void>
}

/**
 * Each open venue order is looked up by its client id; one the venue cannot find so (a venue without client ids,
 * Polymarket) is looked for among the venue's resting orders by its venue id, and adopted when it rests there. A
 * venue that cannot answer leaves it as it is; one that has it nowhere ends it canceled. An order still `pending` was
 * written before its venue call and the process ended before the answer: found on the venue, it is accepted now
 * (once); absent, the venue never took it and it is removed, so a retry places it once.
 */
export const reconcile = (r: Reconciling) =>
  Effect.gen(function* () {
    const resting = new Map<string, ReadonlyMap<string, VenueOrder> | null>()
    const restingOn = (account: string, venue: Venue) =>
      Effect.gen(function* () {
        const known = resting.get(account)
        if (known !== undefined) return known
        const read =
          venue.openOrders === undefined
            ? new Map<string, VenueOrder>()
            : yield* Effect.map(venue.openOrders, (os) => new Map(os.map((o) => [o.venueOrderId, o]))).pipe(
                Effect.orElseSucceed(() => null)
              )
        resting.set(account, read)
        return read
      })
    for (const order of r.orders) {
      if (!r.openStatuses.has(order.status) || order.heldBy !== "venue") continue
      const venue = r.gateway.trading(accountId(order.account))
      // An order whose answer was lost is the outcome reconciler's, which allows the venue time to show it.
      if (venue?.remote === true && order.venueOrderId === null && order.info["outcome"] === "unknown") continue
      const request = requestOf(order)
      let found =
        venue === undefined
          ? undefined
          : yield* venue.orderByClientId(request.clientOrderId, request).pipe(Effect.orElseSucceed(() => null))
      if (found === undefined && venue !== undefined && order.venueOrderId !== null) {
        const open = yield* restingOn(accountId(order.account), venue)
        found = open === null ? null : open.get(order.venueOrderId)
        // Not resting: the venue's record of it says how it ended (filled is filled, not canceled by guess).
        if (found === undefined && venue.orderById !== undefined) {
          found = yield* venue.orderById(order.venueOrderId).pipe(Effect.orElseSucceed(() => null))
        }
      }
      if (found === null) continue
      // A venue order under this client id that is not the one sent is not adopted.
      if (found !== undefined && order.venueOrderId === null && !sameOrder(found, request)) found = undefined
      if (order.status === "pending" && order.venueOrderId === null) {
        // A venue not served this time cannot say whether it took the order: it stays pending until one can.
        if (venue === undefined) continue
        const now = yield* Clock.currentTimeMillis
        if (found === undefined) {
          yield* r.withdraw(order, {
            ts: Math.max(now, order.updatedAt),
            kind: "order.rejected",
            key: order.id,
            payload: {
              client_order_id: order.clientOrderId,
              market_id: order.marketId,
              reason: "the venue has no order of this client id after a restart: it was never placed",
              kind: "absent"
            }
          })
          continue
        }
        yield* r.setOrder(
          {
            ...order,
            status: "open",
            venueOrderId: found.venueOrderId,
            updatedAt: Math.max(now, order.updatedAt),
            info: { ...order.info, reconciled: true }
          },
          "order.accepted"
        )
        yield* r.applyAnswer(order.venue, found)
        yield* r.applySnapshot(r.lookup(order.id)!, found)
        continue
      }
      if (found === undefined) {
        const now = yield* Clock.currentTimeMillis
        yield* r.setOrder(
          {
            ...order,
            status: "canceled",
            updatedAt: Math.max(now, order.updatedAt),
            info: { ...order.info, detail: "absent on the venue after a restart" }
          },
          "order.canceled"
        )
      } else {
        yield* r.applyAnswer(order.venue, found)
        yield* r.applySnapshot(r.lookup(order.id)!, found)
      }
    }
  })
