/**
 * The desk alone, for `server.orders_per_s`: a plain limit placed in process, one after another, through the same
 * services `serve` builds (the sim venue, group commits), on SQLite on a file against the in-memory store. With the
 * HTTP stack's own figure (`server.http_stack_orders_per_s`) it splits a served order's time into the stack's part, the
 * desk's and the store's.
 */
import { Context, Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { submitOrder } from "../../src/Orders.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { serverServices } from "../../src/Assembly.ts"
import { servedVenuesLayer } from "../../src/Venues/Venues.ts"
import { type Figure, ratio } from "./common.ts"

const WARM_UP = 2_000
const ORDERS = 10_000

/** µs per placement, after a warm-up, on the given store. */
const perOrder = (store: Layer.Layer<OrderStore>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const venues = servedVenuesLayer({ list: ["sim"], env: {}, seed: 1, simVenues: 1 }).pipe(Layer.orDie)
      const layer = serverServices({
        seed: 1,
        venues,
        startingCash: "100000000",
        gatherCommits: true,
        store,
        auth: Auth.layerAllowAll
      })
      const context = yield* Layer.build(layer)
      const sim = Context.get(context, VenueGateway).venue("sim")!
      const market = (yield* Effect.orDie(sim.markets)).find((m) => m.status === "open")!
      // A buy at the lowest price rests without crossing.
      const request = { market_id: `sim:${market.nativeId}`, side: "buy", type: "limit", amount: "1", price: "0.01" }
      const place = (n: number) =>
        Effect.forEach(
          Array.from({ length: n }),
          () => Effect.orDie(submitOrder(request as never, "sim:default", "bench").pipe(Effect.provide(context))),
          { discard: true }
        )
      yield* place(WARM_UP)
      const start = performance.now()
      yield* place(ORDERS)
      return ((performance.now() - start) * 1000) / ORDERS
    })
  )

export const deskFigures = async (): Promise<ReadonlyArray<Figure>> => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-bench-desk-"))
  try {
    const memory = await Effect.runPromise(perOrder(OrderStore.layerMemory))
    const sqlite = await Effect.runPromise(
      perOrder(OrderStore.layerSql.pipe(Layer.provide(engineDatabase(join(dir, "engine.db"))), Layer.orDie))
    )
    return [
      {
        name: "desk.place_us_per_order",
        value: Number(sqlite.toFixed(1)),
        unit: "µs",
        baseline: Number(memory.toFixed(1)),
        ratio: ratio(sqlite, memory),
        store: "SQLite on a file (baseline: the in-memory store)",
        orders: ORDERS
      }
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await deskFigures()) console.log(JSON.stringify(f))
}
