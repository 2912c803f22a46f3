/** The checks a complex order passes before the engine takes it: amounts, prices, flags, its type's params, the halt. */
import { type Context, Effect, ParseResult, Schema } from "effect"
import { ApiError, type FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Market, Side } from "../Domain/Market.ts"
import type { ComplexType, TimeInForce } from "../Domain/Order.ts"
import type { Desk } from "../Trading/Desk.ts"
import type { Core, ParentSpec } from "./Core.ts"
import * as Id from "../Domain/Ids.ts"

/** One complex order type: its wire params, its checks, its decision core. */
export interface OrderKind<P = any, S = any> {
  readonly params: Schema.Schema<any, any, never>
  readonly validate: (
    spec: ParentSpec,
    params: any
  ) => { readonly params: P } | { readonly errors: ReadonlyArray<FieldError> }
  readonly core: Core<P, S>
  /** Which children's fills make the parent's `filled` (default: all of them). */
  readonly counts?: (role: string, params: P) => boolean
}

export type Registry = Readonly<Record<ComplexType, OrderKind>>

export interface CreateInput {
  readonly account: string
  readonly marketId: Id.MarketId
  readonly side: Side
  readonly type: ComplexType
  readonly amount: string
  readonly price?: string | undefined
  readonly stopPrice?: string | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: number | undefined
  readonly postOnly?: boolean | undefined
  readonly reduceOnly?: boolean | undefined
  readonly clientOrderId?: string | undefined
  readonly book?: string | undefined
  readonly trader?: string | undefined
  readonly tags?: Readonly<Record<string, unknown>> | undefined
  readonly notes?: string | undefined
  /** The `params` object as sent; decoded with the type's schema once the common checks pass. */
  readonly params: Readonly<Record<string, unknown>>
}

const ALLOW_POST_ONLY: ReadonlySet<ComplexType> = new Set(["iceberg", "peg", "twap"])

/**
 * Checks a new parent against its market and its type; the answer is its spec (without an id yet) and its typed
 * params. Field errors come together in one 400; params that do not decode (unknown keys included) are a 422.
 */
export const checkParent = Effect.fnUntraced(function* (
  kind: OrderKind,
  input: CreateInput,
  market: Market,
  venueId: string,
  now: number,
  desk: Pick<Context.Tag.Service<typeof Desk>, "checkPrice" | "haltedFor">
) {
  const errors: Array<FieldError> = []
  const amount = F.parse(input.amount)
  if (amount === undefined || amount <= 0 || !F.isMultipleOf(amount, market.lot)) {
    errors.push({ field: "amount", message: `must be a positive multiple of the lot ${F.format(market.lot)}` })
  }
  const price = input.price === undefined ? null : yield* Effect.either(desk.checkPrice("price", input.price, market))
  const stop =
    input.stopPrice === undefined ? null : yield* Effect.either(desk.checkPrice("stop_price", input.stopPrice, market))
  for (const checked of [price, stop]) {
    if (checked !== null && checked._tag === "Left")
      errors.push(...(checked.left.details["errors"] as Array<FieldError>))
  }
  if (input.postOnly === true && !ALLOW_POST_ONLY.has(input.type)) {
    errors.push({
      field: "post_only",
      message: `post_only is valid only on iceberg, peg and twap in its limit style, not on ${input.type}`
    })
  }
  if (input.expiresAt !== undefined && input.expiresAt <= now) {
    errors.push({ field: "expires_at", message: "is in the past" })
  }
  if (errors.length > 0) return yield* Effect.fail(ApiError.validation(errors))
  const params = yield* decodeParams(kind, input.params)
  const spec: ParentSpec = {
    id: "",
    side: input.side,
    amount: amount!,
    price: price === null || price._tag === "Left" ? null : price.right,
    stopPrice: stop === null || stop._tag === "Left" ? null : stop.right,
    timeInForce: input.timeInForce ?? "gtc",
    postOnly: input.postOnly ?? false,
    reduceOnly: input.reduceOnly ?? false,
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
const decodeParams = (kind: OrderKind, params: unknown) =>
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
  kind: OrderKind,
  input: Omit<CreateInput, "type">,
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
    ["stop_price", input.stopPrice],
    ["post_only", input.postOnly],
    ["reduce_only", input.reduceOnly],
    ["expires_at", input.expiresAt]
  ] as const) {
    if (given !== undefined && given !== false) errors.push({ field, message: "a bucket order does not take it" })
  }
  if (errors.length > 0) return yield* Effect.fail(ApiError.validation(errors))
  const params = yield* decodeParams(kind, input.params)
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
