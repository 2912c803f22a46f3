/** Feeding a parent's core its inputs: market views, child updates from the desk, expiries and timers. */
import { Clock, Effect, Queue } from "effect"
import * as F from "../Domain/Fixed.ts"
import { TERMINAL } from "../Domain/Order.ts"
import type { ChildUpdate } from "../Trading/Desk.ts"
import { type Command, type Input, kept, type MarketView, wakes } from "./Core.ts"
import { completeIfQuiet, drop, endsNow, persist, save, takeAmounts } from "./Parents.ts"
import { admit, childNumberOf, clientIdOf, end, execute, place, retryLater } from "./Placement.ts"
import { childOf, type Driver, kindOf, type Runtime } from "./Runtime.ts"
import { dueById, quotesOf, rewatch, viewOf, wakeFor } from "./Wake.ts"
import * as Id from "../Domain/Ids.ts"

/**
 * Feeds one input to a parent's core and carries out its commands; the state is written before they go out. With
 * `savedAfter` the caller writes the parent once the input is taken in, so a step that sends nothing (a fill of a
 * resting child, its acceptance) writes nothing of its own: one write per input.
 */
export const feed: (d: Driver, rt: Runtime, input: Input, savedAfter?: boolean) => Effect.Effect<void> =
  Effect.fnUntraced(function* (d, rt, input, savedAfter = false) {
    if (rt.done) return
    const lazy = input._tag === "Market" || rt.ending !== null ? undefined : d.lazyBands.get(rt.id)
    if (lazy !== undefined) {
      // The market as it is now, first, if it left a lazy band since the parent last saw it.
      const view = yield* viewOf(d, rt.marketId)
      if (view !== undefined && lazy.some((b) => wakes(b, view))) {
        yield* feed(d, rt, { _tag: "Market", ts: input.ts, view }, savedAfter)
        if (rt.done) return
      }
    }
    const kind = kindOf(d, rt)
    const step = kind.core.step(rt.spec, rt.params, rt.state, input)
    rt.state = step.state
    admit(rt, step.commands)
    rewatch(d, rt)
    if (!savedAfter || step.commands.some((c) => c._tag !== "SetTimer")) {
      // A step that first reaches out with a placement writes its state with that child's write ahead.
      if (firstReachIsPlace(step.commands) && rt.ending === null) d.stateAhead.add(rt.id)
      else yield* persist(d, rt)
    }
    if (step.commands.length > 0) yield* execute(d, rt, step.commands)
    if (d.stateAhead.has(rt.id)) yield* persist(d, rt)
    if (endsNow(rt)) yield* completeIfQuiet(d, rt)
  })

/** Whether the first of a step's commands that reaches the desk or a venue is a placement. */
const firstReachIsPlace = (commands: ReadonlyArray<Command>): boolean => {
  for (const c of commands) {
    if (c._tag === "Trigger" || c._tag === "Emit" || c._tag === "SetTimer") continue
    return c._tag === "Place"
  }
  return false
}

