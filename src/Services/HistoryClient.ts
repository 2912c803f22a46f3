/**
 * The HistoryClient seam: recorded books and trades from a data host (`SERVICE_DATA_URL`, with `SERVICE_API_KEY` or
 * the saved key), over @effect/platform's HTTP client: ids checked before any call, each request timed out, requests
 * paced (10 a second by default), and only what may succeed on a second try (429, 502, 503, 504, no answer) retried.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Clock, Context, Data, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { ErrorBody } from "../Domain/Errors.ts"
import { DecimalString, Millis } from "../Domain/Wire.ts"

/** The history protocol's answers, as a data host sends them (`src/Data/Api.ts` serves them) and this client reads them. */
export const Metadata = Schema.Struct({
  dataset_version: Schema.String.annotations({
    description: "Changes whenever the host's data changes: two answers with one version read the same data"
  }),
  time_basis: Schema.Literal("venue_ms").annotations({
    description:
      "Every `ts`, `*_ms` and `as_of_ms` is the venue's time in ms since the epoch (raised, where the venue's clock " +
      "went back, to keep one market's rows in order); `received_ms` is when the recorder received the message"
  })
}).annotations({ identifier: "HistoryMetadata" })

const Level = Schema.Struct({ price: DecimalString, size: DecimalString }).annotations({ identifier: "HistoryLevel" })
const Book = Schema.Struct({ ts: Millis, bids: Schema.Array(Level), asks: Schema.Array(Level) }).annotations({
  identifier: "HistoryBook",
  description: "The YES book (or the NO book when asked), each side best first"
})
const Change = Schema.Struct({
  ts: Millis,
  received_ms: Millis,
  kind: Schema.Literal("snapshot", "change"),
  bids: Schema.Array(Level),
  asks: Schema.Array(Level)
}).annotations({
  identifier: "HistoryChange",
  description: "A `snapshot` replaces the book; a `change` sets each level listed, and size `0` removes it"
})
const Segment = Schema.Struct({
  kind: Schema.Literal("data", "absent"),
  start_ms: Millis,
  end_ms: Millis,
  initial_book: Schema.NullOr(Book),
  changes: Schema.Array(Change),
  reason: Schema.NullOr(Schema.String)
}).annotations({
  identifier: "HistorySegment",
  description:
    "`data`: the book at `start_ms` (`initial_book`) and every change after it up to `end_ms`. `absent`: nothing " +
    "was recorded (`reason`: `not_recorded`, `reconnect`, `sequence_gap`, `venue_error`, `fell_behind`, …)"
})
const Coverage = Schema.Struct({
  kind: Schema.Literal("data", "absent"),
  start_ms: Millis,
  end_ms: Millis,
  reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "HistoryCoverage" })
const Trade = Schema.Struct({
  id: Schema.String,
  ts: Millis,
  received_ms: Millis,
  price: DecimalString,
  amount: DecimalString,
  taker_side: Schema.Literal("buy", "sell")
}).annotations({ identifier: "HistoryTrade" })

