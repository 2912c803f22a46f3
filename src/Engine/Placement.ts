/** Carrying out what a core decides: child placement with retries, cancels, timers, and the end of a parent. */
import { Effect, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import type { PlaceInput } from "../Trading/Desk.ts"
import * as F from "../Domain/Fixed.ts"
import { TERMINAL } from "../Domain/Order.ts"
import { appended, type Command, insertedAt, kept, NONE } from "./Core.ts"
import { completeIfQuiet, drop, emit, liveChildren, persist, save, stateOf } from "./Parents.ts"
import { andThen, type At, atNow, each, type Rest } from "./Rest.ts"
import type { Order } from "../Domain/Order.ts"
import { type ChildRecord, childOf, type Driver, type Runtime } from "./Runtime.ts"
import { dueAdded } from "./Wake.ts"
import { currentRetry, traced } from "../Telemetry/Telemetry.ts"

const MAX_RETRIES = 5
const RETRY_BASE_MS = 200

const cancelFailed = (id: string, e: ApiError) => Effect.logWarning(`cancel of child ${id} failed: ${e.message}`)

/** Pulls a live child at `now`: in plain code where the desk can cancel at once (`Desk.cancelChildNow`). */
const cancelChild = (d: Driver, child: ChildRecord, now: number): Rest => {
  const id = child.orderId
  if (id === null || child.status === "done") return undefined
  const answered = d.desk.cancelChildNow(id, now)
  if (answered === undefined) {
    return d.desk.cancelChild(id).pipe(
      Effect.asVoid,
      Effect.catchAll((e) => cancelFailed(id, e))
    )
  }
  return answered instanceof ApiError ? cancelFailed(id, answered) : undefined
}

/** Stops the parent: no child is placed from now on, live children are pulled. */
export const end = (
  d: Driver,
  rt: Runtime,
  status: NonNullable<Runtime["ending"]>,
  detail: string,
  now: number
): Rest => {
  if (rt.ending !== null || rt.done) return undefined
  rt.ending = status
  rt.detail = detail
  rt.timers = NONE
  // A child waiting for a retry has nothing at its venue: it is never placed now.
  for (const child of rt.children) if (child.status === "placing" && child.orderId === null) drop(rt, child)
  d.sleeping.delete(rt.id)
  return andThen(save(d, rt, now), now, (t) =>
    andThen(
      each(liveChildren(rt), t, (child, t2) => cancelChild(d, child, t2)),
      t,
      (t2) => completeIfQuiet(d, rt, t2)
    )
  )
}

/** The client id a child's next placement goes under: `<parent>-<child>`, and `-r<k>` after `k` kept refusals. */
export const clientIdOf = (rt: Runtime, child: ChildRecord): string =>
  child.refused === undefined || child.refused === 0
    ? `${rt.id}-${child.spec.child}`
    : `${rt.id}-${child.spec.child}-r${child.refused}`

/** The number of the child a client id of this parent's names, whichever attempt it is. */
export const childNumberOf = (rt: Runtime, clientOrderId: string): number =>
  Number.parseInt(clientOrderId.slice(rt.id.length + 1), 10)

/**
 * Sets the timer that places a refused child again, with exponential backoff (never sooner than the venue's
 * `retry_after`, in seconds, when it gave one), while it has retries left; answers whether it did.
 */
export const retryLater = (d: Driver, rt: Runtime, child: ChildRecord, now: number, retryAfter?: unknown): boolean => {
  if (child.retries >= MAX_RETRIES) return false
  child.retries += 1
  const backoff = RETRY_BASE_MS * 2 ** (child.retries - 1)
  const asked = typeof retryAfter === "number" && retryAfter > 0 ? Math.ceil(retryAfter * 1000) : 0
  const at = now + Math.max(backoff, asked)
  rt.timers = appended(rt.timers, { timer: `retry:${child.spec.child}`, at })
  dueAdded(d, at, rt)
  return true
}

/** A child's request in an `engine.reaction` span when spans are exported, its retry number told to the venue's. */
const reaction =
  (rt: Runtime, child: ChildRecord) =>
  <A, E>(self: Effect.Effect<A, E>): Effect.Effect<A, E> =>
    traced("engine.reaction", () => ({
      "parent.id": rt.id,
      "parent.type": rt.type,
      child: child.spec.child,
      retry: child.retries
    }))(child.retries === 0 ? self : Effect.locally(self, currentRetry, child.retries))

/**
 * Places a child through the desk; a retryable refusal tries again later, any other ends the parent (after
 * `beforeEnd`: the news of the step that asked for the child, so the journal tells them before the end).
 */
export const place = (d: Driver, rt: Runtime, child: ChildRecord, now: number, beforeEnd?: At): Rest => {
  if (rt.ending !== null || rt.done) {
    drop(rt, child)
    return undefined
  }
  const spec = child.spec
  const member = spec.member === undefined ? undefined : rt.members?.[spec.member]
  // The state that files this child, when the step left it to this placement, goes in its write ahead.
  const parentState = d.stateAhead.delete(rt.id) ? stateOf(d, rt, now) : undefined
  const input: PlaceInput = {
    account: member?.account ?? rt.account,
    market_id: member?.marketId ?? rt.marketId,
    side: spec.side,
    type: "limit",
    amount: F.format(spec.amount),
    price: F.format(spec.price),
    // The parent's expires_at pulls its children, so a gtd parent's resting children are gtc.
    time_in_force: spec.timeInForce === "gtd" ? "gtc" : spec.timeInForce,
    post_only: spec.postOnly,
    reduce_only: spec.reduceOnly,
    client_order_id: clientIdOf(rt, child),
    parentId: rt.id,
    book: rt.book,
    trader: rt.trader,
    info: { role: spec.role, child: spec.child },
    parentState
  }
  const actor = `engine (${rt.id})`
  // A venue that answers in process is placed on in plain code; any other through the desk's Effect.
  const answered = d.desk.placeNow(input, actor, now)
  if (answered === undefined) {
    return Effect.flatMap(Effect.either(d.desk.place(input, actor)).pipe(reaction(rt, child)), (result) =>
      atNow((later) =>
        placed(d, rt, child, result._tag === "Right" ? result.right : result.left, now, later, beforeEnd)
      )
    )
  }
  return placed(d, rt, child, answered, now, now, beforeEnd)
}

/** A child's placement answered (at `later`; asked at `now`): the child files its order, or is tried again or ends. */
const placed = (
  d: Driver,
  rt: Runtime,
  child: ChildRecord,
  answer: { readonly order: Order; readonly created: boolean } | ApiError,
  now: number,
  later: number,
  beforeEnd: At | undefined
): Rest => {
  const spec = child.spec
  if (!(answer instanceof ApiError)) {
    const order = answer.order
    const member = spec.member === undefined ? undefined : rt.members?.[spec.member]
    child.orderId = order.id
    child.status = TERMINAL.has(order.status) ? child.status : "live"
    const written = persist(d, rt, later, [
      {
        kind: "managed.child",
        payload: {
          child: spec.child,
          ...(member === undefined ? {} : { market_id: member.marketId }),
          order_id: order.id,
          role: spec.role,
          side: spec.side,
          price: F.format(spec.price),
          amount: F.format(spec.amount)
        }
      }
    ])
    // An order the desk had ended under this client id before a restart, unheard: its fills and its end reach the
    // parent as the desk's updates do.
    if (answer.created || !TERMINAL.has(order.status)) return written
    const heard = Effect.flatMap(d.desk.fills({ orderId: order.id }), (fills) =>
      Effect.sync(() =>
        d.desk.childUpdates.offerAll([
          ...[...fills].reverse().map((fill) => ({ order: { ...order, status: "open" as const }, fill })),
          { order, fill: undefined }
        ])
      )
    )
    return andThen(written, later, () => Effect.asVoid(heard))
  }
  if (answer.details.retryable === true && retryLater(d, rt, child, now, answer.details["retry_after"])) {
    return andThen(persist(d, rt, later), later, () => {
      Queue.unsafeOffer(d.wake, undefined)
      return undefined
    })
  }
  drop(rt, child)
  return andThen(beforeEnd?.(later), later, (t) =>
    end(d, rt, "rejected", `child ${spec.child} was refused: ${answer.message}`, t)
  )
}

/**
 * Files the children a step asks for as `placing` before the state is written, so that one write holds them: a
 * restart places again any that had not reached the venue (their client ids make that safe), and no child a core
 * counts on is missing from its parent. Nothing after a `Finish` is filed.
 */
export const admit = (rt: Runtime, commands: ReadonlyArray<Command>) => {
  if (rt.ending !== null || rt.done) return
  for (const command of commands) {
    if (command._tag === "Finish") return
    if (command._tag !== "Place") continue
    const n = command.spec.child
    if (childOf(rt, n) === undefined) {
      // Kept in child order: the first with a higher number is where it goes.
      let at = 0
      while (at < rt.children.length && rt.children[at]!.spec.child < n) at++
      // `refused` and `seen` from the start (unset until used): a field added later is kept outside the object.
      const child: ChildRecord = {
        spec: command.spec,
        orderId: null,
        status: "placing",
        retries: 0,
        refused: undefined,
        seen: undefined
      }
      rt.children = insertedAt(rt.children, at, child)
    }
  }
}

/** What of a parent's own news a step has not written yet: whether it triggered, and its events. */
interface News {
  triggered: boolean
  readonly events: Array<{ kind: string; payload: Readonly<Record<string, unknown>> }>
}

/** Writes a step's news: the record and the first event in one write, then the other events. */
const writeNews = (d: Driver, rt: Runtime, news: News, now: number): Rest => {
  let saved: Rest = undefined
  if (news.triggered) {
    news.triggered = false
    const first = news.events.shift()
    saved = save(
      d,
      rt,
      now,
      "order.updated",
      undefined,
      first === undefined ? undefined : () => ({ kind: first.kind, payload: { ...first.payload } })
    )
  }
  return andThen(saved, now, (t) =>
    each(news.events.splice(0), t, (event, t2) => emit(d, rt, t2, event.kind, event.payload))
  )
}

/**
 * Carries out a step's commands in order, except the parent's own news: a `Trigger` (the record's new status) and the
 * `Emit`s are written after the step's placements and cancels, so a child that fires goes out after one write (the
 * state that files it) instead of three. They are written before a `Finish`, and at the latest when the step ends.
 */
export const execute = (d: Driver, rt: Runtime, commands: ReadonlyArray<Command>, now: number): Rest => {
  const pending: News = { triggered: false, events: [] }
  const news: At = (t) => writeNews(d, rt, pending, t)
  return andThen(
    each(commands, now, (command, t) => carryOut(d, rt, command, pending, news, t)),
    now,
    (t) => (pending.triggered || pending.events.length > 0 ? news(t) : undefined)
  )
}

/** One of a step's commands carried out (`news` writes what of the step's news is pending). */
const carryOut = (d: Driver, rt: Runtime, command: Command, pending: News, news: At, now: number): Rest => {
  switch (command._tag) {
    case "Trigger":
      if (!rt.triggered && rt.ending === null) {
        rt.triggered = true
        pending.triggered = true
      }
      return undefined
    case "Place": {
      // `admit` filed the child with the state written before the commands went out.
      const child = childOf(rt, command.spec.child)
      if (child === undefined || child.spec !== command.spec) return undefined
      if (rt.ending !== null || rt.done) {
        drop(rt, child)
        return undefined
      }
      return place(d, rt, child, now, news)
    }
    case "Cancel": {
      const child = childOf(rt, command.child)
      // A cancel after a placement that did not happen: the state is written before it goes out.
      const written = d.stateAhead.has(rt.id) ? persist(d, rt, now) : undefined
      return child === undefined ? written : andThen(written, now, (t) => cancelChild(d, child, t))
    }
    case "SetTimer":
      if (rt.ending === null) {
        rt.timers = appended(
          kept(rt.timers, (t) => t.timer !== command.timer),
          { timer: command.timer, at: command.at }
        )
        dueAdded(d, command.at, rt)
        Queue.unsafeOffer(d.wake, undefined)
      }
      return undefined
    case "Emit":
      pending.events.push({ kind: command.kind, payload: command.payload })
      return undefined
    case "Finish":
      return andThen(news(now), now, (t) => end(d, rt, command.status, command.detail, t))
  }
}
