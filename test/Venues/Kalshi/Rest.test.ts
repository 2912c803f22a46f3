/** Kalshi's REST client: every request it sends matches the venue's OpenAPI document and is signed; errors, limits, timeouts. */
import { HttpClient, HttpClientResponse, type HttpClientRequest } from "@effect/platform"
import { assert, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, TestClock } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect } from "vitest"
import { VenueError } from "../../../src/Services/VenueGateway.ts"
import { type Credentials, errorKind, makeRest } from "../../../src/Venues/Kalshi/Rest.ts"
import { signingMessage, verifyMessage } from "../../../src/Venues/Kalshi/Signing.ts"
import { requestErrors, type SentRequest } from "./Spec.ts"

const REST = new URL("../../../../shared/fixtures/recorded/kalshi/rest/", import.meta.url)
const haveRest = existsSync(fileURLToPath(REST))
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const credentials: Credentials = { keyId: "key-1", key: privateKey }
const BASE = "https://venue.test/trade-api/v2"

interface Seen extends SentRequest {
  readonly headers: Readonly<Record<string, string>>
}

type Answer = { status: number; body?: unknown; headers?: Record<string, string> } | "never"

/** An HttpClient that records each request and answers from `answer`. */
const stubClient = (seen: Array<Seen>, answer: (r: Seen) => Answer) =>
  Layer.succeed(
    HttpClient.HttpClient,
    HttpClient.make((request: HttpClientRequest.HttpClientRequest, url: URL) => {
      const raw = request.body._tag === "Uint8Array" ? new TextDecoder().decode(request.body.body) : undefined
      const r: Seen = {
        method: request.method,
        path: url.pathname,
        query: Object.fromEntries(url.searchParams.entries()),
        ...(raw === undefined ? {} : { body: JSON.parse(raw) }),
        headers: request.headers
      }
      seen.push(r)
      const a = answer(r)
      if (a === "never") return Effect.never
      const text = a.body === undefined ? null : typeof a.body === "string" ? a.body : JSON.stringify(a.body)
      return Effect.succeed(
        HttpClientResponse.fromWeb(request, new Response(text, { status: a.status, headers: a.headers ?? {} }))
      )
    })
  )

const recorded = (name: string): unknown => JSON.parse(readFileSync(new URL(name, REST), "utf8"))

/** The recorded body answering each route. */
const fromRecordings = (r: Seen): Answer => {
  const p = r.path.replace("/trade-api/v2", "")
  const m = r.method
  const name =
    m === "GET" && p === "/events"
      ? "events.json"
      : m === "GET" && p.startsWith("/events/")
        ? undefined
        : m === "GET" && p === "/markets/trades"
          ? "trades.json"
          : m === "GET" && p.endsWith("/orderbook")
            ? "orderbook.json"
            : m === "GET" && p.startsWith("/series/")
              ? "series.json"
              : m === "GET" && p === "/portfolio/balance"
                ? "trading_get_balance.json"
                : m === "GET" && p === "/portfolio/positions"
                  ? "trading_get_positions.json"
                  : m === "GET" && p === "/portfolio/orders"
                    ? "trading_get_orders.json"
                    : m === "GET" && p.startsWith("/portfolio/orders/")
                      ? "trading_get_orders_id.json"
                      : m === "GET" && p === "/portfolio/fills"
                        ? "trading_get_fills.json"
                        : m === "GET" && p === "/account/limits"
                          ? "trading_get_account_limits.json"
                          : m === "POST" && p === "/portfolio/events/orders"
                            ? "trading_post_events_orders.json"
                            : m === "POST" && p.endsWith("/amend")
                              ? "trading_post_events_orders_id_amend.json"
                              : m === "POST" && p.endsWith("/decrease")
                                ? "trading_post_events_orders_id_decrease.json"
                                : m === "DELETE" && p === "/portfolio/events/orders"
                                  ? null
                                  : m === "DELETE"
                                    ? "trading_delete_events_orders_id.json"
                                    : undefined
  if (name === null) return { status: 204 }
  if (name === undefined) {
    const events = recorded("events.json") as { events: Array<Record<string, unknown>> }
    if (p.startsWith("/events/")) return { status: 200, body: { event: events.events[0], markets: [] } }
    if (p.startsWith("/markets/"))
      return { status: 200, body: { market: (events.events[0]!["markets"] as Array<unknown>)[0] } }
    if (p === "/markets") return { status: 200, body: { cursor: "", markets: events.events[0]!["markets"] } }
    return { status: 404, body: { error: { code: "not_found", message: "no route" } } }
  }
  return { status: 200, body: recorded(name) }
}

