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
  })
}
