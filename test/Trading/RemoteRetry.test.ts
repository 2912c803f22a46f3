/** Engine children on a remote venue that clearly refuses them: retried with backoff, or the parent ends rejected. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { makeMarketId } from "../../src/Domain/Ids.ts"
import type { AccountRequest } from "../../src/Domain/OrderRequest.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { REGISTRY } from "../../src/Engine/Registry.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { authLayer, deskServices } from "../../src/Assembly.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import {
  authed,
  eventually,
  newScript,
  quoted,
  remoteBounds,
  remoteServer,
  remoteVenues,
  Script
} from "./RemoteVenue.ts"

const parentOf = (id: string) => Effect.map(authed("GET", `/trading/orders/${id}`), (r) => r.body)
const childrenOf = (id: string) =>
  Effect.map(authed("GET", `/trading/orders?parent_id=${id}`), (r) => r.body.data as Array<any>)
/** A bound on the venue's answer that a loaded machine does not reach: every answer here is a clear one. */
const SLOW = 10_000
/** Orders resting at the remote venue itself. */
const atVenue = Effect.map(VenueGateway, (g) => (g.venue("sim2") as SimVenue).exchange.openOrders().length)

/** A price in cents well below a best bid in cents, so that a child rests through the test. */
const deep = (bidCents: number) => (Math.max(1, bidCents - 10) / 100).toFixed(2)

/** An iceberg on the remote venue: its first child (of 1) goes out at once, and rests. */
const iceberg = (market: { readonly id: string; readonly rest: string }) =>
  authed("POST", "/trading/orders", {
    market_id: market.id,
    side: "buy",
    type: "iceberg",
    amount: "3",
    price: deep(Math.round(Number(market.rest) * 100) + 3),
    params: { display: "1" }
  })

describe("an engine child a remote venue refuses", () => {
  it.live(
    "429 twice, then accepted: placed on the third attempt under a new client id each time, once at the venue",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push("rate_limited", "rate_limited")
        const res = yield* iceberg(far)
        assert.strictEqual(res.status, 201, res.text)
        const id = res.body.id as string
        const kids = yield* eventually(childrenOf(id), (d) => d.some((c) => c.status === "open"))
        assert.strictEqual(script.seen.length, 3)
        assert.strictEqual(new Set(script.seen).size, 3, "each attempt has its own client id at the venue")
        assert.deepStrictEqual(kids.map((c) => c.client_order_id).sort(), [`${id}-1`, `${id}-1-r1`, `${id}-1-r2`])
        assert.deepStrictEqual(kids.map((c) => c.status).sort(), ["open", "rejected", "rejected"])
        // The venue's retry-after goes with each refused attempt: the next one waits at least that long.
        for (const c of kids.filter((k) => k.status === "rejected")) assert.strictEqual(c.info.retry_after, 1)
        assert.strictEqual(yield* atVenue, 1)
        const parent = yield* parentOf(id)
        assert.strictEqual(parent.status, "triggered")
        // no later attempt: the retries stopped once one was accepted
        yield* Effect.sleep("1 second")
        assert.strictEqual(script.seen.length, 3)
        assert.strictEqual(yield* atVenue, 1)
      }).pipe(Effect.provide(remoteServer({ placementTimeoutMs: SLOW }))),
    30_000
  )

  it.live(
    "a lost answer for a child that never reached the venue: once found absent, the child is placed again",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push("fail")
        const res = yield* iceberg(far)
        assert.strictEqual(res.status, 201, res.text)
        const id = res.body.id as string
        const kids = yield* eventually(childrenOf(id), (d) => d.some((c) => c.status === "open"))
        const first = kids.find((c) => c.client_order_id === `${id}-1`)!
        assert.strictEqual(first.status, "rejected")
        assert.strictEqual(first.info.outcome, "absent")
        assert.strictEqual(kids.find((c) => c.status === "open")!.client_order_id, `${id}-1-r1`)
        assert.strictEqual(yield* atVenue, 1)
        assert.strictEqual((yield* parentOf(id)).status, "triggered")
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )

  it.live(
    "refused as retryable every time: after the bound the parent is rejected with the reason, after 6 attempts",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push(...Array.from({ length: 10 }, () => "down" as const))
        const res = yield* iceberg(far)
        assert.strictEqual(res.status, 201, res.text)
        const id = res.body.id as string
        // the backoff is 0.2 + 0.4 + 0.8 + 1.6 + 3.2 s
        const parent = yield* eventually(parentOf(id), (p) => p.status === "rejected", 1000)
        assert.match(parent.info.detail, /^child 1 was refused: .*HTTP 503 exchange closed/)
        assert.strictEqual(script.seen.length, 6, "the first attempt and five retries")
        const kids = yield* childrenOf(id)
        assert.strictEqual(kids.length, 6)
        assert.isTrue(kids.every((c) => c.status === "rejected" && c.info.retryable === true))
        yield* Effect.sleep("500 millis")
        assert.strictEqual(script.seen.length, 6)
        assert.strictEqual(yield* atVenue, 0)
      }).pipe(Effect.provide(remoteServer({ placementTimeoutMs: SLOW }))),
    30_000
  )

  it.live("a refusal that is not retryable rejects the parent at once, with the venue's reason", () =>
    Effect.gen(function* () {
      const script = yield* Script
      const far = yield* quoted("sim2")
      script.next.push("refuse")
      const res = yield* iceberg(far)
      assert.strictEqual(res.status, 201, res.text)
      const id = res.body.id as string
      const parent = yield* eventually(parentOf(id), (p) => p.status === "rejected")
      assert.strictEqual(parent.info.detail, "child 1 was refused: sim2 refused the order: refused by script")
      yield* Effect.sleep("500 millis")
      assert.strictEqual(script.seen.length, 1)
      const kids = yield* childrenOf(id)
      assert.strictEqual(kids.length, 1)
      assert.strictEqual(kids[0].info.retryable, false)
    }).pipe(Effect.provide(remoteServer({ placementTimeoutMs: SLOW })))
  )

  it.live(
    "a cancel of the parent while a retry waits: the parent ends canceled and nothing is placed after it",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push(...Array.from({ length: 10 }, () => "rate_limited" as const))
        const res = yield* iceberg(far)
        assert.strictEqual(res.status, 201, res.text)
        const id = res.body.id as string
        // the fourth attempt refused: the next waits 1.6 s
        yield* eventually(childrenOf(id), (d) => d.length === 4 && d.every((c) => c.status === "rejected"))
        const canceled = yield* authed("DELETE", `/trading/orders/${id}`)
        assert.strictEqual(canceled.status, 200, canceled.text)
        // the engine places under the lock its cancel took: what it placed is all there is
        const placed = (yield* childrenOf(id)).length
        assert.isAtLeast(placed, 4)
        const parent = yield* eventually(parentOf(id), (p) => p.status === "canceled")
        assert.strictEqual(parent.filled, "0")
        yield* Effect.sleep("2500 millis")
        assert.strictEqual((yield* childrenOf(id)).length, placed, "no placement after the cancel")
        assert.strictEqual(script.seen.length, placed)
        assert.strictEqual(yield* atVenue, 0)
      }).pipe(Effect.provide(remoteServer({ placementTimeoutMs: SLOW }))),
    30_000
  )
})

