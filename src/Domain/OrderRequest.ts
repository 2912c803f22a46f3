/** The request for a new order, one schema for the API, the desk and the engine, and the checks every order's fields pass. */
import type { MarketId } from "./Ids.ts"
import { Schema } from "effect"
import { ApiError, type FieldError } from "./Errors.ts"
import * as F from "./Fixed.ts"
import type { Market } from "./Market.ts"
import { AccountInput, DecimalString, Millis, strict, Tags, Text } from "./Wire.ts"

export const Side = Schema.Literal("buy", "sell")
export const TimeInForce = Schema.Literal("gtc", "gtd", "ioc", "fok")

const fields = <T extends Schema.Schema<string, string, never>>(type: T) => ({
  market_id: Text(200).annotations({ description: "`<venue>:<native_id>`" }),
  side: Side,
  amount: DecimalString,
  type,
  price: Schema.optional(
    DecimalString.annotations({ description: "Limit price; the protection price of a market order" })
  ),
  stop_price: Schema.optional(DecimalString),
  time_in_force: Schema.optional(TimeInForce),
  expires_at: Schema.optional(Millis),
  post_only: Schema.optional(Schema.Boolean),
  reduce_only: Schema.optional(Schema.Boolean),
  client_order_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64))),
  account: Schema.optional(AccountInput),
  book: Schema.optional(Text(128)),
  trader: Schema.optional(Text(128)),
  tags: Schema.optional(Tags),
  notes: Schema.optional(Text(2000)),
  params: Schema.optional(Schema.Record({ key: Text(64), value: Schema.Unknown }))
})

/**
 * The body of `POST /trading/orders` (`PlaceOrder` in the API document). Its document lists `types` (the plain types
 * and the built-in engine types); the body takes any type name, and the server refuses one it does not hold with the
 * answer a schema gives (`unknownType`), so a type an engine registers is taken without a new document. Unknown keys
 * are refused.
 */
export const orderRequestSchema = (types: ReadonlyArray<string>) =>
  Schema.Struct(
    fields(Schema.String.pipe(Schema.maxLength(64)).annotations({ jsonSchema: { type: "string", enum: [...types] } }))
  ).annotations({
    identifier: "PlaceOrder",
    ...strict
  })

/** The refusal of a type the server holds no orders of, worded as the body's schema words any value it does not take. */
export const unknownType = (type: string, known: ReadonlyArray<string>): ApiError =>
  ApiError.validation(
    [
      {
        field: "type",
        message: `Expected ${known.map((t) => JSON.stringify(t)).join(" | ")}, actual ${JSON.stringify(type)}`
      }
    ],
    undefined,
    422
  )

/** An order request as decoded: what the desk places and the engine holds, field for field as the client sent it. */
export type OrderRequest = Schema.Struct.Type<ReturnType<typeof fields<typeof Schema.String>>>

/**
 * An order request on the account it was checked for, its market id parsed: what the desk and the engine take.
 */
export type AccountRequest = Omit<OrderRequest, "market_id"> & {
  readonly market_id: MarketId
  readonly account: string
}

/** What every order's fields are once checked against its market: exact amounts and prices on the market's grid. */
export interface CheckedFields {
  readonly amount: F.Fixed
  readonly price: F.Fixed | null
  readonly stopPrice: F.Fixed | null
}

/** The two valid prices around one off the grid (each inside (0, 1)): what an error names. */
export const nearestTicks = (price: F.Fixed, tick: F.Fixed): readonly [F.Fixed, F.Fixed] => {
  const below = F.roundTo(price, tick, "down")
  const above = F.roundTo(price, tick, "up")
  return [F.max(below, tick), F.min(above === below ? F.add(below, tick) : above, F.sub(F.ONE, tick))]
}

/**
 * Why `price` is not a price on the grid of `tick` inside (0, 1), or null when it is one: the one wording of this
 * mistake, whichever field of whichever order type makes it.
 */
