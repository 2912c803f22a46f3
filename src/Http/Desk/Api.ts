/** The trading desk under /trading: orders, fills, positions, balances, P&L, fair values, risk rules, halt. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiErrorWire } from "../../Domain/Errors.ts"
import { PLAIN_TYPES, STATUSES } from "../../Domain/Order.ts"
import { Side, TimeInForce } from "../../Domain/OrderRequest.ts"
import { COMPLEX_TYPES } from "../../Engine/Registry.ts"
import { PlaceOrder } from "../../Orders.ts"
import { RiskRules } from "../../Trading/Risk.ts"
import { Authorization } from "../Security.ts"
import { DecimalString, Millis, Page, PageParams, strict, Text } from "../Schemas.ts"

const Account = Schema.String.annotations({ description: "`<venue>:<name>`; default the venue's only account" })

export const OrderRecord = Schema.Struct({
  id: Schema.String,
  client_order_id: Schema.String,
  venue: Schema.String,
  account: Schema.Struct({ venue: Schema.String, name: Schema.String, subaccount: Schema.NullOr(Schema.String) }),
  market_id: Schema.String,
  side: Side,
  // Any type the engine was given; the document lists the plain and the built-in ones.
  type: Schema.String.annotations({ jsonSchema: { type: "string", enum: [...PLAIN_TYPES, ...COMPLEX_TYPES] } }),
  time_in_force: TimeInForce,
  status: Schema.Literal(...STATUSES),
  held_by: Schema.Literal("venue", "engine"),
  price: Schema.NullOr(DecimalString),
  stop_price: Schema.NullOr(DecimalString),
  amount: DecimalString,
  filled: DecimalString,
  remaining: DecimalString,
  average_price: Schema.NullOr(DecimalString),
  cost: Schema.NullOr(DecimalString),
  fee: Schema.NullOr(DecimalString),
  fee_currency: Schema.String,
  last_fill_price: Schema.NullOr(DecimalString),
  last_fill_amount: Schema.NullOr(DecimalString),
  post_only: Schema.Boolean,
  reduce_only: Schema.Boolean,
  expires_at: Schema.NullOr(Millis),
  created_at: Millis,
  updated_at: Millis,
  parent_id: Schema.NullOr(Schema.String),
  queue_priority_preserved: Schema.NullOr(Schema.Boolean),
  book: Schema.String,
  trader: Schema.String,
  tags: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  info: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}).annotations({ identifier: "Order" })

export const FillRecord = Schema.Struct({
  id: Schema.String,
  order_id: Schema.String,
  client_order_id: Schema.String,
  parent_id: Schema.NullOr(Schema.String),
  account: Schema.String,
  market_id: Schema.String,
  side: Side,
  price: DecimalString,
  amount: DecimalString,
  fee: DecimalString,
  liquidity: Schema.Literal("maker", "taker"),
  trade_id: Schema.String,
  book: Schema.String,
  ts: Millis
}).annotations({ identifier: "Fill" })

export const PositionRecord = Schema.Struct({
  account: Schema.String,
  market_id: Schema.String,
  contracts: DecimalString.annotations({ description: "Net YES contracts; negative holds NO" }),
  side: Schema.NullOr(Schema.Literal("yes", "no")),
  average_price: Schema.NullOr(DecimalString),
  mark: Schema.NullOr(DecimalString),
  mark_source: Schema.NullOr(Schema.Literal("fair_value", "mid")),
  realized_pnl: DecimalString,
  unrealized_pnl: Schema.NullOr(DecimalString),
  fees: DecimalString,
  settled: Schema.NullOr(
    Schema.Struct({
      payout: DecimalString.annotations({ description: "What one YES contract paid; a NO contract paid 1 − payout" }),
      contracts: DecimalString.annotations({ description: "The contracts settled, netted on the YES leg" }),
      realized_pnl: DecimalString.annotations({ description: "The part of realized_pnl the settlement booked" }),
      ts: Millis,
      redeemable: Schema.Boolean.annotations({
        description:
          "The payout waits for the holder to redeem the winning tokens at the venue (Polymarket). False where the venue pays on its own, for a losing side and once redeemed"
      }),
      redeemable_amount: DecimalString.annotations({
        description: "What redeeming pays: payout × contracts of the side held; 0 when not redeemable"
      }),
      redeemed_at: Schema.NullOr(Millis).annotations({
        description: "When the venue was first seen holding none of the tokens any more (redeemed); null until then"
      })
    })
  ).annotations({ description: "Set once the market resolved and the position closed at its payout" })
}).annotations({ identifier: "Position" })

export const BalanceRecord = Schema.Struct({
  account: Schema.String,
  currency: Schema.String,
  cash: Schema.NullOr(DecimalString),
  locked: Schema.NullOr(DecimalString),
  available: Schema.NullOr(DecimalString)
}).annotations({ identifier: "Balance" })

export const PnlRecord = Schema.Struct({
  level: Schema.Literal("market", "book", "account"),
  key: Schema.String,
  realized: DecimalString,
  unrealized: Schema.NullOr(DecimalString),
  fees: DecimalString,
  net: Schema.NullOr(DecimalString),
  settled: DecimalString.annotations({ description: "The part of realized booked by markets that resolved" })
}).annotations({ identifier: "Pnl" })

export const FairValues = Schema.Struct({
  values: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({ value: DecimalString, updated_at: Millis })
  })
}).annotations({ identifier: "FairValues" })

export const RiskRecord = Schema.Struct({
  version: Schema.Int,
  updated_at: Schema.NullOr(Millis),
  updated_by: Schema.NullOr(Schema.String),
  rules: RiskRules
}).annotations({ identifier: "Risk" })

export const HaltRecord = Schema.Struct({
  halted: Schema.Boolean,
  reason: Schema.NullOr(Schema.String),
  scope: Schema.NullOr(Schema.String),
  policy: Schema.NullOr(Schema.Literal("cancel", "hold")),
  at: Schema.NullOr(Millis),
  by: Schema.NullOr(Schema.String),
  canceled: Schema.Int
}).annotations({ identifier: "Halt" })

const AccountParam = { account: Schema.optional(Account) }
const OrderPath = Schema.Struct({ id: Schema.String })
const needs = (permission: string) => `Needs \`${permission}\` on the account (\`account\`, else the venue's only one).`

export const DeskApi = HttpApiGroup.make("desk")
  .add(
    HttpApiEndpoint.post("createOrder", "/orders")
      .setPayload(PlaceOrder)
      .addSuccess(OrderRecord, { status: 201 })
      .addSuccess(OrderRecord.annotations({ description: "The order this client_order_id placed already" }))
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 409 })
      .addError(ApiErrorWire, { status: 429 })
      .addError(ApiErrorWire, { status: 501 })
      .addError(ApiErrorWire, { status: 502 })
      .addError(ApiErrorWire, { status: 504 })
      .annotate(OpenApi.Description, needs("trade"))
  )
  .add(
    HttpApiEndpoint.get("listOrders", "/orders")
      .setUrlParams(
        Schema.Struct({
          status: Schema.optional(
            Text(200).annotations({
              description:
                "Comma list of statuses, or `all`. Default: the live orders (not closed, canceled, rejected or " +
                "expired); with `parent_id`, every child of that parent"
            })
          ),
          venue: Schema.optional(Schema.String),
          market_id: Schema.optional(Schema.String),
          parent_id: Schema.optional(Schema.String),
          book: Schema.optional(Schema.String),
          ...AccountParam,
          ...PageParams
        })
      )
      .addSuccess(Page(OrderRecord))
      .annotate(OpenApi.Description, needs("view") + " Newest first.")
  )
  .add(
    HttpApiEndpoint.get("getOrder", "/orders/:id")
      .setPath(OrderPath)
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(OrderRecord)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, needs("view"))
  )
  .add(
    HttpApiEndpoint.patch("amendOrder", "/orders/:id")
      .setPath(OrderPath)
      .setUrlParams(Schema.Struct(AccountParam))
      .setPayload(
        Schema.Struct({
          price: Schema.optional(DecimalString),
          amount: Schema.optional(DecimalString),
          expires_at: Schema.optional(Millis)
        }).annotations(strict)
      )
      .addSuccess(OrderRecord)
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 502 })
      .addError(ApiErrorWire, { status: 504 })
      .annotate(OpenApi.Description, needs("trade") + " `queue_priority_preserved` tells what the venue did.")
  )
  .add(
    HttpApiEndpoint.del("cancelOrder", "/orders/:id")
      .setPath(OrderPath)
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(OrderRecord)
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 502 })
      .addError(ApiErrorWire, { status: 504 })
      .annotate(OpenApi.Description, needs("trade"))
  )
  .add(
    HttpApiEndpoint.del("cancelAllOrders", "/orders")
      .setUrlParams(
        Schema.Struct({
          venue: Schema.optional(Schema.String),
          market_id: Schema.optional(Schema.String),
          book: Schema.optional(Schema.String),
          ...AccountParam
        })
      )
      .addSuccess(Schema.Struct({ canceled: Schema.Int }))
      .annotate(OpenApi.Description, needs("trade") + " Answers how many were canceled.")
  )
  .add(
    HttpApiEndpoint.get("listFills", "/fills")
      .setUrlParams(
        Schema.Struct({
          since: Schema.optional(Schema.NumberFromString.pipe(Schema.int())),
          market_id: Schema.optional(Schema.String),
          order_id: Schema.optional(Schema.String),
          ...AccountParam,
          ...PageParams
        })
      )
      .addSuccess(Page(FillRecord))
      .annotate(OpenApi.Description, needs("view") + " Newest first.")
  )
  .add(
    HttpApiEndpoint.get("positions", "/positions")
      .setUrlParams(Schema.Struct({ ...AccountParam, ...PageParams }))
      .addSuccess(Page(PositionRecord))
      .annotate(OpenApi.Description, needs("view") + " Netted on the YES leg, marked by fair value else mid.")
  )
  .add(
    HttpApiEndpoint.get("balances", "/balances")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(Page(BalanceRecord))
      .annotate(OpenApi.Description, needs("view") + " null means the venue does not say.")
  )
  .add(
    HttpApiEndpoint.get("pnl", "/pnl")
      .setUrlParams(
        Schema.Struct({ level: Schema.optional(Schema.Literal("market", "book", "account")), ...AccountParam })
      )
      .addSuccess(Page(PnlRecord))
      .annotate(OpenApi.Description, needs("view") + " unrealized is null when a position has no mark.")
  )
  .add(
    HttpApiEndpoint.get("getFairValues", "/fair-values")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(FairValues)
      .annotate(OpenApi.Description, needs("view"))
  )
  .add(
    HttpApiEndpoint.put("putFairValues", "/fair-values")
      .setUrlParams(Schema.Struct(AccountParam))
      .setPayload(
        Schema.Struct({
          values: Schema.Record({ key: Text(200), value: Schema.NullOr(DecimalString) }).annotations({
            description: "market_id → fair value; null removes it"
          })
        }).annotations(strict)
      )
      .addSuccess(FairValues)
      .annotate(OpenApi.Description, needs("trade"))
  )
  .add(
    HttpApiEndpoint.get("getRisk", "/risk")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(RiskRecord)
      .annotate(OpenApi.Description, needs("view"))
  )
  .add(
    HttpApiEndpoint.put("putRisk", "/risk")
      .setUrlParams(Schema.Struct(AccountParam))
      .setPayload(RiskRules.annotations(strict))
      .addSuccess(RiskRecord)
      .annotate(OpenApi.Description, needs("manage_credentials") + " Replaces every rule; the version goes up by one.")
  )
  .add(
    HttpApiEndpoint.post("halt", "/halt")
      .setUrlParams(Schema.Struct(AccountParam))
      .setPayload(
        Schema.Struct({
          reason: Text(500).pipe(Schema.minLength(1)),
          scope: Schema.optionalWith(Text(100), { default: () => "*" }),
          policy: Schema.optionalWith(Schema.Literal("cancel", "hold"), { default: () => "hold" as const })
        }).annotations(strict)
      )
      .addSuccess(HaltRecord)
      .annotate(OpenApi.Description, needs("trade") + " `cancel` pulls resting orders in scope; `hold` leaves them.")
  )
  .add(
    HttpApiEndpoint.post("resume", "/resume")
      .setUrlParams(Schema.Struct(AccountParam))
      .addSuccess(HaltRecord)
      .annotate(OpenApi.Description, needs("trade"))
  )
  .middleware(Authorization)
  .addError(ApiErrorWire, { status: 401 })
  .addError(ApiErrorWire, { status: 403 })
  .prefix("/trading")
