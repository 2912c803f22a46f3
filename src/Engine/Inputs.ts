/** Feeding a parent's core its inputs: market views, child updates from the desk, expiries and timers. */
import { Effect, Queue } from "effect"
import * as F from "../Domain/Fixed.ts"
import { TERMINAL } from "../Domain/Order.ts"
import type { ChildUpdate } from "../Trading/Desk.ts"
import { type Command, type Input, kept, type MarketView, wakes } from "./Core.ts"
import { completeIfQuiet, drop, endsNow, persist, save, takeAmounts } from "./Parents.ts"
import { admit, childNumberOf, clientIdOf, end, execute, place, retryLater } from "./Placement.ts"
import { type ChildRecord, childOf, type Driver, kindOf, type Runtime } from "./Runtime.ts"
import { andThen, atNow, each, type Rest } from "./Rest.ts"
import { dueById, quotesOf, rewatch, viewNow, viewOf, wakeFor } from "./Wake.ts"
import * as Id from "../Domain/Ids.ts"

/**
 * Feeds one input to a parent's core at `now` and carries out its commands; the state is written before they go
 * out. With `savedAfter` the caller writes the parent once the input is taken in, so a step that sends nothing (a
 * fill of a resting child, its acceptance) writes nothing of its own: one write per input.
 */
export const feed = (d: Driver, rt: Runtime, input: Input, now: number, savedAfter = false): Rest => {
  if (rt.done) return undefined
  const lazy = input._tag === "Market" || rt.ending !== null ? undefined : d.lazyBands.get(rt.id)
  if (lazy === undefined) return stepped(d, rt, input, now, savedAfter)
  // The market as it is now, first, if it left a lazy band since the parent last saw it.
  const withView = (view: MarketView | undefined, t: number): Rest => {
    if (view === undefined || !lazy.some((b) => wakes(b, view))) return stepped(d, rt, input, t, savedAfter)
    return andThen(feed(d, rt, { _tag: "Market", ts: input.ts, view }, t, savedAfter), t, (t2) =>
      rt.done ? undefined : stepped(d, rt, input, t2, savedAfter)
    )
  }
  const view = viewNow(d, rt.marketId)
  return view === null
    ? Effect.flatMap(viewOf(d, rt.marketId), (read) => atNow((t) => withView(read, t)))
    : withView(view, now)
}

/** The core's step on an input, and its commands carried out. */
const stepped = (d: Driver, rt: Runtime, input: Input, now: number, savedAfter: boolean): Rest => {
  const kind = kindOf(d, rt)
  const step = kind.core.step(rt.spec, rt.params, rt.state, input)
  rt.state = step.state
  admit(rt, step.commands)
  rewatch(d, rt)
  let written: Rest = undefined
  if (!savedAfter || step.commands.some((c) => c._tag !== "SetTimer")) {
    // A step that first reaches out with a placement writes its state with that child's write ahead.
    if (firstReachIsPlace(step.commands) && rt.ending === null) d.stateAhead.add(rt.id)
    else written = persist(d, rt, now)
  }
  return andThen(written, now, (t) =>
    andThen(step.commands.length > 0 ? execute(d, rt, step.commands, t) : undefined, t, (t2) => afterStep(d, rt, t2))
  )
}

/** What a step leaves: the state its placement did not write, and the parent's end once it has nothing live. */
const afterStep = (d: Driver, rt: Runtime, now: number): Rest =>
  andThen(d.stateAhead.has(rt.id) ? persist(d, rt, now) : undefined, now, (t) =>
    endsNow(rt) ? completeIfQuiet(d, rt, t) : undefined
  )

/** Whether the first of a step's commands that reaches the desk or a venue is a placement. */
const firstReachIsPlace = (commands: ReadonlyArray<Command>): boolean => {
  for (const c of commands) {
    if (c._tag === "Trigger" || c._tag === "Emit" || c._tag === "SetTimer") continue
    return c._tag === "Place"
  }
  return false
}

/**
 * The changes of children the desk stored, fed to their parents in the order they happened; `again`: then those the
 * feeding led to, until none is left.
 */
export const childrenNow = (d: Driver, now: number, again = true): Rest => {
  const updates = d.desk.childUpdates.takeAll()
  if (updates.length === 0) return undefined
  const fed = each(updates, now, (update, t) => onChildUpdate(d, update, t))
  return again ? andThen(fed, now, (t) => childrenNow(d, t)) : fed
}

/** A child's order changed at the desk: the parent's sums take it in, and its core hears of fills and ends. */
export const onChildUpdate = (d: Driver, update: ChildUpdate, now: number): Rest => {
  const parentId = update.order.parentId
  const rt = parentId === null ? undefined : d.parents.get(parentId)
  if (rt === undefined) return undefined
  const n = childNumberOf(rt, update.order.clientOrderId)
  const found = childOf(rt, n)
  // An order of an attempt the child has moved past (refused, and placed again under a new client id) is not its own.
  const child = found !== undefined && update.order.clientOrderId === clientIdOf(rt, found) ? found : undefined
  if (child === undefined) {
    // A fill after its child finished (a venue may report one late) still counts in the parent's sums.
    const fill = update.fill
    if (fill === undefined || rt.done) return undefined
    const role = String(update.order.info["role"])
    const before = {
      filled: F.sub(update.order.filled, fill.amount),
      cost: F.sub(update.order.cost, F.mul(fill.price, fill.amount)),
      fee: F.sub(update.order.fee, fill.fee)
    }
    takeAmounts(d, rt, role, before, update.order)
    return save(d, rt, now)
  }
  if (child.orderId === null) child.orderId = update.order.id
  child.seen = takeAmounts(d, rt, child.spec.role, child.seen, update.order)
  // Each feed below leaves the write to the save at the end: the parent's record and state once per update.
  const fill = update.fill
  const filled =
    fill === undefined
      ? undefined
      : feed(
          d,
          rt,
          {
            _tag: "ChildFill",
            ts: fill.ts,
            child: n,
            fillId: fill.id,
            price: fill.price,
            amount: fill.amount,
            fee: fill.fee
          },
          now,
          true
        )
  return andThen(filled, now, (t) => childChanged(d, rt, child, n, update, t))
}

