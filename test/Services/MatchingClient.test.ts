import { assert, describe, it } from "@effect/vitest"
import { FetchHttpClient, HttpMiddleware, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Clock, Context, Duration, Effect, Fiber, Layer, TestClock } from "effect"
import { createServer } from "node:http"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ApiError } from "../../src/Domain/Errors.ts"
import { listingOfMarket } from "../../src/Matching/Eval.ts"
import { matchingRouter } from "../../src/Http/Matching.ts"
import { MatchIndex } from "../../src/Matching/Matcher.ts"
import {
  type HostedOptions,
  makePacer,
  MatchingClient,
  MatchingError,
  serviceApiKey
} from "../../src/Services/MatchingClient.ts"
import { generateVenueCatalogs, simVenueId } from "../../src/Venues/Sim/Catalog.ts"

const START = Date.UTC(2026, 11, 1)
const KEY = "key-123"

/** The catalogs of `sim` and `sim2` for seed 7, and an index over both. */
const catalogs = generateVenueCatalogs(7, START, 24, 2)
const simIndex = () => {
  const index = new MatchIndex()
  catalogs.forEach((c, i) =>
    index.setCatalog(
      simVenueId(i + 1),
      c.map((s) => listingOfMarket(s.market))
    )
  )
  return index
}
const flippedTwin = catalogs[1]!.find((s) => s.link!.flipped)!
const straightTwin = catalogs[1]!.find((s) => !s.link!.flipped)!
/** A sim market no other venue lists (a crypto price). */
const lonely = catalogs[0]!.find((s) => s.link === undefined && s.market.status === "open")!

interface Seen {
  readonly auth: string | undefined
  readonly url: string
  readonly at: number
}

/**
 * The matching protocol served on a loopback port over `client`, behind a bearer key check (our error body on a
 * 401), recording each request it receives.
 */
const host = (client: MatchingClient["Type"]) =>
  Effect.gen(function* () {
    const seen: Array<Seen> = []
    const guard = HttpMiddleware.make((app) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        seen.push({ auth: request.headers["authorization"], url: request.url, at: Date.now() })
        if (request.headers["authorization"] !== `Bearer ${KEY}`)
          return HttpServerResponse.unsafeJson(ApiError.unauthorized("unknown API key").body, { status: 401 })
        return yield* app
      })
    )
    const context = yield* Layer.build(
      HttpServer.serve(matchingRouter, guard).pipe(
        Layer.provide(Layer.succeed(MatchingClient, client)),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
    return { url: `http://127.0.0.1:${address.port}`, seen }
  })

const hosted = (options: HostedOptions) =>
  Effect.provide(MatchingClient, MatchingClient.layerHosted(options).pipe(Layer.provide(FetchHttpClient.layer)))

const localClient = () => Effect.provide(MatchingClient, MatchingClient.layerMatcher(simIndex()))

