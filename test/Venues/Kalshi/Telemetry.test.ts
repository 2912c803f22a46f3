/** Traces and metrics of a server on the fake Kalshi: one order is one trace, and /metrics counts what happened. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tracingLayer } from "../../../src/Telemetry/Tracing.ts"
import { request } from "../../Http/TestServer.ts"
import { parsePrometheus, sampleValue } from "../../Telemetry/Prometheus.ts"
import { eventually, Owner } from "../ServeVenues.ts"
import type { FakeMarketSpec } from "./Fake.ts"
import { Exchange, exchangeLayer, PEM, placeOn, servedKalshi, tradingEnv, TWO_LEVELS } from "./Helpers.ts"

const MARKETS: ReadonlyArray<FakeMarketSpec> = [TWO_LEVELS]
const A = "kalshi:KXTEST-26-A"
const CREATE = "POST /portfolio/events/orders"

/** A span as OTLP/JSON carries it. */
interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
}

/** An OTLP/HTTP collector in the test process: every span posted to /v1/traces as JSON, and the services named. */
class Collector extends Context.Tag("test/Collector")<
  Collector,
  { readonly url: string; readonly spans: Array<OtlpSpan>; readonly services: Set<string> }
>() {}

const collectorLayer = Layer.scoped(
  Collector,
  Effect.acquireRelease(
    Effect.async<{ url: string; spans: Array<OtlpSpan>; services: Set<string>; close: () => void }>((resume) => {
      const spans: Array<OtlpSpan> = []
      const services = new Set<string>()
      const server = createServer((req, res) => {
        let body = ""
        req.on("data", (c) => (body += c))
        req.on("end", () => {
          if (req.method === "POST" && req.url === "/v1/traces" && /json/.test(req.headers["content-type"] ?? "")) {
            const data = JSON.parse(body) as {
              resourceSpans: Array<{
                resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }
                scopeSpans: Array<{ spans: Array<OtlpSpan> }>
              }>
            }
            for (const rs of data.resourceSpans) {
              const name = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue
              if (name !== undefined) services.add(name)
              for (const ss of rs.scopeSpans) spans.push(...ss.spans)
            }
            res.writeHead(200, { "content-type": "application/json" }).end("{}")
          } else res.writeHead(400).end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as AddressInfo).port
        resume(Effect.succeed({ url: `http://127.0.0.1:${port}`, spans, services, close: () => server.close() }))
      })
    }),
    (c) => Effect.sync(() => c.close())
  )
)

/** The server as `serve` builds it on the fake, traced to the collector (OTLP/JSON, exported every 100 ms). */
const tracedServer = servedKalshi({ env: (x) => tradingEnv(x, 1500), sim: { seed: 7, markets: 2 } }).pipe(
  Layer.provide(
    Layer.unwrapEffect(
      Effect.map(Collector, (c) =>
        tracingLayer({
          OTEL_EXPORTER_OTLP_ENDPOINT: c.url,
          OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
          OTEL_BSP_SCHEDULE_DELAY: "100",
          OTEL_SERVICE_NAME: "crossbook-test"
        })
      )
    )
  ),
  Layer.provideMerge(exchangeLayer(MARKETS)),
  Layer.provideMerge(collectorLayer)
) as Layer.Layer<Owner | Collector | Exchange | any>

const place = placeOn(A)

const scrape = Effect.gen(function* () {
  const r = yield* request("GET", "/metrics", { token: yield* Owner })
  assert.strictEqual(r.status, 200, r.text)
  assert.match(r.headers["content-type"] ?? "", /^text\/plain; version=0\.0\.4/)
  return parsePrometheus(r.text)
})

const attr = (span: OtlpSpan, key: string): unknown => {
  const v = span.attributes.find((a) => a.key === key)?.value
  return v === undefined ? undefined : (v["stringValue"] ?? v["intValue"] ?? v["boolValue"] ?? v["doubleValue"])
}

