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

/** Where a placement goes: its venue and the handle that trades for its account, and the digest of its request. */
export interface Target {
  readonly venue: Venue
  readonly trading: Venue
  readonly venueId: string
  readonly nativeId: string
  readonly digest: string | undefined
}

/** The venue and trading handle of a plain order, or why it cannot go there. */
export const targetOf = (d: Placing, input: PlaceInput): Target | ApiError => {
  const venueId = Id.venueOf(input.market_id)
  const nativeId = Id.nativeOf(input.market_id)
  const venue = d.venueOrError(venueId)
  if (venue instanceof ApiError) return venue
  if (Id.parseAccountId(input.account)?.venue !== venueId) {
    return validation("account", `account ${input.account} is not on venue ${venueId}`)
  }
  const trading = d.tradingOrError(input.account)
  if (trading instanceof ApiError) return trading
  // What the client asked for, for a retry of its client id to be told apart from another order under the same id
  // (the parent's state that rides along is not part of the request). Nothing is hashed for an order sent without a
  // client id (its client id is its own id: there is none to retry by), nor for a parent's child (no client sent
  // it: a request naming its client id is another order, and is refused as one).
  const digest =
    input.client_order_id === undefined || input.parentId !== undefined ? undefined : requestDigest(withoutState(input))
  return { venue, trading, venueId, nativeId, digest }
}

/** A retry of a client id: the order it named when the request is the same, else the 400; undefined when new. */
export const repeatOf = (
  input: PlaceInput,
  target: Target,
  existing: { readonly order: Order; readonly digest: string | undefined } | undefined
): { readonly _tag: "existing"; readonly order: Order } | ApiError | undefined => {
  if (existing === undefined) return undefined
  if (existing.digest === target.digest) return { _tag: "existing", order: existing.order }
  return validation("client_order_id", `'${input.client_order_id}' was used already for a different order`)
}

/** What the risk rules need read before a placement's checks: the collar's mark and today's P&L, when set. */
export interface RiskReads {
  readonly mark: F.Fixed | null
  readonly pnlToday: F.Fixed
}

/** A refusal by a risk rule: written as a `risk.rejected` event, answered with the 409. */
export interface Refusal {
  readonly _tag: "refusal"
  readonly entry: JournalEntry
  readonly error: ApiError
}

/**
 * The checks of a plain order in plain code, once its market and what the risk rules need are read: the order to
 * write ahead (with its digest, the request for its venue and the handle), a refusal by a risk rule, or the error.
 */
