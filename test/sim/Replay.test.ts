import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { existsSync } from "node:fs"
import { convertKalshi } from "../../sim/convert/Kalshi.ts"
import { convertPolymarket } from "../../sim/convert/Polymarket.ts"
import { generateTape } from "../../sim/Generator.ts"
import { replay, replayTimings, Scenario, type ScenarioOrder } from "../../sim/Replay.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { formatTape, parseTape } from "../../sim/Tape.ts"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tapes/${name}`, import.meta.url), "utf8")

describe("sim replay", () => {
  const tape = fixture("demo.jsonl")
  const orders = Schema.decodeUnknownSync(Scenario)(JSON.parse(fixture("demo-orders.json")))

  it.live("G3: the same tape, scenario and seed give a byte-identical event log", () =>
    Effect.gen(function* () {
      const a = yield* replay({ tape, orders, seed: 3 })
      const b = yield* replay({ tape, orders, seed: 3 })
      assert.strictEqual(a.log, b.log)
      assert.strictEqual(a.summary.events_sha256, b.summary.events_sha256)
      assert.isAbove(a.summary.journal_events, 20)
      assert.isAbove(a.summary.fills, 0)
      assert.deepStrictEqual(a.summary.orders.refused, [])
      // Every complex type of the scenario worked through to an end.
      const kinds = a.log
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).kind as string)
      assert.include(kinds, "managed.triggered")
      assert.include(kinds, "managed.done")
      assert.include(kinds, "fill.new")
    })
  )

  it.live("another seed changes the seeded draws (the iceberg's jitter) and so the log", () =>
    Effect.gen(function* () {
      const a = yield* replay({ tape, orders, seed: 3 })
      const b = yield* replay({ tape, orders, seed: 4 })
      assert.notStrictEqual(a.summary.events_sha256, b.summary.events_sha256)
    })
  )

  it.live(
    "a tape's text is read as the replay reaches it: the same log as the tape parsed first; a bad line fails the run there",
    () =>
      Effect.gen(function* () {
        const fromText = yield* replay({ tape, orders, seed: 3 })
        const fromParsed = yield* replay({ tape: parseTape(tape), orders, seed: 3 })
        assert.strictEqual(fromText.log, fromParsed.log)
        assert.deepStrictEqual(fromText.summary, fromParsed.summary)
        // A broken line two thirds in: the run fails naming it, after the lines before it were applied.
        const lines = tape.trimEnd().split("\n")
        const at = Math.floor((lines.length * 2) / 3)
        const broken = [...lines.slice(0, at), '{"type":"change","ts":', ...lines.slice(at + 1)].join("\n")
        let applied = 0
        const failed = yield* Effect.exit(
          Effect.suspend(() => replay({ tape: broken, orders, seed: 3, onProgress: (done) => void (applied = done) }))
        )
        assert.isTrue(failed._tag === "Failure")
        assert.include(String(failed._tag === "Failure" ? failed.cause : ""), `tape line ${at + 1}`)
        assert.isAbove(applied, 0)
      })
  )

  it.live("progress is reported up to the last event", () =>
    Effect.gen(function* () {
      const seen: Array<number> = []
      const { summary } = yield* replay({ tape, orders: [], onProgress: (done) => seen.push(done) })
      assert.strictEqual(seen[seen.length - 1], summary.tape.events)
      for (let i = 1; i < seen.length; i++) assert.isAbove(seen[i]!, seen[i - 1]!)
    })
  )

  it.live("timings count the work each kind of input caused, and change nothing a replay finds", () =>
    Effect.gen(function* () {
      // A wall clock that moves one step a reading: each timed piece of work then takes exactly one step.
      let clock = 0
      const timings = replayTimings(() => clock++)
      let woken = -1
      const timed = yield* replay({
        tape,
        orders,
        seed: 3,
        timings,
        hooks: {
          end: (run) =>
            Effect.sync(() => {
              woken = Context.get(run.context, Engine).stats().woken
            })
        }
      })
      const plain = yield* replay({ tape, orders, seed: 3 })
      assert.strictEqual(timed.log, plain.log)
      for (const segment of [timings.own, timings.woken, timings.scheduled]) {
        assert.isAbove(segment.count, 0)
        assert.strictEqual(segment.ms, segment.count)
      }
      // Every parent a view woke was counted with the view that woke it.
      assert.strictEqual(timings.woken.parents, woken)
      assert.isAtLeast(timings.woken.parents, timings.woken.count)
      // Each timed batch held at least one own-order event.
      assert.isAtLeast(timings.own.events, timings.own.count)
    })
  )
})

const recorded = (path: string) => new URL(`../../../shared/fixtures/recorded/${path}`, import.meta.url)

/** A scenario on a tape's first market: a resting bid, a stop, a taker twap and a peg, from its first quoted book. */
const scenarioFor = (tape: string): ReadonlyArray<ScenarioOrder> => {
  const { header, events } = parseTape(tape)
  const market = header.markets[0]!.id
  const snap = events.find(
    (e) => e.type === "snapshot" && e.market === market && e.bids.length > 0 && e.asks.length > 0
  )
  if (snap === undefined || snap.type !== "snapshot") return []
  const bid = Math.round(Number(snap.bids[0]![0]) * 100)
  const ask = Math.round(Number(snap.asks[0]![0]) * 100)
  const p = (c: number) => String(Math.min(99, Math.max(1, c)) / 100)
  const at = snap.ts - events[0]!.ts
  const orders = [
    { market_id: market, side: "buy", type: "limit", amount: "3", price: p(bid) },
    { market_id: market, side: "sell", type: "stop_market", amount: "2", stop_price: p(bid - 1) },
    {
      market_id: market,
      side: "buy",
      type: "twap",
      amount: "4",
      price: p(ask + 2),
      params: { window_s: 8, slices: 2, style: "taker" }
    },
    { market_id: market, side: "buy", type: "peg", amount: "2", params: { reference: "near", min_stay_s: 2 } }
  ]
  return Schema.decodeUnknownSync(Scenario)(orders.map((order, i) => ({ at_ms: at + i * 500, order })))
}

describe("sim replay of recorded and generated tapes", () => {
  const tapes: Array<[string, () => string]> = [
    [
      "generated",
      () => {
        const g = generateTape({ seed: 9, markets: 2, durationS: 60 })
        return formatTape(g.header, g.events)
      }
    ]
  ]
  if (existsSync(recorded("kalshi/ws_transcript.jsonl"))) {
    tapes.push([
      "kalshi",
      () => {
        const c = convertKalshi(readFileSync(recorded("kalshi/ws_transcript.jsonl"), "utf8"))
        return formatTape(c.header, c.events)
      }
    ])
    tapes.push([
      "polymarket",
      () => {
        const c = convertPolymarket(readFileSync(recorded("polymarket/ws_market_transcript.jsonl"), "utf8"))
        return formatTape(c.header, c.events)
      }
    ])
  }
  for (const [name, make] of tapes) {
    it.live(`G3: a ${name} tape replayed twice gives identical events.jsonl hashes`, () =>
      Effect.gen(function* () {
        const tape = make()
        const orders = scenarioFor(tape)
        assert.isAbove(orders.length, 0)
        const a = yield* replay({ tape, orders, seed: 5 })
        const b = yield* replay({ tape, orders, seed: 5 })
        assert.strictEqual(a.summary.events_sha256, b.summary.events_sha256)
        assert.strictEqual(a.log, b.log)
        assert.isAbove(a.summary.journal_events, orders.length)
      })
    )
  }
})
