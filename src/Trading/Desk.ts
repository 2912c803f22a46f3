/** The trading desk: plain orders on the venues, fills into the ledger, risk rules, halts, and the journal. */
import { randomBytes } from "node:crypto"
import { Clock, Context, Effect, type Exit, Layer, Option, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import * as Id from "../Domain/Ids.ts"
import { accountId, type Order, orderNumber, renderOrder, TERMINAL } from "../Domain/Order.ts"
import { type AccountRequest, badMarketId, marketOrError } from "../Domain/OrderRequest.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import type { Batch, JournalEntry, StoredOrder, StoredParent } from "../Services/OrderStore.ts"
import { OrderStore } from "../Services/OrderStore.ts"
import {
  isPaperAccount,
  PAPER,
  type StreamStatus,
  type Venue,
  type VenueEvent,
  type VenueOrder,
  VenueGateway
} from "../Services/VenueGateway.ts"
import { Held, OPEN_STATUSES, type ParentHolder } from "./Held.ts"
import { ChildUpdates } from "./ChildUpdates.ts"
import { amendAtVenue, cancelAtVenue, cancelAtVenueNow, type Changing, type ChangingNow } from "./Changes.ts"
import { Journal } from "./Journal.ts"
import { makeLock } from "./Lock.ts"
import { byClientId, byClientIdNow, type Lookups, matches, orderOrNotFound, withChildIds } from "./Lookups.ts"
import { orFail, type Placing, placeOrder, placeOrderNow, PlacementRate, type PlacingNow } from "./Placement.ts"
import { type Fill, Ledger, type Position, type PositionRow, positionOfRow, positionRow, unrealized } from "./Ledger.ts"
import { DEFAULT_RULES, type RiskRules } from "./Risk.ts"
import { cancelWanted } from "./BulkCancel.ts"
import { reconcile } from "./Reconcile.ts"
import { InFlight } from "./InFlight.ts"
import { makeLanes } from "./Lanes.ts"
import { DEFAULT_OUTCOME, type OutcomeConfig, settleOne, settleUnknown } from "./Outcome.ts"
import { recordOf, type SyncRecord, type Syncing, syncVenue } from "./VenueSync.ts"
import { amendRemote, boundedVenue, cancelRemote, placeRemote, type RemoteDesk, requestOf } from "./Remote.ts"
import {
  type Applied,
  applyEvents,
  applyEventsNow,
  type AppliedNow,
  takeSnapshot,
  takeSnapshotNow
} from "./VenueEvents.ts"
import { catchUpSettlements, checkRedemptions, resolutionsSince, settleMarket, type Settling } from "./Settlement.ts"

/** What the engine writes with a parent's record: the digest of its request (when new), its state and its events. */
export interface ParentWrite {
  readonly digest?: string | undefined
  readonly state: StoredParent
  readonly after?: ReadonlyArray<JournalEntry> | undefined
}

/** A plain order to place: the order request on its account, and what an engine parent adds to its child's. */
export interface PlaceInput extends AccountRequest {
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

export type { ChildUpdate } from "./ChildUpdates.ts"

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
  /** How long a placement on a remote venue waits for its answer before its outcome is unknown (default 15 s). */
  readonly placementTimeoutMs?: number
  /** How orders of unknown outcome are looked up (see `OutcomeConfig`). */
  readonly outcome?: Partial<OutcomeConfig>
  /** How often remote venues' orders and fills are read back to find drift (default a minute). */
  readonly reconcileEveryMs?: number
}

/** The setting that keeps the prefix of this home's venue client ids, made once at random. */
const CLIENT_PREFIX = "venue_client_prefix"

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
    const lanes = makeLanes(yield* Effect.scope)
    const inflight = new InFlight()
    const remote = (handle: Venue | undefined) => handle?.remote === true
    const anyRemote = gateway.handles.some(remote)
    /** Venues whose record is to be read back soon, and why. */
    const syncWanted = new Map<string, string>()
    const syncSignal = yield* Queue.sliding<void>(1)
    const wantSync = (venue: string, why: string) => {
      if (!syncWanted.has(venue)) syncWanted.set(venue, why)
      Queue.unsafeOffer(syncSignal, undefined)
    }

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
    // its indexes and open count are filed here, so a restart reads and parses no parent record twice, and nothing
    // of a parent neither named by a client id nor open comes out of the store.
    counter = Math.max(counter, yield* store.highestNumber(liveStatuses))
    for (const head of yield* store.parentHeads(liveStatuses, [...openStatuses])) memory.fileParent(head)
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
    // Orders on a remote venue carry client ids that never repeat: this home's prefix, then the order's id. A new or
    // wiped database makes a new prefix, so ids of an older home on the same account are never sent again.
    let clientPrefix = (yield* store.getSetting(CLIENT_PREFIX)) as string | undefined
    if (clientPrefix === undefined && anyRemote) {
      clientPrefix = `cb${randomBytes(8).toString("hex").slice(0, 10)}`
      yield* store.write({ settings: [{ key: CLIENT_PREFIX, value: clientPrefix, ts: 0 }] })
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
      const parts = Id.parseAccountId(account)
      if (parts === undefined) return validation("account", "must be '<venue>:<name>'")
      const venue = venueOrError(parts.venue)
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

    const childUpdates = new ChildUpdates()

    /** A parent's record, state and events as one write; the desk's memory of the record is set as it is made. */
    const parentBatch = (order: Order, kind: string, options: ParentWrite): Batch => {
      if (options.digest !== undefined) memory.name(order, options.digest)
      // A working parent's record is rendered from the engine's state of it when read (see renderParents).
      memory.remember(order, options.state.live)
      return {
        orders: [stored(order)],
        parents: [options.state],
        entries: [{ ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) }, ...(options.after ?? [])]
      }
    }

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
    const setOrder = (order: Order, kind: string, fill?: Fill, before: ReadonlyArray<JournalEntry> = []) =>
      Effect.suspend(() => {
        const batch = orderBatch(order, kind, fill, before)
        return Effect.map(write(batch), () => childUpdate(order, fill))
      })
    /** The order remembered, and the write that stores it with its event (and its fill with the ledger rows). */
    const orderBatch = (order: Order, kind: string, fill: Fill | undefined, before: ReadonlyArray<JournalEntry>) => {
      memory.remember(order)
      const entries = [...before, { ts: order.updatedAt, kind, key: order.id, payload: renderOrder(order) }]
      const orders = [stored(order)]
      if (fill === undefined) return { orders, entries }
      const { fills, positions, balances } = recordFill(fill, entries)
      return { orders, entries, fills, positions, balances }
    }
    /** A child's change reaches its parent's engine once stored. */
    const childUpdate = (order: Order, fill: Fill | undefined) => {
      if (order.parentId !== null && order.heldBy === "venue") childUpdates.offer({ order, fill })
    }

    /**
     * Writes a new order as `pending` before the venue is asked, with no event yet: a process that dies while the
     * venue answers leaves it there, and the next start asks the venue for it by its client id.
     */
    const writeAhead = (order: Order, parent?: StoredParent) =>
      Effect.suspend(() => journal.commit(aheadBatch(order, parent)))
    const aheadBatch = (order: Order, parent: StoredParent | undefined): Batch => {
      memory.remember(order)
      return { orders: [stored(order)], parents: parent === undefined ? undefined : [parent] }
    }

    /** Removes an order written ahead that the venue never took, in one write with its `order.rejected`. */
    const withdraw = (order: Order, entry: JournalEntry) => Effect.suspend(() => write(withdrawBatch(order, entry)))
    const withdrawBatch = (order: Order, entry: JournalEntry): Batch => {
      memory.drop(order)
      return {
        removeOrders: [order.id],
        settings: [{ key: WITHDRAWN_FLOOR, value: Math.max(counter, orderNumber(order.id)), ts: entry.ts }],
        entries: [entry]
      }
    }

    /** A write in plain code: made only where the journal and the store write at once (`plainNow`). */
    const commitNow = (batch: Batch) => {
      if (journal.commitNow(batch) === undefined) throw new Error("the journal could not write at once")
    }
    const storedNow = store.now
    /** Whether writes and the store's reads can be made in plain code now. */
    const plainNow = () => storedNow !== undefined && journal.readyNow()
    /** The desk's lookups and writes in plain code; with `paper`, only the orders of that kind of account are found. */
    const appliedNowBy = (paper: boolean | undefined): AppliedNow => ({
      find: (venue, venueOrderId) => {
        const order =
          memory.byVenue(venue, venueOrderId) ??
          (storedNow?.orderByVenueOrderId(venue, venueOrderId)?.record as Order | undefined)
        return paper === undefined || order === undefined || (order.account.name === PAPER) === paper
          ? order
          : undefined
      },
      hasFill: (id) => journal.holdsFill(id) || storedNow?.hasFill(id) === true,
      setOrder: (order, kind, fill, before = []) => {
        commitNow(orderBatch(order, kind, fill, before))
        childUpdate(order, fill)
      }
    })
    const appliedNow = appliedNowBy(undefined)

    // Settlement: positions of a resolved market close at its payout (see Settlement.ts).
    const settling: Settling = {
      ledger,
      write,
      accounts: gateway.accounts,
      redeems: (account) => gateway.trading(account)?.unredeemed !== undefined
    }
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

    /** The order a venue client id of this home names (a remote venue's report may name only that). */
    const byVenueClientId = (clientOrderId: string): Order | undefined =>
      clientPrefix !== undefined && clientOrderId.startsWith(`${clientPrefix}-`)
        ? lookup(clientOrderId.slice(clientPrefix.length + 1))
        : undefined

    /**
     * A remote venue's reports that name an order whose placement is unanswered are held for it (applied once, after
     * the answer); stream changes become events and reads back. Answers what is applied now.
     */
    const route = (handle: Venue, events: ReadonlyArray<VenueEvent>, now: number): Array<VenueEvent> => {
      const venue = handle.info.id
      const now_: Array<VenueEvent> = []
      for (const e of events) {
        if (e._tag === "Stream") {
          streamNews.push({ venue, event: e })
          continue
        }
        if (e._tag !== "Fill" && e._tag !== "FillReversed" && e._tag !== "Order") {
          now_.push(e)
          continue
        }
        const venueOrderId = e._tag === "Order" ? e.order.venueOrderId : e.fill.venueOrderId
        if (memory.byVenue(venue, venueOrderId) !== undefined) {
          now_.push(e)
          continue
        }
        const named = byVenueClientId(e._tag === "Order" ? e.order.clientOrderId : e.fill.clientOrderId)
        if (named !== undefined && named.venueOrderId === null && !TERMINAL.has(named.status)) {
          inflight.hold(named.id, e)
          continue
        }
        if (inflight.waitingOn(venue)) {
          inflight.orphan(venue, venueOrderId, e, now)
          continue
        }
        now_.push(e)
      }
      return now_
    }
    /** Stream changes seen by `route`, written as events (and answered with a read back) once the batch is applied. */
    const streamNews: Array<{ venue: string; event: VenueEvent & { _tag: "Stream" } }> = []
    const streamEntries = Effect.suspend(() => {
      if (streamNews.length === 0) return Effect.void
      const news = streamNews.splice(0)
      const entries: Array<JournalEntry> = news.map(({ venue, event }) => ({
        ts: event.ts,
        kind: event.state === "stale" ? "venue.stream_stale" : "venue.stream_resumed",
        key: venue,
        payload: {
          venue,
          channel: event.channel,
          state: event.state,
          last_message_age_ms: event.lastMessageAgeMs
        }
      }))
      for (const { venue, event } of news) if (event.state === "resync") wantSync(venue, "stream_resync")
      return emit(entries)
    })

    /** Per handle that is not a remote venue: applies what it reported in plain code, or answers false (nothing done). */
    const plainOwn = new Map<Venue, (events: ReadonlyArray<VenueEvent>) => boolean>()
    // One subscription per trading handle (each venue, and its paper handle); events are applied under the lock, in
    // the handle's order.
    for (const handle of gateway.handles) {
      const queue = yield* handle.subscribe
      const paper = handle.accounts.length === 1 && handle.accounts[0] === PAPER
      const own = appliedBy(paper)
      const ownNow = appliedNowBy(paper)
      const isRemote = remote(handle)
      /** A batch of fills and order changes is applied in plain code where the writes can be; any other through Effects. */
      const applyOwn = (events: ReadonlyArray<VenueEvent>) =>
        Effect.suspend(() => {
          if (!plainNow() || events.some((e) => e._tag === "Settled" || e._tag === "FillReversed")) {
            return applyEvents(own, handle.info.id, events)
          }
          applyEventsNow(ownNow, handle.info.id, events)
          return Effect.void
        })
      // What a handle that answers in process reported can be handed straight to the desk instead (`applyNow`): in
      // plain code when nothing it published waits to be applied before it and the lock and writes are free.
      if (!isRemote) {
        plainOwn.set(handle, (events) => {
          if (!plainNow() || Option.getOrElse(queue.unsafeSize(), () => 0) > 0) return false
          if (events.some((e) => e._tag === "Settled" || e._tag === "FillReversed")) return false
          return (
            serialized.now(() => {
              applyEventsNow(ownNow, handle.info.id, events)
              return true
            }) === true
          )
        })
      }
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.flatMap(Queue.take(queue), (first) =>
            serialized(
              Effect.flatMap(Queue.takeAll(queue), (rest) =>
                isRemote
                  ? Effect.flatMap(Clock.currentTimeMillis, (now) =>
                      Effect.zipRight(
                        applyEvents(own, handle.info.id, route(handle, [first, ...rest], now)),
                        streamEntries
                      )
                    )
                  : applyOwn([first, ...rest])
              )
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
      const parts = Id.parseMarketId(marketId)
      const venue = parts === undefined ? undefined : gateway.venue(parts.venue)
      if (parts === undefined || venue === undefined) return Effect.succeed(undefined)
      return venue.book(parts.native).pipe(Effect.orElseSucceed(() => undefined))
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
      venueClientId: (trading, id) => (remote(trading) && clientPrefix !== undefined ? `${clientPrefix}-${id}` : id),
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
    const placed = <A, E>(exit: Exit.Exit<A, E>) => {
      deferring = false
      placements -= 1
      return exit
    }
    // Run uninterruptibly (see `place` below): the flag set here is cleared as the placement ends, however it ends.
    const place = Effect.fnUntraced(function* (input: PlaceInput, actor: string) {
      // A remote venue's order leaves the lock for its lane; an engine's child is answered as written ahead.
      if (onRemote(input.account)) return yield* placeRemote(remoteDesk, input, actor, input.parentId === undefined)
      placements += 1
      // Uninterruptible throughout, so the exit of the placement is where it ends, whichever way it ends.
      const exit = yield* Effect.exit(
        serialized(
          Effect.suspend(() => {
            deferring = true
            return Effect.flatMap(Effect.exit(placeOrder(placing, input, actor)), placed)
          })
        )
      )
      // Answered only once what it wrote is committed.
      yield* journal.flushedBy(placements === 0)
      return yield* exit
    })

    const placingNow: PlacingNow | undefined =
      storedNow === undefined
        ? undefined
        : {
            placing,
            findByClientId: (account, clientOrderId) => byClientIdNow(lookups, storedNow, account, clientOrderId),
            emit: (entries) => commitNow({ entries }),
            // A store in memory survives no crash: the order is first written with the venue's answer, in the same
            // call. Only the parent state the step left to this placement is written now, in a batch of the shape of
            // every write ahead (the store's reads of batches stay monomorphic).
            writeAhead: (_order, parent) => {
              if (parent !== undefined) commitNow({ orders: [], parents: [parent] })
            },
            withdraw: (order, entry) => commitNow(withdrawBatch(order, entry)),
            setOrder: (order, kind) => appliedNow.setOrder(order, kind),
            applyAnswer: (venue, answer) => applyEventsNow(appliedNow, venue, answer.events ?? []),
            applySnapshot: (order, snapshot) => takeSnapshotNow(appliedNow, order, snapshot)
          }

    const changing: Changing = { memory, tradingOf, orderOr404, applyAnswer, applySnapshot }
    const cancelOne = (order: Order) => cancelAtVenue(changing, order)
    const changingNow: ChangingNow | undefined =
      placingNow === undefined
        ? undefined
        : {
            memory,
            tradingOrError,
            applyAnswer: placingNow.applyAnswer,
            applySnapshot: placingNow.applySnapshot
          }

    const timeoutMs = config.placementTimeoutMs ?? 15_000
    const remoteDesk: RemoteDesk = {
      placing,
      memory,
      inflight,
      lanes,
      serialized,
      timeoutMs,
      needsBook: () => risk.rules.price_collar !== null,
      bookOf,
      setOrder,
      applyEvents: (venue, events) => applyEvents(appliedBy(false), venue, events),
      // Only the answer is applied under the lock; the venue call is made outside it.
      changing: {
        memory,
        tradingOf: (account) => Effect.map(tradingOf(account), (venue) => boundedVenue(venue, timeoutMs)),
        orderOr404,
        applyAnswer: (venue, answer) => serialized(applyAnswer(venue, answer)),
        applySnapshot: (order, snapshot) =>
          serialized(Effect.suspend(() => applySnapshot(memory.lookup(order.id) ?? order, snapshot)))
      },
      tradingOf
    }
    /** Whether an account trades on a remote venue (its orders go through lanes). */
    const onRemote = (account: string) => !isPaperAccount(account) && remote(gateway.trading(account))
    /** A plain order on a remote venue (an engine's parent is the engine's to cancel). */
    const remoteOrder = (order: Order) => order.heldBy === "venue" && onRemote(accountId(order.account))

    /** Cancels one order wherever it is: in its lane on a remote venue, under the lock elsewhere. */
    const cancelAnywhere = (order: Order, wait: boolean) =>
      remoteOrder(order)
        ? cancelRemote(remoteDesk, order.id, order, wait)
        : serialized(Effect.suspend(() => cancelOne(memory.lookup(order.id) ?? order)))

    // Orders whose answer was lost are looked up until their venue says; venues' records are read back on a schedule.
    const outcome: OutcomeConfig = { ...DEFAULT_OUTCOME, ...config.outcome }
    const syncRecords = new Map<string, SyncRecord>()
    const outcomes = {
      r: remoteDesk,
      config: outcome,
      tradingOf: (account: string) => gateway.trading(account),
      emit,
      drift: (
        venue: string,
        account: string,
        ts: number,
        found: ReadonlyArray<Record<string, unknown>>
      ): JournalEntry => ({
        ts,
        kind: "venue.drift",
        key: venue,
        payload: { venue, account, why: "unknown_outcome", found }
      })
    }
    const syncing: Syncing = {
      serialized,
      find: applied.find,
      byVenueClientId,
      hasFill: applied.hasFill,
      applyEvents: remoteDesk.applyEvents,
      applySnapshot,
      // A sync looks only at orders at a venue: the engine's working parents are not rendered for it.
      liveOrders: () => memory.liveOrders(false),
      lookup,
      settleUnknown: (id: string) =>
        Effect.suspend(() => {
          const u = inflight.unknown.get(id)
          return u === undefined ? Effect.void : settleOne(outcomes, u)
        }),
      getWatermark: (venue) =>
        Effect.map(store.getSetting(`venue_fills_through:${venue}`), (v) => (typeof v === "number" ? v : undefined)),
      setWatermark: (venue, ts) => store.write({ settings: [{ key: `venue_fills_through:${venue}`, value: ts, ts }] }),
      emit,
      settlements: (handle) =>
        Effect.flatMap(resolutionsSince(handle, store.getSetting), ({ venue, paper, resolved }) =>
          resolved.length === 0
            ? Effect.void
            : serialized(
                Effect.forEach(resolved, (r) => settleMarket(settling, paper, venue, r.nativeId, r.payout, r.ts), {
                  discard: true
                })
              )
        ),
      redemptions: (handle) => checkRedemptions(settling, handle, serialized),
      records: syncRecords
    }

    if (anyRemote) {
      // Orders a previous run left with an unknown outcome are looked up again from the start.
      for (const order of memory.liveOrders()) {
        if (!remoteOrder(order) || order.venueOrderId !== null || order.info["outcome"] !== "unknown") continue
        inflight.unknown.set(order.id, {
          id: order.id,
          account: accountId(order.account),
          venue: order.venue,
          request: requestOf(order),
          sentAt: order.createdAt,
          absences: 0,
          lastLookAt: 0,
          failures: 0
        })
      }
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.zipRight(
            Effect.sleep(Math.max(50, Math.min(500, outcome.firstLookMs / 2))),
            Effect.suspend(() => (inflight.unknown.size === 0 ? Effect.void : settleUnknown(outcomes)))
          )
        )
      )
      // Only handles that trade for an account have a record to read back.
      const remoteHandles = gateway.handles.filter((h) => remote(h) && h.accounts.length > 0)
      for (const handle of remoteHandles) wantSync(handle.info.id, "start")
      const every = config.reconcileEveryMs ?? 60_000
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const woken = yield* Effect.raceFirst(
              Effect.as(Queue.take(syncSignal), "asked" as const),
              Effect.as(Effect.sleep(every), "periodic" as const)
            )
            const asked = new Map(syncWanted)
            syncWanted.clear()
            for (const handle of remoteHandles) {
              const why = asked.get(handle.info.id) ?? (woken === "periodic" ? "periodic" : undefined)
              if (why === undefined) continue
              yield* syncVenue(syncing, handle, why).pipe(
                Effect.catchAllCause((cause) =>
                  Effect.sync(() => {
                    recordOf(syncRecords, handle.info.id).lastError = String(cause)
                  })
                )
              )
            }
          })
        )
      )
    }

    return {
      place: (input: PlaceInput, actor: string) => place(input, actor).pipe(Effect.uninterruptible),
      /**
       * `place` in plain code at `now`, when it needs no wait: on a venue that answers in process (`Venue.now`), with
       * the desk's lock free, a journal and store that write at once and no risk rule that reads the market or the
       * day's fills. The same checks, writes and answer; undefined, with nothing done, when it cannot.
       */
      placeNow: (input: PlaceInput, actor: string, now: number) =>
        placingNow === undefined || !plainNow()
          ? undefined
          : serialized.now(() => placeOrderNow(placingNow, input, actor, now)),
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
      cancel: (id: string) =>
        Effect.flatMap(orderOr404(id), (order) =>
          remoteOrder(order)
            ? cancelRemote(remoteDesk, id, order, true)
            : serialized(Effect.flatMap(orderOr404(id), cancelOne))
        ).pipe(Effect.uninterruptible),
      /** Pulls an engine's child: on a remote venue the cancel is queued in its lane and not waited for. */
      cancelChild: (id: string) =>
        Effect.flatMap(orderOr404(id), (order) => cancelAnywhere(order, false)).pipe(Effect.uninterruptible),
      /**
       * `cancelChild` in plain code at `now`, where `placeNow` could place: a child the desk holds in memory, on a venue
       * that cancels in process, with the desk's lock free. The same writes and answer; undefined, with nothing done,
       * when it cannot.
       */
      cancelChildNow: (id: string, now: number): Order | ApiError | undefined => {
        if (changingNow === undefined || !plainNow()) return undefined
        const order = memory.lookup(id)
        if (order === undefined || remoteOrder(order)) return undefined
        return serialized.now(() => cancelAtVenueNow(changingNow, order, now))
      },
      cancelAll: (filter: OrderFilter) =>
        Effect.gen(function* () {
          const live = memory.liveOrders().filter((o) => matches(o, filter))
          const far = live.filter(remoteOrder)
          // Orders still in flight are canceled as soon as their venue's id is known.
          for (const o of far) if (o.venueOrderId === null) yield* cancelRemote(remoteDesk, o.id, o, false)
          const atVenue = far.filter((o) => o.venueOrderId !== null)
          const remoteCount =
            atVenue.length === 0
              ? 0
              : yield* cancelWanted({
                  live: memory.liveOrders().filter(remoteOrder),
                  wanted: (order) => matches(order, filter),
                  marketId: filter.marketId,
                  trading: gateway.trading,
                  cancelOne: (order) => cancelRemote(remoteDesk, order.id, order, true),
                  lookup,
                  setOrder: (order, kind) => serialized(setOrder(order, kind))
                })
          const nearCount = yield* serialized(
            Effect.suspend(() =>
              cancelWanted({
                live: memory.liveOrders().filter((o) => !remoteOrder(o)),
                wanted: (order) => matches(order, filter),
                marketId: filter.marketId,
                trading: gateway.trading,
                cancelOne,
                lookup,
                setOrder
              })
            )
          )
          return remoteCount + nearCount
        }).pipe(Effect.uninterruptible),
      amend: (
        id: string,
        changes: { price?: string | undefined; amount?: string | undefined; expiresAt?: number | undefined }
      ) =>
        Effect.flatMap(orderOr404(id), (order) =>
          remoteOrder(order) ? amendRemote(remoteDesk, order, changes) : serialized(amendAtVenue(changing, id, changes))
        ).pipe(Effect.uninterruptible),
      /** Every fill a filter matches, newest first (by time, then journal seq), read from the store. */
      fills: (filter: FillFilter) =>
        Effect.map(store.listFills(filter), (rows) => rows.map((row) => parseFill(row.record))),
      /**
       * The fills of these accounts the store wrote from its `from`-th fill on, in the order written, each with its seq,
       * and where the next read starts; undefined when the store cannot read them at once (`fills` is the way).
       */
      fillsNow: (accounts: ReadonlyArray<string>, from: number) => {
        const rows = store.now?.fillsFrom(from)
        if (rows === undefined) return undefined
        const fills: Array<{ readonly fill: Fill; readonly seq: number }> = []
        for (const row of rows)
          if (accounts.includes(row.account)) fills.push({ fill: parseFill(row.record), seq: row.seq })
        return { fills, next: from + rows.length }
      },
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
      /** `ledgerPositions` read at once. */
      positionsNow: () => ledger.allPositions(),
      /** An account's cash as `balances` answers it, read at once. */
      cashNow: (account: string) => ledger.cashOf(account),
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
            const far: Array<Order> = []
            if (input.policy === "cancel") {
              for (const order of memory.liveOrders()) {
                if (TERMINAL.has(order.status) || (input.scope !== "*" && order.venue !== input.scope)) continue
                if (remoteOrder(order)) {
                  far.push(order)
                  continue
                }
                const after = yield* cancelOne(order).pipe(Effect.orElseSucceed(() => order))
                if (after.status === "canceled") canceled++
              }
            }
            return { halt: halt!, canceled, far }
          })
        ).pipe(
          // Remote venues' orders are pulled in their lanes, all at once (those in flight once their id is known).
          Effect.flatMap(({ halt, canceled, far }) =>
            Effect.map(
              Effect.forEach(
                far,
                (order) => cancelRemote(remoteDesk, order.id, order, true).pipe(Effect.orElseSucceed(() => order)),
                { concurrency: "unbounded" }
              ),
              (after) => ({ halt, canceled: canceled + after.filter((o) => o.status === "canceled").length })
            )
          ),
          Effect.uninterruptible
        ),
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
      /** Per remote venue: its streams, orders in flight or of unknown outcome, its lanes, and its last reconcile. */
      venueStates: Effect.gen(function* () {
        const counts = inflight.counts()
        const depths = lanes.depths()
        const out: Record<string, VenueState> = {}
        for (const handle of gateway.handles) {
          if (!remote(handle)) continue
          const id = handle.info.id
          const sync = syncRecords.get(id)
          out[id] = {
            streams: handle.streams === undefined ? [] : yield* handle.streams,
            in_flight: counts[id]?.in_flight ?? 0,
            unknown_orders: counts[id]?.unknown ?? 0,
            queued: Object.entries(depths)
              .filter(([account]) => Id.parseAccountId(account)?.venue === id)
              .reduce((n, [, d]) => n + d, 0),
            last_reconcile_at: sync?.lastAt ?? null,
            last_reconcile_error: sync?.lastError ?? null,
            drift: sync?.lastDrift ?? [],
            drift_total: sync?.driftTotal ?? 0
          }
        }
        return out
      }),
      /** Reads a remote venue's record back now (the periodic reconcile, on demand). */
      reconcileVenue: (venue: string) =>
        Effect.suspend(() => {
          const handle = gateway.handles.find((h) => h.info.id === venue && remote(h))
          return handle === undefined ? Effect.void : syncVenue(syncing, handle, "asked")
        }),
      /** Changes of engine children, in the order they happened. */
      childUpdates,
      /**
       * What a handle reported of its own orders (fills and order changes), applied in plain code now as its
       * subscription would apply it, for one whose events its caller holds instead of publishing them: true when done;
       * false, with nothing done, when they must be published (a settlement, the lock held, a write that waits, or
       * events of the handle's still waiting to be applied).
       */
      applyNow: (handle: Venue, events: ReadonlyArray<VenueEvent>): boolean => plainOwn.get(handle)?.(events) ?? false,
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
      putParent: (order: Order, kind: string, options: ParentWrite) =>
        serialized(Effect.suspend(() => journal.commit(parentBatch(order, kind, options)))),
      /**
       * `putParent` in plain code when the lock is free and the journal writes at once: answers whether it was done
       * (when not, nothing was stored and `putParent` is the way).
       */
      putParentNow: (order: Order, kind: string, options: ParentWrite): boolean =>
        serialized.now(() => journal.commitNow(parentBatch(order, kind, options)) !== undefined) === true,
      /** An order the desk holds in memory (a live or recent one), with no read of the store. */
      heldNow: (id: string): Order | undefined => lookup(id),
      /** The status of an order the desk holds, as `heldNow` would render it (undefined for one it does not hold). */
      statusNow: (id: string): Order["status"] | undefined => memory.statusOf(id),
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
      /** The venue and market of an order of the engine: a market that does not trade now is a 409 `market_halted`. */
      resolveMarket: Effect.fnUntraced(function* (marketId: string) {
        const parts = Id.parseMarketId(marketId)
        if (parts === undefined) return yield* Effect.fail(badMarketId())
        const venue = yield* venueOf(parts.venue)
        const found = yield* Effect.mapError(venue.market(parts.native), fromVenueError)
        const market = yield* orFail(marketOrError(venue.info.id, marketId, found))
        return { venue, market }
      }),
      haltedFor: (venue: string) =>
        Effect.sync(() => (halt !== undefined && (halt.scope === "*" || halt.scope === venue) ? halt : undefined)),
      openOrderCount: Effect.sync(() => memory.openTotal())
    }
  })

/** A remote venue's state as `GET /trading/status` shows it. */
export interface VenueState {
  readonly streams: ReadonlyArray<StreamStatus>
  readonly in_flight: number
  readonly unknown_orders: number
  readonly queued: number
  readonly last_reconcile_at: number | null
  readonly last_reconcile_error: string | null
  readonly drift: ReadonlyArray<Record<string, unknown>>
  readonly drift_total: number
}

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
