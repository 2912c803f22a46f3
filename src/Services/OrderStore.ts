/** The OrderStore seam: orders, engine parents' state and the append-only journal, written together in one batch. */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"
import { orderNumber, PARENT_ID_PREFIX } from "../Domain/Order.ts"
import { TwoKeys } from "../Domain/TwoKeys.ts"
import { EngineWriter, type Statement } from "../Persistence/Sql.ts"

/** Newest first: later creation, then the higher order number. */
const newestFirst = (a: StoredOrder, b: StoredOrder) =>
  b.createdAt - a.createdAt || orderNumber(b.id) - orderNumber(a.id)

/** Whether an order comes after the cursor's in the newest-first order. */
const afterOrder = (o: StoredOrder, after: OrderQuery["after"]) =>
  after === undefined ||
  o.createdAt < after.createdAt ||
  (o.createdAt === after.createdAt && orderNumber(o.id) < after.num)

export interface JournalEntry {
  readonly ts: number
  readonly kind: string
  readonly key: string
  readonly payload: unknown
}

export interface JournalEvent extends JournalEntry {
  /** Strictly increasing from 1, with no gap. */
  readonly seq: number
}

export interface StoredOrder {
  readonly id: string
  readonly account: string
  readonly clientOrderId: string
  readonly venue: string
  readonly marketId: string
  readonly status: string
  readonly parentId: string | null
  readonly book: string
  readonly createdAt: number
  readonly updatedAt: number
  /** The venue's id of the order, once the venue took it. */
  readonly venueOrderId?: string | null | undefined
  /** The order record as the API shows it. */
  readonly record: unknown
}

/** Which orders a list wants; every field given must match. */
export interface OrderQuery {
  readonly statuses?: ReadonlyArray<string> | undefined
  readonly venue?: string | undefined
  readonly marketId?: string | undefined
  readonly parentId?: string | undefined
  readonly book?: string | undefined
  readonly accounts?: ReadonlyArray<string> | undefined
  /** Only orders after this one in the list order (newest first): a page's keyset cursor. */
  readonly after?: { readonly createdAt: number; readonly num: number } | undefined
  readonly limit?: number | undefined
}

/** A fill as stored beside its `fill.new` event. */
export interface StoredFill {
  readonly id: string
  readonly account: string
  readonly marketId: string
  readonly orderId: string
  readonly book: string
  readonly ts: number
  /** The fill as the API shows it. */
  readonly record: unknown
}

/** A fill read back: its seq is the seq of its `fill.new` event. */
export interface FillRow extends StoredFill {
  readonly seq: number
}

/** Which fills a list wants, newest first (by time, then seq); every field given must match. */
export interface FillQuery {
  readonly accounts?: ReadonlyArray<string> | undefined
  readonly marketId?: string | undefined
  readonly orderId?: string | undefined
  readonly since?: number | undefined
  /** Only fills after this one in the list order: a page's keyset cursor. */
  readonly after?: { readonly ts: number; readonly seq: number } | undefined
  readonly limit?: number | undefined
}

/** One (account, market) row of the ledger, and one account's cash moved by fills, as the ledger serializes them. */
export interface StoredPosition {
  readonly account: string
  readonly marketId: string
  readonly value: unknown
}

export interface StoredBalance {
  readonly account: string
  readonly cashMoved: string
}

/** An engine parent as the desk files it at start: its indexes and its open count, not its record. */
export interface ParentHead {
  readonly id: string
  readonly account: string
  readonly clientOrderId: string
  readonly status: string
  /** The digest of the body it was first placed with (absent for a parent written without one). */
  readonly digest: string | undefined
}

export interface StoredParent {
  readonly id: string
  readonly live: boolean
  /** The parent's whole state, enough to restore it after a restart. */
  readonly state: unknown
  readonly updatedAt: number
  /**
   * What a start needs of the parent without reading its state, from the state as it is written (null: the start
   * reads the state whole). A store that reads states later one by one (`parentState`) keeps it beside the state.
   */
  readonly summarize?: ((state: unknown) => string | null) | undefined
}

/**
 * A live parent as a start reads it: its summary, and its state only where there is no summary or the store has it
 * at hand anyway. `summary` is null for a state stored without one, undefined where the store keeps none.
 */
export interface StartParent {
  readonly id: string
  readonly summary: string | null | undefined
  /** Absent: read it with `parentState` when the parent is first used. */
  readonly state?: unknown
  readonly updatedAt?: number | undefined
}

/** A bucket: one proposition listed on several venues (its record as the API shows it). */
export interface StoredBucket {
  readonly id: string
  /** The counter inside the id (`b_000003` → 3). */
  readonly num: number
  readonly status: "active" | "archived"
  readonly createdAt: number
  readonly record: unknown
}

/** Which buckets a list wants, oldest first; `after` is the number of the last one of the page before. */
export interface BucketQuery {
  readonly status?: "active" | "archived" | undefined
  readonly after?: number | undefined
  readonly limit: number
}

