import { assert, describe, it } from "@effect/vitest"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Effect, Layer, Tracer } from "effect"
import { currentTracing, makeInstruments, observeVenueRequest, Telemetry } from "../../src/Telemetry/Telemetry.ts"
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

describe("venue requests", () => {
  it.effect("are measured and, traced, carry no trace header to the venue", () =>
    Effect.gen(function* () {
      const sent: Array<Record<string, string>> = []
      const client = HttpClient.make((request) =>
        Effect.sync(() => {
          sent.push({ ...request.headers })
          return HttpClientResponse.fromWeb(request, new Response("{}", { status: 429 }))
        })
      )
      const m = makeInstruments()
      const call = client.execute(HttpClientRequest.post("http://venue.test/portfolio/events/orders/ab12"))
      // A traced call without the wrapper would tell the venue its trace id; with it, it does not.
      yield* call.pipe(Effect.locally(currentTracing, true), Effect.withSpan("outer"))
      yield* call.pipe(
        observeVenueRequest("kalshi", "POST", "/portfolio/events/orders/ab12"),
        Effect.locally(currentTracing, true),
        Effect.provideService(Telemetry, m),
        Effect.withSpan("outer")
      )
      assert.isDefined(sent[0]!["traceparent"])
      assert.isUndefined(sent[1]!["traceparent"])
      const route = "POST /portfolio/events/orders/{id}"
      assert.strictEqual(m.venueRequest.count(["kalshi", route]), 1)
      assert.strictEqual(m.venueRequests.get(["kalshi", route, "429"]), 1)
      assert.strictEqual(m.venueRateLimited.get(["kalshi", route]), 1)
    })
  )
})
