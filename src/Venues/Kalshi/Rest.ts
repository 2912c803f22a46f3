/** Kalshi's REST API: signed requests through the platform's HttpClient, paced by token buckets, failures as VenueErrors. */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, RateLimiter, type Schema, type Scope } from "effect"
import type { KeyObject } from "node:crypto"
import { VenueError } from "../../Services/VenueGateway.ts"
import { observeVenueRequest } from "../../Telemetry/Telemetry.ts"
import { authHeaders } from "./Signing.ts"
import * as W from "./Wire.ts"

/** A token bucket as Kalshi states it (`GET /account/limits`): capacity, and tokens refilled per second. */
export interface Bucket {
  readonly capacity: number
  readonly refillPerSecond: number
}

/**
 * The Basic tier: reads 200 tokens a second over a two-second bucket (400), writes 100 a second over a one-second
 * bucket (100); a request costs 10 by default. Other tiers are set through the settings (`KALSHI_READ_BUCKET`…), as
 * `GET /account/limits` states them for the account.
 */
export const BASIC_TIER: { readonly read: Bucket; readonly write: Bucket } = {
  read: { capacity: 400, refillPerSecond: 200 },
  write: { capacity: 100, refillPerSecond: 100 }
}

/**
 * Token costs of the routes this adapter calls: the venue's default of 10, and 2 where its document names a lower cost
 * (a cancel, a decrease, reading one order by id).
 */
export const COST = { read: 10, readOrder: 2, create: 10, amend: 10, cancel: 2, decrease: 2, cancelAll: 2 } as const

export interface Credentials {
  readonly keyId: string
  readonly key: KeyObject
}

export interface RestConfig {
  /** The REST base including `/trade-api/v2`. */
  readonly baseUrl: string
  readonly credentials?: Credentials | undefined
  /** How long one request may take before it is a `timeout`. Default 10 s. */
  readonly timeout?: Duration.DurationInput
  readonly limits?: { readonly read: Bucket; readonly write: Bucket }
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>

interface Call<A, I> {
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: string
  readonly query?: Query
  readonly body?: unknown
  readonly schema: Schema.Schema<A, I>
  readonly bucket: "read" | "write"
  readonly cost: number
  readonly signed: boolean
}

/** The body of a `POST /portfolio/events/orders`. */
export interface CreateOrderBody {
  readonly ticker: string
  readonly client_order_id: string
  readonly side: "bid" | "ask"
  readonly count: string
  readonly price: string
  readonly time_in_force: "fill_or_kill" | "good_till_canceled" | "immediate_or_cancel"
  readonly self_trade_prevention_type: "taker_at_cross" | "maker"
  readonly post_only?: boolean
  readonly reduce_only?: boolean
  readonly expiration_time?: number
}

export interface AmendOrderBody {
  readonly ticker: string
  readonly side: "bid" | "ask"
  readonly price: string
  readonly count: string
  readonly client_order_id?: string
  readonly updated_client_order_id?: string
}

const VENUE = W.VENUE

/** The venue's error codes in our kinds; anything else a 4xx says is a refusal with the venue's reason. */
export const errorKind = (status: number, code: string): VenueError["kind"] => {
  const c = code.toLowerCase()
  if (status === 429) return "rate_limited"
  if (c.includes("insufficient_balance") || c.includes("insufficient_funds")) return "insufficient_funds"
  if (
    c.includes("market_closed") ||
    c.includes("market_not_open") ||
    c.includes("market_paused") ||
    c.includes("trading_is_paused") ||
    c.includes("trading_paused") ||
    c.includes("exchange_closed") ||
    c.includes("exchange_paused") ||
    c.includes("market_inactive")
  )
    return "market_closed"
  if (status === 408) return "timeout"
  if (status === 401 || status === 403 || status >= 500) return "unavailable"
  return "rejected"
}

/** Transport failures that certainly happened before the request left: nothing reached the venue. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ENETUNREACH", "EHOSTUNREACH"])

/** The system error code under a transport failure (`ECONNREFUSED`…), when there is one. */
const causeCode = (e: unknown): string | undefined => {
  for (let x: unknown = e, depth = 0; x !== undefined && x !== null && depth < 5; depth++) {
    const r = x as { code?: unknown; cause?: unknown; errors?: ReadonlyArray<unknown> }
    if (typeof r.code === "string") return r.code
    if (Array.isArray(r.errors) && r.errors.length > 0) x = r.errors[0]
    else x = r.cause
  }
  return undefined
}

/** Reads `{"error": {code, message}}` or `{code, message}`; the text itself when it is neither. */
const readError = (text: string): { code: string; message: string } => {
  try {
    const body = JSON.parse(text) as Record<string, unknown>
    const e = (typeof body["error"] === "object" && body["error"] !== null ? body["error"] : body) as Record<
      string,
      unknown
    >
    const code = typeof e["code"] === "string" ? e["code"] : ""
    const message = typeof e["message"] === "string" ? e["message"] : code
    const details = typeof e["details"] === "string" && e["details"] !== "" ? `: ${e["details"]}` : ""
    return { code, message: `${message}${details}` || text }
  } catch {
    return { code: "", message: text.slice(0, 200) }
  }
}

const retryAfterOf = (r: HttpClientResponse.HttpClientResponse): number | undefined => {
  const h = r.headers["retry-after"]
  const n = h === undefined ? NaN : Number(h)
  return Number.isFinite(n) && n >= 0 ? n : undefined
}

/** Builds the REST client of one account: its buckets live as long as the scope. */
export const makeRest = (config: RestConfig) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const limits = config.limits ?? BASIC_TIER
    const bucket = (b: Bucket) =>
      RateLimiter.make({
        algorithm: "token-bucket",
        limit: b.capacity,
        interval: Duration.millis(Math.max(1, Math.round((b.capacity / b.refillPerSecond) * 1000)))
      })
    const read = yield* bucket(limits.read)
    const write = yield* bucket(limits.write)
    const base = config.baseUrl.replace(/\/+$/, "")
    const basePath = new URL(base).pathname.replace(/\/+$/, "")
    const timeout = config.timeout ?? "10 seconds"

