import { assert, describe, it } from "@effect/vitest"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { MatchIndex } from "../../src/Matching/Matcher.ts"
import { MatchingClient } from "../../src/Services/MatchingClient.ts"

/** A stand-in for the hosted matcher on a loopback port: it holds one pair, stated from opposite sides. */
const hosted = Effect.acquireRelease(
  Effect.async<{ url: string; close: () => void; seen: Array<{ auth: string | undefined; url: string }> }>((resume) => {
    const seen: Array<{ auth: string | undefined; url: string }> = []
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push({ auth: req.headers.authorization, url: req.url ?? "" })
      const url = new URL(req.url ?? "/", "http://localhost")
      const id = url.searchParams.get("id")
      res.setHeader("content-type", "application/json")
      if (url.pathname !== "/match/market") return void res.writeHead(404).end("{}")
      if (id === "kalshi:FED-26DEC-T3.75") {
        return void res.end(
          JSON.stringify({
            anchor: id,
            event_id: "fed-2026-12",
            matched: { id: "polymarket:0xabc", venue: "polymarket", side_map: { yes: "no", no: "yes" } }
          })
        )
      }
      if (id === "kalshi:LONELY") return void res.end(JSON.stringify({ anchor: id, event_id: "lonely", matched: null }))
      if (id === "kalshi:BUSY") return void res.writeHead(503).end("{}")
      res.writeHead(404).end(JSON.stringify({ error: "unknown market" }))
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, close: () => server.close(), seen }))
    })
  }),
  (s) => Effect.sync(() => s.close())
)

describe("MatchingClient", () => {
  it.scoped("the hosted client sends the key, reads a match, a null match, a 404 and a failure", () =>
    Effect.gen(function* () {
      const server = yield* hosted
      const client = yield* Effect.provide(
        MatchingClient,
        MatchingClient.layerHosted({ url: server.url, apiKey: "key-123" }).pipe(Layer.provide(FetchHttpClient.layer))
      )
      const found = yield* client.match("kalshi:FED-26DEC-T3.75")
      assert.deepStrictEqual(found?.matched, {
        id: "polymarket:0xabc",
        venue: "polymarket",
        side_map: { yes: "no", no: "yes" }
      })
      assert.strictEqual(server.seen[0]!.auth, "Bearer key-123")
      assert.include(server.seen[0]!.url, "id=kalshi%3AFED-26DEC-T3.75")
      const lonely = yield* client.match("kalshi:LONELY")
      assert.isNull(lonely?.matched)
      assert.isUndefined(yield* client.match("kalshi:NOPE"))
      const busy = yield* Effect.flip(client.match("kalshi:BUSY"))
      assert.isTrue(busy.retryable)
      yield* client.match("kalshi:LONELY", "polymarket")
      assert.include(server.seen[server.seen.length - 1]!.url, "venue=polymarket")
    })
  )

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
