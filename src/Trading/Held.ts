/** The desk's orders in memory: the live ones, a bounded few that just finished, their indexes and running sums. */
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, type OrderStatus, remainingOf, TERMINAL } from "../Domain/Order.ts"
import { collateral } from "./Ledger.ts"

/** How many finished orders stay in memory after they finish. */
const RECENT = 1024

export const OPEN_STATUSES: ReadonlySet<OrderStatus> = new Set(["pending", "open", "pending_cancel"])

/** Ids under two keys, with no key string made per entry (the inner keys are the orders' own strings). */
class TwoKeys {
  private readonly outer = new Map<string, Map<string, string>>()
  get(a: string, b: string): string | undefined {
    return this.outer.get(a)?.get(b)
  }
  set(a: string, b: string, id: string): void {
    let inner = this.outer.get(a)
    if (inner === undefined) this.outer.set(a, (inner = new Map()))
    inner.set(b, id)
  }
  delete(a: string, b: string): void {
    const inner = this.outer.get(a)
    if (inner === undefined) return
    inner.delete(b)
    if (inner.size === 0) this.outer.delete(a)
  }
}

/**
 * Memory follows live orders: `live` holds those not yet finished, `recent` the last few that finished (so an answer
 * or a late venue report finds them without a read); every other finished order is read from the store when asked for.
 */
export class Held {
  private readonly live = new Map<string, Order>()
  /**
   * Working engine parents: no record of their own here, only their holder's handle, from which `render` makes the
   * record as it is now (the holder changes its handle only together with a new record it hands over). Those whose
   * status counts as open are in `parentsOpen` with their account, so a change takes back what the last one counted.
   */
  private readonly parents = new Map<string, unknown>()
  private readonly parentsOpen = new Map<string, string>()
  private render: ((handle: unknown) => Order) | undefined
  private readonly recent = new Map<string, Order>()
  /** Account, then client order id. */
  private readonly byClientId = new TwoKeys()
  /** Venue, then the venue's order id. */
  private readonly byVenueOrderId = new TwoKeys()
  /** The digest of the body each order was first placed with, for retries with its client id. */
  private readonly digests = new Map<string, string>()
  /** Per account: orders open at a venue, and the collateral the priced ones lock; kept as orders change. */
  private readonly openCount = new Map<string, number>()
  private readonly lockedBy = new Map<string, F.Fixed>()

  lookup(id: string): Order | undefined {
    const held = this.live.get(id)
    if (held !== undefined) return held
    const handle = this.parents.get(id)
    return handle !== undefined && this.render !== undefined ? this.render(handle) : this.recent.get(id)
  }

  /** Every order not yet finished, engine parents rendered as they are now. */
  liveOrders(): Array<Order> {
    const out = [...this.live.values()]
    if (this.render !== undefined) for (const handle of this.parents.values()) out.push(this.render(handle))
    return out
  }

  /**
   * How an engine parent's record is made from its holder's handle; from now on working parents keep no record.
   * `working` names the handles of parents held already (restored at start), whose records are let go.
   */
  renderParents(
    render: ((handle: unknown) => Order) | undefined,
    working: ReadonlyArray<readonly [id: string, handle: unknown]>
  ): void {
    if (render === undefined && this.render !== undefined) {
      // The holder leaves: its parents keep the records they have now.
      for (const [id, handle] of this.parents) this.live.set(id, this.render(handle))
      this.parents.clear()
      this.parentsOpen.clear()
    }
    this.render = render
    if (render === undefined) return
    for (const [id, handle] of working) {
      const order = this.live.get(id)
      if (order === undefined) continue
      this.live.delete(id)
      this.parents.set(id, handle)
      if (OPEN_STATUSES.has(order.status)) this.parentsOpen.set(id, accountId(order.account))
    }
  }

  byClient(account: string, clientOrderId: string): Order | undefined {
    const id = this.byClientId.get(account, clientOrderId)
    return id === undefined ? undefined : this.lookup(id)
  }

  byVenue(venue: string, venueOrderId: string): Order | undefined {
    const id = this.byVenueOrderId.get(venue, venueOrderId)
    return id === undefined ? undefined : this.lookup(id)
  }

  digestOf(id: string): string | undefined {
    return this.digests.get(id)
  }

  /** Names an order by its client id (and the digest of its first body) before or as it is remembered. */
  name(order: Order, digest: string | undefined): void {
    if (digest !== undefined) this.digests.set(order.id, digest)
    this.byClientId.set(accountId(order.account), order.clientOrderId, order.id)
  }

  openOrders(account: string): number {
    return this.openCount.get(account) ?? 0
  }

  /** Orders open at a venue, or parents being canceled, over every account. */
  openTotal(): number {
    let n = 0
    for (const count of this.openCount.values()) n += count
    return n
  }

  locked(account: string): F.Fixed {
    return this.lockedBy.get(account) ?? F.ZERO
  }

  sizes(): { live: number; recent: number } {
    return { live: this.live.size + this.parents.size, recent: this.recent.size }
  }

  /**
   * Takes an order as it is now: its sums, its indexes, and whether it is live or just finished. `handle`, for a
   * working engine parent, is what its record is rendered from while it works (the record itself is not kept).
   */
  remember(order: Order, handle?: unknown): void {
    this.uncount(order.id)
    this.count(order, 1)
    if (order.venueOrderId !== null) this.byVenueOrderId.set(order.venue, order.venueOrderId, order.id)
    if (!TERMINAL.has(order.status)) {
      this.recent.delete(order.id)
      if (handle !== undefined && this.render !== undefined) {
        this.live.delete(order.id)
        this.parents.set(order.id, handle)
        if (OPEN_STATUSES.has(order.status)) this.parentsOpen.set(order.id, accountId(order.account))
      } else {
        this.live.set(order.id, order)
      }
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
    this.uncount(order.id)
    this.live.delete(order.id)
    this.recent.delete(order.id)
    this.forget(order)
  }

  private forget(order: Order): void {
    this.byClientId.delete(accountId(order.account), order.clientOrderId)
    if (order.venueOrderId !== null) this.byVenueOrderId.delete(order.venue, order.venueOrderId)
    this.digests.delete(order.id)
  }

  /** Takes back what the order as held now counts, and leaves the parents' handles (a new record follows). */
  private uncount(id: string): void {
    if (this.parents.has(id)) {
      // A parent's record counts no collateral (it is not at a venue): only the open order.
      const account = this.parentsOpen.get(id)
      if (account !== undefined) this.openCount.set(account, (this.openCount.get(account) ?? 0) - 1)
      this.parentsOpen.delete(id)
      this.parents.delete(id)
      return
    }
    const held = this.live.get(id) ?? this.recent.get(id)
    if (held !== undefined) this.count(held, -1)
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