describe.skipIf(!haveRest)(haveRest ? "every call" : "every call — SKIPPED: ../shared/fixtures are absent", () => {
  it.scoped(
    "matches the OpenAPI document (method, path, query, body), is signed, and decodes the recorded answer",
    () =>
      Effect.gen(function* () {
        const seen: Array<Seen> = []
        const rest = yield* makeRest({ baseUrl: BASE, credentials }).pipe(
          Effect.provide(stubClient(seen, fromRecordings))
        )
        yield* rest.events({ limit: 200, status: "open", cursor: "abc" })
        yield* rest.event("KXELONMARS-99")
        yield* rest.markets({ limit: 1000, status: "open", tickers: "A,B" })
        yield* rest.market("KXELONMARS-99")
        yield* rest.series("KXELONMARS")
        yield* rest.orderbook("KXELONMARS-99", 50)
        yield* rest.trades({ ticker: "KXELONMARS-99", limit: 100, min_ts: 1789000000 })
        yield* rest.balance
        yield* rest.positions({ limit: 1000 })
        yield* rest.orders({ status: "resting", limit: 1000, ticker: "KXGOLDH-26SEP1712-T4407.99" })
        yield* rest.order("01a0afc0-46e8-7596-b183-1ff448331615")
        yield* rest.fills({ limit: 1000, min_ts: 1789000000 })
        yield* rest.accountLimits
        const created = yield* rest.createOrder({
          ticker: "KXGOLDH-26SEP1712-T4407.99",
          client_order_id: "c-1",
          side: "bid",
          count: "2",
          price: "0.02",
          time_in_force: "good_till_canceled",
          self_trade_prevention_type: "taker_at_cross",
          post_only: true,
          reduce_only: false,
          expiration_time: 1789999999
        })
        assert.strictEqual(created.order_id, "01a0afc0-46e8-7596-b183-1ff448331615")
        yield* rest.amendOrder("01a0afc0-46e8-7596-b183-1ff448331615", {
          ticker: "KXGOLDH-26SEP1712-T4407.99",
          side: "bid",
          price: "0.03",
          count: "2",
          client_order_id: "c-1",
          updated_client_order_id: "c-1"
        })
        yield* rest.decreaseOrder("01a0afc0-46e8-7596-b183-1ff448331615", "KXGOLDH-26SEP1712-T4407.99", "1")
        yield* rest.cancelOrder("01a0afc0-46e8-7596-b183-1ff448331615", "KXGOLDH-26SEP1712-T4407.99")
        yield* rest.cancelAll

        assert.strictEqual(seen.length, 18)
        const problems = seen.flatMap((r) => requestErrors(r) ?? [])
        expect(problems).toEqual([])
        for (const r of seen) {
          const ts = Number(r.headers["kalshi-access-timestamp"])
          assert.strictEqual(r.headers["kalshi-access-key"], "key-1")
          assert.isTrue(
            verifyMessage(publicKey, signingMessage(ts, r.method, r.path), r.headers["kalshi-access-signature"]!),
            `${r.method} ${r.path} is signed over its full path`
          )
        }
        // the check itself can fail: a query parameter or a body field the document does not have
        expect(requestErrors({ method: "GET", path: "/trade-api/v2/markets", query: { search: "x" } })).not.toEqual([])
        expect(
          requestErrors({
            method: "POST",
            path: "/trade-api/v2/portfolio/events/orders",
            query: {},
            body: {
              ticker: "X",
              side: "buy",
              count: "1",
              price: "0.5",
              time_in_force: "gtc",
              self_trade_prevention_type: "maker"
            }
          })
        ).not.toEqual([])
      })
  )
})

const failure = <A>(e: Either.Either<A, VenueError>): VenueError => {
  if (Either.isRight(e)) throw new Error("expected a failure")
  return e.left
}

