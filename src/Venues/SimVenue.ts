/** The embedded `sim` venue: the simulated exchange behind the VenueGateway interface, moving with the Clock. */
import { Clock, Effect, PubSub, Schedule } from "effect"
import type { Fixed } from "../Domain/Fixed.ts"
import type { Capabilities, Venue, VenueOrder } from "../Services/VenueGateway.ts"
import { VenueError } from "../Services/VenueGateway.ts"
import { SimExchange, type SimEvent, type SimOrderView } from "./Sim/Exchange.ts"

export interface SimVenueConfig {
  readonly seed: number
  /** How often the markets move, in ms of the Clock. */
  readonly stepMs: number
  readonly markets: number
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

export interface SimVenue extends Venue {
  readonly exchange: SimExchange
  /** Everything the exchange reports as time moves (trades, own fills, order updates, book changes). */
  readonly events: PubSub.PubSub<SimEvent>
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
    const events = yield* PubSub.unbounded<SimEvent>()
    const sync = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const out = exchange.advanceTo(now)
      return out.length === 0 ? Effect.void : PubSub.publishAll(events, out)
    })
    yield* Effect.forkScoped(Effect.repeat(sync, Schedule.spaced(config.stepMs)))

    const refused = (reason: string, code: string) =>
      new VenueError({
        venue: "sim",
        kind: code === "market_closed" ? "market_closed" : "rejected",
        reason
      })
    const withTime = <A>(f: (now: number) => A) => Effect.flatMap(sync, () => Effect.map(Clock.currentTimeMillis, f))
    const settle = (result: ReturnType<SimExchange["placeOrder"]>) =>
      result._tag === "Refused"
        ? Effect.fail(refused(result.reason, result.code))
        : Effect.as(PubSub.publishAll(events, result.events), toVenueOrder(result.order))

    const venue: SimVenue = {
      info: { id: "sim", name: "Simulated exchange", book_model: "yes_book", has: SIM_CAPABILITIES },
      accounts: ["default"],
      exchange,
      events,
      markets: withTime(() => exchange.markets()),
      market: (nativeId) => withTime(() => exchange.market(nativeId)),
      book: (nativeId) => withTime(() => exchange.book(nativeId)),
      trades: (nativeId) => withTime(() => exchange.trades(nativeId)),
      placeOrder: (request) =>
        Effect.flatMap(
          withTime((now) =>
            exchange.placeOrder(
              {
                clientOrderId: request.clientOrderId,
                marketId: request.nativeId,
                side: request.side,
                price: request.price,
                amount: request.amount,
                tif: request.timeInForce,
                postOnly: request.postOnly,
                expiresAt: request.expiresAt
              },
              now
            )
          ),
          settle
        ),
      cancelOrder: (id) =>
        Effect.flatMap(
          withTime((now) => exchange.cancelOrder(id, now)),
          settle
        ),
      amendOrder: (id, changes: { readonly price?: Fixed; readonly amount?: Fixed }) =>
        Effect.flatMap(
          withTime((now) => exchange.amendOrder(id, changes, now)),
          settle
        ),
      orderByClientId: (clientOrderId) =>
        withTime(() => {
          const order = exchange.orderByClientId(clientOrderId)
          return order === undefined ? undefined : toVenueOrder(order)
        })
    }
    return venue
  })
