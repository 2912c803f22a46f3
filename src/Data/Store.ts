/**
 * The data host's store `<home>/data.db` (SQLite, WAL, mode 0600): recorded markets, their book rows and trades, the
 * stretches recorded without a break (spans) and why the rest is absent, and the invites, sessions and API keys of the
 * host. `record` and `data import` write it; `data serve` reads it. Book and trade rows of a market are stored in time
 * order (a time earlier than the market's last one is raised to it), so row order is time order.
 */
import Database from "better-sqlite3"
import { chmodSync, existsSync } from "node:fs"
import { join } from "node:path"
import * as F from "../Domain/Fixed.ts"

export const storeFile = (home: string): string => join(home, "data.db")

/** `[price, size]` pairs of decimal strings, best first for a snapshot. */
export type Levels = ReadonlyArray<readonly [string, string]>

export interface MarketRow {
  readonly id: string
  readonly title: string
  readonly tick: string
  readonly lot: string
}

export interface BookRow {
  readonly id: number
  readonly market_id: string
  readonly span_id: number
  readonly ts: number
  readonly received_ms: number
  readonly kind: "snapshot" | "change"
  readonly bids: Levels
  readonly asks: Levels
}

export interface TradeRow {
  readonly id: number
  readonly market_id: string
  readonly trade_id: string
  readonly ts: number
  readonly received_ms: number
  readonly price: string
  readonly amount: string
  readonly taker_side: "buy" | "sell"
}

export interface SpanRow {
  readonly id: number
  readonly market_id: string
  readonly start_ms: number
  readonly end_ms: number
}

