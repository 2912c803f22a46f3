// The local matcher over a server's venues: loads catalogs on demand, never waits on a venue that cannot answer.
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, TestClock } from "effect"
import { makeLocalMatcher } from "../../src/Matching/Local.ts"
import { type Venue, VenueError, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { makeSimVenues } from "../../src/Venues/SimVenue.ts"
import { generateVenueCatalogs } from "../../src/Venues/Sim/Catalog.ts"

const sims = makeSimVenues({ seed: 7, stepMs: 1000, markets: 24, count: 2 })

/** A venue that answers its catalog as `state.mode` says: hangs, fails, or lists sim2's markets. */
const flaky = (sim2: Venue, state: { mode: "hang" | "fail" | "ok"; calls: number }): Venue => ({
  ...sim2,
  markets: Effect.suspend(() => {
    state.calls += 1
    return state.mode === "hang"
      ? Effect.never
      : state.mode === "fail"
        ? Effect.fail(new VenueError({ venue: "sim2", kind: "unavailable", reason: "down" }))
        : sim2.markets
  })
})

/** sim's id of a market sim2 lists the other way round, and sim2's id of it (catalog of the Clock's day 0). */
const [, catalog2] = generateVenueCatalogs(7, 0, 24, 2)
const twin = catalog2!.find((s) => s.link!.flipped)!
const anchor = `sim:${twin.link!.key}`
const other = `sim2:${twin.market.nativeId}`

describe("the local matcher over a gateway", () => {
  it.scoped("answers from a venue's catalog loaded on first need, and a refresh reloads it", () =>
    Effect.gen(function* () {
      const [sim, sim2] = yield* sims
      const state = { mode: "ok" as const, calls: 0 }
      const local = makeLocalMatcher(VenueGateway.fromVenues([sim!, flaky(sim2!, state)]))
      assert.strictEqual(local.index.size, 0)
      const answer = yield* local.client.match(anchor)
      assert.deepStrictEqual(answer?.matched, { id: other, venue: "sim2", side_map: { yes: "no", no: "yes" } })
      assert.strictEqual(state.calls, 1)
      yield* local.client.match(anchor)
      assert.strictEqual(state.calls, 1, "a loaded catalog is not loaded again for each match")
      yield* local.refresh
      assert.strictEqual(state.calls, 2)
      assert.isUndefined(yield* local.client.match("sim:NO-SUCH-MARKET"))
      assert.isUndefined(yield* local.client.match("elsewhere:X"), "a venue the server does not serve")
      assert.isTrue((yield* Effect.flip(local.client.match("no-colon"))).invalid)
    })
  )

  it.scoped("a venue that hangs is given up after the load timeout; the others still answer", () =>
    Effect.gen(function* () {
      const [sim, sim2] = yield* sims
      const state = { mode: "hang" as "hang" | "fail" | "ok", calls: 0 }
      const local = makeLocalMatcher(VenueGateway.fromVenues([sim!, flaky(sim2!, state)]), {
        loadTimeout: "2 seconds",
        retryAfter: "1 minute"
      })
      const pending = yield* Effect.fork(local.client.match(anchor))
      yield* TestClock.adjust(Duration.seconds(2))
      const answer = yield* Fiber.join(pending)
      assert.strictEqual(answer?.anchor, anchor)
      assert.isNull(answer?.matched, "sim2 not loaded: no match rather than a wait")
      // within the minute the failed venue is not tried again: the answer comes at once
      state.mode = "ok"
      assert.isNull((yield* local.client.match(anchor))?.matched)
      assert.strictEqual(state.calls, 1)
      // after it, the next match loads it
      yield* TestClock.adjust(Duration.minutes(1))
      assert.strictEqual((yield* local.client.match(anchor))?.matched?.id, other)
      assert.strictEqual(state.calls, 2)
    })
  )

  it.scoped("a venue that fails to load is left out; matching another venue's market does not need it", () =>
    Effect.gen(function* () {
      const [sim, sim2] = yield* sims
      const state = { mode: "fail" as "hang" | "fail" | "ok", calls: 0 }
      const local = makeLocalMatcher(VenueGateway.fromVenues([sim!, flaky(sim2!, state)]), { retryAfter: "1 second" })
      assert.isNull((yield* local.client.match(anchor))?.matched)
      // past the retry delay, a match with a target other than the failed venue still does not try it
      yield* TestClock.adjust(Duration.seconds(2))
      assert.isNull((yield* local.client.match(anchor, "sim"))?.matched)
      assert.strictEqual(state.calls, 1)
      state.mode = "ok"
      yield* local.refresh
      assert.strictEqual((yield* local.client.match(anchor, "sim2"))?.matched?.id, other)
    })
  )
})
