// A working bucket order survives a restart: its members, legs and per-venue sums come back, and a cancel after it
// still pulls every leg.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope, TestClock } from "effect"
import { renderOrder } from "../../src/Domain/Order.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { submitBucketOrder } from "../../src/Orders.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { Buckets } from "../../src/Trading/Buckets.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import { run, settle } from "./Support.ts"

const start = (file: string) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const context = yield* Layer.buildWithScope(
      serverServices({
        seed: 9,
        simVenues: 2,
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(file))),
        auth: authLayer(":memory:")
      }),
      scope
    )
    yield* settle
    return { context, scope }
  })

const allowed = () => Effect.void

describe("a bucket order across a restart", () => {
  it.effect("comes back working with its members and sums, and a cancel then pulls every leg on both venues", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "bucket-restart-"))
      try {
        const file = join(dir, "engine.db")
        const first = yield* start(file)
        const gateway = Context.get(first.context, VenueGateway)
        const twin = (yield* gateway.venue("sim2")!.markets).find(
          (m) => m.status === "open" && m.nativeId.endsWith("-no")
        )!
        const anchor = `sim:${twin.nativeId.replace(/-no$/, "").toUpperCase()}`
        const bucket = yield* Context.get(first.context, Buckets).create(
          {
            name: "twins",
            members: [
              { market_id: anchor, flip: false },
              { market_id: `sim2:${twin.nativeId}`, flip: true }
            ]
          },
          "t",
          allowed
        )
        const { order } = yield* submitBucketOrder(
          {
            market_id: `bucket:${bucket.id}`,
            side: "buy",
            type: "market",
            amount: "20000",
            price: "0.95",
            params: { min_stay_s: 600 }
          },
          bucket,
          "t"
        ).pipe(Effect.provide(first.context))
        yield* settle
        const before = renderOrder((yield* Context.get(first.context, Desk).get(order.id))!)
        assert.strictEqual(before.status, "triggered")
        assert.isAbove(Number(before.filled), 0)
        yield* Scope.close(first.scope, Exit.void)
        // A restart takes a while; the new run's sim venues start later than the last run's.
        yield* TestClock.adjust("5 seconds")

        const second = yield* start(file)
        const engine = Context.get(second.context, Engine)
        assert.strictEqual(yield* engine.liveCount, 1)
        assert.deepStrictEqual(yield* Context.get(second.context, Buckets).get(bucket.id), bucket)
        const desk = Context.get(second.context, Desk)
        const restored = renderOrder((yield* desk.get(order.id))!)
        assert.strictEqual(restored.status, "triggered")
        // What filled before the restart is kept; the new run's first round may have added to it at once.
        const sums = (o: typeof before) => (o.info["venues"] as Array<any>).map((v) => [v.market_id, Number(v.filled)])
        for (const [i, [market, filled]] of sums(restored).entries()) {
          assert.strictEqual(market, sums(before)[i]![0])
          assert.isAtLeast(filled as number, sums(before)[i]![1] as number)
        }
        assert.strictEqual(
          Number(restored.filled),
          sums(restored).reduce((t, [, n]) => t + (n as number), 0)
        )
        // The new run's sim venues do not hold the old legs: they end, and the order plans again on both venues.
        yield* run(2)
        const kids = yield* desk.list({ parentId: order.id })
        const live = kids.filter((k) => k.status === "open")
        assert.deepStrictEqual(
          [...new Set(live.map((k) => k.marketId))].sort(),
          [anchor, `sim2:${twin.nativeId}`].sort()
        )
        yield* engine.cancel(order.id)
        yield* run(1)
        const after = yield* desk.list({ parentId: order.id })
        assert.deepStrictEqual(
          after.filter((k) => !["closed", "canceled", "rejected", "expired"].includes(k.status)).map((k) => k.id),
          []
        )
        assert.strictEqual((yield* desk.get(order.id))!.status, "canceled")
        yield* Scope.close(second.scope, Exit.void)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