export const checkPlacement = (
  d: Placing,
  input: PlaceInput,
  actor: string,
  now: number,
  target: Target,
  found: Market | undefined,
  risk: RiskReads
): Admitted | Refusal | ApiError => {
  const { trading, venueId, nativeId } = target
  const market = marketOrError(venueId, input.market_id, found)
  if (market instanceof ApiError) return market
  const fields = checkOrderFields(input, market, now)
  if (!("amount" in fields)) return ApiError.validation(fields)
  const { amount, price: given } = fields
  if (given === null) {
    return validation(
      "price",
      input.type === "market" ? "a market order needs a protection price" : "a limit order needs a price"
    )
  }
  const price = given
  let tif: TimeInForce = input.time_in_force ?? (input.type === "market" ? "ioc" : "gtc")
  if (input.type === "market" && tif !== "ioc" && tif !== "fok") {
    return validation("time_in_force", "a market order is ioc or fok")
  }
  if (input.post_only === true && (input.type === "market" || tif === "ioc" || tif === "fok")) {
    return validation("post_only", "post_only needs an order that can rest (limit, gtc or gtd)")
  }
  if (tif === "gtd" && input.expires_at === undefined) {
    return validation("expires_at", "a gtd order needs expires_at")
  }
  if (input.expires_at !== undefined && tif === "gtc") tif = "gtd"
  const position = d.ledger.position(input.account, input.market_id)
  if (input.reduce_only === true) {
    const reduces = input.side === "buy" ? position.contracts < 0 : position.contracts > 0
    if (!reduces || amount > Math.abs(position.contracts)) {
      return validation(
        "reduce_only",
        `the position is ${F.format(position.contracts)}; this order would not only reduce it`
      )
    }
  }
  const refuse = (rule: string, message: string): Refusal => ({
    _tag: "refusal",
    entry: {
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
    },
    error: riskRejected(rule, message)
  })
  const halt = d.halted(venueId)
  if (halt !== undefined) return refuse("kill_switch", `trading is halted (${halt.scope}): ${halt.reason}`)
  const refusal = checkRisk(d.rules(), {
    side: input.side,
    price,
    amount,
    mark: risk.mark,
    openOrders: d.memory.openOrders(input.account),
    position: position.contracts,
    ordersLastMinute: d.rate.lastMinute(now),
    pnlToday: risk.pnlToday
  })
  if (refusal !== undefined) return refuse(refusal.rule, refusal.message)
  // A remote venue charges its fee on top of the notional (Polymarket at match time): the most it can charge is
  // reserved with it, so an order near a full balance is refused here rather than by the venue.
  const feeReserve =
    trading.remote === true && market.feeSchedule !== undefined
      ? F.mul(worstFeePerContract(market.feeSchedule, price, market.lot), amount, "up")
      : F.ZERO
  const needed = input.reduce_only === true ? F.ZERO : F.add(collateral(input.side, price, amount), feeReserve)
  const available = F.sub(d.ledger.cashOf(input.account), d.memory.locked(input.account))
  if (needed > available) {
    return new ApiError({
      status: 400,
      code: "insufficient_funds",
      message: `${venueId} refused the order: it needs ${F.format(needed)} and ${F.format(available)} is available`,
      details: { venue: venueId, retryable: false, reason: "insufficient balance" }
    })
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
  return { _tag: "admitted", pending, request, trading, now }
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
  const target = yield* orFail(targetOf(d, input))
  if (input.client_order_id !== undefined) {
    const again = repeatOf(input, target, yield* d.findByClientId(input.account, input.client_order_id))
    if (again !== undefined) return yield* orFail(again)
  }
  const read = reads === undefined ? yield* Effect.either(target.venue.market(target.nativeId)) : undefined
  const found =
    read !== undefined
      ? read._tag === "Left"
        ? yield* Effect.fail(fromVenueError(read.left))
        : read.right
      : reads!.market instanceof VenueError
        ? yield* Effect.fail(fromVenueError(reads!.market))
        : reads!.market
  const rules = d.rules()
  // The mark is only the price collar's: the book is read for it when the collar is set (a venue that does not
  // stream the market answers a book read with a request of its own).
  const risk: RiskReads = {
    mark:
      rules.price_collar === null
        ? null
        : d.markOf(input.market_id, reads === undefined ? yield* d.bookOf(input.market_id) : reads.book).mark,
    pnlToday: rules.daily_loss_limit === null ? F.ZERO : yield* d.pnlToday(input.account, now)
  }
  const checked = checkPlacement(d, input, actor, now, target, found, risk)
  if (checked instanceof ApiError) return yield* Effect.fail(checked)
  if (checked._tag === "refusal") return yield* Effect.zipRight(d.emit([checked.entry]), Effect.fail(checked.error))
  d.memory.name(checked.pending, target.digest)
  yield* d.writeAhead(checked.pending, input.parentState)
  return checked
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

/** The `order.rejected` that goes with an order written ahead that its venue refused. */
const rejectedEntry = (pending: Order, now: number, error: VenueError): JournalEntry => ({
  ts: now,
  kind: "order.rejected",
  key: pending.id,
  payload: {
    client_order_id: pending.clientOrderId,
    market_id: pending.marketId,
    reason: error.reason,
    kind: error.kind
  }
})

/** Removes an order written ahead that its venue refused, with its `order.rejected`, and fails with the refusal. */
export const refused = (d: Placing, pending: Order, now: number, error: VenueError) =>
  Effect.zipRight(d.withdraw(pending, rejectedEntry(pending, now, error)), Effect.fail(fromVenueError(error)))

/** The order written ahead as its venue took it: open under the venue's id (with `info` added); the rate counts it. */
const placedOf = (d: Placing, pending: Order, answer: VenueOrder, info?: Readonly<Record<string, unknown>>): Order => {
  d.rate.note(pending.createdAt)
  const current = d.memory.lookup(pending.id) ?? pending
  return {
    ...current,
    status: "open",
    venueOrderId: answer.venueOrderId,
    info: info === undefined ? current.info : { ...current.info, ...info }
  }
}

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
  yield* d.setOrder(placedOf(d, pending, answer, info), "order.accepted")
  yield* d.applyAnswer(pending.venue, answer)
  yield* d.applySnapshot(d.memory.lookup(pending.id)!, answer)
})