export const BookAtAnswer = Schema.Struct({
  metadata: Metadata,
  market_id: Schema.String,
  as_of_ms: Millis,
  book: Schema.NullOr(Book),
  absence_reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BookAtAnswer" })

export const BookRangeAnswer = Schema.Struct({
  metadata: Metadata,
  market_id: Schema.String,
  segments: Schema.Array(Segment),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BookRangeAnswer" })
export const TradesRangeAnswer = Schema.Struct({
  metadata: Metadata,
  market_id: Schema.String,
  trades: Schema.Array(Trade),
  coverage: Schema.Array(Coverage),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "TradesRangeAnswer" })

export const RecordedMarket = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  tick: DecimalString,
  lot: DecimalString,
  first_ms: Schema.NullOr(Millis),
  last_ms: Schema.NullOr(Millis)
}).annotations({ identifier: "RecordedMarket" })
export const MarketsAnswer = Schema.Struct({
  data: Schema.Array(RecordedMarket),
  next_cursor: Schema.Null,
  count: Schema.Int
})

export type BookAtAnswer = typeof BookAtAnswer.Type
export type BookRangeAnswer = typeof BookRangeAnswer.Type
export type TradesRangeAnswer = typeof TradesRangeAnswer.Type
export type MarketsAnswer = typeof MarketsAnswer.Type

export class HistoryError extends Data.TaggedError("HistoryError")<{
  /**
   * `invalid_request`: refused before any call; `not_found`: the host holds no such market (a 404 with its error
   * body); `no_service`: a 404 without it, so no data host answers at this URL; `http`: another error answer
   * (`code` says which); `unreachable`, `timeout`: no answer; `bad_answer`: an answer that is not the protocol's.
   */
  readonly kind: "invalid_request" | "not_found" | "no_service" | "http" | "unreachable" | "timeout" | "bad_answer"
  readonly message: string
  readonly status?: number
  readonly code?: string
  readonly retryable: boolean
}> {}

export interface HistoryClientOptions {
  readonly url: string
  readonly apiKey: string | undefined
  /** How long one request may take (default 10 s). */
  readonly timeoutMs?: number
  /** Requests a second at most (default 10). */
  readonly perSecond?: number
  /** Further tries of a retryable failure (default 3), 200 ms doubling. */
  readonly retries?: number
}

type Range = {
  readonly market_id: string
  readonly start_ms: number
  readonly end_ms: number
  readonly limit?: number
  readonly cursor?: string
}

export class HistoryClient extends Context.Tag("crossbook/HistoryClient")<
  HistoryClient,
  {
    readonly url: string
    readonly markets: Effect.Effect<MarketsAnswer, HistoryError>
    readonly bookAt: (request: {
      readonly market_id: string
      readonly as_of_ms: number
      readonly side?: "yes" | "no"
      readonly depth?: number
    }) => Effect.Effect<BookAtAnswer, HistoryError>
    readonly bookRange: (request: Range) => Effect.Effect<BookRangeAnswer, HistoryError>
    readonly tradesRange: (request: Range) => Effect.Effect<TradesRangeAnswer, HistoryError>
  }
>() {
  static layer(options: HistoryClientOptions): Layer.Layer<HistoryClient, never, HttpClient.HttpClient> {
    return Layer.effect(HistoryClient, make(options))
  }
}

const MARKET_ID = /^[a-z][a-z0-9_-]*:\S+$/

/** Ids and times checked before any call: a mistake the host would refuse costs no request. */
const checkRequest = (request: {
  readonly market_id: string
  readonly [key: string]: unknown
}): HistoryError | undefined => {
  if (!MARKET_ID.test(request.market_id) || request.market_id.length > 200) {
    return new HistoryError({
      kind: "invalid_request",
      message: `'${request.market_id}' is not a market id: give '<venue>:<native_id>', e.g. sim:<id>`,
      retryable: false
    })
  }
  for (const key of ["as_of_ms", "start_ms", "end_ms"]) {
    const value = request[key]
    if (value !== undefined && !(typeof value === "number" && Number.isSafeInteger(value) && value >= 0)) {
      return new HistoryError({
        kind: "invalid_request",
        message: `${key} must be ms since the epoch`,
        retryable: false
      })
    }
  }
  if (typeof request["start_ms"] === "number" && typeof request["end_ms"] === "number") {
    if (request["end_ms"] < request["start_ms"]) {
      return new HistoryError({ kind: "invalid_request", message: "the end is before the start", retryable: false })
    }
  }
  return undefined
}

const RETRYABLE_STATUS = new Set([429, 502, 503, 504])
const decodeError = Schema.decodeUnknownOption(ErrorBody)

const make = (options: HistoryClientOptions) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const base = options.url.replace(/\/+$/, "")
    const spacingMs = 1000 / (options.perSecond ?? 10)
    const timeout = Duration.millis(options.timeoutMs ?? 10_000)
    const gate = yield* Effect.makeSemaphore(1)
    let nextAt = 0

    /** Waits for this request's turn: at most `perSecond` requests leave in any second. */
    const pace = gate.withPermits(1)(
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const at = Math.max(now, nextAt)
        nextAt = at + spacingMs
        if (at > now) yield* Effect.sleep(Duration.millis(at - now))
      })
    )

    const once = <A, I>(method: "GET" | "POST", path: string, schema: Schema.Schema<A, I>, body?: unknown) =>
      Effect.gen(function* () {
        yield* pace
        let request =
          method === "GET" ? HttpClientRequest.get(`${base}${path}`) : HttpClientRequest.post(`${base}${path}`)
        if (body !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, body)
        if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
        const response = yield* client.execute(request).pipe(
          Effect.mapError(
            (error) =>
              new HistoryError({
                kind: "unreachable",
                message: `cannot reach the data host at ${base} (${error.message.split("\n")[0]}): start it with \`crossbook data serve\`, or set SERVICE_DATA_URL`,
                retryable: true
              })
          )
        )
        const text = yield* response.text.pipe(
          Effect.mapError(
            () =>
              new HistoryError({ kind: "unreachable", message: `the answer from ${base} broke off`, retryable: true })
          )
        )
        let json: unknown = undefined
        try {
          json = JSON.parse(text)
        } catch {
          // not JSON: said below
        }
        if (response.status >= 200 && response.status < 300) {
          return yield* Schema.decodeUnknown(schema)(json).pipe(
            Effect.mapError(
              () =>
                new HistoryError({
                  kind: "bad_answer",
                  message: `${base}${path} answered ${response.status} with a body that is not the history protocol's`,
                  status: response.status,
                  retryable: false
                })
            )
          )
        }
        const error = decodeError(json)
        if (error._tag === "None") {
          return yield* Effect.fail(
            new HistoryError({
              kind: response.status === 404 ? "no_service" : "http",
              message:
                response.status === 404
                  ? `no data service at ${base}: ${path} answered 404 without the service's error body; check SERVICE_DATA_URL (or the URL given to \`crossbook login\`)`
                  : `${base}${path} answered ${response.status} ${text.slice(0, 120)}`.trim(),
              status: response.status,
              retryable: RETRYABLE_STATUS.has(response.status)
            })
          )
        }
        const e = error.value.error
        return yield* Effect.fail(
          new HistoryError({
            kind: response.status === 404 && e.code === "market_not_found" ? "not_found" : "http",
            message: `${e.code}: ${e.message}`,
            status: response.status,
            code: e.code,
            retryable: e.details.retryable || RETRYABLE_STATUS.has(response.status)
          })
        )
      }).pipe(
        Effect.scoped,
        Effect.timeoutFail({
          duration: timeout,
          onTimeout: () =>
            new HistoryError({
              kind: "timeout",
              message: `the data host at ${base} did not answer within ${Duration.toMillis(timeout)} ms`,
              retryable: true
            })
        })
      )

    const call = <A, I>(method: "GET" | "POST", path: string, schema: Schema.Schema<A, I>, body?: unknown) =>
      once(method, path, schema, body).pipe(
        Effect.retry({
          while: (error) => error.retryable,
          schedule: Schedule.exponential(Duration.millis(200)),
          times: options.retries ?? 3
        })
      )

    const checked =
      <B extends { readonly market_id: string }, A, I>(path: string, schema: Schema.Schema<A, I>) =>
      (body: B) => {
        const refused = checkRequest(body)
        return refused === undefined ? call("POST", path, schema, body) : Effect.fail(refused)
      }

    return {
      url: base,
      markets: call("GET", "/v1/markets", MarketsAnswer),
      bookAt: checked("/v1/order-book/at", BookAtAnswer),
      bookRange: checked("/v1/order-book/range", BookRangeAnswer),
      tradesRange: checked("/v1/trades/range", TradesRangeAnswer)
    }
  })
