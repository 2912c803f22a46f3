/** Polymarket's placements: the leg a desk order becomes, the order signed and sent, and found again after a restart. */
import { Clock, Effect, Either, Schema } from "effect"
import * as F from "../../Domain/Fixed.ts"
import { nearestTicks } from "../../Domain/OrderRequest.ts"
import { type PlaceOrderRequest, VenueError, type VenueOrder } from "../../Services/VenueGateway.ts"
import type { PolymarketCatalog } from "./Catalog.ts"
import { type Leg, OpenOrder, type Orders, placedFor } from "./Orders.ts"
import { classify, fail, type PolymarketRest } from "./Rest.ts"
import type { Session } from "./Session.ts"
import type { PolymarketAccount, PolymarketConfig } from "./Settings.ts"
import {
  marketOrderAmounts,
  type Order,
  orderAmounts,
  orderHash,
  orderJson,
  saltOf,
  timestampOf,
  signOrder,
  SIZE_STEP,
  ZERO_ADDRESS,
  ZERO_BYTES32
} from "./Signing.ts"
import { type PolymarketMarket, VENUE } from "./Wire.ts"

const TickAnswer = Schema.Struct({ minimum_tick_size: Schema.Union(Schema.Number, Schema.String) })
const PostOrderAnswer = Schema.Struct({
  success: Schema.optional(Schema.Boolean),
  errorMsg: Schema.optional(Schema.String),
  orderID: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  makingAmount: Schema.optional(Schema.String),
  takingAmount: Schema.optional(Schema.String)
})
const BalanceAnswer = Schema.Struct({ balance: Schema.String })

/**
 * What placements need: the REST client, the settings and account, the catalog, the session, the order records, the
 * user channel (opened before the first placement) and the resting set.
 */
export interface PlacementDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly account: PolymarketAccount
  readonly catalog: PolymarketCatalog
  readonly session: Session
  readonly orders: Orders
  readonly startUserChannel: (creds: { key: string; secret: string; passphrase: string }) => Effect.Effect<void>
  readonly resting: Set<string>
}