describe("the hosted MatchingClient against the matching protocol on a real port", () => {
  it.scopedLive("a hit, flipped or straight, sent with the key", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const client = yield* hosted({ url: server.url, apiKey: KEY })
      const flipped = yield* client.match(`sim:${flippedTwin.link!.key}`, "sim2")
      assert.deepStrictEqual(flipped?.matched, {
        id: `sim2:${flippedTwin.market.nativeId}`,
        venue: "sim2",
        side_map: { yes: "no", no: "yes" }
      })
      const straight = yield* client.match(`sim:${straightTwin.link!.key}`)
      assert.deepStrictEqual(straight?.matched?.side_map, { yes: "yes", no: "no" })
      assert.strictEqual(server.seen[0]!.auth, `Bearer ${KEY}`)
      assert.include(server.seen[0]!.url, `id=sim%3A${encodeURIComponent(flippedTwin.link!.key)}`)
      assert.include(server.seen[0]!.url, "venue=sim2")
      // the same answer as the matcher behind the service gives, explanation included
      const direct = yield* (yield* localClient()).match(`sim:${flippedTwin.link!.key}`, "sim2")
      assert.deepStrictEqual(JSON.parse(JSON.stringify(direct)), flipped)
    })
  )

  it.scopedLive("matched: null for a market no other venue lists; an event's matches by venue", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const client = yield* hosted({ url: server.url, apiKey: KEY })
      const none = yield* client.match(`sim:${lonely.market.nativeId}`)
      assert.strictEqual(none?.anchor, `sim:${lonely.market.nativeId}`)
      assert.isNull(none?.matched)
      const event = yield* client.event(`sim:${flippedTwin.link!.key}`)
      assert.include(event?.events["sim2"] ?? [], `sim2:${flippedTwin.market.nativeId}`)
      assert.include(event?.events["sim"] ?? [], `sim:${flippedTwin.link!.key}`)
    })
  )

  it.scopedLive("a 404 with the service's error body is no such market; without it, no service at that URL", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const client = yield* hosted({ url: server.url, apiKey: KEY })
      assert.isUndefined(yield* client.match("sim:NO-SUCH-MARKET"))
      assert.isUndefined(yield* client.event("sim:NO-SUCH-EVENT"))
      const elsewhere = yield* hosted({ url: `${server.url}/not-here/`, apiKey: KEY })
      const error = yield* Effect.flip(elsewhere.match(`sim:${lonely.market.nativeId}`))
      assert.include(error.reason, `no matching service at ${server.url}/not-here`)
      assert.include(error.reason, "SERVICE_MATCHING_URL")
      assert.isFalse(error.retryable)
    })
  )

  it.scopedLive("a 401 says to log in and create a key, or to set SERVICE_API_KEY, and is not retried", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const wrong = yield* Effect.flip((yield* hosted({ url: server.url, apiKey: "wrong" })).match("sim:X"))
      assert.include(wrong.reason, "refused the API key (401)")
      assert.include(wrong.reason, "crossbook login")
      assert.include(wrong.reason, "crossbook keys create")
      assert.include(wrong.reason, "SERVICE_API_KEY")
      assert.strictEqual(server.seen.length, 1)
      const none = yield* Effect.flip((yield* hosted({ url: server.url, apiKey: undefined })).match("sim:X"))
      assert.include(none.reason, "needs an API key")
      assert.isUndefined(server.seen[1]!.auth)
    })
  )

  it.scopedLive("ids are checked before any request is made", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const client = yield* hosted({ url: server.url, apiKey: KEY })
      for (const bad of ["no-colon", ":native", "sim:", "sim:has space"]) {
        const error = yield* Effect.flip(client.match(bad))
        assert.isTrue(error.invalid, bad)
      }
      assert.isTrue((yield* Effect.flip(client.match("sim:X", "Not A Venue"))).invalid)
      assert.isTrue((yield* Effect.flip(client.event("nope"))).invalid)
      assert.strictEqual(server.seen.length, 0)
    })
  )

  it.scopedLive("a 5xx is retried a limited number of times; a timeout is retryable", () =>
    Effect.gen(function* () {
      let calls = 0
      const flaky: MatchingClient["Type"] = {
        match: (id) =>
          ++calls <= 2
            ? Effect.fail(new MatchingError({ reason: "catalog loading", retryable: true }))
            : Effect.succeed({ anchor: id, event_id: "e", matched: null }),
        event: () => Effect.succeed(undefined)
      }
      const server = yield* host(flaky)
      const client = yield* hosted({ url: server.url, apiKey: KEY, retries: 2 })
      assert.isNull((yield* client.match("sim:A"))?.matched)
      assert.strictEqual(server.seen.length, 3)
      calls = -10
      const stubborn = yield* hosted({ url: server.url, apiKey: KEY, retries: 1 })
      const error = yield* Effect.flip(stubborn.match("sim:A"))
      assert.isTrue(error.retryable)
      assert.include(error.reason, "answered 502")
      assert.strictEqual(server.seen.length, 5)

      const slow: MatchingClient["Type"] = {
        match: (id) => Effect.as(Effect.sleep("5 seconds"), { anchor: id, event_id: "e", matched: null }),
        event: () => Effect.succeed(undefined)
      }
      const slowServer = yield* host(slow)
      const impatient = yield* hosted({ url: slowServer.url, apiKey: KEY, timeout: "150 millis", retries: 0 })
      const timedOut = yield* Effect.flip(impatient.match("sim:A"))
      assert.isTrue(timedOut.retryable)
      assert.include(timedOut.reason, "did not answer within")
    })
  )

  it.scopedLive("requests are paced: never more than perSecond start in a second", () =>
    Effect.gen(function* () {
      const server = yield* host(yield* localClient())
      const client = yield* hosted({ url: server.url, apiKey: KEY, perSecond: 10 })
      // one request first, so that the paced ones do not differ by a first connection's set-up
      yield* client.match(`sim:${lonely.market.nativeId}`)
      yield* Effect.forEach([1, 2, 3, 4], () => client.match(`sim:${lonely.market.nativeId}`), {
        concurrency: "unbounded"
      })
      const times = server.seen
        .slice(1)
        .map((s) => s.at)
        .sort((a, b) => a - b)
      assert.strictEqual(times.length, 4)
      // four requests at 10 a second: the last starts 3 gaps (300 ms) after the first, less the network's jitter
      assert.isAtLeast(times[3]! - times[0]!, 250)
    })
  )
})

