/** Routes under /trading: each needs a bearer token and the permission named in its description. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiErrorWire } from "../../Domain/Errors.ts"
import { PERMISSIONS } from "../../Services/Auth.ts"
import { Authorization } from "../Security.ts"
import { AccountInput, Millis, Page, PageParams, strict, Text } from "../Schemas.ts"

const Permission = Schema.Literal(...PERMISSIONS)
const Account = Schema.String.annotations({ description: "`<venue>:<name>` or `*`" })
const AccountParam = { account: Schema.optional(Account) }

export const MeRecord = Schema.Struct({
  user_id: Schema.String,
  name: Schema.String,
  token_id: Schema.String,
  accounts: Schema.Array(Schema.Struct({ account: Account, permissions: Schema.Array(Permission) }))
}).annotations({ identifier: "Me" })

export const AccountRecord = Schema.Struct({
  account: Schema.String,
  venue: Schema.String,
  name: Schema.String,
  permissions: Schema.Array(Permission)
}).annotations({ identifier: "Account" })

export const HeartbeatRecord = Schema.Struct({
  /** Whether the keep-alive is being sent now (some order rests). */
  active: Schema.Boolean,
  /** `ok` while the last one succeeded; `failing` after a failure (resting orders may have been canceled). */
  state: Schema.Literal("ok", "failing"),
  last_ok_at: Schema.NullOr(Millis),
  last_error: Schema.NullOr(Schema.String),
  last_error_at: Schema.NullOr(Millis)
}).annotations({ identifier: "Heartbeat" })

export const StreamRecord = Schema.Struct({
  channel: Schema.String,
  /** `live`, `stale` (silent past its bound: being reopened), `connecting`, `down`. */
  state: Schema.Literal("live", "stale", "connecting", "down"),
  last_message_at: Schema.NullOr(Millis),
  /** Milliseconds since the stream last heard from the venue (a message or a PONG). */
  last_message_age_ms: Schema.NullOr(Schema.Number),
  reconnects: Schema.Int
}).annotations({ identifier: "Stream" })

export const VenueStateRecord = Schema.Struct({
  streams: Schema.Array(StreamRecord),
  /** Placements sent and not yet answered. */
  in_flight: Schema.Int,
  /** Orders whose placement's answer was lost, looked up until the venue's record settles them. */
  unknown_orders: Schema.Int,
  /** Calls waiting or running in the venue's lanes. */
  queued: Schema.Int,
  last_reconcile_at: Schema.NullOr(Millis),
  last_reconcile_error: Schema.NullOr(Schema.String),
  /** What the last reconcile found that the desk did not know, and what it did. */
  drift: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  drift_total: Schema.Int
}).annotations({ identifier: "VenueState" })

export const StatusRecord = Schema.Struct({
  running: Schema.Boolean,
  halted: Schema.Boolean,
  open_orders: Schema.Int,
  waiting_parents: Schema.Int,
  journal_seq: Schema.Int,
  venues: Schema.Array(Schema.String),
  /** Per venue that needs a keep-alive while orders rest (Polymarket): whether the last one succeeded. */
  heartbeats: Schema.Record({ key: Schema.String, value: HeartbeatRecord }),
  /** Per venue that answers over a network: its streams, orders in flight or of unknown outcome, its last reconcile. */
  venue_state: Schema.Record({ key: Schema.String, value: VenueStateRecord }),
  time: Millis
}).annotations({ identifier: "Status" })

export const TokenRecord = Schema.Struct({
  id: Schema.String,
  user: Schema.String,
  user_id: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  created_at: Millis,
  last_used_at: Schema.NullOr(Millis),
  revoked_at: Schema.NullOr(Millis)
}).annotations({ identifier: "Token" })

export const IssuedToken = Schema.Struct({
  ...TokenRecord.fields,
  token: Schema.String.annotations({ description: "The secret, shown this once" })
}).annotations({ identifier: "IssuedToken" })

