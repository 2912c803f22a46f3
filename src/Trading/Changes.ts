/** Changing a plain order at its venue: cancel and amend, each applied from the venue's answer. */
import { Effect } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { accountId, type Order, TERMINAL } from "../Domain/Order.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import { type Venue, VenueError, type VenueOrder } from "../Services/VenueGateway.ts"
import type { Held } from "./Held.ts"
import { checkPrice } from "./Placement.ts"
import * as Id from "../Domain/Ids.ts"

/** What changing an order needs of the desk: its memory and lookups, and its ways to apply a venue's answer. */
export interface Changing {
  readonly memory: Held
  /** The handle that trades for an account (its paper one for `<venue>:paper`). */
  readonly tradingOf: (account: string) => Effect.Effect<Venue, ApiError>
  readonly orderOr404: (id: string) => Effect.Effect<Order, ApiError>
  readonly applyAnswer: (venue: string, answer: VenueOrder) => Effect.Effect<void>
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => Effect.Effect<void>
}

const validation = (field: string, message: string) => ApiError.field(field, message)

/** Asks the venue to cancel an order; a finished order (or one the venue finished meanwhile) answers as it is. */
export const cancelAtVenue = Effect.fnUntraced(function* (c: Changing, order: Order) {
  if (TERMINAL.has(order.status)) return order
  if (order.venueOrderId === null) return order
  const venue = yield* c.tradingOf(accountId(order.account))
  const answer = yield* Effect.either(venue.cancelOrder(order.venueOrderId))
  if (answer._tag === "Left") {
    const current = c.memory.lookup(order.id)!
    // The venue may have finished the order in the meantime; that answers the cancel.
    if (TERMINAL.has(current.status)) return current
    return yield* Effect.fail(fromVenueError(answer.left))
  }
  yield* c.applyAnswer(order.venue, answer.right)
  yield* c.applySnapshot(c.memory.lookup(order.id)!, answer.right)
  return c.memory.lookup(order.id)!
})

/** What cancelling in plain code needs of the desk: its memory, the handle trading for an account, its plain writes. */
export interface ChangingNow {
  readonly memory: Held
  readonly tradingOrError: (account: string) => Venue | ApiError
  readonly applyAnswer: (venue: string, answer: VenueOrder) => void
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => void
}

/**
 * `cancelAtVenue` in plain code, on a venue that cancels in process (`Venue.now.cancelOrder`): the same answer and
 * writes. Undefined, with nothing done, on any other venue.
 */
export const cancelAtVenueNow = (c: ChangingNow, order: Order, now: number): Order | ApiError | undefined => {
  if (TERMINAL.has(order.status) || order.venueOrderId === null) return order
  const venue = c.tradingOrError(accountId(order.account))
  if (venue instanceof ApiError) return venue
  const cancelNow = venue.now?.cancelOrder
  if (cancelNow === undefined) return undefined
  const answer = cancelNow(order.venueOrderId, now)
  if (answer instanceof VenueError) {
    const current = c.memory.lookup(order.id)!
    return TERMINAL.has(current.status) ? current : fromVenueError(answer)
  }
  c.applyAnswer(order.venue, answer)
  c.applySnapshot(c.memory.lookup(order.id)!, answer)
  return c.memory.lookup(order.id)!
}

/** Changes a live order's price or amount at its venue, checked against the market's grid and what is filled. */
export const amendAtVenue = (
  c: Changing,
  id: string,
  changes: { price?: string | undefined; amount?: string | undefined; expiresAt?: number | undefined }
) =>
  Effect.gen(function* () {
    const order = yield* c.orderOr404(id)
    if (TERMINAL.has(order.status)) {
      return yield* Effect.fail(validation("id", `order ${id} is ${order.status} and cannot be amended`))
    }
    if (changes.expiresAt !== undefined) {
      return yield* Effect.fail(
        validation("expires_at", "the sim venue cannot change an order's expiry; cancel and place again")
      )
    }
    const venue = yield* c.tradingOf(accountId(order.account))
    const market = yield* Effect.mapError(venue.market(Id.nativeOf(order.marketId)), fromVenueError)
    if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(order.venue, order.marketId))
    const next: { price?: F.Fixed; amount?: F.Fixed } = {}
    if (changes.price !== undefined) next.price = yield* checkPrice("price", changes.price, market)
    if (changes.amount !== undefined) {
      const amount = F.parse(changes.amount)
      if (amount === undefined || amount <= 0 || !F.isMultipleOf(amount, market.lot)) {
        return yield* Effect.fail(
          validation("amount", `must be a positive multiple of the lot ${F.format(market.lot)}`)
        )
      }
      if (amount < order.filled) {
        return yield* Effect.fail(validation("amount", `cannot go below what is filled (${F.format(order.filled)})`))
      }
      next.amount = amount
    }
    const answer = yield* Effect.mapError(venue.amendOrder(order.venueOrderId!, next), fromVenueError)
    yield* c.applyAnswer(order.venue, answer)
    yield* c.applySnapshot(c.memory.lookup(id)!, answer)
    return c.memory.lookup(id)!
  })
