/** The embedded `sim` venue: the simulated exchange behind the VenueGateway interface, moving with the Clock. */
import { Clock, Effect, PubSub, Schedule, Schema } from "effect"
import type { Fixed } from "../Domain/Fixed.ts"
import type { Capabilities, Venue, VenueEvent, VenueFill, VenueOrder } from "../Services/VenueGateway.ts"
import { VenueError } from "../Services/VenueGateway.ts"
import { SimExchange, type SimEvent, type SimFill, type SimOrderResult, type SimOrderView } from "./Sim/Exchange.ts"

/**
 * A deterministic fault: the `nth` request of `op` (counted from 1 since start) fails with `kind`. A `timeout` with
 * `reached: true` is carried out by the exchange but its answer is lost, as when a network drops the reply.
 */
export const FaultRule = Schema.Struct({
  op: Schema.Literal("place", "cancel", "amend"),
  nth: Schema.Int.pipe(Schema.positive()),
  kind: Schema.Literal("insufficient_funds", "rejected", "rate_limited", "timeout", "unavailable"),
  retry_after_s: Schema.optional(Schema.Number),
  reached: Schema.optional(Schema.Boolean)
})
export type FaultRule = typeof FaultRule.Type
export const FaultPlan = Schema.Array(FaultRule)

export interface SimVenueConfig {
  readonly seed: number
  /** How often the markets move, in ms of the Clock. */
  readonly stepMs: number
  readonly markets: number
  readonly faults?: ReadonlyArray<FaultRule>
}

export const SIM_CAPABILITIES: Capabilities = {
  fetch_markets: true,
  search: true,
  fetch_order_book: true,
  fetch_trades: true,
  watch_order_book: true,
  create_order: true,
  cancel_order: true,
  cancel_all_orders: true,
  edit_order: true,
  fetch_orders: true,
  fetch_my_trades: true,
  fetch_positions: true,
  fetch_balance: true,
  post_only: true,
  reduce_only: true,
  ioc: true,
  fok: true,
  market_order: true
}

const DAY_MS = 86_400_000

const toVenueOrder = (o: SimOrderView): VenueOrder => ({
  venueOrderId: o.id,
  clientOrderId: o.clientOrderId,
  nativeId: o.marketId,
  side: o.side,
  price: o.price,
  amount: o.amount,
  filled: o.filled,
  status: o.status,
  averagePrice: o.avgPrice,
  cost: o.cost,
  fee: o.fee,
  queuePriorityPreserved: o.queuePriorityPreserved,
  updatedAt: o.updatedAt
})

const toVenueFill = (f: SimFill): VenueFill => ({
  tradeId: f.tradeId,
  venueOrderId: f.orderId,
  clientOrderId: f.clientOrderId,
  nativeId: f.marketId,
  side: f.side,
  price: f.price,
  amount: f.amount,
  fee: f.fee,
  liquidity: f.liquidity,
  ts: f.ts
})

const toVenueEvent = (event: SimEvent): VenueEvent | undefined => {
  switch (event._tag) {
    case "Fill":
      return { _tag: "Fill", fill: toVenueFill(event.fill) }
    case "OrderUpdate":
      return { _tag: "Order", order: toVenueOrder(event.order) }
    case "BookChanged":
      return { _tag: "Book", nativeId: event.marketId, ts: event.ts }
    case "Trade":
      return undefined
  }
}

export interface SimVenue extends Venue {
  readonly exchange: SimExchange
}

/**
 * Builds the sim venue at the Clock's current time. The catalog is anchored to the start of the UTC day, so a
 * restart on the same day with the same seed lists the same markets. A scoped fiber moves the markets every step.
 */
