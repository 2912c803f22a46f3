import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Tracer } from "effect"
import { tracingLayer } from "../../src/Telemetry/Tracing.ts"
import { OwnerToken, request, testServer } from "../Http/TestServer.ts"

/** A tracer that notes the name of every span made, then makes it as the native tracer would. */
const recording = (names: Array<string>) =>
  Layer.unwrapEffect(
    Effect.map(Effect.tracer, (native) =>
      Layer.setTracer(
        Tracer.make({
          span: (name, ...rest) => {
            names.push(name)
            return native.span(name, ...rest)
          },
          context: (f) => f()
        })
      )
    )
  )

/** One resting order on the sim venue through the server. */
const placeOne = Effect.gen(function* () {
  const token = yield* OwnerToken
  const market = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0].id as string
  const placed = yield* request("POST", "/trading/orders", {
    token,
    json: { market_id: market, side: "buy", type: "limit", amount: "1", price: "0.01" }
  })
  assert.strictEqual(placed.status, 201, placed.text)
})

describe("tracing off", () => {
  it.live("with no OTLP endpoint the server makes no span at all, where it otherwise makes one per request", () =>
    Effect.gen(function* () {
      const on: Array<string> = []
      yield* placeOne.pipe(Effect.provide(testServer().pipe(Layer.provide(recording(on)))))
      assert.isTrue(
        on.some((n) => n.startsWith("http.server")),
        on.join(", ")
      )
      const off: Array<string> = []
      yield* placeOne.pipe(
        Effect.provide(testServer().pipe(Layer.provide(tracingLayer({})), Layer.provide(recording(off))))
      )
      assert.deepStrictEqual(off, [])
    })
  )
})
