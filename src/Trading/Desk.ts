/** The trading desk: plain orders on the venues, fills into the ledger, risk rules, halts, and the journal. */
import { Clock, Context, Effect, Layer, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"
import { accountId, type Order, orderNumber, renderOrder, TERMINAL, type TimeInForce } from "../Domain/Order.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import type { Batch, JournalEntry, StoredOrder, StoredParent } from "../Services/OrderStore.ts"
import { OrderStore } from "../Services/OrderStore.ts"
import {
  isPaperAccount,
  PAPER,
  type Venue,
  type VenueEvent,
  type VenueOrder,
  VenueGateway
} from "../Services/VenueGateway.ts"
import { Held, OPEN_STATUSES, type ParentHolder } from "./Held.ts"
import { amendAtVenue, cancelAtVenue, type Changing } from "./Changes.ts"
import { Journal } from "./Journal.ts"
import { makeLock } from "./Lock.ts"
import { byClientId, type Lookups, matches, orderOrNotFound, withChildIds } from "./Lookups.ts"
import { checkPrice, orFail, type Placing, placeOrder, PlacementRate } from "./Placement.ts"
import { type Fill, Ledger, type Position, type PositionRow, positionOfRow, positionRow, unrealized } from "./Ledger.ts"
import { DEFAULT_RULES, type RiskRules } from "./Risk.ts"
import { cancelWanted } from "./BulkCancel.ts"
import { reconcile } from "./Reconcile.ts"
import { type Applied, applyEvents, takeSnapshot } from "./VenueEvents.ts"
import { catchUpSettlements, settleMarket, type Settling } from "./Settlement.ts"

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
  /**
   * An engine parent's state, written in the same transaction as the order's write ahead (before the venue is
   * asked), so the step that files a child and the child's own record take one write instead of two.
   */
  readonly parentState?: StoredParent | undefined
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

export interface FillFilter {
  readonly since?: number | undefined
  readonly marketId?: string | undefined
  readonly orderId?: string | undefined
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
  /** Cash each paper account (`<venue>:paper`) starts with; `startingCash` when not given. */
  readonly paperCash?: F.Fixed
}

const validation = (field: string, message: string) => ApiError.field(field, message)

const DAY_MS = 86_400_000
/** The setting that keeps the order counter past the ids of orders removed because their venue never took them. */
const WITHDRAWN_FLOOR = "withdrawn_order_floor"

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
    const serialized = makeLock()

    const openStatuses = OPEN_STATUSES
    const memory = new Held()
    const lookup = (id: string): Order | undefined => memory.lookup(id)
    const paperCash = config.paperCash ?? config.startingCash
    const ledger = new Ledger((account) => (isPaperAccount(account) ? paperCash : config.startingCash))
    /** Today's fills on a ledger of their own (for the daily loss limit), read from the store when the day turns. */
    let today: { start: number; ledger: Ledger } | undefined
    let counter = 0
    let halt: HaltState | undefined
    let risk: RiskRecord = { version: 0, updated_at: null, updated_by: null, rules: DEFAULT_RULES }
    let fairValues: Record<string, { value: F.Fixed; updated_at: number }> = {}

    // Restore the orders the engine database holds live; finished ones stay in the store until asked for.
    for (const id of yield* store.newestIds) counter = Math.max(counter, orderNumber(id))
    // An order removed because its venue never took it leaves its id in the journal; its number is never given again.
    const withdrawnFloor = (yield* store.getSetting(WITHDRAWN_FLOOR)) as number | undefined
    if (typeof withdrawnFloor === "number") counter = Math.max(counter, withdrawnFloor)
    const liveStatuses = [...openStatuses, "waiting", "triggered"]
    for (const stored of yield* store.ordersWithStatus(liveStatuses)) {
      const order = stored.record as Order & { readonly digest?: string }
      memory.name(order, order.digest)
      memory.remember(order)
      counter = Math.max(counter, orderNumber(order.id))
    }
    // A working engine parent's record is the engine's to render once it runs (the store answers for it before): only
    // its indexes and open count are filed here, so a restart reads and parses no parent record twice.
    for (const head of yield* store.parentHeads(liveStatuses)) {
      memory.fileParent(head)
      counter = Math.max(counter, orderNumber(head.id))
    }
    // The ledger as the last fill left it; an older version's database has its fills but not these rows yet, and
    // they are built from its fills once, in one write.
    const rows = yield* store.ledgerRows
    for (const p of rows.positions) ledger.restore(positionOfRow(p.account, p.marketId, p.value as PositionRow))
    for (const b of rows.balances) ledger.restoreCash(b.account, F.of(b.cashMoved))
    const replay = (yield* store.getSetting("ledger_replay")) as { through: number } | null | undefined
    if (replay != null) {
      const touched = new Set<string>()
      const fills = yield* store.listFills({})
      for (let i = fills.length - 1; i >= 0; i--) {
        if (fills[i]!.seq > replay.through) continue
        const fill = parseFill(fills[i]!.record)
        ledger.record(fill)
        touched.add(`${fill.account}\u0000${fill.marketId}`)
      }
      const positions = ledger.allPositions().filter((p) => touched.has(`${p.account}\u0000${p.marketId}`))
      yield* store.write({
        positions: positions.map((p) => ({ account: p.account, marketId: p.marketId, value: positionRow(p) })),
        balances: [...new Set(positions.map((p) => p.account))].map((account) => ({
          account,
          cashMoved: F.format(ledger.cashMoved(account))
        })),
        settings: [{ key: "ledger_replay", value: null, ts: 0 }]
      })
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

    /** The venue of this id, or the error that names the known ones. */
    const venueOrError = (id: string): Venue | ApiError =>
      gateway.venue(id) ??
      ApiError.unknownVenue(
        id,
        gateway.venues.map((v) => v.info.id)
      )
    const venueOf = (id: string) => orFail(venueOrError(id))

    /** The handle that trades for an account `<venue>:<name>` (the paper one for `<venue>:paper`), or why none does. */
    const tradingOrError = (account: string): Venue | ApiError => {
      const venue = venueOrError(account.slice(0, account.indexOf(":")))
      if (venue instanceof ApiError) return venue
      return gateway.trading(account) ?? validation("account", `no account '${account}' is configured`)
    }
    const tradingOf = (account: string) => orFail(tradingOrError(account))

    /** The record as stored: the order, with the digest of its request when it has one (no copy when not). */
    const withDigest = (order: Order, digest: string | undefined) =>
      digest === undefined ? order : { ...order, digest }
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
      venueOrderId: order.venueOrderId,
      record: withDigest(order, memory.digestOf(order.id))
    })

    /**
     * While a placement runs (under the lock), its writes after the write ahead are queued, not waited for: the
     * placement answers once they are committed, after the lock is released, so the writes of placements that arrive
     * together share one transaction (the next write ahead, or the next leader, takes them).
     */
    let deferring = false
    const write = (batch: Batch) => (deferring ? journal.enqueue(batch) : Effect.asVoid(journal.commit(batch)))

    const emit = (entries: ReadonlyArray<JournalEntry>) => write({ entries })

    const lookups: Lookups = { memory, store }
    const findByClientId = (account: string, clientOrderId: string) => byClientId(lookups, account, clientOrderId)
    const orderOr404 = (id: string) => orderOrNotFound(lookups, id)
    const withChildren = (order: Order) => withChildIds(lookups, order)

    const childUpdates = yield* Queue.unbounded<ChildUpdate>()

    /** Puts a fill into the ledger (and today's) and answers what of a batch stores it: the fill and its ledger rows. */
    const recordFill = (fill: Fill, entries: ReadonlyArray<JournalEntry>): Batch => {
      const position = ledger.record(fill)
      if (today !== undefined && fill.ts >= today.start && fill.ts < today.start + DAY_MS) today.ledger.record(fill)
      const entry = entries.findIndex((e) => e.kind === "fill.new" && (e.payload as { id?: string }).id === fill.id)
      return {
        fills: [
          {
            fill: {
              id: fill.id,
              account: fill.account,
              marketId: fill.marketId,
              orderId: fill.orderId,
              book: fill.book,
              ts: fill.ts,
              record: renderFill(fill)
            },
            entry
          }
        ],
        positions: [{ account: fill.account, marketId: fill.marketId, value: positionRow(position) }],
        balances: [{ account: fill.account, cashMoved: F.format(ledger.cashMoved(fill.account)) }]
      }
    }

    /**
     * Stores the order with its event (after `before`, the events that caused the change) in one write; with a fill,
     * the fill goes into the ledger and the same write carries the fill and the ledger rows it changed.
     */
    const setOrder = Effect.fnUntraced(function* (
      order: Order,
      kind: string,
      fill?: Fill,
      before: ReadonlyArray<JournalEntry> = []
    ) {
      memory.remember(order)
      const entries = [...before, { ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) }]
      const batch: Batch = { orders: [stored(order)], entries }
      yield* write(fill === undefined ? batch : { ...batch, ...recordFill(fill, entries) })
      if (order.parentId !== null && order.heldBy === "venue") yield* Queue.offer(childUpdates, { order, fill })
    })

    /**
     * Writes a new order as `pending` before the venue is asked, with no event yet: a process that dies while the
     * venue answers leaves it there, and the next start asks the venue for it by its client id.
     */
    const writeAhead = (order: Order, parent?: StoredParent) =>
      Effect.suspend(() => {
        memory.remember(order)
        return journal.commit({ orders: [stored(order)], parents: parent === undefined ? undefined : [parent] })
      })

    /** Removes an order written ahead that the venue never took, in one write with its `order.rejected`. */
    const withdraw = (order: Order, entry: JournalEntry) =>
      Effect.suspend(() => {
        memory.drop(order)
        return write({
          removeOrders: [order.id],
          settings: [{ key: WITHDRAWN_FLOOR, value: Math.max(counter, orderNumber(order.id)), ts: entry.ts }],
          entries: [entry]
        })
      })

    // Settlement: positions of a resolved market close at its payout (see Settlement.ts).
    const settling: Settling = { ledger, write, accounts: gateway.accounts }
    const settleIn =
      (paper: boolean): Applied["settle"] =>
      (venue, nativeId, payout, ts) =>
        settleMarket(settling, paper, venue, nativeId, payout, ts)

    const applied: Applied = {
      settle: settleIn(false),
      find: Effect.fnUntraced(function* (venue, venueOrderId) {
        const held = memory.byVenue(venue, venueOrderId)
        if (held !== undefined) return held
        // An order that left memory long ago (a late fill or cancel): the store's venue index finds it.
        return (yield* store.orderByVenueOrderId(venue, venueOrderId))?.record as Order | undefined
      }),
      // A fill queued with a placement's writes is not in the store yet; a second report of it is still a repeat.
      hasFill: (id) => (journal.holdsFill(id) ? Effect.succeed(true) : store.hasFill(id)),
      setOrder
    }
    const applyVenueEvents = (venue: string, events: ReadonlyArray<VenueEvent>) => applyEvents(applied, venue, events)
    /**
     * What a trading handle's own subscription reports touches only the orders of its own accounts: a paper handle's
     * events its paper orders, a venue's events never a paper order.
     */
    const appliedBy = (paper: boolean): Applied => ({
      ...applied,
      settle: settleIn(paper),
      find: (venue, venueOrderId) =>
        Effect.map(applied.find(venue, venueOrderId), (order) =>
          order !== undefined && (order.account.name === PAPER) === paper ? order : undefined
        )
    })
    const applySnapshot = (order: Order, snapshot: VenueOrder) => takeSnapshot(applied, order, snapshot)

    /** Applies what came with a venue's answer; the same events reach the subscription too and are skipped there. */
    const applyAnswer = (venue: string, answer: VenueOrder) => applyVenueEvents(venue, answer.events ?? [])

    // Orders left open by the last run are reconciled with their venue: still there, they follow it; gone, they end.
    yield* reconcile({
      orders: memory.liveOrders(),
      openStatuses,
      gateway,
      lookup,
      setOrder,
      withdraw,
      applyAnswer,
      applySnapshot
    })
    // Markets that resolved while the server was not listening settle now.
    yield* catchUpSettlements(settling, gateway.handles, store.getSetting)

    // One subscription per trading handle (each venue, and its paper handle); events are applied under the lock, in
    // the handle's order.
    for (const handle of gateway.handles) {
      const queue = yield* handle.subscribe
      const own = appliedBy(handle.accounts.length === 1 && handle.accounts[0] === PAPER)
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(queue), (first) =>
            serialized(
              Effect.flatMap(Queue.takeAll(queue), (rest) => applyEvents(own, handle.info.id, [first, ...rest]))
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

    const lockedOf = (account: string) => memory.locked(account)

    const pnlToday = (account: string, now: number) =>
      Effect.gen(function* () {
        const dayStart = Math.floor(now / DAY_MS) * DAY_MS
        // Realized and fees of today's fills, on their own ledger, plus the unrealized of what is held now.
        if (today === undefined || today.start !== dayStart) {
          const day = { start: dayStart, ledger: new Ledger(() => F.ZERO) }
          const fills = yield* store.listFills({ since: dayStart })
          for (let i = fills.length - 1; i >= 0; i--) {
            const fill = parseFill(fills[i]!.record)
            if (fill.ts < dayStart + DAY_MS) day.ledger.record(fill)
          }
          today = day
        }
        let total = F.ZERO
        for (const p of today.ledger.allPositions()) {
          if (p.account === account) total = F.sub(F.add(total, p.realized), p.fees)
        }
        for (const p of ledger.allPositions()) {
          if (p.account !== account) continue
          // What a market that resolved today booked at its payout.
          if (p.settled !== undefined && p.settled.ts >= dayStart) total = F.add(total, p.settled.realized)
          if (p.contracts === 0) continue
          const u = unrealized(p, markOf(p.marketId, yield* bookOf(p.marketId)).mark)
          if (u !== null) total = F.add(total, u)
        }
        return total
      })

    const rate = new PlacementRate()
    const placing: Placing = {
      memory,
      ledger,
      rate,
      venueOrError,
      tradingOrError,
      findByClientId,
      halted: (venue) => (halt !== undefined && (halt.scope === "*" || halt.scope === venue) ? halt : undefined),
      rules: () => risk.rules,
      nextOrderId: () => {
        counter += 1
        return `o_${String(counter).padStart(6, "0")}`
      },
      bookOf,
      markOf,
      pnlToday,
      emit,
      writeAhead,
      withdraw,
      setOrder,
      applyAnswer,
      applySnapshot
    }
    /** Placements started and not yet out of the lock: while there are any, the next one's write takes ours along. */
    let placements = 0
    const placed = Effect.sync(() => {
      deferring = false
      placements -= 1
    })
    // Run uninterruptibly (see `place` below): the flag set here is cleared by the `ensuring` that follows at once.
    const place = Effect.fnUntraced(function* (input: PlaceInput, actor: string) {
      placements += 1
      const exit = yield* Effect.exit(
        serialized(
          Effect.suspend(() => {
            deferring = true
            return Effect.ensuring(placeOrder(placing, input, actor), placed)
          })
        )
      )
      // Answered only once what it wrote is committed.
      yield* journal.flushedBy(placements === 0)
      return yield* exit
    })

    const changing: Changing = { memory, tradingOf, orderOr404, applyAnswer, applySnapshot }
    const cancelOne = (order: Order) => cancelAtVenue(changing, order)

    return {
      place: (input: PlaceInput, actor: string) => place(input, actor).pipe(Effect.uninterruptible),
      /** The order as clients read it (a parent with its children's ids). */
      get: Effect.fnUntraced(function* (id: string) {
        const order = lookup(id) ?? ((yield* store.getOrder(id))?.record as Order | undefined)
        return order === undefined ? undefined : yield* withChildren(order)
      }),
      /** Orders newest first, as clients read them; read from the store, where every change is written with its event. */
      list: Effect.fnUntraced(function* (filter: OrderFilter) {
        const stored = yield* store.listOrders({ ...filter, statuses: filter.status })
        return yield* Effect.forEach(stored, (s) => withChildren(lookup(s.id) ?? (s.record as Order)))
      }),
      /** One page of that list, filtered and cut in the store: at most `limit` orders after the cursor's. */
      page: Effect.fnUntraced(function* (
        filter: OrderFilter,
        page: { readonly after: { createdAt: number; num: number } | undefined; readonly limit: number }
      ) {
        const stored = yield* store.listOrders({
          ...filter,
          statuses: filter.status,
          after: page.after,
          limit: page.limit
        })
        return yield* Effect.forEach(stored, (s) => withChildren(lookup(s.id) ?? (s.record as Order)))
      }),
      cancel: (id: string) => serialized(Effect.flatMap(orderOr404(id), cancelOne)).pipe(Effect.uninterruptible),
      cancelAll: (filter: OrderFilter) =>
        serialized(
          cancelWanted({
            live: memory.liveOrders(),
            wanted: (order) => matches(order, filter),
            marketId: filter.marketId,
            trading: gateway.trading,
            cancelOne,
            lookup,
            setOrder
          })
        ).pipe(Effect.uninterruptible),
      amend: (
        id: string,
        changes: { price?: string | undefined; amount?: string | undefined; expiresAt?: number | undefined }
      ) => serialized(amendAtVenue(changing, id, changes)).pipe(Effect.uninterruptible),
      /** Every fill a filter matches, newest first (by time, then journal seq), read from the store. */
      fills: (filter: FillFilter) =>
        Effect.map(store.listFills(filter), (rows) => rows.map((row) => parseFill(row.record))),
      /** One page of fills, newest first: at most `limit` after the cursor's (time, seq), each with its seq. */
      fillPage: (
        filter: FillFilter,
        page: { readonly after: { ts: number; seq: number } | undefined; readonly limit: number }
      ) =>
        Effect.map(store.listFills({ ...filter, after: page.after, limit: page.limit }), (rows) =>
          rows.map((row) => ({ fill: parseFill(row.record), seq: row.seq }))
        ),
      /** The book labels each (account, market) was filled under. */
      fillBooks: (accounts: ReadonlyArray<string>) => store.fillBooks(accounts),
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
              for (const order of memory.liveOrders()) {
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
      held: Effect.sync(() => memory.sizes()),
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
          Effect.suspend(() => {
            if (options.digest !== undefined) {
              memory.name(order, options.digest)
            }
            // A working parent's record is rendered from the engine's state of it when read (see renderParents).
            memory.remember(order, options.state.live)
            return journal.commit({
              orders: [stored(order)],
              parents: [options.state],
              entries: [
                { ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) },
                ...(options.after ?? [])
              ]
            })
          })
        ),
      /**
       * Who holds working parents (the engine): the desk keeps no record of a working parent of its own, it renders
       * one from the holder's state of it when read, and lets go of those it loaded at start that the holder works.
       * Undefined when the engine stops.
       */
      renderParents: (holder: ParentHolder | undefined) => Effect.sync(() => memory.renderParents(holder)),
      /** The next parent id: parents and children share one counter, parents carry the `mo_` prefix. */
      nextParentId: serialized(
        Effect.sync(() => {
          counter += 1
          return `mo_${String(counter).padStart(6, "0")}`
        })
      ),
      /** Checks what every order of the engine needs before it is accepted: venue, market, tick, lot, halt. */
      resolveMarket: Effect.fnUntraced(function* (marketId: string) {
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
      openOrderCount: Effect.sync(() => memory.openTotal())
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