    const call = <A, I>(c: Call<A, I>): Effect.Effect<A, VenueError> =>
      Effect.gen(function* () {
        const fail = (kind: VenueError["kind"], reason: string, retryAfterS?: number, sent?: boolean) =>
          new VenueError({
            venue: VENUE,
            kind,
            reason,
            ...(retryAfterS === undefined ? {} : { retryAfterS }),
            ...(sent === undefined ? {} : { sent })
          })
        if (c.signed && config.credentials === undefined) {
          return yield* Effect.fail(
            fail("not_supported", "no Kalshi credentials are configured (KALSHI_API_KEY_ID)", undefined, false)
          )
        }
        const query = Object.entries(c.query ?? {}).flatMap(([k, v]) =>
          v === undefined ? [] : [[k, String(v)] as [string, string]]
        )
        let request = HttpClientRequest.make(c.method)(`${base}${c.path}`).pipe(
          HttpClientRequest.setUrlParams(query),
          HttpClientRequest.acceptJson
        )
        if (c.body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, c.body)
        if (config.credentials !== undefined) {
          const now = yield* Clock.currentTimeMillis
          request = HttpClientRequest.setHeaders(
            request,
            authHeaders(config.credentials.keyId, config.credentials.key, now, c.method, `${basePath}${c.path}`)
          )
        }
        const limiter = c.bucket === "read" ? read : write
        const response = yield* RateLimiter.withCost(c.cost)(limiter(Effect.void)).pipe(
          Effect.zipRight(
            client.execute(request).pipe(
              Effect.flatMap((r) => Effect.map(r.text, (text) => ({ r, text }))),
              Effect.scoped,
              // the desk places orders in uninterruptible regions: the request itself must stay interruptible
              // for the timeout to end it
              Effect.interruptible,
              Effect.timeoutFail({
                duration: timeout,
                onTimeout: () =>
                  fail("timeout", `no answer to ${c.method} ${c.path} within ${Duration.format(timeout)}`)
              }),
              observeVenueRequest(VENUE, c.method, c.path)
            )
          ),
          Effect.catchTag("RequestError", (e) => {
            const code = causeCode(e.cause)
            const notSent =
              e.reason === "Encode" || e.reason === "InvalidUrl" || (code !== undefined && NOT_SENT.has(code))
            return Effect.fail(
              fail(
                "unavailable",
                `${c.method} ${c.path}: ${e.message}${code === undefined ? "" : ` (${code})`}`,
                undefined,
                notSent ? false : undefined
              )
            )
          }),
          Effect.catchTag("ResponseError", (e) =>
            Effect.fail(fail("unavailable", `${c.method} ${c.path}: ${e.message}`))
          )
        )
        const { r, text } = response
        if (r.status >= 200 && r.status < 300) {
          const decoded = W.decodeEither(c.schema)(text === "" ? {} : safeJson(text))
          if (Either.isLeft(decoded)) {
            return yield* Effect.fail(
              fail("unavailable", `unreadable answer to ${c.method} ${c.path}: ${decoded.left}`)
            )
          }
          return decoded.right
        }
        const e = readError(text)
        const kind = errorKind(r.status, e.code)
        // Kalshi's 429 carries no Retry-After: the bucket's refill says when the request's tokens are back
        const bucketOf = c.bucket === "read" ? limits.read : limits.write
        const retryAfter =
          kind === "rate_limited"
            ? (retryAfterOf(r) ?? Math.max(1, Math.ceil(c.cost / bucketOf.refillPerSecond)))
            : undefined
        return yield* Effect.fail(
          fail(
            kind,
            e.code !== "" ? `${e.code}: ${e.message}` : `HTTP ${r.status}: ${e.message}`,
            retryAfter,
            // a refusal of the credentials or of the budget certainly placed nothing
            r.status === 401 || r.status === 403 ? false : undefined
          )
        )
      })

