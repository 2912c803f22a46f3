/** The desk on a venue that is slow, silent or ambiguous: lanes, unknown outcomes, and cancels of orders in flight. */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { authed, eventually, quoted, remoteServer, Script } from "./RemoteVenue.ts"

const order = (id: string) => Effect.map(authed("GET", `/trading/orders/${id}`), (r) => r.body)
const events = (kind: string) =>
  Effect.map(
    Effect.flatMap(OrderStore, (s) => s.eventsAfter(0, 100_000)),
    (all) => all.filter((e) => e.kind === kind)
  )
const limit = (marketId: string, price: string, extra: Record<string, unknown> = {}) => ({
  market_id: marketId,
  side: "buy",
  type: "limit",
  amount: "2",
  price,
  ...extra
})

describe("a remote venue that hangs", () => {
  it.live(
    "does not hold up another venue: an order, a cancel and an engine child on sim answer while sim2's placement hangs",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        const near = yield* quoted("sim")
        script.next.push("hang")
        const hung = yield* Effect.fork(authed("POST", "/trading/orders", limit(far.id, far.rest)))
        yield* eventually(
          Effect.sync(() => script.seen.length),
          (n) => n === 1
        )
        const placed = yield* authed("POST", "/trading/orders", limit(near.id, near.rest))
        assert.strictEqual(placed.status, 201, placed.text)
        const canceled = yield* authed("DELETE", `/trading/orders/${placed.body.id}`)
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")
        // an engine parent on sim places its first child at once
        const parent = yield* authed("POST", "/trading/orders", {
          ...limit(near.id, near.rest),
          type: "iceberg",
          amount: "4",
          params: { display: "1" }
        })
        assert.strictEqual(parent.status, 201, parent.text)
        const kids = yield* eventually(
          Effect.map(authed("GET", `/trading/orders?parent_id=${parent.body.id}`), (r) => r.body.data),
          (d: Array<any>) => d.length === 1 && d[0].status === "open"
        )
        assert.strictEqual(kids.length, 1)
        // all of that while sim2's placement is still unanswered
        assert.isTrue((yield* Fiber.poll(hung))._tag === "None")
        const answer = yield* Fiber.join(hung)
        assert.strictEqual(answer.status, 504, answer.text)
        assert.strictEqual(answer.body.error.code, "venue_timeout")
        assert.strictEqual(answer.body.error.details.retryable, true)
        const id = answer.body.error.details.order_id as string
        const kept = yield* order(id)
        assert.strictEqual(kept.status, "pending")
        assert.strictEqual(kept.info.outcome, "unknown")
        // never placed: the look-ups find nothing, and it is rejected with the reason
        const settled = yield* eventually(order(id), (o) => o.status === "rejected")
        assert.strictEqual(settled.info.outcome, "absent")
        assert.match(settled.info.detail, /never placed/)
        assert.isTrue((yield* events("order.rejected")).some((e) => e.key === id))
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )

  it.live(
    "a placement that reached the book and was never answered is adopted once, with its fills",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push("hang_placed")
        const answer = yield* authed("POST", "/trading/orders", limit(far.id, far.cross, { amount: "1" }))
        assert.strictEqual(answer.status, 504, answer.text)
        const id = answer.body.error.details.order_id as string
        const adopted = yield* eventually(order(id), (o) => o.status === "closed")
        assert.strictEqual(adopted.info.outcome, "found")
        assert.strictEqual(adopted.filled, "1")
        assert.isString(adopted.info.venue_order_id)
        const fills = (yield* authed("GET", `/trading/fills?order_id=${id}`)).body.data
        assert.strictEqual(fills.length, 1, JSON.stringify(fills))
        assert.strictEqual(script.seen.length, 1)
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )
})

