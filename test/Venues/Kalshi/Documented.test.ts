/** Kalshi as its own documents describe it, against a fake exchange that behaves the same: fill actions, order flags, gaps, pricing, lifecycle, budgets, fees, statuses, amends. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import type { VenueFill } from "../../../src/Services/VenueGateway.ts"
import { makeRest } from "../../../src/Venues/Kalshi/Rest.ts"
import { createOrderBody } from "../../../src/Venues/Kalshi/Venue.ts"
import { orderOn } from "./Fake.ts"
import { drain, live, next, privateKey, setup, until } from "./Helpers.ts"
import { commandErrors, requestErrors } from "./Spec.ts"

const fillOf = (e: { _tag: string; fill?: VenueFill }) => (e._tag === "Fill" ? e.fill : undefined)
const commandsOf = (commands: ReadonlyArray<unknown>, cmd: string) =>
  commands.filter((c) => (c as { cmd: string }).cmd === cmd) as Array<{ cmd: string; params: Record<string, any> }>

describe("Kalshi as documented", () => {
  it.live(
    "1. fills of every documented action are booked by book_side; an unreadable fill is a resync and a read-back",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue, events } = yield* setup()
          x.fillAction = "sell_to_close"
          yield* venue.placeOrder(
            orderOn({ clientOrderId: "b1", price: F.of("0.4"), amount: F.of("1"), timeInForce: "ioc" })
          )
          const bought = yield* next(events, fillOf, "the bid's fill")
          assert.strictEqual(bought.side, "buy")
          x.fillAction = ""
          yield* venue.placeOrder(
            orderOn({ clientOrderId: "s1", side: "sell", price: F.of("0.2"), amount: F.of("1"), timeInForce: "ioc" })
          )
          assert.strictEqual((yield* next(events, fillOf, "the ask's fill")).side, "sell")
          x.fillAction = "sell_partial"
          yield* venue.placeOrder(
            orderOn({ clientOrderId: "b2", price: F.of("0.4"), amount: F.of("1"), timeInForce: "ioc" })
          )
          assert.strictEqual((yield* next(events, fillOf, "the second bid's fill")).side, "buy")

          // a fill message without any side the adapter can read: never skipped silently
          const fillReads = x.requests.filter((r) => r.path.endsWith("/portfolio/fills")).length
          x.sendRaw("fill", {
            type: "fill",
            msg: { trade_id: "t-bad", order_id: "o-bad", market_ticker: "KXA-1", is_taker: true, count_fp: "1.00" }
          })
          const resync = yield* next(
            events,
            (e) => (e._tag === "Stream" && e.state === "resync" ? e : undefined),
            "a resync after the unreadable fill"
          )
          assert.strictEqual(resync.channel, "socket")
          yield* until(
            () => x.requests.filter((r) => r.path.endsWith("/portfolio/fills")).length > fillReads,
            "fills read back"
          )
          // the read-back publishes the account's fills again (the desk books each trade id once)
          const again = yield* next(events, fillOf, "a fill read back")
          assert.isTrue(x.fills.some((f) => f["trade_id"] === again.tradeId))
        })
      )
  )

  it.live("2. reduce_only rests nowhere on Kalshi: refused before sending unless IOC; the fake refuses it too", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup()
        assert.strictEqual(venue.info.has.reduce_only, "partial")
        const posts = () => x.requests.filter((r) => r.method === "POST").length
        for (const timeInForce of ["gtc", "gtd", "fok"] as const) {
          const refused = yield* Effect.flip(
            venue.placeOrder(
              orderOn({ reduceOnly: true, timeInForce, expiresAt: timeInForce === "gtd" ? Date.now() + 60_000 : null })
            )
          )
          assert.strictEqual(refused.kind, "rejected")
          assert.strictEqual(refused.sent, false)
          assert.match(refused.reason, /reduce_only.*immediate-or-cancel/)
        }
        assert.strictEqual(posts(), 0)
        // with IOC it is sent as asked (no position: the venue caps it to nothing)
        yield* venue.placeOrder(
          orderOn({ clientOrderId: "r", reduceOnly: true, timeInForce: "ioc", price: F.of("0.4") })
        )
        assert.strictEqual(posts(), 1)
        const body = x.requests.find((r) => r.method === "POST")?.body as Record<string, unknown>
        assert.strictEqual(body["reduce_only"], true)
        // the fake refuses what the document says the venue refuses
        const rest = yield* makeRest({ baseUrl: x.apiUrl, credentials: { keyId: "k", key: privateKey } })
        const direct = yield* Effect.flip(
          rest.createOrder(createOrderBody(orderOn({ clientOrderId: "d", reduceOnly: true })))
        )
        assert.strictEqual(direct.kind, "rejected")
        assert.match(
          direct.reason,
          /reduce_only set to true will be rejected unless time_in_force is immediate_or_cancel/
        )
      })
    )
  )

  it.live(
    "3. a gap on the books subscription re-snapshots every market of it; a terminal channel error resubscribes",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue, events } = yield* setup()
          yield* venue.book("KXA-1")
          yield* venue.book("KXB-1")
          const booksSub = () => x.connections[0]?.subs.find((s) => s.channel === "orderbook_delta")
          yield* until(
            () => booksSub()?.tickers.has("KXA-1") && booksSub()?.tickers.has("KXB-1"),
            "both markets streamed"
          )
          yield* until(() => x.commands.length >= 10, "snapshots asked")
          const before = x.commands.length
          x.dropDeltas = 1
          x.move("KXA-1", "yes", "0.21", "4") // lost
          x.move("KXB-1", "yes", "0.31", "2") // shows the gap, on the other market
          const snap = yield* until(
            () =>
              commandsOf(x.commands.slice(before), "update_subscription").find(
                (c) => c.params["action"] === "get_snapshot"
              ),
            "a get_snapshot"
          )
          assert.deepStrictEqual([...snap.params["market_tickers"]].sort(), ["KXA-1", "KXB-1"])
          // both books healed: the lost level of A is there
          let healed = false
          for (let i = 0; i < 200 && !healed; i++) {
            const book = yield* venue.book("KXA-1")
            healed = book.bids.some((l) => l.price === F.of("0.21") && l.size === F.of("4"))
            if (!healed) yield* Effect.sleep("10 millis")
          }
          assert.isTrue(healed)

          // terminal errors: the channel is subscribed again (books with every market; fills with a resync)
          const mark = x.commands.length
          x.channelError("orderbook_delta", 10)
          const again = yield* until(
            () =>
              commandsOf(x.commands.slice(mark), "subscribe").find(
                (c) => c.params["channels"][0] === "orderbook_delta"
              ),
            "books subscribed again"
          )
          assert.deepStrictEqual([...again.params["market_tickers"]].sort(), ["KXA-1", "KXB-1"])
          yield* drain(events)
          x.channelError("fill", 25)
          yield* until(
            () => commandsOf(x.commands.slice(mark), "subscribe").some((c) => c.params["channels"][0] === "fill"),
            "fills subscribed again"
          )
          yield* next(events, (e) => (e._tag === "Stream" && e.state === "resync" ? e : undefined), "a resync")
          // a non-terminal error changes nothing
          const quiet = x.commands.length
          x.channelError("trade", 11)
          yield* Effect.sleep("100 millis")
          assert.strictEqual(x.commands.length, quiet)
          assert.deepStrictEqual(commandErrors(x.commands) ?? [], [])
        })
      )
  )

  it.live("4. use_yes_price is sent explicitly, and both forms decode to the same YES book", () =>
    Effect.gen(function* () {
      for (const [yesPrice, venueDefault] of [
        [true, false],
        [true, true],
        [false, true],
        [false, false]
      ] as const) {
        yield* live(
          Effect.gen(function* () {
            const { x, venue } = yield* setup({ yesPrice }, (f) => {
              f.defaultYesPrice = venueDefault
            })
            const restReads = () => x.requests.filter((r) => r.path.endsWith("/orderbook")).length
            let streamed = yield* venue.book("KXA-1") // first read: REST, and the market is subscribed
            // until a read is answered from the stream (no REST read behind it)
            for (let i = 0; i < 200; i++) {
              const n = restReads()
              streamed = yield* venue.book("KXA-1")
              if (restReads() === n) break
              yield* Effect.sleep("10 millis")
            }
            const n = restReads()
            const sub = commandsOf(x.commands, "subscribe").find((c) => c.params["channels"][0] === "orderbook_delta")!
            assert.strictEqual(sub.params["use_yes_price"], yesPrice)
            assert.deepStrictEqual(streamed.asks, [{ price: F.of("0.4"), size: F.of("10") }])
            assert.deepStrictEqual(streamed.bids, [{ price: F.of("0.2"), size: F.of("10") }])
            // a NO-side delta lands on the same YES level in either form
            x.move("KXA-1", "no", "0.60", "-3")
            let asks = streamed.asks
            for (let i = 0; i < 200 && asks[0]?.size !== F.of("7"); i++) {
              yield* Effect.sleep("10 millis")
              asks = (yield* venue.book("KXA-1")).asks
            }
            assert.deepStrictEqual(asks, [{ price: F.of("0.4"), size: F.of("7") }])
            assert.strictEqual(restReads(), n)
          })
        )
      }
    })
  )

  it.live("5. market_lifecycle_v2 is subscribed without a filter; a message refreshes only the market it names", () =>
    live(
      Effect.gen(function* () {
        const { x, venue } = yield* setup()
        const lifecycle = commandsOf(x.commands, "subscribe").find(
          (c) => c.params["channels"][0] === "market_lifecycle_v2"
        )!
        assert.isUndefined(lifecycle.params["market_tickers"])
        assert.deepStrictEqual(
          (yield* venue.markets).map((m) => m.nativeId),
          ["KXA-1", "KXB-1"]
        )
        const eventsReads = () => x.requests.filter((r) => r.path.endsWith("/events")).length
        const marketReads = (t: string) => x.requests.filter((r) => r.path.endsWith(`/markets/${t}`)).length
        assert.strictEqual(eventsReads(), 1)
        // KXB-1 was never streamed or traded: its lifecycle still reaches the adapter
        x.lifecycle("KXB-1", "deactivated", "inactive")
        let list = yield* venue.markets
        for (let i = 0; i < 200 && list.length !== 1; i++) {
          yield* Effect.sleep("10 millis")
          list = yield* venue.markets
        }
        assert.deepStrictEqual(
          list.map((m) => m.nativeId),
          ["KXA-1"]
        )
        assert.strictEqual((yield* venue.market("KXB-1"))?.status, "closed")
        assert.strictEqual(eventsReads(), 1)
        assert.strictEqual(marketReads("KXB-1"), 1)
        assert.strictEqual(marketReads("KXA-1"), 0)
      })
    )
  )

  it.live("6. a market added before the venue acknowledges the subscription is added once it does, and streams", () =>
    live(
      Effect.gen(function* () {
        const { x, venue, events } = yield* setup({}, (f) => {
          f.ackDelayMs = 200
        })
        yield* venue.book("KXA-1") // subscribes the market channels: the venue takes 200 ms to acknowledge
        yield* venue.book("KXB-1") // added meanwhile
        const tradeSub = () => x.connections[0]?.subs.find((s) => s.channel === "trade")
        yield* until(() => tradeSub()?.tickers.has("KXB-1"), "KXB-1 added to the trade subscription")
        x.print("KXB-1", "yes", "0.52", "1")
        const trade = yield* next(
          events,
          (e) => (e._tag === "Trade" && e.nativeId === "KXB-1" ? e : undefined),
          "B's trade"
        )
        assert.strictEqual(trade.price, F.of("0.52"))
        assert.deepStrictEqual(commandErrors(x.commands) ?? [], [])
      })
    )
  )

  it.live(
    "7. the read budget is the Basic tier's 400 tokens; a 429 without Retry-After says when the bucket refills",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue } = yield* setup()
          x.trick("GET", /^\/portfolio\/balance$/, {
            kind: "fail",
            status: 429,
            body: { error: { code: "too_many_requests", message: "too many requests" } }
          })
          const e = yield* Effect.flip(venue.balance!)
          assert.strictEqual(e.kind, "rate_limited")
          assert.strictEqual(e.retryAfterS, 1)
        })
      )
  )

  it.live(
    "8. an event's fee override wins over its series'; schedules expire; a fee update drops the event's at once",
    () =>
      live(
        Effect.gen(function* () {
          const { x, venue } = yield* setup({ feeTtlMs: 300 })
          assert.strictEqual((yield* venue.fees!("KXA-1"))?.taker, F.of("0.07"))
          x.seriesFees.set("KXA", { fee_type: "quadratic", fee_multiplier: 0.5 })
          assert.strictEqual((yield* venue.fees!("KXA-1"))?.taker, F.of("0.07")) // kept
          yield* Effect.sleep("350 millis")
          assert.strictEqual((yield* venue.fees!("KXA-1"))?.taker, F.of("0.035")) // expired, read again
          // an override set on the event, announced on the lifecycle channel
          x.feeChanges.push({
            id: "fc-1",
            event_ticker: "KXA-26",
            series_ticker: "KXA",
            fee_type_override: "quadratic_with_maker_fees",
            fee_multiplier_override: 2,
            scheduled_ts: new Date(Date.now() - 1000).toISOString()
          })
          x.sendRaw("market_lifecycle_v2", {
            type: "event_fee_update",
            msg: { event_ticker: "KXA-26", fee_type_override: "quadratic_with_maker_fees", fee_multiplier_override: 2 }
          })
          let fees = yield* venue.fees!("KXA-1")
          for (let i = 0; i < 100 && fees?.taker !== F.of("0.14"); i++) {
            yield* Effect.sleep("10 millis")
            fees = yield* venue.fees!("KXA-1")
          }
          assert.deepStrictEqual(fees, { taker: F.of("0.14"), maker: F.of("0.035"), step: F.of("0.0001") })
          // an override scheduled later is not in force yet; the other event keeps its series' schedule
          x.feeChanges.push({
            id: "fc-2",
            event_ticker: "KXB-26",
            fee_type_override: "quadratic",
            fee_multiplier_override: 3,
            scheduled_ts: new Date(Date.now() + 3_600_000).toISOString()
          })
          assert.strictEqual((yield* venue.fees!("KXB-1"))?.taker, F.of("0.07"))
          assert.deepStrictEqual(
            x.requests.flatMap((r) => requestErrors(r) ?? []),
            []
          )
        })
      )
  )

  it.live("9. an order in status unknown is read again, not rejected; an amend sends a new client id", () =>
    live(
      Effect.gen(function* () {
        const { x, venue, events } = yield* setup()
        const resting = yield* venue.placeOrder(orderOn({ clientOrderId: "u1" }))
        yield* drain(events)
        const reads = () =>
          x.requests.filter((r) => r.path.endsWith(`/portfolio/orders/${resting.venueOrderId}`)).length
        const before = reads()
        x.pushUnknown(resting.venueOrderId)
        const order = yield* next(
          events,
          (e) => (e._tag === "Order" && e.order.venueOrderId === resting.venueOrderId ? e.order : undefined),
          "the order read again"
        )
        assert.strictEqual(order.status, "open")
        assert.isAbove(reads(), before)

        const amended = yield* venue.amendOrder(resting.venueOrderId, { price: F.of("0.31") })
        const amend = x.requests.find((r) => r.path.endsWith("/amend"))!.body as Record<string, string>
        assert.strictEqual(amend["client_order_id"], "u1")
        assert.notStrictEqual(amend["updated_client_order_id"], "u1")
        assert.strictEqual(amended.clientOrderId, amend["updated_client_order_id"])
        assert.strictEqual(amended.price, F.of("0.31"))
        // the fake refuses a client id already in use, as the venue may
        const rest = yield* makeRest({ baseUrl: x.apiUrl, credentials: { keyId: "k", key: privateKey } })
        const reused = yield* Effect.flip(
          rest.amendOrder(resting.venueOrderId, {
            ticker: "KXA-1",
            side: "bid",
            price: "0.3200",
            count: "5.00",
            client_order_id: amended.clientOrderId,
            updated_client_order_id: amended.clientOrderId
          })
        )
        assert.strictEqual(reused.kind, "rejected")
        assert.match(reused.reason, /order_already_exists/)
      })
    )
  )
})
