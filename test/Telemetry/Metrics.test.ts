import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import { Registry } from "../../src/Telemetry/Metrics.ts"
import { makeInstruments, readGauges, routeOf, tally } from "../../src/Telemetry/Telemetry.ts"
import { otlpHeaders, tracesUrl } from "../../src/Telemetry/Tracing.ts"
import { parsePrometheus, sampleValue } from "./Prometheus.ts"

describe("metrics registry", () => {
  it("renders counters, gauges and histograms that a strict reader takes back", () => {
    const r = new Registry()
    const c = r.counter("x_requests_total", "Requests\nwith a \\ in the help", ["venue", "route"])
    const g = r.gauge("x_clients", "Clients")
    const h = r.histogram("x_latency_seconds", "Latency", ["venue"], [0.1, 1])
    c.inc(["kalshi", 'GET /a"b\\c\nd'])
    c.inc(["kalshi", 'GET /a"b\\c\nd'], 2)
    g.set([], 3)
    h.observe(["k"], 0.05)
    h.observe(["k"], 0.5)
    h.observe(["k"], 5)
    const parsed = parsePrometheus(r.render())
    assert.strictEqual(parsed.get("x_requests_total")?.type, "counter")
    assert.strictEqual(sampleValue(parsed, "x_requests_total", { venue: "kalshi", route: 'GET /a"b\\c\nd' }), 3)
    assert.strictEqual(sampleValue(parsed, "x_clients"), 3)
    assert.strictEqual(sampleValue(parsed, "x_latency_seconds_bucket", { venue: "k", le: "0.1" }), 1)
    assert.strictEqual(sampleValue(parsed, "x_latency_seconds_bucket", { venue: "k", le: "1" }), 2)
    assert.strictEqual(sampleValue(parsed, "x_latency_seconds_bucket", { venue: "k", le: "+Inf" }), 3)
    assert.strictEqual(sampleValue(parsed, "x_latency_seconds_count", { venue: "k" }), 3)
    assert.closeTo(sampleValue(parsed, "x_latency_seconds_sum", { venue: "k" }), 5.55, 1e-9)
  })

  it("refuses bad names, a wrong number of labels and a second family of one name", () => {
    const r = new Registry()
    assert.throws(() => r.counter("bad-name", "x"))
    assert.throws(() => r.counter("ok_total", "x", ["le"]))
    const c = r.counter("ok_total", "x", ["a"])
    assert.throws(() => c.inc([]))
    assert.throws(() => r.gauge("ok_total", "again"))
  })

  it.prop(
    "any observations: buckets cumulative, +Inf equal to the count, the sum their sum",
    [fc.array(fc.double({ min: 0, max: 20, noNaN: true }), { maxLength: 200 })],
    ([values]) => {
      const r = new Registry()
      const h = r.histogram("y_seconds", "y")
      for (const v of values) h.observe([], v)
      const parsed = parsePrometheus(r.render())
      const count = values.length === 0 ? 0 : sampleValue(parsed, "y_seconds_count")
      assert.strictEqual(count, values.length)
      if (values.length > 0) {
        assert.closeTo(
          sampleValue(parsed, "y_seconds_sum"),
          values.reduce((a, b) => a + b, 0),
          1e-6
        )
        assert.strictEqual(sampleValue(parsed, "y_seconds_bucket", { le: "+Inf" }), values.length)
        assert.strictEqual(sampleValue(parsed, "y_seconds_bucket", { le: "1" }), values.filter((v) => v <= 1).length)
      }
    }
  )

  it("the strict reader refuses what the format does not allow", () => {
    const bad = [
      "a_total 1", // no final newline
      "# TYPE a counter\na 1\na 2\n", // the same series twice
      '# TYPE a counter\na{x="1\\t"} 1\n', // a bad escape
      "# TYPE a counter\na -1\n", // a counter below zero
      "# TYPE a gauge\na one\n", // not a number
      "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na 2\n", // a family split in two
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', // not cumulative
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', // no +Inf bucket
      "# TYPE a gauge\n# TYPE a counter\na 1\n" // two types
    ]
    for (const text of bad) assert.throws(() => parsePrometheus(text), undefined, undefined, JSON.stringify(text))
  })
})

