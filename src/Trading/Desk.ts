/** The trading desk: plain orders on the venues, fills into the ledger, risk rules, halts, and the journal. */
import { Clock, Context, Effect, Layer, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Market, Side } from "../Domain/Market.ts"
import {
  type AccountRef,
  accountId,
  accountRef,
  NO_TAGS,
  type Order,
  orderNumber,
  type OrderStatus,
  remainingOf,
  renderOrder,
  TERMINAL,
  type TimeInForce,
  requestDigest
} from "../Domain/Order.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import type { JournalEntry, StoredOrder, StoredParent } from "../Services/OrderStore.ts"
import { OrderStore } from "../Services/OrderStore.ts"
import {
  type Venue,
  type VenueError,
  type VenueEvent,
  type VenueOrder,
  VenueGateway
} from "../Services/VenueGateway.ts"
import { Journal } from "./Journal.ts"
import { collateral, type Fill, Ledger, type Position, unrealized } from "./Ledger.ts"
import { checkRisk, DEFAULT_RULES, type RiskRules } from "./Risk.ts"
import { cancelWanted } from "./BulkCancel.ts"
import { reconcile } from "./Reconcile.ts"
import { type Applied, applyEvents, takeSnapshot } from "./VenueEvents.ts"

export interface PlaceInput {
  readonly account: string
  readonly marketId: string
  readonly side: Side
  readonly type: "limit" | "market"
  readonly amount: string
  readonly price?: string | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: number | undefined
  readonly postOnly?: boolean | undefined
  readonly reduceOnly?: boolean | undefined
  readonly clientOrderId?: string | undefined
  readonly book?: string | undefined
  readonly trader?: string | undefined
  readonly tags?: Readonly<Record<string, unknown>> | undefined
  readonly notes?: string | undefined
  /** Set on an engine parent's child order. */
  readonly parentId?: string | undefined
  /** Extra `info` of the order (a child's role). */
  readonly info?: Readonly<Record<string, unknown>> | undefined
}

/** A change of an engine parent's child, for the engine: the order as it is now, and the fill that changed it. */
export interface ChildUpdate {
  readonly order: Order
  readonly fill: Fill | undefined
}

export interface OrderFilter {
  readonly status?: ReadonlyArray<string> | undefined
  readonly venue?: string | undefined
  readonly marketId?: string | undefined
  readonly parentId?: string | undefined
  readonly book?: string | undefined
  readonly accounts?: ReadonlyArray<string> | undefined
}

export interface HaltState {
  readonly reason: string
  readonly scope: string
  readonly policy: "cancel" | "hold"
  readonly at: number
  readonly by: string
}

export interface RiskRecord {
  readonly version: number
  readonly updated_at: number | null
  readonly updated_by: string | null
  readonly rules: RiskRules
}

export interface DeskConfig {
  /** Cash each account starts with. */
  readonly startingCash: F.Fixed
}

const validation = (field: string, message: string) => ApiError.field(field, message)

const riskRejected = (rule: string, message: string) =>
  new ApiError({ status: 409, code: "risk_rejected", message, details: { venue: null, retryable: false, rule } })

/** A market that does not trade now (closed, settled, halted): the contract's 409 with rule `market_halted`. */
const marketHalted = (venue: string, message: string) =>
  new ApiError({
    status: 409,
    code: "risk_rejected",
    message,
    details: { venue, retryable: false, rule: "market_halted" }
  })

/** The two valid prices nearest an off-grid one, for the error message. */
const nearestTicks = (price: F.Fixed, tick: F.Fixed): [F.Fixed, F.Fixed] => [
  F.roundTo(price, tick, "down"),
  F.roundTo(price, tick, "up")
]

const DAY_MS = 86_400_000
/** How many finished orders stay in memory after they finish. */
const RECENT = 1024

type DeskService = ReturnType<typeof makeDesk> extends Effect.Effect<infer A, any, any> ? A : never

export class Desk extends Context.Tag("crossbook/Desk")<Desk, DeskService>() {
  static layer(config: DeskConfig) {
    return Layer.scoped(Desk, makeDesk(config))
  }
}

