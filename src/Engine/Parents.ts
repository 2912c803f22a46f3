/** A parent's record and state: its running sums, its status, and the writes that keep the store in step. */
import { Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import { accountRef, type Order } from "../Domain/Order.ts"
import type { StoredParent } from "../Services/OrderStore.ts"
import { type ChildRecord, type Driver, kindOf, type Runtime } from "./Runtime.ts"
import { kept } from "./Core.ts"
import { andThen, each, type Rest } from "./Rest.ts"

export const stateOf = (d: Driver, rt: Runtime, now: number): StoredParent => ({
  id: rt.id,
  live: !rt.done,
  state: rt,
  updatedAt: now,
  summarize: d.summarize
})

/** Writes the parent's state at `now`, with the driver's entries about it in the same write. */
export const persist = (
  d: Driver,
  rt: Runtime,
  now: number,
  entries: ReadonlyArray<{ kind: string; payload: Record<string, unknown> }> = []
): Rest => {
  d.stateAhead.delete(rt.id)
  const batch = {
    parents: [stateOf(d, rt, now)],
    entries: entries.map((e) => ({
      ts: now,
      kind: e.kind,
      key: rt.id,
      payload: { parent_id: rt.id, ...e.payload }
    }))
  }
  return d.journal.commitNow(batch) !== undefined ? undefined : Effect.asVoid(d.journal.commit(batch))
}

/**
 * The parent's record as the API shows it, from its running sums, as of its last save. `info.children` is not kept
 * here: it grows with the parent's history, so the desk reads it from the store's parent index when a client reads
 * the parent. The desk renders a working parent's record with this whenever it is read instead of keeping one.
 */
export const record = (d: Driver, rt: Runtime): Order => {
  const kind = kindOf(d, rt)
  const status = recordStatus(d, rt)
  return {
    id: rt.id,
    clientOrderId: rt.clientOrderId,
    venue: rt.venue,
    account: accountRef(rt.account),
    marketId: rt.marketId,
    side: rt.spec.side,
    type: kind.shownAs ?? rt.type,
    timeInForce: rt.spec.timeInForce,
    status,
    heldBy: "engine",
    price: rt.spec.price,
    stopPrice: rt.spec.stopPrice,
    amount: rt.spec.amount,
    filled: rt.filled,
    cost: rt.cost,
    fee: rt.fee,
    lastFillPrice: rt.lastFill?.price ?? null,
    lastFillAmount: rt.lastFill?.amount ?? null,
    postOnly: rt.spec.postOnly,
    reduceOnly: rt.spec.reduceOnly,
    expiresAt: rt.expiresAt,
    createdAt: rt.spec.createdAt,
    updatedAt: rt.updatedAt ?? rt.spec.createdAt,
    parentId: null,
    queuePriorityPreserved: null,
    book: rt.book,
    trader: rt.trader,
    tags: rt.tags,
    notes: rt.notes,
    info: {
      kind: rt.type,
      state: status,
      detail: rt.detail,
      params: rt.wireParams,
      ...kind.core.info(rt.state)
    },
    venueOrderId: null
  }
}

/** The status of the parent's record (`record(d, rt).status`). */
export const recordStatus = (d: Driver, rt: Runtime): Order["status"] =>
  statusOf(rt, rt.filled >= rt.spec.amount && kindOf(d, rt).closesWhenFilled !== false)

/** `closes`: the parent is filled and its type closes it then. */
const statusOf = (rt: Runtime, closes: boolean): Order["status"] => {
  if (rt.done) {
    return rt.ending === "closed" || closes ? "closed" : (rt.ending ?? "canceled")
  }
  if (rt.ending !== null) return "pending_cancel"
  return rt.triggered ? "triggered" : "waiting"
}

/**
 * Writes the parent's record, its state, the record's event and the driver's `after` entries (made from the
 * record) in one write.
 */
export const save = (
  d: Driver,
  rt: Runtime,
  now: number,
  kind = "order.updated",
  digest?: string,
  after?: (order: Order) => { kind: string; payload: Record<string, unknown> }
): Rest =>
  // The sums take in what the desk already holds of each live child, even before its update reaches us.
  andThen(
    each(rt.children, now, (child) => takeHeld(d, rt, child)),
    now,
    () => written(d, rt, now, kind, digest, after)
  )

/** What the desk holds of a live child taken into the parent's sums (read from the store when not at hand). */
const takeHeld = (d: Driver, rt: Runtime, child: ChildRecord): Rest => {
  if (child.orderId === null) return undefined
  const held = d.desk.heldNow(child.orderId)
  if (held === undefined) {
    return Effect.map(d.desk.get(child.orderId), (order) => {
      if (order !== undefined) child.seen = takeAmounts(d, rt, child.spec.role, child.seen, order)
    })
  }
  child.seen = takeAmounts(d, rt, child.spec.role, child.seen, held)
  return undefined
}

/** `save`'s write, once the sums are up to date. */
const written = (
  d: Driver,
  rt: Runtime,
  now: number,
  kind: string,
  digest: string | undefined,
  after: ((order: Order) => { kind: string; payload: Record<string, unknown> }) | undefined
): Rest => {
  rt.updatedAt = now
  d.stateAhead.delete(rt.id)
  const order = record(d, rt)
  const extra = after?.(order)
  const write = {
    digest,
    state: stateOf(d, rt, now),
    after:
      extra === undefined
        ? []
        : [{ ts: now, kind: extra.kind, key: rt.id, payload: { parent_id: rt.id, ...extra.payload } }]
  }
  return d.desk.putParentNow(order, kind, write) ? undefined : Effect.asVoid(d.desk.putParent(order, kind, write))
}

export const emit = (d: Driver, rt: Runtime, now: number, kind: string, payload: Readonly<Record<string, unknown>>) => {
  const batch = { entries: [{ ts: now, kind, key: rt.id, payload: { parent_id: rt.id, ...payload } }] }
  return d.journal.commitNow(batch) !== undefined ? undefined : Effect.asVoid(d.journal.append(batch.entries))
}

export const liveChildren = (rt: Runtime) => rt.children.filter((c) => c.status !== "done")

/** A finished child leaves the parent's state. */
export const drop = (rt: Runtime, child: ChildRecord) => {
  child.status = "done"
  rt.children = kept(rt.children, (c) => c !== child)
}

/** Adds what a child's order gained since the parent last saw it to the parent's sums (a replay adds nothing). */
export const takeAmounts = (d: Driver, rt: Runtime, role: string, seen: ChildRecord["seen"], order: Order) => {
  const before = seen ?? { filled: F.ZERO, cost: F.ZERO, fee: F.ZERO }
  const filled = F.sub(order.filled, before.filled)
  rt.fee = F.add(rt.fee, F.sub(order.fee, before.fee))
  const counts = kindOf(d, rt).counts
  if (counts === undefined || counts(role, rt.params)) {
    // A bucket order counts in bucket terms: a flipped member's contract at p costs 1 − p.
    const flip = rt.members?.find((m) => m.marketId === order.marketId)?.flip === true
    const cost = F.sub(order.cost, before.cost)
    rt.filled = F.add(rt.filled, filled)
    rt.cost = F.add(rt.cost, flip ? F.sub(filled, cost) : cost)
    if (filled > 0 && order.lastFillPrice !== null && order.lastFillAmount !== null) {
      rt.lastFill = {
        price: flip ? F.sub(F.ONE, order.lastFillPrice) : order.lastFillPrice,
        amount: order.lastFillAmount
      }
    }
  }
  return { filled: order.filled, cost: order.cost, fee: order.fee }
}

/** The parent ends once no child is live: its final status, the event, and it leaves the index. */
export const completeIfQuiet = (d: Driver, rt: Runtime, now: number): Rest =>
  endsNow(rt) ? complete(d, rt, now) : undefined

/** Whether the parent is ending and no child of it is live: `completeIfQuiet` ends it now. */
export const endsNow = (rt: Runtime): boolean =>
  !rt.done && rt.ending !== null && !rt.children.some((c) => c.status !== "done")

const complete = (d: Driver, rt: Runtime, now: number): Rest => {
  rt.done = true
  d.sleeping.delete(rt.id)
  const saved = save(
    d,
    rt,
    now,
    rt.ending === "canceled" || rt.ending === "expired" ? "order.canceled" : "order.updated",
    undefined,
    (order) => ({
      kind: "managed.done",
      payload: { status: order.status, detail: rt.detail, filled: F.format(order.filled) }
    })
  )
  return andThen(saved, now, () => forget(d, rt))
}

/** A finished parent leaves memory; the store answers for it from now on. */
const forget = (d: Driver, rt: Runtime): undefined => {
  d.parents.delete(rt.id)
  d.lazyBands.delete(rt.id)
  return undefined
}