export const GrantRecord = Schema.Struct({
  user: Schema.String,
  user_id: Schema.String,
  account: Account,
  permission: Permission,
  created_at: Millis
}).annotations({ identifier: "Grant" })

const GrantParams = Schema.Struct({
  user: Text(100).pipe(Schema.minLength(1)),
  account: Account,
  permission: Permission
})

const GrantBody = Schema.Struct({
  user: Text(100).pipe(Schema.minLength(1)),
  account: AccountInput,
  permission: Permission
}).annotations(strict)

export const AuditRecord = Schema.Struct({
  id: Schema.Int,
  ts: Millis,
  actor: Schema.Struct({ user: Schema.String, user_id: Schema.String, token_id: Schema.NullOr(Schema.String) }),
  request: Schema.Struct({ method: Schema.String, path: Schema.String }),
  action: Schema.String,
  subject: Schema.String,
  before: Schema.Unknown,
  after: Schema.Unknown
}).annotations({ identifier: "AuditEntry" })

const needs = (permission: string, on: string) => `Needs \`${permission}\` on ${on}.`

export const TradingApi = HttpApiGroup.make("trading")
  .add(HttpApiEndpoint.get("me", "/me").addSuccess(MeRecord).annotate(OpenApi.Description, "Any valid token."))
  .add(
    HttpApiEndpoint.get("accounts", "/accounts")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(Page(AccountRecord))
      .annotate(OpenApi.Description, needs("view", "the account (default: the venue's only account)"))
  )
  .add(
    HttpApiEndpoint.get("status", "/status")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(StatusRecord)
      .annotate(OpenApi.Description, needs("view", "the account"))
  )
  .add(
    HttpApiEndpoint.post("issueKey", "/keys")
      .setPayload(
        Schema.Struct({
          user: Schema.optional(Text(100).pipe(Schema.minLength(1))).annotations({
            description: "User the token speaks for; default the caller's own"
          }),
          name: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100)))
        }).annotations(strict)
      )
      .addSuccess(IssuedToken, { status: 201 })
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, needs("manage_credentials", "`*`") + " The secret is in this answer only.")
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/keys")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(Page(TokenRecord))
      .annotate(OpenApi.Description, needs("manage_credentials", "`*`") + " Never shows a secret.")
  )
  .add(
    HttpApiEndpoint.del("revokeKey", "/keys/:id")
      .setPath(Schema.Struct({ id: Schema.String }))
      .addSuccess(TokenRecord)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, needs("manage_credentials", "`*`"))
  )
  .add(
    HttpApiEndpoint.get("listGrants", "/grants")
      .setUrlParams(Schema.Struct({ user: Schema.optional(Schema.String), ...AccountParam, ...PageParams }))
      .addSuccess(Page(GrantRecord))
      .annotate(OpenApi.Description, needs("manage_members", "the `account` filter (default `*`)"))
  )
  .add(
    HttpApiEndpoint.post("addGrant", "/grants")
      .setPayload(GrantBody)
      .addSuccess(GrantRecord, { status: 201 })
      .addSuccess(GrantRecord.annotations({ description: "The grant existed already" }))
      .annotate(OpenApi.Description, needs("manage_members", "the grant's account") + " Creates the user if needed.")
  )
  .add(
    HttpApiEndpoint.del("removeGrant", "/grants")
      .setUrlParams(GrantParams)
      .addSuccess(GrantRecord)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, needs("manage_members", "the grant's account"))
  )
  .add(
    HttpApiEndpoint.get("audit", "/audit")
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(Page(AuditRecord))
      .annotate(OpenApi.Description, needs("manage_members", "`*`") + " Newest first; the log is append-only.")
  )
  .middleware(Authorization)
  .addError(ApiErrorWire, { status: 401 })
  .addError(ApiErrorWire, { status: 403 })
  .prefix("/trading")
  .annotate(OpenApi.Description, "Trading and control; every route needs `Authorization: Bearer <token>`")
