/** Applying what a venue reports to the desk's orders: fills into the ledger and the order, then status changes. */
import { Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, type OrderStatus, TERMINAL } from "../Domain/Order.ts"
import type { JournalEntry } from "../Services/OrderStore.ts"
import type { VenueEvent, VenueFill, VenueOrder } from "../Services/VenueGateway.ts"
import { renderFill } from "./Desk.ts"
import type { Fill } from "./Ledger.ts"

/** What of the desk applying venue events needs: its lookups and its one way to store an order (with a fill). */
export interface Applied {
  /** The order a venue knows by this id: held in memory, else read from the store (an old finished one). */
  readonly find: (venue: string, venueOrderId: string) => Effect.Effect<Order | undefined>
  /** Whether a fill of this id was recorded already. */
  readonly hasFill: (id: string) => Effect.Effect<boolean>
  /** Stores the order with its event; with a fill, records it in the ledger and stores it with its ledger rows. */
  readonly setOrder: (
    order: Order,
    kind: string,
    fill?: Fill,
    before?: ReadonlyArray<JournalEntry>
  ) => Effect.Effect<void>
  /**
   * Closes the positions held in a market that resolved at `payout` per YES contract (on the accounts whose events
   * these are), each once.
   */
  readonly settle: (venue: string, nativeId: string, payout: F.Fixed, ts: number) => Effect.Effect<unknown>
}

/** The desk's lookups and its one way to store an order, in plain code: for what a venue answered at once. */
export interface AppliedNow {
  readonly find: (venue: string, venueOrderId: string) => Order | undefined
  readonly hasFill: (id: string) => boolean
  readonly setOrder: (order: Order, kind: string, fill?: Fill, before?: ReadonlyArray<JournalEntry>) => void
}

/** A venue's fill of an order as the ledger records it. */
const fillOf = (venue: string, order: Order, f: VenueFill): Fill => ({
  id: `${venue}:${f.tradeId}:${f.venueOrderId}`,
  orderId: order.id,
  clientOrderId: order.clientOrderId,
  parentId: order.parentId,
  account: accountId(order.account),
  marketId: order.marketId,
  side: f.side,
  price: f.price,
  amount: f.amount,
  fee: f.fee,
  liquidity: f.liquidity,
  tradeId: f.tradeId,
  book: order.book,
  ts: f.ts
})

/** The order with a fill taken in, the fill's `fill.new` event to store with it. */
const filled = (order: Order, f: VenueFill, fill: Fill) => {
  const total = F.add(order.filled, f.amount)
  return {
    order: {
      ...order,
      filled: total,
      cost: F.add(order.cost, F.mul(f.price, f.amount)),
      fee: F.add(order.fee, f.fee),
      lastFillPrice: f.price,
      lastFillAmount: f.amount,
      status: total >= order.amount ? "closed" : order.status,
      updatedAt: Math.max(order.updatedAt, f.ts)
    } satisfies Order,
    before: [{ ts: f.ts, kind: "fill.new", key: order.id, payload: renderFill(fill) }]
  }
}

/** Applies what a venue reported: fills into the ledger and the order, then status changes. */
export const applyEvents = Effect.fnUntraced(function* (a: Applied, venue: string, events: ReadonlyArray<VenueEvent>) {
  for (const event of events) {
    if (event._tag === "Settled") {
      yield* a.settle(venue, event.nativeId, event.payout, event.ts)
      continue
    }
    if (event._tag === "Book" || event._tag === "Trade" || event._tag === "Stream") continue
    const venueOrderId = event._tag === "Order" ? event.order.venueOrderId : event.fill.venueOrderId
    const order = yield* a.find(venue, venueOrderId)
    if (order === undefined) continue
    if (event._tag === "FillReversed") {
      yield* reverseFill(a, venue, order, event.fill, event.reason)
    } else if (event._tag === "Fill") {
      const fill = fillOf(venue, order, event.fill)
      if (yield* a.hasFill(fill.id)) continue
      const next = filled(order, event.fill, fill)
      yield* a.setOrder(next.order, "order.updated", fill, next.before)
    } else {
      yield* takeSnapshot(a, order, event.order)
    }
  }
})

/**
 * `applyEvents` in plain code, for what a venue that answers in process answered a placement with: fills and
 * changes of the order placed (a settlement or a reversed fill never comes with such an answer, and is refused).
 */
