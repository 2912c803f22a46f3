/** Placing a plain order: checks, risk rules, collateral, the write ahead, the venue call and its answer. */
import { Clock, Effect } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { worstFeePerContract } from "../Domain/Fees.ts"
import * as F from "../Domain/Fixed.ts"
import * as Id from "../Domain/Ids.ts"
import type { Book, Market } from "../Domain/Market.ts"
import { type AccountRef, accountRef, NO_TAGS, type Order, type TimeInForce, requestDigest } from "../Domain/Order.ts"
import { checkOrderFields, marketOrError, priceOrError } from "../Domain/OrderRequest.ts"
import { fromVenueError } from "../Domain/VenueErrors.ts"
import type { JournalEntry, StoredParent } from "../Services/OrderStore.ts"
import { type PlaceOrderRequest, type Venue, VenueError, type VenueOrder } from "../Services/VenueGateway.ts"
import type { HaltState, PlaceInput } from "./Desk.ts"
import type { Held } from "./Held.ts"
import { collateral, type Fill, type Ledger } from "./Ledger.ts"
import { checkRisk, type RiskRules } from "./Risk.ts"

/** What placing needs of the desk: its memory, ledger and rate, its lookups, and its ways to write and apply. */
export interface Placing {
  readonly memory: Held
  readonly ledger: Ledger
  readonly rate: PlacementRate
  /** The venue of this id, or why there is none (plain values: a placement's checks take no Effect step). */
  readonly venueOrError: (id: string) => Venue | ApiError
  /** The handle that trades for an account (its paper one for `<venue>:paper`), or why there is none. */
  readonly tradingOrError: (account: string) => Venue | ApiError
  readonly findByClientId: (
    account: string,
    clientOrderId: string
  ) => Effect.Effect<{ readonly order: Order; readonly digest: string | undefined } | undefined>
  /** The halt that covers this venue, if any. */
  readonly halted: (venue: string) => HaltState | undefined
  readonly rules: () => RiskRules
  readonly nextOrderId: () => string
  /** The client id an order is known by at its venue: unique forever where the venue keeps client ids. */
  readonly venueClientId: (trading: Venue, orderId: string) => string
  readonly bookOf: (marketId: string) => Effect.Effect<Book | undefined>
  readonly markOf: (marketId: string, book: Book | undefined) => { readonly mark: F.Fixed | null }
  readonly pnlToday: (account: string, now: number) => Effect.Effect<F.Fixed>
  readonly emit: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<unknown>
  readonly writeAhead: (order: Order, parent?: StoredParent) => Effect.Effect<unknown>
  readonly withdraw: (order: Order, entry: JournalEntry) => Effect.Effect<unknown>
  readonly setOrder: (order: Order, kind: string, fill?: Fill) => Effect.Effect<void>
  readonly applyAnswer: (venue: string, answer: VenueOrder) => Effect.Effect<void>
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => Effect.Effect<void>
}

/** Placement times of the last minute, for `max_orders_per_minute`; old ones are dropped in bulk, not one shift each. */
export class PlacementRate {
  private at: Array<number> = []
  private head = 0

  lastMinute(now: number): number {
    while (this.head < this.at.length && this.at[this.head]! <= now - 60_000) this.head++
    if (this.head > 1024 && this.head * 2 > this.at.length) {
      this.at = this.at.slice(this.head)
      this.head = 0
    }
    return this.at.length - this.head
  }

  note(now: number): void {
    this.at.push(now)
  }
}

const validation = (field: string, message: string) => ApiError.field(field, message)

const riskRejected = (rule: string, message: string) =>
  new ApiError({ status: 409, code: "risk_rejected", message, details: { venue: null, retryable: false, rule } })

/** A value, or the error instead of it, as an Effect. */
export const orFail = <A>(value: A | ApiError): Effect.Effect<A, ApiError> =>
  value instanceof ApiError ? Effect.fail(value) : Effect.succeed(value)

