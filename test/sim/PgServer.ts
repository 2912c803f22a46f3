/**
 * A real Postgres server for the cluster tests: PGlite (Postgres compiled to WebAssembly) served over the Postgres
 * wire protocol on a local port. Run alone (`node bin/run-ts.js test/sim/PgServer.ts PORT`) it serves until killed.
 */
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { resolve } from "node:path"

export const startPostgres = async (port: number) => {
  const db = await PGlite.create()
  const server = new PGLiteSocketServer({ db, port, host: "127.0.0.1", maxConnections: 64 })
  await server.start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** The first row of a query, its numbers as numbers. */
    query: async (sql: string) => {
      const row = (await db.query<Record<string, unknown>>(sql)).rows[0] ?? {}
      return Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v]))
    },
    stop: async () => {
      await server.stop()
      await db.close()
    }
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const pg = await startPostgres(Number(process.argv[2] ?? 54329))
  process.stdout.write(`${pg.url}\n`)
}
