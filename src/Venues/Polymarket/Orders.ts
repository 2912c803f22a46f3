/** Polymarket's own orders as we know them: what we asked for by venue order id, the venue's order and trade rows read. */
import { Effect, Schema } from "effect"
import * as F from "../../Domain/Fixed.ts"
import type {
  PlaceOrderRequest,
  VenueError,
  VenueFill,
  VenueOrder,
  VenueOrderStatus
} from "../../Services/VenueGateway.ts"
import type { PolymarketCatalog } from "./Catalog.ts"
import type { PolymarketRest } from "./Rest.ts"
import type { PolymarketAccount } from "./Settings.ts"
import { SIZE_STEP } from "./Signing.ts"
import { MakerOrder, type OwnFill, type OwnOrder, ownLegs, tradeMs } from "./Stream.ts"
import { Decimal, fillFee, type PolymarketMarket } from "./Wire.ts"

/** An order as the CLOB reports it (`GET /data/orders`, `GET /data/order/{id}`). */
export const OpenOrder = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  market: Schema.String,
  asset_id: Schema.String,
  side: Schema.Literal("BUY", "SELL"),
  original_size: Schema.String,
  size_matched: Schema.String,
  price: Schema.String,
  created_at: Schema.optional(Schema.Number),
  expiration: Schema.optional(Schema.String)
})
export type OpenOrder = typeof OpenOrder.Type

/** An own trade as `GET /data/trades` reports it. */
export const ClobTrade = Schema.Struct({
  id: Schema.String,
  taker_order_id: Schema.String,
  market: Schema.String,
  asset_id: Schema.String,
  side: Schema.Literal("BUY", "SELL"),
  size: Decimal,
  price: Decimal,
  status: Schema.String,
  match_time: Schema.Union(Schema.String, Schema.Number),
  fee_rate_bps: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  trader_side: Schema.optional(Schema.Literal("TAKER", "MAKER")),
  maker_orders: Schema.Array(
    Schema.extend(MakerOrder, Schema.Struct({ maker_address: Schema.optional(Schema.String) }))
  )
})
export type ClobTrade = typeof ClobTrade.Type

/** What we asked for, kept per venue order id: the venue knows the token, we know the YES side and client id. */
export interface Placed extends OwnOrder {
  /** The YES price and size we asked for. */
  readonly price: F.Fixed
  readonly amount: F.Fixed
  /** The shares of the venue order (a market BUY's may be a little under `amount`). */
  readonly target: F.Fixed
  readonly tokenId: string
  readonly venueSide: "BUY" | "SELL"
  /** When a GTD order expires (ms), else null. */
  readonly expiresAt: number | null
}

/** The venue order a desk order becomes: which token, bought or sold, at which token price. */
export interface Leg {
  readonly tokenId: string
  readonly venueSide: "BUY" | "SELL"
  readonly venuePrice: F.Fixed
  readonly onNoToken: boolean
}

/** What we asked for with a request placed on market `m` as `leg`, for `target` shares of the venue order. */
export const placedFor = (
  r: PlaceOrderRequest,
  m: PolymarketMarket,
  leg: Leg,
  target: F.Fixed,
  expiresAt: number | null
): Placed => ({
  clientOrderId: r.clientOrderId,
  nativeId: m.nativeId,
  side: r.side,
  price: r.price,
  amount: F.roundTo(r.amount, SIZE_STEP, "down"),
  target,
  onNoToken: leg.onNoToken,
  tokenId: leg.tokenId,
  venueSide: leg.venueSide,
  expiresAt
})

/** What the order records need: the REST client, the catalog and the account (whose wallet makes its maker legs). */
export interface OrdersDeps {
  readonly rest: PolymarketRest
  readonly catalog: PolymarketCatalog
  readonly account: PolymarketAccount
}

