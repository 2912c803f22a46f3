/** The desk's orders in memory: the live ones, a bounded few that just finished, their indexes and running sums. */
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, type OrderStatus, remainingOf, TERMINAL } from "../Domain/Order.ts"
import { collateral } from "./Ledger.ts"

/** How many finished orders stay in memory after they finish. */
const RECENT = 1024

export const OPEN_STATUSES: ReadonlySet<OrderStatus> = new Set(["pending", "open", "pending_cancel"])

const clientKey = (account: string, clientOrderId: string) => `${account}\u0000${clientOrderId}`

/**
 * Memory follows live orders: `live` holds those not yet finished, `recent` the last few that finished (so an answer
 * or a late venue report finds them without a read); every other finished order is read from the store when asked for.
 */
export class Held {
  readonly live = new Map<string, Order>()
  private readonly recent = new Map<string, Order>()
  private readonly byClientId = new Map<string, string>()
  private readonly byVenueOrderId = new Map<string, string>()
  /** The digest of the body each order was first placed with, for retries with its client id. */
  private readonly digests = new Map<string, string>()
  /** Per account: orders open at a venue, and the collateral the priced ones lock; kept as orders change. */
  private readonly openCount = new Map<string, number>()
  private readonly lockedBy = new Map<string, F.Fixed>()

  lookup(id: string): Order | undefined {
    return this.live.get(id) ?? this.recent.get(id)
  }

  byClient(account: string, clientOrderId: string): Order | undefined {
    const id = this.byClientId.get(clientKey(account, clientOrderId))
    return id === undefined ? undefined : this.lookup(id)
  }

  byVenue(venue: string, venueOrderId: string): Order | undefined {
    const id = this.byVenueOrderId.get(`${venue}:${venueOrderId}`)
    return id === undefined ? undefined : this.lookup(id)
  }

  digestOf(id: string): string | undefined {
    return this.digests.get(id)
  }

  /** Names an order by its client id (and the digest of its first body) before or as it is remembered. */
  name(order: Order, digest: string | undefined): void {
    if (digest !== undefined) this.digests.set(order.id, digest)
    this.byClientId.set(clientKey(accountId(order.account), order.clientOrderId), order.id)
  }

  openOrders(account: string): number {
    return this.openCount.get(account) ?? 0
  }

  locked(account: string): F.Fixed {
    return this.lockedBy.get(account) ?? F.ZERO
  }

  sizes(): { live: number; recent: number } {
    return { live: this.live.size, recent: this.recent.size }
  }

  /** Takes an order as it is now: its sums, its indexes, and whether it is live or just finished. */
  remember(order: Order): void {
    const before = this.lookup(order.id)
    if (before !== undefined) this.count(before, -1)
    this.count(order, 1)
    if (order.venueOrderId !== null) this.byVenueOrderId.set(`${order.venue}:${order.venueOrderId}`, order.id)
    if (!TERMINAL.has(order.status)) {
      this.recent.delete(order.id)
      this.live.set(order.id, order)
      return
    }
    this.live.delete(order.id)
    this.recent.delete(order.id)
    this.recent.set(order.id, order)
    if (this.recent.size > RECENT) {
      const oldest = this.recent.values().next().value!
      this.recent.delete(oldest.id)
      this.forget(oldest)
    }
  }

  /** Drops an order that never was (written ahead, the venue never took it), sums and indexes included. */
  drop(order: Order): void {
    const held = this.lookup(order.id)
    if (held !== undefined) this.count(held, -1)
    this.live.delete(order.id)
    this.recent.delete(order.id)
    this.forget(order)
  }

  private forget(order: Order): void {
    this.byClientId.delete(clientKey(accountId(order.account), order.clientOrderId))
    if (order.venueOrderId !== null) this.byVenueOrderId.delete(`${order.venue}:${order.venueOrderId}`)
    this.digests.delete(order.id)
  }

  private count(order: Order, sign: 1 | -1): void {
    if (!OPEN_STATUSES.has(order.status)) return
    const account = accountId(order.account)
    this.openCount.set(account, (this.openCount.get(account) ?? 0) + sign)
    if (order.price === null || order.heldBy !== "venue") return
    const locked = collateral(order.side, order.price, remainingOf(order))
    this.lockedBy.set(account, F.add(this.lockedBy.get(account) ?? F.ZERO, sign === 1 ? locked : F.neg(locked)))
  }
}
