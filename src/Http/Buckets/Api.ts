/** Buckets under /trading/buckets: one proposition listed on several venues, and the orders routed across them. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiErrorWire } from "../../Domain/Errors.ts"
import { MAX_MEMBERS } from "../../Trading/Buckets.ts"
import { OrderRecord } from "../Desk/Api.ts"
import { Authorization } from "../Security.ts"
import { DecimalString, Millis, Page, PageParams, strict, Text } from "../Schemas.ts"

const Member = Schema.Struct({
  market_id: Schema.String.annotations({ description: "`<venue>:<native_id>`" }),
  flip: Schema.Boolean.annotations({ description: "True when this market's YES is the bucket's NO" }),
  account: Schema.String.annotations({ description: "The account that trades this member" }),
  title: Schema.String
})

export const BucketRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  book: Schema.String,
  status: Schema.Literal("active", "archived"),
  members: Schema.Array(Member),
  created_at: Millis,
  created_by: Schema.String,
  archived_at: Schema.NullOr(Millis),
  archived_by: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Bucket" })

const NewMember = Schema.Struct({
  market_id: Text(200),
  flip: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  account: Schema.optional(
    Text(200).annotations({ description: "`<venue>:<name>`; default the venue's trading account" })
  )
}).annotations(strict)

const NewBucket = Schema.Struct({
  name: Text(200),
  book: Schema.optional(Text(100)),
  members: Schema.Array(NewMember).pipe(Schema.maxItems(MAX_MEMBERS))
}).annotations(strict)

const FromMatch = Schema.Struct({
  market_id: Text(200).annotations({ description: "A market; its match on another venue is the second member" }),
  name: Schema.optional(Text(200)),
  book: Schema.optional(Text(100))
}).annotations(strict)

const MemberPosition = Schema.Struct({
  market_id: Schema.String,
  account: Schema.String,
  flip: Schema.Boolean,
  contracts: DecimalString.annotations({ description: "The member's YES contracts (negative: NO held)" }),
  bucket_contracts: DecimalString.annotations({
    description: "The same in bucket terms (a flipped member's NO is YES)"
  }),
  average_price: Schema.NullOr(DecimalString),
  realized_pnl: DecimalString,
  fees: DecimalString
})

export const BucketPosition = Schema.Struct({
  bucket_id: Schema.String,
  contracts: DecimalString.annotations({ description: "Bucket YES held over every member (negative: NO)" }),
  fees: DecimalString,
  members: Schema.Array(MemberPosition)
}).annotations({ identifier: "BucketPosition" })

const BucketPath = Schema.Struct({ id: Schema.String })

export const BucketsApi = HttpApiGroup.make("buckets")
  .add(
    HttpApiEndpoint.post("createBucket", "/buckets")
      .setPayload(NewBucket)
      .addSuccess(BucketRecord, { status: 201 })
      .annotate(OpenApi.Description, "Needs `trade` on every member's account.")
  )
  .add(
    HttpApiEndpoint.post("bucketFromMatch", "/buckets/from-match")
      .setPayload(FromMatch)
      .addSuccess(BucketRecord, { status: 201 })
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 502 })
      .annotate(
        OpenApi.Description,
        "A bucket of a market and its match on another venue; the match's side map sets `flip`. Needs `trade` on both."
      )
  )
  .add(
    HttpApiEndpoint.get("listBuckets", "/buckets")
      .setUrlParams(
        Schema.Struct({
          status: Schema.optionalWith(Schema.Literal("active", "archived", "all"), {
            default: () => "active" as const
          }),
          ...PageParams
        })
      )
      .addSuccess(Page(BucketRecord))
      .annotate(OpenApi.Description, "The buckets whose every member the token may `view`, oldest first.")
  )
  .add(
    HttpApiEndpoint.get("getBucket", "/buckets/:id")
      .setPath(BucketPath)
      .addSuccess(BucketRecord)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, "Needs `view` on every member's account.")
  )
  .add(
    HttpApiEndpoint.del("archiveBucket", "/buckets/:id")
      .setPath(BucketPath)
      .addSuccess(BucketRecord)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, "Archives the bucket (its orders stay). Needs `trade` on every member's account.")
  )
  .add(
    HttpApiEndpoint.get("bucketOrders", "/buckets/:id/orders")
      .setPath(BucketPath)
      .setUrlParams(Schema.Struct(PageParams))
      .addSuccess(Page(OrderRecord))
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, "The bucket's orders, newest first. Needs `view` on every member's account.")
  )
  .add(
    HttpApiEndpoint.get("bucketPosition", "/buckets/:id/position")
      .setPath(BucketPath)
      .addSuccess(BucketPosition)
      .addError(ApiErrorWire, { status: 404 })
      .annotate(OpenApi.Description, "The position over the members, in bucket terms. Needs `view` on every member.")
  )
  .middleware(Authorization)
  .addError(ApiErrorWire, { status: 401 })
  .addError(ApiErrorWire, { status: 403 })
  .prefix("/trading")
