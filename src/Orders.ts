/** One way in for every new order, plain or complex: the route, the replay and the backtester all submit here. */
import { Effect } from "effect"
import { ApiError } from "./Domain/Errors.ts"
import { COMPLEX_TYPES, type ComplexType, type Order, type TimeInForce } from "./Domain/Order.ts"
import { type CheckedMember, type CreateInput, Engine } from "./Engine/Engine.ts"
import { BUCKET_VENUE, type BucketRecord } from "./Trading/Buckets.ts"
import { Desk } from "./Trading/Desk.ts"
import { badMarketId } from "./Trading/Placement.ts"
import * as Id from "./Domain/Ids.ts"

const COMPLEX: ReadonlySet<string> = new Set(COMPLEX_TYPES)

/** The body of `POST /trading/orders` once its schema decoded it. */
export interface OrderRequest {
  readonly market_id: string
  readonly side: "buy" | "sell"
  readonly amount: string
  readonly type: string
  readonly price?: string | undefined
  readonly stop_price?: string | undefined
  readonly time_in_force?: TimeInForce | undefined
  readonly expires_at?: number | undefined
  readonly post_only?: boolean | undefined
  readonly reduce_only?: boolean | undefined
  readonly client_order_id?: string | undefined
  readonly book?: string | undefined
  readonly trader?: string | undefined
  readonly tags?: Readonly<Record<string, unknown>> | undefined
  readonly notes?: string | undefined
  readonly params?: Readonly<Record<string, unknown>> | undefined
}

/**
 * What the engine takes of a request, on `account`. The keys keep their order: a parent's request digest (what a
 * retry with its client id is checked against) is made from this object.
 */
const engineInput = (
  request: OrderRequest,
  marketId: Id.MarketId,
  account: string,
  type: ComplexType | undefined
): Omit<CreateInput, "type"> & { readonly type?: ComplexType } => ({
  account,
  marketId,
  side: request.side,
  ...(type === undefined ? {} : { type }),
  amount: request.amount,
  price: request.price,
  stopPrice: request.stop_price,
  timeInForce: request.time_in_force,
  expiresAt: request.expires_at,
  postOnly: request.post_only,
  reduceOnly: request.reduce_only,
  clientOrderId: request.client_order_id,
  book: request.book,
  trader: request.trader,
  tags: request.tags,
  notes: request.notes,
  params: request.params ?? {}
})

/** Places a plain order on the desk or hands a complex one to the engine; `created` is false for a repeated client id. */
export const submitOrder: (
  request: OrderRequest,
  account: string,
  actor: string
) => Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError, Desk | Engine> = Effect.fnUntraced(
  function* (request, account, actor) {
    const marketId = Id.asMarketId(request.market_id)
    if (marketId === undefined) return yield* Effect.fail(badMarketId())
    if (COMPLEX.has(request.type)) {
      const engine = yield* Engine
      return yield* engine.create(
        engineInput(request, marketId, account, request.type as ComplexType) as CreateInput,
        actor
      )
    }
    if (request.params !== undefined)
      return yield* Effect.fail(ApiError.field("params", "a plain order takes no params"))
    if (request.stop_price !== undefined) {
      return yield* Effect.fail(ApiError.field("stop_price", "a plain order takes no stop_price; use a stop type"))
    }
    const desk = yield* Desk
    return yield* desk.place(
      {
        account,
        marketId,
        side: request.side,
        type: request.type as "limit" | "market",
        amount: request.amount,
        price: request.price,
        timeInForce: request.time_in_force,
        expiresAt: request.expires_at,
        postOnly: request.post_only,
        reduceOnly: request.reduce_only,
        clientOrderId: request.client_order_id,
        book: request.book,
        trader: request.trader,
        tags: request.tags,
        notes: request.notes
      },
      actor
    )
  }
)

/**
 * A `market` order on a bucket (`market_id: "bucket:<id>"`): the engine holds it and routes it across the members'
 * venues. Its record is filed under `account` (one of the members' accounts, the first member's by default).
 */
export const submitBucketOrder = (
  request: OrderRequest,
  bucket: BucketRecord,
  actor: string
): Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError, Desk | Engine> =>
  Effect.gen(function* () {
    if (request.type !== "market") {
      return yield* Effect.fail(
        ApiError.field("type", `an order on a bucket is a market order with its worst price, not ${request.type}`)
      )
    }
    if (bucket.status !== "active") {
      return yield* Effect.fail(ApiError.field("market_id", `bucket ${bucket.id} is archived`))
    }
    const desk = yield* Desk
    const members: Array<CheckedMember> = []
    for (const m of bucket.members) {
      const { venue, market } = yield* desk.resolveMarket(m.market_id)
      members.push({ venueId: venue.info.id, market, flip: m.flip, account: m.account })
    }
    const engine = yield* Engine
    return yield* engine.createBucket(
      {
        ...engineInput(request, Id.makeMarketId(BUCKET_VENUE, bucket.id), bucket.members[0]!.account, undefined),
        bucketId: bucket.id,
        members,
        book: request.book ?? (bucket.book === "" ? undefined : bucket.book)
      },
      actor
    )
  })
