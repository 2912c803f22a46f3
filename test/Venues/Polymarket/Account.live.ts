/**
 * Against a real Polymarket account (opt-in, `npm run test:live`): what an account can show of the venue's documented
 * behaviour. It places one order at the lowest tick of a liquid market (far from the touch: it rests, never fills),
 * finds it again by its hash, reads it back, cancels it, and reads the account's trades, settlements and streams.
 *
 * What a real account cannot show on demand, and the fake exchange covers instead (test/Venues/Polymarket/): a 5xx or
 * hung answer to a placement, a silent socket, a cancel-only 503, an exchange upgrade (`order_version_mismatch`),
 * a heartbeat lapse, a market resolving, a delayed FAK, fees on a fill (this test never fills).
 */
import { FetchHttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import type { PlaceOrderRequest } from "../../../src/Services/VenueGateway.ts"
import { configFromEnv, makePolymarketVenue } from "../../../src/Venues/Polymarket/Venue.ts"

const key = process.env["POLYMARKET_LIVE_PRIVATE_KEY"]
const live = key !== undefined && key !== ""

describe.skipIf(!live)(
  live
    ? "Polymarket account"
    : "Polymarket account — SKIPPED: set POLYMARKET_LIVE_PRIVATE_KEY (and POLYMARKET_LIVE_FUNDER for a deposit wallet)",
  () => {
    it.scoped("places a resting order at the lowest tick, finds it by its hash, reads it back and cancels it", () =>
      Effect.gen(function* () {
        const config = configFromEnv({
          POLYMARKET_PRIVATE_KEY: key,
          POLYMARKET_FUNDER: process.env["POLYMARKET_LIVE_FUNDER"],
          POLYMARKET_SIGNATURE_TYPE: process.env["POLYMARKET_LIVE_SIGNATURE_TYPE"]
        })
        const venue = yield* makePolymarketVenue({ ...config, catalogPages: 1 })
        const markets = (yield* venue.markets).filter((m) => m.status === "open")
        let target: (typeof markets)[number] | undefined
        for (const m of markets.slice(0, 30)) {
          const book = yield* venue.book(m.nativeId)
          if ((book.bids[0]?.price ?? F.ZERO) >= F.of("0.1")) {
            target = m
            break
          }
        }
        assert.isDefined(target, "no open market with a bid at 0.1 or above among the first 30")
        const request: PlaceOrderRequest = {
          clientOrderId: `live-${Date.now().toString(36)}`,
          nativeId: target!.nativeId,
          side: "buy",
          price: target!.tick,
          amount: F.fromInt(5),
          timeInForce: "gtc",
          postOnly: true,
          reduceOnly: false,
          expiresAt: null
        }
        const placed = yield* venue.placeOrder(request)
        assert.strictEqual(placed.status, "open")
        // the hash computed before sending is the venue's id for it
        const found = yield* venue.orderByClientId(request.clientOrderId, request)
        assert.strictEqual(found?.venueOrderId, placed.venueOrderId)
        const open = yield* venue.openOrders!
        assert.isTrue(open.some((o) => o.venueOrderId === placed.venueOrderId))
        const canceled = yield* venue.cancelOrder(placed.venueOrderId)
        assert.strictEqual(canceled.status, "canceled")
        const byId = yield* venue.orderById!(placed.venueOrderId)
        assert.strictEqual(byId?.status, "canceled")
        // every page of the account's trades and its resolved markets read without error
        yield* venue.fillsSince!(Date.now() - 86_400_000)
        yield* venue.settlementsSince!(0)
        const streams = yield* venue.streams!
        assert.isTrue(streams.some((s) => s.channel === "user"))
      }).pipe(Effect.provide(FetchHttpClient.layer))
    )
  }
)
