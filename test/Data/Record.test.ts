import { describe, expect, it } from "vitest"
import { Duration, Effect, Fiber, Queue } from "effect"
import { join } from "node:path"
import { bookRange } from "../../src/Data/History.ts"
import { record } from "../../src/Data/Record.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { VenueError, type VenueEvent } from "../../src/Services/VenueGateway.ts"
import { makeSimVenue } from "../../src/Venues/SimVenue.ts"
import { tempFolder } from "./Support.ts"

describe("record", () => {
  it("writes a venue that stops answering as an absent stretch, then starts again from a snapshot", async () => {
    const store = new DataStore(join(tempFolder(), "data.db"))
    let down = false
    let market = ""
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sim = yield* makeSimVenue({ seed: 5, stepMs: 20, markets: 2 })
          market = (yield* sim.markets)[0]!.nativeId
          const unavailable = Effect.fail(
            new VenueError({ venue: "sim", kind: "unavailable", reason: "down for the test" })
          )
          // The venue's reads fail while `down`: as a lost connection looks to the recorder.
          const venue = {
            ...sim,
            book: (id: string) => (down ? unavailable : sim.book(id)),
            trades: (id: string) => (down ? unavailable : sim.trades(id))
          }
          const fiber = yield* Effect.fork(Effect.scoped(record({ store, venue, nativeIds: [market], retryMs: 30 })))
          yield* Effect.sleep(Duration.millis(400))
          down = true
          yield* Effect.sleep(Duration.millis(300))
          down = false
          yield* Effect.sleep(Duration.millis(400))
          yield* Fiber.interrupt(fiber)
        })
      )
    )
    const id = `sim:${market}`
    const range = bookRange(store, { market_id: id, start_ms: 0, end_ms: Number.MAX_SAFE_INTEGER - 1 }, Infinity)
    if (!("segments" in range)) throw range
    const inner = range.segments.slice(1, -1)
    expect(inner.map((s) => s.kind)).toEqual(["data", "absent", "data"])
    expect(inner[1]!.reason).toBe("venue_error:unavailable")
    // The stretch after the break opens with the venue's whole book again.
    expect(inner[2]!.initial_book!.bids.length).toBeGreaterThan(0)
    expect(store.spans(id, 0, Number.MAX_SAFE_INTEGER).length).toBe(2)
  })

  it("reads the books of a venue that streams none on a timer, and writes what changed", async () => {
    const store = new DataStore(join(tempFolder(), "data.db"))
    let market = ""
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const sim = yield* makeSimVenue({ seed: 6, stepMs: 20, markets: 2 })
          market = (yield* sim.markets)[0]!.nativeId
          const silent = yield* Queue.unbounded<VenueEvent>()
          const venue = {
            ...sim,
            info: { ...sim.info, has: { ...sim.info.has, watch_order_book: false } },
            subscribe: Effect.succeed(silent)
          }
          const fiber = yield* Effect.fork(Effect.scoped(record({ store, venue, nativeIds: [market], pollMs: 40 })))
          yield* Effect.sleep(Duration.millis(800))
          yield* Fiber.interrupt(fiber)
        })
      )
    )
    const rows = store.db.prepare("SELECT kind, COUNT(*) AS n FROM book GROUP BY kind ORDER BY kind").all()
    expect(rows[0]).toEqual({ kind: "change", n: expect.any(Number) })
    expect((rows[0] as { n: number }).n).toBeGreaterThan(2)
    expect(rows[1]).toEqual({ kind: "snapshot", n: 1 })
  })
})
