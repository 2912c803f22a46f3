/** Polymarket's trading side: placements, cancels, order and own-fill reads and settlements of one account. */
import { Clock, Effect, Schema } from "effect"
import * as F from "../../Domain/Fixed.ts"
import type { PlaceOrderRequest, VenueError, VenueFill, VenueHolding, VenueOrder } from "../../Services/VenueGateway.ts"
import type { PolymarketCatalog } from "./Catalog.ts"
import type { Channels } from "./Channels.ts"
import { makeOrders, OpenOrder } from "./Orders.ts"
import { makePlacement } from "./Placement.ts"
import { fail, type PolymarketRest } from "./Rest.ts"
import { makeSession } from "./Session.ts"
import type { PolymarketAccount, PolymarketConfig } from "./Settings.ts"
import { makeUserChannel } from "./UserChannel.ts"
import { Decimal, GammaMarkets, toMarket } from "./Wire.ts"

/** A Data API position (`GET /positions?user=`): `redeemable` once its market resolved, gone once redeemed. */
const DataPositions = Schema.Array(
  Schema.Struct({
    conditionId: Schema.String,
    asset: Schema.String,
    size: Decimal,
    redeemable: Schema.optional(Schema.Boolean)
  })
)
/** Markets asked for in one Data API read of positions (their condition ids in the query). */
const UNREDEEMED_BATCH = 20
const Canceled = Schema.Struct({ canceled: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))) })

/**
 * What the trading side needs: the REST client, the settings and account, the catalog, the channels, and the set of
 * resting orders the heartbeat keeps alive.
 */
export interface TradingDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly account: PolymarketAccount
  readonly catalog: PolymarketCatalog
  readonly channels: Channels
  readonly resting: Set<string>
}