/** What a child's update tells its parent besides a fill: a refusal, its end or its acceptance; then the save. */
const childChanged = (
  d: Driver,
  rt: Runtime,
  child: ChildRecord,
  n: number,
  update: ChildUpdate,
  now: number
): Rest => {
  const ts = update.order.updatedAt
  const retryable = update.order.info["retryable"]
  let fed: Rest = undefined
  if (update.order.status === "rejected" && typeof retryable === "boolean" && rt.ending === null) {
    // The venue clearly refused a child answered as written ahead: as a refusal answered at once, it is placed again
    // later (under a new client id: the refused order is kept under this one) or ends the parent.
    child.orderId = null
    child.status = "placing"
    child.refused = (child.refused ?? 0) + 1
    if (!retryable || !retryLater(d, rt, child, now, update.order.info["retry_after"])) {
      drop(rt, child)
      return end(d, rt, "rejected", `child ${n} was refused: ${String(update.order.info["detail"])}`, now)
    }
    Queue.unsafeOffer(d.wake, undefined)
  } else if (TERMINAL.has(update.order.status) && child.status !== "done") {
    drop(rt, child)
    const detail = update.order.info["detail"]
    if (rt.ending === null) {
      const status = update.order.status as "closed" | "canceled" | "expired" | "rejected"
      const reason = typeof detail === "string" ? detail : null
      fed = feed(d, rt, { _tag: "ChildDone", ts, child: n, status, filled: update.order.filled, reason }, now, true)
    }
  } else if (update.order.status === "open" && child.status === "placing") {
    child.status = "live"
    fed = feed(d, rt, { _tag: "ChildAccepted", ts, child: n }, now, true)
  }
  return andThen(fed, now, (t) => andThen(save(d, rt, t), t, (t2) => completeIfQuiet(d, rt, t2)))
}

/** Feeds a view to the parents it woke, in id order (a plain loop: most views wake one parent), at `now`. */
export const feedView = (d: Driver, woken: ReadonlyArray<string>, view: MarketView, now: number): Rest => {
  const input: Input = { _tag: "Market", ts: now, view }
  return each(woken, now, (id, t) => {
    const rt = d.parents.get(id)
    return rt !== undefined && rt.ending === null ? feed(d, rt, input, t) : undefined
  })
}

/** A venue's book changed: the view is read and fed to the parents it wakes. */
export const onMarket = Effect.fnUntraced(function* (d: Driver, marketId: Id.MarketId) {
  if (!d.sleeping.watches(marketId)) return
  const view = yield* viewOf(d, marketId)
  if (view === undefined) return
  const woken = wakeFor(d, marketId, view)
  if (woken !== null) yield* atNow((now) => feedView(d, woken, view, now))
})

/** Every parent whose expires_at has come ends now, before anything else of this moment. */
export const expireDue = (d: Driver, now: number) =>
  atNow((t) =>
    each(
      dueById(d, now, (rt) => rt.expiresAt !== null && rt.expiresAt <= now && rt.ending === null),
      t,
      (rt, t2) => end(d, rt, "expired", "expires_at was reached", t2)
    )
  )

/** Timers due by `now`, each parent's in time order; they come last among the inputs of one moment. */
export const timersDue = (d: Driver, now: number) =>
  atNow((t) =>
    each(
      dueById(d, now, (rt) => rt.timers.some((x) => x.at <= now)),
      t,
      (rt, t2) => parentTimersDue(d, rt, now, t2)
    )
  )

/** One parent's timers due by `due`, in time order (run at `now`). */
const parentTimersDue = (d: Driver, rt: Runtime, due: number, now: number): Rest => {
  const timers = rt.timers.filter((t) => t.at <= due).sort((a, b) => a.at - b.at)
  if (timers.length === 0) return undefined
  rt.timers = kept(rt.timers, (t) => t.at > due)
  const fired = each(timers, now, (t, at) => {
    if (rt.done) return undefined
    if (t.timer.startsWith("retry:")) {
      const child = childOf(rt, Number(t.timer.slice(6)))
      return child !== undefined && child.status === "placing" ? place(d, rt, child, at) : undefined
    }
    // A parent over several markets looks at every member's books when its round comes.
    if (t.timer === "round" && rt.members !== undefined) return feedQuotes(d, rt, t.at)
    return feed(d, rt, { _tag: "Timer", ts: t.at, timer: t.timer }, at)
  })
  return andThen(fired, now, (t) => persist(d, rt, t))
}

/** Hands a parent over several markets the books of its members as they are now. */
export const feedQuotes = (d: Driver, rt: Runtime, ts: number): Effect.Effect<void> =>
  Effect.suspend(() =>
    rt.done || rt.ending !== null
      ? Effect.void
      : Effect.flatMap(quotesOf(d, rt), (quotes) => atNow((now) => feed(d, rt, { _tag: "Quotes", ts, quotes }, now)))
  )
