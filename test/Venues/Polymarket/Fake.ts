/**
 * A fake Polymarket on loopback: Gamma, the CLOB (HMAC-checked, signer-recovering, a small matching book), the Data
 * API and both channels, with the venue's refusals and its failures (hung or lost answers, silent sockets, its own
 * cancels, resolution) on demand.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import type { Address, Hex } from "viem"
import { WebSocketServer, type WebSocket } from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import {
  exchangeFor,
  hmacSignature,
  orderFromJson,
  orderHash,
  recoverClobAuth,
  recoverOrderSigner
} from "../../../src/Venues/Polymarket/Signing.ts"

export const CONDITION = "0x" + "ab".repeat(32)
export const YES_TOKEN = "1111"
export const NO_TOKEN = "2222"
export const GAMMA_ID = "777"
export const SLUG = "will-the-fake-resolve-yes"
export const SECRET = Buffer.from("fake secret for the fake clob, 32b").toString("base64url")

interface FakeOrder {
  readonly id: string
  readonly tokenId: string
  readonly side: "BUY" | "SELL"
  readonly price: F.Fixed
  readonly size: F.Fixed
  matched: F.Fixed
  status: "LIVE" | "MATCHED" | "CANCELED" | "DELAYED"
  readonly signer: Address
  readonly orderType: string
  readonly owner: string
  readonly signatureType: number
  /** Unix seconds, 0 = none. */
  readonly expiration: number
  readonly createdAt: number
}

/** What the next `POST /order` meets: an answer that never comes or is lost, before or after the order is placed. */
export type PlacementFault =
  "hang" | "hang-after" | "500-before" | "500-after" | "503-cancel-only" | "delayed" | "unreadable-after"

/** An own trade as the CLOB's `GET /data/trades` reports it. */
interface FakeTrade {
  readonly id: string
  readonly taker_order_id: string
  readonly market: string
  readonly asset_id: string
  readonly side: "BUY" | "SELL"
  readonly size: string
  readonly price: string
  status: string
  readonly match_time: string
  readonly fee_rate_bps: string
  readonly trader_side: "TAKER" | "MAKER"
  readonly maker_orders: ReadonlyArray<Record<string, string>>
  readonly owner: string
}

export interface FakePolymarket {
  readonly url: string
  readonly wsUrl: string
  /** Every order accepted, with the signer recovered from its EIP-712 signature. */
  readonly orders: Array<FakeOrder>
  /** Every request, as `METHOD /path`. */
  readonly calls: Array<string>
  /** Requests refused for a bad HMAC or an unknown signer. */
  readonly refusals: Array<string>
  /** The YES token's resting asks of other traders (price → size), matched by crossing buys. */
  readonly asks: Map<number, number>
  readonly bids: Map<number, number>
  /** The next `n` own matches are reported `MATCHED`, then `FAILED` on the user channel instead of `CONFIRMED`. */
  failNextTrades: number
  /** Sets a level of the YES book (size "0" removes it) and streams it as a `price_change`, as the venue does. */
  readonly move: (side: "BUY" | "SELL", price: string, size: string) => void
  /** An outside taker fills `size` of an own resting order: the user channel reports the trade. */
  readonly fillResting: (orderId: string, size: string) => void
  /** The CLOB's tick now (Gamma keeps saying 0.01): an order off it is refused `INVALID_ORDER_MIN_TICK_SIZE`. */
  tick: number
  /** Answers the next `n` requests with 429. */
  rateLimitNext: number
  /** Heartbeats received; while `failHeartbeats` is set they are answered 400 and the venue's orders canceled. */
  heartbeats: number
  failHeartbeats: boolean
  /** Sends a market-channel frame to every connected socket. */
  readonly broadcast: (frame: unknown) => void
  /** Sends a user-channel frame to every authenticated user socket. */
  readonly broadcastUser: (frame: unknown) => void
  readonly userConnections: () => number
  /** Drops every socket, market and user channel alike. */
  readonly dropSockets: () => void
  readonly connections: () => number
  /** Market-channel connections opened since the start. */
  readonly opened: () => number
  /** User-channel connections opened since the start. */
  readonly userOpened: () => number
  readonly close: () => Promise<void>
  /** What the next placements meet, first first. */
  readonly placementFaults: Array<PlacementFault>
  /** Answers to `POST /order` left hanging. */
  readonly hung: () => number
  /** The exchange version `/version` reports; an order signed for another is refused `order_version_mismatch`. */
  version: number
  /** New API users: an order whose maker is not a deposit wallet (signature type 3) is refused. */
  depositWalletOnly: boolean
  /** Shares held per token (what a SELL may spend); own matches move them. */
  readonly holdings: Map<string, F.Fixed>
  /** The fee rate (bps) the operator applies to the next matches, reported on each trade. */
  feeRateBps: number
  /** Gamma's fee schedule of the market. */
  feeSchedule: { rate: number; exponent: number; takerOnly: boolean } | undefined
  /** Every own trade, as `GET /data/trades` pages them. */
  readonly trades: Array<FakeTrade>
  /** Rows per page of `/data/orders` and `/data/trades`. */
  pageSize: number
  /** Every socket open now stops sending anything (no messages, no PONG) without closing. */
  readonly stallSockets: () => void
  /** The venue cancels an order on its own and says so on the user channel (CANCELLATION). */
  readonly cancelOnVenue: (orderId: string) => void
  /** No heartbeat came in time: every resting order is canceled, each with a CANCELLATION. */
  readonly lapseHeartbeat: () => void
  /** GTD orders whose expiration (unix s) is at or before `nowS` expire, each with a CANCELLATION. */
  readonly expire: (nowS: number) => void
  /** The market resolves: Gamma shows it closed with the payout, the market channel says so, positions turn redeemable. */
  readonly resolve: (outcome: "yes" | "no") => void
  /**
   * While set, the Data API has not indexed the resolution yet: positions of the resolved market are still listed with
   * `redeemable: false` and the price before it.
   */
  indexLag: boolean
  /** The query of every `GET /positions` of the Data API. */
  readonly positionQueries: Array<string>
  /** The wallet redeems on chain (`redeemPositions`): its tokens of the resolved market, both sides, are burned. */
  readonly redeem: () => void
}

