/** The desk's orders in memory: the live ones, a bounded few that just finished, their indexes and running sums. */
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, type OrderStatus, remainingOf, TERMINAL } from "../Domain/Order.ts"
import type { ParentHead } from "../Services/OrderStore.ts"
import { collateral } from "./Ledger.ts"
import { TwoKeys } from "../Domain/TwoKeys.ts"

/** How many finished orders stay in memory after they finish. */
const RECENT = 1024

export const OPEN_STATUSES: ReadonlySet<OrderStatus> = new Set(["pending", "open", "pending_cancel"])

/**
 * Who holds working engine parents: the desk keeps no record of its own for them, nor any entry per parent; it asks
 * the holder for a parent's handle and renders the record from it.
 */
export interface ParentHolder {
  /** The handle of a parent held now (working, or finished and about to be let go). */
  readonly get: (id: string) => unknown
  /** The ids and handles of the working parents. */
  readonly working: () => Iterable<readonly [id: string, handle: unknown]>
  /** The record as the handle is now. */
  readonly render: (handle: unknown) => Order
  /** The status that record has, without the rest of it. */
  readonly status: (handle: unknown) => Order["status"]
}

/**
 * Memory follows live orders: `live` holds those not yet finished, `recent` the last few that finished (so an answer
 * or a late venue report finds them without a read); every other finished order is read from the store when asked for.
 */
export class Held {
  private readonly live = new Map<string, Order>()
  /**
   * Working engine parents are the holder's: an id in neither `live` nor `recent` that the holder has is rendered from
   * its handle as it is now (the holder changes a handle only together with a new record it hands over). Those whose
   * status counts as open are in `parentsOpen` with their account, so a change takes back what the last one counted.
   */
  private holder: ParentHolder | undefined
  private readonly parentsOpen = new Map<string, string>()
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
    const held = this.live.get(id) ?? this.recent.get(id)
    if (held !== undefined || this.holder === undefined) return held
    const handle = this.holder.get(id)
    return handle === undefined ? undefined : this.holder.render(handle)
  }

  /** `lookup(id)?.status`, without rendering a working parent's whole record. */
  statusOf(id: string): Order["status"] | undefined {
    const held = this.live.get(id) ?? this.recent.get(id)
    if (held !== undefined || this.holder === undefined) return held?.status
    const handle = this.holder.get(id)
    return handle === undefined ? undefined : this.holder.status(handle)
  }

  /**
   * Every order not yet finished, engine parents rendered as they are now; without `parents`, none of the working
   * parents the holder renders (for a caller that looks only at orders at a venue).
   */
  liveOrders(parents = true): Array<Order> {
    const out = [...this.live.values()]
    if (parents && this.holder !== undefined) {
      for (const [, handle] of this.working()) out.push(this.holder.render(handle))
    }
    return out
  }

  /** The holder's working parents whose record the desk renders (not one it keeps a record of). */
  private *working(): Iterable<readonly [id: string, handle: unknown]> {
    if (this.holder === undefined) return
    for (const entry of this.holder.working()) if (!this.live.has(entry[0]) && !this.recent.has(entry[0])) yield entry
  }

  /**
   * From now on the records of working engine parents are rendered from `holder`'s handles. The records the desk
   * holds already of the holder's working parents (restored at start) are let go. Undefined: the holder leaves, and
   * its working parents keep the records they have now.
   */
  renderParents(holder: ParentHolder | undefined): void {
    if (holder === undefined) {
      if (this.holder !== undefined) {
        // Their records count what they count from now on.
        for (const [id, handle] of this.working()) {
          this.live.set(id, this.holder.render(handle))
          this.parentsOpen.delete(id)
        }
      }
      this.holder = undefined
      return
    }
    this.holder = holder
    // Holding no record (as at start), there is nothing to let go: the working parents are not gone through.
    if (this.live.size === 0) return
    for (const [id] of holder.working()) {
      const order = this.live.get(id)
      if (order === undefined) continue
      this.live.delete(id)
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

  /**
   * Files a working engine parent known by its head alone (at start): its client id, digest and open count. Its
   * record is rendered by its holder once one holds it; until then it is read from the store.
   */
  fileParent(head: ParentHead): void {
    if (head.clientOrderId !== head.id) {
      if (head.digest !== undefined) this.digests.set(head.id, head.digest)
      this.byClientId.set(head.account, head.clientOrderId, head.id)
    }
    if (!OPEN_STATUSES.has(head.status as OrderStatus)) return
    this.parentsOpen.set(head.id, head.account)
    this.openCount.set(head.account, (this.openCount.get(head.account) ?? 0) + 1)
  }

  /**
   * Names an order by its client id (and the digest of its first body) before or as it is remembered. An order placed
   * without one (its client id is its own id) is not: nobody retries a request by an id it did not send, and a request
   * that names such an id anyway finds the order in the store and is refused there.
   */
  name(order: Order, digest: string | undefined): void {
    if (order.clientOrderId === order.id) return
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
    let parents = 0
    for (const _ of this.working()) parents++
    return { live: this.live.size + parents, recent: this.recent.size }
  }

  /**
   * Takes an order as it is now: its sums, its indexes, and whether it is live or just finished. `rendered`: a
   * working engine parent whose holder has it, whose record is rendered from the holder's handle while it works.
   */
  remember(order: Order, rendered = false): void {
    this.uncount(order.id)
    this.count(order, 1)
    if (order.venueOrderId !== null) this.byVenueOrderId.set(order.venue, order.venueOrderId, order.id)
    if (!TERMINAL.has(order.status)) {
      this.recent.delete(order.id)
      if (rendered && this.holder?.get(order.id) !== undefined) {
        this.live.delete(order.id)
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

  /** Takes back what the order as held now counts (a new record follows). */
  private uncount(id: string): void {
    // A rendered parent counts no collateral (it is not at a venue): only the open order.
    const account = this.parentsOpen.get(id)
    if (account !== undefined) {
      this.openCount.set(account, (this.openCount.get(account) ?? 0) - 1)
      this.parentsOpen.delete(id)
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
