/** The checks a complex order passes before the engine takes it: amounts, prices, flags, its type's params, the halt. */
import { type Context, Effect, ParseResult, Schema } from "effect"
import { ApiError, type FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Market } from "../Domain/Market.ts"
import { type AccountRequest, checkOrderFields } from "../Domain/OrderRequest.ts"
import type { Desk } from "../Trading/Desk.ts"
import type { ParentSpec } from "./Core.ts"
import type { OrderType } from "./OrderType.ts"

/**
 * Checks a new parent against its market and its type; the answer is its spec (without an id yet) and its typed
 * params. Field errors come together in one 400; params that do not decode (unknown keys included) are a 422.
 */
export const checkParent = Effect.fnUntraced(function* (
  kind: OrderType,
  input: AccountRequest,
  market: Market,
  venueId: string,
  now: number,
  desk: Pick<Context.Tag.Service<typeof Desk>, "haltedFor">,
  postOnlyTypes: ReadonlyArray<string>
) {
  const fields = checkOrderFields(input, market, now)
  const errors: Array<FieldError> = "amount" in fields ? [] : [...fields]
  if (input.post_only === true && kind.postOnly !== true) {
    errors.push({
      field: "post_only",
      message: `post_only is valid only on ${listed(postOnlyTypes)}, not on ${input.type}`
    })
  }
  if (errors.length > 0 || !("amount" in fields)) return yield* Effect.fail(ApiError.validation(errors))
  const params = yield* decodeParams(kind, input.params ?? {})
  const spec: ParentSpec = {
    id: "",
    side: input.side,
    amount: fields.amount,
    price: fields.price,
    stopPrice: fields.stopPrice,
    timeInForce: input.time_in_force ?? "gtc",
    postOnly: input.post_only ?? false,
    reduceOnly: input.reduce_only ?? false,
    tick: market.tick,
    lot: market.lot,
    createdAt: now
  }
  const checked = kind.validate(spec, params)
  if ("errors" in checked) return yield* Effect.fail(ApiError.validation(checked.errors))
  yield* notHalted(desk, venueId)
  return { spec, params: checked.params }
})

/** The type's params as sent, decoded with its schema: every problem named by its path, in one 422. */
const decodeParams = (kind: OrderType, params: unknown) =>
  Schema.decodeUnknown(kind.params, { errors: "all", onExcessProperty: "error" })(params).pipe(
    Effect.mapError((e) =>
      ApiError.validation(
        ParseResult.ArrayFormatter.formatErrorSync(e).map((issue) => ({
          field: ["params", ...issue.path.map(String)].join("."),
          message: issue.message
        })),
        undefined,
        422
      )
    )
  )

/** "a, b and c". */
const listed = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? (names[0] ?? "no type") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

const notHalted = (desk: Pick<Context.Tag.Service<typeof Desk>, "haltedFor">, venueId: string) =>
  Effect.flatMap(desk.haltedFor(venueId), (halt) =>
    halt === undefined
      ? Effect.void
      : Effect.fail(
          new ApiError({
            status: 409,
            code: "risk_rejected",
            message: `trading is halted (${halt.scope}): ${halt.reason}`,
            details: { venue: null, retryable: false, rule: "kill_switch" }
          })
        )
  )

/** A member of a bucket order as checked: its market, and the flip and account the bucket gives it. */
export interface CheckedMember {
  readonly venueId: string
  readonly market: Market
  readonly flip: boolean
  readonly account: string
}

/**
 * Checks a bucket order: a positive amount every member's lot divides, a worst price in bucket terms inside (0, 1),
 * its params, and no halt on any member's venue.
 */
export const checkBucketParent = Effect.fnUntraced(function* (
  kind: OrderType,
  input: AccountRequest,
  members: ReadonlyArray<CheckedMember>,
  now: number,
  desk: Pick<Context.Tag.Service<typeof Desk>, "haltedFor">
) {
  const errors: Array<FieldError> = []
  const lot = members.reduce((l, m) => F.max(l, m.market.lot), F.ZERO)
  const amount = F.parse(input.amount)
  if (amount === undefined || amount <= 0 || members.some((m) => !F.isMultipleOf(amount, m.market.lot))) {
    errors.push({ field: "amount", message: `must be a positive multiple of every member's lot (${F.format(lot)})` })
  }
  const price = input.price === undefined ? undefined : F.parse(input.price)
  if (price === undefined || price <= 0 || price >= F.ONE) {
    errors.push({ field: "price", message: "the worst price accepted, in bucket terms after fees: above 0, below 1" })
  }
  for (const [field, given] of [
    ["stop_price", input.stop_price],
    ["post_only", input.post_only],
    ["reduce_only", input.reduce_only],
    ["expires_at", input.expires_at]
  ] as const) {
    if (given !== undefined && given !== false) errors.push({ field, message: "a bucket order does not take it" })
  }
  if (errors.length > 0) return yield* Effect.fail(ApiError.validation(errors))
  const params = yield* decodeParams(kind, input.params ?? {})
  const spec: ParentSpec = {
    id: "",
    side: input.side,
    amount: amount!,
    price: price!,
    stopPrice: null,
    timeInForce: "gtc",
    postOnly: false,
    reduceOnly: false,
    tick: members.reduce((t, m) => F.min(t, m.market.tick), F.ONE),
    lot,
    createdAt: now
  }
  const checked = kind.validate(spec, {
    ...(params as object),
    members: members.map((m) => ({ market_id: `${m.venueId}:${m.market.nativeId}`, flip: m.flip }))
  })
  if ("errors" in checked) return yield* Effect.fail(ApiError.validation(checked.errors))
  for (const venueId of new Set(members.map((m) => m.venueId))) yield* notHalted(desk, venueId)
  return { spec, params: checked.params }
})