/** A named document (risk rules, fair values, halt state). */
export interface StoredSetting {
  readonly key: string
  readonly value: unknown
  readonly ts: number
}

/**
 * What one change writes: orders, parents' states, settings and the journal entries that tell of them. A batch is
 * stored whole or not at all, so no order or parent is ever stored without its event, nor an event without them.
 */
export interface Batch {
  readonly orders?: ReadonlyArray<StoredOrder> | undefined
  /** Orders written ahead of a venue's answer that the venue never took: removed. */
  readonly removeOrders?: ReadonlyArray<string> | undefined
  /** Fills, each with the index in `entries` of its `fill.new` (whose seq it takes), and the ledger rows they leave. */
  readonly fills?: ReadonlyArray<{ readonly fill: StoredFill; readonly entry: number }> | undefined
  readonly positions?: ReadonlyArray<StoredPosition> | undefined
  readonly balances?: ReadonlyArray<StoredBalance> | undefined
  readonly parents?: ReadonlyArray<StoredParent> | undefined
  readonly settings?: ReadonlyArray<StoredSetting> | undefined
  readonly buckets?: ReadonlyArray<StoredBucket> | undefined
  readonly entries?: ReadonlyArray<JournalEntry> | undefined
}

/** The reads answered at once (a placement's, a backtest's between two events): see `OrderStore.now`. */
export interface StoreReadsNow {
  readonly orderByClientId: (account: string, clientOrderId: string) => StoredOrder | undefined
  readonly orderByVenueOrderId: (venue: string, venueOrderId: string) => StoredOrder | undefined
  readonly hasFill: (id: string) => boolean
  /** How many fills have been written: it only grows, so an unchanged count means no new fill. */
  readonly fillCount: () => number
  /** The fills written from the `from`-th on (counted from 0), in the order they were written. */
  readonly fillsFrom: (from: number) => ReadonlyArray<FillRow>
}