/** Builds the placements of one account. */
export const makePlacement = ({
  rest,
  config,
  account,
  catalog,
  session,
  orders,
  startUserChannel,
  resting
}: PlacementDeps) => {
  const { identity, funder } = account
  const { requireMarket } = catalog
  const { ensureCreds, version, readVersion, exchangeOf } = session
  const { placed, signedFor, fromOpenOrder, pages, orderRow, ownTrades, legsOf } = orders

  /** The venue moved the tick since we read it: read it again, keep it, and name the nearest prices on it. */
  const refusedTick = (m: PolymarketMarket, price: F.Fixed, why: string) =>
    Effect.gen(function* () {
      const now = yield* rest
        .json({ family: "clob", host: "clob", method: "GET", path: `/tick-size?token_id=${m.yesToken}` }, TickAnswer)
        .pipe(
          Effect.map((a) => F.parse(String(a.minimum_tick_size))),
          Effect.orElseSucceed(() => undefined)
        )
      const tick = now !== undefined && now > 0 ? now : m.tick
      catalog.tickMoved(m.yesToken, tick)
      const [below, above] = nearestTicks(price, tick)
      return yield* fail(
        "rejected",
        `INVALID_ORDER_MIN_TICK_SIZE: price ${F.format(price)} is off the ${F.format(tick)} grid; nearest valid prices ${F.format(below)} and ${F.format(above)} (${why})`
      )
    })

  /** Shares of one token the account holds, as the CLOB counts them (what a SELL may spend). */
  const holding = (tokenId: string): Effect.Effect<F.Fixed, VenueError> =>
    Effect.map(
      rest.json(
        {
          family: "clob",
          host: "clob",
          method: "GET",
          path: `/balance-allowance?asset_type=CONDITIONAL&token_id=${tokenId}&signature_type=${config.signatureType}`,
          auth: "l2"
        },
        BalanceAnswer
      ),
      (a) => (/^\d+$/.test(a.balance) ? (Number(a.balance) as F.Fixed) : F.ZERO)
    )

  /**
   * The venue order a desk order becomes. YES and NO do not net on Polymarket: a `sell` while YES is held sells YES
   * at p, a `buy` while NO is held sells NO at 1 − p; otherwise a buy is a BUY of YES at p and a sell a BUY of NO
   * at 1 − p. An order larger than the held side is refused (it would leave both sides held): close first.
   */
  const legFor = (m: PolymarketMarket, r: PlaceOrderRequest): Effect.Effect<Leg, VenueError> =>
    Effect.gen(function* () {
      const mirror = (F.ONE - r.price) as F.Fixed
      if (r.side === "sell" && r.reduceOnly) {
        return { tokenId: m.yesToken, venueSide: "SELL", venuePrice: r.price, onNoToken: false } as const
      }
      const closing = r.side === "sell" ? m.yesToken : m.noToken
      const held = yield* holding(closing)
      if (held >= F.roundTo(r.amount, SIZE_STEP, "down")) {
        return r.side === "sell"
          ? ({ tokenId: m.yesToken, venueSide: "SELL", venuePrice: r.price, onNoToken: false } as const)
          : ({ tokenId: m.noToken, venueSide: "SELL", venuePrice: mirror, onNoToken: true } as const)
      }
      if (held >= SIZE_STEP) {
        const leg = r.side === "sell" ? "YES" : "NO"
        return yield* fail(
          "rejected",
          `the account holds ${F.format(held)} ${leg} shares of ${m.nativeId}; YES and NO do not net on Polymarket, so a ${r.side} of ${F.format(r.amount)} would hold both: ${r.side} at most ${F.format(held)} to close the ${leg} shares, then the rest`
        )
      }
      return r.side === "buy"
        ? ({ tokenId: m.yesToken, venueSide: "BUY", venuePrice: r.price, onNoToken: false } as const)
        : ({ tokenId: m.noToken, venueSide: "BUY", venuePrice: mirror, onNoToken: true } as const)
    })

  /** A failure before the order was sent: it certainly never reached the venue. */
  const notSent = (e: VenueError) =>
    e.kind === "timeout" || e.kind === "unavailable"
      ? new VenueError({
          venue: e.venue,
          kind: e.kind,
          reason: e.reason,
          sent: false,
          ...(e.retryAfterS === undefined ? {} : { retryAfterS: e.retryAfterS })
        })
      : e

  /** The order signed for a request on an exchange: the salt comes from the client id, so its hash is known. */
  const signedOrder = (r: PlaceOrderRequest, m: PolymarketMarket, leg: Leg, timestamp: number): Order => {
    const market = r.timeInForce === "ioc" || r.timeInForce === "fok"
    const amounts = (market ? marketOrderAmounts : orderAmounts)(leg.venueSide, leg.venuePrice, r.amount, m.tick)
    const maker = funder!
    return {
      salt: saltOf(r.clientOrderId),
      maker,
      signer: config.signatureType === 3 ? maker : identity!.signer.address,
      tokenId: leg.tokenId,
      makerAmount: amounts.makerAmount,
      takerAmount: amounts.takerAmount,
      side: leg.venueSide,
      signatureType: config.signatureType,
      timestamp: BigInt(timestamp),
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
      // the venue expires a GTD order a minute before the expiration it is given
      expiration: r.timeInForce === "gtd" && r.expiresAt !== null ? BigInt(Math.ceil(r.expiresAt / 1000) + 60) : 0n,
      taker: ZERO_ADDRESS,
      nonce: 0n,
      feeRateBps: 0n
    }
  }

  const DEPOSIT_WALLET =
    "; new accounts trade through a deposit wallet: set POLYMARKET_FUNDER to its address and POLYMARKET_SIGNATURE_TYPE=3"

  const submit = (
    r: PlaceOrderRequest,
    m: PolymarketMarket,
    leg: Leg,
    creds: { key: string },
    mayRetry: boolean
  ): Effect.Effect<VenueOrder, VenueError> =>
    Effect.gen(function* () {
      const v = yield* version.pipe(Effect.mapError(notSent))
      const exchange = exchangeOf(m, v)
      if (exchange === undefined) {
        return yield* Effect.fail(
          new VenueError({
            venue: VENUE,
            kind: "not_supported",
            reason: `no known exchange for chain ${config.chainId}, version ${v}`,
            sent: false
          })
        )
      }
      const now = yield* Clock.currentTimeMillis
      const order = signedOrder(r, m, leg, now)
      const hash = orderHash(exchange, order)
      const signature = yield* Effect.promise(() => signOrder(identity!.signer, exchange, order))
      const market = r.timeInForce === "ioc" || r.timeInForce === "fok"
      const orderType =
        r.timeInForce === "gtc" ? "GTC" : r.timeInForce === "gtd" ? "GTD" : r.timeInForce === "fok" ? "FOK" : "FAK"
      const p = placedFor(
        r,
        m,
        leg,
        Number(leg.venueSide === "BUY" ? order.takerAmount : order.makerAmount) as F.Fixed,
        order.expiration > 0n ? (Number(order.expiration) - 60) * 1000 : null
      )
      // known before the request leaves: a fill streamed before the answer, or a look-up after a lost answer,
      // finds the order by its hash
      placed.set(hash, p)
      signedFor.set(r.clientOrderId, hash)
      const body = {
        order: orderJson(order, signature, exchange.version),
        owner: creds.key,
        orderType,
        ...(r.postOnly ? { postOnly: true } : {})
      }
      const refused = (e: VenueError): Effect.Effect<VenueOrder, VenueError> =>
        Effect.gen(function* () {
          if (e.kind === "rejected" && e.reason.includes("INVALID_ORDER_MIN_TICK_SIZE")) {
            return yield* refusedTick(m, r.price, e.reason)
          }
          if (mayRetry && e.reason.includes("order_version_mismatch")) {
            // the venue moved to another exchange version: read it again, sign again, send once more
            const now = yield* readVersion
            if (now !== v) return yield* submit(r, m, leg, creds, false)
          }
          if (/deposit wallet/i.test(e.reason)) {
            return yield* fail("rejected", `${e.reason}${DEPOSIT_WALLET}`)
          }
          return yield* Effect.fail(e)
        })
      const sent = yield* rest
        .json({ family: "order", host: "clob", method: "POST", path: "/order", body, auth: "l2" }, PostOrderAnswer)
        .pipe(Effect.either)
      if (Either.isLeft(sent)) return yield* refused(sent.left)
      const answer = sent.right
      if (answer.success === false || ((answer.orderID ?? "") === "" && (answer.errorMsg ?? "") !== "")) {
        return yield* refused(classify(400, JSON.stringify({ errorMsg: answer.errorMsg ?? "refused" }), undefined))
      }
      if (answer.orderID === undefined || answer.orderID === "") {
        // neither a refusal nor an order: the outcome is unknown, and the hash finds it later
        return yield* fail("unavailable", "the venue's answer carries no order id")
      }
      const id = answer.orderID
      if (id !== hash) {
        yield* Effect.logWarning(`polymarket order id ${id} is not the hash computed before sending (${hash})`)
        placed.set(id, p)
        signedFor.set(r.clientOrderId, id)
      }
      resting.add(id)
      const shares = F.parse(leg.venueSide === "BUY" ? (answer.takingAmount ?? "0") : (answer.makingAmount ?? "0"))
      const filled = (shares ?? F.ZERO) as F.Fixed
      const said = (answer.status ?? "").toLowerCase()
      // a delayed order (a marketable FAK/FOK held back by the venue) is not canceled: it may still fill
      const venueStatus = filled >= p.target ? "MATCHED" : said === "delayed" ? "DELAYED" : market ? "CANCELED" : "LIVE"
      if (venueStatus !== "LIVE") resting.delete(id)
      return fromOpenOrder(
        {
          id,
          status: venueStatus,
          market: m.nativeId,
          asset_id: leg.tokenId,
          side: leg.venueSide,
          original_size: F.format(p.target),
          size_matched: F.format(filled),
          price: F.format(leg.venuePrice)
        },
        p,
        now
      )
    })

  const placeOrder = (r: PlaceOrderRequest): Effect.Effect<VenueOrder, VenueError> =>
    Effect.gen(function* () {
      const prepared = yield* Effect.gen(function* () {
        const creds = yield* ensureCreds
        yield* startUserChannel(creds)
        const m = yield* requireMarket(r.nativeId)
        if (!m.acceptingOrders) return yield* fail("market_closed", `${m.nativeId} is not accepting orders`)
        if (!F.isMultipleOf(r.price, m.tick) || r.price <= 0 || r.price >= F.ONE) {
          const [below, above] = nearestTicks(r.price, m.tick)
          return yield* fail(
            "rejected",
            `INVALID_ORDER_MIN_TICK_SIZE: price ${F.format(r.price)} is off the ${F.format(m.tick)} grid; nearest valid prices ${F.format(below)} and ${F.format(above)}`
          )
        }
        if (r.amount < m.minSize) {
          return yield* fail("rejected", `INVALID_ORDER_MIN_SIZE: the minimum size is ${F.format(m.minSize)}`)
        }
        if (r.postOnly && (r.timeInForce === "ioc" || r.timeInForce === "fok")) {
          return yield* fail("rejected", "post-only is refused for FOK and FAK orders")
        }
        const leg = yield* legFor(m, r)
        return { creds, m, leg }
      }).pipe(Effect.mapError(notSent))
      return yield* submit(r, prepared.m, prepared.leg, prepared.creds, true)
    })

  /**
   * The order signed for a request, found again without its hash (after a restart): the venue's orders on the
   * market of the request's shape whose hash, with the salt of this client id and a creation time within 15 s of the
   * venue's, is their id. Undefined when none is.
   */
  const findSigned = (r: PlaceOrderRequest): Effect.Effect<VenueOrder | undefined, VenueError> =>
    Effect.gen(function* () {
      const creds = yield* ensureCreds
      const m = yield* requireMarket(r.nativeId)
      const v = yield* version
      const exchange = exchangeOf(m, v)
      if (exchange === undefined) return yield* fail("unavailable", `no known exchange for version ${v}`)
      const candidates = new Map<string, OpenOrder>()
      for (const o of yield* pages(`/data/orders?market=${m.nativeId}`, OpenOrder)) candidates.set(o.id, o)
      for (const t of yield* ownTrades(0, m.nativeId)) {
        for (const leg of legsOf(t, m, creds.key)) {
          if (candidates.has(leg.venueOrderId)) continue
          const o = yield* orderRow(leg.venueOrderId)
          if (o !== undefined) candidates.set(o.id, o)
        }
      }
      const legs: ReadonlyArray<Leg> = [
        { tokenId: m.yesToken, venueSide: "BUY", venuePrice: r.price, onNoToken: false },
        { tokenId: m.yesToken, venueSide: "SELL", venuePrice: r.price, onNoToken: false },
        { tokenId: m.noToken, venueSide: "BUY", venuePrice: (F.ONE - r.price) as F.Fixed, onNoToken: true },
        { tokenId: m.noToken, venueSide: "SELL", venuePrice: (F.ONE - r.price) as F.Fixed, onNoToken: true }
      ]
      for (const o of candidates.values()) {
        const leg = legs.find((l) => l.tokenId === o.asset_id && l.venueSide === o.side)
        if (leg === undefined || o.created_at === undefined) continue
        const around = o.created_at * 1000
        const shape = signedOrder(r, m, leg, around)
        // only an order of the request's size is worth the search (it blocks while it runs)
        const shares = Number(leg.venueSide === "BUY" ? shape.takerAmount : shape.makerAmount)
        if (F.parse(o.original_size) !== shares) continue
        yield* Effect.yieldNow()
        const ts = timestampOf(exchange, shape, o.id, around - 15_000, around + 15_000)
        if (ts !== undefined) {
          const target = F.parse(o.original_size) ?? F.ZERO
          const p = placedFor(r, m, leg, target, r.timeInForce === "gtd" ? r.expiresAt : null)
          placed.set(o.id, p)
          signedFor.set(r.clientOrderId, o.id)
          return fromOpenOrder(o, p, yield* Clock.currentTimeMillis)
        }
      }
      return undefined
    })

  return { placeOrder, findSigned }
}
