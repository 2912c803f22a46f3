/** The Kalshi venue behind the VenueGateway seam: public data without credentials, trading on `kalshi:default` with them. */
import type { HttpClient } from "@effect/platform"
import { Effect, PubSub, type Scope } from "effect"
import {
  type Capabilities,
  type RemoteVenue,
  type Venue,
  type VenueError,
  type VenueEvent
} from "../../Services/VenueGateway.ts"
import { makeKalshiCatalog } from "./Catalog.ts"
import { makeKalshiData } from "./Data.ts"
import { makeRest, venueError } from "./Rest.ts"
import { configFromEnv, type Env, type KalshiConfig } from "./Settings.ts"
import { makeKalshiTrading } from "./Trading.ts"
import * as W from "./Wire.ts"

export { configFromEnv, ENDPOINTS, type Env, type KalshiConfig } from "./Settings.ts"
export { createOrderBody, placementRule } from "./Trading.ts"

/**
 * What Kalshi can do here: trading needs credentials; the socket needs them too (the venue authenticates it).
 * `reduce_only` is partial: the venue takes it only on an immediate-or-cancel order.
 */
export const kalshiCapabilities = (trading: boolean): Capabilities => ({
  fetch_markets: true,
  search: true,
  fetch_order_book: true,
  fetch_trades: true,
  watch_order_book: trading,
  create_order: trading,
  cancel_order: trading,
  cancel_all_orders: trading,
  edit_order: trading,
  fetch_orders: trading,
  fetch_my_trades: trading,
  fetch_positions: trading,
  fetch_balance: trading,
  post_only: trading,
  reduce_only: trading ? "partial" : false,
  ioc: trading,
  fok: trading,
  market_order: trading
})

/** A Kalshi venue, built from its settings; its socket and buckets live as long as the scope. */
export const makeKalshiVenue = (
  config: KalshiConfig
): Effect.Effect<Venue, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const rest = yield* makeRest({
      baseUrl: config.apiUrl,
      credentials: config.credentials,
      timeout: `${config.timeoutMs} millis`,
      limits: config.limits
    })
    const trading = config.credentials !== undefined
    const events = yield* PubSub.unbounded<VenueEvent>()
    const catalog = yield* makeKalshiCatalog({ rest, config })
    const account = makeKalshiTrading({ rest, config, catalog, events })
    const data = yield* makeKalshiData({ rest, config, events, catalog, trading: account })

    const notTrading = <A>(): Effect.Effect<A, VenueError> =>
      Effect.fail(venueError("not_supported", "no Kalshi credentials are configured (KALSHI_API_KEY_ID)"))

    const venue: RemoteVenue<ReturnType<typeof kalshiCapabilities>> = {
      info: { id: W.VENUE, name: "Kalshi", book_model: "yes_book", has: kalshiCapabilities(trading) },
      remote: true,
      streamsTrades: data.streamsTrades,
      accounts: trading ? ["default"] : [],
      markets: catalog.markets,
      market: catalog.market,
      book: data.book,
      trades: data.trades,
      placeOrder: trading ? account.placeOrder : () => notTrading(),
      cancelOrder: trading ? account.cancelOrder : () => notTrading(),
      amendOrder: trading ? account.amendOrder : () => notTrading(),
      orderByClientId: trading ? account.orderByClientId : () => notTrading(),
      orderById: trading ? account.orderById : () => notTrading(),
      fillsSince: trading ? account.fillsSince : () => notTrading(),
      settlementsSince: trading ? account.settlementsSince : () => notTrading(),
      streams: data.streams,
      subscribe: PubSub.subscribe(events),
      balance: trading ? account.balance : notTrading(),
      positions: trading ? account.positions : notTrading(),
      openOrders: trading ? account.openOrders : notTrading(),
      decreaseOrder: trading ? account.decreaseOrder : () => notTrading(),
      cancelAll: trading ? account.cancelAll : notTrading(),
      fees: catalog.fees
    }
    return venue
  })

/** The Kalshi builder from the environment: a settings error (a key id without its key…) fails with a sentence. */
export const kalshiBuilder = (env: Env): Effect.Effect<Venue, string, Scope.Scope | HttpClient.HttpClient> =>
  Effect.flatMap(configFromEnv(env), makeKalshiVenue)
