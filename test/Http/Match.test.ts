// GET /venues/{venue}/markets/{id}/match through real HTTP, on a server running the sim as two venues.
import { assert, describe, it, layer } from "@effect/vitest"
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { venuesLayer } from "../../src/Assembly.ts"
import { openApiDocument } from "../../src/Http/Api.ts"
import { matchingRouter } from "../../src/Http/Matching.ts"
import { makeLocalMatcher } from "../../src/Matching/Local.ts"
import { MatchingClient } from "../../src/Services/MatchingClient.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { get, OwnerToken, request, TEST_SEED, testServer } from "./TestServer.ts"

const spec = openApiDocument() as any

/** Every market of a venue, all statuses. */
const marketsOf = (venue: string) =>
  Effect.map(get(`/venues/${venue}/markets?status=all&limit=1000`), (res) => res.body.data as Array<any>)

/** sim2 names a market it lists the other way round `<sim id, lower case>-no`, else `<sim id, lower case>`. */
const twinOf = (sim2NativeId: string) => ({
  sim: `sim:${sim2NativeId.replace(/-no$/, "").toUpperCase()}`,
  flipped: sim2NativeId.endsWith("-no")
})

const SAME = { yes: "yes", no: "no" }
const FLIPPED = { yes: "no", no: "yes" }

describe("the match route on a server with --sim-venues 2 (local matcher)", () => {
  it.layer(testServer({ simVenues: 2 }))((it) => {
    it.effect("GET /venues lists sim and sim2; sim2 lists part of sim's propositions in its own words", () =>
      Effect.gen(function* () {
        const venues = yield* get("/venues")
        assert.deepStrictEqual(
          venues.body.data.map((v: any) => v.id),
          ["sim", "sim2"]
        )
        for (const v of venues.body.data) assert.notProperty(v.has, "match_market")
        const sim = yield* marketsOf("sim")
        const sim2 = yield* marketsOf("sim2")
        assert.isAbove(sim2.length, 4)
        assert.isBelow(sim2.length, sim.length)
        for (const m of sim2) {
          const base = sim.find((s) => s.id === twinOf(m.native_id).sim)
          assert.isDefined(base, m.id)
          assert.notStrictEqual(m.title, base.title)
        }
      })
    )

    it.effect(
      "each sim market listed on sim2 matches its twin, with the side_map flipped where it is stated the other way round",
      () =>
        Effect.gen(function* () {
          const sim2 = yield* marketsOf("sim2")
          const flips = sim2.filter((m) => twinOf(m.native_id).flipped)
          assert.isAbove(flips.length, 0, "the seed gives at least one flipped twin")
          assert.isBelow(flips.length, sim2.length, "and at least one stated the same way")
          for (const m of sim2) {
            const { sim, flipped } = twinOf(m.native_id)
            const res = yield* get(`/venues/sim/markets/${encodeURIComponent(sim)}/match?venue=sim2`)
            assert.strictEqual(res.status, 200, res.text)
            assert.strictEqual(res.body.anchor, sim)
            assert.isString(res.body.event_id)
            assert.deepStrictEqual(res.body.matched, { id: m.id, venue: "sim2", side_map: flipped ? FLIPPED : SAME })
            assert.strictEqual(res.body.verdict, "matched")
            assert.property(res.body, "explain")
            assert.includeMembers(Object.keys(res.body.explain), ["anchor", "matched", "rules"])
          }
          // the bare native id answers the same as the full one
          const { sim } = twinOf(sim2[0]!.native_id)
          const bare = yield* get(`/venues/sim/markets/${encodeURIComponent(sim.slice(4))}/match?venue=sim2`)
          const full = yield* get(`/venues/sim/markets/${encodeURIComponent(sim)}/match?venue=sim2`)
          assert.deepStrictEqual(bare.body, full.body)
        })
    )

    it.effect("a market no other venue lists answers matched: null; a flipped twin matches back flipped", () =>
      Effect.gen(function* () {
        const sim = yield* marketsOf("sim")
        const sim2 = yield* marketsOf("sim2")
        const listed = new Set(sim2.map((m) => twinOf(m.native_id).sim))
        const crypto = sim.find((m) => m.category === "Crypto" && !listed.has(m.id))!
        const none = yield* get(`/venues/sim/markets/${encodeURIComponent(crypto.id)}/match`)
        assert.strictEqual(none.status, 200)
        assert.isNull(none.body.matched)
        assert.isString(none.body.explain.reason)
        // a threshold twin stated the other way round matches back to sim, flipped
        const flipped = sim2.find((m) => twinOf(m.native_id).flipped && m.category !== "Sports")!
        const back = yield* get(`/venues/sim2/markets/${encodeURIComponent(flipped.id)}/match`)
        assert.deepStrictEqual(back.body.matched, {
          id: twinOf(flipped.native_id).sim,
          venue: "sim",
          side_map: FLIPPED
        })
        // asked for a venue with nothing like it
        const elsewhere = yield* get(`/venues/sim2/markets/${encodeURIComponent(flipped.id)}/match?venue=sim2`)
        assert.isNull(elsewhere.body.matched)
      })
    )

    it.effect("the owner trades on sim2:default, paying sim2's own taker fee", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const market = (yield* marketsOf("sim2")).find((m) => m.status === "open" && m.best_ask !== null)!
        const book = (yield* get(`/venues/sim2/markets/${encodeURIComponent(market.id)}/book`)).body
        const ask = book.asks[0]
        const res = yield* request("POST", "/trading/orders", {
          token,
          json: {
            market_id: market.id,
            account: "sim2:default",
            side: "buy",
            type: "limit",
            time_in_force: "ioc",
            amount: "1",
            price: ask.price
          }
        })
        assert.strictEqual(res.status, 201, res.text)
        assert.strictEqual(res.body.filled, "1")
        const p = F.of(ask.price)
        const fee = F.roundTo(F.mul(F.of("0.04"), F.mul(p, F.sub(F.ONE, p)), "up"), F.of("0.01"), "up")
        assert.strictEqual(res.body.fee, F.format(fee))
        const balances = yield* request("GET", "/trading/balances?account=sim2:default", { token })
        assert.strictEqual(balances.status, 200, balances.text)
      })
    )

    it.effect(
      "an unknown market is 404 market_not_found, an unknown venue 400, both in the error body and documented",
      () =>
        Effect.gen(function* () {
          const missing = yield* get("/venues/sim/markets/sim:NO-SUCH-MARKET/match")
          assert.strictEqual(missing.status, 404)
          assert.strictEqual(missing.body.error.code, "market_not_found")
          const venue = yield* get("/venues/nowhere/markets/x/match")
          assert.strictEqual(venue.status, 400)
          assert.strictEqual(venue.body.error.code, "unknown_venue")
          const badTarget = yield* get(`/venues/sim/markets/${encodeURIComponent("sim:NO")}/match?venue=Not%20One`)
          assert.strictEqual(badTarget.status, 404)
          const known = (yield* marketsOf("sim"))[0]!
          const malformed = yield* get(`/venues/sim/markets/${encodeURIComponent(known.id)}/match?venue=Not%20One`)
          assert.strictEqual(malformed.status, 400, malformed.text)
          assert.strictEqual(malformed.body.error.code, "validation_error")
          const operation = spec.paths["/venues/{venue}/markets/{market_id}/match"]?.get
          assert.isDefined(operation)
          assert.includeMembers(Object.keys(operation.responses), ["200", "400", "404"])
          assert.deepStrictEqual(operation.security ?? [], [], "public: no token")
        })
    )
  })
})

