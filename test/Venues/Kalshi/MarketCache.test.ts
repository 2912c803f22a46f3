/** What the Kalshi venue remembers of a market, and for how long: a market that closes without a word on the socket. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as F from "../../../src/Domain/Fixed.ts"
import { orderOn } from "./Fake.ts"
import { exchange, live, venueOn } from "./Helpers.ts"

const TTL_MS = 1_500

describe("the Kalshi market cache", () => {
  it.live("a market read is kept for the catalog's time to live, then read again; a failed read keeps the last", () =>
    Effect.gen(function* () {
      const x = yield* exchange([
        { ticker: "KXA-1", event: "KXA", title: "A", yes: [["0.20", "10"]], no: [["0.60", "10"]] }
      ])
      const venue = yield* venueOn(x, { catalogTtlMs: TTL_MS })
      const reads = () => x.requests.filter((r) => r.method === "GET" && /\/markets\/KXA-1$/.test(r.path)).length
      const listed = yield* venue.markets
      assert.deepStrictEqual(
        listed.map((m) => [m.nativeId, m.status, m.category]),
        [["KXA-1", "open", "Test"]]
      )

      // The venue closes the market; the socket follows no market here, so nothing says so.
      x.markets.get("KXA-1")!.status = "closed"
      assert.strictEqual((yield* venue.market("KXA-1"))?.status, "open")
      assert.strictEqual(reads(), 0)

      // Once the catalog's time to live has passed, the market is read again: closed, with the catalog's words kept.
      yield* Effect.sleep(TTL_MS + 50)
      const closed = yield* venue.market("KXA-1")
      assert.strictEqual(closed?.status, "closed")
      assert.strictEqual(closed?.category, "Test")
      assert.strictEqual(reads(), 1)
      const refused = yield* Effect.flip(venue.placeOrder(orderOn({ amount: F.of("1") })))
      assert.strictEqual(refused.kind, "market_closed")
      assert.isFalse(x.requests.some((r) => r.method === "POST"))

      // Reopened, but the next read fails: the market stays as last read, and the read after finds it open.
      x.markets.get("KXA-1")!.status = "active"
      yield* Effect.sleep(TTL_MS + 50)
      x.trick("GET", /^\/markets\/KXA-1$/, { kind: "fail", status: 500, body: { error: { code: "internal" } } })
      assert.strictEqual((yield* venue.market("KXA-1"))?.status, "closed")
      assert.strictEqual((yield* venue.market("KXA-1"))?.status, "open")
    }).pipe(live)
  )
})
