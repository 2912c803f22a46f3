/** Every numeric param of every complex type is bounded, and an unknown key anywhere in `params` is refused (422). */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { placeOnSim, type RawResponse, TestServerLive } from "../Http/TestServer.ts"

const assertRefused = (res: RawResponse, field: string) => {
  assert.strictEqual(res.status, 422, res.text)
  assert.strictEqual(res.body.error.code, "validation_error")
  assert.isFalse(res.body.error.details.retryable)
  const fields = res.body.error.details.errors.map((e: any) => e.field)
  assert.include(fields, field, res.text)
}

const LONG = { take_profit: { price: "0.6" }, stop_loss: { stop_price: "0.4" } }
const LEG = { side: "buy", type: "limit", price: "0.1" }

describe("complex order params", () => {
  it.layer(TestServerLive)((it) => {
    const post = (body: Record<string, unknown>) => placeOnSim({ price: "0.3", ...body })

    it.effect("numbers beyond their bounds are 422 naming params.<field>", () =>
      Effect.gen(function* () {
        const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
          ["twap", { window_s: 60, slices: 1e8 }, "params.slices"],
          ["twap", { window_s: 60, slices: 10_001 }, "params.slices"],
          ["twap", { window_s: 1e308, slices: 2 }, "params.window_s"],
          ["twap", { window_s: 30 * 86_400 + 1, slices: 2 }, "params.window_s"],
          ["iceberg", { display: "2", reload_delay_s: 86_401 }, "params.reload_delay_s"],
          ["iceberg", { display: "2", jitter_s: 1e20 }, "params.jitter_s"],
          ["peg", { min_stay_s: 86_401 }, "params.min_stay_s"],
          ["peg", { level_cap: 1_000_001 }, "params.level_cap"],
          ["smart_taker", { limit: "0.5", interval_s: 86_401 }, "params.interval_s"],
          ["smart_taker", { limit: "0.5", interval_s: 0 }, "params.interval_s"],
          ["smart_taker", { limit: "0.5", expires_s: 30 * 86_400 + 1 }, "params.expires_s"],
          ["smart_taker", { clip: "1000000000000000", limit: "0.5" }, "params.clip"]
        ]
        for (const [type, params, field] of cases) assertRefused(yield* post({ type, params }), field)
      })
    )

    it.effect("the largest values inside the bounds are accepted", () =>
      Effect.gen(function* () {
        const twap = yield* post({ type: "twap", amount: "10000", params: { window_s: 30 * 86_400, slices: 10_000 } })
        assert.strictEqual(twap.status, 201, twap.text)
        const iceberg = yield* post({
          type: "iceberg",
          params: { display: "2", reload_delay_s: 86_400, jitter_s: 86_400 }
        })
        assert.strictEqual(iceberg.status, 201, iceberg.text)
      })
    )

    it.effect("an unknown key in params, or in a nested object of params, is 422 naming it", () =>
      Effect.gen(function* () {
        const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
          ["iceberg", { display: "2", reload_delay: 5 }, "params.reload_delay"],
          ["twap", { window_s: 60, slices: 2, windows: 3 }, "params.windows"],
          ["stop_market", { trigger: "last" }, "params.trigger"],
          ["trailing_stop", { trail: "0.05", trail_pct: "0.1" }, "params.trail_pct"],
          ["peg", { offset_ticks: 1 }, "params.offset_ticks"],
          ["smart_taker", { limit: "0.5", clips: "2" }, "params.clips"],
          ["oco", { legs: [LEG, { ...LEG, stop: "0.2" }] }, "params.legs.1.stop"],
          ["bracket", { ...LONG, entry: { price: "0.5", tif: "gtc" } }, "params.entry.tif"],
          ["bracket", { ...LONG, take_profit: { price: "0.6", amount: "1" } }, "params.take_profit.amount"],
          ["bracket", { ...LONG, stop_loss: { stop_price: "0.4", limit: "0.39" } }, "params.stop_loss.limit"]
        ]
        for (const [type, params, field] of cases) {
          assertRefused(yield* post({ type, stop_price: "0.2", params }), field)
        }
      })
    )
  })
})
