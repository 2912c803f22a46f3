import { assert, describe, it } from "@effect/vitest"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Logger, Queue } from "effect"
import { authLayer } from "../../src/Assembly.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { HttpServeLive } from "../../src/Http/Server.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { type Venue, VenueError, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { Buckets } from "../../src/Trading/Buckets.ts"
import { REGISTRY } from "../../src/Engine/Registry.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import { Journal } from "../../src/Trading/Journal.ts"
import { SIM_CAPABILITIES } from "../../src/Venues/SimVenue.ts"
import { get } from "./TestServer.ts"

const market = {
  venue: "broken",
  nativeId: "M1",
  eventId: "E1",
  title: "A market whose venue misbehaves",
  subtitle: "",
  category: "test",
  status: "open" as const,
  openTime: 0,
  closeTime: 1,
  tick: F.of("0.01"),
  lot: F.of("1"),
  result: null
}

/** A venue with a bug in its book, one that times out on trades, and one that is down for markets. */
const broken: Venue = {
  info: { id: "broken", name: "Broken", book_model: "yes_book", has: { ...SIM_CAPABILITIES, fetch_positions: false } },
  accounts: ["default"],
  markets: Effect.fail(new VenueError({ venue: "broken", kind: "unavailable", reason: "upstream 503" })),
  market: (id) => Effect.succeed(id === "M1" ? market : undefined),
  book: () => Effect.die(new Error("bug: book index out of range")),
  trades: () => Effect.fail(new VenueError({ venue: "broken", kind: "timeout", reason: "no answer in 10s" })),
  placeOrder: () => Effect.die("unused"),
  cancelOrder: () => Effect.die("unused"),
  amendOrder: () => Effect.die("unused"),
  orderByClientId: () => Effect.die("unused"),
  subscribe: Queue.unbounded()
}

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message, cause }) => logged.push(`${String(message)} ${String(cause)}`))
)

const Services = Layer.provideMerge(
  Layer.merge(Engine.layer(REGISTRY), Buckets.layer),
  Layer.provideMerge(
    Desk.layer({ startingCash: F.of("100") }),
    Layer.provideMerge(
      Journal.layer,
      Layer.mergeAll(Layer.succeed(VenueGateway, VenueGateway.fromVenues([broken])), OrderStore.layerMemory)
    )
  )
)

const Server = HttpServeLive.pipe(
  Layer.provide(Services),
  Layer.provide(authLayer(":memory:")),
  Layer.provide(captureLogs),
  Layer.provideMerge(NodeHttpServer.layerTest)
)

describe("failures inside the server", () => {
  it.layer(Server)((it) => {
    it.effect("a defect is 500 internal_error, logged with its cause, no stack trace in the body", () =>
      Effect.gen(function* () {
        const res = yield* get("/venues/broken/markets/M1/book")
        assert.strictEqual(res.status, 500)
        assert.deepStrictEqual(res.body, {
          error: {
            code: "internal_error",
            message: "internal error; the cause is in the server log",
            details: { venue: null, retryable: false }
          }
        })
        assert.notInclude(res.text, "index out of range")
        assert.isTrue(logged.some((line) => line.includes("bug: book index out of range")))
      })
    )

    it.effect("a venue that is down is 502 venue_error, retryable, naming the venue", () =>
      Effect.gen(function* () {
        const res = yield* get("/venues/broken/markets")
        assert.strictEqual(res.status, 502)
        assert.strictEqual(res.body.error.code, "venue_error")
        assert.strictEqual(res.body.error.details.venue, "broken")
        assert.isTrue(res.body.error.details.retryable)
      })
    )

    it.effect("a venue that does not answer is 504 venue_timeout, retryable", () =>
      Effect.gen(function* () {
        const res = yield* get("/venues/broken/markets/M1/trades")
        assert.strictEqual(res.status, 504)
        assert.strictEqual(res.body.error.code, "venue_timeout")
        assert.isTrue(res.body.error.details.retryable)
      })
    )
  })
})
