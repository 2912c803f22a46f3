/** Against Kalshi's demo environment: read a market, place a 1-contract order far from the touch, cancel it. */
import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import { configFromEnv, makeKalshiVenue } from "../../../src/Venues/Kalshi/Venue.ts"

const keyId = process.env["KALSHI_DEMO_API_KEY_ID"]
const live = keyId !== undefined && keyId !== ""

describe.skipIf(!live)(
  live ? "Kalshi demo" : "Kalshi demo — SKIPPED: set KALSHI_DEMO_API_KEY_ID and KALSHI_DEMO_PRIVATE_KEY(_PATH)",
  () => {
    it.scoped("reads a market, places a 1-contract bid at the lowest price and cancels it", () =>
      Effect.gen(function* () {
        const config = Either.getOrThrowWith(
          configFromEnv({
            KALSHI_ENV: "demo",
            KALSHI_API_KEY_ID: keyId,
            KALSHI_PRIVATE_KEY: process.env["KALSHI_DEMO_PRIVATE_KEY"],
            KALSHI_PRIVATE_KEY_PATH: process.env["KALSHI_DEMO_PRIVATE_KEY_PATH"],
            KALSHI_API_URL: process.env["KALSHI_DEMO_API_URL"],
            KALSHI_WS_URL: process.env["KALSHI_DEMO_WS_URL"]
          }),
          (e) => new Error(e)
        )
        const venue = yield* makeKalshiVenue({ ...config, catalogPages: 2 })
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
        const canceled = yield* venue.cancelOrder(placed.venueOrderId)
        assert.strictEqual(canceled.status, "canceled")
      }).pipe(Effect.provide(NodeHttpClient.layer))
    )
  }
)