const makeDesk = (config: DeskConfig) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    const store = yield* OrderStore
    const journal = yield* Journal
    const lock = yield* Effect.makeSemaphore(1)
    const serialized = lock.withPermits(1)

    const openStatuses: ReadonlySet<OrderStatus> = new Set(["pending", "open", "pending_cancel"])
    /**
     * Memory follows live orders: `orders` holds those not yet finished, `recent` the last few that finished (so an
     * answer or a late venue report finds them); every other finished order is read from the store when asked for.
     */
    const orders = new Map<string, Order>()
    const recent = new Map<string, Order>()
    const byClientId = new Map<string, string>()
    const byVenueOrderId = new Map<string, string>()
    const lookup = (id: string): Order | undefined => orders.get(id) ?? recent.get(id)
    /** Forgets a finished order that left `recent`. */
    const forget = (order: Order) => {
      byClientId.delete(`${accountId(order.account)}\u0000${order.clientOrderId}`)
      if (order.venueOrderId !== null) byVenueOrderId.delete(`${order.venue}:${order.venueOrderId}`)
      digests.delete(order.id)
    }
    /** Per account: orders open at a venue, and the collateral the priced ones lock; kept as orders change. */
    const openCount = new Map<string, number>()
    const lockedBy = new Map<string, F.Fixed>()
    const count = (order: Order, sign: 1 | -1) => {
      if (!openStatuses.has(order.status)) return
      const account = accountId(order.account)
      openCount.set(account, (openCount.get(account) ?? 0) + sign)
      if (order.price === null || order.heldBy !== "venue") return
      const locked = collateral(order.side, order.price, remainingOf(order))
      lockedBy.set(account, F.add(lockedBy.get(account) ?? F.ZERO, sign === 1 ? locked : F.neg(locked)))
    }
    const remember = (order: Order) => {
      const before = lookup(order.id)
      if (before !== undefined) count(before, -1)
      count(order, 1)
      if (!TERMINAL.has(order.status)) {
        recent.delete(order.id)
        orders.set(order.id, order)
        return
      }
      orders.delete(order.id)
      recent.delete(order.id)
      recent.set(order.id, order)
      if (recent.size > RECENT) {
        const oldest = recent.values().next().value!
        recent.delete(oldest.id)
        forget(oldest)
      }
    }
    const digests = new Map<string, string>()
    const ledger = new Ledger(() => config.startingCash)
    /** Placement times; those before `placedHead` are older than a minute (dropped in bulk, not one shift each). */
    let placedAt: Array<number> = []
    let placedHead = 0
    let counter = 0
    let halt: HaltState | undefined
    let risk: RiskRecord = { version: 0, updated_at: null, updated_by: null, rules: DEFAULT_RULES }
    let fairValues: Record<string, { value: F.Fixed; updated_at: number }> = {}

    // Restore the orders the engine database holds live; finished ones stay in the store until asked for.
    for (const id of yield* store.newestIds) counter = Math.max(counter, orderNumber(id))
    for (const stored of yield* store.ordersWithStatus([...openStatuses, "waiting", "triggered"])) {
      const order = stored.record as Order & { readonly digest?: string }
      remember(order)
      byClientId.set(`${accountId(order.account)}\u0000${order.clientOrderId}`, order.id)
      if (order.venueOrderId !== null) byVenueOrderId.set(`${order.venue}:${order.venueOrderId}`, order.id)
      if (order.digest !== undefined) digests.set(order.id, order.digest)
      counter = Math.max(counter, orderNumber(order.id))
    }
    for (let after = 0; ;) {
      const events = yield* journal.after(after, 5000, "fill.new")
      if (events.length === 0) break
      for (const event of events) ledger.record(parseFill(event.payload))
      after = events[events.length - 1]!.seq
    }
    halt = (yield* store.getSetting("halt")) as HaltState | undefined
    risk = ((yield* store.getSetting("risk")) as RiskRecord | undefined) ?? risk
    const storedMarks = (yield* store.getSetting("fair_values")) as
      Record<string, { value: string; updated_at: number }> | undefined
    if (storedMarks !== undefined) {
      fairValues = Object.fromEntries(
        Object.entries(storedMarks).map(([k, v]) => [k, { value: F.of(v.value), updated_at: v.updated_at }])
      )
    }

    const venueOf = (id: string): Effect.Effect<Venue, ApiError> => {
      const venue = gateway.venue(id)
      return venue === undefined
        ? Effect.fail(
            ApiError.unknownVenue(
              id,
              gateway.venues.map((v) => v.info.id)
            )
          )
        : Effect.succeed(venue)
    }

    const stored = (order: Order): StoredOrder => ({
      id: order.id,
      account: accountId(order.account),
      clientOrderId: order.clientOrderId,
      venue: order.venue,
      marketId: order.marketId,
      status: order.status,
      parentId: order.parentId,
      book: order.book,
      createdAt: order.createdAt,
      updatedAt: order.updatedAt,
      record: { ...order, digest: digests.get(order.id) }
    })

    const emit = (entries: ReadonlyArray<JournalEntry>) => journal.append(entries)

    /** The order a client id names on an account, held or stored, with the digest of its first body. */
    const findByClientId = (account: string, clientOrderId: string) =>
      Effect.gen(function* () {
        const id = byClientId.get(`${account}\u0000${clientOrderId}`)
        const held = id === undefined ? undefined : lookup(id)
        if (held !== undefined) return { order: held, digest: digests.get(held.id) }
        const found = yield* store.orderByClientId(account, clientOrderId)
        if (found === undefined) return undefined
        const record = found.record as Order & { readonly digest?: string }
        return { order: record as Order, digest: record.digest }
      })

    const childUpdates = yield* Queue.unbounded<ChildUpdate>()

    /** Stores the order with its event (after `before`, the events that caused the change) in one write. */
    const setOrder = (order: Order, kind: string, fill?: Fill, before: ReadonlyArray<JournalEntry> = []) =>
      Effect.gen(function* () {
        remember(order)
        yield* journal.commit({
          orders: [stored(order)],
          entries: [...before, { ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) }]
        })
        if (order.parentId !== null && order.heldBy === "venue") yield* Queue.offer(childUpdates, { order, fill })
      })

    const applied: Applied = { byVenueOrderId, lookup, ledger, setOrder }
    const applyVenueEvents = (venue: string, events: ReadonlyArray<VenueEvent>) => applyEvents(applied, venue, events)
    const applySnapshot = (order: Order, snapshot: VenueOrder) => takeSnapshot(applied, order, snapshot)

    /** Applies what came with a venue's answer; the same events reach the subscription too and are skipped there. */
    const applyAnswer = (venue: string, answer: VenueOrder) => applyVenueEvents(venue, answer.events ?? [])

    // Orders left open by the last run are reconciled with their venue: still there, they follow it; gone, they end.
    yield* reconcile({
      orders: [...orders.values()],
      openStatuses,
      gateway,
      lookup,
      setOrder,
      applyAnswer,
      applySnapshot
    })

    // One subscription per venue; events are applied under the lock, in the venue's order.
    for (const venue of gateway.venues) {
      const queue = yield* venue.subscribe
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(queue), (first) =>
            serialized(
              Effect.flatMap(Queue.takeAll(queue), (rest) => applyVenueEvents(venue.info.id, [first, ...rest]))
            )
          )
        )
      )
    }
    const markOf = (
      marketId: string,
      book: { bids: ReadonlyArray<{ price: F.Fixed }>; asks: ReadonlyArray<{ price: F.Fixed }> } | undefined
    ) => {
      const fair = fairValues[marketId]
      if (fair !== undefined) return { mark: fair.value, source: "fair_value" as const }
      const bid = book?.bids[0]
      const ask = book?.asks[0]
      if (bid === undefined || ask === undefined) return { mark: null, source: null }
      return { mark: F.div(F.add(bid.price, ask.price), F.fromInt(2)), source: "mid" as const }
    }

    const bookOf = (marketId: string) => {
      const venue = gateway.venue(marketId.slice(0, marketId.indexOf(":")))
      if (venue === undefined) return Effect.succeed(undefined)
      return venue.book(marketId.slice(marketId.indexOf(":") + 1)).pipe(Effect.orElseSucceed(() => undefined))
    }

    const lockedOf = (account: string) => lockedBy.get(account) ?? F.ZERO

    const pnlToday = (account: string, now: number) =>
      Effect.gen(function* () {
        const dayStart = Math.floor(now / DAY_MS) * DAY_MS
        // Realized and fees of today's fills, replayed on their own ledger, plus the unrealized of what is held now.
        const today = new Ledger(() => F.ZERO)
        for (const fill of ledger.fills) if (fill.account === account && fill.ts >= dayStart) today.record(fill)
        let total = F.ZERO
        for (const p of today.allPositions()) total = F.sub(F.add(total, p.realized), p.fees)
        for (const p of ledger.allPositions()) {
          if (p.account !== account || p.contracts === 0) continue
          const u = unrealized(p, markOf(p.marketId, yield* bookOf(p.marketId)).mark)
          if (u !== null) total = F.add(total, u)
        }
        return total
      })

    const checkPrice = (field: string, text: string, market: Market) => {
      const price = F.parse(text)
      if (price === undefined) return Effect.fail(validation(field, `'${text}' is not a decimal`))
      if (price < market.tick || price > F.sub(F.ONE, market.tick)) {
        return Effect.fail(
          validation(field, `price must be from ${F.format(market.tick)} to ${F.format(F.sub(F.ONE, market.tick))}`)
        )
      }
      if (!F.isMultipleOf(price, market.tick)) {
        const [lo, hi] = nearestTicks(price, market.tick)
        return Effect.fail(
          validation(
            field,
            `${text} is off the tick grid of ${F.format(market.tick)}; nearest valid: ${F.format(lo)} or ${F.format(hi)}`
          )
        )
      }
      return Effect.succeed(price)
    }

    const place = (input: PlaceInput, actor: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const colon = input.marketId.indexOf(":")
        if (colon < 0) return yield* Effect.fail(validation("market_id", "must be '<venue>:<native_id>'"))
        const venueId = input.marketId.slice(0, colon)
        const nativeId = input.marketId.slice(colon + 1)
        const venue = yield* venueOf(venueId)
        if (input.account.slice(0, input.account.indexOf(":")) !== venueId) {
          return yield* Effect.fail(validation("account", `account ${input.account} is not on venue ${venueId}`))
        }
        const digest = requestDigest(input)
        if (input.clientOrderId !== undefined) {
          const existing = yield* findByClientId(input.account, input.clientOrderId)
          if (existing !== undefined) {
            if (existing.digest === digest) return { order: existing.order, created: false }
            return yield* Effect.fail(
              validation("client_order_id", `'${input.clientOrderId}' was used already for a different order`)
            )
          }
        }
        const market = yield* Effect.mapError(venue.market(nativeId), fromVenueError)
        if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(venueId, input.marketId))
        if (market.status !== "open") {
          return yield* Effect.fail(marketHalted(venueId, `market ${input.marketId} is ${market.status}`))
        }
        const amount = F.parse(input.amount)
        if (amount === undefined || amount <= 0) {
          return yield* Effect.fail(validation("amount", "must be a positive decimal"))
        }
        if (!F.isMultipleOf(amount, market.lot)) {
          return yield* Effect.fail(validation("amount", `must be a multiple of the lot ${F.format(market.lot)}`))
        }
        if (input.price === undefined) {
          return yield* Effect.fail(
            validation(
              "price",
              input.type === "market" ? "a market order needs a protection price" : "a limit order needs a price"
            )
          )
        }
        const price = yield* checkPrice("price", input.price, market)
        let tif: TimeInForce = input.timeInForce ?? (input.type === "market" ? "ioc" : "gtc")
        if (input.type === "market" && tif !== "ioc" && tif !== "fok") {
          return yield* Effect.fail(validation("time_in_force", "a market order is ioc or fok"))
        }
        if (input.postOnly === true && (input.type === "market" || tif === "ioc" || tif === "fok")) {
          return yield* Effect.fail(
            validation("post_only", "post_only needs an order that can rest (limit, gtc or gtd)")
          )
        }
        if (input.expiresAt !== undefined && input.expiresAt <= now) {
          return yield* Effect.fail(validation("expires_at", "is in the past"))
        }
        if (tif === "gtd" && input.expiresAt === undefined) {
          return yield* Effect.fail(validation("expires_at", "a gtd order needs expires_at"))
        }
        if (input.expiresAt !== undefined && tif === "gtc") tif = "gtd"
        const position = ledger.position(input.account, input.marketId)
        if (input.reduceOnly === true) {
          const reduces = input.side === "buy" ? position.contracts < 0 : position.contracts > 0
          if (!reduces || amount > Math.abs(position.contracts)) {
            return yield* Effect.fail(
              validation(
                "reduce_only",
                `the position is ${F.format(position.contracts)}; this order would not only reduce it`
              )
            )
          }
        }
        const refuse = (rule: string, message: string) =>
          Effect.zipRight(
            emit([
              {
                ts: now,
                kind: "risk.rejected",
                key: input.marketId,
                payload: {
                  rule,
                  message,
                  account: input.account,
                  market_id: input.marketId,
                  side: input.side,
                  amount: input.amount,
                  price: input.price ?? null
                }
              }
            ]),
            Effect.fail(riskRejected(rule, message))
          )
        if (halt !== undefined && (halt.scope === "*" || halt.scope === venueId)) {
          return yield* refuse("kill_switch", `trading is halted (${halt.scope}): ${halt.reason}`)
        }
        const book = yield* bookOf(input.marketId)
        while (placedHead < placedAt.length && placedAt[placedHead]! <= now - 60_000) placedHead++
        if (placedHead > 1024 && placedHead * 2 > placedAt.length) {
          placedAt = placedAt.slice(placedHead)
          placedHead = 0
        }
        const openOrders = openCount.get(input.account) ?? 0
        const refusal = checkRisk(risk.rules, {
          side: input.side,
          price,
          amount,
          mark: markOf(input.marketId, book).mark,
          openOrders,
          position: position.contracts,
          ordersLastMinute: placedAt.length - placedHead,
          pnlToday: risk.rules.daily_loss_limit === null ? F.ZERO : yield* pnlToday(input.account, now)
        })
        if (refusal !== undefined) return yield* refuse(refusal.rule, refusal.message)
        const needed = input.reduceOnly === true ? F.ZERO : collateral(input.side, price, amount)
        const available = F.sub(ledger.cashOf(input.account), lockedOf(input.account))
        if (needed > available) {
          return yield* Effect.fail(
            new ApiError({
              status: 400,
              code: "insufficient_funds",
              message: `${venueId} refused the order: it needs ${F.format(needed)} and ${F.format(available)} is available`,
              details: { venue: venueId, retryable: false, reason: "insufficient balance" }
            })
          )
        }

        counter += 1
        const id = `o_${String(counter).padStart(6, "0")}`
        const account: AccountRef = accountRef(input.account)
        const pending: Order = {
          id,
          clientOrderId: input.clientOrderId ?? id,
          venue: venueId,
          account,
          marketId: `${venueId}:${nativeId}`,
          side: input.side,
          type: input.type,
          timeInForce: tif,
          status: "pending",
          heldBy: "venue",
          price,
          stopPrice: null,
          amount,
          filled: F.ZERO,
          cost: F.ZERO,
          fee: F.ZERO,
          lastFillPrice: null,
          lastFillAmount: null,
          postOnly: input.postOnly ?? false,
          reduceOnly: input.reduceOnly ?? false,
          expiresAt: input.expiresAt ?? null,
          createdAt: now,
          updatedAt: now,
          parentId: input.parentId ?? null,
          queuePriorityPreserved: null,
          book: input.book ?? "",
          trader: input.trader ?? "",
          tags: input.tags ?? NO_TAGS,
          notes: input.notes ?? "",
          info: { placed_by: actor, ...input.info },
          venueOrderId: null
        }
        const request = {
          clientOrderId: id,
          nativeId,
          side: input.side,
          price,
          amount,
          timeInForce: tif,
          postOnly: pending.postOnly,
          reduceOnly: pending.reduceOnly,
          expiresAt: pending.expiresAt
        }
        const answer = yield* venue.placeOrder(request).pipe(
          Effect.map((order) => ({ _tag: "placed" as const, order })),
          // A placement that got no answer is looked up by its client id: found, it counts; absent, it never was.
          Effect.catchIf(
            (e: VenueError) => e.kind === "timeout",
            (e) =>
              Effect.map(venue.orderByClientId(id).pipe(Effect.orElseSucceed(() => undefined)), (found) =>
                found === undefined
                  ? { _tag: "absent" as const, error: e }
                  : { _tag: "placed" as const, order: found, reconciled: true }
              )
          ),
          Effect.catchAll((e: VenueError) => Effect.succeed({ _tag: "refused" as const, error: e }))
        )
        if (answer._tag !== "placed") {
          yield* emit([
            {
              ts: now,
              kind: "order.rejected",
              key: id,
              payload: {
                client_order_id: pending.clientOrderId,
                market_id: pending.marketId,
                reason: answer.error.reason,
                kind: answer.error.kind
              }
            }
          ])
          return yield* Effect.fail(fromVenueError(answer.error))
        }
        placedAt.push(now)
        const placed: Order = {
          ...pending,
          status: "open",
          venueOrderId: answer.order.venueOrderId,
          info: "reconciled" in answer ? { ...pending.info, reconciled: true } : pending.info
        }
        digests.set(id, digest)
        byClientId.set(`${input.account}\u0000${placed.clientOrderId}`, id)
        byVenueOrderId.set(`${venueId}:${answer.order.venueOrderId}`, id)
        yield* setOrder(placed, "order.accepted")
        yield* applyAnswer(venueId, answer.order)
        yield* applySnapshot(lookup(id)!, answer.order)
        return { order: lookup(id)!, created: true }
      })

    const orderOr404 = (id: string) =>
      Effect.gen(function* () {
        const order = lookup(id) ?? ((yield* store.getOrder(id))?.record as Order | undefined)
        return order === undefined ? yield* Effect.fail(ApiError.notFound(`no order '${id}'`)) : order
      })

    const cancelOne = (order: Order) =>
      Effect.gen(function* () {
        if (TERMINAL.has(order.status)) return order
        if (order.venueOrderId === null) return order
        const venue = yield* venueOf(order.venue)
        const answer = yield* Effect.either(venue.cancelOrder(order.venueOrderId))
        if (answer._tag === "Left") {
          const current = lookup(order.id)!
          // The venue may have finished the order in the meantime; that answers the cancel.
          if (TERMINAL.has(current.status)) return current
          return yield* Effect.fail(fromVenueError(answer.left))
        }
        yield* applyAnswer(order.venue, answer.right)
        yield* applySnapshot(lookup(order.id)!, answer.right)
        return lookup(order.id)!
      })

    const matches = (o: Order, filter: OrderFilter) =>
      (filter.status === undefined || filter.status.includes(o.status)) &&
      (filter.venue === undefined || o.venue === filter.venue) &&
      (filter.marketId === undefined || o.marketId === filter.marketId) &&
      (filter.parentId === undefined || o.parentId === filter.parentId) &&
      (filter.book === undefined || o.book === filter.book) &&
      (filter.accounts === undefined || filter.accounts.includes(accountId(o.account)))

    /** An engine parent as clients read it: `info.children` comes from the store's parent index, oldest first. */
    const withChildren = (order: Order): Effect.Effect<Order> =>
      order.heldBy !== "engine"
        ? Effect.succeed(order)
        : Effect.map(store.childIds(order.id), (children) => {
            const { kind, state, detail, ...rest } = order.info
            return { ...order, info: { kind, state, detail, children, ...rest } }
          })

    return {
      place: (input: PlaceInput, actor: string) => serialized(place(input, actor)).pipe(Effect.uninterruptible),
      /** The order as clients read it (a parent with its children's ids). */
      get: (id: string) =>
        Effect.gen(function* () {
          const order = lookup(id) ?? ((yield* store.getOrder(id))?.record as Order | undefined)
          return order === undefined ? undefined : yield* withChildren(order)
        }),
      /** Orders newest first, as clients read them; read from the store, where every change is written with its event. */
      list: (filter: OrderFilter) =>
        Effect.gen(function* () {
          const stored = yield* store.listOrders({ ...filter, statuses: filter.status })
          const found = stored
            .map((s) => lookup(s.id) ?? (s.record as Order))
            .sort((a, b) => b.createdAt - a.createdAt || orderNumber(b.id) - orderNumber(a.id))
          return yield* Effect.forEach(found, withChildren)
        }),
      cancel: (id: string) => serialized(Effect.flatMap(orderOr404(id), cancelOne)).pipe(Effect.uninterruptible),
      cancelAll: (filter: OrderFilter) =>
        serialized(
          cancelWanted({
            live: [...orders.values()],
            wanted: (order) => matches(order, filter),
            marketId: filter.marketId,
            venue: gateway.venue,
            cancelOne,
            lookup,
            setOrder
          })
        ).pipe(Effect.uninterruptible),
      amend: (
        id: string,
        changes: { price?: string | undefined; amount?: string | undefined; expiresAt?: number | undefined }
      ) =>
        serialized(
          Effect.gen(function* () {
            const order = yield* orderOr404(id)
            if (TERMINAL.has(order.status)) {
              return yield* Effect.fail(validation("id", `order ${id} is ${order.status} and cannot be amended`))
            }
            if (changes.expiresAt !== undefined) {
              return yield* Effect.fail(
                validation("expires_at", "the sim venue cannot change an order's expiry; cancel and place again")
              )
            }
            const venue = yield* venueOf(order.venue)
            const market = yield* Effect.mapError(
              venue.market(order.marketId.slice(order.venue.length + 1)),
              fromVenueError
            )
            if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(order.venue, order.marketId))
            const next: { price?: F.Fixed; amount?: F.Fixed } = {}
            if (changes.price !== undefined) next.price = yield* checkPrice("price", changes.price, market)
            if (changes.amount !== undefined) {
              const amount = F.parse(changes.amount)
              if (amount === undefined || amount <= 0 || !F.isMultipleOf(amount, market.lot)) {
                return yield* Effect.fail(
                  validation("amount", `must be a positive multiple of the lot ${F.format(market.lot)}`)
                )
              }
              if (amount < order.filled) {
                return yield* Effect.fail(
                  validation("amount", `cannot go below what is filled (${F.format(order.filled)})`)
                )
              }
              next.amount = amount
            }
            const answer = yield* Effect.mapError(venue.amendOrder(order.venueOrderId!, next), fromVenueError)
            yield* applyAnswer(order.venue, answer)
            yield* applySnapshot(lookup(id)!, answer)
            return lookup(id)!
          })
        ).pipe(Effect.uninterruptible),
      fills: (filter: {
        since?: number | undefined
        marketId?: string | undefined
        orderId?: string | undefined
        accounts?: ReadonlyArray<string> | undefined
      }) =>
        Effect.sync(() =>
          ledger.fills
            .filter(
              (f) =>
                (filter.since === undefined || f.ts >= filter.since) &&
                (filter.marketId === undefined || f.marketId === filter.marketId) &&
                (filter.orderId === undefined || f.orderId === filter.orderId) &&
                (filter.accounts === undefined || filter.accounts.includes(f.account))
            )
            .slice()
            .reverse()
        ),
      positions: (accounts: ReadonlyArray<string> | undefined) =>
        Effect.gen(function* () {
          const out: Array<{ position: Position; mark: F.Fixed | null; source: "fair_value" | "mid" | null }> = []
          for (const p of ledger.allPositions()) {
            if (accounts !== undefined && !accounts.includes(p.account)) continue
            const { mark, source } = markOf(p.marketId, yield* bookOf(p.marketId))
            out.push({ position: p, mark, source })
          }
          return out
        }),
      balances: (accounts: ReadonlyArray<string>) =>
        Effect.sync(() =>
          accounts.map((account) => {
            const cash = ledger.cashOf(account)
            const locked = lockedOf(account)
            return { account, cash, locked, available: F.sub(cash, locked) }
          })
        ),
      markOf: (marketId: string) => Effect.map(bookOf(marketId), (book) => markOf(marketId, book)),
      ledgerPositions: Effect.sync(() => ledger.allPositions()),
      fairValues: Effect.sync(() => fairValues),
      setFairValues: (values: Record<string, string | null>, actor: string) =>
        serialized(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const next = { ...fairValues }
            for (const [marketId, text] of Object.entries(values)) {
              if (text === null) {
                delete next[marketId]
                continue
              }
              const value = F.parse(text)
              if (value === undefined || value <= 0 || value >= F.ONE) {
                return yield* Effect.fail(validation(marketId, "a fair value is a decimal strictly between 0 and 1"))
              }
              next[marketId] = { value, updated_at: now }
            }
            fairValues = next
            const wire = Object.fromEntries(
              Object.entries(next).map(([k, v]) => [k, { value: F.format(v.value), updated_at: v.updated_at }])
            )
            yield* journal.commit({
              settings: [{ key: "fair_values", value: wire, ts: now }],
              entries: [{ ts: now, kind: "fair_value.updated", key: "fair_values", payload: { values, by: actor } }]
            })
            return fairValues
          })
        ),
      risk: Effect.sync(() => risk),
      setRisk: (rules: RiskRules, actor: string) =>
        serialized(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            risk = { version: risk.version + 1, updated_at: now, updated_by: actor, rules }
            yield* journal.commit({
              settings: [{ key: "risk", value: risk, ts: now }],
              entries: [{ ts: now, kind: "risk.updated", key: "risk", payload: risk }]
            })
            return risk
          })
        ),
      halt: (input: { reason: string; scope: string; policy: "cancel" | "hold" }, actor: string) =>
        serialized(
          Effect.gen(function* () {
            if (input.scope !== "*") yield* venueOf(input.scope)
            const now = yield* Clock.currentTimeMillis
            halt = { ...input, at: now, by: actor }
            yield* journal.commit({
              settings: [{ key: "halt", value: halt, ts: now }],
              entries: [{ ts: now, kind: "engine.halted", key: input.scope, payload: halt }]
            })
            let canceled = 0
            if (input.policy === "cancel") {
              for (const order of [...orders.values()]) {
                if (TERMINAL.has(order.status) || (input.scope !== "*" && order.venue !== input.scope)) continue
                const after = yield* cancelOne(order).pipe(Effect.orElseSucceed(() => order))
                if (after.status === "canceled") canceled++
              }
            }
            return { halt, canceled }
          })
        ).pipe(Effect.uninterruptible),
      resume: (actor: string) =>
        serialized(
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const was = halt
            halt = undefined
            yield* journal.commit({
              settings: [{ key: "halt", value: null, ts: now }],
              entries: [
                { ts: now, kind: "engine.resumed", key: was?.scope ?? "*", payload: { by: actor, was: was ?? null } }
              ]
            })
            return was
          })
        ),
      haltState: Effect.sync(() => halt),
      /** Changes of engine children, in the order they happened. */
      childUpdates,
      /** The order a client id names on an account, with whether the body digest matches the first one. */
      byClientId: (account: string, clientOrderId: string, digest: string) =>
        Effect.map(findByClientId(account, clientOrderId), (found) =>
          found === undefined ? undefined : { order: found.order, same: found.digest === digest }
        ),
      /** How many orders the desk holds in memory (live ones, and a bounded few that just finished). */
      held: Effect.sync(() => ({ live: orders.size, recent: recent.size })),
      /**
       * Stores an engine parent's record (created or changed) with its state and its event, then the driver's own
       * `after` entries, in one write: a restart finds all of them or none.
       */
      putParent: (
        order: Order,
        kind: string,
        options: {
          readonly digest?: string | undefined
          readonly state: StoredParent
          readonly after?: ReadonlyArray<JournalEntry> | undefined
        }
      ) =>
        serialized(
          Effect.gen(function* () {
            if (options.digest !== undefined) {
              digests.set(order.id, options.digest)
              byClientId.set(`${accountId(order.account)}\u0000${order.clientOrderId}`, order.id)
            }
            remember(order)
            yield* journal.commit({
              orders: [stored(order)],
              parents: [options.state],
              entries: [
                { ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) },
                ...(options.after ?? [])
              ]
            })
          })
        ),
      /** The next parent id: parents and children share one counter, parents carry the `mo_` prefix. */
      nextParentId: serialized(
        Effect.sync(() => {
          counter += 1
          return `mo_${String(counter).padStart(6, "0")}`
        })
      ),
      /** Checks what every order of the engine needs before it is accepted: venue, market, tick, lot, halt. */
      resolveMarket: (marketId: string) =>
        Effect.gen(function* () {
          const colon = marketId.indexOf(":")
          if (colon < 0) return yield* Effect.fail(validation("market_id", "must be '<venue>:<native_id>'"))
          const venue = yield* venueOf(marketId.slice(0, colon))
          const market = yield* Effect.mapError(venue.market(marketId.slice(colon + 1)), fromVenueError)
          if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(venue.info.id, marketId))
          if (market.status !== "open") {
            return yield* Effect.fail(validation("market_id", `market ${marketId} is ${market.status}`))
          }
          return { venue, market }
        }),
      checkPrice,
      haltedFor: (venue: string) =>
        Effect.sync(() => (halt !== undefined && (halt.scope === "*" || halt.scope === venue) ? halt : undefined)),
      openOrderCount: Effect.sync(() => {
        let n = 0
        for (const o of orders.values()) if (openStatuses.has(o.status)) n++
        return n
      })
    }
  })

export const renderFill = (f: Fill) => ({
  id: f.id,
  order_id: f.orderId,
  client_order_id: f.clientOrderId,
  parent_id: f.parentId,
  account: f.account,
  market_id: f.marketId,
  side: f.side,
  price: F.format(f.price),
  amount: F.format(f.amount),
  fee: F.format(f.fee),
  liquidity: f.liquidity,
  trade_id: f.tradeId,
  book: f.book,
  ts: f.ts
})

const parseFill = (payload: unknown): Fill => {
  const p = payload as ReturnType<typeof renderFill>
  return {
    id: p.id,
    orderId: p.order_id,
    clientOrderId: p.client_order_id,
    parentId: p.parent_id,
    account: p.account,
    marketId: p.market_id,
    side: p.side,
    price: F.of(p.price),
    amount: F.of(p.amount),
    fee: F.of(p.fee),
    liquidity: p.liquidity,
    tradeId: p.trade_id,
    book: p.book,
    ts: p.ts
  }
}
