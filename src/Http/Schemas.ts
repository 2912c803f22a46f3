/** Wire schemas shared by every group: pages and their parameters (the wire's basic schemas live in Domain). */
import { Schema } from "effect"

export {
  AccountInput,
  DecimalString,
  Millis,
  strict,
  Tags,
  TAGS_MAX_BYTES,
  TAGS_MAX_DEPTH,
  TAGS_MAX_KEYS,
  Text
} from "../Domain/Wire.ts"

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
