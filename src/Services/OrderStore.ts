/** The OrderStore seam: orders, engine parents' state and the append-only journal, written together in one batch. */
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer } from "effect"

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
}

export interface StoredParent {
  readonly id: string
  readonly live: boolean
  /** The parent's whole state, enough to restore it after a restart. */
  readonly state: unknown
  readonly updatedAt: number
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
  readonly parents?: ReadonlyArray<StoredParent> | undefined
  readonly settings?: ReadonlyArray<StoredSetting> | undefined
  readonly entries?: ReadonlyArray<JournalEntry> | undefined
}

export class OrderStore extends Context.Tag("crossbook/OrderStore")<
  OrderStore,
  {
    /** Writes a batch in one transaction; its entries get the next seqs, in order. */
    readonly write: (batch: Batch) => Effect.Effect<ReadonlyArray<JournalEvent>>
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
    /** Every order, oldest first. */
    readonly allOrders: Effect.Effect<ReadonlyArray<StoredOrder>>
    /** The orders with one of these statuses, oldest first: what the desk restores at start. */
    readonly ordersWithStatus: (statuses: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<StoredOrder>>
    /** The orders a query matches, in no particular order. */
    readonly listOrders: (query: OrderQuery) => Effect.Effect<ReadonlyArray<StoredOrder>>
    /** The ids of the orders created at the latest time any was: the newest ids, without reading every order. */
    readonly newestIds: Effect.Effect<ReadonlyArray<string>>
    readonly getSetting: (key: string) => Effect.Effect<unknown>
  }
>() {
  /** In memory: for unit tests and the simulator's fast path. */
  static readonly layerMemory = Layer.sync(OrderStore, () => {
    const journal: Array<JournalEvent> = []
    const orders = new Map<string, StoredOrder>()
    const byClientId = new Map<string, string>()
    const byParent = new Map<string, Array<string>>()
    const parents = new Map<string, StoredParent>()
    const settings = new Map<string, unknown>()
    return {
      write: (batch) =>
        Effect.sync(() => {
          for (const order of batch.orders ?? []) {
            if (order.parentId !== null && !orders.has(order.id)) {
              const kids = byParent.get(order.parentId)
              if (kids === undefined) byParent.set(order.parentId, [order.id])
              else kids.push(order.id)
            }
            orders.set(order.id, order)
            byClientId.set(`${order.account}\u0000${order.clientOrderId}`, order.id)
          }
          for (const parent of batch.parents ?? []) parents.set(parent.id, parent)
          for (const setting of batch.settings ?? []) settings.set(setting.key, setting.value)
          return (batch.entries ?? []).map((entry) => {
            const event = { ...entry, seq: journal.length + 1 }
            journal.push(event)
            return event
          })
        }),
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
      orderByClientId: (account, clientOrderId) =>
        Effect.sync(() => {
          const id = byClientId.get(`${account}\u0000${clientOrderId}`)
          return id === undefined ? undefined : orders.get(id)
        }),
      countOrders: (statuses) =>
        Effect.sync(() => {
          let n = 0
          for (const order of orders.values()) if (statuses.includes(order.status)) n++
          return n
        }),
      liveParents: Effect.sync(() =>
        [...parents.values()].filter((p) => p.live).sort((a, b) => (a.id < b.id ? -1 : 1))
      ),
      allOrders: Effect.sync(() =>
        [...orders.values()].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      ),
      ordersWithStatus: (statuses) =>
        Effect.sync(() =>
          [...orders.values()]
            .filter((o) => statuses.includes(o.status))
            .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
        ),
      listOrders: (q) =>
        Effect.sync(() =>
          (q.parentId === undefined
            ? [...orders.values()]
            : (byParent.get(q.parentId) ?? []).map((id) => orders.get(id)!)
          ).filter(
            (o) =>
              (q.statuses === undefined || q.statuses.includes(o.status)) &&
              (q.venue === undefined || o.venue === q.venue) &&
              (q.marketId === undefined || o.marketId === q.marketId) &&
              (q.book === undefined || o.book === q.book) &&
              (q.accounts === undefined || q.accounts.includes(o.account))
          )
        ),
      newestIds: Effect.sync(() => {
        let latest = Number.NEGATIVE_INFINITY
        for (const o of orders.values()) latest = Math.max(latest, o.createdAt)
        return [...orders.values()].filter((o) => o.createdAt === latest).map((o) => o.id)
      }),
      getSetting: (key) => Effect.sync(() => settings.get(key))
    }
  })

  /** On the engine database (SQLite); infrastructure failures are defects. */
  static readonly layerSql = Layer.effect(
    OrderStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
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
        record: JSON.parse(row["record"] as string)
      })
      const toParent = (row: Record<string, unknown>): StoredParent => ({
        id: row["id"] as string,
        live: row["live"] === 1,
        state: JSON.parse(row["state"] as string),
        updatedAt: row["updated_at"] as number
      })
      return {
        write: (batch) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                for (const o of batch.orders ?? []) {
                  yield* sql`INSERT INTO orders (id, account, client_order_id, venue, market_id, status, parent_id, book, created_at, updated_at, record)
                    VALUES (${o.id}, ${o.account}, ${o.clientOrderId}, ${o.venue}, ${o.marketId}, ${o.status}, ${o.parentId}, ${o.book}, ${o.createdAt}, ${o.updatedAt}, ${JSON.stringify(o.record)})
                    ON CONFLICT (id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at, record = excluded.record`
                }
                for (const p of batch.parents ?? []) {
                  yield* sql`INSERT INTO parents (id, live, state, updated_at) VALUES (${p.id}, ${p.live ? 1 : 0}, ${JSON.stringify(p.state)}, ${p.updatedAt})
                    ON CONFLICT (id) DO UPDATE SET live = excluded.live, state = excluded.state, updated_at = excluded.updated_at`
                }
                for (const { key, value, ts } of batch.settings ?? []) {
                  yield* sql`INSERT INTO settings (key, value, updated_at) VALUES (${key}, ${JSON.stringify(value)}, ${ts})
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
                }
                const entries = batch.entries ?? []
                if (entries.length === 0) return []
                if (journalSeq === null) {
                  const rows = yield* sql<{ seq: number | null }>`SELECT MAX(seq) AS seq FROM journal`
                  journalSeq = rows[0]?.seq ?? 0
                }
                let seq = journalSeq
                const out: Array<JournalEvent> = []
                for (const entry of entries) {
                  seq += 1
                  yield* sql`INSERT INTO journal (seq, ts, kind, key, payload)
                    VALUES (${seq}, ${entry.ts}, ${entry.kind}, ${entry.key}, ${JSON.stringify(entry.payload)})`
                  out.push({ ...entry, seq })
                }
                journalSeq = seq
                return out
              })
            )
            .pipe(
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
          sql`SELECT * FROM orders WHERE account = ${account} AND client_order_id = ${clientOrderId}`.pipe(
            Effect.map((rows) => (rows[0] === undefined ? undefined : toOrder(rows[0]))),
            Effect.orDie
          ),
        countOrders: (statuses) =>
          sql<{ n: number }>`SELECT COUNT(*) AS n FROM orders WHERE ${sql.in("status", statuses)}`.pipe(
            Effect.map((rows) => rows[0]?.n ?? 0),
            Effect.orDie
          ),
        liveParents: sql`SELECT * FROM parents WHERE live = 1 ORDER BY id`.pipe(
          Effect.map((rows) => rows.map(toParent)),
          Effect.orDie
        ),
        allOrders: sql`SELECT * FROM orders ORDER BY created_at, id`.pipe(
          Effect.map((rows) => rows.map(toOrder)),
          Effect.orDie
        ),
        ordersWithStatus: (statuses) =>
          sql`SELECT * FROM orders WHERE ${sql.in("status", statuses)} ORDER BY created_at, id`.pipe(
            Effect.map((rows) => rows.map(toOrder)),
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
          return sql`SELECT * FROM orders WHERE ${sql.and(where)}`.pipe(
            Effect.map((rows) => rows.map(toOrder)),
            Effect.orDie
          )
        },
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
          )
      }
    })
  )
}
