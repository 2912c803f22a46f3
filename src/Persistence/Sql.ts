/** SQLite for the engine database: the client, connection settings, and the migrator. */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { ControlMigrations } from "./migrations/control.ts"
import { EngineMigrations } from "./migrations/engine.ts"

/** Settings the migrator must not set (it runs in one transaction): a wait on locks and foreign keys. */
const connectionSettings = Layer.effectDiscard(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`PRAGMA busy_timeout = 5000`
    yield* sql`PRAGMA foreign_keys = ON`
    yield* sql`PRAGMA synchronous = NORMAL`
  })
)

const database = (filename: string, migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) => {
  const client = SqliteClient.layer({ filename })
  const migrated = SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(migrations) }).pipe(
    Layer.provide(NodeContext.layer)
  )
  return Layer.mergeAll(migrated, connectionSettings).pipe(Layer.provideMerge(client), Layer.orDie)
}

/** The engine database at `filename` (":memory:" for tests and simulation), migrated to the latest schema. */
export const engineDatabase = (filename: string) => database(filename, EngineMigrations)

/** The control database (users, tokens, grants, audit), kept apart from the engine's. */
export const controlDatabase = (filename: string) => database(filename, ControlMigrations)
