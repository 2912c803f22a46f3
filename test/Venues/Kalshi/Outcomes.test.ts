/** Through `serve` with Kalshi on the fake exchange: placements whose answer is lost or late, and venue-side cancels. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import WebSocket from "ws"
import { HttpServer } from "@effect/platform"
import { request } from "../../Http/TestServer.ts"
import { eventually, Owner } from "../ServeVenues.ts"
import type { FakeMarketSpec } from "./Fake.ts"
import { Exchange, placeOn, serverOn, tradingEnv } from "./Helpers.ts"

const CREATE = /^\/portfolio\/events\/orders$/
const SERVER_ERROR = { error: { code: "internal_server_error", message: "internal error" } }

const MARKETS: ReadonlyArray<FakeMarketSpec> = [
  { ticker: "KXOUT-26-A", event: "KXOUT-26", title: "Outcomes", yes: [["0.40", "10"]], no: [["0.55", "10"]] }
]
const A = "kalshi:KXOUT-26-A"

/** The server as `serve` builds it, `sim,kalshi`, Kalshi's settings pointed at a fresh fake exchange. */
const server = () => serverOn(MARKETS, { env: (x) => tradingEnv(x, 800), sim: { seed: 7, markets: 4 } })

const place = placeOn(A)
const authed = (path: string) => Effect.flatMap(Owner, (token) => request("GET", path, { token }))
const order = (id: string) => authed(`/trading/orders/${id}`)

/** Polls until `check` holds, for up to ~15 s (the desk calls an order absent only after seeing it absent for 5 s). */
const patiently = <A>(read: Effect.Effect<A, any, any>, check: (a: A) => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 150; i++) {
      const a = yield* read
      if (check(a)) return a
      yield* Effect.sleep("100 millis")
    }
    return yield* Effect.dieMessage("condition not reached in time")
  })

interface Frame {
  readonly seq: number
  readonly kind: string
  readonly payload: any
}

/** A frame saying the order was canceled (an `order.updated` or `order.canceled` carrying the order). */
const canceledFrame = (e: Frame, id: string) =>
  (e.kind === "order.updated" || e.kind === "order.canceled") && e.payload.id === id && e.payload.status === "canceled"

/** The events socket's frames from the start, until `until` holds (or ~6 s pass). */
const frames = (until: (frames: ReadonlyArray<Frame>) => boolean) =>
  Effect.gen(function* () {
    const token = yield* Owner
    const server = yield* HttpServer.HttpServer
    const port = (server.address as HttpServer.TcpAddress).port
    return yield* Effect.async<Array<Frame>>((resume) => {
      const got: Array<Frame> = []
      const socket = new WebSocket(`ws://127.0.0.1:${port}/trading/ws/events?since=0`, {
        headers: { authorization: `Bearer ${token}` }
      })
      let done = false
      const finish = () => {
        if (done) return
        done = true
        clearTimeout(timer)
        socket.terminate()
        resume(Effect.succeed(got))
      }
      const timer = setTimeout(finish, 6000)
      socket.on("message", (data) => {
        got.push(JSON.parse(String(data)))
        if (until(got)) finish()
      })
      socket.on("close", finish)
      socket.on("error", finish)
    })
  })

