/** SQLite for the engine database: the client, connection settings, and the migrator. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { SqlClient } from "@effect/sql"
import { SqliteClient, SqliteMigrator } from "@effect/sql-sqlite-node"
import Database from "better-sqlite3"
import { Context, Effect, Layer } from "effect"
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

/** A statement and its positional parameters. */
export type Statement = readonly [text: string, params: ReadonlyArray<string | number | null>]

/**
 * The engine database's writes, on a connection of their own: each write's statements in one transaction, run
 * synchronously with statements prepared once (the SQL client adds 20–30 µs per statement around the same driver).
 * Every write of the engine database goes through it once the schema is migrated; the client's connection reads.
 * Only for a database on a file: an in-memory one is a different database on each connection.
 */
export class EngineWriter extends Context.Tag("crossbook/EngineWriter")<
  EngineWriter,
  {
    readonly write: (statements: ReadonlyArray<Statement>) => void
    /**
     * A query answered synchronously on the same connection (it sees every write, all of which go through it), or
     * undefined before the first write has opened it. For the lookups on a placement's and a fill's path, where the
     * client's query costs about a hundred Effect operations around the same driver.
     */
    readonly read: (statement: Statement) => ReadonlyArray<Record<string, unknown>> | undefined
    /** The same, opening the connection first if no write has yet (only once the schema is migrated). */
    readonly readNow: (statement: Statement) => ReadonlyArray<Record<string, unknown>>
  }
>() {}

const BUSY_WAIT_MS = 5_000
const BUSY_PAUSE_MS = 2
/** What the writer sleeps on between tries (nothing ever wakes it early). */
const pause = new Int32Array(new SharedArrayBuffer(4))

const writer = (filename: string) =>
  filename === ":memory:"
    ? Layer.empty
    : Layer.scoped(
        EngineWriter,
        Effect.gen(function* () {
          // Opened at the first write, when the client's connection has migrated the schema.
          let db: Database.Database | undefined
          let transaction: ((statements: ReadonlyArray<Statement>) => void) | undefined
          let statement: ((text: string) => Database.Statement) | undefined
          yield* Effect.addFinalizer(() => Effect.sync(() => db?.close()))
          const begin = () => {
            const conn = (db = new Database(filename, { fileMustExist: true, timeout: BUSY_WAIT_MS }))
            // As the client's connection: foreign keys, and checkpoints left to the checkpointer.
            conn.pragma("foreign_keys = ON")
            conn.pragma("synchronous = NORMAL")
            conn.pragma("wal_autocheckpoint = 0")
            const prepared = new Map<string, Database.Statement>()
            const prepare = (text: string) => {
              let s = prepared.get(text)
              if (s === undefined) prepared.set(text, (s = conn.prepare(text)))
              return s
            }
            // Reads take the same statements, once the connection is open.
            statement = prepare
            // BEGIN IMMEDIATE: the write lock is taken first, where a busy checkpoint is waited for. A deferred
            // transaction would hold a read snapshot while it asks for the write lock, and a TRUNCATE checkpoint
            // waiting on that reader makes SQLite answer busy at once instead of waiting.
            return conn.transaction((list: ReadonlyArray<Statement>) => {
              for (const [text, params] of list) prepare(text).run(...params)
            }).immediate
          }
          return {
            read: ([text, params]) =>
              statement === undefined ? undefined : (statement(text).all(...params) as Array<Record<string, unknown>>),
            readNow: ([text, params]) => {
              transaction ??= begin()
              return statement!(text).all(...params) as Array<Record<string, unknown>>
            },
            write: (statements) => {
              transaction ??= begin()
              // A checkpoint that truncates the WAL holds the write lock for a moment, and SQLite may answer busy
              // without waiting; the transaction rolled back whole, so it is run again, for up to five seconds.
              for (let waited = 0; ; waited += BUSY_PAUSE_MS) {
                try {
                  transaction(statements)
                  return
                } catch (e) {
                  if ((e as { code?: unknown }).code !== "SQLITE_BUSY" || waited >= BUSY_WAIT_MS) throw e
                  Atomics.wait(pause, 0, 0, BUSY_PAUSE_MS)
                }
              }
            }
          }
        })
      )

/** The engine database at `filename` (":memory:" for tests and simulation), migrated to the latest schema. */
export const engineDatabase = (filename: string) => Layer.merge(database(filename, EngineMigrations), writer(filename))

/** The control database (users, tokens, grants, audit), kept apart from the engine's. */
export const controlDatabase = (filename: string) => database(filename, ControlMigrations)
