/** The embedded `sim` venue: the simulated exchange behind the VenueGateway interface, moving with the Clock. */
import { Clock, Effect, PubSub, Schedule, Schema } from "effect"
import type { Fixed } from "../Domain/Fixed.ts"
import type { Capabilities, Venue, VenueEvent, VenueFill, VenueOrder } from "../Services/VenueGateway.ts"
import { VenueError } from "../Services/VenueGateway.ts"
import * as F from "../Domain/Fixed.ts"
import { generateVenueCatalogs, type SimMarketSpec, simVenueId } from "./Sim/Catalog.ts"
import {
  SimExchange,
  type SimEvent,
  type SimFees,
  type SimFill,
  type SimOrderResult,
  type SimOrderView
} from "./Sim/Exchange.ts"

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
  /** The venue's id (default `sim`). */
  readonly id?: string
  /** Its markets, in place of the seeded catalog of `markets` markets. */
  readonly catalog?: ReadonlyArray<SimMarketSpec>
  readonly fees?: SimFees
  /** When the exchange starts (default the Clock's time), so that linked venues step together. */
  readonly startMs?: number
}

/**
 * The fee schedule of the k-th sim venue (from 1): `sim` charges takers 0.07 and makers nothing, `sim2` takers
 * 0.04 and makers 0.01, `sim3` takers 0.10; then again in turn.
 */
export const simVenueFees = (k: number): Required<SimFees> => {
  const schedules = [
    { takerRate: F.of("0.07"), makerRate: F.ZERO },
    { takerRate: F.of("0.04"), makerRate: F.of("0.01") },
    { takerRate: F.of("0.1"), makerRate: F.ZERO }
  ] as const
  return schedules[(k - 1) % schedules.length]!
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
    case "Settled":
      return { _tag: "Settled", nativeId: event.marketId, payout: event.payout, ts: event.ts }
    case "Trade":
      return undefined
  }
}

export interface SimVenue extends Venue {
  readonly exchange: SimExchange
  /**
   * Resolves a market now: a YES contract pays `payout` (1 for YES, 0 for NO), own orders resting in it are canceled,
   * and subscribers hear of it (`Settled`). A market settled already is left as it is.
   */
  readonly resolve: (nativeId: string, payout: Fixed) => Effect.Effect<void>
}

/**
 * Builds the sim venue at the Clock's current time. The catalog is anchored to the start of the UTC day, so a
 * restart on the same day with the same seed lists the same markets. A scoped fiber moves the markets every step.
 */
export const makeSimVenue = (config: SimVenueConfig) =>
  Effect.gen(function* () {
    const startMs = config.startMs ?? (yield* Clock.currentTimeMillis)
    const id = config.id ?? "sim"
    const exchange = new SimExchange({
      seed: config.seed,
      startMs,
      catalogStartMs: Math.floor(startMs / DAY_MS) * DAY_MS,
      markets: config.markets,
      stepMs: config.stepMs,
      ...(config.catalog === undefined ? {} : { catalog: config.catalog }),
      ...(config.fees === undefined ? {} : { fees: config.fees })
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
          return yield* Effect.fail(faultError(id, fault))
        }
        const result = run(now)
        yield* publish(result.events)
        if (fault !== undefined) return yield* Effect.fail(faultError(id, fault))
        if (result._tag === "Refused") {
          return yield* Effect.fail(
            new VenueError({
              venue: id,
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
      info: {
        id,
        name: id === "sim" ? "Simulated exchange" : `Simulated exchange ${id.slice(3)}`,
        book_model: "yes_book",
        has: SIM_CAPABILITIES
      },
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
      settlementsSince: (since) => read(() => exchange.settlements(since)),
      resolve: (nativeId, payout) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => publish(exchange.resolve(nativeId, payout, now))),
      subscribe: PubSub.subscribe(events)
    }
    return venue
  })

const faultError = (venue: string, fault: FaultRule): VenueError => {
  const reasons = {
    insufficient_funds: "insufficient balance for this order",
    rejected: "order refused by the venue",
    rate_limited: "too many requests",
    timeout: "no answer within the deadline",
    unavailable: "service unavailable"
  }
  return new VenueError({
    venue,
    kind: fault.kind,
    reason: `${reasons[fault.kind]} (fault plan: ${fault.op} #${fault.nth})`,
    ...(fault.retry_after_s === undefined ? {} : { retryAfterS: fault.retry_after_s })
  })
}

/**
 * The embedded sim venues `sim`, `sim2`, … (`count` of them, at least one), started at one instant so that their
 * linked markets step together: each lists some of `sim`'s propositions in its own words, some the other way round,
 * with its own fee schedule (`simVenueFees`). The fault plan applies to `sim` alone.
 */
export const makeSimVenues = (config: SimVenueConfig & { readonly count: number }) =>
  Effect.gen(function* () {
    const startMs = config.startMs ?? (yield* Clock.currentTimeMillis)
    const count = Math.max(1, Math.floor(config.count))
    const catalogs = generateVenueCatalogs(config.seed, Math.floor(startMs / DAY_MS) * DAY_MS, config.markets, count)
    const venues: Array<SimVenue> = []
    for (const [i, catalog] of catalogs.entries()) {
      const k = i + 1
      venues.push(
        yield* makeSimVenue({
          seed: config.seed,
          stepMs: config.stepMs,
          markets: config.markets,
          id: simVenueId(k),
          startMs,
          ...(count > 1 ? { catalog, fees: simVenueFees(k) } : {}),
          ...(k === 1 && config.faults !== undefined ? { faults: config.faults } : {})
        })
      )
    }
    return venues
  })