const gammaMarket = (
  resolved: "yes" | "no" | undefined,
  feeSchedule: { rate: number; exponent: number; takerOnly: boolean } | undefined
) => ({
  ...(feeSchedule === undefined ? {} : { feesEnabled: true, feeSchedule }),
  id: GAMMA_ID,
  question: "Will the fake resolve YES?",
  conditionId: CONDITION,
  slug: SLUG,
  outcomes: JSON.stringify(["Yes", "No"]),
  clobTokenIds: JSON.stringify([YES_TOKEN, NO_TOKEN]),
  active: true,
  closed: false,
  acceptingOrders: true,
  orderPriceMinTickSize: 0.01,
  orderMinSize: 5,
  bestBid: 0.55,
  bestAsk: 0.6,
  lastTradePrice: 0.6,
  negRisk: false,
  ...(resolved === undefined ? { outcomePrices: JSON.stringify(["0.6", "0.4"]) } : {}),
  startDate: "2026-01-01T00:00:00Z",
  endDate: "2027-01-01T00:00:00Z",
  events: [{ id: "e1", title: "Fake", category: "Tests" }],
  ...(resolved === undefined
    ? {}
    : {
        closed: true,
        active: false,
        acceptingOrders: false,
        outcomePrices: JSON.stringify(resolved === "yes" ? ["1", "0"] : ["0", "1"]),
        closedTime: "2027-01-02T00:00:00Z",
        umaResolutionStatus: "resolved"
      })
})

const levels = (m: Map<number, number>) =>
  [...m.entries()].map(([p, s]) => ({ price: F.format(p as F.Fixed), size: F.format(s as F.Fixed) }))

