/** Wire schemas shared by every group: decimals as strings, pages, the error statuses each route can answer. */
import { Schema } from "effect"

/** A decimal carried as a JSON string, such as "0.35". */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^-?\d+(\.\d+)?$/),
  Schema.annotations({ identifier: "Decimal", description: 'A decimal carried as a string, e.g. "0.35"' })
)

export const Millis = Schema.Int.annotations({ description: "ms since epoch" })

export const Page = <A, I, R>(row: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    data: Schema.Array(row),
    next_cursor: Schema.NullOr(Schema.String),
    count: Schema.Int
  })

/** Query parameters every list route takes. */
export const PageParams = {
  limit: Schema.optional(
    Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)).annotations({
      description: "Rows per page, 1..1000, default 100"
    })
  ),
  cursor: Schema.optional(Schema.String.annotations({ description: "next_cursor of the previous page, unchanged" }))
}