/**
 * A matching host on a real port serving the protocol over the local matcher of its own two sim venues (the same
 * seed, so the same catalogs as the trading server's), and the trading server's hosted client pointed at it.
 */
const hostedMatching = Layer.unwrapScoped(
  Effect.gen(function* () {
    const host = yield* Layer.build(
      HttpServer.serve(matchingRouter).pipe(
        Layer.provide(
          Layer.effect(
            MatchingClient,
            Effect.map(VenueGateway, (gateway) => makeLocalMatcher(gateway).client)
          )
        ),
        Layer.provide(venuesLayer({ seed: TEST_SEED, simVenues: 2 })),
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      )
    )
    const port = (Context.get(host, HttpServer.HttpServer).address as HttpServer.TcpAddress).port
    return MatchingClient.layerHosted({ url: `http://127.0.0.1:${port}`, apiKey: "k" }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
  })
).pipe(Layer.orDie)

describe("the match route with SERVICE_MATCHING_URL (hosted client)", () => {
  layer(testServer({ simVenues: 2, matching: hostedMatching }), { timeout: 30_000, excludeTestServices: true })(
    (it) => {
      // the hosted client paces its requests on the Clock: this server runs on the real one
      it.effect("answers the same body as the local matcher over the same venues", () =>
        Effect.gen(function* () {
          const gateway = yield* VenueGateway
          const local = makeLocalMatcher(gateway).client
          const sim2 = yield* marketsOf("sim2")
          const flipped = sim2.find((m) => twinOf(m.native_id).flipped)!
          const straight = sim2.find((m) => !twinOf(m.native_id).flipped)!
          for (const m of [flipped, straight]) {
            const id = twinOf(m.native_id).sim
            const res = yield* get(`/venues/sim/markets/${encodeURIComponent(id)}/match?venue=sim2`)
            assert.strictEqual(res.status, 200, res.text)
            assert.strictEqual(res.body.matched.id, m.id)
            assert.deepStrictEqual(res.body, JSON.parse(JSON.stringify(yield* local.match(id, "sim2"))))
          }
          const missing = yield* get("/venues/sim/markets/sim:NO-SUCH-MARKET/match")
          assert.strictEqual(missing.status, 404)
        })
      )
    }
  )
})

/** A matcher whose every answer is uncertain: a candidate on sim2 and the deadline that differs. */
const uncertainMatching = Layer.succeed(MatchingClient, {
  match: (id) =>
    Effect.succeed({
      anchor: id,
      event_id: "e",
      verdict: "uncertain" as const,
      matched: null,
      candidate: { id: "sim2:x", venue: "sim2", side_map: { yes: "yes" as const, no: "no" as const }, score: 0.8 },
      reasons: [
        { dimension: "time", status: "differs" as const, reason: "time: the rules' deadlines are 07-01 and 01-01" }
      ]
    }),
  event: () => Effect.succeed(undefined)
})

describe("the match route shows an uncertain answer with its candidate and reasons", () => {
  it.effect("verdict uncertain, matched null, candidate and reasons apart", () =>
    Effect.gen(function* () {
      const sim = yield* marketsOf("sim")
      const res = yield* get(`/venues/sim/markets/${encodeURIComponent(sim[0].id)}/match`)
      assert.strictEqual(res.status, 200, res.text)
      assert.strictEqual(res.body.verdict, "uncertain")
      assert.isNull(res.body.matched)
      assert.deepStrictEqual(res.body.candidate, {
        id: "sim2:x",
        venue: "sim2",
        side_map: SAME,
        score: 0.8
      })
      assert.deepStrictEqual(
        res.body.reasons.map((r: any) => [r.dimension, r.status]),
        [["time", "differs"]]
      )
    }).pipe(Effect.provide(testServer({ simVenues: 2, matching: uncertainMatching })))
  )
})
