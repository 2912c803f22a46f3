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
import { Millis, strict, Text } from "../Http/Schemas.ts"
import { BookAtAnswer, BookRangeAnswer, MarketsAnswer, TradesRangeAnswer } from "../Services/HistoryClient.ts"
import { VERSION } from "../Version.ts"
import type { Session } from "./Keys.ts"
import { MAX_LIMIT } from "./History.ts"

const MarketId = Schema.String.pipe(Schema.maxLength(200), Schema.pattern(/^[a-z][a-z0-9_-]*:\S+$/)).annotations({
  description: "`<venue>:<native_id>`"
})

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
