import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { OwnerToken, type RawResponse, request, TestServerLive } from "./TestServer.ts"

const plain = { side: "buy", type: "limit", amount: "1", price: "0.3" }
const held = { side: "sell", type: "stop_market", amount: "1", stop_price: "0.3" }

const errorOf = (res: RawResponse) => ({
  status: res.status,
  code: res.body.error.code,
  rule: res.body.error.details.rule,
  fields: (res.body.error.details.errors ?? []).map((e: { field: string }) => e.field)
})

describe("market ids at the order route", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("a malformed market id is a 400 naming market_id, for plain and engine-held orders alike", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        for (const market_id of ["", "sim", ":x", "sim:", ":"]) {
          for (const body of [plain, held]) {
            const res = yield* request("POST", "/trading/orders", { token, json: { ...body, market_id } })
            assert.deepStrictEqual(
              errorOf(res),
              { status: 400, code: "validation_error", rule: undefined, fields: ["market_id"] },
              `${body.type} on '${market_id}': ${res.text}`
            )
          }
        }
      })
    )

    it.effect("a closed market refuses a plain order and an engine-held one with the same error", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const closed = (yield* request("GET", "/venues/sim/markets?status=closed")).body.data[0]
        assert.strictEqual(closed.status, "closed")
        const answers = []
        for (const body of [plain, held]) {
          const res = yield* request("POST", "/trading/orders", { token, json: { ...body, market_id: closed.id } })
          assert.strictEqual(res.body.error.details.venue, "sim", res.text)
          assert.strictEqual(res.body.error.message, `market ${closed.id} is closed`, res.text)
          answers.push(errorOf(res))
        }
        assert.deepStrictEqual(answers[0], { status: 409, code: "risk_rejected", rule: "market_halted", fields: [] })
        assert.deepStrictEqual(answers[1], answers[0])
      })
    )
  })
})