export const makeSimVenue = (config: SimVenueConfig) =>
  Effect.gen(function* () {
    const startMs = yield* Clock.currentTimeMillis
    const exchange = new SimExchange({
      seed: config.seed,
      startMs,
      catalogStartMs: Math.floor(startMs / DAY_MS) * DAY_MS,
      markets: config.markets,
      stepMs: config.stepMs
    })
    const events = yield* PubSub.unbounded<VenueEvent>()
    const publish = (out: ReadonlyArray<SimEvent>) => {
      const mapped = out.map(toVenueEvent).filter((e): e is VenueEvent => e !== undefined)
      return mapped.length === 0 ? Effect.void : PubSub.publishAll(events, mapped)
    }
    const sync = Effect.flatMap(Clock.currentTimeMillis, (now) => publish(exchange.advanceTo(now)))
    yield* Effect.forkScoped(Effect.repeat(sync, Schedule.spaced(config.stepMs)))

    const counts = { place: 0, cancel: 0, amend: 0 }
    const faults = config.faults ?? []
    /** Runs a request through the fault plan: fails before or after the exchange, or answers as the exchange did. */
    const request = (op: "place" | "cancel" | "amend", run: (now: number) => SimOrderResult) =>
      Effect.gen(function* () {
        yield* sync
        counts[op] += 1
        const fault = faults.find((f) => f.op === op && f.nth === counts[op])
        const now = yield* Clock.currentTimeMillis
        if (fault !== undefined && !(fault.kind === "timeout" && fault.reached === true)) {
          return yield* Effect.fail(faultError(fault))
        }
        const result = run(now)
        yield* publish(result.events)
        if (fault !== undefined) return yield* Effect.fail(faultError(fault))
        if (result._tag === "Refused") {
          return yield* Effect.fail(
            new VenueError({
              venue: "sim",
              kind: result.code === "market_closed" ? "market_closed" : "rejected",
              reason: result.reason
            })
          )
        }
        const reported = result.events.map(toVenueEvent).filter((e): e is VenueEvent => e !== undefined)
        return { ...toVenueOrder(result.order), events: reported }
      })

    const read = <A>(f: () => A) => Effect.map(sync, f)

    const venue: SimVenue = {
      info: { id: "sim", name: "Simulated exchange", book_model: "yes_book", has: SIM_CAPABILITIES },
      accounts: ["default"],
      exchange,
      markets: read(() => exchange.markets()),
      market: (nativeId) => read(() => exchange.market(nativeId)),
      book: (nativeId) => read(() => exchange.book(nativeId)),
      trades: (nativeId) => read(() => exchange.trades(nativeId)),
      placeOrder: (r) =>
        request("place", (now) =>
          exchange.placeOrder(
            {
              clientOrderId: r.clientOrderId,
              marketId: r.nativeId,
              side: r.side,
              price: r.price,
              amount: r.amount,
              tif: r.timeInForce,
              postOnly: r.postOnly,
              expiresAt: r.expiresAt
            },
            now
          )
        ),
      cancelOrder: (id) => request("cancel", (now) => exchange.cancelOrder(id, now)),
      amendOrder: (id, changes: { readonly price?: Fixed; readonly amount?: Fixed }) =>
        request("amend", (now) => exchange.amendOrder(id, changes, now)),
      orderByClientId: (clientOrderId) =>
        read(() => {
          const order = exchange.orderByClientId(clientOrderId)
          return order === undefined || order.status === "rejected" ? undefined : toVenueOrder(order)
        }),
      subscribe: PubSub.subscribe(events)
    }
    return venue
  })

const faultError = (fault: FaultRule): VenueError => {
  const reasons = {
    insufficient_funds: "insufficient balance for this order",
    rejected: "order refused by the venue",
    rate_limited: "too many requests",
    timeout: "no answer within the deadline",
    unavailable: "service unavailable"
  }
  return new VenueError({
    venue: "sim",
    kind: fault.kind,
    reason: `${reasons[fault.kind]} (fault plan: ${fault.op} #${fault.nth})`,
    ...(fault.retry_after_s === undefined ? {} : { retryAfterS: fault.retry_after_s })
  })
}