/** A price on the market's tick grid, inside (0, 1), or the 400 that names the two nearest valid prices. */
export const checkPrice = (field: string, text: string, market: Market): Effect.Effect<F.Fixed, ApiError> => {
  const price = priceOrError(field, text, market)
  return typeof price === "object" ? Effect.fail(ApiError.validation([price])) : Effect.succeed(price)
}

/** The request as its client sent it: without the parent's state that rides along with a child. */
const withoutState = (input: PlaceInput) => {
  const { parentState: _state, ...asked } = input
  return asked
}

/**
 * What of a placement a venue answers over the network, read before the desk's lock is taken so that a slow venue
 * holds up only its own request: the market, and the book when the price collar needs one.
 */
export interface PlacementReads {
  readonly market: Market | undefined | VenueError
  readonly book: Book | undefined
}

/** An order checked and written ahead (`pending`), with the request its venue is to be sent. */
export interface Admitted {
  readonly _tag: "admitted"
  readonly pending: Order
  readonly request: PlaceOrderRequest
  readonly trading: Venue
  readonly now: number
}

/**
 * Checks a plain order and writes it ahead as `pending`; a retry of a client id answers the order it named instead
 * (`existing`). `reads` are what was read of the venue before the lock was taken, if anything.
 */
export const admitOrder = Effect.fnUntraced(function* (
  d: Placing,
  input: PlaceInput,
  actor: string,
  reads?: PlacementReads
) {
  const now = yield* Clock.currentTimeMillis
  const venueId = Id.venueOf(input.market_id)
  const nativeId = Id.nativeOf(input.market_id)
  const venue = d.venueOrError(venueId)
  if (venue instanceof ApiError) return yield* Effect.fail(venue)
  if (Id.parseAccountId(input.account)?.venue !== venueId) {
    return yield* Effect.fail(validation("account", `account ${input.account} is not on venue ${venueId}`))
  }
  const trading = d.tradingOrError(input.account)
  if (trading instanceof ApiError) return yield* Effect.fail(trading)
  // What the client asked for, for a retry of its client id to be told apart from another order under the same id
  // (the parent's state that rides along is not part of the request). Nothing is hashed for an order sent without a
  // client id (its client id is its own id: there is none to retry by), nor for a parent's child (no client sent
  // it: a request naming its client id is another order, and is refused as one).
  const digest =
    input.client_order_id === undefined || input.parentId !== undefined ? undefined : requestDigest(withoutState(input))
  if (input.client_order_id !== undefined) {
    const existing = yield* d.findByClientId(input.account, input.client_order_id)
    if (existing !== undefined) {
      if (existing.digest === digest) return { _tag: "existing" as const, order: existing.order }
      return yield* Effect.fail(
        validation("client_order_id", `'${input.client_order_id}' was used already for a different order`)
      )
    }
  }
  const read = reads === undefined ? yield* Effect.either(venue.market(nativeId)) : undefined
  const found =
    read !== undefined
      ? read._tag === "Left"
        ? yield* Effect.fail(fromVenueError(read.left))
        : read.right
      : reads!.market instanceof VenueError
        ? yield* Effect.fail(fromVenueError(reads!.market))
        : reads!.market
  const market = yield* orFail(marketOrError(venueId, input.market_id, found))
  const fields = checkOrderFields(input, market, now)
  if (!("amount" in fields)) return yield* Effect.fail(ApiError.validation(fields))
  const { amount, price: given } = fields
  if (given === null) {
    return yield* Effect.fail(
      validation(
        "price",
        input.type === "market" ? "a market order needs a protection price" : "a limit order needs a price"
      )
    )
  }
  const price = given
  let tif: TimeInForce = input.time_in_force ?? (input.type === "market" ? "ioc" : "gtc")
  if (input.type === "market" && tif !== "ioc" && tif !== "fok") {
    return yield* Effect.fail(validation("time_in_force", "a market order is ioc or fok"))
  }
  if (input.post_only === true && (input.type === "market" || tif === "ioc" || tif === "fok")) {
    return yield* Effect.fail(validation("post_only", "post_only needs an order that can rest (limit, gtc or gtd)"))
  }
  if (tif === "gtd" && input.expires_at === undefined) {
    return yield* Effect.fail(validation("expires_at", "a gtd order needs expires_at"))
  }
  if (input.expires_at !== undefined && tif === "gtc") tif = "gtd"
  const position = d.ledger.position(input.account, input.market_id)
  if (input.reduce_only === true) {
    const reduces = input.side === "buy" ? position.contracts < 0 : position.contracts > 0
    if (!reduces || amount > Math.abs(position.contracts)) {
      return yield* Effect.fail(
        validation(
          "reduce_only",
          `the position is ${F.format(position.contracts)}; this order would not only reduce it`
        )
      )
    }
  }
  const refuse = (rule: string, message: string) =>
    Effect.zipRight(
      d.emit([
        {
          ts: now,
          kind: "risk.rejected",
          key: input.market_id,
          payload: {
            rule,
            message,
            account: input.account,
            market_id: input.market_id,
            side: input.side,
            amount: input.amount,
            price: input.price ?? null
          }
        }
      ]),
      Effect.fail(riskRejected(rule, message))
    )
  const halt = d.halted(venueId)
  if (halt !== undefined) {
    return yield* refuse("kill_switch", `trading is halted (${halt.scope}): ${halt.reason}`)
  }
  const openOrders = d.memory.openOrders(input.account)
  const rules = d.rules()
  // The mark is only the price collar's: the book is read for it when the collar is set (a venue that does not
  // stream the market answers a book read with a request of its own).
  const mark =
    rules.price_collar === null
      ? null
      : d.markOf(input.market_id, reads === undefined ? yield* d.bookOf(input.market_id) : reads.book).mark
  const refusal = checkRisk(rules, {
    side: input.side,
    price,
    amount,
    mark,
    openOrders,
    position: position.contracts,
    ordersLastMinute: d.rate.lastMinute(now),
    pnlToday: rules.daily_loss_limit === null ? F.ZERO : yield* d.pnlToday(input.account, now)
  })
  if (refusal !== undefined) return yield* refuse(refusal.rule, refusal.message)
  // A remote venue charges its fee on top of the notional (Polymarket at match time): the most it can charge is
  // reserved with it, so an order near a full balance is refused here rather than by the venue.
  const feeReserve =
    trading.remote === true && market.feeSchedule !== undefined
      ? F.mul(worstFeePerContract(market.feeSchedule, price, market.lot), amount, "up")
      : F.ZERO
  const needed = input.reduce_only === true ? F.ZERO : F.add(collateral(input.side, price, amount), feeReserve)
  const available = F.sub(d.ledger.cashOf(input.account), d.memory.locked(input.account))
  if (needed > available) {
    return yield* Effect.fail(
      new ApiError({
        status: 400,
        code: "insufficient_funds",
        message: `${venueId} refused the order: it needs ${F.format(needed)} and ${F.format(available)} is available`,
        details: { venue: venueId, retryable: false, reason: "insufficient balance" }
      })
    )
  }

  const id = d.nextOrderId()
  const venueClientId = d.venueClientId(trading, id)
  const account: AccountRef = accountRef(input.account)
  const pending: Order = {
    id,
    clientOrderId: input.client_order_id ?? id,
    venue: venueId,
    account,
    marketId: input.market_id,
    side: input.side,
    type: input.type,
    timeInForce: tif,
    status: "pending",
    heldBy: "venue",
    price,
    stopPrice: null,
    amount,
    filled: F.ZERO,
    cost: F.ZERO,
    fee: F.ZERO,
    lastFillPrice: null,
    lastFillAmount: null,
    postOnly: input.post_only ?? false,
    reduceOnly: input.reduce_only ?? false,
    expiresAt: input.expires_at ?? null,
    createdAt: now,
    updatedAt: now,
    parentId: input.parentId ?? null,
    queuePriorityPreserved: null,
    book: input.book ?? "",
    trader: input.trader ?? "",
    tags: input.tags ?? NO_TAGS,
    notes: input.notes ?? "",
    info:
      venueClientId === id
        ? { placed_by: actor, ...input.info }
        : { placed_by: actor, ...input.info, venue_client_order_id: venueClientId },
    venueOrderId: null
  }
  const request: PlaceOrderRequest = {
    clientOrderId: venueClientId,
    nativeId,
    side: input.side,
    price,
    amount,
    timeInForce: tif,
    postOnly: pending.postOnly,
    reduceOnly: pending.reduceOnly,
    expiresAt: pending.expiresAt
  }
  d.memory.name(pending, digest)
  yield* d.writeAhead(pending, input.parentState)
  return { _tag: "admitted", pending, request, trading, now } satisfies Admitted
})

