/** The driver: holds engine parents, feeds their decision cores, and carries out what the cores decide. */
import { Clock, Context, Effect, Layer, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { NO_TAGS, type Order, requestDigest } from "../Domain/Order.ts"
import type { AccountRequest } from "../Domain/OrderRequest.ts"
import { OrderStore } from "../Services/OrderStore.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { Desk } from "../Trading/Desk.ts"
import { Journal } from "../Trading/Journal.ts"
import { makeLock } from "../Trading/Lock.ts"
import { type MarketView, NONE } from "./Core.ts"
import * as Bucket from "./Bucket.ts"
import { childrenNow, expireDue, feed, feedQuotes, feedView, onMarket, timersDue } from "./Inputs.ts"
import { ParentsByMarket, watchLiveMarkets } from "./LiveMarkets.ts"
import { completeIfQuiet, record, recordStatus, save } from "./Parents.ts"
import { admit, end, execute } from "./Placement.ts"
import { andThen, atNow } from "./Rest.ts"
import { restore } from "./Restore.ts"
import { summaryOf } from "./Summary.ts"
import { type OrderType, type Registry, registryOf } from "./OrderType.ts"
import { type Driver, type EngineType, type Runtime } from "./Runtime.ts"
import { checkBucketParent, type CheckedMember, checkParent } from "./Validation.ts"
import { dueAdded, nextDue, rewatch, viewOf, wakeFor } from "./Wake.ts"
import { DueHeap, WakeIndex } from "./WakeIndex.ts"
import * as Id from "../Domain/Ids.ts"

export type { CheckedMember } from "./Validation.ts"
export type { OrderType, Registry } from "./OrderType.ts"

/** The bucket order's type: held by every engine beside the registered ones, reached through `createBucket`. */
const BUCKET_KIND: OrderType = {
  type: "bucket",
  params: Bucket.Params,
  validate: Bucket.validate,
  core: Bucket.core,
  shownAs: "market"
}

/** A bucket order: the bucket it names and its members as checked (market, flip, account). */
export interface BucketOrderInput extends AccountRequest {
  readonly bucketId: string
  readonly members: ReadonlyArray<CheckedMember>
}

const seedOf = (id: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
  return h | 0
}

type EngineService = {
  /** Whether the engine holds orders of this type (one of the types it was given). */
  readonly holds: (type: string) => boolean
  /** The types it was given, in their order. */
  readonly types: ReadonlyArray<string>
  /** A new parent of one of the engine's types, on the account the request was checked for. */
  readonly create: (
    input: AccountRequest,
    actor: string
  ) => Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError>
  /** A `market` order on a bucket: routed by the engine across the members' venues. */
  readonly createBucket: (
    input: BucketOrderInput,
    actor: string
  ) => Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError>
  readonly cancel: (id: string) => Effect.Effect<Order, ApiError>
  /**
   * Market data from a caller that has the view already (the simulator, benchmarks): plain TypeScript until a parent
   * wakes. Null when the view wakes nobody; else the work of feeding the parents it woke. Given a reader instead, the
   * view is read only when some parent watches the market. Given the clock's time `now` too, the woken parents are
   * fed in plain code at once as far as they can be (when no other input holds the driver): the work answered is
   * then what is left of it, and it holds the driver until it runs, so the caller runs it before anything else.
   */
  readonly marketView: (
    marketId: string,
    view: MarketView | ((marketId: string) => MarketView | undefined),
    now?: number
  ) => Effect.Effect<void> | null
  /**
   * The changes of children the desk stored, fed to their parents in plain code at `now` when the driver's lock is
   * free: null when none was left, else what waits (the caller runs it before anything else; with the lock held, the
   * engine's own fiber takes them).
   */
  readonly childrenNow: (now: number) => Effect.Effect<void> | null
  /** Market views the driver looked at and the parents they woke, since start (for benchmarks and status). */
  readonly stats: () => {
    readonly views: number
    readonly woken: number
    readonly wokenByType: Readonly<Partial<Record<EngineType, number>>>
  }
  /** Live parents, for status and tests. */
  readonly liveCount: Effect.Effect<number>
  /** Parents held in memory: the live ones only (a finished one is read from the store). */
  readonly heldCount: Effect.Effect<number>
  /** Live parents of each of the engine's types (0 when none; bucket orders left out), for the metrics. */
  readonly liveByType: Effect.Effect<Readonly<Record<string, number>>>
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
  static layer(
    types: ReadonlyArray<OrderType> | Registry,
    options: { readonly seed?: number; readonly driven?: boolean } = {}
  ) {
    const registry = Array.isArray(types) ? registryOf(types) : (types as Registry)
    return Layer.scoped(Engine, makeEngine(registry, options.seed ?? 0, options.driven ?? false))
  }
}

/** An object with no keys (the params of a stop) as one shared empty object: a parent keeps it while it works. */
const sharedEmpty = <A>(o: A): A => {
  if (typeof o !== "object" || o === null) return o
  for (const _ in o) return o
  return NO_TAGS as A
}

const makeEngine = (registry: Registry, seed: number, driven: boolean) =>
  Effect.gen(function* () {
    const desk = yield* Desk
    const serialized = makeLock()
    const wake = yield* Queue.sliding<void>(1)
    const d: Driver = {
      registry: { ...registry, bucket: BUCKET_KIND },
      seed,
      desk,
      store: yield* OrderStore,
      journal: yield* Journal,
      gateway: yield* VenueGateway,
      serialized,
      wake,
      parents: new ParentsByMarket(),
      sleeping: new WakeIndex(),
      stats: { views: 0, woken: 0 },
      wokenByType: {},
      due: new DueHeap(),
      lazyBands: new Map(),
      lastTrades: new Map(),
      stateAhead: new Set(),
      summarize: (state) => summaryOf(d, state as Runtime)
    }
    const { parents, gateway } = d

    yield* restore(d)
    // Live, the markets of live parents are streamed by the venues that stream on request.
    if (!driven) yield* watchLiveMarkets(parents, gateway)
    // The desk keeps no record of a working parent: it renders one from the parent's runtime when asked, so a
    // client sees its core's info as it is now, with no write per input. Its handle is its id: a parent held by its
    // summary is read whole only when its record is. Once the engine stops, nothing changes its parents any more and
    // the desk goes on rendering them as they were (until another engine holds them), so a stop reads none of them.
    yield* desk.renderParents({
      get: (id) => (parents.has(id) ? id : undefined),
      working: function* () {
        for (const [id] of parents.working()) yield [id, id] as const
      },
      render: (id) => record(d, parents.get(id as string)!),
      status: (id) => recordStatus(d, parents.get(id as string)!)
    })

    // Inputs: child updates from the desk, market data from the venues, and timers.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          desk.childUpdates.ready,
          // Whoever drives the engine in plain code may have taken them already.
          Effect.suspend(() =>
            desk.childUpdates.size === 0 ? Effect.void : serialized(atNow((now) => childrenNow(d, now, false)))
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
              const markets = new Set<Id.MarketId>()
              for (const e of [first, ...rest]) {
                if (e._tag === "Book") markets.add(Id.makeMarketId(venue.info.id, e.nativeId))
                else if (e._tag === "Trade") {
                  const marketId = Id.makeMarketId(venue.info.id, e.nativeId)
                  if (d.lastTrades.has(marketId)) {
                    d.lastTrades.set(marketId, e.price)
                    markets.add(marketId)
                  }
                }
              }
              return serialized(Effect.forEach([...markets].sort(), (id) => onMarket(d, id), { discard: true }))
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
            const due = nextDue(d)
            if (due <= now) {
              yield* serialized(Effect.zipRight(expireDue(d, now), timersDue(d, now)))
              return
            }
            const wait = due === Number.POSITIVE_INFINITY ? Effect.never : Effect.sleep(due - now)
            yield* Effect.raceFirst(wait, Queue.take(wake))
          })
        )
      )
    }

    /** A retry of a placed order by its client id answers that order; the same id for another order is refused. */
    const repeated = Effect.fnUntraced(function* (account: string, clientOrderId: string | undefined, digest: string) {
      if (clientOrderId === undefined) return undefined
      const existing = yield* desk.byClientId(account, clientOrderId, digest)
      if (existing === undefined) return undefined
      if (existing.same) return { order: existing.order, created: false }
      return yield* Effect.fail(
        ApiError.field("client_order_id", `'${clientOrderId}' was used already for a different order`)
      )
    })

    /** A new parent's runtime, its first step taken in. */
    const runtimeOf = (
      type: EngineType,
      input: AccountRequest,
      where: Pick<Runtime, "venue" | "marketId" | "members">,
      checked: { readonly spec: Runtime["spec"]; readonly params: unknown },
      id: string
    ) => {
      // Built field by field (not spread): a parent keeps these objects while it works, at their smallest shape.
      const c = checked.spec
      const fullSpec: Runtime["spec"] = {
        id,
        side: c.side,
        amount: c.amount,
        price: c.price,
        stopPrice: c.stopPrice,
        timeInForce: c.timeInForce,
        postOnly: c.postOnly,
        reduceOnly: c.reduceOnly,
        tick: c.tick,
        lot: c.lot,
        createdAt: c.createdAt
      }
      const first = d.registry[type]!.core.init(fullSpec, checked.params, seedOf(id) ^ seed)
      const rt: Runtime = {
        id,
        type,
        account: input.account,
        venue: where.venue,
        marketId: where.marketId,
        members: where.members,
        spec: fullSpec,
        params: sharedEmpty(checked.params),
        wireParams: sharedEmpty(input.params ?? NO_TAGS),
        state: first.state,
        children: NONE,
        filled: F.ZERO,
        cost: F.ZERO,
        fee: F.ZERO,
        lastFill: null,
        timers: NONE,
        triggered: false,
        ending: null,
        detail: "",
        done: false,
        updatedAt: fullSpec.createdAt,
        expiresAt: input.expires_at ?? null,
        clientOrderId: input.client_order_id ?? id,
        book: input.book ?? "",
        trader: input.trader ?? "",
        tags: input.tags ?? NO_TAGS,
        notes: input.notes ?? ""
      }
      return { rt, first }
    }

    /** Holds a new parent: filed, written as accepted, its first commands carried out, its first look taken. */
    const hold = Effect.fnUntraced(function* (
      rt: Runtime,
      first: ReturnType<typeof runtimeOf>["first"],
      input: AccountRequest,
      digest: string,
      actor: string,
      look: Effect.Effect<void>
    ) {
      parents.set(rt.id, rt)
      rewatch(d, rt)
      admit(rt, first.commands)
      // The answer is the parent as accepted (waiting); what its core does next follows in the journal.
      yield* atNow((now) =>
        save(d, rt, now, "order.accepted", digest, () => ({
          kind: "managed.created",
          payload: { type: rt.type, market_id: rt.marketId, side: rt.spec.side, amount: input.amount, by: actor }
        }))
      )
      const accepted = (yield* desk.get(rt.id))!
      yield* atNow((now) => execute(d, rt, first.commands, now))
      if (rt.ending === null) yield* look
      yield* atNow((now) => completeIfQuiet(d, rt, now))
      if (rt.expiresAt !== null) {
        dueAdded(d, rt.expiresAt, rt)
        Queue.unsafeOffer(wake, undefined)
      }
      return { order: accepted, created: true }
    })

    /** The first look at the market: a stop already through it fires now. */
    const firstLook = Effect.fnUntraced(function* (rt: Runtime, now: number) {
      const view = yield* viewOf(d, rt.marketId)
      if (view !== undefined && rt.ending === null)
        yield* atNow((t) => feed(d, rt, { _tag: "Market", ts: now, view }, t))
    })

    const postOnlyTypes = Object.values(registry)
      .filter((t) => t.postOnly === true)
      .map((t) => t.type)
      .sort()
    const create = Effect.fnUntraced(function* (input: AccountRequest, actor: string) {
      const kind = Object.hasOwn(registry, input.type) ? registry[input.type]! : undefined
      if (kind === undefined) {
        return yield* Effect.fail(ApiError.field("type", `the engine holds no orders of type '${input.type}'`))
      }
      const now = yield* Clock.currentTimeMillis
      const { venue, market } = yield* desk.resolveMarket(input.market_id)
      const digest = requestDigest(input)
      const again = yield* repeated(input.account, input.client_order_id, digest)
      if (again !== undefined) return again
      const checked = yield* checkParent(kind, input, market, venue.info.id, now, desk, postOnlyTypes)
      const id = yield* desk.nextParentId
      const where = { venue: venue.info.id, marketId: Id.makeMarketId(venue.info.id, market.nativeId) }
      const { rt, first } = runtimeOf(input.type, input, where, checked, id)
      return yield* hold(rt, first, input, digest, actor, firstLook(rt, now))
    })

    const createBucket = Effect.fnUntraced(function* (input: BucketOrderInput, actor: string) {
      const now = yield* Clock.currentTimeMillis
      const { bucketId, members, ...rest } = input
      const digest = requestDigest({ ...rest, bucketId, members: members.map((m) => [m.market.nativeId, m.flip]) })
      const again = yield* repeated(input.account, input.client_order_id, digest)
      if (again !== undefined) return again
      const checked = yield* checkBucketParent(BUCKET_KIND, rest, members, now, desk)
      const id = yield* desk.nextParentId
      const where = {
        venue: "bucket",
        marketId: Id.makeMarketId("bucket", bucketId),
        members: members.map((m) => ({
          marketId: Id.makeMarketId(m.venueId, m.market.nativeId),
          account: m.account,
          flip: m.flip
        }))
      }
      const { rt, first } = runtimeOf("bucket", rest, where, checked, id)
      // The first round: every member's books now.
      return yield* hold(rt, first, rest, digest, actor, feedQuotes(d, rt, now))
    })

    /**
     * The parents a view woke, fed. At a known time with the lock free, they are fed in plain code now, and what their
     * children did after them; what waits is left to the caller. (Its own function: the closures here would make every
     * view, most of which wake nobody, allocate a context for them.)
     */
    const feedWoken = (woken: ReadonlyArray<string>, view: MarketView, now: number | undefined) => {
      const fed =
        now === undefined
          ? undefined
          : serialized.hold(() => andThen(feedView(d, woken, view, now), now, (t) => childrenNow(d, t)))
      return fed ?? serialized(atNow((t) => feedView(d, woken, view, t)))
    }
    return {
      holds: (type) => Object.hasOwn(registry, type),
      types: Object.keys(registry),
      create: (input, actor) => serialized(create(input, actor)).pipe(Effect.uninterruptible),
      createBucket: (input, actor) => serialized(createBucket(input, actor)).pipe(Effect.uninterruptible),
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
            yield* atNow((now) => end(d, rt, "canceled", "canceled by request", now))
            return (yield* desk.get(id))!
          })
        ).pipe(Effect.uninterruptible),
      liveCount: Effect.sync(() => {
        let n = 0
        for (const _ of parents.working()) n++
        return n
      }),
      heldCount: Effect.sync(() => parents.size),
      liveByType: Effect.sync(() => {
        const counts: Record<string, number> = {}
        for (const type in registry) counts[type] = 0
        for (const [, type] of parents.working()) if (counts[type] !== undefined) counts[type]! += 1
        return counts
      }),
      marketView: (marketId, given, now) => {
        let view: MarketView | undefined
        if (typeof given === "function") {
          if (!d.sleeping.watches(marketId)) {
            d.stats.views += 1
            return null
          }
          view = given(marketId)
          if (view === undefined) return null
        } else view = given
        const woken = wakeFor(d, marketId, view)
        return woken === null ? null : feedWoken(woken, view, now)
      },
      childrenNow: (now) => {
        if (desk.childUpdates.size === 0) return null
        const left = serialized.hold(() => childrenNow(d, now))
        return left === undefined || left === Effect.void ? null : left
      },
      stats: () => ({ ...d.stats, wokenByType: { ...d.wokenByType } }),
      nextDue: () => nextDue(d),
      expireDue: (now) => serialized(expireDue(d, now)),
      timersDue: (now) => serialized(timersDue(d, now))
    } satisfies EngineService
  })