describe("an engine restarted while a refused child waits for its retry", () => {
  it.live(
    "places the child again once, under the client id its retry was to have",
    () =>
      Effect.gen(function* () {
        const script = newScript()
        const scope = yield* Scope.make()
        const base = yield* Layer.buildWithScope(
          deskServices({
            seed: 7,
            store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
            auth: authLayer(":memory:"),
            venues: remoteVenues(script),
            remote: remoteBounds(SLOW)
          }),
          scope
        )
        const startEngine = Effect.gen(function* () {
          const engineScope = yield* Scope.make()
          const context = yield* Layer.buildWithScope(Engine.layer(REGISTRY), engineScope).pipe(Effect.provide(base))
          return { engine: Context.get(context, Engine), engineScope }
        })
        const desk = Context.get(base, Desk)
        const sim2 = Context.get(base, VenueGateway).venue("sim2") as SimVenue
        const market = (yield* sim2.markets).find((m) => m.status === "open")!
        const book = yield* sim2.book(market.nativeId)
        const price = deep(Math.round(book.bids[0]!.price / 10_000))
        const first = yield* startEngine
        script.next.push("rate_limited", "rate_limited", "rate_limited", "rate_limited")
        const input = {
          market_id: makeMarketId("sim2", market.nativeId),
          account: "sim2:default",
          side: "buy",
          type: "iceberg",
          amount: "3",
          price,
          params: { display: "1" }
        } as unknown as AccountRequest
        const { order: parent } = yield* first.engine.create(input, "test")
        const children = desk.list({ parentId: parent.id })
        // the fourth attempt refused: the next would go 1.6 s later
        yield* eventually(children, (d) => d.length === 4 && d.every((c) => c.status === "rejected"))
        yield* Scope.close(first.engineScope, Exit.void)
        const second = yield* startEngine
        const placed = yield* eventually(children, (d) => d.some((c) => c.status === "open"))
        assert.strictEqual(placed.find((c) => c.status === "open")!.clientOrderId, `${parent.id}-1-r4`)
        // past the retry timer the first run had set: nothing more is placed
        yield* Effect.sleep("2500 millis")
        assert.strictEqual(script.seen.length, 5, JSON.stringify(script.seen))
        assert.strictEqual(new Set(script.seen).size, 5)
        assert.strictEqual((yield* children).length, 5)
        assert.strictEqual(sim2.exchange.openOrders().length, 1)
        yield* Scope.close(second.engineScope, Exit.void)
        yield* Scope.close(scope, Exit.void)
      }),
    30_000
  )
})
