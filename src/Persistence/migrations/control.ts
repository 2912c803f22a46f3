/** Migrations of the control database (users, tokens, grants, audit); add new ones, never edit shipped ones. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const ControlMigrations = {
  "0001_users_tokens_grants_audit": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE users (
      id TEXT PRIMARY KEY,
      name TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL
    )`
    yield* sql`CREATE TABLE tokens (
      id TEXT PRIMARY KEY,
      user_id TEXT NOT NULL REFERENCES users (id),
      name TEXT NOT NULL,
      prefix TEXT NOT NULL UNIQUE,
      hash TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      last_used_at INTEGER,
      revoked_at INTEGER
    )`
    yield* sql`CREATE TABLE grants (
      user_id TEXT NOT NULL REFERENCES users (id),
      account TEXT NOT NULL,
      permission TEXT NOT NULL CHECK (permission IN ('view', 'trade', 'manage_credentials', 'manage_members')),
      created_at INTEGER NOT NULL,
      PRIMARY KEY (user_id, account, permission)
    )`
    yield* sql`CREATE TABLE audit (
      id INTEGER PRIMARY KEY,
      ts INTEGER NOT NULL,
      actor TEXT NOT NULL,
      request TEXT NOT NULL,
      action TEXT NOT NULL,
      subject TEXT NOT NULL,
      before TEXT,
      after TEXT
    )`
    yield* sql`CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
      BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`
    yield* sql`CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
      BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`
  })
}