export interface AbsentRow {
  readonly market_id: string
  readonly start_ms: number
  readonly end_ms: number
  readonly reason: string
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS markets (id TEXT PRIMARY KEY, title TEXT NOT NULL, tick TEXT NOT NULL, lot TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS spans (
  id INTEGER PRIMARY KEY, market_id TEXT NOT NULL REFERENCES markets (id),
  start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS spans_market ON spans (market_id, start_ms);
CREATE TABLE IF NOT EXISTS book (
  id INTEGER PRIMARY KEY, market_id TEXT NOT NULL REFERENCES markets (id), span_id INTEGER NOT NULL REFERENCES spans (id),
  ts INTEGER NOT NULL, received_ms INTEGER NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('snapshot', 'change')),
  bids TEXT NOT NULL, asks TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS book_market ON book (market_id, id);
CREATE INDEX IF NOT EXISTS book_span ON book (span_id, kind, id);
CREATE INDEX IF NOT EXISTS book_span_id ON book (span_id, id);
CREATE INDEX IF NOT EXISTS book_span_ts ON book (span_id, ts);
CREATE TABLE IF NOT EXISTS checkpoints (
  span_id INTEGER NOT NULL REFERENCES spans (id), row_id INTEGER NOT NULL, bids TEXT NOT NULL, asks TEXT NOT NULL,
  PRIMARY KEY (span_id, row_id));
CREATE TABLE IF NOT EXISTS trades (
  id INTEGER PRIMARY KEY, market_id TEXT NOT NULL REFERENCES markets (id), trade_id TEXT NOT NULL,
  ts INTEGER NOT NULL, received_ms INTEGER NOT NULL, price TEXT NOT NULL, amount TEXT NOT NULL,
  taker_side TEXT NOT NULL CHECK (taker_side IN ('buy', 'sell')));
CREATE INDEX IF NOT EXISTS trades_market ON trades (market_id, ts, id);
CREATE TABLE IF NOT EXISTS absent (
  id INTEGER PRIMARY KEY, market_id TEXT NOT NULL, start_ms INTEGER NOT NULL, end_ms INTEGER NOT NULL,
  reason TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS absent_market ON absent (market_id, start_ms);
CREATE TABLE IF NOT EXISTS invites (
  id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, used_at INTEGER);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL, invite_id TEXT NOT NULL,
  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY, prefix TEXT NOT NULL UNIQUE, hash TEXT NOT NULL UNIQUE, user_name TEXT NOT NULL,
  name TEXT NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER, revoked_at INTEGER);
`

const parseLevels = (text: string): Levels => JSON.parse(text) as Levels

const bookRow = (r: Record<string, unknown>): BookRow => ({
  id: r["id"] as number,
  market_id: r["market_id"] as string,
  span_id: r["span_id"] as number,
  ts: r["ts"] as number,
  received_ms: r["received_ms"] as number,
  kind: r["kind"] as "snapshot" | "change",
  bids: parseLevels(r["bids"] as string),
  asks: parseLevels(r["asks"] as string)
})

/** Every this many rows of a span the whole book is written beside them, so a read folds at most this many. */
export const CHECKPOINT_EVERY = 500

/** A span's book as the writer holds it: price → size per side. */
interface Held {
  readonly bids: Map<string, string>
  readonly asks: Map<string, string>
  rows: number
}

const applyLevels = (side: Map<string, string>, levels: Levels): void => {
  for (const [p, s] of levels) {
    if (s === "0") side.delete(p)
    else side.set(p, s)
  }
}

/** A side's levels best first (bids falling, asks rising), compared exactly as integer millionths. */
export const sortedLevels = (side: Map<string, string>, falling: boolean): Levels => {
  const out = [...side].map(([p, s]) => [F.of(p), p, s] as const)
  out.sort((a, b) => (falling ? b[0] - a[0] : a[0] - b[0]))
  return out.map(([, p, s]) => [p, s] as const)
}

/** The store on one SQLite file; every method is one statement or one transaction. */
export class DataStore {
  readonly db: Database.Database
  /** The last time written per market, for keeping each market's rows in time order. */
  private readonly lastTs = new Map<string, number>()
  /** The book of each span this process writes, for its checkpoints. */
  private readonly held = new Map<number, Held>()

  constructor(readonly file: string) {
    const fresh = file !== ":memory:" && !existsSync(file)
    this.db = new Database(file, { timeout: 5000 })
    if (fresh) chmodSync(file, 0o600)
    if (file !== ":memory:") this.db.pragma("journal_mode = WAL")
    this.db.pragma("synchronous = NORMAL")
    this.db.pragma("foreign_keys = ON")
    this.db.exec(SCHEMA)
    this.db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', '1')").run()
  }

  close(): void {
    this.db.close()
  }

  /** Changes whenever data is written: the number of the newest row of any kind. */
  datasetVersion(): string {
    const row = this.db
      .prepare(
        "SELECT (SELECT COALESCE(MAX(id), 0) FROM book) AS b, (SELECT COALESCE(MAX(id), 0) FROM trades) AS t, " +
          "(SELECT COALESCE(MAX(id), 0) FROM spans) AS s, (SELECT COALESCE(MAX(id), 0) FROM absent) AS a"
      )
      .get() as { b: number; t: number; s: number; a: number }
    return `1.${row.b}.${row.t}.${row.s}.${row.a}`
  }

  // ---- markets, spans, rows ----

  upsertMarket(market: MarketRow): void {
    this.db
      .prepare(
        "INSERT INTO markets (id, title, tick, lot) VALUES (@id, @title, @tick, @lot) " +
          "ON CONFLICT (id) DO UPDATE SET title = excluded.title, tick = excluded.tick, lot = excluded.lot"
      )
      .run(market)
  }

  market(id: string): MarketRow | undefined {
    return this.db.prepare("SELECT id, title, tick, lot FROM markets WHERE id = ?").get(id) as MarketRow | undefined
  }

  markets(): ReadonlyArray<MarketRow & { readonly first_ms: number | null; readonly last_ms: number | null }> {
    return this.db
      .prepare(
        "SELECT m.id, m.title, m.tick, m.lot, MIN(s.start_ms) AS first_ms, MAX(s.end_ms) AS last_ms " +
          "FROM markets m LEFT JOIN spans s ON s.market_id = m.id GROUP BY m.id ORDER BY m.id"
      )
      .all() as Array<MarketRow & { first_ms: number | null; last_ms: number | null }>
  }

  private inOrder(marketId: string, ts: number): number {
    let last = this.lastTs.get(marketId)
    if (last === undefined) {
      const row = this.db
        .prepare(
          "SELECT MAX(x) AS last FROM (SELECT MAX(ts) AS x FROM book WHERE market_id = ? " +
            "UNION ALL SELECT MAX(ts) FROM trades WHERE market_id = ? UNION ALL SELECT MAX(end_ms) FROM spans WHERE market_id = ?)"
        )
        .get(marketId, marketId, marketId) as { last: number | null }
      last = row.last ?? ts
    }
    const at = Math.max(last, ts)
    this.lastTs.set(marketId, at)
    return at
  }

  /**
   * Starts a span with the snapshot that opens it; answers the span id. When the market has an earlier span, the
   * stretch between is absent for `reason` (a reconnect, a gap in the venue's sequence, a recorder that stopped).
   */
  openSpan(
    marketId: string,
    ts: number,
    receivedMs: number,
    bids: Levels,
    asks: Levels,
    reason: string
  ): { readonly span: number; readonly ts: number } {
    return this.db.transaction(() => {
      const at = this.inOrder(marketId, ts)
      const previous = this.db.prepare("SELECT MAX(end_ms) AS end FROM spans WHERE market_id = ?").get(marketId) as {
        end: number | null
      }
      if (previous.end !== null && previous.end < at) {
        this.db
          .prepare("INSERT INTO absent (market_id, start_ms, end_ms, reason) VALUES (?, ?, ?, ?)")
          .run(marketId, previous.end, at, reason)
      }
      const span = Number(
        this.db.prepare("INSERT INTO spans (market_id, start_ms, end_ms) VALUES (?, ?, ?)").run(marketId, at, at)
          .lastInsertRowid
      )
      this.insertBook(marketId, span, at, receivedMs, "snapshot", bids, asks)
      return { span, ts: at }
    })()
  }

  private insertBook(
    marketId: string,
    span: number,
    ts: number,
    receivedMs: number,
    kind: "snapshot" | "change",
    bids: Levels,
    asks: Levels
  ): void {
    const id = this.db
      .prepare("INSERT INTO book (market_id, span_id, ts, received_ms, kind, bids, asks) VALUES (?, ?, ?, ?, ?, ?, ?)")
      .run(marketId, span, ts, receivedMs, kind, JSON.stringify(bids), JSON.stringify(asks)).lastInsertRowid
    this.db.prepare("UPDATE spans SET end_ms = MAX(end_ms, ?) WHERE id = ?").run(ts, span)
    let held = this.held.get(span)
    if (held === undefined || kind === "snapshot") {
      held = { bids: new Map(), asks: new Map(), rows: 0 }
      this.held.set(span, held)
    }
    applyLevels(held.bids, bids)
    applyLevels(held.asks, asks)
    held.rows += 1
    if (held.rows % CHECKPOINT_EVERY === 0) {
      this.db
        .prepare("INSERT INTO checkpoints (span_id, row_id, bids, asks) VALUES (?, ?, ?, ?)")
        .run(
          span,
          Number(id),
          JSON.stringify(sortedLevels(held.bids, true)),
          JSON.stringify(sortedLevels(held.asks, false))
        )
    }
  }

  /** A book row inside an open span: a change (levels to set, size "0" removes) or a fresh snapshot. */
  appendBook(
    marketId: string,
    span: number,
    ts: number,
    receivedMs: number,
    kind: "snapshot" | "change",
    bids: Levels,
    asks: Levels
  ): number {
    const at = this.inOrder(marketId, ts)
    this.db.transaction(() => this.insertBook(marketId, span, at, receivedMs, kind, bids, asks))()
    return at
  }

  appendTrade(
    marketId: string,
    span: number,
    trade: {
      readonly trade_id: string
      readonly ts: number
      readonly price: string
      readonly amount: string
      readonly taker_side: "buy" | "sell"
    },
    receivedMs: number
  ): void {
    const at = this.inOrder(marketId, trade.ts)
    this.db.transaction(() => {
      this.db
        .prepare(
          "INSERT INTO trades (market_id, trade_id, ts, received_ms, price, amount, taker_side) VALUES (?, ?, ?, ?, ?, ?, ?)"
        )
        .run(marketId, trade.trade_id, at, receivedMs, trade.price, trade.amount, trade.taker_side)
      this.db.prepare("UPDATE spans SET end_ms = MAX(end_ms, ?) WHERE id = ?").run(at, span)
    })()
  }

  /** The span is known to have been recorded up to `ts` (a quiet market, or the recorder stopping). */
  extendSpan(marketId: string, span: number, ts: number): void {
    const at = this.inOrder(marketId, ts)
    this.db.prepare("UPDATE spans SET end_ms = MAX(end_ms, ?) WHERE id = ?").run(at, span)
  }

  // ---- reads ----

  spans(marketId: string, fromMs: number, toMs: number): ReadonlyArray<SpanRow> {
    return this.db
      .prepare(
        "SELECT id, market_id, start_ms, end_ms FROM spans WHERE market_id = ? AND end_ms >= ? AND start_ms <= ? " +
          "ORDER BY start_ms, id"
      )
      .all(marketId, fromMs, toMs) as Array<SpanRow>
  }

  /** Why the stretch around `atMs` is absent, if a reason was written for it. */
  absentReason(marketId: string, fromMs: number, toMs: number): string | undefined {
    const row = this.db
      .prepare(
        "SELECT reason FROM absent WHERE market_id = ? AND start_ms <= ? AND end_ms >= ? ORDER BY start_ms DESC LIMIT 1"
      )
      .get(marketId, toMs, fromMs) as { reason: string } | undefined
    return row?.reason
  }

  /** The newest checkpoint of a span at or before row `uptoId`: the whole book after that row. */
  lastCheckpoint(
    span: number,
    uptoId: number
  ): { readonly row_id: number; readonly bids: Levels; readonly asks: Levels } | undefined {
    const row = this.db
      .prepare(
        "SELECT row_id, bids, asks FROM checkpoints WHERE span_id = ? AND row_id <= ? ORDER BY row_id DESC LIMIT 1"
      )
      .get(span, uptoId) as { row_id: number; bids: string; asks: string } | undefined
    return row === undefined
      ? undefined
      : { row_id: row.row_id, bids: parseLevels(row.bids), asks: parseLevels(row.asks) }
  }

  /** The span's last snapshot at or before `ts` (rows up to `beforeId` when given). */
  lastSnapshot(span: number, ts: number, uptoId = Number.MAX_SAFE_INTEGER): BookRow | undefined {
    const row = this.db
      .prepare(
        "SELECT * FROM book WHERE span_id = ? AND kind = 'snapshot' AND ts <= ? AND id <= ? ORDER BY id DESC LIMIT 1"
      )
      .get(span, ts, uptoId) as Record<string, unknown> | undefined
    return row === undefined ? undefined : bookRow(row)
  }

  /** Book rows of a span with `afterId < id <= uptoId` and `ts <= toMs`, in order, at most `limit`. */
  bookRows(span: number, afterId: number, toMs: number, limit: number, uptoId = Number.MAX_SAFE_INTEGER) {
    return (
      this.db
        .prepare("SELECT * FROM book WHERE span_id = ? AND id > ? AND id <= ? AND ts <= ? ORDER BY id LIMIT ?")
        .all(span, afterId, uptoId, toMs, limit) as Array<Record<string, unknown>>
    ).map(bookRow)
  }

  /** The last book row of a span at or before `ts`. */
  lastRowAt(span: number, ts: number): BookRow | undefined {
    const row = this.db
      .prepare("SELECT * FROM book WHERE span_id = ? AND ts <= ? ORDER BY ts DESC, id DESC LIMIT 1")
      .get(span, ts) as Record<string, unknown> | undefined
    return row === undefined ? undefined : bookRow(row)
  }

  bookRow(id: number): BookRow | undefined {
    const row = this.db.prepare("SELECT * FROM book WHERE id = ?").get(id) as Record<string, unknown> | undefined
    return row === undefined ? undefined : bookRow(row)
  }

  /** Trades of a market in `[fromMs, toMs]` after row `afterId`, in order, at most `limit`. */
  trades(marketId: string, fromMs: number, toMs: number, afterId: number, limit: number): ReadonlyArray<TradeRow> {
    return this.db
      .prepare(
        "SELECT id, market_id, trade_id, ts, received_ms, price, amount, taker_side FROM trades " +
          "WHERE market_id = ? AND ts >= ? AND ts <= ? AND id > ? ORDER BY ts, id LIMIT ?"
      )
      .all(marketId, fromMs, toMs, afterId, limit) as Array<TradeRow>
  }
}
