/** Start-up reconciliation: orders the last run left open follow their venue if still there, else they end. */
import { type Context, Clock, Effect } from "effect"
import type { Order, OrderStatus } from "../Domain/Order.ts"
import type { Venue, VenueGateway, VenueOrder } from "../Services/VenueGateway.ts"

/** What reconciling needs of the desk: the orders restored, its lookups and its ways to apply a venue's answer. */
export interface Reconciling {
  readonly orders: ReadonlyArray<Order>
  readonly openStatuses: ReadonlySet<OrderStatus>
  readonly gateway: Context.Tag.Service<typeof VenueGateway>
  readonly lookup: (id: string) => Order | undefined
  readonly setOrder: (order: Order, kind: string) => Effect.Effect<void>
  readonly applyAnswer: (venue: string, answer: VenueOrder) => Effect.Effect<void>
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => Effect.Effect<void>
}

/**
 * Each open venue order is looked up by its client id; one the venue cannot find so (a venue without client ids,
 * Polymarket) is looked for among the venue's resting orders by its venue id, and adopted when it rests there. A
 * venue that cannot answer leaves it as it is; one that has it nowhere ends it canceled.
 */
export const reconcile = (r: Reconciling) =>
  Effect.gen(function* () {
    const resting = new Map<string, ReadonlyMap<string, VenueOrder> | null>()
    const restingOn = (venue: Venue) =>
      Effect.gen(function* () {
        const known = resting.get(venue.info.id)
        if (known !== undefined) return known
        const read =
          venue.openOrders === undefined
            ? new Map<string, VenueOrder>()
            : yield* Effect.map(venue.openOrders, (os) => new Map(os.map((o) => [o.venueOrderId, o]))).pipe(
                Effect.orElseSucceed(() => null)
              )
        resting.set(venue.info.id, read)
        return read
      })
    for (const order of r.orders) {
      if (!r.openStatuses.has(order.status) || order.heldBy !== "venue") continue
      const venue = r.gateway.venue(order.venue)
      let found =
        venue === undefined ? undefined : yield* venue.orderByClientId(order.id).pipe(Effect.orElseSucceed(() => null))
      if (found === undefined && venue !== undefined && order.venueOrderId !== null) {
        const open = yield* restingOn(venue)
        found = open === null ? null : open.get(order.venueOrderId)
      }
      if (found === null) continue
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
