/** Polymarket's REST hosts (CLOB, Gamma, Data API) over HttpClient: timeouts, pacing per endpoint family, L2 headers. */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Duration, Effect, Either, RateLimiter, type Schema, type Scope } from "effect"
import type { LocalAccount } from "viem"
import { VenueError } from "../../Services/VenueGateway.ts"
import { observeVenueRequest } from "../../Telemetry/Telemetry.ts"
import { type ApiCredentials, l1Headers, l2Headers } from "./Signing.ts"
import { decode, VENUE } from "./Wire.ts"

/** Where the venue lives; every host can be overridden (tests, proxies). */
export interface Hosts {
  readonly clob: string
  readonly gamma: string
  readonly data: string
  readonly ws: string
}

export const DEFAULT_HOSTS: Hosts = {
  clob: "https://clob.polymarket.com",
  gamma: "https://gamma-api.polymarket.com",
  data: "https://data-api.polymarket.com",
  ws: "wss://ws-subscriptions-clob.polymarket.com/ws"
}

/** The endpoint families paced separately, each kept below the venue's published budget for it. */
export type Family = "gamma" | "data" | "book" | "clob" | "order" | "cancel"

/** Requests per 10 s for each family: about half of what the venue publishes, so bursts never reach its limit. */
export const BUDGETS: Record<Family, number> = {
  gamma: 150,
  data: 100,
  book: 700,
  clob: 400,
  order: 1_200,
  cancel: 1_000
}

export interface RestOptions {
  readonly hosts: Hosts
  readonly timeout: Duration.DurationInput
  readonly budgets?: Partial<Record<Family, number>>
}

/** The CLOB's refusal codes and what they are in our terms. */
const ERROR_KINDS: ReadonlyArray<readonly [RegExp, VenueError["kind"]]> = [
  [/NOT_ENOUGH_BALANCE|not enough balance|allowance/i, "insufficient_funds"],
  [
    /MARKET_NOT_READY|market (is )?(closed|not (found|ready|active))|closed.?only|orderbook .* does not exist/i,
    "market_closed"
  ],
  [/INVALID_ORDER|FOK_ORDER_NOT_FILLED|POST_ONLY|post.only|crosses|DUPLICATED|EXECUTION|invalid/i, "rejected"]
]

/**
 * The contract's kind for a failed CLOB/Gamma answer: 429 rate limited (with Retry-After), 503 (trading disabled or
 * cancel-only) and other 5xx unavailable, 4xx by the venue's `errorMsg`, the reason being the venue's own words.
 */
export const classify = (status: number, body: string, retryAfter: string | undefined): VenueError => {
  let reason = body.trim().slice(0, 500)
  try {
    const json = JSON.parse(body) as Record<string, unknown>
    const msg = json["errorMsg"] ?? json["error"] ?? json["message"]
    if (typeof msg === "string" && msg !== "") reason = msg
  } catch {
    // not JSON: the text itself is the reason
  }
  if (reason === "") reason = `HTTP ${status}`
  const after = retryAfter !== undefined && /^\d+(\.\d+)?$/.test(retryAfter) ? { retryAfterS: Number(retryAfter) } : {}
  if (status === 429) return new VenueError({ venue: VENUE, kind: "rate_limited", reason, ...after })
  if (status === 408) return new VenueError({ venue: VENUE, kind: "timeout", reason, ...after })
  if (status >= 500 || status === 425) {
    return new VenueError({
      venue: VENUE,
      kind: "unavailable",
      reason: status === 503 ? `trading is paused or cancel-only: ${reason}` : reason,
      ...after
    })
  }
  if (status === 401 || status === 403) return new VenueError({ venue: VENUE, kind: "unavailable", reason })
  if (status === 404) return new VenueError({ venue: VENUE, kind: "rejected", reason: `not found: ${reason}` })
  for (const [pattern, kind] of ERROR_KINDS) {
    if (pattern.test(reason)) return new VenueError({ venue: VENUE, kind, reason })
  }
  return new VenueError({ venue: VENUE, kind: "rejected", reason })
}

/** Error codes that say a request never left: no connection was made, or the host name did not resolve. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])

/** Whether a transport failure certainly happened before the request reached the venue (its cause chain says so). */
export const neverSent = (cause: unknown): boolean => {
  for (let c = cause, depth = 0; c !== undefined && c !== null && depth < 5; depth++) {
    const code = (c as { code?: unknown }).code
    if (typeof code === "string" && NOT_SENT.has(code)) return true
    c = (c as { cause?: unknown }).cause
  }
  return false
}

/** The trading identity: the signer, the L2 credentials once known, and the chain. */
export interface Identity {
  readonly signer: LocalAccount
  readonly chainId: number
  creds: ApiCredentials | undefined
}