describe("traces and metrics on the fake Kalshi", () => {
  it.live(
    "one order is one trace: the HTTP request, the desk, the venue request and the journal commit",
    () =>
      Effect.gen(function* () {
        const collector = yield* Collector
        const placed = yield* place({ side: "buy", type: "limit", amount: "2", price: "0.30" })
        assert.strictEqual(placed.status, 201, placed.text)
        const venueSpan = yield* eventually(
          Effect.sync(() => collector.spans.find((s) => s.name === `venue ${CREATE}`)),
          (s) => s !== undefined
        )
        const trace = collector.spans.filter((s) => s.traceId === venueSpan!.traceId)
        const byId = new Map(trace.map((s) => [s.spanId, s]))
        const ancestors = (span: OtlpSpan): Array<OtlpSpan> => {
          const out: Array<OtlpSpan> = []
          for (let p = byId.get(span.parentSpanId ?? ""); p !== undefined; p = byId.get(p.parentSpanId ?? "")) {
            out.push(p)
          }
          return out
        }
        // the venue request sits under the desk's placement, which sits under the server's span of the request
        const chain = ancestors(venueSpan!)
        const desk = chain.find((s) => s.name === "desk.place")
        assert.isDefined(desk, `no desk.place above the venue span: ${chain.map((s) => s.name).join(" < ")}`)
        const server = chain.find((s) => s.kind === 2)
        assert.isDefined(server, "no server span above the venue span")
        assert.strictEqual(attr(server!, "http.request.method"), "POST")
        assert.strictEqual(attr(server!, "http.route"), "/trading/orders")
        assert.strictEqual(Number(attr(server!, "http.response.status_code")), 201)
        assert.isTrue(ancestors(desk!).includes(server!))
        assert.strictEqual(attr(desk!, "order.market_id"), A)
        // the venue span: venue, route, status, retry
        assert.strictEqual(venueSpan!.kind, 3)
        assert.strictEqual(attr(venueSpan!, "venue"), "kalshi")
        assert.strictEqual(attr(venueSpan!, "route"), CREATE)
        assert.strictEqual(Number(attr(venueSpan!, "http.response.status_code")), 201)
        assert.strictEqual(Number(attr(venueSpan!, "retry")), 0)
        // the journal's commits of the placement are in the same trace, under the desk's span
        const commits = trace.filter((s) => s.name === "journal.commit")
        assert.isAbove(commits.length, 0)
        for (const c of commits) assert.isTrue(ancestors(c).includes(desk!))
        assert.isTrue(collector.services.has("crossbook-test"))
        // no span of the venue's HTTP client (its signed headers), no secret in any span
        const token = yield* Owner
        const leaked = yield* request("GET", `/trading/me?key=${token}`)
        assert.strictEqual(leaked.status, 401, leaked.text)
        yield* Effect.sleep("300 millis")
        // (the test's own client, calling the server, makes client spans of its own: they are left out)
        const kalshiUrl = (yield* Exchange).apiUrl
        const clientSpans = collector.spans.filter((s) => s.name.startsWith("http.client"))
        assert.isFalse(clientSpans.some((s) => String(attr(s, "url.full")).startsWith(kalshiUrl)))
        const serverSide = collector.spans.filter((s) => !s.name.startsWith("http.client"))
        assert.isFalse(serverSide.some((s) => s.kind === 2 && attr(s, "url.path") === "/trading/me"))
        assert.notInclude(JSON.stringify(serverSide), token)
        assert.notInclude(JSON.stringify(collector.spans), PEM.slice(40, 80))

        // a complex order: the engine's reaction (its first slice) reaches the venue in the same request's trace
        const iceberg = yield* place({
          side: "buy",
          type: "iceberg",
          amount: "4",
          price: "0.30",
          params: { display: "1" }
        })
        assert.strictEqual(iceberg.status, 201, iceberg.text)
        const reaction = yield* eventually(
          Effect.sync(() =>
            collector.spans.find((s) => s.name === "engine.reaction" && attr(s, "parent.id") === iceberg.body.id)
          ),
          (s) => s !== undefined
        )
        assert.strictEqual(attr(reaction!, "parent.type"), "iceberg")
        const slice = yield* eventually(
          Effect.sync(() =>
            collector.spans.find(
              (s) =>
                s.name === `venue ${CREATE}` &&
                s.parentSpanId !== undefined &&
                s.traceId === reaction!.traceId &&
                s !== venueSpan
            )
          ),
          (s) => s !== undefined
        )
        // the spans above it end later: the chain is read once the request's own span is in
        const above = yield* eventually(
          Effect.sync(() => {
            const all = new Map(collector.spans.map((s) => [s.spanId, s]))
            const names: Array<string> = []
            for (let p = all.get(slice!.parentSpanId ?? ""); p !== undefined; p = all.get(p.parentSpanId ?? "")) {
              names.push(p.name)
            }
            return names
          }),
          (names) => names.some((n) => n.startsWith("http.server"))
        )
        assert.includeMembers(above, ["engine.reaction", "engine.create"], above.join(" < "))
      }).pipe(Effect.provide(tracedServer)),
    30_000
  )

  it.live(
    "/metrics parses strictly and its counters move with orders, refusals and fills; 401 and 403 without view",
    () =>
      Effect.gen(function* () {
        const x = yield* Exchange
        const owner = yield* Owner
        const before = yield* scrape
        const resting = yield* place({ side: "buy", type: "limit", amount: "4", price: "0.30" })
        assert.strictEqual(resting.status, 201, resting.text)
        const taken = yield* place({ side: "buy", type: "limit", amount: "3", price: "0.46", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        x.trick("POST", /^\/portfolio\/events\/orders$/, {
          kind: "fail",
          status: 429,
          body: { error: { code: "too_many_requests", message: "rate limit exceeded" } },
          headers: { "retry-after": "3" }
        })
        const limited = yield* place({ side: "buy", type: "limit", amount: "1", price: "0.2" })
        assert.strictEqual(limited.status, 429, limited.text)
        const iceberg = yield* place({
          side: "buy",
          type: "iceberg",
          amount: "4",
          price: "0.30",
          params: { display: "1" }
        })
        assert.strictEqual(iceberg.status, 201, iceberg.text)
        const after = yield* eventually(scrape, (m) => sampleValue(m, "crossbook_fills_total", { venue: "kalshi" }) > 0)
        const moved = (name: string, labels: Record<string, string>) =>
          sampleValue(after, name, labels) - sampleValue(before, name, labels)
        assert.strictEqual(moved("crossbook_orders_placed_total", { venue: "kalshi", type: "limit" }), 3)
        assert.strictEqual(
          moved("crossbook_orders_refused_total", { venue: "kalshi", by: "venue", reason: "rate_limited" }),
          1
        )
        assert.strictEqual(moved("crossbook_fills_total", { venue: "kalshi", liquidity: "taker" }), 1)
        assert.strictEqual(moved("crossbook_fill_contracts_total", { venue: "kalshi" }), 3)
        assert.strictEqual(moved("crossbook_venue_rate_limited_total", { venue: "kalshi", route: CREATE }), 1)
        assert.strictEqual(
          moved("crossbook_venue_requests_total", { venue: "kalshi", route: CREATE, status: "201" }),
          3
        )
        assert.strictEqual(
          moved("crossbook_venue_request_duration_seconds_count", { venue: "kalshi", route: CREATE }),
          4
        )
        assert.isAbove(moved("crossbook_journal_commit_duration_seconds_count", {}), 0)
        assert.isAbove(sampleValue(after, "crossbook_process_memory_bytes", { kind: "rss" }), 0)
        // the iceberg is a parent placed, held live, and its first slice a limit placed on the venue
        assert.strictEqual(moved("crossbook_orders_placed_total", { venue: "kalshi", type: "iceberg" }), 1)
        assert.strictEqual(sampleValue(after, "crossbook_parents_live", { type: "iceberg" }), 1)
        assert.strictEqual(sampleValue(after, "crossbook_parents_live", { type: "twap" }), 0)
        assert.strictEqual(after.get("crossbook_venue_request_duration_seconds")?.type, "histogram")
        for (const f of after.values()) {
          assert.match(f.name, /^crossbook_[a-z_]+$/)
          if (f.type === "counter") assert.match(f.name, /_total$/)
        }

        // Without a token 401; with a token that lacks view 403
        const none = yield* request("GET", "/metrics")
        assert.strictEqual(none.status, 401, none.text)
        assert.strictEqual(none.body.error.code, "unauthorized")
        const grant = yield* request("POST", "/trading/grants", {
          token: owner,
          json: { user: "scraper", account: "*", permission: "trade" }
        })
        assert.include([200, 201], grant.status, grant.text)
        const key = yield* request("POST", "/trading/keys", { token: owner, json: { user: "scraper" } })
        assert.strictEqual(key.status, 201, key.text)
        const forbidden = yield* request("GET", "/metrics", { token: key.body.token })
        assert.strictEqual(forbidden.status, 403, forbidden.text)
        assert.strictEqual(forbidden.body.error.details.permission, "view")
      }).pipe(Effect.provide(tracedServer)),
    30_000
  )
})
