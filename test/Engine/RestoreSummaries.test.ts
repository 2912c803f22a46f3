/**
 * Quiet parents restored from their summaries (market, bands, due times) and read whole at their first use: a start
 * reads none of their states, and they act exactly as parents read whole at start. The database is one an earlier
 * version wrote (before summaries), as a SQL dump: it migrates, restores the same parents, and is summarized for the
 * next start.
 */
import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Context, Effect, Exit, Layer, Scope, TestContext } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { serverServices, venuesLayer } from "../../src/Assembly.ts"
import { renderOrder } from "../../src/Domain/Order.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { Desk, renderFill } from "../../src/Trading/Desk.ts"
import { run } from "./Support.ts"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/databases/${name}`, import.meta.url), "utf8")

/** The live parents of the dump as the version that wrote it rendered them when it stopped. */
const before = JSON.parse(fixture("engine-0004-parents.json")) as ReadonlyArray<{ readonly id: string }>

/** Restores the dump into a database file in a fresh directory. */
const fromDump = Effect.acquireRelease(
  Effect.sync(() => {
    const dir = mkdtempSync(join(tmpdir(), "crossbook-summaries-"))
    const db = new Database(join(dir, "engine.db"))
    db.exec(fixture("engine-0004.sql"))
    db.close()
    return dir
  }),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

/**
 * From the dump, the server starts `starts` times over the same venue and clock (stopping in between), then runs for a
 * minute. Answers the live parents' records right after each start, how many states each start read one by one, and
 * what the minute did.
 */
const scenario = (starts: number) =>
  Effect.gen(function* () {
    const dir = yield* fromDump
    const file = join(dir, "engine.db")
    const venues = yield* Layer.build(venuesLayer({ seed: 17 }))
    let reads = 0
    const store = Layer.effect(
      OrderStore,
      Effect.map(OrderStore, (inner) => ({
        ...inner,
        parentState: (id: string) => {
          reads += 1
          return inner.parentState(id)
        }
      }))
    ).pipe(Layer.provide(OrderStore.layerSql.pipe(Layer.provide(engineDatabase(file)))))
    const start = Effect.gen(function* () {
      const scope = yield* Scope.make()
      const layer = serverServices({
        seed: 17,
        engineSeed: 5,
        venues: Layer.succeedContext(venues),
        store,
        auth: Auth.layerAllowAll
      })
      const context = yield* Layer.buildWithScope(layer, scope)
      return { scope, engine: Context.get(context, Engine), desk: Context.get(context, Desk) }
    })
    const records: Array<ReadonlyArray<unknown>> = []
    const readsAtStart: Array<number> = []
    let server = yield* start
    for (let n = 1; ; n++) {
      readsAtStart.push(reads)
      const rendered: Array<unknown> = []
      for (const { id } of before) rendered.push(renderOrder((yield* server.desk.get(id))!))
      records.push(rendered)
      if (n === starts) break
      yield* Scope.close(server.scope, Exit.void)
      reads = 0
      server = yield* start
    }
    const summarized = () => {
      const db = new Database(file, { readonly: true })
      try {
        return (
          db.prepare("SELECT id FROM parents WHERE live = 1 AND summary IS NOT NULL ORDER BY id").all() as Array<{
            id: string
          }>
        ).map((r) => r.id)
      } finally {
        db.close()
      }
    }
    const live = yield* server.engine.liveCount
    const summaries = summarized()
    yield* run(60)
    const orders = (yield* server.desk.list({})).map(renderOrder)
    const fills = (yield* server.desk.fills({})).map(renderFill)
    yield* Scope.close(server.scope, Exit.void)
    return { records, readsAtStart, summarized: summaries, live, orders, fills }
  }).pipe(Effect.scoped, Effect.provide(TestContext.TestContext))

describe("parents restored from their summaries", () => {
  it.effect("a database an earlier version wrote restores the same parents, then starts from their summaries", () =>
    Effect.gen(function* () {
      const { records, readsAtStart, summarized, live } = yield* scenario(2)
      assert.strictEqual(before.length, 6)
      assert.strictEqual(live, before.length)
      // Read whole at the first start (no summaries yet), from their summaries at the second: the same records.
      assert.deepStrictEqual(records[0], before)
      assert.deepStrictEqual(records[1], before)
      // The waiting stops and the parents between children (waiting for a timer) all have summaries now ...
      assert.deepStrictEqual(
        summarized,
        before.map((p) => p.id)
      )
      // ... and the second start read none of their states but the one the timer fiber looks at (its due time is
      // the first); the first start read them with the live index, not one by one.
      assert.strictEqual(readsAtStart[0], 0)
      assert.isAtMost(readsAtStart[1]!, 1)
    })
  )

  it.effect("act as if read whole: the same orders and fills as parents read whole at start", () =>
    Effect.gen(function* () {
      const whole = yield* scenario(1)
      const summarized = yield* scenario(2)
      assert.isAbove(whole.fills.length, 0)
      assert.isAtLeast(whole.orders.filter((o) => o.held_by === "engine" && o.status !== "waiting").length, 3)
      assert.deepStrictEqual(summarized.orders, whole.orders)
      assert.deepStrictEqual(summarized.fills, whole.fills)
    })
  )
})
