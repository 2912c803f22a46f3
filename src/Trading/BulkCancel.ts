/**
 * Cancel-all on the desk's orders. A venue that cancels in bulk (`cancelAll`, `cancelMarket`) is asked once when the
 * request covers every live order the desk holds there (or in that market); otherwise each order is canceled alone.
 */
import { Clock, Effect } from "effect"
import type { ApiError } from "../Domain/Errors.ts"
import { accountId, type Order, TERMINAL } from "../Domain/Order.ts"
import type { Venue } from "../Services/VenueGateway.ts"
import * as Id from "../Domain/Ids.ts"

export interface BulkCancelling {
  /** Every live plain order the desk holds. */
  readonly live: ReadonlyArray<Order>
  /** Whether the request asks for this order. */
  readonly wanted: (order: Order) => boolean
  /** The market the request names, if it names one. */
  readonly marketId: string | undefined
  /** The handle that trades for an account. */
  readonly trading: (account: string) => Venue | undefined
  readonly cancelOne: (order: Order) => Effect.Effect<Order, ApiError>
  readonly lookup: (id: string) => Order | undefined
  readonly setOrder: (order: Order, kind: string) => Effect.Effect<void>
}

/** Cancels what the request asks for; answers how many orders ended canceled. */
export const cancelWanted = (c: BulkCancelling) =>
  Effect.gen(function* () {
    const orders = c.live.filter((o) => o.heldBy === "venue" && o.venueOrderId !== null && !TERMINAL.has(o.status))
    // Grouped by account: each account's trading handle (a venue's own, or its paper one) is asked for its orders.
    const byAccount = new Map<string, Array<Order>>()
    for (const o of orders) byAccount.set(accountId(o.account), [...(byAccount.get(accountId(o.account)) ?? []), o])
    let count = 0
    for (const [account, all] of byAccount) {
      const wanted = all.filter(c.wanted)
      if (wanted.length === 0) continue
      const venue = c.trading(account)
      const bulk = venue === undefined ? undefined : bulkCall(venue, all, wanted, c.marketId)
      const done =
        bulk === undefined
          ? false
          : yield* bulk.pipe(
              Effect.as(true),
              Effect.orElseSucceed(() => false)
            )
      if (done) {
        const now = yield* Clock.currentTimeMillis
        for (const order of wanted) {
          const current = c.lookup(order.id) ?? order
          // The venue's own report of the cancel may have been applied already (a remote venue's stream runs on).
          if (TERMINAL.has(current.status)) {
            if (current.status === "canceled") count++
            continue
          }
          yield* c.setOrder(
            {
              ...current,
              status: current.filled >= current.amount ? "closed" : "canceled",
              updatedAt: Math.max(now, current.updatedAt),
              info: { ...current.info, detail: "canceled with every order of the request in one venue call" }
            },
            "order.canceled"
          )
          if (current.filled < current.amount) count++
        }
        continue
      }
      for (const order of wanted) {
        const after = yield* c.cancelOne(order)
        if (after.status === "canceled") count++
      }
    }
    return count
  })

/** The one venue call that cancels exactly what is wanted, if the venue has one: never an order not asked for. */
const bulkCall = (
  venue: Venue,
  all: ReadonlyArray<Order>,
  wanted: ReadonlyArray<Order>,
  marketId: string | undefined
) => {
  // every account of the venue goes with the one bulk call, so it must hold one account only
  if (venue.accounts.length !== 1) return undefined
  if (wanted.length === all.length && venue.cancelAll !== undefined) return venue.cancelAll
  if (marketId === undefined || venue.cancelMarket === undefined) return undefined
  const inMarket = all.filter((o) => o.marketId === marketId)
  if (inMarket.length !== wanted.length || wanted.some((o) => o.marketId !== marketId)) return undefined
  const parts = Id.parseMarketId(marketId)
  return parts === undefined ? undefined : venue.cancelMarket(parts.native)
}
