/** Start-up: the parents the last run left live come back, and catch up with what the desk knows now. */
import { Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import { TERMINAL } from "../Domain/Order.ts"
import { onChildUpdate } from "./Inputs.ts"
import { completeIfQuiet, drop, takeAmounts } from "./Parents.ts"
import { place } from "./Placement.ts"
import type { ChildRecord, Driver, Runtime } from "./Runtime.ts"
import { dueAdded, rewatch } from "./Wake.ts"

/** Restores the live parents from the store and settles what changed while the driver was down. */
export const restore = (d: Driver) =>
  Effect.gen(function* () {
    // Restore the parents the last run left live, and catch their children up with what the desk knows now.
    for (const stored of yield* d.store.liveParents) {
      const rt = stored.state as Runtime
      if (d.registry[rt.type] === undefined) continue
      rt.updatedAt ??= stored.updatedAt
      // A state written while children were kept by number (ascending, as a list keeps them now).
      if (!Array.isArray(rt.children))
        rt.children = Object.values(rt.children as unknown as Record<string, ChildRecord>)
      d.parents.set(rt.id, rt)
      rewatch(d, rt)
      if (rt.expiresAt !== null && rt.ending === null) dueAdded(d, rt.expiresAt, rt)
      for (const t of rt.timers) dueAdded(d, t.at, rt)
    }
    // A state written before parents kept running sums (and every child) gets them from its children once.
    for (const rt of d.parents.values()) {
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
    const unsettled = [...d.parents.values()].filter(
      (rt) => rt.ending !== null || rt.children.some((c) => c.status !== "done")
    )
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
                yield* place(d, rt, child)
              } else if (order !== undefined && TERMINAL.has(order.status)) {
                // Fills that came while the driver was down reach the core before the end of the child.
                for (const fill of [...(yield* d.desk.fills({ orderId: order.id }))].reverse()) {
                  yield* onChildUpdate(d, { order: { ...order, status: "open" }, fill })
                }
                yield* onChildUpdate(d, { order, fill: undefined })
              }
            }
            yield* completeIfQuiet(d, rt)
          }),
        { discard: true }
      )
    )
  })