describe("what the server counts", () => {
  it("routes keep the words of a path and hide ids, tickers and the query", () => {
    assert.strictEqual(
      routeOf("POST", "/portfolio/events/orders/8c1e-4b2a/amend"),
      "POST /portfolio/events/orders/{id}/amend"
    )
    assert.strictEqual(routeOf("GET", "/markets/KXTEST-26-A/orderbook"), "GET /markets/{id}/orderbook")
    assert.strictEqual(routeOf("DELETE", "/order?id=0xabc"), "DELETE /order")
    assert.strictEqual(routeOf("GET", "/book?token_id=123"), "GET /book")
    assert.strictEqual(routeOf("GET", "/data/order/0xdeadbeef"), "GET /data/order/{id}")
  })

  it("the journal's events count orders placed and refused, and fills", () => {
    const m = makeInstruments()
    const event = (seq: number, kind: string, payload: Record<string, unknown>) => ({
      seq,
      ts: seq,
      kind,
      key: "k",
      payload
    })
    tally(m, [
      event(1, "order.accepted", { venue: "kalshi", type: "limit", market_id: "kalshi:A" }),
      event(2, "order.accepted", { venue: "sim", type: "twap", market_id: "sim:B" }),
      event(3, "order.rejected", { market_id: "kalshi:A", kind: "rate_limited", reason: "slow down" }),
      event(4, "risk.rejected", { market_id: "sim:B", rule: "max_order_contracts" }),
      event(5, "fill.new", { market_id: "kalshi:A", amount: "3", liquidity: "taker" }),
      event(6, "order.updated", { venue: "kalshi" })
    ])
    assert.strictEqual(m.ordersPlaced.get(["kalshi", "limit"]), 1)
    assert.strictEqual(m.ordersPlaced.get(["sim", "twap"]), 1)
    assert.strictEqual(m.ordersRefused.get(["kalshi", "venue", "rate_limited"]), 1)
    assert.strictEqual(m.ordersRefused.get(["sim", "risk", "max_order_contracts"]), 1)
    assert.strictEqual(m.fills.get(["kalshi", "taker"]), 1)
    assert.strictEqual(m.fillContracts.get(["kalshi"]), 3)
    assert.strictEqual(m.journalEvents.get(), 6)
    parsePrometheus(m.registry.render())
  })

  it.effect("streams of the venues that report them, live parents by type, memory: read at scrape time", () =>
    Effect.gen(function* () {
      const m = makeInstruments()
      const info = (id: string) => ({ id }) as any
      const venues = [
        {
          info: info("kalshi"),
          streams: Effect.succeed([
            { channel: "orderbook", state: "live" as const, lastMessageAt: 9_500, reconnects: 2 },
            { channel: "fills", state: "connecting" as const, lastMessageAt: null, reconnects: 0 }
          ])
        },
        { info: info("sim") }
      ]
      yield* readGauges(m, venues, { twap: 3 }, 10_000)
      const parsed = parsePrometheus(m.registry.render())
      const k = { venue: "kalshi", channel: "orderbook" }
      assert.strictEqual(sampleValue(parsed, "crossbook_venue_stream_reconnects_total", k), 2)
      assert.strictEqual(sampleValue(parsed, "crossbook_venue_stream_last_message_age_seconds", k), 0.5)
      assert.strictEqual(sampleValue(parsed, "crossbook_venue_stream_up", { ...k, state: "live" }), 1)
      assert.strictEqual(sampleValue(parsed, "crossbook_venue_stream_up", { ...k, state: "stale" }), 0)
      assert.strictEqual(
        sampleValue(parsed, "crossbook_venue_stream_up", { venue: "kalshi", channel: "fills", state: "connecting" }),
        1
      )
      // no message yet: no age; a venue without streams: no series
      const ages = parsed.get("crossbook_venue_stream_last_message_age_seconds")!.samples
      assert.deepStrictEqual(
        ages.map((a) => a.labels["channel"]),
        ["orderbook"]
      )
      assert.isFalse(parsed.get("crossbook_venue_stream_up")!.samples.some((x) => x.labels["venue"] === "sim"))
      assert.strictEqual(sampleValue(parsed, "crossbook_parents_live", { type: "twap" }), 3)
      assert.strictEqual(sampleValue(parsed, "crossbook_parents_live", { type: "oco" }), 0)
      assert.isAbove(sampleValue(parsed, "crossbook_process_memory_bytes", { kind: "heap_used" }), 0)
    })
  )

  it.effect("the OpenTelemetry variables: endpoint, traces endpoint, headers", () =>
    Effect.sync(() => {
      assert.strictEqual(tracesUrl({}), undefined)
      assert.strictEqual(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: " " }), undefined)
      assert.strictEqual(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/" }), "http://c:4318/v1/traces")
      assert.strictEqual(
        tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://t/x" }),
        "http://t/x"
      )
      assert.deepStrictEqual(otlpHeaders("api-key=a%20b, x=1,broken"), { "api-key": "a b", x: "1" })
    })
  )
})
