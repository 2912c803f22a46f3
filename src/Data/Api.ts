/** The data host's HTTP API: history (API key), login and keys (session), and its own name and health. */
import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import { Context, Schema } from "effect"
import { ApiErrorWire } from "../Domain/Errors.ts"
import { DecimalString, Millis, strict, Text } from "../Http/Schemas.ts"
import { VERSION } from "../Version.ts"
import type { Session } from "./Keys.ts"
import { MAX_LIMIT } from "./History.ts"

const MarketId = Schema.String.pipe(Schema.maxLength(200), Schema.pattern(/^[a-z][a-z0-9_-]*:\S+$/)).annotations({
  description: "`<venue>:<native_id>`"
})

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

const Limit = Schema.optional(
  Schema.Int.pipe(Schema.between(1, MAX_LIMIT)).annotations({
    description: "Changes (or trades) per page, default 1000"
  })
)
const Cursor = Schema.optional(Schema.String.annotations({ description: "next_cursor of the previous page" }))

export const BookAtRequest = Schema.Struct({
  market_id: MarketId,
  as_of_ms: Millis,
  side: Schema.optional(Schema.Literal("yes", "no")),
  depth: Schema.optional(Schema.Int.pipe(Schema.between(1, 1000)))
}).annotations({ identifier: "BookAtRequest", ...strict })
export const BookAtAnswer = Schema.Struct({
  metadata: Metadata,
  market_id: Schema.String,
  as_of_ms: Millis,
  book: Schema.NullOr(Book),
  absence_reason: Schema.NullOr(Schema.String)
}).annotations({ identifier: "BookAtAnswer" })

export const RangeRequest = Schema.Struct({
  market_id: MarketId,
  start_ms: Millis,
  end_ms: Millis,
  limit: Limit,
  cursor: Cursor
}).annotations({ identifier: "RangeRequest", ...strict })
export const TapeRangeRequest = Schema.Struct({
  market_id: MarketId,
  start_ms: Millis,
  end_ms: Millis
}).annotations({ identifier: "TapeRangeRequest", ...strict })
/** The media type of a columnar tape: an Arrow IPC file. */
export const ARROW_FILE = "application/vnd.apache.arrow.file"
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

export const KeyRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  created_at: Millis,
  last_used_at: Schema.NullOr(Millis),
  revoked_at: Schema.NullOr(Millis)
}).annotations({ identifier: "ApiKey" })
export const CreatedKey = Schema.Struct({ key: Schema.String, record: KeyRecord }).annotations({
  identifier: "CreatedApiKey",
  description: "`key` is the secret, in this answer only; send it as `Authorization: Bearer <key>`"
})
export const LoginAnswer = Schema.Struct({ session: Schema.String, user: Schema.String, expires_at: Millis })

/** The request carries a valid API key. */
export class ApiKeyAuth extends HttpApiMiddleware.Tag<ApiKeyAuth>()("crossbook/data/ApiKeyAuth", {
  failure: ApiErrorWire,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export class CurrentSession extends Context.Tag("crossbook/data/CurrentSession")<CurrentSession, Session>() {}

/** The request carries a session from `POST /v1/login`. */
export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("crossbook/data/SessionAuth", {
  failure: ApiErrorWire,
  provides: CurrentSession,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const HostRecord = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  links: Schema.Record({ key: Schema.String, value: Schema.String })
})

const HostApi = HttpApiGroup.make("host")
  .add(HttpApiEndpoint.get("root", "/").addSuccess(HostRecord))
  .add(
    HttpApiEndpoint.get("health", "/health").addSuccess(
      Schema.Struct({ status: Schema.Literal("ok"), version: Schema.String })
    )
  )

const HistoryApi = HttpApiGroup.make("history")
  .add(HttpApiEndpoint.get("markets", "/v1/markets").addSuccess(MarketsAnswer))
  .add(
    HttpApiEndpoint.post("bookAt", "/v1/order-book/at")
      .setPayload(BookAtRequest)
      .addSuccess(BookAtAnswer)
      .addError(ApiErrorWire, { status: 404 })
  )
  .add(
    HttpApiEndpoint.post("bookRange", "/v1/order-book/range")
      .setPayload(RangeRequest)
      .addSuccess(BookRangeAnswer)
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 413 })
  )
  .add(
    HttpApiEndpoint.post("tradesRange", "/v1/trades/range")
      .setPayload(RangeRequest)
      .addSuccess(TradesRangeAnswer)
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 413 })
  )
  .add(
    HttpApiEndpoint.post("tapeRange", "/v1/tape/range")
      .setPayload(TapeRangeRequest)
      .addSuccess(HttpApiSchema.Uint8Array({ contentType: ARROW_FILE }))
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 413 })
      .addError(ApiErrorWire, { status: 501 })
      .annotate(
        OpenApi.Description,
        "A market's range as a columnar tape (an Arrow IPC file, docs/tapes.md): its books and trades, gaps where the " +
          "recording has them."
      )
  )
  .addError(ApiErrorWire, { status: 400 })
  .addError(ApiErrorWire, { status: 401 })
  .middleware(ApiKeyAuth)
  .annotate(
    OpenApi.Description,
    "Recorded order books and trades; `Authorization: Bearer <API key>`. Gaps are explicit: absent segments and " +
      "coverage rows. A range longer than the host serves answers 413 `result_too_large`."
  )

const LoginApi = HttpApiGroup.make("login")
  .add(
    HttpApiEndpoint.post("login", "/v1/login")
      .setPayload(Schema.Struct({ code: Text(200) }).annotations(strict))
      .addSuccess(LoginAnswer)
      .addError(ApiErrorWire, { status: 401 })
  )
  .annotate(OpenApi.Description, "Spend a one-time code from `crossbook data invite` on a session")

const KeysApi = HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("createKey", "/v1/keys")
      .setPayload(Schema.Struct({ name: Schema.optional(Text(128)) }).annotations(strict))
      .addSuccess(CreatedKey, { status: 201 })
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/v1/keys").addSuccess(
      Schema.Struct({ data: Schema.Array(KeyRecord), next_cursor: Schema.Null, count: Schema.Int })
    )
  )
  .add(
    HttpApiEndpoint.del("revokeKey", "/v1/keys/:id")
      .setPath(Schema.Struct({ id: Text(64) }))
      .addSuccess(KeyRecord)
      .addError(ApiErrorWire, { status: 404 })
  )
  .addError(ApiErrorWire, { status: 401 })
  .middleware(SessionAuth)
  .annotate(OpenApi.Description, "API keys of the session's user; `Authorization: Bearer <session>`")

export class DataApi extends HttpApi.make("crossbook-data")
  .add(HostApi)
  .add(HistoryApi)
  .add(LoginApi)
  .add(KeysApi)
  .addError(ApiErrorWire, { status: 400 })
  .addError(ApiErrorWire, { status: 422 })
  .addError(ApiErrorWire, { status: 500 })
  .annotate(OpenApi.Title, "crossbook data host")
  .annotate(OpenApi.Version, VERSION)
  .annotate(
    OpenApi.Description,
    "History of order books and trades recorded by `crossbook record`, with login and API keys. Every non-2xx " +
      "answer has the error body `{error: {code, message, details}}`."
  ) {}
