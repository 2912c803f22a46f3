/** SQLite for the engine database: the client, connection settings, and the migrator. */
import { NodeContext } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import { Effect, Layer } from "effect"
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
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

/**
 * WAL checkpoints off the writer's path: the writing connection never checkpoints on commit (`wal_autocheckpoint = 0`);
 * a worker thread with its own connection copies the WAL back into the database once a second (`PASSIVE`: it never
 * waits for, nor blocks, the writer) and truncates the WAL when it is past 64 MB and nobody is reading it. Closing
 * the last connection checkpoints what is left.
 */
const CHECKPOINTER = `
const { workerData, parentPort } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.file, { fileMustExist: true })
db.pragma("busy_timeout = 100")
const tick = () => {
  try {
    const [row] = db.pragma("wal_checkpoint(PASSIVE)")
    if (row && row.log * 4096 > 64 * 1024 * 1024 && row.checkpointed === row.log) db.pragma("wal_checkpoint(TRUNCATE)")
  } catch {}
}
const timer = setInterval(tick, 1000)
parentPort.on("message", () => { clearInterval(timer); tick(); db.close(); process.exit(0) })
`

const checkpointer = (filename: string) =>
  filename === ":memory:"
    ? Layer.empty
    : Layer.scopedDiscard(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          yield* sql`PRAGMA wal_autocheckpoint = 0`
          const driver = createRequire(import.meta.url).resolve("better-sqlite3")
          const worker = new Worker(CHECKPOINTER, { eval: true, workerData: { file: filename, driver } })
          worker.unref()
          // A checkpointer that cannot open the file (or fails) leaves the WAL to the close: nothing is lost.
          worker.on("error", () => undefined)
          yield* Effect.addFinalizer(() =>
            Effect.promise(
              () =>
                new Promise<void>((done) => {
                  worker.once("exit", () => done())
                  // Held open until it has ended: its last checkpoint and close come first.
                  worker.ref()
                  worker.postMessage("stop")
                })
            ).pipe(Effect.timeout("2 seconds"), Effect.ignore)
          )
        })
      )

const database = (filename: string, migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>) => {
  const client = SqliteClient.layer({ filename })
  const migrated = SqliteMigrator.layer({ loader: SqliteMigrator.fromRecord(migrations) }).pipe(
    Layer.provide(NodeContext.layer)
  )
  return Layer.mergeAll(migrated, connectionSettings, checkpointer(filename)).pipe(
    Layer.provideMerge(client),
    Layer.orDie
  )
}

/** The engine database at `filename` (":memory:" for tests and simulation), migrated to the latest schema. */
export const engineDatabase = (filename: string) => database(filename, EngineMigrations)

/** The control database (users, tokens, grants, audit), kept apart from the engine's. */
export const controlDatabase = (filename: string) => database(filename, ControlMigrations)