/** Builds the order records of one account. */
export const makeOrders = ({ rest, catalog, account }: OrdersDeps) => {
  const { funder } = account
  const { market } = catalog

  /** What we asked for, by venue order id (the order's hash), known before the order is sent. */
  const placed = new Map<string, Placed>()
  /** The hash of the order signed for each client order id. */
  const signedFor = new Map<string, string>()

  /** What we know of a venue order we may not have placed in this process: derived from its token and side. */
  const derive = (o: OpenOrder, m: PolymarketMarket): Placed => {
    const onNoToken = o.asset_id === m.noToken
    const price = F.parse(o.price) ?? F.ZERO
    const amount = F.parse(o.original_size) ?? F.ZERO
    return {
      clientOrderId: "",
      nativeId: m.nativeId,
      side: (o.side === "BUY") !== onNoToken ? "buy" : "sell",
      price: onNoToken ? ((F.ONE - price) as F.Fixed) : price,
      amount,
      target: amount,
      onNoToken,
      tokenId: o.asset_id,
      venueSide: o.side,
      expiresAt: o.expiration !== undefined && Number(o.expiration) > 0 ? Number(o.expiration) * 1000 : null
    }
  }

  const placedOf = (o: OpenOrder): Effect.Effect<Placed | undefined, VenueError> =>
    Effect.gen(function* () {
      const known = placed.get(o.id)
      if (known !== undefined) return known
      const m = yield* market(o.market)
      if (m === undefined) return undefined
      const p = derive(o, m)
      placed.set(o.id, p)
      return p
    })

  const fromOpenOrder = (o: OpenOrder, p: Placed, now: number): VenueOrder => {
    const filled = F.parse(o.size_matched) ?? F.ZERO
    const s = o.status.toUpperCase().replace(/^ORDER_STATUS_/, "")
    const status: VenueOrderStatus =
      s === "LIVE" || s === "DELAYED"
        ? "open"
        : filled >= p.target || s === "MATCHED"
          ? "closed"
          : p.expiresAt !== null && now >= p.expiresAt
            ? "expired"
            : "canceled"
    return {
      venueOrderId: o.id,
      clientOrderId: p.clientOrderId,
      nativeId: p.nativeId,
      side: p.side,
      price: p.price,
      amount: p.amount,
      filled,
      status,
      averagePrice: filled > 0 ? p.price : null,
      cost: F.mul(filled, p.side === "buy" ? p.price : ((F.ONE - p.price) as F.Fixed)),
      fee: F.ZERO,
      queuePriorityPreserved: null,
      updatedAt: o.created_at !== undefined ? o.created_at * 1000 : now
    }
  }

  /** One own fill in our terms, with the fee the venue charged at the rate the trade reports. */
  const toFill = (f: OwnFill): VenueFill => ({
    tradeId: f.tradeId,
    venueOrderId: f.venueOrderId,
    clientOrderId: f.own.clientOrderId,
    nativeId: f.own.nativeId,
    side: f.own.side,
    price: f.price,
    amount: f.amount,
    fee: fillFee(f.feeRateBps, catalog.known(f.own.nativeId)?.fees.exponent ?? 1, f.tokenPrice, f.amount),
    liquidity: f.liquidity,
    ts: f.ts
  })

  /** One L2 read of the CLOB that pages with `next_cursor` until the venue's last-page mark, every page. */
  const pages = <A>(path: string, row: Schema.Schema<A, any>): Effect.Effect<ReadonlyArray<A>, VenueError> =>
    Effect.gen(function* () {
      const Page = Schema.Struct({
        data: Schema.Array(row),
        next_cursor: Schema.optional(Schema.NullOr(Schema.String))
      })
      const out: Array<A> = []
      let cursor = ""
      const join = path.includes("?") ? "&" : "?"
      for (let page = 0; page < 1000; page++) {
        const r = yield* rest.json(
          {
            family: "clob",
            host: "clob",
            method: "GET",
            path: `${path}${cursor === "" ? "" : `${join}next_cursor=${encodeURIComponent(cursor)}`}`,
            auth: "l2"
          },
          Page
        )
        out.push(...r.data)
        if (r.next_cursor === undefined || r.next_cursor === null || r.next_cursor === "LTE=" || r.data.length === 0)
          break
        cursor = r.next_cursor
      }
      return out
    })

  /** The venue's record of one order, or undefined when it has none. */
  const orderRow = (venueOrderId: string): Effect.Effect<OpenOrder | undefined, VenueError> =>
    rest
      .json(
        { family: "clob", host: "clob", method: "GET", path: `/data/order/${venueOrderId}`, auth: "l2" },
        Schema.NullOr(OpenOrder)
      )
      .pipe(
        Effect.map((o) => o ?? undefined),
        Effect.catchIf(
          (e) => e.kind === "rejected" && e.reason.startsWith("not found"),
          () => Effect.succeed(undefined)
        )
      )

  /** Own trades since `since` (ms), every page, FAILED ones left out. */
  const ownTrades = (since: number, marketId?: string) =>
    pages(
      `/data/trades?after=${Math.floor(since / 1000)}${marketId === undefined ? "" : `&market=${marketId}`}`,
      ClobTrade
    )

  /** The own legs of a trade the CLOB reports, as fills on our YES leg. */
  const legsOf = (t: ClobTrade, m: PolymarketMarket, key: string): Array<OwnFill> => {
    const own = (orderId: string, token: string, side: "BUY" | "SELL", price: number, size: number): OwnOrder => {
      const known = placed.get(orderId)
      if (known !== undefined) return known
      const row: OpenOrder = {
        id: orderId,
        status: "MATCHED",
        market: m.nativeId,
        asset_id: token,
        side,
        original_size: F.format(size as F.Fixed),
        size_matched: F.format(size as F.Fixed),
        price: F.format(price as F.Fixed)
      }
      const p = derive(row, m)
      placed.set(orderId, p)
      return p
    }
    return ownLegs(
      t,
      tradeMs(t.match_time),
      () =>
        t.trader_side === "TAKER" || placed.has(t.taker_order_id)
          ? own(t.taker_order_id, t.asset_id, t.side, t.price, t.size)
          : undefined,
      (mo) => {
        const mine =
          placed.has(mo.order_id) ||
          mo.owner === key ||
          (mo.maker_address !== undefined &&
            funder !== undefined &&
            mo.maker_address.toLowerCase() === funder.toLowerCase())
        if (!mine) return undefined
        // a maker on the taker's token took the other side; on the other token, the same side (a mint or merge)
        const side = mo.asset_id === t.asset_id ? (t.side === "BUY" ? "SELL" : "BUY") : t.side
        return own(mo.order_id, mo.asset_id, side, mo.price, mo.matched_amount)
      }
    )
  }

  return { placed, signedFor, derive, placedOf, fromOpenOrder, toFill, pages, orderRow, ownTrades, legsOf }
}

/** The order records of one Polymarket account. */
export type Orders = ReturnType<typeof makeOrders>