/** What placing in plain code needs of the desk beside `Placing`: its writes and reads that answer at once. */
export interface PlacingNow {
  readonly placing: Placing
  readonly findByClientId: (
    account: string,
    clientOrderId: string
  ) => { readonly order: Order; readonly digest: string | undefined } | undefined
  readonly emit: (entries: ReadonlyArray<JournalEntry>) => void
  /**
   * What is written before the venue is asked. The store here is in memory (it answers reads in plain code), so it
   * holds nothing a crash would leave: the order is written with the venue's answer, and only the parent's state the
   * step left to this placement is written now.
   */
  readonly writeAhead: (order: Order, parent?: StoredParent) => void
  readonly withdraw: (order: Order, entry: JournalEntry) => void
  readonly setOrder: (order: Order, kind: string) => void
  readonly applyAnswer: (venue: string, answer: VenueOrder) => void
  readonly applySnapshot: (order: Order, snapshot: VenueOrder) => void
}

/**
 * `placeOrder` in plain code, on a venue that answers in process (`Venue.now`) with no risk rule that reads the
 * market or the day's fills: the same checks, writes and answer, with no Effect step. Undefined, with nothing done,
 * when the order is not of that kind.
 */
export const placeOrderNow = (
  n: PlacingNow,
  input: PlaceInput,
  actor: string,
  now: number
): { readonly order: Order; readonly created: boolean } | ApiError | undefined => {
  const d = n.placing
  const rules = d.rules()
  if (rules.price_collar !== null || rules.daily_loss_limit !== null) return undefined
  const target = targetOf(d, input)
  if (target instanceof ApiError) return target
  const venueNow = target.venue.now
  const tradingNow = target.trading.now
  if (venueNow === undefined || tradingNow === undefined || target.trading.remote === true) return undefined
  if (input.client_order_id !== undefined) {
    const again = repeatOf(input, target, n.findByClientId(input.account, input.client_order_id))
    if (again !== undefined) return again instanceof ApiError ? again : { order: again.order, created: false }
  }
  const checked = checkPlacement(d, input, actor, now, target, venueNow.market(target.nativeId), {
    mark: null,
    pnlToday: F.ZERO
  })
  if (checked instanceof ApiError) return checked
  if (checked._tag === "refusal") {
    n.emit([checked.entry])
    return checked.error
  }
  const { pending, request } = checked
  d.memory.name(pending, target.digest)
  n.writeAhead(pending, input.parentState)
  const answer = tradingNow.placeOrder(request, now)
  if (answer instanceof VenueError) {
    n.withdraw(pending, rejectedEntry(pending, now, answer))
    return fromVenueError(answer)
  }
  n.setOrder(placedOf(d, pending, answer), "order.accepted")
  n.applyAnswer(pending.venue, answer)
  n.applySnapshot(d.memory.lookup(pending.id)!, answer)
  return { order: d.memory.lookup(pending.id)!, created: true }
}