export class OrderStore extends Context.Tag("crossbook/OrderStore")<
  OrderStore,
  {
    /** Writes a batch in one transaction; its entries get the next seqs, in order. */
    readonly write: (batch: Batch) => Effect.Effect<ReadonlyArray<JournalEvent>>
    /**
     * The same, done before it returns, when this store can write synchronously now (in memory; SQLite on a file once
     * the last seq is known); `undefined` when it cannot and `write` is the way. A write that fails throws, as `write`
     * dies.
     */
    readonly writeNow: (batch: Batch) => ReadonlyArray<JournalEvent> | undefined
    /**
     * A store that holds everything in memory answers the reads a placement makes in plain code as well (the same
     * answers as the Effects of the same names); absent on a store that reads from a database.
     */
    readonly now?: StoreReadsNow
    /** Events after `after` in seq order, at most `limit`; only those of `kind` when given. */
    readonly eventsAfter: (after: number, limit: number, kind?: string) => Effect.Effect<ReadonlyArray<JournalEvent>>
    readonly lastSeq: Effect.Effect<number>
    readonly getOrder: (id: string) => Effect.Effect<StoredOrder | undefined>
    /** The ids of a parent's children, oldest first, from the parent index. */
    readonly childIds: (parentId: string) => Effect.Effect<ReadonlyArray<string>>
    readonly orderByClientId: (account: string, clientOrderId: string) => Effect.Effect<StoredOrder | undefined>
    /** How many orders have one of these statuses. */
    readonly countOrders: (statuses: ReadonlyArray<string>) => Effect.Effect<number>
    readonly liveParents: Effect.Effect<ReadonlyArray<StoredParent>>
    /**
     * The live parents in id order as a start takes them in, in one read: a parent stored with a summary comes without
     * its state when this store can read that later (`parentState`).
     */
    readonly startParents: Effect.Effect<ReadonlyArray<StartParent>>
    /** One live parent's state read now, synchronously (undefined when no such parent is stored). */
    readonly parentState: (id: string) => StoredParent | undefined
    /** How many parents are live, without reading their states. */
    readonly countLiveParents: Effect.Effect<number>
    /** Every order, oldest first. */
    readonly allOrders: Effect.Effect<ReadonlyArray<StoredOrder>>
    /** The orders with one of these statuses that are not engine parents, oldest first: what the desk restores at start. */
    readonly ordersWithStatus: (statuses: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredOrder>>
    /**
     * The engine parents with one of these statuses that the desk files at start, oldest first, without their records:
     * those named by a client id of their own, and those with one of the `open` statuses (the engine renders their
     * records from their states once it runs; the store answers for them before). Nothing of a parent neither named
     * nor open is answered.
     */
    readonly parentHeads: (
      statuses: ReadonlyArray<string>,
      open: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<ParentHead>>
    /** The highest order number of the orders with one of these statuses (0 when there is none). */
    readonly highestNumber: (statuses: ReadonlyArray<string>) => Effect.Effect<number>
    /** The orders a query matches, newest first (created, then order number), at most `limit`. */
    readonly listOrders: (query: OrderQuery) => Effect.Effect<ReadonlyArray<StoredOrder>>
    /** The order a venue knows by this id, live or finished. */
    readonly orderByVenueOrderId: (venue: string, venueOrderId: string) => Effect.Effect<StoredOrder | undefined>
    /** The fills a query matches, newest first, at most `limit`. */
    readonly listFills: (query: FillQuery) => Effect.Effect<ReadonlyArray<FillRow>>
    readonly hasFill: (id: string) => Effect.Effect<boolean>
    /** The book labels each (account, market) was filled under, the most recently filled first. */
    readonly fillBooks: (
      accounts: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<{ readonly account: string; readonly marketId: string; readonly book: string }>>
    /** The ledger as the last fill left it, and the seq of that fill's event (0 without fills). */
    readonly ledgerRows: Effect.Effect<{
      readonly positions: ReadonlyArray<StoredPosition>
      readonly balances: ReadonlyArray<StoredBalance>
      readonly lastFillSeq: number
    }>
    /** The ids of the orders created at the latest time any was: the newest ids, without reading every order. */
    readonly newestIds: Effect.Effect<ReadonlyArray<string>>
    readonly getSetting: (key: string) => Effect.Effect<unknown>
    readonly getBucket: (id: string) => Effect.Effect<StoredBucket | undefined>
    readonly listBuckets: (query: BucketQuery) => Effect.Effect<ReadonlyArray<StoredBucket>>
    /** The highest bucket number given so far (0 before the first). */
    readonly lastBucketNumber: Effect.Effect<number>
  }
>() {
  /** In memory: for unit tests and the simulator's fast path. */
  static readonly layerMemory = Layer.sync(OrderStore, () => {
    const journal: Array<JournalEvent> = []
    const orders = new Map<string, StoredOrder>()
    const byClientId = new TwoKeys()
    const byParent = new Map<string, Array<string>>()
    const parents = new Map<string, StoredParent>()
    const settings = new Map<string, unknown>()
    const byVenueOrderId = new TwoKeys()
    const fills: Array<FillRow> = []
    const fillIds = new Set<string>()
    const positions = new Map<string, StoredPosition>()
    const balances = new Map<string, StoredBalance>()
    const buckets = new Map<number, StoredBucket>()
    const writeNow = (batch: Batch): ReadonlyArray<JournalEvent> => {
      for (const id of batch.removeOrders ?? []) {
        const order = orders.get(id)
        if (order === undefined) continue
        orders.delete(id)
        byClientId.delete(order.account, order.clientOrderId)
        if (order.parentId !== null) {
          const kids = byParent.get(order.parentId)?.filter((k) => k !== id)
          if (kids !== undefined) byParent.set(order.parentId, kids)
        }
      }
      for (const order of batch.orders ?? []) {
        const before = orders.get(order.id)
        // An order's account, client id and parent never change: they are filed when it is first stored.
        if (before === undefined) {
          if (order.parentId !== null) {
            const kids = byParent.get(order.parentId)
            if (kids === undefined) byParent.set(order.parentId, [order.id])
            else kids.push(order.id)
          }
          byClientId.set(order.account, order.clientOrderId, order.id)
        }
        orders.set(order.id, order)
        if (order.venueOrderId != null && order.venueOrderId !== before?.venueOrderId) {
          byVenueOrderId.set(order.venue, order.venueOrderId, order.id)
        }
      }
      for (const parent of batch.parents ?? []) parents.set(parent.id, parent)
      for (const setting of batch.settings ?? []) settings.set(setting.key, setting.value)
      for (const bucket of batch.buckets ?? []) buckets.set(bucket.num, bucket)
      const entries = batch.entries
      const events: Array<JournalEvent> = []
      if (entries !== undefined) {
        for (const entry of entries) {
          // Built field by field: a spread copy with a key added gets a V8 map of its own, and every reader of the
          // events would miss its inline caches on each one.
          const event: JournalEvent = {
            ts: entry.ts,
            kind: entry.kind,
            key: entry.key,
            payload: entry.payload,
            seq: journal.length + 1
          }
          journal.push(event)
          events.push(event)
        }
      }
      for (const { fill, entry } of batch.fills ?? []) {
        fills.push({
          id: fill.id,
          account: fill.account,
          marketId: fill.marketId,
          orderId: fill.orderId,
          book: fill.book,
          ts: fill.ts,
          record: fill.record,
          seq: events[entry]!.seq
        })
        fillIds.add(fill.id)
      }
      for (const p of batch.positions ?? []) positions.set(`${p.account}\u0000${p.marketId}`, p)
      for (const b of batch.balances ?? []) balances.set(b.account, b)
      return events
    }
    const now: StoreReadsNow = {
      orderByClientId: (account, clientOrderId) => {
        const id = byClientId.get(account, clientOrderId)
        return id === undefined ? undefined : orders.get(id)
      },
      orderByVenueOrderId: (venue, venueOrderId) => {
        const id = byVenueOrderId.get(venue, venueOrderId)
        return id === undefined ? undefined : orders.get(id)
      },
      hasFill: (id) => fillIds.has(id),
      fillCount: () => fills.length,
      fillsFrom: (from) => fills.slice(from)
    }
    return {
      write: (batch) => Effect.sync(() => writeNow(batch)),
      writeNow,
      eventsAfter: (after, limit, kind) =>
        Effect.sync(() =>
          kind === undefined
            ? journal.slice(Math.max(0, after), Math.max(0, after) + limit)
            : journal
                .slice(Math.max(0, after))
                .filter((e) => e.kind === kind)
                .slice(0, limit)
        ),
      lastSeq: Effect.sync(() => journal.length),
      getOrder: (id) => Effect.sync(() => orders.get(id)),
      childIds: (parentId) =>
        Effect.sync(() =>
          (byParent.get(parentId) ?? [])
            .map((id) => orders.get(id)!)
            .sort((a, b) => a.createdAt - b.createdAt || a.id.length - b.id.length || (a.id < b.id ? -1 : 1))
            .map((o) => o.id)
        ),
      orderByClientId: (account, clientOrderId) => Effect.sync(() => now.orderByClientId(account, clientOrderId)),
      countOrders: (statuses) =>
        Effect.sync(() => {
          let n = 0
          for (const order of orders.values()) if (statuses.includes(order.status)) n++
          return n
        }),
      liveParents: Effect.sync(() =>
        [...parents.values()].filter((p) => p.live).sort((a, b) => (a.id < b.id ? -1 : 1))
      ),
      countLiveParents: Effect.sync(() => {
        let n = 0
        for (const p of parents.values()) if (p.live) n++
        return n
      }),
      // States are at hand in memory: every one comes whole.
      startParents: Effect.sync(() =>
        [...parents.values()]
          .filter((p) => p.live)
          .sort((a, b) => (a.id < b.id ? -1 : 1))
          .map((p) => ({ id: p.id, summary: undefined, state: p.state, updatedAt: p.updatedAt }))
      ),
      parentState: (id) => parents.get(id),
      allOrders: Effect.sync(() =>
        [...orders.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      ),
      ordersWithStatus: (statuses) =>
        Effect.sync(() =>
          [...orders.values()]
            .filter((o) => statuses.includes(o.status) && !o.id.startsWith(PARENT_ID_PREFIX))
            .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
        ),
      parentHeads: (statuses, open) =>
        Effect.sync(() =>
          [...orders.values()]
            .filter(
              (o) =>
                statuses.includes(o.status) &&
                o.id.startsWith(PARENT_ID_PREFIX) &&
                (o.clientOrderId !== o.id || open.includes(o.status))
            )
            .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
            .map((o) => ({
              id: o.id,
              account: o.account,
              clientOrderId: o.clientOrderId,
              status: o.status,
              digest: (o.record as { readonly digest?: string }).digest
            }))
        ),
      highestNumber: (statuses) =>
        Effect.sync(() => {
          let n = 0
          for (const o of orders.values()) if (statuses.includes(o.status)) n = Math.max(n, orderNumber(o.id))
          return n
        }),
      listOrders: (q) =>
        Effect.sync(() =>
          (q.parentId === undefined
            ? [...orders.values()]
            : (byParent.get(q.parentId) ?? []).map((id) => orders.get(id)!)
          )
            .filter(
              (o) =>
                (q.statuses === undefined || q.statuses.includes(o.status)) &&
                (q.venue === undefined || o.venue === q.venue) &&
                (q.marketId === undefined || o.marketId === q.marketId) &&
                (q.book === undefined || o.book === q.book) &&
                (q.accounts === undefined || q.accounts.includes(o.account)) &&
                afterOrder(o, q.after)
            )
            .sort(newestFirst)
            .slice(0, q.limit ?? Number.POSITIVE_INFINITY)
        ),
      orderByVenueOrderId: (venue, venueOrderId) => Effect.sync(() => now.orderByVenueOrderId(venue, venueOrderId)),
      listFills: (q) =>
        Effect.sync(() =>
          fills
            .filter(
              (f) =>
                (q.accounts === undefined || q.accounts.includes(f.account)) &&
                (q.marketId === undefined || f.marketId === q.marketId) &&
                (q.orderId === undefined || f.orderId === q.orderId) &&
                (q.since === undefined || f.ts >= q.since) &&
                (q.after === undefined || f.ts < q.after.ts || (f.ts === q.after.ts && f.seq < q.after.seq))
            )
            .sort((a, b) => b.ts - a.ts || b.seq - a.seq)
            .slice(0, q.limit ?? Number.POSITIVE_INFINITY)
        ),
      hasFill: (id) => Effect.sync(() => fillIds.has(id)),
      now,
      fillBooks: (accounts) =>
        Effect.sync(() => {
          const seen = new Map<string, { account: string; marketId: string; book: string }>()
          for (const f of [...fills].reverse()) {
            if (accounts.includes(f.account) && !seen.has(`${f.account}\u0000${f.marketId}\u0000${f.book}`)) {
              seen.set(`${f.account}\u0000${f.marketId}\u0000${f.book}`, {
                account: f.account,
                marketId: f.marketId,
                book: f.book
              })
            }
          }
          return [...seen.values()]
        }),
      ledgerRows: Effect.sync(() => ({
        positions: [...positions.values()],
        balances: [...balances.values()],
        lastFillSeq: fills.reduce((m, f) => Math.max(m, f.seq), 0)
      })),
      newestIds: Effect.sync(() => {
        let latest = Number.NEGATIVE_INFINITY
        for (const o of orders.values()) latest = Math.max(latest, o.createdAt)
        return [...orders.values()].filter((o) => o.createdAt === latest).map((o) => o.id)
      }),
      getSetting: (key) => Effect.sync(() => settings.get(key)),
      getBucket: (id) => Effect.sync(() => [...buckets.values()].find((b) => b.id === id)),
      listBuckets: (query) =>
        Effect.sync(() =>
          [...buckets.values()]
            .filter((b) => (query.status === undefined || b.status === query.status) && b.num > (query.after ?? 0))
            .sort((a, b) => a.num - b.num)
            .slice(0, query.limit)
        ),
      lastBucketNumber: Effect.sync(() => Math.max(0, ...buckets.keys()))
    }
  })

  /** On the engine database (SQLite); infrastructure failures are defects. */
  static readonly layerSql = Layer.effect(
    OrderStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const writer = yield* Effect.serviceOption(EngineWriter)
      /** The journal's last seq, read once: appends run one transaction at a time in this process. */
      let journalSeq: number | null = null
      const toOrder = (row: Record<string, unknown>): StoredOrder => ({
        id: row["id"] as string,
        account: row["account"] as string,
        clientOrderId: row["client_order_id"] as string,
        venue: row["venue"] as string,
        marketId: row["market_id"] as string,
        status: row["status"] as string,
        parentId: (row["parent_id"] as string | null) ?? null,
        book: row["book"] as string,
        createdAt: row["created_at"] as number,
        updatedAt: row["updated_at"] as number,
        venueOrderId: (row["venue_order_id"] as string | null) ?? null,
        record: JSON.parse(row["record"] as string)
      })
      const toFill = (row: Record<string, unknown>): FillRow => ({
        seq: row["seq"] as number,
        id: row["id"] as string,
        account: row["account"] as string,
        marketId: row["market_id"] as string,
        orderId: row["order_id"] as string,
        book: row["book"] as string,
        ts: row["ts"] as number,
        record: JSON.parse(row["record"] as string)
      })
      /**
       * A lookup's rows: on the writer's own connection, synchronously, once it has written; before that (or with no
       * writer of its own, an in-memory database) through the client.
       */
      const lookup = (text: string, params: ReadonlyArray<string | number | null>) =>
        Effect.suspend(() => {
          const rows = writer._tag === "None" ? undefined : writer.value.read([text, params])
          return rows === undefined
            ? Effect.orDie(sql.unsafe<Record<string, unknown>>(text, params))
            : Effect.succeed(rows)
        })
      /** On the writer's own connection, synchronously, once the last seq is known (or nothing takes one). */
      const writeNow = (batch: Batch): ReadonlyArray<JournalEvent> | undefined => {
        if ((batch.entries ?? []).length === 0 && (batch.fills ?? []).length > 0) {
          throw new Error("a fill is written with its fill.new event")
        }
        if (writer._tag === "None" || (journalSeq === null && (batch.entries ?? []).length > 0)) return undefined
        const { statements, events, seq } = statementsOf(batch, journalSeq ?? 0)
        try {
          writer.value.write(statements)
        } catch (e) {
          // A transaction that did not commit leaves the last seq to be read again.
          journalSeq = null
          throw e
        }
        if (events.length > 0) journalSeq = seq
        return events
      }
      return {
        writeNow,
        write: Effect.fnUntraced(
          function* (batch: Batch) {
            if (journalSeq === null && (batch.entries ?? []).length > 0) {
              const rows = yield* sql<{ seq: number | null }>`SELECT MAX(seq) AS seq FROM journal`
              journalSeq = rows[0]?.seq ?? 0
            }
            const written = writeNow(batch)
            if (written !== undefined) return written
            // No writing connection of its own (an in-memory database): the client's, in one transaction.
            const { statements, events, seq } = statementsOf(batch, journalSeq ?? 0)
            yield* sql.withTransaction(
              Effect.forEach(statements, ([text, params]) => sql.unsafe(text, params), { discard: true })
            )
            if (events.length > 0) journalSeq = seq
            return events
          },
          // A transaction that did not commit leaves the last seq to be read again.
          Effect.onError(() => Effect.sync(() => void (journalSeq = null))),
          Effect.orDie
        ),
        eventsAfter: (after, limit, kind) =>
          (kind === undefined
            ? sql<{ seq: number; ts: number; kind: string; key: string; payload: string }>`
            SELECT seq, ts, kind, key, payload FROM journal WHERE seq > ${after} ORDER BY seq LIMIT ${limit}`
            : sql<{ seq: number; ts: number; kind: string; key: string; payload: string }>`
            SELECT seq, ts, kind, key, payload FROM journal WHERE seq > ${after} AND kind = ${kind} ORDER BY seq LIMIT ${limit}`
          ).pipe(
            Effect.map((rows) => rows.map((r) => ({ ...r, payload: JSON.parse(r.payload) as unknown }))),
            Effect.orDie
          ),
        lastSeq: sql<{ seq: number | null }>`SELECT MAX(seq) AS seq FROM journal`.pipe(
          Effect.map((rows) => rows[0]?.seq ?? 0),
          Effect.orDie
        ),
        getOrder: (id) =>
          sql`SELECT * FROM orders WHERE id = ${id}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : toOrder(rows[0]))),
            Effect.orDie
          ),
        childIds: (parentId) =>
          sql<{
            id: string
          }>`SELECT id FROM orders WHERE parent_id = ${parentId} ORDER BY created_at, length(id), id`.pipe(
            Effect.map((rows) => rows.map((r) => r.id)),
            Effect.orDie
          ),
        orderByClientId: (account, clientOrderId) =>
          Effect.map(
            lookup("SELECT * FROM orders WHERE account = ? AND client_order_id = ?", [account, clientOrderId]),
            (rows) => (rows[0] === undefined ? undefined : toOrder(rows[0]))
          ),
        countOrders: (statuses) =>
          sql<{ n: number }>`SELECT COUNT(*) AS n FROM orders WHERE ${sql.in("status", statuses)}`.pipe(
            Effect.map((rows) => rows[0]?.n ?? 0),
            Effect.orDie
          ),
        countLiveParents: sql<{ n: number }>`SELECT COUNT(*) AS n FROM parents WHERE live = 1`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
        // As arrays, not objects keyed by column: the rows of every live parent at start. Sorted here by their ids
        // (ASCII, so in SQLite's order): SQLite would sort the whole rows, states and all.
        liveParents: sql`SELECT id, state, updated_at FROM parents WHERE live = 1`.values.pipe(
          Effect.map((unsorted) => {
            const rows = [...unsorted].sort((a, b) => ((a[0] as string) < (b[0] as string) ? -1 : 1))
            const out = new Array<StoredParent>(rows.length)
            for (let i = 0; i < rows.length; i++) {
              const row = rows[i]!
              out[i] = {
                id: row[0] as string,
                live: true,
                state: JSON.parse(row[1] as string),
                updatedAt: row[2] as number
              }
            }
            return out
          }),
          Effect.orDie
        ),
        // One walk of the live parents' index in id order: a parent with a summary costs no read of its row (its state
        // is read when it is first used), unless this store cannot read it later.
        startParents: (writer._tag === "None"
          ? sql`SELECT id, summary, state, updated_at FROM parents WHERE live = 1 ORDER BY id`
          : sql`SELECT id, summary, CASE WHEN summary IS NULL THEN state END, CASE WHEN summary IS NULL THEN updated_at END
              FROM parents WHERE live = 1 ORDER BY id`
        ).values.pipe(
          Effect.map((rows) => {
            const out = new Array<StartParent>(rows.length)
            for (let i = 0; i < rows.length; i++) {
              const row = rows[i]!
              const text = row[2] as string | null
              out[i] =
                text === null
                  ? { id: row[0] as string, summary: row[1] as string }
                  : {
                      id: row[0] as string,
                      summary: row[1] as string | null,
                      state: JSON.parse(text),
                      updatedAt: row[3] as number
                    }
            }
            return out
          }),
          Effect.orDie
        ),
        parentState: (id) => {
          if (writer._tag === "None") return undefined
          const row = writer.value.readNow([PARENT_STATE, [id]])[0]
          return row === undefined
            ? undefined
            : {
                id,
                live: row["live"] === 1,
                state: JSON.parse(row["state"] as string),
                updatedAt: row["updated_at"] as number
              }
        },
        allOrders: sql`SELECT * FROM orders ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map(toOrder)),
          Effect.orDie
        ),
        ordersWithStatus: (statuses) =>
          sql`SELECT * FROM orders WHERE ${sql.in("status", statuses)} AND substr(id, 1, ${PARENT_ID_PREFIX.length}) != ${PARENT_ID_PREFIX}
              ORDER BY created_at, id`.pipe(
            Effect.map((rows) => rows.map(toOrder)),
            Effect.orDie
          ),
        // SQLite reads the digest out of the record itself: no record crosses into JavaScript.
        parentHeads: (statuses, open) =>
          sql<{ id: string; account: string; client_order_id: string; status: string; digest: string | null }>`
            SELECT id, account, client_order_id, status, json_extract(record, '$.digest') AS digest FROM orders
            WHERE ${sql.in("status", statuses)} AND substr(id, 1, ${PARENT_ID_PREFIX.length}) = ${PARENT_ID_PREFIX}
            AND (client_order_id != id${open.length === 0 ? sql`` : sql` OR ${sql.in("status", open)}`})
            ORDER BY created_at, id`.pipe(
            Effect.map((rows) =>
              rows.map((r) => ({
                id: r.id,
                account: r.account,
                clientOrderId: r.client_order_id,
                status: r.status,
                digest: r.digest ?? undefined
              }))
            ),
            Effect.orDie
          ),
        // Answered from the status index alone.
        highestNumber: (statuses) =>
          sql<{ num: number | null }>`SELECT MAX(num) AS num FROM orders WHERE ${sql.in("status", statuses)}`.pipe(
            Effect.map((rows) => rows[0]?.num ?? 0),
            Effect.orDie
          ),
        listOrders: (q) => {
          const where = [
            q.statuses === undefined ? undefined : sql.in("status", q.statuses),
            q.venue === undefined ? undefined : sql`venue = ${q.venue}`,
            q.marketId === undefined ? undefined : sql`market_id = ${q.marketId}`,
            q.parentId === undefined ? undefined : sql`parent_id = ${q.parentId}`,
            q.book === undefined ? undefined : sql`book = ${q.book}`,
            q.accounts === undefined ? undefined : sql.in("account", q.accounts)
          ].filter((c) => c !== undefined)
          const after = q.after
          if (after !== undefined) {
            where.push(
              sql`(created_at < ${after.createdAt} OR (created_at = ${after.createdAt} AND num < ${after.num}))`
            )
          }
          const limit = q.limit === undefined ? sql`` : sql`LIMIT ${q.limit}`
          return sql`SELECT * FROM orders WHERE ${sql.and(where)} ORDER BY created_at DESC, num DESC ${limit}`.pipe(
            Effect.map((rows) => rows.map(toOrder)),
            Effect.orDie
          )
        },
        orderByVenueOrderId: (venue, venueOrderId) =>
          sql`SELECT * FROM orders WHERE venue = ${venue} AND venue_order_id = ${venueOrderId}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : toOrder(rows[0]))),
            Effect.orDie
          ),
        listFills: (q) => {
          const where = [
            q.accounts === undefined ? undefined : sql.in("account", q.accounts),
            q.marketId === undefined ? undefined : sql`market_id = ${q.marketId}`,
            q.orderId === undefined ? undefined : sql`order_id = ${q.orderId}`,
            q.since === undefined ? undefined : sql`ts >= ${q.since}`,
            q.after === undefined
              ? undefined
              : sql`(ts < ${q.after.ts} OR (ts = ${q.after.ts} AND seq < ${q.after.seq}))`
          ].filter((c) => c !== undefined)
          const limit = q.limit === undefined ? sql`` : sql`LIMIT ${q.limit}`
          return sql`SELECT * FROM fills WHERE ${sql.and(where)} ORDER BY ts DESC, seq DESC ${limit}`.pipe(
            Effect.map((rows) => rows.map(toFill)),
            Effect.orDie
          )
        },
        hasFill: (id) => Effect.map(lookup("SELECT 1 AS one FROM fills WHERE id = ?", [id]), (rows) => rows.length > 0),
        fillBooks: (accounts) =>
          sql<{ account: string; market_id: string; book: string }>`
            SELECT account, market_id, book, MAX(seq) AS last FROM fills WHERE ${sql.in("account", accounts)}
            GROUP BY account, market_id, book ORDER BY last DESC`.pipe(
            Effect.map((rows) => rows.map((r) => ({ account: r.account, marketId: r.market_id, book: r.book }))),
            Effect.orDie
          ),
        ledgerRows: Effect.gen(function* () {
          const positions = yield* sql<{ account: string; market_id: string; value: string }>`
            SELECT account, market_id, value FROM positions`
          const balances = yield* sql<{ account: string; cash_moved: string }>`SELECT account, cash_moved FROM balances`
          const last = yield* sql<{ seq: number | null }>`SELECT MAX(seq) AS seq FROM fills`
          return {
            positions: positions.map((r) => ({
              account: r.account,
              marketId: r.market_id,
              value: JSON.parse(r.value) as unknown
            })),
            balances: balances.map((r) => ({ account: r.account, cashMoved: r.cash_moved })),
            lastFillSeq: last[0]?.seq ?? 0
          }
        }).pipe(Effect.orDie),
        newestIds: sql<{
          id: string
        }>`SELECT id FROM orders WHERE created_at = (SELECT MAX(created_at) FROM orders)`.pipe(
          Effect.map((rows) => rows.map((r) => r.id)),
          Effect.orDie
        ),
        getSetting: (key) =>
          sql<{ value: string }>`SELECT value FROM settings WHERE key = ${key}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : (JSON.parse(rows[0].value) as unknown))),
            Effect.orDie
          ),
        getBucket: (id) =>
          sql<BucketRow>`SELECT id, num, status, created_at, record FROM buckets WHERE id = ${id}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : toBucket(rows[0]))),
            Effect.orDie
          ),
        listBuckets: (query) =>
          sql<BucketRow>`SELECT id, num, status, created_at, record FROM buckets
            WHERE num > ${query.after ?? 0} ${query.status === undefined ? sql`` : sql`AND status = ${query.status}`}
            ORDER BY num LIMIT ${query.limit}`.pipe(
            Effect.map((rows) => rows.map(toBucket)),
            Effect.orDie
          ),
        lastBucketNumber: sql<{ num: number | null }>`SELECT MAX(num) AS num FROM buckets`.pipe(
          Effect.map((rows) => rows[0]?.num ?? 0),
          Effect.orDie
        )
      }
    })
  )
}

interface BucketRow {
  readonly id: string
  readonly num: number
  readonly status: string
  readonly created_at: number
  readonly record: string
}

const toBucket = (row: BucketRow): StoredBucket => ({
  id: row.id,
  num: row.num,
  status: row.status === "archived" ? "archived" : "active",
  createdAt: row.created_at,
  record: JSON.parse(row.record) as unknown
})

/** One parent's row, for a state read when the parent is first used. */
const PARENT_STATE = "SELECT live, state, updated_at FROM parents WHERE id = ?"

/** The engine database's writes: one text each, with positional parameters, prepared once where they run. */
const WRITES = {
  removeOrder: "DELETE FROM orders WHERE id = ?",
  order: `INSERT INTO orders (id, account, client_order_id, venue, market_id, status, parent_id, book, created_at, updated_at, record, num, venue_order_id)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, record = excluded.record, venue_order_id = excluded.venue_order_id`,
  position: `INSERT INTO positions (account, market_id, value) VALUES (?, ?, ?)
    ON CONFLICT (account, market_id) DO UPDATE SET value = excluded.value`,
  balance: `INSERT INTO balances (account, cash_moved) VALUES (?, ?)
    ON CONFLICT (account) DO UPDATE SET cash_moved = excluded.cash_moved`,
  parent: `INSERT INTO parents (id, live, state, updated_at, summary) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET live = excluded.live, state = excluded.state, updated_at = excluded.updated_at,
    summary = excluded.summary`,
  bucket: `INSERT INTO buckets (id, num, status, created_at, record) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (id) DO UPDATE SET status = excluded.status, record = excluded.record`,
  setting: `INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  event: "INSERT INTO journal (seq, ts, kind, key, payload) VALUES (?, ?, ?, ?, ?)",
  fill: "INSERT INTO fills (seq, id, account, market_id, order_id, book, ts, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
} as const

/**
 * A batch as the statements of its transaction, in the order a write applies them (removals before stores), and
 * its journal events numbered on from `lastSeq`.
 */
const statementsOf = (batch: Batch, lastSeq: number) => {
  const statements: Array<Statement> = []
  for (const id of batch.removeOrders ?? []) statements.push([WRITES.removeOrder, [id]])
  for (const o of batch.orders ?? []) {
    statements.push([
      WRITES.order,
      [
        o.id,
        o.account,
        o.clientOrderId,
        o.venue,
        o.marketId,
        o.status,
        o.parentId,
        o.book,
        o.createdAt,
        o.updatedAt,
        JSON.stringify(o.record),
        orderNumber(o.id),
        o.venueOrderId ?? null
      ]
    ])
  }
  for (const p of batch.positions ?? []) {
    statements.push([WRITES.position, [p.account, p.marketId, JSON.stringify(p.value)]])
  }
  for (const b of batch.balances ?? []) statements.push([WRITES.balance, [b.account, b.cashMoved]])
  for (const p of batch.parents ?? []) {
    // The summary of a finished parent is never read (only live ones are restored).
    const summary = p.live && p.summarize !== undefined ? p.summarize(p.state) : null
    statements.push([WRITES.parent, [p.id, p.live ? 1 : 0, JSON.stringify(p.state), p.updatedAt, summary]])
  }
  for (const b of batch.buckets ?? []) {
    statements.push([WRITES.bucket, [b.id, b.num, b.status, b.createdAt, JSON.stringify(b.record)]])
  }
  for (const { key, value, ts } of batch.settings ?? []) {
    statements.push([WRITES.setting, [key, JSON.stringify(value), ts]])
  }
  let seq = lastSeq
  const events: Array<JournalEvent> = []
  for (const entry of batch.entries ?? []) {
    seq += 1
    statements.push([WRITES.event, [seq, entry.ts, entry.kind, entry.key, JSON.stringify(entry.payload)]])
    events.push({ ...entry, seq })
  }
  for (const { fill: f, entry } of batch.fills ?? []) {
    statements.push([
      WRITES.fill,
      [events[entry]!.seq, f.id, f.account, f.marketId, f.orderId, f.book, f.ts, JSON.stringify(f.record)]
    ])
  }
  return { statements, events, seq }
}
