import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { replay, Scenario } from "../../sim/Replay.ts"
import { formatTape } from "../../sim/Tape.ts"

const T0 = 1_767_225_600_000

/** A resting bid at 0.49, and at T0 + 5 s a trade at 0.48 that goes through it. */
const tape = formatTape(
  {
    type: "header",
    version: 1,
    source: "generated",
    markets: [{ id: "sim:G4", title: "Ordering at one timestamp", tick: "0.01", lot: "1" }]
  },
  [
    { type: "snapshot", ts: T0, market: "sim:G4", bids: [["0.5", "10"]], asks: [["0.52", "10"]] },
    { type: "trade", ts: T0 + 5000, market: "sim:G4", price: "0.48", amount: "50", taker_side: "sell" },
    { type: "snapshot", ts: T0 + 6000, market: "sim:G4", bids: [["0.47", "10"]], asks: [["0.52", "10"]] }
  ]
)

const scenario = (expiresAt: number) =>
  Schema.decodeUnknownSync(Scenario)([
    {
      at_ms: 0,
      order: {
        market_id: "sim:G4",
        side: "buy",
        type: "iceberg",
        amount: "5",
        price: "0.49",
        expires_at: expiresAt,
        params: { display: "5" }
      }
    }
  ])

const finalParent = (log: string) =>
  log
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.key === "mo_000001" && e.kind.startsWith("order."))
    .pop().payload

describe("G4: inputs that share a timestamp follow the documented order", () => {
  it.live("an expiry at the same ms as a fill comes first: the child is pulled before the trade reaches it", () =>
    Effect.gen(function* () {
      const { log, summary } = yield* replay({ tape, orders: scenario(T0 + 5000) })
      const parent = finalParent(log)
      assert.strictEqual(parent.status, "expired")
      assert.strictEqual(parent.filled, "0")
      assert.strictEqual(summary.fills, 0)
    })
  )

  it.live("one ms later the same trade fills it (the order above is what kept it out)", () =>
    Effect.gen(function* () {
      const { log, summary } = yield* replay({ tape, orders: scenario(T0 + 5001) })
      const parent = finalParent(log)
      assert.strictEqual(parent.status, "closed")
      assert.strictEqual(parent.filled, "5")
      assert.strictEqual(summary.fills, 1)
    })
  )
})
