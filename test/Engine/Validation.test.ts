import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { placeOnSim, type RawResponse, TestServerLive } from "../Http/TestServer.ts"

const assertValidation = (res: RawResponse, status: number, field: string) => {
  assert.strictEqual(res.status, status, res.text)
  assert.strictEqual(res.body.error.code, "validation_error")
  assert.isNull(res.body.error.details.venue)
  assert.isFalse(res.body.error.details.retryable)
  const fields = res.body.error.details.errors.map((e: any) => e.field)
  assert.include(fields, field, res.text)
}

describe("complex order validation", () => {
  it.layer(TestServerLive)((it) => {
    const post = placeOnSim

    it.effect("post_only only on iceberg, peg and limit-style twap", () =>
      Effect.gen(function* () {
        for (const type of ["stop_market", "stop_limit", "trailing_stop", "oco", "bracket", "smart_taker"]) {
          const res = yield* post({ type, post_only: true, stop_price: "0.5", price: "0.5", params: {} })
          assertValidation(res, 400, "post_only")
        }
        const taker = yield* post({
          type: "twap",
          post_only: true,
          price: "0.5",
          params: { window_s: 60, slices: 3, style: "taker" }
        })
        assertValidation(taker, 400, "post_only")
      })
    )

    it.effect("oco takes exactly two legs", () =>
      Effect.gen(function* () {
        for (const legs of [
          [],
          [{ side: "buy", type: "limit", price: "0.1" }],
          Array(3).fill({ side: "buy", type: "limit", price: "0.1" })
        ]) {
          assertValidation(yield* post({ type: "oco", params: { legs } }), 400, "params.legs")
        }
      })
    )

    it.effect("expires_at in the past is refused", () =>
      Effect.gen(function* () {
        assertValidation(yield* post({ type: "stop_market", stop_price: "0.5", expires_at: -1 }), 400, "expires_at")
      })
    )

    it.effect("a trailing stop takes exactly one of trail and trail_percent", () =>
      Effect.gen(function* () {
        const both = yield* post({ type: "trailing_stop", params: { trail: "0.05", trail_percent: "0.1" } })
        assert.strictEqual(both.status, 400, both.text)
        const neither = yield* post({ type: "trailing_stop", params: {} })
        assert.strictEqual(neither.status, 400, neither.text)
        assert.strictEqual(both.body.error.code, "validation_error")
      })
    )

    it.effect("a smart_taker needs a bound", () =>
      Effect.gen(function* () {
        const res = yield* post({ type: "smart_taker", params: { clip: "2" } })
        assert.strictEqual(res.status, 400, res.text)
        assert.strictEqual(res.body.error.code, "validation_error")
      })
    )

    it.effect("params of the wrong shape are 422 with details.errors", () =>
      Effect.gen(function* () {
        const res = yield* post({ type: "iceberg", price: "0.3", params: { display: 5 } })
        assertValidation(res, 422, "params.display")
        const legs = yield* post({ type: "oco", params: { legs: "two" } })
        assertValidation(legs, 422, "params.legs")
      })
    )

    it.effect("a key a type does not know is 422, named, not silently dropped", () =>
      Effect.gen(function* () {
        const res = yield* post({ type: "iceberg", price: "0.3", params: { display: "5", dispaly: "5" } })
        assertValidation(res, 422, "params.dispaly")
      })
    )

    it.effect("a stop_price off the grid names the nearest valid prices", () =>
      Effect.gen(function* () {
        const res = yield* post({ type: "stop_market", stop_price: "0.455" })
        assertValidation(res, 400, "stop_price")
        assert.include(res.body.error.message, "0.45 or 0.46")
      })
    )

    it.effect("the same mistake gets the same words, whichever field of whichever type makes it", () =>
      Effect.gen(function* () {
        const messageOf = (res: RawResponse, field: string) =>
          res.body.error.details.errors.find((e: any) => e.field === field)?.message as string | undefined
        const offGrid = "0.505 is off the tick grid of 0.01; nearest valid: 0.5 or 0.51"
        const limit = yield* post({ type: "limit", price: "0.505" })
        assertValidation(limit, 400, "price")
        assert.strictEqual(messageOf(limit, "price"), offGrid)
        const bracket = yield* post({
          type: "bracket",
          params: { entry: { price: "0.4" }, take_profit: { price: "0.505" }, stop_loss: { stop_price: "0.3" } }
        })
        assert.strictEqual(messageOf(bracket, "params.take_profit.price"), offGrid)
        const twap = yield* post({ type: "twap", params: { window_s: 60, slices: 3, limit: "0.505" } })
        assert.strictEqual(messageOf(twap, "params.limit"), offGrid)
        const outside = yield* post({ type: "limit", price: "0.995" })
        const stop = yield* post({ type: "stop_market", stop_price: "0.5", params: { protection: "0.995" } })
        assert.strictEqual(messageOf(stop, "params.protection"), messageOf(outside, "price"))
        // A slippage that is no positive decimal is refused on every type that takes one, never replaced by the default.
        const oco = yield* post({
          type: "oco",
          params: {
            legs: [
              { side: "sell", type: "limit", price: "0.6" },
              { side: "sell", type: "stop_market", stop_price: "0.4", max_slippage: "0" }
            ]
          }
        })
        assertValidation(oco, 400, "params.legs.1.max_slippage")
        const bracketSlip = yield* post({
          type: "bracket",
          params: {
            entry: { price: "0.4" },
            take_profit: { price: "0.6" },
            stop_loss: { stop_price: "0.3", max_slippage: "0" }
          }
        })
        assert.strictEqual(
          messageOf(bracketSlip, "params.stop_loss.max_slippage"),
          messageOf(oco, "params.legs.1.max_slippage")
        )
      })
    )
  })
})
