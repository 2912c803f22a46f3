/** Migrations of the engine database, in order; never edit one that has shipped, add the next. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const EngineMigrations = {
  "0001_orders_and_journal": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE journal (
      seq INTEGER PRIMARY KEY,
      ts INTEGER NOT NULL,
      kind TEXT NOT NULL,
      key TEXT NOT NULL,
      payload TEXT NOT NULL
    )`
    yield* sql`CREATE INDEX journal_kind ON journal (kind, seq)`
    yield* sql`CREATE TABLE orders (
      id TEXT PRIMARY KEY,
      account TEXT NOT NULL,
      client_order_id TEXT NOT NULL,
      venue TEXT NOT NULL,
      market_id TEXT NOT NULL,
      status TEXT NOT NULL,
      parent_id TEXT,
      book TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      record TEXT NOT NULL
    )`
    yield* sql`CREATE UNIQUE INDEX orders_client_id ON orders (account, client_order_id)`
    yield* sql`CREATE INDEX orders_created ON orders (created_at DESC, id DESC)`
    yield* sql`CREATE INDEX orders_parent ON orders (parent_id)`
    yield* sql`CREATE TABLE parents (
      id TEXT PRIMARY KEY,
      live INTEGER NOT NULL,
      state TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`
    yield* sql`CREATE INDEX parents_live ON parents (live)`
  }),
  "0002_settings": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE settings (
      key TEXT PRIMARY KEY,
      value TEXT NOT NULL,
      updated_at INTEGER NOT NULL
    )`
  }),
  "0003_ledger_rows_and_order_keys": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Each fill, keyed by the journal seq of its `fill.new`, and the ledger it leaves: written in the fill's own
    // transaction, so a start reads the ledger instead of replaying every fill.
    yield* sql`CREATE TABLE fills (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      account TEXT NOT NULL,
      market_id TEXT NOT NULL,
      order_id TEXT NOT NULL,
      book TEXT NOT NULL,
      ts INTEGER NOT NULL,
      record TEXT NOT NULL
    )`
    yield* sql`CREATE INDEX fills_ts ON fills (ts DESC, seq DESC)`
    yield* sql`CREATE INDEX fills_order ON fills (order_id, seq)`
    yield* sql`CREATE INDEX fills_account_market ON fills (account, market_id, book)`
    // The fills of an older version, from their events; the desk rebuilds the ledger rows from them once at start.
    yield* sql`INSERT OR IGNORE INTO fills (seq, id, account, market_id, order_id, book, ts, record)
      SELECT seq, json_extract(payload, '$.id'), json_extract(payload, '$.account'), json_extract(payload, '$.market_id'),
        json_extract(payload, '$.order_id'), json_extract(payload, '$.book'), json_extract(payload, '$.ts'), payload
      FROM journal WHERE kind = 'fill.new' ORDER BY seq`
    yield* sql`INSERT INTO settings (key, value, updated_at)
      SELECT 'ledger_replay', json_object('through', MAX(seq)), 0 FROM fills HAVING COUNT(*) > 0`
    yield* sql`CREATE TABLE positions (
      account TEXT NOT NULL,
      market_id TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (account, market_id)
    )`
    yield* sql`CREATE TABLE balances (
      account TEXT PRIMARY KEY,
      cash_moved TEXT NOT NULL
    )`
    // Lists page by (created_at, the order's number) in SQL, and a venue's report finds any order by its venue id.
    yield* sql`ALTER TABLE orders ADD COLUMN num INTEGER NOT NULL DEFAULT 0`
    yield* sql`ALTER TABLE orders ADD COLUMN venue_order_id TEXT`
    yield* sql`UPDATE orders SET num = CAST(substr(id, instr(id, '_') + 1) AS INTEGER),
      venue_order_id = json_extract(record, '$.venueOrderId')`
    yield* sql`CREATE INDEX orders_page ON orders (created_at DESC, num DESC)`
    yield* sql`CREATE INDEX orders_status_page ON orders (status, created_at DESC, num DESC)`
    yield* sql`CREATE INDEX orders_venue_order ON orders (venue, venue_order_id)`
  }),
  "0004_buckets": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // One proposition listed on several venues; archived, never deleted (its orders keep naming it).
    yield* sql`CREATE TABLE buckets (
      id TEXT PRIMARY KEY,
      num INTEGER NOT NULL UNIQUE,
      status TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      record TEXT NOT NULL
    )`
  }),
  "0005_start_from_indexes": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // What a start needs of a live parent, written with its state by the engine (null for the rows of an older
    // version: those are read whole at the next start, which writes their summaries). A start walks this index
    // alone, in id order, and reads no parent's row that has a summary.
    yield* sql`ALTER TABLE parents ADD COLUMN summary TEXT`
    yield* sql`CREATE INDEX parents_start ON parents (live, id, summary)`
    yield* sql`DROP INDEX parents_live`
    // The live orders' ids and client ids in the status index: the desk's start tells the engine parents it files
    // by their heads from the orders it restores whole without reading the row of either.
    yield* sql`DROP INDEX orders_status_page`
    yield* sql`CREATE INDEX orders_status_page ON orders (status, created_at DESC, num DESC, id, client_order_id)`
  })
}