export const priceProblem = (price: F.Fixed, tick: F.Fixed, text: string = F.format(price)): string | null => {
  if (price < tick || price > F.sub(F.ONE, tick)) {
    return `${text} is outside (0, 1); a price must be from ${F.format(tick)} to ${F.format(F.sub(F.ONE, tick))}`
  }
  if (!F.isMultipleOf(price, tick)) {
    const [lo, hi] = nearestTicks(price, tick)
    return `${text} is off the tick grid of ${F.format(tick)}; nearest valid: ${F.format(lo)} or ${F.format(hi)}`
  }
  return null
}

/** A wire price on the grid of `tick` inside (0, 1), or the error of `field` that says what is wrong with it. */
export const gridPriceOrError = (field: string, text: string, tick: F.Fixed): F.Fixed | FieldError => {
  const price = F.parse(text)
  if (price === undefined) return { field, message: `'${text}' is not a decimal` }
  const problem = priceProblem(price, tick, text)
  return problem === null ? price : { field, message: problem }
}

/** A price on the market's tick grid, inside (0, 1); off the grid, the error names the two nearest valid prices. */
export const priceOrError = (field: string, text: string, market: Market): F.Fixed | FieldError =>
  gridPriceOrError(field, text, market.tick)

/** The default distance from a stop to the protection price of the market child it sends. */
export const DEFAULT_SLIPPAGE = F.of("0.05")

/** A wire `max_slippage` (default 0.05 when not given), or the error of `field` unless it is a positive decimal. */
export const slippageOrError = (field: string, text: string | undefined): F.Fixed | FieldError => {
  if (text === undefined) return DEFAULT_SLIPPAGE
  const value = F.parse(text)
  return value === undefined || value <= 0 ? { field, message: `'${text}' must be a positive decimal` } : value
}

/**
 * The checks every order's own fields pass, plain or held by the engine, against its market: the amount a positive
 * multiple of the lot, `price` and `stop_price` on the tick grid, `expires_at` not in the past. Every mistake is
 * named, in one answer; what only some types take (a price a limit needs, `post_only`) is checked by the type.
 */
export const checkOrderFields = (
  request: Pick<OrderRequest, "amount" | "price" | "stop_price" | "expires_at">,
  market: Market,
  now: number
): CheckedFields | ReadonlyArray<FieldError> => {
  const errors: Array<FieldError> = []
  const amount = F.parse(request.amount)
  if (amount === undefined || amount <= 0 || !F.isMultipleOf(amount, market.lot)) {
    errors.push({ field: "amount", message: `must be a positive multiple of the lot ${F.format(market.lot)}` })
  }
  const price = request.price === undefined ? null : priceOrError("price", request.price, market)
  const stopPrice = request.stop_price === undefined ? null : priceOrError("stop_price", request.stop_price, market)
  for (const checked of [price, stopPrice]) if (checked !== null && typeof checked === "object") errors.push(checked)
  if (request.expires_at !== undefined && request.expires_at <= now) {
    errors.push({ field: "expires_at", message: "is in the past" })
  }
  if (errors.length > 0) return errors
  return { amount: amount!, price: price as F.Fixed | null, stopPrice: stopPrice as F.Fixed | null }
}

/** A market that does not trade now (closed, settled, halted): the contract's 409 with rule `market_halted`. */
const marketHalted = (venue: string, marketId: string, market: Market): ApiError =>
  new ApiError({
    status: 409,
    code: "risk_rejected",
    message: `market ${marketId} is ${market.status}`,
    details: { venue, retryable: false, rule: "market_halted" }
  })

/** A market id that is not `<venue>:<native_id>`. */
export const badMarketId = () => ApiError.field("market_id", "must be '<venue>:<native_id>'")

/**
 * The market an order names, or why no order can be placed on it: none there (404), or one that does not trade now
 * (409 `market_halted`). Plain orders and the engine's both check here, so one mistake gets one answer.
 */
export const marketOrError = (venue: string, marketId: string, market: Market | undefined): Market | ApiError => {
  if (market === undefined) return ApiError.marketNotFound(venue, marketId)
  if (market.status !== "open") return marketHalted(venue, marketId, market)
  return market
}
