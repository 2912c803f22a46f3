/**
 * Against Kalshi's demo environment, what a demo account can show of the adapter's reading of the venue: a
 * 1-contract order far from the touch (placed, found by client id and by id, amended with a new client id, canceled),
 * reduce_only refused unless IOC by the venue itself, an expiring order canceled by the venue and streamed, the socket
 * (both price forms, the unfiltered lifecycle channel), the account's limits, fees, fills and settlements read back.
 * Not shown here (the fake exchange tests cover them): lost or 5xx answers, hung requests, a silent socket, sequence
 * gaps, terminal channel errors, an order in status `unknown`, fills with actions other than buy, a settlement as it
 * happens.
 */
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Queue } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import type { VenueEvent } from "../../../src/Services/VenueGateway.ts"
import { makeRest } from "../../../src/Venues/Kalshi/Rest.ts"
import { configFromEnv, createOrderBody, type KalshiConfig, makeKalshiVenue } from "../../../src/Venues/Kalshi/Venue.ts"

const keyId = process.env["KALSHI_DEMO_API_KEY_ID"]
const live = keyId !== undefined && keyId !== ""

describe.skipIf(!live)(
  live ? "Kalshi demo" : "Kalshi demo — SKIPPED: set KALSHI_DEMO_API_KEY_ID and KALSHI_DEMO_PRIVATE_KEY(_PATH)",
  () => {
    const demoConfig = (yesPrice = true): KalshiConfig =>
      Either.getOrThrowWith(
        configFromEnv({
          KALSHI_ENV: "demo",
          KALSHI_API_KEY_ID: keyId,
          KALSHI_PRIVATE_KEY: process.env["KALSHI_DEMO_PRIVATE_KEY"],
          KALSHI_PRIVATE_KEY_PATH: process.env["KALSHI_DEMO_PRIVATE_KEY_PATH"],
          KALSHI_API_URL: process.env["KALSHI_DEMO_API_URL"],
          KALSHI_WS_URL: process.env["KALSHI_DEMO_WS_URL"],
          KALSHI_USE_YES_PRICE: String(yesPrice)
        }),
        (e) => new Error(e)
      )

    it.scoped("reads a market, places a 1-contract bid at the lowest price and cancels it", () =>
      Effect.gen(function* () {
        const config = demoConfig()
        const venue = yield* makeKalshiVenue({ ...config, catalogPages: 2 })
        const events = yield* venue.subscribe
        const markets = (yield* venue.markets).filter((m) => m.status === "open")
        assert.isAbove(markets.length, 0)
        let target: string | undefined
        for (const m of markets.slice(0, 20)) {
          const book = yield* venue.book(m.nativeId)
          // far from the touch: the lowest tick, on a market whose best ask is well above it
          if ((book.asks[0]?.price ?? F.ONE) >= F.of("0.05")) {
            target = m.nativeId
            break
          }
        }
        assert.isDefined(target, "no open market with an ask above 0.05 among the first 20")
        const market = (yield* venue.market(target!))!
        const clientOrderId = `crossbook-live-${Date.now()}`
        const placed = yield* venue.placeOrder({
          clientOrderId,
          nativeId: target!,
          side: "buy",
          price: market.tick,
          amount: F.ONE,
          timeInForce: "gtc",
          postOnly: true,
          reduceOnly: false,
          expiresAt: null
        })
        assert.strictEqual(placed.status, "open")
        const found = yield* venue.orderByClientId(clientOrderId)
        assert.strictEqual(found?.venueOrderId, placed.venueOrderId)
        assert.strictEqual((yield* venue.orderById!(placed.venueOrderId))?.status, "open")
        // an amend is taken with a new client id
        const amended = yield* venue.amendOrder(placed.venueOrderId, { price: F.add(market.tick, market.tick) })
        assert.notStrictEqual(amended.clientOrderId, clientOrderId)
        const canceled = yield* venue.cancelOrder(placed.venueOrderId)
        assert.strictEqual(canceled.status, "canceled")
        assert.strictEqual((yield* venue.orderById!(placed.venueOrderId))?.status, "canceled")

        // the venue's own refusal of reduce_only on an order that could rest
        const rest = yield* makeRest({ baseUrl: config.apiUrl, credentials: config.credentials })
        const refused = yield* Effect.flip(
          rest.createOrder(
            createOrderBody({
              clientOrderId: `crossbook-live-ro-${Date.now()}`,
              nativeId: target!,
              side: "buy",
              price: market.tick,
              amount: F.ONE,
              timeInForce: "gtc",
              postOnly: true,
              reduceOnly: true,
              expiresAt: null
            })
          )
        )
        assert.strictEqual(refused.kind, "rejected")
        // and the adapter's, before anything is sent
        const local = yield* Effect.flip(
          venue.placeOrder({
            clientOrderId: `crossbook-live-ro2-${Date.now()}`,
            nativeId: target!,
            side: "buy",
            price: market.tick,
            amount: F.ONE,
            timeInForce: "gtc",
            postOnly: true,
            reduceOnly: true,
            expiresAt: null
          })
        )
        assert.strictEqual(local.sent, false)

        // an order that expires is canceled by the venue, and the socket says so
        const expiring = yield* venue.placeOrder({
          clientOrderId: `crossbook-live-gtd-${Date.now()}`,
          nativeId: target!,
          side: "buy",
          price: market.tick,
          amount: F.ONE,
          timeInForce: "gtd",
          postOnly: true,
          reduceOnly: false,
          expiresAt: Date.now() + 5_000
        })
        const ended = yield* Effect.gen(function* () {
          for (;;) {
            const e: VenueEvent = yield* Queue.take(events)
            if (e._tag === "Order" && e.order.venueOrderId === expiring.venueOrderId && e.order.status !== "open")
              return e.order
          }
        }).pipe(Effect.timeout("60 seconds"))
        assert.include(["canceled", "expired"], ended.status)

        // the account read back: fills and settlements, every page; the socket's state
        yield* venue.fillsSince!(Date.now() - 7 * 86_400_000)
        yield* venue.settlementsSince!(Date.now() - 30 * 86_400_000)
        assert.strictEqual((yield* venue.streams!)[0]?.state, "live")
      }).pipe(Effect.provide(NodeHttpClient.layer))
    )

    it.scoped("both price forms stream the book the REST route states; limits and fees are readable", () =>
      Effect.gen(function* () {
        for (const yesPrice of [true, false]) {
          const config = demoConfig(yesPrice)
          const venue = yield* makeKalshiVenue({ ...config, catalogPages: 1 })
          const m = (yield* venue.markets).find((x) => x.status === "open")!
          const fromRest = yield* venue.book(m.nativeId)
          let streamed = fromRest
          for (let i = 0; i < 100; i++) {
            yield* Effect.sleep("100 millis")
            streamed = yield* venue.book(m.nativeId)
          }
          // a quiet demo market: the streamed book is the one REST stated
          assert.deepStrictEqual(streamed.asks.slice(0, 3), fromRest.asks.slice(0, 3))
          assert.deepStrictEqual(streamed.bids.slice(0, 3), fromRest.bids.slice(0, 3))
          const fees = yield* venue.fees!(m.nativeId)
          assert.isTrue(fees === undefined || fees.taker > 0)
        }
        const config = demoConfig()
        const rest = yield* makeRest({ baseUrl: config.apiUrl, credentials: config.credentials })
        const limits = yield* rest.accountLimits
        // the tier the account is on, and what the settings say (set KALSHI_READ_BUCKET… to match another tier)
        assert.isAbove(limits.read.refill_rate, 0)
      }).pipe(Effect.provide(NodeHttpClient.layer))
    )
  }
)
