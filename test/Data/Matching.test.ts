import { assert, describe, it } from "@effect/vitest"
import { FetchHttpClient, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { join } from "node:path"
import { dataServeApp } from "../../src/Data/Run.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { makeNodeServer } from "../../src/Http/Server.ts"
import { makeLocalMatcher } from "../../src/Matching/Local.ts"
import { MatchingClient } from "../../src/Services/MatchingClient.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { generateVenueCatalogs } from "../../src/Venues/Sim/Catalog.ts"
import { servedVenuesLayer } from "../../src/Venues/Venues.ts"
import { call, keyOn, tempFolder } from "./Support.ts"

const SEED = 7

/** `data serve --venues sim --sim-venues 2 --sim-seed 7` on an ephemeral loopback port, with a key made on its store. */
const served = Effect.gen(function* () {
  const store = new DataStore(join(tempFolder(), "data.db"))
  yield* Effect.addFinalizer(() => Effect.sync(() => store.close()))
  const key = keyOn(store)
  const app = yield* dataServeApp(store, { venues: "sim", simSeed: SEED, simVenues: 2 })
  const context = yield* Layer.build(
    app.pipe(Layer.provideMerge(NodeHttpServer.layer(makeNodeServer, { host: "127.0.0.1", port: 0 })))
  )
  const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
  return { url: `http://127.0.0.1:${address.port}`, key }
})

/** The local matcher over the same venues, built apart from the host. */
const local = Effect.gen(function* () {
  const context = yield* Layer.build(servedVenuesLayer({ list: ["sim"], env: {}, seed: SEED, simVenues: 2 }))
  return makeLocalMatcher(Context.get(context, VenueGateway)).client
})

const hosted = (url: string, apiKey: string | undefined) =>
  Effect.provide(MatchingClient, MatchingClient.layerHosted({ url, apiKey }).pipe(Layer.provide(FetchHttpClient.layer)))

describe("data serve: the matching routes", () => {
  it.scopedLive("answer over HTTP what the local matcher answers, and refuse a request without a key", () =>
    Effect.gen(function* () {
      const { url, key } = yield* served
      const day = Math.floor(Date.now() / 86_400_000) * 86_400_000
      const [, sim2] = generateVenueCatalogs(SEED, day, 24, 2)
      const flipped = sim2!.find((s) => s.link!.flipped)!
      const anchor = `sim:${flipped.link!.key}`

      const remote = yield* hosted(url, key)
      const mine = yield* local
      const answer = yield* remote.match(anchor, undefined)
      assert.deepStrictEqual(answer, yield* mine.match(anchor, undefined))
      assert.deepStrictEqual(answer?.matched, {
        id: `sim2:${flipped.market.nativeId}`,
        venue: "sim2",
        side_map: { yes: "no", no: "yes" }
      })
      const event = yield* remote.event(anchor)
      assert.deepStrictEqual(event, yield* mine.event(anchor))
      assert.include(event?.events["sim2"] ?? [], `sim2:${flipped.market.nativeId}`)

      const path = `/match/market?id=${encodeURIComponent(anchor)}`
      const none = yield* Effect.promise(() => call(url, "GET", path))
      assert.strictEqual(none.status, 401)
      assert.strictEqual(none.body.error.code, "unauthorized")
      assert.include(none.body.error.message, "crossbook keys create")
      const wrong = yield* Effect.promise(() => call(url, "GET", path, { bearer: "not-a-key" }))
      assert.strictEqual(wrong.status, 401)
      const refused = yield* Effect.flip(hosted(url, "not-a-key").pipe(Effect.flatMap((c) => c.match(anchor))))
      assert.include(refused.reason, "401")
    })
  )
})
