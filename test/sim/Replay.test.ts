import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { replay, Scenario } from "../../sim/Replay.ts"

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

  it.live("progress is reported up to the last event", () =>
    Effect.gen(function* () {
      const seen: Array<number> = []
      const { summary } = yield* replay({ tape, orders: [], onProgress: (done) => seen.push(done) })
      assert.strictEqual(seen[seen.length - 1], summary.tape.events)
      for (let i = 1; i < seen.length; i++) assert.isAbove(seen[i]!, seen[i - 1]!)
    })
  )
})