describe("the pacer", () => {
  it.effect("gives each call the next free slot, 1/perSecond apart, on the Clock", () =>
    Effect.gen(function* () {
      const pace = makePacer(10)
      const starts: Array<number> = []
      const fiber = yield* Effect.fork(
        Effect.forEach(
          [1, 2, 3, 4],
          () =>
            Effect.zipRight(
              pace,
              Effect.flatMap(Clock.currentTimeMillis, (t) => Effect.sync(() => starts.push(t)))
            ),
          {
            concurrency: "unbounded"
          }
        )
      )
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Fiber.join(fiber)
      assert.deepStrictEqual(starts, [0, 100, 200, 300])
      // after a quiet spell the next call goes at once
      yield* TestClock.adjust(Duration.seconds(5))
      yield* pace
      assert.strictEqual(yield* Clock.currentTimeMillis, 6000)
    })
  )
})

describe("the API key", () => {
  it("is SERVICE_API_KEY, else the one saved in <home>/api-key, else none", () => {
    const home = mkdtempSync(join(tmpdir(), "crossbook-key-"))
    assert.isUndefined(serviceApiKey({}, home))
    writeFileSync(join(home, "api-key"), "saved-key\n")
    assert.strictEqual(serviceApiKey({}, home), "saved-key")
    assert.strictEqual(serviceApiKey({ SERVICE_API_KEY: "env-key" }, home), "env-key")
    writeFileSync(join(home, "api-key"), "")
    assert.isUndefined(serviceApiKey({}, home))
  })
})

describe("MatchingClient", () => {
  it.effect("the local table matches both ways and honours a target venue", () =>
    Effect.gen(function* () {
      const client = yield* Effect.provide(
        MatchingClient,
        MatchingClient.layerLocal([{ a: "kalshi:X", b: "polymarket:Y", eventId: "e1", inverted: false }])
      )
      assert.deepStrictEqual((yield* client.match("polymarket:Y"))?.matched, {
        id: "kalshi:X",
        venue: "kalshi",
        side_map: { yes: "yes", no: "no" }
      })
      assert.isNull((yield* client.match("kalshi:X", "sim"))?.matched)
      assert.isUndefined(yield* client.match("kalshi:Z"))
    })
  )

  it.effect("the local matcher answers from its index, explains itself, and sees a refreshed catalog", () =>
    Effect.gen(function* () {
      const index = new MatchIndex()
      index.setCatalog("kalshi", [
        { venue: "kalshi", nativeId: "U3-T4.1", title: "Will the unemployment rate be above 4.1% in March 2026?" }
      ])
      index.setCatalog("polymarket", [
        { venue: "polymarket", nativeId: "0x1", title: "Unemployment rate 4.1% or less in March 2026?" }
      ])
      const client = yield* Effect.provide(MatchingClient, MatchingClient.layerMatcher(index))
      const found = yield* client.match("kalshi:U3-T4.1")
      assert.deepStrictEqual(found?.matched, {
        id: "polymarket:0x1",
        venue: "polymarket",
        side_map: { yes: "no", no: "yes" }
      })
      const explain = found?.explain as { rules: { verdict: string }; matched: { quantity: { comparator: string } } }
      assert.strictEqual(explain.matched.quantity.comparator, "le")
      assert.strictEqual(explain.rules.verdict, "unknown")
      assert.isNull((yield* client.match("kalshi:U3-T4.1", "sim"))?.matched ?? null)
      assert.isUndefined(yield* client.match("kalshi:NOPE"))
      // a refresh replaces the venue's catalog: the old market is gone, the new one answers
      index.setCatalog("polymarket", [
        { venue: "polymarket", nativeId: "0x2", title: "Unemployment rate greater than 4.1% in March 2026?" }
      ])
      assert.deepStrictEqual((yield* client.match("kalshi:U3-T4.1"))?.matched, {
        id: "polymarket:0x2",
        venue: "polymarket",
        side_map: { yes: "yes", no: "no" }
      })
      assert.isUndefined(yield* client.match("polymarket:0x1"))
    })
  )
})