describe("errors, limits and time", () => {
  it.scoped("the venue's refusals map to our kinds with the venue's own reason; a 429 keeps Retry-After", () =>
    Effect.gen(function* () {
      const answers: Array<Answer> = [
        {
          status: 429,
          body: { error: { code: "too_many_requests", message: "slow down" } },
          headers: { "retry-after": "2" }
        },
        { status: 400, body: { error: { code: "insufficient_balance", message: "Insufficient balance" } } },
        { status: 409, body: { error: { code: "market_closed", message: "market is closed" } } },
        { status: 400, body: { code: "trading_is_paused", message: "trading is paused" } },
        { status: 400, body: { error: { code: "invalid_order", message: "bad price", details: "price off grid" } } },
        { status: 503, body: "upstream down" },
        { status: 200, body: { nothing: true } }
      ]
      let i = 0
      const rest = yield* makeRest({ baseUrl: BASE, credentials }).pipe(
        Effect.provide(stubClient([], () => answers[i++]!))
      )
      const errors: Array<VenueError> = []
      for (let n = 0; n < answers.length; n++) errors.push(failure(yield* Effect.either(rest.balance)))
      expect(errors.map((e) => [e.kind, e.reason, e.retryAfterS])).toEqual([
        ["rate_limited", "too_many_requests: slow down", 2],
        ["insufficient_funds", "insufficient_balance: Insufficient balance", undefined],
        ["market_closed", "market_closed: market is closed", undefined],
        ["market_closed", "trading_is_paused: trading is paused", undefined],
        ["rejected", "invalid_order: bad price: price off grid", undefined],
        ["unavailable", "HTTP 503: upstream down", undefined],
        ["unavailable", expect.stringContaining("unreadable answer to GET /portfolio/balance"), undefined]
      ])
      for (const e of errors) assert.strictEqual(e.venue, "kalshi")
      assert.strictEqual(errorKind(401, ""), "unavailable")
    })
  )

  it.scoped("a request with no answer is a timeout once the time passes", () =>
    Effect.gen(function* () {
      const rest = yield* makeRest({ baseUrl: BASE, credentials, timeout: "5 seconds" }).pipe(
        Effect.provide(stubClient([], () => "never"))
      )
      const fiber = yield* Effect.fork(Effect.either(rest.order("x")))
      yield* TestClock.adjust("5 seconds")
      const e = failure(yield* Fiber.join(fiber))
      assert.strictEqual(e.kind, "timeout")
    })
  )

  it.scoped("the write bucket waits rather than fails: the third order goes when the bucket has refilled", () =>
    Effect.gen(function* () {
      const seen: Array<Seen> = []
      const rest = yield* makeRest({
        baseUrl: BASE,
        credentials,
        limits: { read: { capacity: 600, refillPerSecond: 200 }, write: { capacity: 20, refillPerSecond: 10 } }
      }).pipe(
        Effect.provide(
          stubClient(seen, () => ({
            status: 201,
            body: { order_id: "o", fill_count: "0", remaining_count: "1", ts_ms: 1 }
          }))
        )
      )
      const place = rest.createOrder({
        ticker: "T",
        client_order_id: "c",
        side: "bid",
        count: "1",
        price: "0.5",
        time_in_force: "good_till_canceled",
        self_trade_prevention_type: "taker_at_cross"
      })
      const fiber = yield* Effect.fork(Effect.all([place, place, place], { concurrency: "unbounded" }))
      yield* TestClock.adjust("10 millis")
      assert.strictEqual(seen.length, 2)
      yield* TestClock.adjust("1 second")
      const results = yield* Fiber.join(fiber)
      assert.strictEqual(results.length, 3)
      assert.strictEqual(seen.length, 3)
      // reads have their own bucket: not held up by the writes
      const reads = yield* Effect.fork(rest.balance.pipe(Effect.either))
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(reads)
      assert.strictEqual(seen.length, 4)
    })
  )

  it.scoped("without credentials a signed route sends nothing and answers not_supported", () =>
    Effect.gen(function* () {
      const seen: Array<Seen> = []
      const rest = yield* makeRest({ baseUrl: BASE }).pipe(
        Effect.provide(stubClient(seen, () => ({ status: 200, body: {} })))
      )
      const e = failure(yield* Effect.either(rest.balance))
      assert.strictEqual(e.kind, "not_supported")
      assert.strictEqual(seen.length, 0)
      yield* rest.orderbook("X")
      assert.strictEqual(seen.length, 1)
      assert.isUndefined(seen[0]!.headers["kalshi-access-key"])
      assert.instanceOf(e, VenueError)
    })
  )
})
