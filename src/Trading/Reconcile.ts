/** Start-up reconciliation: orders the last run left open follow their venue if still there, else they end. */
import { type Context, Clock, Effect } from "effect"
import type { Order, OrderStatus } from "../Domain/Order.ts"
import type { VenueGateway, VenueOrder } from "../Services/VenueGateway.ts"

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

/** Each open venue order is looked up by its client id; a venue that cannot answer leaves it as it is. */
export const reconcile = (r: Reconciling) =>
  Effect.gen(function* () {
    for (const order of r.orders) {
      if (!r.openStatuses.has(order.status) || order.heldBy !== "venue") continue
      const venue = r.gateway.venue(order.venue)
      const found =
        venue === undefined ? undefined : yield* venue.orderByClientId(order.id).pipe(Effect.orElseSucceed(() => null))
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