/** Starts the fake; `expectedSigner` is the only address whose orders and L1 calls it accepts. */
export const startFake = async (expectedSigner: Address): Promise<FakePolymarket> => {
  const orders: Array<FakeOrder> = []
  const refusals: Array<string> = []
  const calls: Array<string> = []
  const asks = new Map<number, number>([
    [F.of("0.6"), F.of("100")],
    [F.of("0.62"), F.of("50")]
  ])
  const bids = new Map<number, number>([[F.of("0.55"), F.of("80")]])
  const sockets = new Set<WebSocket>()

  let tradeCount = 0
  const best = (m: Map<number, number>, highest: boolean) => {
    const ps = [...m.keys()]
    return ps.length === 0 ? undefined : highest ? Math.max(...ps) : Math.min(...ps)
  }
  /** Streams one YES level as it stands now, with the NO token's mirror entry, as the venue's `price_change`. */
  const changed = (side: "BUY" | "SELL", price: number) => {
    const size = (side === "BUY" ? bids : asks).get(price) ?? 0
    const bb = best(bids, true)
    const ba = best(asks, false)
    const fmt = (x: number | undefined) => (x === undefined ? "0" : F.format(x as F.Fixed))
    const mirror = (x: number | undefined) => (x === undefined ? undefined : F.ONE - x)
    fake.broadcast({
      event_type: "price_change",
      market: CONDITION,
      timestamp: String(1_800_000_000_000 + ++changes),
      price_changes: [
        {
          asset_id: YES_TOKEN,
          price: F.format(price as F.Fixed),
          size: F.format(size as F.Fixed),
          side,
          hash: `h${changes}a`,
          best_bid: fmt(bb),
          best_ask: fmt(ba)
        },
        {
          asset_id: NO_TOKEN,
          price: F.format((F.ONE - price) as F.Fixed),
          size: F.format(size as F.Fixed),
          side: side === "BUY" ? "SELL" : "BUY",
          hash: `h${changes}b`,
          best_bid: fmt(mirror(ba)),
          best_ask: fmt(mirror(bb))
        }
      ]
    })
  }
  let changes = 0
  const holdings = new Map<string, F.Fixed>()
  const trades: Array<FakeTrade> = []
  const hold = (token: string, delta: F.Fixed) => holdings.set(token, F.add(holdings.get(token) ?? F.ZERO, delta))
  /** Sends a user-channel order event for one own order. */
  const orderEvent = (o: FakeOrder, type: "PLACEMENT" | "UPDATE" | "CANCELLATION") =>
    fake.broadcastUser({
      event_type: "order",
      id: o.id,
      market: CONDITION,
      asset_id: o.tokenId,
      side: o.side,
      price: F.format(o.price),
      original_size: F.format(o.size),
      size_matched: F.format(o.matched),
      type,
      status: o.status,
      owner: o.owner,
      timestamp: String(Date.now())
    })
  const cancelByVenue = (o: FakeOrder) => {
    if (o.status !== "LIVE" && o.status !== "DELAYED") return
    o.status = "CANCELED"
    orderEvent(o, "CANCELLATION")
  }
  /**
   * Tells the user channel of one own trade: `MATCHED` now, then `CONFIRMED` (or `FAILED`) a moment later; the trade
   * is kept for `/data/trades`, and the own order's token holding moves.
   */
  const report = (t: {
    id: string
    asset_id: string
    side: "BUY" | "SELL"
    price: F.Fixed
    size: F.Fixed
    taker_order_id: string
    maker_orders: ReadonlyArray<Record<string, string>>
    trader_side: "TAKER" | "MAKER"
  }) => {
    const fails = fake.failNextTrades > 0
    if (fails) fake.failNextTrades--
    const fee = String(fake.feeRateBps)
    // makers pay no fee; the rate the operator applied is the taker's
    const makers = t.maker_orders.map((m) => ({ ...m, fee_rate_bps: "0" }))
    const frame = (status: string) => ({
      event_type: "trade",
      ...t,
      maker_orders: makers,
      market: CONDITION,
      price: F.format(t.price),
      size: F.format(t.size),
      fee_rate_bps: fee,
      status,
      owner: "fake-key",
      matchtime: "1800000000",
      timestamp: "1800000000000"
    })
    const kept: FakeTrade = {
      id: t.id,
      taker_order_id: t.taker_order_id,
      market: CONDITION,
      asset_id: t.asset_id,
      side: t.side,
      size: F.format(t.size),
      price: F.format(t.price),
      status: "MATCHED",
      match_time: String(1_800_000_000 + trades.length),
      fee_rate_bps: fee,
      trader_side: t.trader_side,
      maker_orders: makers,
      owner: "fake-key"
    }
    trades.push(kept)
    // the own leg's token: the taker's, or the own maker order's
    if (t.trader_side === "TAKER") hold(t.asset_id, t.side === "BUY" ? t.size : F.neg(t.size))
    else {
      const own = orders.find((o) => o.id === t.maker_orders[0]?.["order_id"])
      if (own !== undefined) hold(own.tokenId, own.side === "BUY" ? t.size : F.neg(t.size))
    }
    setTimeout(() => fake.broadcastUser(frame("MATCHED")), 10)
    setTimeout(() => {
      kept.status = fails ? "FAILED" : "CONFIRMED"
      fake.broadcastUser(frame(kept.status))
    }, 40)
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(JSON.stringify(body))
  }

  let resolved: "yes" | "no" | undefined
  let hanging = 0
  const hang = (res: ServerResponse) => {
    hanging++
    res.on("close", () => hanging--)
  }
  const orderRow = (o: FakeOrder) => ({
    id: o.id,
    status: o.status,
    market: CONDITION,
    asset_id: o.tokenId,
    side: o.side,
    original_size: F.format(o.size),
    size_matched: F.format(o.matched),
    price: F.format(o.price),
    owner: o.owner,
    created_at: o.createdAt,
    expiration: String(o.expiration),
    order_type: o.orderType
  })
  /** One page of rows from the cursor on (base64 of an offset); the venue marks the last page with "LTE=". */
  const paged = <A>(rows: ReadonlyArray<A>, cursor: string | null) => {
    const from = cursor === null || cursor === "" ? 0 : Number(Buffer.from(cursor, "base64").toString())
    const data = rows.slice(from, from + fake.pageSize)
    const next =
      from + fake.pageSize >= rows.length ? "LTE=" : Buffer.from(String(from + fake.pageSize)).toString("base64")
    return { limit: fake.pageSize, count: data.length, next_cursor: next, data }
  }

  const l2ok = (req: IncomingMessage, path: string, body: string): boolean => {
    const ts = req.headers["poly_timestamp"] as string | undefined
    const sig = req.headers["poly_signature"]
    const ok =
      ts !== undefined &&
      req.headers["poly_api_key"] === "fake-key" &&
      req.headers["poly_passphrase"] === "fake-pass" &&
      sig === hmacSignature(SECRET, ts, req.method!, path, body === "" ? undefined : body)
    if (!ok) refusals.push(`bad L2 headers on ${req.method} ${path}`)
    return ok
  }

  const handle = async (req: IncomingMessage, body: string, res: ServerResponse) => {
    const url = new URL(req.url!, "http://x")
    calls.push(`${req.method} ${url.pathname}`)
    if (fake.rateLimitNext > 0) {
      fake.rateLimitNext--
      return send(res, 429, { error: "Too Many Requests" }, { "retry-after": "3" })
    }
    if (req.method === "GET" && url.pathname === "/markets") {
      const q = url.searchParams
      const m = gammaMarket(resolved, fake.feeSchedule)
      const hit =
        q.get("condition_ids") === CONDITION ||
        q.get("id") === GAMMA_ID ||
        q.get("slug") === SLUG ||
        (q.get("closed") === "false" && resolved === undefined)
      return send(res, 200, hit ? [m] : [])
    }
    if (req.method === "GET" && url.pathname === "/book") {
      const token = url.searchParams.get("token_id")
      if (token !== YES_TOKEN) return send(res, 404, { error: "No orderbook exists for the requested token id" })
      // the venue sends each side best-last
      const bidLevels = levels(bids).sort((a, b) => Number(a.price) - Number(b.price))
      const askLevels = levels(asks).sort((a, b) => Number(b.price) - Number(a.price))
      return send(res, 200, {
        market: CONDITION,
        asset_id: YES_TOKEN,
        timestamp: "1800000000000",
        bids: bidLevels,
        asks: askLevels,
        tick_size: "0.01",
        min_order_size: "5",
        neg_risk: false
      })
    }
    if (req.method === "GET" && url.pathname === "/trades") {
      return send(res, 200, [
        {
          side: "BUY",
          asset: YES_TOKEN,
          conditionId: CONDITION,
          size: 10,
          price: 0.6,
          timestamp: 1800000000,
          transactionHash: "0x1"
        },
        {
          side: "BUY",
          asset: NO_TOKEN,
          conditionId: CONDITION,
          size: 4,
          price: 0.45,
          timestamp: 1800000100,
          transactionHash: "0x2"
        }
      ])
    }
    if (req.method === "GET" && url.pathname === "/tick-size") {
      return send(res, 200, { minimum_tick_size: Number(F.format(fake.tick as F.Fixed)) })
    }
    if (req.method === "GET" && url.pathname === "/version") return send(res, 200, { version: fake.version })
    if (req.method === "GET" && url.pathname === "/positions") {
      // The Data API's position: sizes and values as JSON numbers, `redeemable` once the market resolved (both sides:
      // redeeming burns the losing tokens for nothing); a position whose tokens were redeemed is no longer listed.
      const q = url.searchParams
      fake.positionQueries.push(url.search)
      const markets = q.get("market")?.split(",")
      const threshold = Number(q.get("sizeThreshold") ?? "1")
      const indexed = resolved !== undefined && !fake.indexLag
      const rows = [...holdings.entries()]
        .filter(([, n]) => n > 0)
        .map(([asset, n]) => {
          const yes = asset === YES_TOKEN
          const won = indexed && (resolved === "yes") === yes
          const curPrice = indexed ? (won ? 1 : 0) : yes ? 0.6 : 0.4
          const avgPrice = yes ? 0.6 : 0.4
          const size = Number(F.format(n))
          return {
            proxyWallet: q.get("user"),
            asset,
            conditionId: CONDITION,
            size,
            avgPrice,
            initialValue: size * avgPrice,
            currentValue: size * curPrice,
            cashPnl: size * (curPrice - avgPrice),
            percentPnl: ((curPrice - avgPrice) / avgPrice) * 100,
            totalBought: size,
            realizedPnl: 0,
            percentRealizedPnl: 0,
            curPrice,
            redeemable: indexed,
            mergeable: false,
            title: "Will the fake resolve YES?",
            slug: SLUG,
            icon: "",
            eventSlug: "fake",
            outcome: yes ? "Yes" : "No",
            outcomeIndex: yes ? 0 : 1,
            oppositeOutcome: yes ? "No" : "Yes",
            oppositeAsset: yes ? NO_TOKEN : YES_TOKEN,
            endDate: "2027-01-01",
            negativeRisk: false
          }
        })
        .filter((p) => p.size >= threshold)
        .filter((p) => markets === undefined || markets.includes(p.conditionId))
        .filter((p) => q.get("redeemable") !== "true" || p.redeemable)
      return send(res, 200, rows)
    }
    if (req.method === "GET" && url.pathname === "/auth/derive-api-key") {
      const address = req.headers["poly_address"] as Address
      const recovered = await recoverClobAuth(
        address,
        137,
        Number(req.headers["poly_timestamp"]),
        Number(req.headers["poly_nonce"]),
        req.headers["poly_signature"] as Hex
      ).catch(() => "")
      if (recovered !== expectedSigner) {
        refusals.push("bad L1 signature")
        return send(res, 401, { error: "Invalid L1 Request headers" })
      }
      return send(res, 200, { apiKey: "fake-key", secret: SECRET, passphrase: "fake-pass" })
    }
    // the venue checks the signature over the path without its query string
    if (!l2ok(req, url.pathname, body)) return send(res, 401, { error: "Unauthorized/Invalid api key" })
    if (req.method === "POST" && url.pathname === "/order") {
      const j = JSON.parse(body) as { order: Record<string, unknown>; orderType: string; postOnly?: boolean }
      const fault = fake.placementFaults.shift()
      if (fault === "hang") return hang(res)
      if (fault === "500-before") return send(res, 500, { error: "Internal Server Error" })
      if (fault === "503-cancel-only") {
        return send(res, 503, { error: "Trading is currently cancel-only" }, { "retry-after": "5" })
      }
      const o = orderFromJson(j.order)
      const signature = j.order["signature"] as Hex
      const x = exchangeFor(137, fake.version, false)!
      const signer = await recoverOrderSigner(x, o, signature).catch(() => "0x" as Address)
      if (signer !== expectedSigner) {
        // signed for another exchange version than the venue runs now
        for (const v of [1, 2, 3].filter((n) => n !== fake.version)) {
          const other = exchangeFor(137, v, false)
          if (other === undefined || (v === 1 && o.signatureType === 3)) continue
          const by = await recoverOrderSigner(other, o, signature).catch(() => "")
          if (by === expectedSigner) return send(res, 400, { error: "order_version_mismatch" })
        }
        refusals.push(`order signed by ${signer}`)
        return send(res, 400, { success: false, errorMsg: "INVALID_SIGNATURE" })
      }
      if (fake.depositWalletOnly && o.signatureType !== 3) {
        return send(res, 400, { error: "maker address not allowed, please use the deposit wallet flow" })
      }
      const size = (o.side === "BUY" ? Number(o.takerAmount) : Number(o.makerAmount)) as F.Fixed
      const usdc = (o.side === "BUY" ? Number(o.makerAmount) : Number(o.takerAmount)) as F.Fixed
      const marketOrder = j.orderType === "FOK" || j.orderType === "FAK"
      if (marketOrder && j.postOnly === true) {
        return send(res, 400, { error: "invalid post-only order: post-only is not allowed for FOK/FAK orders" })
      }
      // FOK and FAK are market orders: a BUY's maker amount has at most 2 decimals, its taker amount at most 4
      if (marketOrder && o.side === "BUY" && (usdc % F.of("0.01") !== 0 || size % F.of("0.0001") !== 0)) {
        return send(res, 400, {
          error:
            "invalid amounts, the market buy orders maker amount supports a max accuracy of 2 decimals, taker amount a max of 4 decimals"
        })
      }
      // a market BUY's price is what its amounts imply (its worst price), off the grid as it may be
      const price = marketOrder && o.side === "BUY" ? F.div(usdc, size, "up") : F.div(usdc, size)
      if (!(marketOrder && o.side === "BUY") && price % fake.tick !== 0) {
        return send(res, 400, {
          success: false,
          errorMsg: `INVALID_ORDER_MIN_TICK_SIZE: order ${F.format(price)} breaks minimum tick size rules`
        })
      }
      if (o.tokenId !== YES_TOKEN && o.tokenId !== NO_TOKEN) {
        return send(res, 400, { success: false, errorMsg: "INVALID_ORDER_TOKEN: no such token" })
      }
      if (resolved !== undefined) {
        return send(res, 400, { success: false, errorMsg: "MARKET_NOT_READY: the market is closed" })
      }
      if (o.side === "SELL" && (holdings.get(o.tokenId) ?? F.ZERO) < size) {
        return send(res, 400, {
          success: false,
          errorMsg: `not enough balance / allowance: the order needs ${F.format(size)} shares`
        })
      }
      // What this order would take: the YES token's levels it crosses, best first, in this token's prices.
      // A BUY of YES takes the asks; a SELL of YES takes the bids; a BUY of NO at q pairs with a YES bid at 1 − q;
      // a SELL of NO at q pairs with a YES ask at 1 − q (a merge).
      const onNo = o.tokenId === NO_TOKEN
      const takesBids = (o.side === "SELL") !== onNo
      const side = takesBids ? bids : asks
      const own = (p: number) => (onNo ? F.ONE - p : p) as F.Fixed
      const crossing = [...side.keys()]
        .sort((a, b) => (takesBids ? b - a : a - b))
        .filter((p) => (o.side === "BUY" ? own(p) <= price : own(p) >= price))
      if (crossing.length > 0 && j.postOnly === true) {
        return send(res, 400, { success: false, errorMsg: "INVALID_POST_ONLY_ORDER: order crosses the book" })
      }
      const available = crossing.reduce((n, p) => n + side.get(p)!, 0)
      if (j.orderType === "FOK" && available < size) {
        return send(res, 400, { success: false, errorMsg: "FOK_ORDER_NOT_FILLED_ERROR" })
      }
      const id = orderHash(x, o)
      if (orders.some((q) => q.id === id)) {
        return send(res, 400, { success: false, errorMsg: "INVALID_ORDER_DUPLICATED: order already exists" })
      }
      const order: FakeOrder = {
        id,
        tokenId: o.tokenId,
        side: o.side,
        price,
        size,
        matched: F.ZERO,
        status: "LIVE",
        signer,
        orderType: j.orderType,
        owner: (JSON.parse(body) as { owner: string }).owner,
        signatureType: o.signatureType,
        expiration: Number(o.expiration),
        createdAt: Math.floor(Number(o.timestamp) / 1000)
      }
      orders.push(order)
      /** Matches the order against the book now: its fills, and what is left resting or canceled. */
      const execute = () => {
        const fills: Array<{ price: F.Fixed; size: F.Fixed }> = []
        for (const p of crossing) {
          if (order.matched >= size || !side.has(p)) break
          const take = F.min(F.sub(size, order.matched), side.get(p)! as F.Fixed)
          order.matched = F.add(order.matched, take)
          fills.push({ price: own(p), size: take })
          const left = side.get(p)! - take
          if (left > 0) side.set(p, left)
          else side.delete(p)
          changed(takesBids ? "BUY" : "SELL", p)
        }
        order.status = order.matched >= size ? "MATCHED" : marketOrder ? "CANCELED" : "LIVE"
        // the user channel tells of each match after the answer, as the venue does
        const tell = () => {
          for (const f of fills) {
            report({
              id: `trade-${++tradeCount}`,
              asset_id: o.tokenId,
              side: o.side,
              price: f.price,
              size: f.size,
              taker_order_id: id,
              maker_orders: [
                {
                  order_id: `0xoutside${tradeCount}`,
                  // the other side of every match here is someone's order on the YES token
                  asset_id: YES_TOKEN,
                  matched_amount: F.format(f.size),
                  price: F.format(onNo ? own(f.price) : f.price),
                  owner: "someone-else"
                }
              ],
              trader_side: "TAKER"
            })
          }
        }
        return { fills, tell }
      }
      if (fault === "delayed") {
        // a marketable order the venue holds back: answered `delayed`, matched a moment later
        order.status = "DELAYED"
        send(res, 200, {
          success: true,
          errorMsg: "",
          orderID: id,
          status: "delayed",
          makingAmount: "",
          takingAmount: ""
        })
        setTimeout(() => execute().tell(), 60)
        return
      }
      const { fills, tell } = execute()
      if (fault === "hang-after") {
        tell()
        return hang(res)
      }
      if (fault === "500-after") {
        tell()
        return send(res, 500, { error: "Internal Server Error" })
      }
      if (fault === "unreadable-after") {
        tell()
        res.writeHead(200, { "content-type": "application/json" })
        return res.end('{"success": tr')
      }
      send(res, 200, {
        success: true,
        errorMsg: "",
        orderID: id,
        status: order.status === "MATCHED" ? "matched" : order.status === "LIVE" ? "live" : "unmatched",
        makingAmount: F.format(
          fills.reduce((n, f) => F.add(n, o.side === "BUY" ? F.mul(f.size, f.price) : f.size), F.ZERO)
        ),
        takingAmount: F.format(
          fills.reduce((n, f) => F.add(n, o.side === "BUY" ? f.size : F.mul(f.size, f.price)), F.ZERO)
        )
      })
      tell()
      return
    }
    if (req.method === "POST" && url.pathname === "/v1/heartbeats") {
      fake.heartbeats++
      if (fake.failHeartbeats) {
        for (const o of orders) cancelByVenue(o)
        return send(res, 400, { error: "Invalid heartbeat id" })
      }
      return send(res, 200, { heartbeat_id: "hb-1" })
    }
    if (req.method === "DELETE" && (url.pathname === "/cancel-all" || url.pathname === "/cancel-market-orders")) {
      const market = url.pathname === "/cancel-all" ? undefined : (JSON.parse(body) as { market: string }).market
      const canceled: Array<string> = []
      for (const o of orders) {
        if (o.status === "LIVE" && (market === undefined || market === CONDITION)) {
          o.status = "CANCELED"
          canceled.push(o.id)
        }
      }
      return send(res, 200, { canceled, not_canceled: {} })
    }
    if (req.method === "DELETE" && url.pathname === "/order") {
      const { orderID } = JSON.parse(body) as { orderID: string }
      const o = orders.find((x) => x.id === orderID)
      if (o === undefined || o.status !== "LIVE")
        return send(res, 200, { canceled: [], not_canceled: { [orderID]: "not live" } })
      o.status = "CANCELED"
      return send(res, 200, { canceled: [orderID], not_canceled: {} })
    }
    if (req.method === "GET" && url.pathname === "/data/orders") {
      const market = url.searchParams.get("market")
      const live = orders.filter((o) => o.status === "LIVE" && (market === null || market === CONDITION))
      return send(res, 200, paged(live.map(orderRow), url.searchParams.get("next_cursor")))
    }
    if (req.method === "GET" && url.pathname.startsWith("/data/order/")) {
      const o = orders.find((x) => x.id === url.pathname.slice("/data/order/".length))
      if (o === undefined) return send(res, 404, { error: "order not found" })
      return send(res, 200, orderRow(o))
    }
    if (req.method === "GET" && url.pathname === "/data/trades") {
      const after = Number(url.searchParams.get("after") ?? "0")
      const market = url.searchParams.get("market")
      const rows = trades.filter((t) => Number(t.match_time) >= after && (market === null || market === t.market))
      return send(res, 200, paged(rows, url.searchParams.get("next_cursor")))
    }
    if (req.method === "GET" && url.pathname === "/balance-allowance") {
      const token = url.searchParams.get("token_id") ?? ""
      return send(res, 200, { balance: String(holdings.get(token) ?? 0), allowances: {} })
    }
    return send(res, 404, { error: `no route ${req.method} ${url.pathname}` })
  }

  const server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => (body += c))
    req.on("end", () =>
      handle(req, body, res).catch((e: unknown) => {
        if (!res.headersSent) send(res, 500, { error: String(e) })
      })
    )
  })
  const wss = new WebSocketServer({ noServer: true })
  const userWss = new WebSocketServer({ noServer: true })
  const userSockets = new Set<WebSocket>()
  server.on("upgrade", (req, socket, head) => {
    const target = req.url === "/ws/market" ? wss : req.url === "/ws/user" ? userWss : undefined
    if (target === undefined) return socket.destroy()
    target.handleUpgrade(req, socket, head, (ws) => target.emit("connection", ws, req))
  })
  let userOpened = 0
  const stalled = new Set<WebSocket>()
  userWss.on("connection", (socket) => {
    userOpened++
    socket.on("message", (data) => {
      if (data.toString() === "PING") {
        if (!stalled.has(socket)) socket.send("PONG")
        return
      }
      const sub = JSON.parse(data.toString()) as { auth?: { apiKey?: string } }
      if (sub.auth?.apiKey !== "fake-key") return socket.close()
      userSockets.add(socket)
    })
    socket.on("close", () => {
      userSockets.delete(socket)
      stalled.delete(socket)
    })
  })
  let opened = 0
  wss.on("connection", (socket) => {
    opened++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("message", (data) => {
      const text = data.toString()
      if (text === "PING") return stalled.has(socket) ? undefined : socket.send("PONG")
      socket.send(
        JSON.stringify([
          {
            event_type: "book",
            market: CONDITION,
            asset_id: YES_TOKEN,
            timestamp: "1800000000000",
            bids: levels(bids),
            asks: levels(asks)
          }
        ])
      )
    })
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  const port = (server.address() as AddressInfo).port

  const fake: FakePolymarket = {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/ws`,
    orders,
    calls,
    refusals,
    asks,
    bids,
    rateLimitNext: 0,
    tick: F.of("0.01"),
    failNextTrades: 0,
    move: (side, price, size) => {
      const p = F.of(price)
      const m = side === "BUY" ? bids : asks
      if (F.of(size) === 0) m.delete(p)
      else m.set(p, F.of(size))
      changed(side, p)
    },
    fillResting: (orderId, size) => {
      const o = orders.find((x) => x.id === orderId)
      if (o === undefined || o.status !== "LIVE") throw new Error(`no live order ${orderId}`)
      const n = F.min(F.of(size), F.sub(o.size, o.matched))
      o.matched = F.add(o.matched, n)
      if (o.matched >= o.size) o.status = "MATCHED"
      report({
        id: `trade-${++tradeCount}`,
        asset_id: o.tokenId,
        side: o.side === "BUY" ? "SELL" : "BUY",
        price: o.price,
        size: n,
        taker_order_id: `0xoutside${tradeCount}`,
        maker_orders: [
          { order_id: o.id, asset_id: o.tokenId, matched_amount: F.format(n), price: F.format(o.price), owner: o.owner }
        ],
        trader_side: "MAKER"
      })
    },
    heartbeats: 0,
    failHeartbeats: false,
    broadcast: (frame) => {
      for (const s of sockets) if (!stalled.has(s)) s.send(JSON.stringify(frame))
    },
    broadcastUser: (frame) => {
      for (const s of userSockets) if (!stalled.has(s)) s.send(JSON.stringify(frame))
    },
    userConnections: () => userSockets.size,
    dropSockets: () => {
      for (const s of [...sockets, ...userSockets]) s.terminate()
    },
    connections: () => sockets.size,
    opened: () => opened,
    userOpened: () => userOpened,
    placementFaults: [],
    hung: () => hanging,
    version: 2,
    depositWalletOnly: false,
    holdings,
    feeRateBps: 0,
    feeSchedule: undefined,
    trades,
    pageSize: 500,
    stallSockets: () => {
      for (const s of [...sockets, ...userSockets]) stalled.add(s)
    },
    cancelOnVenue: (orderId) => {
      const o = orders.find((x) => x.id === orderId)
      if (o === undefined) throw new Error(`no order ${orderId}`)
      cancelByVenue(o)
    },
    lapseHeartbeat: () => {
      for (const o of orders) cancelByVenue(o)
    },
    expire: (nowS) => {
      for (const o of orders) if (o.expiration > 0 && o.expiration <= nowS) cancelByVenue(o)
    },
    resolve: (outcome) => {
      resolved = outcome
      for (const o of orders) if (o.status === "LIVE") o.status = "CANCELED"
      fake.broadcast({
        event_type: "market_resolved",
        market: CONDITION,
        assets_ids: [YES_TOKEN, NO_TOKEN],
        winning_asset_id: outcome === "yes" ? YES_TOKEN : NO_TOKEN,
        winning_outcome: outcome === "yes" ? "Yes" : "No",
        timestamp: "1800000500000"
      })
    },
    indexLag: false,
    positionQueries: [],
    redeem: () => {
      if (resolved === undefined) throw new Error("redeemPositions reverts: the condition is not resolved")
      for (const token of [YES_TOKEN, NO_TOKEN]) holdings.delete(token)
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.terminate()
        for (const s of userSockets) s.terminate()
        wss.close()
        userWss.close()
        server.closeAllConnections()
        server.close(() => r())
      })
  }
  return fake
}
