/** The checks a core's price params pass: a price on the parent market's tick grid, a slippage, with one wording each. */
import type { FieldError } from "../Domain/Errors.ts"
import type * as F from "../Domain/Fixed.ts"
import { gridPriceOrError, slippageOrError } from "../Domain/OrderRequest.ts"

/**
 * The price `text` names when it sits on the tick grid inside (0, 1); null when no price was given, or when it is
 * off the grid, in which case the field's error is added to `errors`.
 */
export const gridPrice = (
  tick: F.Fixed,
  errors: Array<FieldError>,
  field: string,
  text: string | undefined
): F.Fixed | null => {
  if (text === undefined) return null
  const price = gridPriceOrError(field, text, tick)
  if (typeof price === "number") return price
  errors.push(price)
  return null
}

/** A `max_slippage` (0.05 when not given); null, with the field's error added, unless it is a positive decimal. */
export const slippage = (errors: Array<FieldError>, field: string, text: string | undefined): F.Fixed | null => {
  const value = slippageOrError(field, text)
  if (typeof value === "number") return value
  errors.push(value)
  return null
}
