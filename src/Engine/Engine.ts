/** The driver: holds engine parents, feeds their decision cores, and carries out what the cores decide. */
import { Clock, Context, Effect, Layer, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { accountRef, type ComplexType, NO_TAGS, type Order, requestDigest, TERMINAL } from "../Domain/Order.ts"
import { OrderStore } from "../Services/OrderStore.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { type ChildUpdate, Desk } from "../Trading/Desk.ts"
import { Journal } from "../Trading/Journal.ts"
import { type Band, type ChildSpec, type Command, type Input, type MarketView, type ParentSpec, wakes } from "./Core.ts"
import { checkParent, type CreateInput, type Registry } from "./Validation.ts"
import { DueHeap, WakeIndex } from "./WakeIndex.ts"

export type { CreateInput, OrderKind, Registry } from "./Validation.ts"

interface ChildRecord {
  readonly spec: ChildSpec
  orderId: string | null
  status: "placing" | "live" | "done"
  retries: number
  /** What of the child's filled, cost and fee the parent's sums hold already. */
  seen?: { filled: F.Fixed; cost: F.Fixed; fee: F.Fixed }
}

/**
 * Everything about a parent the engine keeps; plain JSON, written whole on every change. Its size does not grow
 * with the parent's history: `children` holds only the live ones, and the amounts are kept as running sums.
 */
interface Runtime {
  readonly id: string
  readonly type: ComplexType
  readonly account: string
  readonly venue: string
  readonly marketId: string
  readonly spec: ParentSpec
  readonly params: unknown
  readonly wireParams: Readonly<Record<string, unknown>>
  state: unknown
  /** Children not yet finished; a finished child leaves (its order stays in the store under the parent's id). */
  children: Record<string, ChildRecord>
  /** Sums over the children whose fills count (all of them for `fee`), and the last fill that counted. */
  filled: F.Fixed
  cost: F.Fixed
  fee: F.Fixed
  lastFill: { readonly price: F.Fixed; readonly amount: F.Fixed } | null
  timers: Array<{ readonly timer: string; readonly at: number }>
  triggered: boolean
  ending: null | "closed" | "canceled" | "expired" | "rejected"
  detail: string
  done: boolean
  readonly expiresAt: number | null
  readonly clientOrderId: string
  readonly book: string
  readonly trader: string
  readonly tags: Readonly<Record<string, unknown>>
  readonly notes: string
}

const MAX_RETRIES = 5
const RETRY_BASE_MS = 200

const seedOf = (id: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  return h | 0
}

type EngineService = {
  readonly create: (
    input: CreateInput,
    actor: string
  ) => Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError>
  readonly cancel: (id: string) => Effect.Effect<Order, ApiError>
  /**
   * Market data from a caller that has the view already (the simulator, benchmarks): plain TypeScript until a parent
   * wakes. Null when the view wakes nobody; else the work of feeding the parents it woke.
   */
  readonly marketView: (marketId: string, view: MarketView) => Effect.Effect<void> | null
  /** Market views the driver looked at and the parents they woke, since start (for benchmarks and status). */
  readonly stats: () => {
    readonly views: number
    readonly woken: number
    readonly wokenByType: Readonly<Partial<Record<ComplexType, number>>>
  }
  /** Live parents, for status and tests. */
  readonly liveCount: Effect.Effect<number>
  /** Parents held in memory: the live ones only (a finished one is read from the store). */
  readonly heldCount: Effect.Effect<number>
  /** The next expiry or timer of any live parent (Infinity when none). */
  readonly nextDue: () => number
  /** Driven mode: ends the parents whose expiry has come (the first inputs of a moment). */
  readonly expireDue: (now: number) => Effect.Effect<void>
  /** Driven mode: fires the timers due (the last inputs of a moment). */
  readonly timersDue: (now: number) => Effect.Effect<void>
}

export class Engine extends Context.Tag("crossbook/Engine")<Engine, EngineService>() {
  /**
   * `seed` is mixed into every parent's own random source (the same parent id and seed draw the same numbers).
   * `driven`: no fiber watches the clock or the venues' market data; the simulator calls `expireDue`, `marketView`
   * and `timersDue` itself, so the inputs of one moment follow the documented order.
   */
  static layer(registry: Registry, options: { readonly seed?: number; readonly driven?: boolean } = {}) {
    return Layer.scoped(Engine, makeEngine(registry, options.seed ?? 0, options.driven ?? false))
  }
}

const makeEngine = (registry: Registry, seed: number, driven: boolean) =>
  Effect.gen(function* () {
    const desk = yield* Desk
    const store = yield* OrderStore
    const journal = yield* Journal
    const gateway = yield* VenueGateway
    const lock = yield* Effect.makeSemaphore(1)
    const serialized = lock.withPermits(1)
    const wake = yield* Queue.sliding<void>(1)

    const parents = new Map<string, Runtime>()
    /**
     * Where each live parent sleeps: market data reaches only the parents whose watched bands a view leaves
     * (`WakeIndex`), so an update costs O(log n + woken), not O(parents of the market).
     */
    const sleeping = new WakeIndex()
    const stats = { views: 0, woken: 0 }
    const wokenByType: Partial<Record<ComplexType, number>> = {}
    /** The parents a view wakes, counted. */
    const wakeFor = (marketId: string, view: MarketView) => {
      stats.views += 1
      const woken = sleeping.woken(marketId, view)
      if (woken !== null) {
        stats.woken += woken.length
        for (const id of woken) {
          const type = parents.get(id)?.type
          if (type !== undefined) wokenByType[type] = (wokenByType[type] ?? 0) + 1
        }
      }
      return woken
    }

    const kindOf = (rt: Runtime) => registry[rt.type]

    /**
     * Every expiry and timer of a live parent, earliest first, so the next one is known without a scan: a min-heap
     * whose entries are checked against the parent when they reach the top (a timer that was reset, fired or dropped
     * with its parent is skipped then).
     */
    const due = new DueHeap()
    const dueAdded = (at: number, rt: Runtime) => due.push(at, rt.id)
    const stillDue = (at: number, id: string) => {
      const rt = parents.get(id)
      if (rt === undefined || rt.done) return false
      return (rt.expiresAt === at && rt.ending === null) || rt.timers.some((t) => t.at === at)
    }

    /** Lazy bands per parent: views there reach it only just before its next other input. */
    const lazyBands = new Map<string, ReadonlyArray<Band>>()
    /** Files the parent under what its core watches now; a parent that is ending or done watches nothing. */
    const rewatch = (rt: Runtime) => {
      lazyBands.delete(rt.id)
      if (rt.done || rt.ending !== null) return sleeping.delete(rt.id)
      const watch = kindOf(rt).core.watch?.(rt.spec, rt.params, rt.state) ?? "all"
      sleeping.set(rt.id, rt.marketId, watch)
      if (watch !== "all" && watch.some((b) => b.lazy === true)) {
        lazyBands.set(
          rt.id,
          watch.filter((b) => b.lazy === true)
        )
      }
    }

    const stateOf = (rt: Runtime, now: number) => ({ id: rt.id, live: !rt.done, state: rt, updatedAt: now })

    /** Writes the parent's state, with the driver's entries about it in the same write. */
    const persist = (rt: Runtime, entries: ReadonlyArray<{ kind: string; payload: Record<string, unknown> }> = []) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        journal.commit({
          parents: [stateOf(rt, now)],
          entries: entries.map((e) => ({
            ts: now,
            kind: e.kind,
            key: rt.id,
            payload: { parent_id: rt.id, ...e.payload }
          }))
        })
      )

    const viewOf = (marketId: string) =>
      Effect.gen(function* () {
        const colon = marketId.indexOf(":")
        const venue = gateway.venue(marketId.slice(0, colon))
        if (venue === undefined) return undefined
        const nativeId = marketId.slice(colon + 1)
        const book = yield* venue.book(nativeId).pipe(Effect.orElseSucceed(() => undefined))
        if (book === undefined) return undefined
        const trades = yield* venue.trades(nativeId).pipe(Effect.orElseSucceed(() => []))
        const view: MarketView = {
          bestBid: book.bids[0]?.price ?? null,
          bestAsk: book.asks[0]?.price ?? null,
          last: trades[0]?.price ?? null
        }
        return view
      })

    /**
     * The parent's record as the API shows it, from its running sums. `info.children` is not kept here: it grows with
     * the parent's history, so the desk reads it from the store's parent index when a client reads the parent.
     */
    const record = (rt: Runtime, status: Order["status"], now: number): Order => {
      return {
        id: rt.id,
        clientOrderId: rt.clientOrderId,
        venue: rt.venue,
        account: accountRef(rt.account),
        marketId: rt.marketId,
        side: rt.spec.side,
        type: rt.type,
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
        updatedAt: now,
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
          ...kindOf(rt).core.info(rt.state)
        },
        venueOrderId: null
      }
    }

    const statusOf = (rt: Runtime, filledAll: boolean): Order["status"] => {
      // A bracket's filled is its entry: holding the whole entry with exits still to go is not a finished bracket.
      if (rt.done) {
        return rt.ending === "closed" || (filledAll && rt.type !== "bracket") ? "closed" : (rt.ending ?? "canceled")
      }
      if (rt.ending !== null) return "pending_cancel"
      return rt.triggered ? "triggered" : "waiting"
    }

    /**
     * Writes the parent's record, its state, the record's event and the driver's `after` entries (made from the
     * record) in one write.
     */
    const save = (
      rt: Runtime,
      kind = "order.updated",
      digest?: string,
      after?: (order: Order) => { kind: string; payload: Record<string, unknown> }
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        // The sums take in what the desk already holds of each live child, even before its update reaches us.
        for (const child of Object.values(rt.children)) {
          if (child.orderId === null) continue
          const order = yield* desk.get(child.orderId)
          if (order !== undefined) child.seen = takeAmounts(rt, child.spec.role, child.seen, order)
        }
        const draft = record(rt, "waiting", now)
        const status = statusOf(rt, draft.filled >= rt.spec.amount)
        const order: Order = { ...draft, status, info: { ...draft.info, state: status } }
        const extra = after?.(order)
        yield* desk.putParent(order, kind, {
          digest,
          state: stateOf(rt, now),
          after:
            extra === undefined
              ? []
              : [{ ts: now, kind: extra.kind, key: rt.id, payload: { parent_id: rt.id, ...extra.payload } }]
        })
        return order
      })

    const emit = (rt: Runtime, kind: string, payload: Readonly<Record<string, unknown>>) =>
      Effect.flatMap(Clock.currentTimeMillis, (ts) =>
        journal.append([{ ts, kind, key: rt.id, payload: { parent_id: rt.id, ...payload } }])
      )

    const liveChildren = (rt: Runtime) => Object.values(rt.children).filter((c) => c.status !== "done")

    /** A finished child leaves the parent's state. */
    const drop = (rt: Runtime, child: ChildRecord) => {
      child.status = "done"
      if (rt.children[String(child.spec.child)] === child) delete rt.children[String(child.spec.child)]
    }

    /** Adds what a child's order gained since the parent last saw it to the parent's sums (a replay adds nothing). */
    const takeAmounts = (rt: Runtime, role: string, seen: ChildRecord["seen"], order: Order) => {
      const before = seen ?? { filled: F.ZERO, cost: F.ZERO, fee: F.ZERO }
      const filled = F.sub(order.filled, before.filled)
      rt.fee = F.add(rt.fee, F.sub(order.fee, before.fee))
      const counts = kindOf(rt).counts
      if (counts === undefined || counts(role, rt.params)) {
        rt.filled = F.add(rt.filled, filled)
        rt.cost = F.add(rt.cost, F.sub(order.cost, before.cost))
        if (filled > 0 && order.lastFillPrice !== null && order.lastFillAmount !== null) {
          rt.lastFill = { price: order.lastFillPrice, amount: order.lastFillAmount }
        }
      }
      return { filled: order.filled, cost: order.cost, fee: order.fee }
    }

    /** The parent ends once no child is live: its final status, the event, and it leaves the index. */
    const completeIfQuiet = (rt: Runtime) =>
      Effect.gen(function* () {
        if (rt.done || rt.ending === null || liveChildren(rt).length > 0) return
        rt.done = true
        sleeping.delete(rt.id)
        yield* save(
          rt,
          rt.ending === "canceled" || rt.ending === "expired" ? "order.canceled" : "order.updated",
          undefined,
          (order) => ({
            kind: "managed.done",
            payload: { status: order.status, detail: rt.detail, filled: F.format(order.filled) }
          })
        )
        // A finished parent leaves memory; the store answers for it from now on.
        parents.delete(rt.id)
        lazyBands.delete(rt.id)
      })

    const cancelChild = (child: ChildRecord) =>
      child.orderId === null || child.status === "done"
        ? Effect.void
        : desk
            .cancel(child.orderId)
            .pipe(Effect.catchAll((e) => Effect.logWarning(`cancel of child ${child.orderId} failed: ${e.message}`)))

    /** Stops the parent: no child is placed from now on, live children are pulled. */
    const end = (rt: Runtime, status: NonNullable<Runtime["ending"]>, detail: string) =>
      Effect.gen(function* () {
        if (rt.ending !== null || rt.done) return
        rt.ending = status
        rt.detail = detail
        rt.timers = []
        sleeping.delete(rt.id)
        yield* save(rt)
        for (const child of liveChildren(rt)) yield* cancelChild(child)
        yield* completeIfQuiet(rt)
      })

    const place = (rt: Runtime, child: ChildRecord): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (rt.ending !== null || rt.done) {
          drop(rt, child)
          return
        }
        const spec = child.spec
        const result = yield* Effect.either(
          desk.place(
            {
              account: rt.account,
              marketId: rt.marketId,
              side: spec.side,
              type: "limit",
              amount: F.format(spec.amount),
              price: F.format(spec.price),
              // The parent's expires_at pulls its children, so a gtd parent's resting children are gtc.
              timeInForce: spec.timeInForce === "gtd" ? "gtc" : spec.timeInForce,
              postOnly: spec.postOnly,
              reduceOnly: spec.reduceOnly,
              clientOrderId: `${rt.id}-${spec.child}`,
              parentId: rt.id,
              book: rt.book,
              trader: rt.trader,
              info: { role: spec.role, child: spec.child }
            },
            `engine (${rt.id})`
          )
        )
        if (result._tag === "Right") {
          const order = result.right.order
          child.orderId = order.id
          child.status = TERMINAL.has(order.status) ? child.status : "live"
          yield* persist(rt, [
            {
              kind: "managed.child",
              payload: {
                child: spec.child,
                order_id: order.id,
                role: spec.role,
                side: spec.side,
                price: F.format(spec.price),
                amount: F.format(spec.amount)
              }
            }
          ])
          return
        }
        const error = result.left
        if (error.details.retryable === true && child.retries < MAX_RETRIES) {
          const now = yield* Clock.currentTimeMillis
          child.retries += 1
          const at = now + RETRY_BASE_MS * 2 ** (child.retries - 1)
          rt.timers.push({ timer: `retry:${spec.child}`, at })
          dueAdded(at, rt)
          yield* persist(rt)
          yield* Queue.offer(wake, undefined)
          return
        }
        drop(rt, child)
        yield* end(rt, "rejected", `child ${spec.child} was refused: ${error.message}`)
      })

    /**
     * Files the children a step asks for as `placing` before the state is written, so that one write holds them: a
     * restart places again any that had not reached the venue (their client ids make that safe), and no child a core
     * counts on is missing from its parent. Nothing after a `Finish` is filed.
     */
    const admit = (rt: Runtime, commands: ReadonlyArray<Command>) => {
      if (rt.ending !== null || rt.done) return
      for (const command of commands) {
        if (command._tag === "Finish") return
        if (command._tag !== "Place") continue
        const key = String(command.spec.child)
        if (rt.children[key] === undefined) {
          rt.children[key] = { spec: command.spec, orderId: null, status: "placing", retries: 0 }
        }
      }
    }

    const execute = (rt: Runtime, commands: ReadonlyArray<Command>): Effect.Effect<void> =>
      Effect.gen(function* () {
        for (const command of commands) {
          switch (command._tag) {
            case "Trigger":
              if (!rt.triggered && rt.ending === null) {
                rt.triggered = true
                yield* save(rt)
              }
              break
            case "Place": {
              // `admit` filed the child with the state written before the commands went out.
              const child = rt.children[String(command.spec.child)]
              if (child === undefined || child.spec !== command.spec) break
              if (rt.ending !== null || rt.done) {
                drop(rt, child)
                break
              }
              yield* place(rt, child)
              break
            }
            case "Cancel": {
              const child = rt.children[String(command.child)]
              if (child !== undefined) yield* cancelChild(child)
              break
            }
            case "SetTimer":
              if (rt.ending === null) {
                rt.timers = rt.timers.filter((t) => t.timer !== command.timer)
                rt.timers.push({ timer: command.timer, at: command.at })
                dueAdded(command.at, rt)
                yield* Queue.offer(wake, undefined)
              }
              break
            case "Emit":
              yield* emit(rt, command.kind, command.payload)
              break
            case "Finish":
              yield* end(rt, command.status, command.detail)
              break
          }
        }
      })

    /** Feeds one input to a parent's core and carries out its commands; the state is written before they go out. */
    const feed = (rt: Runtime, input: Input): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (rt.done) return
        const lazy = input._tag === "Market" || rt.ending !== null ? undefined : lazyBands.get(rt.id)
        if (lazy !== undefined) {
          // The market as it is now, first, if it left a lazy band since the parent last saw it.
          const view = yield* viewOf(rt.marketId)
          if (view !== undefined && lazy.some((b) => wakes(b, view))) {
            yield* feed(rt, { _tag: "Market", ts: input.ts, view })
            if (rt.done) return
          }
        }
        const kind = kindOf(rt)
        const step = kind.core.step(rt.spec, rt.params, rt.state, input)
        rt.state = step.state
        admit(rt, step.commands)
        rewatch(rt)
        yield* persist(rt)
        yield* execute(rt, step.commands)
        yield* completeIfQuiet(rt)
      })

    const onChildUpdate = (update: ChildUpdate) =>
      Effect.gen(function* () {
        const parentId = update.order.parentId
        const rt = parentId === null ? undefined : parents.get(parentId)
        if (rt === undefined) return
        const n = Number(update.order.clientOrderId.slice(rt.id.length + 1))
        const child = rt.children[String(n)]
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
          takeAmounts(rt, role, before, update.order)
          yield* save(rt)
          return
        }
        if (child.orderId === null) child.orderId = update.order.id
        child.seen = takeAmounts(rt, child.spec.role, child.seen, update.order)
        const ts = update.order.updatedAt
        if (update.fill !== undefined) {
          yield* feed(rt, {
            _tag: "ChildFill",
            ts: update.fill.ts,
            child: n,
            fillId: update.fill.id,
            price: update.fill.price,
            amount: update.fill.amount
          })
        }
        if (TERMINAL.has(update.order.status) && child.status !== "done") {
          drop(rt, child)
          const detail = update.order.info["detail"]
          if (rt.ending !== null) {
            yield* persist(rt)
          } else {
            yield* feed(rt, {
              _tag: "ChildDone",
              ts,
              child: n,
              status: update.order.status as "closed" | "canceled" | "expired" | "rejected",
              filled: update.order.filled,
              reason: typeof detail === "string" ? detail : null
            })
          }
        } else if (update.order.status === "open" && child.status === "placing") {
          child.status = "live"
          yield* feed(rt, { _tag: "ChildAccepted", ts, child: n })
        }
        yield* save(rt)
        yield* completeIfQuiet(rt)
      })

    /** Feeds a view to the parents it woke, in id order. */
    const feedView = (woken: ReadonlyArray<string>, view: MarketView) =>
      Effect.flatMap(Clock.currentTimeMillis, (ts) =>
        Effect.forEach(
          woken,
          (id) => {
            const rt = parents.get(id)
            return rt === undefined || rt.ending !== null ? Effect.void : feed(rt, { _tag: "Market", ts, view })
          },
          { discard: true }
        )
      )

    const onMarket = (marketId: string) =>
      Effect.gen(function* () {
        if (!sleeping.watches(marketId)) return
        const view = yield* viewOf(marketId)
        if (view === undefined) return
        const woken = wakeFor(marketId, view)
        if (woken !== null) yield* feedView(woken, view)
      })

    /** Live parents with an expiry or timer due by `now` that `pick` takes, in id order; no scan of every parent. */
    const dueById = (now: number, pick: (rt: Runtime) => boolean) => {
      const found = new Map<string, Runtime>()
      const kept: Array<{ readonly at: number; readonly id: string }> = []
      for (let top = due.peek(); top !== undefined && top.at <= now; top = due.peek()) {
        due.pop()
        if (!stillDue(top.at, top.id)) continue
        kept.push(top)
        const rt = parents.get(top.id)!
        if (pick(rt)) found.set(rt.id, rt)
      }
      // They stay in the heap until their parent no longer has them.
      for (const e of kept) due.push(e.at, e.id)
      return [...found.values()].sort((a, b) => (a.id < b.id ? -1 : 1))
    }

    /** Every parent whose expires_at has come ends now, before anything else of this moment. */
    const expireDue = (now: number) =>
      Effect.forEach(
        dueById(now, (rt) => rt.expiresAt !== null && rt.expiresAt <= now && rt.ending === null),
        (rt) => end(rt, "expired", "expires_at was reached"),
        { discard: true }
      )

    /** Timers due by `now`, each parent's in time order; they come last among the inputs of one moment. */
    const timersDue = (now: number) =>
      Effect.forEach(
        dueById(now, (rt) => rt.timers.some((t) => t.at <= now)),
        (rt) =>
          Effect.gen(function* () {
            const due = rt.timers.filter((t) => t.at <= now).sort((a, b) => a.at - b.at)
            if (due.length === 0) return
            rt.timers = rt.timers.filter((t) => t.at > now)
            for (const t of due) {
              if (rt.done) break
              if (t.timer.startsWith("retry:")) {
                const child = rt.children[t.timer.slice(6)]
                if (child !== undefined && child.status === "placing") yield* place(rt, child)
              } else {
                yield* feed(rt, { _tag: "Timer", ts: t.at, timer: t.timer })
              }
            }
            yield* persist(rt)
          }),
        { discard: true }
      )

    const nextDue = () => {
      for (;;) {
        const top = due.peek()
        if (top === undefined) return Number.POSITIVE_INFINITY
        if (stillDue(top.at, top.id)) return top.at
        due.pop()
      }
    }

    // Restore the parents the last run left live, and catch their children up with what the desk knows now.
    for (const stored of yield* store.liveParents) {
      const rt = stored.state as Runtime
      if (registry[rt.type] === undefined) continue
      parents.set(rt.id, rt)
      rewatch(rt)
      if (rt.expiresAt !== null && rt.ending === null) dueAdded(rt.expiresAt, rt)
      for (const t of rt.timers) dueAdded(t.at, rt)
    }
    // A state written before parents kept running sums (and every child) gets them from its children once.
    for (const rt of parents.values()) {
      if (typeof rt.filled === "number") continue
      rt.filled = F.ZERO
      rt.cost = F.ZERO
      rt.fee = F.ZERO
      rt.lastFill = null
      const byId = new Map(Object.values(rt.children).map((c) => [c.orderId, c]))
      for (const order of [...(yield* desk.list({ parentId: rt.id }))].reverse()) {
        const child = byId.get(order.id)
        const seen = takeAmounts(rt, String(order.info["role"]), undefined, order)
        if (child !== undefined) child.seen = seen
      }
      for (const child of Object.values(rt.children)) if (child.status === "done") drop(rt, child)
    }
    // Only a parent with a child still working, or one that was ending, has anything to catch up on.
    const unsettled = [...parents.values()].filter(
      (rt) => rt.ending !== null || Object.values(rt.children).some((c) => c.status !== "done")
    )
    yield* serialized(
      Effect.forEach(
        unsettled,
        (rt) =>
          Effect.gen(function* () {
            for (const child of Object.values(rt.children)) {
              if (child.status === "done") continue
              const found = child.orderId === null ? undefined : yield* desk.get(child.orderId)
              const order = found?.parentId === rt.id ? found : undefined
              if (child.status === "placing" && order === undefined) {
                yield* place(rt, child)
              } else if (order !== undefined && TERMINAL.has(order.status)) {
                // Fills that came while the driver was down reach the core before the end of the child.
                for (const fill of [...(yield* desk.fills({ orderId: order.id }))].reverse()) {
                  yield* onChildUpdate({ order: { ...order, status: "open" }, fill })
                }
                yield* onChildUpdate({ order, fill: undefined })
              }
            }
            yield* completeIfQuiet(rt)
          }),
        { discard: true }
      )
    )

    // Inputs: child updates from the desk, market data from the venues, and timers.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(desk.childUpdates), (first) =>
          serialized(
            Effect.flatMap(Queue.takeAll(desk.childUpdates), (rest) =>
              Effect.forEach([first, ...rest], onChildUpdate, { discard: true })
            )
          )
        )
      )
    )
    // Driven (the simulator), whoever applies market data hands the views to `marketView` itself.
    for (const venue of driven ? [] : gateway.venues) {
      const queue = yield* venue.subscribe
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(queue), (first) =>
            Effect.flatMap(Queue.takeAll(queue), (rest) => {
              const markets = new Set<string>()
              for (const e of [first, ...rest]) if (e._tag === "Book") markets.add(`${venue.info.id}:${e.nativeId}`)
              return serialized(Effect.forEach([...markets].sort(), onMarket, { discard: true }))
            })
          )
        )
      )
    }
    // Live, a fiber sleeps until the next expiry or timer. Driven (the simulator), whoever moves the clock calls
    // expireDue and timersDue at the right point of each moment instead.
    if (!driven) {
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const due = nextDue()
            if (due <= now) {
              yield* serialized(Effect.zipRight(expireDue(now), timersDue(now)))
              return
            }
            const wait = due === Number.POSITIVE_INFINITY ? Effect.never : Effect.sleep(due - now)
            yield* Effect.raceFirst(wait, Queue.take(wake))
          })
        )
      )
    }

    const create = (input: CreateInput, actor: string) =>
      Effect.gen(function* () {
        const kind = registry[input.type]
        const now = yield* Clock.currentTimeMillis
        const { venue, market } = yield* desk.resolveMarket(input.marketId)
        const digest = requestDigest(input)
        if (input.clientOrderId !== undefined) {
          const existing = yield* desk.byClientId(input.account, input.clientOrderId, digest)
          if (existing !== undefined) {
            if (existing.same) return { order: existing.order, created: false }
            return yield* Effect.fail(
              ApiError.field("client_order_id", `'${input.clientOrderId}' was used already for a different order`)
            )
          }
        }
        const { spec, params } = yield* checkParent(kind, input, market, venue.info.id, now, desk)
        const id = yield* desk.nextParentId
        const fullSpec = { ...spec, id }
        const first = kind.core.init(fullSpec, params, seedOf(id) ^ seed)
        const rt: Runtime = {
          id,
          type: input.type,
          account: input.account,
          venue: venue.info.id,
          marketId: `${venue.info.id}:${market.nativeId}`,
          spec: fullSpec,
          params,
          wireParams: input.params,
          state: first.state,
          children: {},
          filled: F.ZERO,
          cost: F.ZERO,
          fee: F.ZERO,
          lastFill: null,
          timers: [],
          triggered: false,
          ending: null,
          detail: "",
          done: false,
          expiresAt: input.expiresAt ?? null,
          clientOrderId: input.clientOrderId ?? id,
          book: input.book ?? "",
          trader: input.trader ?? "",
          tags: input.tags ?? NO_TAGS,
          notes: input.notes ?? ""
        }
        parents.set(id, rt)
        rewatch(rt)
        admit(rt, first.commands)
        // The answer is the parent as accepted (waiting); what its core does next follows in the journal.
        yield* save(rt, "order.accepted", digest, () => ({
          kind: "managed.created",
          payload: { type: rt.type, market_id: rt.marketId, side: rt.spec.side, amount: input.amount, by: actor }
        }))
        const accepted = (yield* desk.get(id))!
        yield* execute(rt, first.commands)
        // The first look at the market: a stop already through it fires now.
        const view = yield* viewOf(rt.marketId)
        if (view !== undefined && rt.ending === null) yield* feed(rt, { _tag: "Market", ts: now, view })
        yield* completeIfQuiet(rt)
        if (rt.expiresAt !== null) {
          dueAdded(rt.expiresAt, rt)
          yield* Queue.offer(wake, undefined)
        }
        return { order: accepted, created: true }
      })

    return {
      create: (input, actor) => serialized(create(input, actor)).pipe(Effect.uninterruptible),
      cancel: (id) =>
        serialized(
          Effect.gen(function* () {
            const rt = parents.get(id)
            if (rt === undefined) {
              // A finished parent is answered with its record.
              const order = yield* desk.get(id)
              if (order?.heldBy === "engine") return order
              return yield* Effect.fail(ApiError.notFound(`no engine order '${id}'`))
            }
            yield* end(rt, "canceled", "canceled by request")
            return (yield* desk.get(id))!
          })
        ).pipe(Effect.uninterruptible),
      liveCount: Effect.sync(() => [...parents.values()].filter((p) => !p.done).length),
      heldCount: Effect.sync(() => parents.size),
      marketView: (marketId, view) => {
        const woken = wakeFor(marketId, view)
        return woken === null ? null : serialized(feedView(woken, view))
      },
      stats: () => ({ ...stats, wokenByType: { ...wokenByType } }),
      nextDue,
      expireDue: (now) => serialized(expireDue(now)),
      timersDue: (now) => serialized(timersDue(now))
    } satisfies EngineService
  })
