/** Wire primitives every API shares: decimals carried as strings, times as ms since the epoch. */
import { Schema } from "effect"

/** A decimal carried as a JSON string, such as "0.35". */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^-?\d+(\.\d+)?$/),
  Schema.annotations({ identifier: "Decimal", description: 'A decimal carried as a string, e.g. "0.35"' })
)

export const Millis = Schema.Int.annotations({ description: "ms since epoch" })