export const applyEventsNow = (a: AppliedNow, venue: string, events: ReadonlyArray<VenueEvent>): void => {
  for (const event of events) {
    if (event._tag === "Book" || event._tag === "Trade" || event._tag === "Stream") continue
    if (event._tag === "Settled" || event._tag === "FillReversed") {
      throw new Error(`a placement answered at once carries no ${event._tag} event`)
    }
    const order = a.find(venue, event._tag === "Order" ? event.order.venueOrderId : event.fill.venueOrderId)
    if (order === undefined) continue
    if (event._tag === "Fill") {
      const fill = fillOf(venue, order, event.fill)
      if (a.hasFill(fill.id)) continue
      const next = filled(order, event.fill, fill)
      a.setOrder(next.order, "order.updated", fill, next.before)
    } else {
      const next = snapshotOf(order, event.order)
      if (next !== undefined) a.setOrder(next.order, next.kind)
    }
  }
}

/** The order with the venue's status taken (never out of a terminal one; amounts come from fills only), if it changed. */
const snapshotOf = (order: Order, snapshot: VenueOrder): { order: Order; kind: string } | undefined => {
  if (TERMINAL.has(order.status) && order.status !== "closed") return undefined
  const status: OrderStatus =
    order.filled >= order.amount ? "closed" : snapshot.status === "closed" ? order.status : snapshot.status
  if (
    status === order.status &&
    snapshot.price === order.price &&
    snapshot.amount === order.amount &&
    snapshot.queuePriorityPreserved === order.queuePriorityPreserved
  ) {
    return undefined
  }
  return {
    order: {
      ...order,
      status,
      price: snapshot.price,
      amount: snapshot.amount,
      queuePriorityPreserved: snapshot.queuePriorityPreserved,
      updatedAt: Math.max(order.updatedAt, snapshot.updatedAt)
    },
    kind: status === "canceled" ? "order.canceled" : "order.updated"
  }
}

/** Takes the venue's status (never out of a terminal one); amounts come from fills only. */
export const takeSnapshot = (a: Applied, order: Order, snapshot: VenueOrder) => {
  const next = snapshotOf(order, snapshot)
  return next === undefined ? Effect.void : a.setOrder(next.order, next.kind)
}

/** `takeSnapshot` in plain code. */
export const takeSnapshotNow = (a: AppliedNow, order: Order, snapshot: VenueOrder): void => {
  const next = snapshotOf(order, snapshot)
  if (next !== undefined) a.setOrder(next.order, next.kind)
}

/**
 * Undoes a fill the venue reversed: the ledger takes a counter-fill (the other side, same price and amount, the fee
 * given back) written as a `fill.new` like any other, with its ledger rows in the same write, and a
 * `fill.reversed` event tells why. The order's filled, cost and fee go back by the same amounts. A fill never
 * counted, or reversed already, changes nothing.
 */
const reverseFill = (a: Applied, venue: string, order: Order, f: VenueFill, reason: string) =>
  Effect.gen(function* () {
    const original = `${venue}:${f.tradeId}:${f.venueOrderId}`
    if (!(yield* a.hasFill(original))) return
    const counter: Fill = {
      id: `${original}:reversed`,
      orderId: order.id,
      clientOrderId: order.clientOrderId,
      parentId: order.parentId,
      account: accountId(order.account),
      marketId: order.marketId,
      side: f.side === "buy" ? "sell" : "buy",
      price: f.price,
      amount: f.amount,
      fee: F.neg(f.fee),
      liquidity: f.liquidity,
      tradeId: f.tradeId,
      book: order.book,
      ts: f.ts
    }
    if (yield* a.hasFill(counter.id)) return
    const filled = F.max(F.ZERO, F.sub(order.filled, f.amount))
    yield* a.setOrder(
      {
        ...order,
        filled,
        cost: F.sub(order.cost, F.mul(f.price, f.amount)),
        fee: F.sub(order.fee, f.fee),
        info: { ...order.info, reversed: [...reversedOf(order), f.tradeId] },
        updatedAt: Math.max(order.updatedAt, f.ts)
      },
      "order.updated",
      counter,
      [
        { ts: f.ts, kind: "fill.new", key: order.id, payload: renderFill(counter) },
        {
          ts: f.ts,
          kind: "fill.reversed",
          key: order.id,
          payload: {
            fill_id: original,
            reversal_id: counter.id,
            trade_id: f.tradeId,
            amount: F.format(f.amount),
            reason
          }
        }
      ]
    )
  })

const reversedOf = (order: Order): ReadonlyArray<string> => {
  const r = order.info["reversed"]
  return Array.isArray(r) ? (r as ReadonlyArray<string>) : []
}