describe("Kalshi outcomes through serve", () => {
  it.live(
    "a 5xx after placing: the order stays pending, outcome unknown, and is adopted once with its fills",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        x.trick("POST", CREATE, { kind: "failAfter", status: 500, body: SERVER_ERROR })
        // crosses the NO bid at 0.55: two contracts fill at 0.45 on the venue
        const placed = yield* place({ side: "buy", type: "limit", amount: "2", price: "0.45" })
        assert.strictEqual(placed.status, 502, placed.text)
        assert.strictEqual(placed.body.error.code, "venue_error")
        assert.strictEqual(placed.body.error.details.retryable, true)
        assert.strictEqual(placed.body.error.details.outcome, "unknown")
        const id = placed.body.error.details.order_id
        assert.isString(id, placed.text)
        const pending = yield* order(id)
        assert.include(["pending", "closed"], pending.body.status, pending.text)
        if (pending.body.status === "pending") assert.strictEqual(pending.body.info.outcome, "unknown", pending.text)
        const adopted = yield* eventually(order(id), (r) => r.body.status === "closed")
        assert.strictEqual(adopted.body.filled, "2", adopted.text)
        assert.strictEqual(
          x.orders.filter((o) => o.client_order_id === adopted.body.client_order_id || o.client_order_id.endsWith(id))
            .length,
          1
        )
        const fills = yield* eventually(
          authed(`/trading/fills?account=kalshi:default&order_id=${id}`),
          (r) => r.body.data?.length >= 1
        )
        yield* Effect.sleep("300 millis")
        const again = yield* authed(`/trading/fills?account=kalshi:default&order_id=${id}`)
        assert.strictEqual(again.body.data.length, fills.body.data.length)
        assert.strictEqual(again.body.data.length, 1, again.text)
      }).pipe(Effect.provide(server())),
    30_000
  )

  it.live(
    "a 5xx without placing: rejected once the look-up says the venue has none",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        x.trick("POST", CREATE, { kind: "fail", status: 503, body: SERVER_ERROR })
        const placed = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.20" })
        assert.strictEqual(placed.status, 502, placed.text)
        assert.strictEqual(placed.body.error.details.outcome, "unknown")
        const id = placed.body.error.details.order_id
        assert.isString(id, placed.text)
        const rejected = yield* patiently(order(id), (r) => r.body.status === "rejected")
        assert.strictEqual(rejected.body.info.outcome, "absent", rejected.text)
        assert.strictEqual(x.orders.length, 0)
      }).pipe(Effect.provide(server())),
    30_000
  )

  it.live(
    "a hung placement: 504 venue_timeout, retryable; the order is kept and found on the venue",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        x.trick("POST", CREATE, { kind: "swallow" })
        const placed = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.20" })
        assert.strictEqual(placed.status, 504, placed.text)
        assert.strictEqual(placed.body.error.code, "venue_timeout")
        assert.strictEqual(placed.body.error.details.retryable, true)
        const id = placed.body.error.details.order_id
        assert.isString(id, placed.text)
        const found = yield* eventually(order(id), (r) => r.body.status === "open")
        assert.strictEqual(found.body.amount, "1")
        assert.strictEqual(x.orders.length, 1)
      }).pipe(Effect.provide(server())),
    30_000
  )

  it.live(
    "the venue cancels an order on its own: order.updated on the events socket, the order canceled",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const placed = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.20" })
        assert.strictEqual(placed.status, 201, placed.text)
        yield* eventually(
          Effect.sync(() => x.orders.length),
          (n) => n === 1
        )
        x.cancelOutside(x.orders[0]!.order_id, "ExpiryCancel")
        const canceled = yield* eventually(order(placed.body.id), (r) => r.body.status === "canceled")
        assert.strictEqual(canceled.body.status, "canceled")
        const got = yield* frames((f) => f.some((e) => canceledFrame(e, placed.body.id)))
        assert.isTrue(
          got.some((e) => canceledFrame(e, placed.body.id)),
          JSON.stringify(got.map((e) => e.kind))
        )
      }).pipe(Effect.provide(server())),
    30_000
  )

  it.live(
    "the market settles: the position closes at the payout with position.settled, cash and realized P&L",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        // buy 3 at the ask (YES 0.45): filled at once
        const taken = yield* place({ side: "buy", type: "limit", amount: "3", price: "0.46", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        yield* eventually(order(taken.body.id), (r) => r.body.filled === "3")
        const before = (yield* authed("/trading/balances?account=kalshi:default")).body.data[0]
        x.settle("KXOUT-26-A", "yes")
        const settled = yield* frames((f) => f.some((e) => e.kind === "position.settled"))
        const event = settled.find((e) => e.kind === "position.settled")!
        assert.strictEqual(event.payload.market_id, A)
        assert.strictEqual(event.payload.contracts, "3")
        assert.strictEqual(event.payload.payout, "1")
        const positions = yield* eventually(authed("/trading/positions?account=kalshi:default"), (r) =>
          r.body.data.some((p: any) => p.market_id === A && p.settled !== null)
        )
        const position = positions.body.data.find((p: any) => p.market_id === A)
        assert.strictEqual(position.contracts, "0")
        assert.strictEqual(position.settled.payout, "1")
        // 3 contracts paid 1 each: cash up by 3, realized P&L = 3 − what they cost
        const after = (yield* authed("/trading/balances?account=kalshi:default")).body.data[0]
        assert.strictEqual(Number(after.cash) - Number(before.cash), 3, JSON.stringify([before, after]))
        assert.strictEqual(Number(event.payload.cash_change), 3)
        assert.isAbove(Number(event.payload.realized_pnl), 0)
      }).pipe(Effect.provide(server())),
    30_000
  )
})
