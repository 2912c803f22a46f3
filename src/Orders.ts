/** One way in for every new order, plain or complex: the route, the replay and the backtester all submit here. */
import { Effect } from "effect"
import { ApiError } from "./Domain/Errors.ts"
import { PLAIN_TYPES, type Order } from "./Domain/Order.ts"
import { badMarketId, type OrderRequest, orderRequestSchema, unknownType } from "./Domain/OrderRequest.ts"
import { type CheckedMember, Engine } from "./Engine/Engine.ts"
import { COMPLEX_TYPES } from "./Engine/Registry.ts"
import { BUCKET_VENUE, type BucketRecord } from "./Trading/Buckets.ts"
import { Desk } from "./Trading/Desk.ts"
import * as Id from "./Domain/Ids.ts"

/**
 * The body of a new order (`POST /trading/orders`, a scenario's or a strategy's order): the order request every way
 * in shares, with the plain and the registered types.
 */
export const PlaceOrder = orderRequestSchema([...PLAIN_TYPES, ...COMPLEX_TYPES])

export type { OrderRequest } from "./Domain/OrderRequest.ts"

const PLAIN: ReadonlySet<string> = new Set(PLAIN_TYPES)

/** The order types this server takes: the plain ones, then the engine's. */
export const orderTypes = (engine: Engine["Type"]): ReadonlyArray<string> => [...PLAIN_TYPES, ...engine.types]

/**
 * Places a plain order on the desk or hands one of the engine's types to it, on `account`; `created` is false for a
 * repeated client id.
 */
export const submitOrder: (
  request: OrderRequest,
  account: string,
  actor: string
) => Effect.Effect<{ readonly order: Order; readonly created: boolean }, ApiError, Desk | Engine> = Effect.fnUntraced(
  function* (request, account, actor) {
    const engine = yield* Engine
    const routed = routeOf(request, engine)
    if (routed instanceof ApiError) return yield* Effect.fail(routed)
    const market_id = routed.market_id
    if (routed.held) return yield* engine.create({ ...request, market_id, account }, actor)
    const desk = yield* Desk
    return yield* desk.place({ ...request, market_id, account }, actor)
  }
)

/**
 * `submitOrder` in plain code at `now`, for a plain order the desk can place at once (`Desk.placeNow`): the same
 * checks and answer. Undefined, with nothing done, when it cannot (one of the engine's types, or a desk that must
 * wait): `submitOrder` is the way.
 */
export const submitOrderNow = (
  request: OrderRequest,
  account: string,
  actor: string,
  services: { readonly desk: Desk["Type"]; readonly engine: Engine["Type"] },
  now: number
): { readonly order: Order; readonly created: boolean } | ApiError | undefined => {
  const routed = routeOf(request, services.engine)
  if (routed instanceof ApiError) return routed
  if (routed.held) return undefined
  return services.desk.placeNow({ ...request, market_id: routed.market_id, account }, actor, now)
}

/** Where an order goes: its market id parsed, and whether the engine holds its type; the error of one that is wrong. */
const routeOf = (request: OrderRequest, engine: Engine["Type"]) => {
  const market_id = Id.asMarketId(request.market_id)
  if (market_id === undefined) return badMarketId()
  if (engine.holds(request.type)) return { market_id, held: true }
  if (!PLAIN.has(request.type)) return unknownType(request.type, orderTypes(engine))
  if (request.params !== undefined) return ApiError.field("params", "a plain order takes no params")
  if (request.stop_price !== undefined) {
    return ApiError.field("stop_price", "a plain order takes no stop_price; use a stop type")
  }
  return { market_id, held: false }
}

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
        ...request,
        market_id: Id.makeMarketId(BUCKET_VENUE, bucket.id),
        account: bucket.members[0]!.account,
        bucketId: bucket.id,
        members,
        book: request.book ?? (bucket.book === "" ? undefined : bucket.book)
      },
      actor
    )
  })
