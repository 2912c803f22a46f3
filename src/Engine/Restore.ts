/** Start-up: the parents the last run left live come back, and catch up with what the desk knows now. */
import { Clock, Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import { TERMINAL } from "../Domain/Order.ts"
import { onChildUpdate } from "./Inputs.ts"
import { Summarized } from "./LiveMarkets.ts"
import { completeIfQuiet, drop, stateOf, takeAmounts } from "./Parents.ts"
import { place } from "./Placement.ts"
import { atNow } from "./Rest.ts"
import type { ChildRecord, Driver, Runtime } from "./Runtime.ts"
import { readSummary, type Summary } from "./Summary.ts"
import { dueAdded, rewatch } from "./Wake.ts"

/** A stored state as the driver holds it: what an earlier version wrote in another shape is brought up to date. */
const revive = (state: unknown, updatedAt: number): Runtime => {
  const rt = state as Runtime
  rt.updatedAt ??= updatedAt
  // A state written while children were kept by number (ascending, as a list keeps them now).
  if (!Array.isArray(rt.children)) rt.children = Object.values(rt.children as unknown as Record<string, ChildRecord>)
  return rt
}

/**
 * Restores the live parents from the store and settles what changed while the driver was down. A quiet parent with a
 * summary is filed from it alone (its market, bands and due times) and read whole at its first use; the others are
 * read whole now.
 */
export const restore = (d: Driver) =>
  Effect.gen(function* () {
    const readWhole = (id: string) => {
      const stored = d.store.parentState(id)
      if (stored === undefined || !stored.live) throw new Error(`the live parent ${id} is not in the store`)
      return revive(stored.state, stored.updatedAt)
    }
    // Parents on one market with the same bands share one summary text: each text is read once.
    const summaries = new Map<string, { readonly summary: Summary; readonly held: Summarized } | undefined>()
    const summaryIn = (text: string) => {
      let read = summaries.get(text)
      if (read === undefined && !summaries.has(text)) {
        const summary = readSummary(text)
        read = summary === undefined ? undefined : { summary, held: new Summarized(summary.type, summary.marketId) }
        summaries.set(text, read)
      }
      return read
    }
    const whole: Array<Runtime> = []
    /** Read whole for want of a summary this version reads: summarized once settled. */
    const unsummarized: Array<Runtime> = []
    for (const stored of yield* d.store.startParents) {
      const read = stored.summary == null ? undefined : summaryIn(stored.summary)
      if (stored.state === undefined && read !== undefined) {
        const { summary, held } = read
        if (d.registry[summary.type] === undefined) continue
        const id = stored.id
        d.parents.holdSummarized(id, held, readWhole)
        d.sleeping.set(id, summary.marketId, summary.watch, true)
        if (summary.lazy !== undefined) d.lazyBands.set(id, summary.lazy)
        for (const at of summary.due) d.due.push(at, id)
        continue
      }
      const rt = stored.state === undefined ? readWhole(stored.id) : revive(stored.state, stored.updatedAt!)
      if (d.registry[rt.type] === undefined) continue
      d.parents.set(rt.id, rt)
      rewatch(d, rt)
      if (rt.expiresAt !== null && rt.ending === null) dueAdded(d, rt.expiresAt, rt)
      for (const t of rt.timers) dueAdded(d, t.at, rt)
      whole.push(rt)
      if (stored.summary !== undefined && read === undefined) unsummarized.push(rt)
    }
    // A state written before parents kept running sums (and every child) gets them from its children once.
    for (const rt of whole) {
      if (typeof rt.filled === "number") continue
      rt.filled = F.ZERO
      rt.cost = F.ZERO
      rt.fee = F.ZERO
      rt.lastFill = null
      const byId = new Map(rt.children.map((c) => [c.orderId, c]))
      for (const order of [...(yield* d.desk.list({ parentId: rt.id }))].reverse()) {
        const child = byId.get(order.id)
        const seen = takeAmounts(d, rt, String(order.info["role"]), undefined, order)
        if (child !== undefined) child.seen = seen
      }
      for (const child of rt.children) if (child.status === "done") drop(rt, child)
    }
    // Only a parent with a child still working, or one that was ending, has anything to catch up on.
    const unsettled = whole.filter((rt) => rt.ending !== null || rt.children.some((c) => c.status !== "done"))
    yield* d.serialized(
      Effect.forEach(
        unsettled,
        (rt) =>
          Effect.gen(function* () {
            for (const child of rt.children) {
              if (child.status === "done") continue
              const found = child.orderId === null ? undefined : yield* d.desk.get(child.orderId)
              const order = found?.parentId === rt.id ? found : undefined
              if (child.status === "placing" && order === undefined) {
                yield* atNow((now) => place(d, rt, child, now))
              } else if (order !== undefined && TERMINAL.has(order.status)) {
                // Fills that came while the driver was down reach the core before the end of the child.
                for (const fill of [...(yield* d.desk.fills({ orderId: order.id }))].reverse()) {
                  yield* atNow((now) => onChildUpdate(d, { order: { ...order, status: "open" }, fill }, now))
                }
                yield* atNow((now) => onChildUpdate(d, { order, fill: undefined }, now))
              }
            }
            yield* atNow((now) => completeIfQuiet(d, rt, now))
          }),
        { discard: true }
      )
    )
    // What an older version (or none) summarized gets its summary now: the next start files it from that alone.
    const quiet = unsummarized.filter((rt) => d.parents.get(rt.id) === rt && d.summarize(rt) !== null)
    if (quiet.length > 0) {
      const now = yield* Clock.currentTimeMillis
      yield* d.serialized(d.journal.commit({ parents: quiet.map((rt) => stateOf(d, rt, now)) }))
    }
  })
