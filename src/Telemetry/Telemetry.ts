/** What the server counts and traces at its boundaries: the metric families, the journal's tally, spans when exported. */
import { Context, Effect, Exit, FiberRef } from "effect"
import * as HttpClient from "@effect/platform/HttpClient"
import { globalValue } from "effect/GlobalValue"
import { performance } from "node:perf_hooks"
import type { JournalEvent } from "../Services/OrderStore.ts"
import type { Venue } from "../Services/VenueGateway.ts"
import { type Counter, type Gauge, type Histogram, Registry } from "./Metrics.ts"
import * as Id from "../Domain/Ids.ts"

/** The server's metric families, `crossbook_<what>_<unit>[_total]`. */
export interface Instruments {
  readonly registry: Registry
  readonly ordersPlaced: Counter
  readonly ordersRefused: Counter
  readonly fills: Counter
  readonly fillContracts: Counter
  readonly journalEvents: Counter
  readonly journalCommit: Histogram
  readonly venueRequest: Histogram
  readonly venueRequests: Counter
  readonly venueRateLimited: Counter
  readonly streamReconnects: Counter
  readonly streamLastMessageAge: Gauge
  readonly streamUp: Gauge
  readonly parentsLive: Gauge
  readonly eventsClients: Gauge
  readonly memory: Gauge
  readonly up: Gauge
}

/** A fresh set of the server's metric families on a registry of their own. */
export const makeInstruments = (): Instruments => {
  const r = new Registry()
  return {
    registry: r,
    ordersPlaced: r.counter(
      "crossbook_orders_placed_total",
      "Orders accepted (journal order.accepted): plain orders the venue took and parents the engine holds",
      ["venue", "type"]
    ),
    ordersRefused: r.counter(
      "crossbook_orders_refused_total",
      "Orders refused: by the risk rules (reason = the rule) or by the venue (reason = the venue error's kind)",
      ["venue", "by", "reason"]
    ),
    fills: r.counter("crossbook_fills_total", "Fills recorded (journal fill.new)", ["venue", "liquidity"]),
    fillContracts: r.counter("crossbook_fill_contracts_total", "Contracts filled", ["venue"]),
    journalEvents: r.counter("crossbook_journal_events_total", "Events committed to the journal"),
    journalCommit: r.histogram(
      "crossbook_journal_commit_duration_seconds",
      "Time one journal write (a transaction of one or more batches) took"
    ),
    venueRequest: r.histogram(
      "crossbook_venue_request_duration_seconds",
      "Time a venue REST request took, from sending to its answer (Kalshi: rate-limit waits excluded)",
      ["venue", "route"]
    ),
    venueRequests: r.counter(
      "crossbook_venue_requests_total",
      "Venue REST requests by answer: the HTTP status, `timeout`, `error` (no answer) or `interrupted`",
      ["venue", "route", "status"]
    ),
    venueRateLimited: r.counter(
      "crossbook_venue_rate_limited_total",
      "Venue REST requests answered 429 Too Many Requests",
      ["venue", "route"]
    ),
    streamReconnects: r.counter(
      "crossbook_venue_stream_reconnects_total",
      "Times a venue stream reconnected, as the venue adapter counts them",
      ["venue", "channel"]
    ),
    streamLastMessageAge: r.gauge(
      "crossbook_venue_stream_last_message_age_seconds",
      "Seconds since a venue stream last heard from the venue (absent before its first message)",
      ["venue", "channel"]
    ),
    streamUp: r.gauge(
      "crossbook_venue_stream_up",
      "1 for the state a venue stream is in (live, stale, connecting, down), 0 for the others",
      ["venue", "channel", "state"]
    ),
    parentsLive: r.gauge("crossbook_parents_live", "Complex orders the engine holds, by type", ["type"]),
    eventsClients: r.gauge("crossbook_events_socket_clients", "Open events sockets (/trading/ws/events)"),
    memory: r.gauge("crossbook_process_memory_bytes", "Memory of the server process, by kind", ["kind"]),
    up: r.gauge("crossbook_up", "1 while the server answers")
  }
}

/** The metric families the server records into: one set per process unless a test provides its own. */
export class Telemetry extends Context.Reference<Telemetry>()("crossbook/Telemetry", {
  defaultValue: makeInstruments
}) {}

/**
 * Whether spans are exported (an OTLP endpoint is configured): the boundary spans of this module are made only then,
 * so they cost nothing otherwise (the simulator, the backtester, a server without a collector).
 */
export const currentTracing: FiberRef.FiberRef<boolean> = globalValue("crossbook/Telemetry/currentTracing", () =>
  FiberRef.unsafeMake(false)
)

/** The retry a venue request belongs to (0: the first try), for its span. */
export const currentRetry: FiberRef.FiberRef<number> = globalValue("crossbook/Telemetry/currentRetry", () =>
  FiberRef.unsafeMake(0)
)

/**
 * `self` in a span named `name` when spans are exported; `self` itself otherwise. The attributes are asked for only
 * when the span is made.
 */
export const traced =
  (name: string, attributes?: () => Record<string, unknown>) =>
  <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) =>
      fiber.getFiberRef(currentTracing)
        ? Effect.withSpan(self, name, {
            captureStackTrace: false,
            ...(attributes === undefined ? {} : { attributes: attributes() })
          })
        : self
    )

const venueOf = (payload: Record<string, unknown>): string => {
  if (typeof payload["venue"] === "string") return payload["venue"]
  const market = payload["market_id"]
  if (typeof market !== "string") return ""
  return Id.venuePrefix(market) ?? ""
}

