/** The check every core's price params pass: a price on the parent market's tick grid. */
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"

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
  const value = F.parse(text)
  if (value === undefined || value < tick || value > F.sub(F.ONE, tick) || !F.isMultipleOf(value, tick)) {
    errors.push({ field, message: `'${text}' is not a price on the tick grid of ${F.format(tick)}` })
    return null
  }
  return value
}