/** Checks a plain order, writes it ahead, asks its venue and stores the answer; a retry of a client id answers it. */
export const placeOrder = Effect.fnUntraced(function* (d: Placing, input: PlaceInput, actor: string) {
  const admitted = yield* admitOrder(d, input, actor)
  if (admitted._tag === "existing") return { order: admitted.order, created: false }
  const { pending, request, trading, now } = admitted
  const id = pending.id
  const answer = yield* trading.placeOrder(request).pipe(
    Effect.map((order) => ({ _tag: "placed" as const, order })),
    // A placement that got no answer is looked up by its client id: found, it counts; absent, it never was.
    Effect.catchIf(
      (e: VenueError) => e.kind === "timeout",
      (e) =>
        Effect.map(
          trading.orderByClientId(request.clientOrderId, request).pipe(Effect.orElseSucceed(() => undefined)),
          (found) =>
            found === undefined
              ? { _tag: "absent" as const, error: e }
              : { _tag: "placed" as const, order: found, reconciled: true }
        )
    ),
    Effect.catchAll((e: VenueError) => Effect.succeed({ _tag: "refused" as const, error: e }))
  )
  if (answer._tag !== "placed") return yield* refused(d, pending, now, answer.error)
  yield* recordPlaced(d, pending, answer.order, "reconciled" in answer ? { reconciled: true } : undefined)
  return { order: d.memory.lookup(id)!, created: true }
})

