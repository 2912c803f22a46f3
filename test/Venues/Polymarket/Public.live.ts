/** A read-only check against Polymarket's public endpoints; runs only with CROSSBOOK_LIVE=1. */
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { configFromEnv, makePolymarketVenue } from "../../../src/Venues/Polymarket/Venue.ts"

const live = process.env["CROSSBOOK_LIVE"] === "1"

describe.skipIf(!live)(live ? "Polymarket live (read-only)" : "Polymarket live — SKIPPED: set CROSSBOOK_LIVE=1", () => {
  it("lists open markets and reads a YES book and recent trades", async () => {
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        // public data only: no key is read even when one is set
        const venue = yield* makePolymarketVenue({ ...configFromEnv({}), catalogPages: 1 })
        const markets = yield* venue.markets
        const open = markets.find((m) => m.status === "open")!
        const again = yield* venue.market(open.nativeId)
        const book = yield* venue.book(open.nativeId)
        const trades = yield* venue.trades(open.nativeId)
        return { markets, open, again, book, trades, has: venue.info.has }
      }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer))
    )
    expect(out.markets.length).toBeGreaterThan(0)
    expect(out.again?.nativeId).toBe(out.open.nativeId)
    for (let i = 1; i < out.book.bids.length; i++)
      expect(out.book.bids[i]!.price).toBeLessThan(out.book.bids[i - 1]!.price)
    for (let i = 1; i < out.book.asks.length; i++)
      expect(out.book.asks[i]!.price).toBeGreaterThan(out.book.asks[i - 1]!.price)
    if (out.book.bids.length > 0 && out.book.asks.length > 0) {
      expect(out.book.bids[0]!.price).toBeLessThan(out.book.asks[0]!.price)
    }
    expect(out.has.create_order).toBe(false)
  }, 60_000)
})
