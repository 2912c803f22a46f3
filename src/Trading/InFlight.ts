/** Orders whose venue has not answered yet, or whose answer was lost, and what waits on them. */
import type { Order } from "../Domain/Order.ts"
import type { PlaceOrderRequest, VenueEvent } from "../Services/VenueGateway.ts"

/** An order whose placement may or may not have reached its venue: looked up by its key until the venue says. */
export interface UnknownOrder {
  readonly id: string
  readonly account: string
  readonly venue: string
  readonly request: PlaceOrderRequest
  /** When the request left (the order's creation). */
  readonly sentAt: number
  /** Look-ups that found nothing, and when the last one was made. */
  absences: number
  lastLookAt: number
  /** Look-ups that failed (the venue could not tell). */
  failures: number
}

/** How long a venue event that names no known order is held while placements on its venue are unanswered. */
const ORPHAN_TTL_MS = 10 * 60_000
/** At most this many such events are held per venue; the oldest go first. */
const ORPHAN_CAP = 10_000

/** Events held for a venue order id the desk does not know yet. */
interface Orphans {
  readonly byVenueOrderId: Map<string, Array<{ readonly at: number; readonly event: VenueEvent }>>
  count: number
}

/**
 * What the desk keeps about placements between the request and the venue's word on them: which are in flight, the
 * cancels asked for meanwhile, the venue's reports that arrived first (held and applied once, after the answer), and
 * the orders whose outcome is unknown.
 */
export class InFlight {
  /** Orders sent and not yet answered: id → venue. */
  private readonly sending = new Map<string, string>()
  private readonly cancels = new Set<string>()
  /** Reports naming an order by its client id before its venue id was known, by order id. */
  private readonly early = new Map<string, Array<VenueEvent>>()
  private readonly orphans = new Map<string, Orphans>()
  readonly unknown = new Map<string, UnknownOrder>()

  sent(order: Order): void {
    this.sending.set(order.id, order.venue)
  }

  answered(id: string): void {
    this.sending.delete(id)
  }

  isSending(id: string): boolean {
    return this.sending.has(id)
  }

  /** Whether a report naming an unknown order may yet belong to one of this venue's unanswered placements. */
  waitingOn(venue: string): boolean {
    for (const v of this.sending.values()) if (v === venue) return true
    for (const u of this.unknown.values()) if (u.venue === venue) return true
    return false
  }

  /** Orders in flight or of unknown outcome, per venue. */
  counts(): Record<string, { readonly in_flight: number; readonly unknown: number }> {
    const out: Record<string, { in_flight: number; unknown: number }> = {}
    for (const v of this.sending.values()) (out[v] ??= { in_flight: 0, unknown: 0 }).in_flight++
    for (const u of this.unknown.values()) (out[u.venue] ??= { in_flight: 0, unknown: 0 }).unknown++
    return out
  }

  wantCancel(id: string): void {
    this.cancels.add(id)
  }

  /** Whether a cancel was asked for while the order was in flight (asked once: taking it clears it). */
  takeCancel(id: string): boolean {
    return this.cancels.delete(id)
  }

  cancelWanted(id: string): boolean {
    return this.cancels.has(id)
  }

  hold(id: string, event: VenueEvent): void {
    const list = this.early.get(id)
    if (list === undefined) this.early.set(id, [event])
    else list.push(event)
  }

  orphan(venue: string, venueOrderId: string, event: VenueEvent, now: number): void {
    let o = this.orphans.get(venue)
    if (o === undefined) this.orphans.set(venue, (o = { byVenueOrderId: new Map(), count: 0 }))
    const list = o.byVenueOrderId.get(venueOrderId)
    if (list === undefined) o.byVenueOrderId.set(venueOrderId, [{ at: now, event }])
    else list.push({ at: now, event })
    o.count++
    if (o.count > ORPHAN_CAP) this.expire(venue, Number.POSITIVE_INFINITY, o.count - ORPHAN_CAP)
  }

  /** The reports held for an order now that its venue id is known, in the order they came; they are held no more. */
  claim(id: string, venue: string, venueOrderId: string): Array<VenueEvent> {
    const out = this.early.get(id) ?? []
    this.early.delete(id)
    const o = this.orphans.get(venue)
    const held = o?.byVenueOrderId.get(venueOrderId)
    if (o !== undefined && held !== undefined) {
      o.byVenueOrderId.delete(venueOrderId)
      o.count -= held.length
      for (const h of held) out.push(h.event)
    }
    return out
  }

  /** Drops what was held for an order that will never have a venue id (refused, or certainly absent). */
  forget(id: string): void {
    this.early.delete(id)
    this.cancels.delete(id)
    this.unknown.delete(id)
  }

  /**
   * The reports held for venue ids no placement claimed, to be applied as any report is: all of them once nothing is
   * in flight on the venue, else those older than the time they may be held (at most `limit`).
   */
  release(venue: string, now: number): Array<VenueEvent> {
    if (!this.waitingOn(venue)) return this.expire(venue, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)
    return this.expire(venue, now - ORPHAN_TTL_MS, Number.POSITIVE_INFINITY)
  }

  private expire(venue: string, before: number, limit: number): Array<VenueEvent> {
    const o = this.orphans.get(venue)
    if (o === undefined) return []
    const out: Array<VenueEvent> = []
    for (const [key, list] of o.byVenueOrderId) {
      if (out.length >= limit) break
      if (list[0]!.at >= before) continue
      o.byVenueOrderId.delete(key)
      o.count -= list.length
      for (const h of list) out.push(h.event)
    }
    if (o.count === 0) this.orphans.delete(venue)
    return out
  }
}