/** Removes an order written ahead that its venue refused, with its `order.rejected`, and fails with the refusal. */
export const refused = (d: Placing, pending: Order, now: number, error: VenueError) =>
  Effect.zipRight(
    d.withdraw(pending, {
      ts: now,
      kind: "order.rejected",
      key: pending.id,
      payload: {
        client_order_id: pending.clientOrderId,
        market_id: pending.marketId,
        reason: error.reason,
        kind: error.kind
      }
    }),
    Effect.fail(fromVenueError(error))
  )

/**
 * Stores the venue's answer to a placement: the order open under the venue's id (with `info` added), then what came
 * with the answer, then the venue's status.
 */
export const recordPlaced = Effect.fnUntraced(function* (
  d: Placing,
  pending: Order,
  answer: VenueOrder,
  info?: Readonly<Record<string, unknown>>
) {
  d.rate.note(pending.createdAt)
  const current = d.memory.lookup(pending.id) ?? pending
  const placed: Order = {
    ...current,
    status: "open",
    venueOrderId: answer.venueOrderId,
    info: info === undefined ? current.info : { ...current.info, ...info }
  }
  yield* d.setOrder(placed, "order.accepted")
  yield* d.applyAnswer(pending.venue, answer)
  yield* d.applySnapshot(d.memory.lookup(pending.id)!, answer)
})