/** Builds the trading side of one account; its user channel opens on the first placement and lasts as the scope. */
export const makePolymarketTrading = (deps: TradingDeps) =>
  Effect.gen(function* () {
    const { rest, config, account, catalog, channels, resting } = deps
    const { funder } = account
    const { market, requireMarket } = catalog
    const session = makeSession({ rest, config, account })
    const { ensureCreds } = session
    const orders = makeOrders({ rest, catalog, account })
    const { signedFor, placedOf, fromOpenOrder, toFill, pages, orderRow, ownTrades, legsOf } = orders
    const userChannel = yield* makeUserChannel({ config, catalog, channels, orders, resting })
    const startUserChannel = userChannel.start
    const { placeOrder, findSigned } = makePlacement({ ...deps, session, orders, startUserChannel })

    /**
     * The account's resting orders on the venue, each remembered so that its fills and a cancel find it again: a
     * NO-token BUY at q is our `sell` at 1 − q, a YES SELL our `sell` at p. The venue keeps no client id.
     */
    const openOrders: Effect.Effect<ReadonlyArray<VenueOrder>, VenueError> = Effect.gen(function* () {
      const creds = yield* ensureCreds
      yield* startUserChannel(creds)
      const now = yield* Clock.currentTimeMillis
      const out: Array<VenueOrder> = []
      for (const o of yield* pages("/data/orders", OpenOrder)) {
        const p = yield* placedOf(o)
        if (p === undefined) continue
        const view = fromOpenOrder(o, p, now)
        if (view.status === "open") resting.add(o.id)
        out.push(view)
      }
      return out
    })

    const orderById = (venueOrderId: string): Effect.Effect<VenueOrder | undefined, VenueError> =>
      Effect.gen(function* () {
        yield* ensureCreds
        const o = yield* orderRow(venueOrderId)
        if (o === undefined) return undefined
        const p = yield* placedOf(o)
        if (p === undefined) return undefined
        const view = fromOpenOrder(o, p, yield* Clock.currentTimeMillis)
        if (view.status !== "open") resting.delete(venueOrderId)
        return view
      })

    const readOrder = (venueOrderId: string): Effect.Effect<VenueOrder, VenueError> =>
      Effect.flatMap(orderById(venueOrderId), (o) =>
        o === undefined ? fail("rejected", `the venue has no order ${venueOrderId}`) : Effect.succeed(o)
      )

    const fillsSince = (since: number): Effect.Effect<ReadonlyArray<VenueFill>, VenueError> =>
      Effect.gen(function* () {
        const creds = yield* ensureCreds
        const out: Array<VenueFill> = []
        for (const t of yield* ownTrades(since)) {
          if (t.status.toUpperCase() === "FAILED") continue
          const m = yield* market(t.market)
          if (m === undefined) continue
          for (const leg of legsOf(t, m, creds.key)) if (leg.ts >= since) out.push(toFill(leg))
        }
        return out.sort((a, b) => a.ts - b.ts || (a.tradeId < b.tradeId ? -1 : a.tradeId > b.tradeId ? 1 : 0))
      })

    const orderByClientId = (
      clientOrderId: string,
      request?: PlaceOrderRequest
    ): Effect.Effect<VenueOrder | undefined, VenueError> =>
      Effect.gen(function* () {
        const hash = signedFor.get(clientOrderId)
        if (hash !== undefined) return yield* orderById(hash)
        if (request !== undefined) return yield* findSigned(request)
        // without the request nothing can be looked for: no order of this client id was signed since the start
        return undefined
      })

    /** Markets the account held that resolved since `since` (ms), with the YES payout, from redeemable positions. */
    const settlementsSince = (since: number) =>
      Effect.gen(function* () {
        if (funder === undefined) return yield* fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY")
        const rows = yield* rest.json(
          {
            family: "data",
            host: "data",
            method: "GET",
            path: `/positions?user=${funder}&redeemable=true&sizeThreshold=0`
          },
          DataPositions
        )
        const out: Array<{ nativeId: string; payout: F.Fixed; ts: number }> = []
        const now = yield* Clock.currentTimeMillis
        for (const id of new Set(rows.filter((p) => p.redeemable !== false).map((p) => p.conditionId))) {
          const fresh = yield* rest.json(
            { family: "gamma", host: "gamma", method: "GET", path: `/markets?condition_ids=${id}&closed=true` },
            GammaMarkets
          )
          const m = fresh.map((g) => toMarket(g)).find((x) => x !== undefined)
          if (m === undefined || m.result === null) continue
          catalog.remember(m)
          const ts = m.closedAt ?? now
          if (ts >= since) out.push({ nativeId: m.nativeId, payout: m.result === "yes" ? F.ONE : F.ZERO, ts })
        }
        return out.sort((a, b) => a.ts - b.ts)
      })

    /**
     * The tokens the wallet still holds in these (resolved) markets, from the Data API's positions: a winning side is
     * held until the wallet redeems it on chain, which burns the tokens and removes the position.
     */
    const unredeemed = (nativeIds: ReadonlyArray<string>) =>
      Effect.gen(function* () {
        if (funder === undefined) return yield* fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY")
        const out: Array<VenueHolding> = []
        for (let i = 0; i < nativeIds.length; i += UNREDEEMED_BATCH) {
          const ids = nativeIds.slice(i, i + UNREDEEMED_BATCH)
          const rows = yield* rest.json(
            {
              family: "data",
              host: "data",
              method: "GET",
              path: `/positions?user=${funder}&market=${ids.join(",")}&sizeThreshold=0&limit=500`
            },
            DataPositions
          )
          for (const row of rows) {
            if (row.size <= 0 || !ids.includes(row.conditionId)) continue
            const m = yield* market(row.conditionId)
            const side = m?.yesToken === row.asset ? "yes" : m?.noToken === row.asset ? "no" : undefined
            if (side === undefined) continue
            out.push({ nativeId: row.conditionId, side, size: row.size as F.Fixed })
          }
        }
        return out
      })

    const cancelOrder = (venueOrderId: string): Effect.Effect<VenueOrder, VenueError> =>
      Effect.gen(function* () {
        yield* ensureCreds
        yield* rest.raw({
          family: "cancel",
          host: "clob",
          method: "DELETE",
          path: "/order",
          body: { orderID: venueOrderId },
          auth: "l2"
        })
        return yield* readOrder(venueOrderId)
      })

    const cancelAll = Effect.gen(function* () {
      yield* ensureCreds
      const r = yield* rest.json(
        { family: "cancel", host: "clob", method: "DELETE", path: "/cancel-all", auth: "l2" },
        Canceled
      )
      resting.clear()
      return r.canceled?.length ?? 0
    })

    const cancelMarket = (nativeId: string) =>
      Effect.gen(function* () {
        yield* ensureCreds
        const m = yield* requireMarket(nativeId)
        const r = yield* rest.json(
          {
            family: "cancel",
            host: "clob",
            method: "DELETE",
            path: "/cancel-market-orders",
            body: { market: m.nativeId },
            auth: "l2"
          },
          Canceled
        )
        for (const id of r.canceled ?? []) resting.delete(id)
        return r.canceled?.length ?? 0
      })

    return {
      placeOrder,
      cancelOrder,
      cancelAll,
      cancelMarket,
      openOrders,
      orderByClientId,
      orderById,
      fillsSince,
      settlementsSince,
      unredeemed
    }
  })