const text = (v: unknown, otherwise: string) => (typeof v === "string" && v !== "" ? v : otherwise)

/** Counts what committed journal events tell: orders placed and refused, fills. */
export const tally = (m: Instruments, events: ReadonlyArray<JournalEvent>): void => {
  m.journalEvents.inc([], events.length)
  for (const e of events) {
    switch (e.kind) {
      case "order.accepted": {
        const p = e.payload as Record<string, unknown>
        m.ordersPlaced.inc([venueOf(p), text(p["type"], "unknown")])
        break
      }
      case "order.rejected": {
        const p = e.payload as Record<string, unknown>
        m.ordersRefused.inc([venueOf(p), "venue", text(p["kind"], "rejected")])
        break
      }
      case "risk.rejected": {
        const p = e.payload as Record<string, unknown>
        m.ordersRefused.inc([venueOf(p), "risk", text(p["rule"], "unknown")])
        break
      }
      case "fill.new": {
        const p = e.payload as Record<string, unknown>
        const venue = venueOf(p)
        m.fills.inc([venue, text(p["liquidity"], "unknown")])
        const amount = Number(p["amount"])
        if (Number.isFinite(amount)) m.fillContracts.inc([venue], amount)
        break
      }
    }
  }
}

/**
 * A venue path as a route: segments that are words (lower case and `_`) stay, the others (tickers, ids, hashes)
 * become `{id}`; the query goes. `GET /portfolio/events/orders/{id}/amend`.
 */
export const routeOf = (method: string, path: string): string => {
  const q = path.indexOf("?")
  const bare = q < 0 ? path : path.slice(0, q)
  const segments = bare.split("/").map((s) => (s === "" || /^[a-z_-]{1,40}$/.test(s) ? s : "{id}"))
  return `${method} ${segments.join("/")}`
}

type Answer = { readonly status: number } | { readonly r: { readonly status: number } }

const statusOf = (a: Answer): number => ("status" in a ? a.status : a.r.status)

/**
 * Measures one venue REST request (its latency by venue and route, its answer, 429s) and, when spans are exported, puts
 * it in a span with the venue, route, status and retry (and no header or URL), sending no trace header to the venue. `self` answers the
 * response (or `{r: response}`); a failure with a `kind` of `timeout` counts as a timeout.
 */
export const observeVenueRequest =
  (venue: string, method: string, path: string) =>
  <A extends Answer, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiberRuntime((fiber) => {
      const m = Context.get(fiber.currentContext, Telemetry)
      const route = routeOf(method, path)
      const started = performance.now()
      const measured = Effect.onExit(self, (exit) =>
        Effect.sync(() => {
          let status: string
          if (Exit.isSuccess(exit)) status = String(statusOf(exit.value))
          else if (Exit.isInterrupted(exit)) status = "interrupted"
          else {
            const failure = exit.cause._tag === "Fail" ? (exit.cause.error as { kind?: unknown }) : undefined
            status = failure?.kind === "timeout" ? "timeout" : "error"
          }
          m.venueRequest.observe([venue, route], (performance.now() - started) / 1000)
          m.venueRequests.inc([venue, route, status])
          if (status === "429") m.venueRateLimited.inc([venue, route])
        })
      )
      if (!fiber.getFiberRef(currentTracing)) return measured
      return measured.pipe(
        Effect.tap((a) => Effect.annotateCurrentSpan("http.response.status_code", statusOf(a))),
        // The HTTP client's own span would carry the venue's signed headers (a passphrase among them) and tell the
        // venue our trace id: this span is the only one.
        Effect.locally(HttpClient.currentTracerDisabledWhen, () => true),
        Effect.withSpan(`venue ${route}`, {
          kind: "client",
          captureStackTrace: false,
          attributes: { venue, route, "http.request.method": method, retry: fiber.getFiberRef(currentRetry) }
        })
      )
    })

const STREAM_STATES = ["live", "stale", "connecting", "down"] as const

/**
 * Sets the gauges that are read at scrape time rather than kept: each venue's streams (venues without `streams` are
 * skipped), the live parents by type, the process' memory.
 */
export const readGauges = (
  m: Instruments,
  venues: ReadonlyArray<Pick<Venue, "info" | "streams">>,
  liveByType: Readonly<Partial<Record<string, number>>>,
  now: number
): Effect.Effect<void> =>
  Effect.gen(function* () {
    m.streamLastMessageAge.clear()
    m.streamUp.clear()
    for (const venue of venues) {
      if (venue.streams === undefined) continue
      const id = venue.info.id
      for (const s of yield* venue.streams) {
        m.streamReconnects.setTotal([id, s.channel], s.reconnects)
        if (s.lastMessageAt !== null) {
          m.streamLastMessageAge.set([id, s.channel], Math.max(0, now - s.lastMessageAt) / 1000)
        }
        for (const state of STREAM_STATES) m.streamUp.set([id, s.channel, state], s.state === state ? 1 : 0)
      }
    }
    for (const [type, live] of Object.entries(liveByType)) m.parentsLive.set([type], live ?? 0)
    const memory = process.memoryUsage()
    m.memory.set(["rss"], memory.rss)
    m.memory.set(["heap_used"], memory.heapUsed)
    m.memory.set(["heap_total"], memory.heapTotal)
    m.memory.set(["external"], memory.external)
    m.up.set([], 1)
  })