describe("a remote venue that answers 5xx", () => {
  it.live(
    "after placing: the order stays pending (outcome unknown), a retry by client id answers it, and it is adopted",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.lookupsFail = true
        script.next.push("fail_placed")
        const body = limit(far.id, far.rest, { client_order_id: "mine-1" })
        const answer = yield* authed("POST", "/trading/orders", body)
        assert.strictEqual(answer.status, 502, answer.text)
        assert.strictEqual(answer.body.error.code, "venue_error")
        assert.strictEqual(answer.body.error.details.retryable, true)
        assert.strictEqual(answer.body.error.details.outcome, "unknown")
        const id = answer.body.error.details.order_id as string
        const retry = yield* authed("POST", "/trading/orders", body)
        assert.strictEqual(retry.status, 200, retry.text)
        assert.strictEqual(retry.body.id, id)
        assert.strictEqual(retry.body.status, "pending")
        assert.strictEqual(script.seen.length, 1, "a retry never places a second order")
        script.lookupsFail = false
        const adopted = yield* eventually(order(id), (o) => o.status === "open")
        assert.strictEqual(adopted.info.outcome, "found")
        const accepted = (yield* events("order.accepted")).filter((e) => e.key === id)
        assert.strictEqual(accepted.length, 1)
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )

  it.live(
    "without placing: rejected once the venue certainly has no such order; a clear refusal is rejected at once",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        script.next.push("fail", "refuse")
        const lost = yield* authed("POST", "/trading/orders", limit(far.id, far.rest))
        assert.strictEqual(lost.status, 502, lost.text)
        const id = lost.body.error.details.order_id as string
        const refused = yield* authed("POST", "/trading/orders", limit(far.id, far.rest))
        assert.strictEqual(refused.status, 400, refused.text)
        assert.strictEqual(refused.body.error.code, "order_rejected")
        const rejected = yield* eventually(order(id), (o) => o.status === "rejected")
        assert.strictEqual(rejected.info.outcome, "absent")
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )
})

describe("an order in flight", () => {
  it.live(
    "canceled while its placement is unanswered: pending_cancel at once, canceled at the venue once its id is known",
    () =>
      Effect.gen(function* () {
        const script = yield* Script
        const far = yield* quoted("sim2")
        const gate = yield* Deferred.make<void>()
        script.next.push("ok")
        // hold the lane: the placement runs after a cancel was asked for
        const slow = yield* Effect.fork(authed("POST", "/trading/orders", limit(far.id, far.rest)))
        yield* eventually(
          Effect.sync(() => script.seen.length),
          (n) => n === 1
        )
        const placed = yield* Fiber.join(slow)
        assert.strictEqual(placed.status, 201, placed.text)
        yield* Deferred.succeed(gate, undefined)
        script.next.push("hang_placed")
        const inFlight = yield* Effect.fork(authed("POST", "/trading/orders", limit(far.id, far.rest)))
        yield* eventually(
          Effect.sync(() => script.seen.length),
          (n) => n === 2
        )
        const pending = yield* eventually(
          Effect.map(authed("GET", "/trading/orders?status=pending"), (r) => r.body.data),
          (d: Array<any>) => d.length === 1
        )
        const id = pending[0].id as string
        const cancel = yield* authed("DELETE", `/trading/orders/${id}`)
        assert.strictEqual(cancel.status, 200, cancel.text)
        assert.strictEqual(cancel.body.status, "pending_cancel")
        yield* Fiber.join(inFlight)
        const done = yield* eventually(order(id), (o) => o.status === "canceled")
        assert.isString(done.info.venue_order_id)
        // the venue holds no order of it any more
        const halted = yield* authed("POST", "/trading/halt", { reason: "test", scope: "*", policy: "cancel" })
        assert.strictEqual(halted.status, 200, halted.text)
        assert.strictEqual((yield* order(placed.body.id)).status, "canceled")
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )
})

describe("collateral on a remote venue", () => {
  it.live(
    "reserves the most the venue can charge in fees on top of the notional; the in-process venue does not",
    () =>
      Effect.gen(function* () {
        const far = yield* quoted("sim2")
        const near = yield* quoted("sim")
        // as many contracts as the cash buys at the price, with less than one contract's price left over
        const most = (price: string) => String(Math.floor(10_000 / Number(price)))
        const refused = yield* authed("POST", "/trading/orders", limit(far.id, far.rest, { amount: most(far.rest) }))
        assert.strictEqual(refused.status, 400, refused.text)
        assert.strictEqual(refused.body.error.code, "insufficient_funds")
        const fits = yield* authed(
          "POST",
          "/trading/orders",
          limit(far.id, far.rest, { amount: String(Math.floor(Number(most(far.rest)) * 0.9)) })
        )
        assert.strictEqual(fits.status, 201, fits.text)
        const near1 = yield* authed("POST", "/trading/orders", limit(near.id, near.rest, { amount: most(near.rest) }))
        assert.strictEqual(near1.status, 201, near1.text)
      }).pipe(Effect.provide(remoteServer())),
    30_000
  )
})