export interface Call {
  readonly family: Family
  readonly host: keyof Omit<Hosts, "ws">
  readonly method: "GET" | "POST" | "DELETE"
  /** The path with its query, as signed. */
  readonly path: string
  readonly body?: unknown
  readonly auth?: "l1" | "l2"
  readonly nonce?: number
}

/** A paced, timed, signed JSON client of the venue's hosts. */
export interface PolymarketRest {
  readonly hosts: Hosts
  readonly json: <A, I>(call: Call, schema: Schema.Schema<A, I>) => Effect.Effect<A, VenueError>
  readonly raw: (call: Call) => Effect.Effect<unknown, VenueError>
}

export const makeRest = (
  options: RestOptions,
  identity: Identity | undefined
): Effect.Effect<PolymarketRest, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const limiters = {} as Record<Family, RateLimiter.RateLimiter>
    for (const family of Object.keys(BUDGETS) as Array<Family>) {
      limiters[family] = yield* RateLimiter.make({
        limit: options.budgets?.[family] ?? BUDGETS[family],
        interval: Duration.seconds(10),
        algorithm: "token-bucket"
      })
    }
    const timeoutMs = Duration.toMillis(options.timeout)

    const headersFor = (call: Call, bodyText: string | undefined) =>
      Effect.gen(function* () {
        if (call.auth === undefined) return {}
        if (identity === undefined) {
          return yield* Effect.fail(
            new VenueError({ venue: VENUE, kind: "unavailable", reason: "no credentials configured" })
          )
        }
        const seconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        if (call.auth === "l1") {
          return yield* Effect.promise(() => l1Headers(identity.signer, identity.chainId, seconds, call.nonce ?? 0))
        }
        if (identity.creds === undefined) {
          return yield* Effect.fail(
            new VenueError({ venue: VENUE, kind: "unavailable", reason: "no L2 credentials yet" })
          )
        }
        // the venue signs the path without its query string, as its published client does (paged reads among them)
        const path = call.path.split("?")[0]!
        return l2Headers(identity.creds, identity.signer.address, seconds, call.method, path, bodyText)
      })

    const raw = (call: Call): Effect.Effect<unknown, VenueError> =>
      Effect.gen(function* () {
        const bodyText = call.body === undefined ? undefined : JSON.stringify(call.body)
        const headers = yield* headersFor(call, bodyText)
        const url = options.hosts[call.host].replace(/\/$/, "") + call.path
        let request = HttpClientRequest.make(call.method)(url).pipe(
          HttpClientRequest.setHeaders(headers),
          HttpClientRequest.acceptJson
        )
        if (bodyText !== undefined) request = HttpClientRequest.bodyText(request, bodyText, "application/json")
        const response: HttpClientResponse.HttpClientResponse = yield* client.execute(request).pipe(
          limiters[call.family],
          Effect.timeoutFail({
            duration: timeoutMs,
            onTimeout: () => new VenueError({ venue: VENUE, kind: "timeout", reason: `no answer in ${timeoutMs} ms` })
          }),
          observeVenueRequest(VENUE, call.method, call.path),
          Effect.catchTags({
            RequestError: (e) =>
              Effect.fail(
                new VenueError({
                  venue: VENUE,
                  kind: "timeout",
                  reason: `unreachable: ${e.message}`,
                  ...(neverSent(e.cause) ? { sent: false } : {})
                })
              ),
            ResponseError: (e) => Effect.fail(new VenueError({ venue: VENUE, kind: "unavailable", reason: e.message }))
          })
        )
        const text = yield* response.text.pipe(
          Effect.timeoutFail({
            duration: timeoutMs,
            onTimeout: () => new VenueError({ venue: VENUE, kind: "timeout", reason: "the answer stopped" })
          }),
          Effect.catchTag("ResponseError", (e) =>
            Effect.fail(new VenueError({ venue: VENUE, kind: "unavailable", reason: e.message }))
          )
        )
        if (response.status < 200 || response.status > 299) {
          return yield* Effect.fail(classify(response.status, text, response.headers["retry-after"]))
        }
        if (text.trim() === "") return null
        return yield* Effect.try({
          try: () => JSON.parse(text) as unknown,
          catch: () => new VenueError({ venue: VENUE, kind: "unavailable", reason: "the answer is not JSON" })
        })
      })

    const json = <A, I>(call: Call, schema: Schema.Schema<A, I>): Effect.Effect<A, VenueError> =>
      Effect.flatMap(raw(call), (u) =>
        Either.match(decode(schema)(u), {
          onLeft: (reason) =>
            Effect.fail(
              new VenueError({
                venue: VENUE,
                kind: "unavailable",
                reason: `unreadable answer to ${call.path}: ${reason}`
              })
            ),
          onRight: Effect.succeed
        })
      )

    return { hosts: options.hosts, json, raw }
  })

/** Fails with a VenueError of this venue. */
export const fail = (kind: VenueError["kind"], reason: string) =>
  Effect.fail(new VenueError({ venue: VENUE, kind, reason }))
