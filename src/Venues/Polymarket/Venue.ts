/** The Polymarket venue behind the VenueGateway seam: Gamma catalog, the YES token's CLOB book, signed trading. */
import type { HttpClient } from "@effect/platform"
import { Effect, PubSub, type Scope } from "effect"
import { capabilities, type RemoteVenue, type Venue, type VenueEvent } from "../../Services/VenueGateway.ts"
import { makePolymarketCatalog } from "./Catalog.ts"
import { makeChannels } from "./Channels.ts"
import { makePolymarketData } from "./Data.ts"
import { makeHeartbeat } from "./Heartbeat.ts"
import { fail, makeRest, type PolymarketRest } from "./Rest.ts"
import { accountOf, type PolymarketConfig } from "./Settings.ts"
import { MarketBooks } from "./Stream.ts"
import { makePolymarketTrading } from "./Trading.ts"
import { VENUE } from "./Wire.ts"

export { accountOf, configFromEnv, type PolymarketAccount, type PolymarketConfig } from "./Settings.ts"

/** What the venue can do: public data always, trading only with a key. */
export const polymarketCapabilities = (trading: boolean) =>
  capabilities({
    fetch_markets: true,
    search: true,
    fetch_order_book: true,
    fetch_trades: true,
    watch_order_book: true,
    create_order: trading,
    cancel_order: trading,
    cancel_all_orders: trading,
    edit_order: false,
    fetch_orders: trading,
    fetch_my_trades: trading,
    fetch_positions: false,
    fetch_balance: false,
    post_only: trading,
    reduce_only: trading ? "partial" : false,
    ioc: trading,
    fok: trading,
    market_order: trading
  })

/** Builds the Polymarket venue. Without a private key it serves public data and refuses to trade. */
export const makePolymarketVenue = (
  config: PolymarketConfig
): Effect.Effect<Venue, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const account = accountOf(config)
    const { identity } = account
    const rest: PolymarketRest = yield* makeRest({ hosts: config.hosts, timeout: config.timeout }, identity)
    const events = yield* PubSub.unbounded<VenueEvent>()
    const clock = yield* Effect.clock
    const channels = makeChannels({ config, events, nowMs: () => clock.unsafeCurrentTimeMillis() })
    const books = new MarketBooks()
    const catalog = makePolymarketCatalog({ rest, config, books })
    const data = makePolymarketData({ rest, config, catalog, books, channels })
    const heartbeat = yield* makeHeartbeat({ rest, config, trading: identity !== undefined })
    const trading = yield* makePolymarketTrading({
      rest,
      config,
      account,
      catalog,
      channels,
      resting: heartbeat.resting
    })

    const venue: RemoteVenue<ReturnType<typeof polymarketCapabilities>> & { readonly watch: typeof data.watch } = {
      cancelAll: trading.cancelAll,
      cancelMarket: trading.cancelMarket,
      heartbeat: heartbeat.status,
      streamsTrades: true,
      remote: true,
      info: {
        id: VENUE,
        name: "Polymarket",
        book_model: "yes_book",
        has: polymarketCapabilities(identity !== undefined)
      },
      accounts: identity === undefined ? [] : ["default"],
      markets: catalog.markets,
      market: catalog.market,
      book: data.book,
      trades: data.trades,
      placeOrder: trading.placeOrder,
      cancelOrder: trading.cancelOrder,
      amendOrder: () => fail("not_supported", "Polymarket has no amend: cancel and place again"),
      openOrders:
        identity === undefined ? fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY") : trading.openOrders,
      orderByClientId: trading.orderByClientId,
      orderById: trading.orderById,
      fillsSince: trading.fillsSince,
      settlementsSince: trading.settlementsSince,
      unredeemed: trading.unredeemed,
      streams: channels.statuses,
      subscribe: PubSub.subscribe(events),
      watch: data.watch
    }
    return venue
  })