    const get = <A, I>(
      path: string,
      schema: Schema.Schema<A, I>,
      query?: Query,
      signed = false,
      cost: number = COST.read
    ) => call({ method: "GET", path, schema, bucket: "read", cost, signed, ...(query ? { query } : {}) })
    const enc = encodeURIComponent

    return {
      hasCredentials: config.credentials !== undefined,
      events: (q: {
        cursor?: string
        limit?: number
        status?: "open" | "closed" | "settled"
        series_ticker?: string
      }) => get("/events", W.EventsResponse, { ...q, with_nested_markets: true }),
      event: (eventTicker: string) =>
        get(`/events/${enc(eventTicker)}`, W.EventResponse, { with_nested_markets: true }),
      markets: (q: { cursor?: string; limit?: number; status?: string; tickers?: string; event_ticker?: string }) =>
        get("/markets", W.MarketsResponse, q),
      market: (ticker: string) => get(`/markets/${enc(ticker)}`, W.MarketResponse),
      series: (seriesTicker: string) => get(`/series/${enc(seriesTicker)}`, W.SeriesResponse),
      orderbook: (ticker: string, depth?: number) =>
        get(`/markets/${enc(ticker)}/orderbook`, W.OrderbookResponse, depth === undefined ? {} : { depth }),
      trades: (q: { ticker: string; limit?: number; cursor?: string; min_ts?: number }) =>
        get("/markets/trades", W.TradesResponse, q),
      balance: get("/portfolio/balance", W.BalanceResponse, {}, true),
      positions: (q: { cursor?: string; limit?: number; ticker?: string }) =>
        get("/portfolio/positions", W.PositionsResponse, q, true),
      orders: (q: {
        ticker?: string
        status?: "resting" | "canceled" | "executed"
        cursor?: string
        limit?: number
        min_ts?: number
      }) => get("/portfolio/orders", W.OrdersResponse, q, true),
      order: (orderId: string) => get(`/portfolio/orders/${enc(orderId)}`, W.OrderResponse, {}, true, COST.readOrder),
      fills: (q: { cursor?: string; limit?: number; min_ts?: number; order_id?: string; ticker?: string }) =>
        get("/portfolio/fills", W.FillsResponse, q, true),
      settlements: (q: { cursor?: string; limit?: number; min_ts?: number; ticker?: string }) =>
        get("/portfolio/settlements", W.SettlementsResponse, q, true),
      eventFeeChanges: (q: { event_ticker: string; cursor?: string; limit?: number }) =>
        get("/events/fee_changes", W.EventFeeChangesResponse, q),
      accountLimits: get("/account/limits", W.AccountLimitsResponse, {}, true),
      createOrder: (body: CreateOrderBody) =>
        call({
          method: "POST",
          path: "/portfolio/events/orders",
          body,
          schema: W.CreateOrderV2Response,
          bucket: "write",
          cost: COST.create,
          signed: true
        }),
      cancelOrder: (orderId: string, ticker: string) =>
        call({
          method: "DELETE",
          path: `/portfolio/events/orders/${enc(orderId)}`,
          query: { market_ticker: ticker },
          schema: W.CancelOrderV2Response,
          bucket: "write",
          cost: COST.cancel,
          signed: true
        }),
      cancelAll: call({
        method: "DELETE",
        path: "/portfolio/events/orders",
        schema: W.EmptyResponse,
        bucket: "write",
        cost: COST.cancelAll,
        signed: true
      }),
      amendOrder: (orderId: string, body: AmendOrderBody) =>
        call({
          method: "POST",
          path: `/portfolio/events/orders/${enc(orderId)}/amend`,
          body,
          schema: W.AmendOrderV2Response,
          bucket: "write",
          cost: COST.amend,
          signed: true
        }),
      decreaseOrder: (orderId: string, ticker: string, reduceTo: string) =>
        call({
          method: "POST",
          path: `/portfolio/events/orders/${enc(orderId)}/decrease`,
          body: { reduce_to: reduceTo, market_ticker: ticker },
          schema: W.DecreaseOrderV2Response,
          bucket: "write",
          cost: COST.decrease,
          signed: true
        })
    }
  })

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** The REST client of one account. */
export type KalshiRest = Effect.Effect.Success<ReturnType<typeof makeRest>>
export type RestRequirements = HttpClient.HttpClient | Scope.Scope

/** A failure of the venue's, as the seam states it. */
export const venueError = (kind: VenueError["kind"], reason: string, sent?: boolean) =>
  new VenueError({ venue: W.VENUE, kind, reason, ...(sent === undefined ? {} : { sent }) })

/** An answer the venue sent that could not be read: unavailable, naming what it was. */
export const unreadable = (what: string) => (reason: string) =>
  venueError("unavailable", `unreadable ${what}: ${reason}`)
