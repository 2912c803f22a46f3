/** Kalshi when answers are lost or late, sockets stall, and the venue acts on its own: what the adapter tells the desk. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { createServer } from "node:net"
import * as F from "../../../src/Domain/Fixed.ts"
import { orderOn } from "./Fake.ts"
import { drain, live, next, setup, until, venueOn } from "./Helpers.ts"
import { commandErrors, requestErrors } from "./Spec.ts"

const CREATE = /^\/portfolio\/events\/orders$/
const SERVER_ERROR = { error: { code: "internal_server_error", message: "internal error" } }

describe("Kalshi placements whose answer is lost", () => {
  it.live("a 5xx after the order was placed: unknown outcome; the look-up by client id finds it with its fills", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup()
        x.trick("POST", CREATE, { kind: "failAfter", status: 500, body: SERVER_ERROR })
        const request = orderOn({ clientOrderId: "home1-o_1", price: F.of("0.4"), amount: F.of("3") })
        const e = yield* Effect.flip(venue.placeOrder(request))
        assert.strictEqual(e.kind, "unavailable")
        assert.notStrictEqual(e.sent, false)
        assert.strictEqual(x.orders.length, 1)
        // the adapter heard of it on its socket; a fresh one (a restart) asks the venue
        const restarted = yield* venueOn(x)
        const found = yield* restarted.orderByClientId("home1-o_1", request)
        assert.strictEqual(found?.venueOrderId, x.orders[0]!.order_id)
        assert.strictEqual(found?.filled, F.of("3"))
        assert.deepStrictEqual(
          found?.events?.map((ev) => ev._tag === "Fill" && ev.fill.amount),
          [F.of("3")]
        )
        // the look-up is the documented one: the account's orders in that market
        const lookup = x.requests.filter((r) => r.method === "GET" && r.path.endsWith("/portfolio/orders")).at(-1)!
        assert.strictEqual(lookup.query["ticker"], "KXA-1")
        assert.deepStrictEqual(
          x.requests.flatMap((r) => requestErrors(r) ?? []),
          []
        )
      })
    )
  )

  it.live("a 5xx without placing: unknown at first, then certainly absent once every page was read", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup({}, (f) => {
          f.pageCap = 2
        })
        for (const id of ["p1", "p2", "p3", "p4", "p5"]) yield* venue.placeOrder(orderOn({ clientOrderId: id }))
        x.trick("POST", CREATE, { kind: "fail", status: 503, body: SERVER_ERROR })
        const request = orderOn({ clientOrderId: "lost" })
        const e = yield* Effect.flip(venue.placeOrder(request))
        assert.strictEqual(e.kind, "unavailable")
        assert.notStrictEqual(e.sent, false)
        const before = x.requests.length
        assert.isUndefined(yield* venue.orderByClientId("lost", request))
        // five orders on pages of two: three pages read before saying "none"
        assert.strictEqual(x.requests.slice(before).filter((r) => r.path.endsWith("/portfolio/orders")).length, 3)
        // an order on the last page is found
        assert.strictEqual((yield* venue.orderByClientId("p1", orderOn({ clientOrderId: "p1" })))?.clientOrderId, "p1")
        // a page that fails leaves it unknown: an error, never "none"
        x.trick("GET", /^\/portfolio\/orders$/, { kind: "fail", status: 500, body: SERVER_ERROR })
        const unsure = yield* Effect.flip(venue.orderByClientId("lost", request))
        assert.strictEqual(unsure.kind, "unavailable")
      })
    )
  )

  it.live("a hung placement times out as `timeout`; a reset connection or an unreadable answer is `unavailable`", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup({ timeoutMs: 400 })
        x.trick("POST", CREATE, { kind: "swallow" })
        const hung = yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "h" })))
        assert.strictEqual(hung.kind, "timeout")
        assert.notStrictEqual(hung.sent, false)
        assert.strictEqual((yield* venue.orderByClientId("h", orderOn({ clientOrderId: "h" })))?.status, "open")

        x.trick("POST", CREATE, { kind: "reset" })
        const reset = yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "r" })))
        assert.strictEqual(reset.kind, "unavailable")
        assert.notStrictEqual(reset.sent, false)

        x.trick("POST", CREATE, { kind: "failAfter", status: 201, body: { order_id: 7 } })
        const garbled = yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "g" })))
        assert.strictEqual(garbled.kind, "unavailable")
        assert.match(garbled.reason, /unreadable/)
        assert.notStrictEqual(garbled.sent, false)

        x.trick("POST", CREATE, { kind: "failAfter", status: 408, body: { error: { code: "timeout", message: "t" } } })
        const late = yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "l" })))
        assert.strictEqual(late.kind, "timeout")
        assert.strictEqual(x.orders.length, 4)
      })
    )
  )

  it.live("certainly not sent: a refused connection, a refused signature; clear refusals are refusals", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup()
        // a port nobody listens on
        const port = yield* Effect.async<number>((resume) => {
          const server = createServer()
          server.listen(0, "127.0.0.1", () => {
            const p = (server.address() as { port: number }).port
            server.close(() => resume(Effect.succeed(p)))
          })
        })
        const closed = yield* venueOn(x, { apiUrl: `http://127.0.0.1:${port}/trade-api/v2` })
        const refused = yield* Effect.flip(closed.orderById!("ord-1"))
        assert.strictEqual(refused.kind, "unavailable")
        assert.strictEqual(refused.sent, false)

        x.trick("POST", CREATE, {
          kind: "fail",
          status: 401,
          body: { error: { code: "authentication_error", message: "bad" } }
        })
        assert.strictEqual((yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "a" })))).sent, false)
        const poor = yield* Effect.flip(venue.placeOrder(orderOn({ clientOrderId: "big", amount: F.of("100000") })))
        assert.strictEqual(poor.kind, "insufficient_funds")
      })
    )
  )
})

describe("Kalshi reads the account back", () => {
  it.live("orderById whatever the state; fillsSince reads every page, oldest first", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup({}, (f) => {
          f.pageCap = 2
        })
        const resting = yield* venue.placeOrder(orderOn({ clientOrderId: "o1" }))
        yield* venue.cancelOrder(resting.venueOrderId)
        assert.strictEqual((yield* venue.orderById!(resting.venueOrderId))?.status, "canceled")
        assert.isUndefined(yield* venue.orderById!("no-such-order"))
        for (let i = 0; i < 5; i++)
          yield* venue.placeOrder(
            orderOn({ clientOrderId: `t${i}`, price: F.of("0.4"), amount: F.of("1"), timeInForce: "ioc" })
          )
        assert.strictEqual(x.fills.length, 5)
        const fills = yield* venue.fillsSince!(0)
        assert.deepStrictEqual(
          fills.map((f) => f.tradeId),
          x.fills.map((f) => f["trade_id"])
        )
        assert.isTrue(fills.every((f, i) => i === 0 || fills[i - 1]!.ts <= f.ts))
      })
    )
  )
})

describe("Kalshi's socket", () => {
  it.live(
    "a silent socket (no close, no messages, no pings) is stale, reopened with fresh snapshots, resumed, resynced",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue, events } = yield* setup({ streamIdleMs: 400 }, (f) => {
            f.pingMs = 100
          })
          yield* venue.book("KXA-1")
          yield* until(
            () => x.connections[0]?.subs.find((s) => s.channel === "orderbook_delta")?.tickers.has("KXA-1"),
            "streamed"
          )
          yield* Effect.sleep("600 millis") // pings keep a quiet socket alive past its bound
          assert.deepStrictEqual(
            (yield* venue.streams!).map((s) => [s.state, s.reconnects]),
            [["live", 0]]
          )
          yield* drain(events)
          const first = x.connections[0]!
          x.silence()
          const stale = yield* next(events, (e) => (e._tag === "Stream" ? e : undefined), "stale")
          assert.strictEqual(stale.state, "stale")
          assert.isAtLeast(stale.lastMessageAgeMs ?? 0, 400)
          const after = yield* next(
            events,
            (e) => (e._tag === "Stream" && e.state !== "stale" ? e : undefined),
            "resync"
          )
          assert.strictEqual(after.state, "resync")
          const resumed = yield* next(events, (e) => (e._tag === "Stream" ? e : undefined), "resumed")
          assert.strictEqual(resumed.state, "resumed")
          const reopened = x.connections.find((c) => c !== first && !c.muted)!
          assert.isTrue(reopened.subs.some((s) => s.channel === "orderbook_delta" && s.tickers.has("KXA-1")))
          const status = yield* venue.streams!
          assert.strictEqual(status[0]!.state, "live")
          assert.strictEqual(status[0]!.reconnects, 1)
          assert.deepStrictEqual(commandErrors(x.commands) ?? [], [])
        })
      )
  )

  it.live("fills made while the socket was down are read back, every page, after it reopens", () =>
    live(
      Effect.gen(function* () {
        const { x, venue, events } = yield* setup({}, (f) => {
          f.pageCap = 2
        })
        const resting = yield* venue.placeOrder(orderOn({ clientOrderId: "m", amount: F.of("5") }))
        yield* drain(events)
        x.dropSockets()
        yield* Effect.sleep("20 millis")
        for (let i = 0; i < 5; i++) x.fillResting(resting.venueOrderId, "1")
        const seen = new Set<string>()
        while (seen.size < 5) {
          const fill = yield* next(events, (e) => (e._tag === "Fill" ? e.fill : undefined), "fills read back")
          seen.add(fill.tradeId)
        }
        assert.deepStrictEqual([...seen].sort(), x.fills.map((f) => f["trade_id"] as string).sort())
      })
    )
  )

  it.live("the venue cancels an order on its own: an Order event, canceled", () =>
    live(
      Effect.gen(function* () {
        const { x, venue, events } = yield* setup()
        const resting = yield* venue.placeOrder(orderOn({ clientOrderId: "v" }))
        yield* drain(events)
        x.cancelOutside(resting.venueOrderId, "HaltCancel")
        const order = yield* next(
          events,
          (e) => (e._tag === "Order" && e.order.venueOrderId === resting.venueOrderId ? e.order : undefined),
          "the venue's cancel"
        )
        assert.strictEqual(order.status, "canceled")
      })
    )
  )
})

describe("Kalshi settles", () => {
  it.live(
    "a settled market: a Settled event at its payout, the settlement read back, the position gone, cash paid",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue, events } = yield* setup()
          yield* venue.placeOrder(
            orderOn({ clientOrderId: "y", price: F.of("0.4"), amount: F.of("2"), timeInForce: "ioc" })
          )
          yield* venue.placeOrder(
            orderOn({
              clientOrderId: "n",
              nativeId: "KXB-1",
              side: "sell",
              price: F.of("0.3"),
              amount: F.of("1"),
              timeInForce: "ioc"
            })
          )
          const cash = (yield* venue.balance!).cash
          assert.deepStrictEqual(
            (yield* venue.positions!).map((p) => [p.nativeId, p.contracts]),
            [
              ["KXA-1", F.of("2")],
              ["KXB-1", F.of("-1")]
            ]
          )
          yield* drain(events)
          x.settle("KXA-1", "yes")
          const a = yield* next(events, (e) => (e._tag === "Settled" ? e : undefined), "A settled")
          assert.deepStrictEqual([a.nativeId, a.payout], ["KXA-1", F.ONE])
          x.settle("KXB-1", "scalar", "0.37")
          const b = yield* next(events, (e) => (e._tag === "Settled" ? e : undefined), "B settled")
          assert.deepStrictEqual([b.nativeId, b.payout], ["KXB-1", F.of("0.37")])
          // two YES at 1, one NO at 1 − 0.37
          assert.strictEqual((yield* venue.balance!).cash, F.add(cash, F.of("2.63")))
          assert.deepStrictEqual(yield* venue.positions!, [])
          const settled = yield* venue.settlementsSince!(0)
          assert.deepStrictEqual(
            settled.map((s) => [s.nativeId, s.payout]),
            [
              ["KXA-1", F.ONE],
              ["KXB-1", F.of("0.37")]
            ]
          )
          assert.strictEqual((yield* venue.market("KXA-1"))?.status, "settled")
          assert.deepStrictEqual(
            x.requests.flatMap((r) => requestErrors(r) ?? []),
            []
          )
        })
      )
  )

  it.live("a market resolved NO pays 0 per YES contract", () =>
    live(
      Effect.gen(function* () {
        const { x, events } = yield* setup()
        x.settle("KXB-1", "no")
        const b = yield* next(events, (e) => (e._tag === "Settled" ? e : undefined), "B settled")
        assert.deepStrictEqual([b.nativeId, b.payout], ["KXB-1", F.ZERO])
      })
    )
  )
})