/** A child's order changed at the desk: the parent's sums take it in, and its core hears of fills and ends. */
export const onChildUpdate = Effect.fnUntraced(function* (d: Driver, update: ChildUpdate) {
  const parentId = update.order.parentId
  const rt = parentId === null ? undefined : d.parents.get(parentId)
  if (rt === undefined) return
  const n = childNumberOf(rt, update.order.clientOrderId)
  const found = childOf(rt, n)
  // An order of an attempt the child has moved past (refused, and placed again under a new client id) is not its own.
  const child = found !== undefined && update.order.clientOrderId === clientIdOf(rt, found) ? found : undefined
  if (child === undefined) {
    // A fill after its child finished (a venue may report one late) still counts in the parent's sums.
    const fill = update.fill
    if (fill === undefined || rt.done) return
    const role = String(update.order.info["role"])
    const before = {
      filled: F.sub(update.order.filled, fill.amount),
      cost: F.sub(update.order.cost, F.mul(fill.price, fill.amount)),
      fee: F.sub(update.order.fee, fill.fee)
    }
    takeAmounts(d, rt, role, before, update.order)
    yield* save(d, rt)
    return
  }
  if (child.orderId === null) child.orderId = update.order.id
  child.seen = takeAmounts(d, rt, child.spec.role, child.seen, update.order)
  const ts = update.order.updatedAt
  // Each feed below leaves the write to the save at the end: the parent's record and state once per update.
  if (update.fill !== undefined) {
    yield* feed(
      d,
      rt,
      {
        _tag: "ChildFill",
        ts: update.fill.ts,
        child: n,
        fillId: update.fill.id,
        price: update.fill.price,
        amount: update.fill.amount,
        fee: update.fill.fee
      },
      true
    )
  }
  const retryable = update.order.info["retryable"]
  if (update.order.status === "rejected" && typeof retryable === "boolean" && rt.ending === null) {
    // The venue clearly refused a child answered as written ahead: as a refusal answered at once, it is placed again
    // later (under a new client id: the refused order is kept under this one) or ends the parent.
    child.orderId = null
    child.status = "placing"
    child.refused = (child.refused ?? 0) + 1
    const now = yield* Clock.currentTimeMillis
    if (!retryable || !retryLater(d, rt, child, now, update.order.info["retry_after"])) {
      drop(rt, child)
      return yield* end(d, rt, "rejected", `child ${n} was refused: ${String(update.order.info["detail"])}`)
    }
    Queue.unsafeOffer(d.wake, undefined)
  } else if (TERMINAL.has(update.order.status) && child.status !== "done") {
    drop(rt, child)
    const detail = update.order.info["detail"]
    if (rt.ending === null) {
      yield* feed(
        d,
        rt,
        {
          _tag: "ChildDone",
          ts,
          child: n,
          status: update.order.status as "closed" | "canceled" | "expired" | "rejected",
          filled: update.order.filled,
          reason: typeof detail === "string" ? detail : null
        },
        true
      )
    }
  } else if (update.order.status === "open" && child.status === "placing") {
    child.status = "live"
    yield* feed(d, rt, { _tag: "ChildAccepted", ts, child: n }, true)
  }
  yield* save(d, rt)
  yield* completeIfQuiet(d, rt)
})

/** Feeds a view to the parents it woke, in id order (a plain loop: most views wake one parent). */
export const feedView = Effect.fnUntraced(function* (d: Driver, woken: ReadonlyArray<string>, view: MarketView) {
  const ts = yield* Clock.currentTimeMillis
  for (const id of woken) {
    const rt = d.parents.get(id)
    if (rt !== undefined && rt.ending === null) yield* feed(d, rt, { _tag: "Market", ts, view })
  }
})

/** A venue's book changed: the view is read and fed to the parents it wakes. */
export const onMarket = Effect.fnUntraced(function* (d: Driver, marketId: Id.MarketId) {
  if (!d.sleeping.watches(marketId)) return
  const view = yield* viewOf(d, marketId)
  if (view === undefined) return
  const woken = wakeFor(d, marketId, view)
  if (woken !== null) yield* feedView(d, woken, view)
})

/** Every parent whose expires_at has come ends now, before anything else of this moment. */
export const expireDue = (d: Driver, now: number) =>
  Effect.forEach(
    dueById(d, now, (rt) => rt.expiresAt !== null && rt.expiresAt <= now && rt.ending === null),
    (rt) => end(d, rt, "expired", "expires_at was reached"),
    { discard: true }
  )

/** Timers due by `now`, each parent's in time order; they come last among the inputs of one moment. */
export const timersDue = (d: Driver, now: number) =>
  Effect.forEach(
    dueById(d, now, (rt) => rt.timers.some((t) => t.at <= now)),
    (rt) => parentTimersDue(d, rt, now),
    { discard: true }
  )

/** One parent's timers due by `now`, in time order. */
const parentTimersDue = Effect.fnUntraced(function* (d: Driver, rt: Runtime, now: number) {
  const due = rt.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at)
  if (due.length === 0) return
  rt.timers = kept(rt.timers, (t) => t.at > now)
  for (const t of due) {
    if (rt.done) break
    if (t.timer.startsWith("retry:")) {
      const child = childOf(rt, Number(t.timer.slice(6)))
      if (child !== undefined && child.status === "placing") yield* place(d, rt, child)
    } else if (t.timer === "round" && rt.members !== undefined) {
      // A parent over several markets looks at every member's books when its round comes.
      yield* feedQuotes(d, rt, t.at)
    } else {
      yield* feed(d, rt, { _tag: "Timer", ts: t.at, timer: t.timer })
    }
  }
  yield* persist(d, rt)
})

/** Hands a parent over several markets the books of its members as they are now. */
export const feedQuotes = Effect.fnUntraced(function* (d: Driver, rt: Runtime, ts: number) {
  if (rt.done || rt.ending !== null) return
  const quotes = yield* quotesOf(d, rt)
  yield* feed(d, rt, { _tag: "Quotes", ts, quotes })
})
