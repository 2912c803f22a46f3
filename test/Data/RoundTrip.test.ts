import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Duration, Effect } from "effect"
import { join } from "node:path"
import bracketMaker from "../../sim/examples/bracket-maker.ts"
import { backtest } from "../../sim/Backtest.ts"
import { tapeFromHistory } from "../../sim/History.ts"
import { replay } from "../../sim/Replay.ts"
import { strategyOf } from "../../sim/Strategy.ts"
import { parseTape } from "../../sim/Tape.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { record } from "../../src/Data/Record.ts"
import { DataStore, type Levels } from "../../src/Data/Store.ts"
import { HistoryClient } from "../../src/Services/HistoryClient.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { makeSimVenue } from "../../src/Venues/SimVenue.ts"
import { keyOn, type RunningHost, startHost, tempFolder } from "./Support.ts"

interface Seen {
  readonly bids: Levels
  readonly asks: Levels
}

/** The last book recorded at each `<market>@<ts>`: what the recorder wrote, as it saw the venue's whole book. */
const recorded = new Map<string, Seen>()
const markets: Array<string> = []
let host: RunningHost
let key: string
let first = Number.MAX_SAFE_INTEGER
let last = 0

const stretch = (venue: Effect.Effect.Success<ReturnType<typeof makeSimVenue>>, store: DataStore, ms: number) =>
  Effect.scoped(
    record({
      store,
      venue,
      nativeIds: markets.map((m) => m.slice(4)),
      onBook: (market, ts, bids, asks) => {
        recorded.set(`${market}@${ts}`, { bids, asks })
        first = Math.min(first, ts)
        last = Math.max(last, ts)
      }
    })
  ).pipe(Effect.timeout(Duration.millis(ms)), Effect.ignore)

beforeAll(async () => {
  const store = new DataStore(join(tempFolder(), "data.db"))
  // Two stretches of a fast sim venue with the recorder stopped between them: the stop is an absent stretch.
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const venue = yield* makeSimVenue({ seed: 7, stepMs: 20, markets: 4 })
        for (const m of (yield* venue.markets).slice(0, 2)) markets.push(`sim:${m.nativeId}`)
        yield* stretch(venue, store, 800)
        yield* Effect.sleep(Duration.millis(200))
        yield* stretch(venue, store, 800)
      })
    )
  )
  key = keyOn(store)
  host = await startHost(store)
})
afterAll(() => host.close())

const tapeOf = (market: string) =>
  Effect.runPromise(
    Effect.flatMap(HistoryClient, (client) => tapeFromHistory(client, market, first - 1000, last + 1000)).pipe(
      Effect.provide(HistoryClient.layer({ url: host.url, apiKey: key })),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  )

const wire = (levels: ReadonlyArray<{ readonly price: F.Fixed; readonly size: F.Fixed }>): Levels =>
  levels.map((l) => [F.format(l.price), F.format(l.size)] as const)

describe("record → history → tape → replay", () => {
  it("replays the book the recorder saw, at every step of every market, with the stop as an explicit gap", async () => {
    for (const market of markets) {
      const recordedHere = [...recorded].filter(([k]) => k.startsWith(`${market}@`))
      expect(recordedHere.length).toBeGreaterThan(10)
      const tape = await tapeOf(market)
      const parsed = parseTape(tape.text)
      expect(parsed.events.filter((e) => e.type === "gap").length).toBeGreaterThanOrEqual(1)

      const replayed = new Map<string, Seen>()
      let inGap = false
      await Effect.runPromise(
        replay({
          tape: parsed,
          hooks: {
            after: (event, run) =>
              Effect.gen(function* () {
                if (event.type === "gap") {
                  inGap = true
                  return
                }
                if (event.type !== "snapshot" && event.type !== "change") return
                // The empty snapshot after a gap says no book is known there: not a recorded step.
                if (inGap) {
                  inGap = false
                  return
                }
                const venue = Context.get(run.context, VenueGateway).venue("sim")!
                const book = yield* Effect.orDie(venue.book(market.slice(4)))
                replayed.set(`${market}@${event.ts}`, { bids: wire(book.bids), asks: wire(book.asks) })
              })
          }
        })
      )
      expect(new Set(replayed.keys())).toEqual(new Set(recordedHere.map(([k]) => k)))
      for (const [k, seen] of recordedHere) expect(replayed.get(k), k).toEqual(seen)
    }
  })

  it("runs a backtest on a tape that came from the recorder through the history API", async () => {
    const tape = await tapeOf(markets[0]!)
    const report = await Effect.runPromise(backtest({ tape: tape.text, strategy: strategyOf(bracketMaker), seed: 3 }))
    expect(report.tape).toEqual({ source: "generated", markets: 1, events: tape.events })
    expect(report.refused).toEqual([])
    expect(report.equity.length).toBeGreaterThan(0)
  })
})
