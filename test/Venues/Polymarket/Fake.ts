/** A fake Polymarket on loopback: Gamma, the CLOB (HMAC-checked, signer-recovering, a small matching book), the Data API and the market channel. */
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
  status: "LIVE" | "MATCHED" | "CANCELED"
  readonly signer: Address
  readonly orderType: string
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
  /** Drops every market-channel socket. */
  readonly dropSockets: () => void
  readonly connections: () => number
  /** Market-channel connections opened since the start. */
  readonly opened: () => number
  readonly close: () => Promise<void>
}

const gammaMarket = () => ({
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
  startDate: "2026-01-01T00:00:00Z",
  endDate: "2027-01-01T00:00:00Z",
  events: [{ id: "e1", title: "Fake", category: "Tests" }]
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
  /** Tells the user channel of one own trade: `MATCHED` now, then `CONFIRMED` (or `FAILED`) a moment later. */
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
    const frame = (status: string) => ({
      event_type: "trade",
      ...t,
      market: CONDITION,
      price: F.format(t.price),
      size: F.format(t.size),
      status,
      owner: "fake-key",
      matchtime: "1800000000",
      timestamp: "1800000000000"
    })
    setTimeout(() => fake.broadcastUser(frame("MATCHED")), 10)
    setTimeout(() => fake.broadcastUser(frame(fails ? "FAILED" : "CONFIRMED")), 40)
  }

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { "content-type": "application/json", ...headers })
    res.end(JSON.stringify(body))
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
    const path = req.url!
    calls.push(`${req.method} ${url.pathname}`)
    if (fake.rateLimitNext > 0) {
      fake.rateLimitNext--
      return send(res, 429, { error: "Too Many Requests" }, { "retry-after": "3" })
    }
    if (req.method === "GET" && url.pathname === "/markets") {
      const q = url.searchParams
      const m = gammaMarket()
      const hit =
        q.get("condition_ids") === CONDITION || q.get("id") === GAMMA_ID || q.get("slug") === SLUG || q.has("closed")
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
    if (req.method === "GET" && url.pathname === "/version") return send(res, 200, { version: 2 })
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
    if (!l2ok(req, path, body)) return send(res, 401, { error: "Unauthorized/Invalid api key" })
    if (req.method === "POST" && url.pathname === "/order") {
      const j = JSON.parse(body) as { order: Record<string, unknown>; orderType: string; postOnly?: boolean }
      const o = orderFromJson(j.order)
      const x = exchangeFor(137, 2, false)!
      const signer = await recoverOrderSigner(x, o, j.order["signature"] as Hex).catch(() => "0x" as Address)
      if (signer !== expectedSigner) {
        refusals.push(`order signed by ${signer}`)
        return send(res, 400, { success: false, errorMsg: "INVALID_SIGNATURE" })
      }
      const size = (o.side === "BUY" ? Number(o.takerAmount) : Number(o.makerAmount)) as F.Fixed
      const usdc = (o.side === "BUY" ? Number(o.makerAmount) : Number(o.takerAmount)) as F.Fixed
      const price = F.div(usdc, size)
      if (price % fake.tick !== 0) {
        return send(res, 400, {
          success: false,
          errorMsg: `INVALID_ORDER_MIN_TICK_SIZE: order ${F.format(price)} breaks minimum tick size rules`
        })
      }
      if (o.tokenId !== YES_TOKEN && o.tokenId !== NO_TOKEN) {
        return send(res, 400, { success: false, errorMsg: "INVALID_ORDER_TOKEN: no such token" })
      }
      // What this order would take: the YES token's levels it crosses, best first, in this token's prices.
      // A BUY of YES takes the asks; a SELL of YES takes the bids; a BUY of NO at q pairs with a YES bid at 1 − q.
      const onNo = o.tokenId === NO_TOKEN
      const takesBids = o.side === "SELL" || onNo
      const side = takesBids ? bids : asks
      const own = (p: number) => (onNo ? F.ONE - p : p) as F.Fixed
      const crossing = [...side.keys()]
        .sort((a, b) => (takesBids ? b - a : a - b))
        .filter((p) => (o.side === "BUY" ? own(p) <= price : p >= price))
      if (onNo && o.side === "SELL") crossing.length = 0
      if (crossing.length > 0 && j.postOnly === true) {
        return send(res, 400, { success: false, errorMsg: "INVALID_POST_ONLY_ORDER: order crosses the book" })
      }
      const available = crossing.reduce((n, p) => n + side.get(p)!, 0)
      if (j.orderType === "FOK" && available < size) {
        return send(res, 400, { success: false, errorMsg: "FOK_ORDER_NOT_FILLED_ERROR" })
      }
      const id = orderHash(x, o)
      const fills: Array<{ price: F.Fixed; size: F.Fixed }> = []
      let matched = F.ZERO
      for (const p of crossing) {
        if (matched >= size) break
        const take = F.min(F.sub(size, matched), side.get(p)! as F.Fixed)
        matched = F.add(matched, take)
        fills.push({ price: own(p), size: take })
        const left = side.get(p)! - take
        if (left > 0) side.set(p, left)
        else side.delete(p)
        changed(takesBids ? "BUY" : "SELL", p)
      }
      const status = matched >= size ? "MATCHED" : j.orderType === "FAK" ? "CANCELED" : "LIVE"
      orders.push({
        id,
        tokenId: o.tokenId,
        side: o.side,
        price,
        size,
        matched,
        status,
        signer,
        orderType: j.orderType,
        owner: (JSON.parse(body) as { owner: string }).owner
      })
      send(res, 200, {
        success: true,
        errorMsg: "",
        orderID: id,
        status: status === "MATCHED" ? "matched" : "live",
        makingAmount: F.format(
          fills.reduce((n, f) => F.add(n, o.side === "BUY" ? F.mul(f.size, f.price) : f.size), F.ZERO)
        ),
        takingAmount: F.format(
          fills.reduce((n, f) => F.add(n, o.side === "BUY" ? f.size : F.mul(f.size, f.price)), F.ZERO)
        )
      })
      // the user channel tells of each match after the answer, as the venue does
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
              price: F.format(onNo ? own(f.price) : f.price)
            }
          ],
          trader_side: "TAKER"
        })
      }
      return
    }
    if (req.method === "POST" && url.pathname === "/v1/heartbeats") {
      fake.heartbeats++
      if (fake.failHeartbeats) {
        for (const o of orders) if (o.status === "LIVE") o.status = "CANCELED"
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
      // one page holds everything here; the venue marks the last page with "LTE="
      const live = orders.filter((o) => o.status === "LIVE")
      return send(res, 200, {
        limit: 500,
        count: live.length,
        next_cursor: "LTE=",
        data: live.map((o) => ({
          id: o.id,
          status: o.status,
          market: CONDITION,
          asset_id: o.tokenId,
          side: o.side,
          original_size: F.format(o.size),
          size_matched: F.format(o.matched),
          price: F.format(o.price),
          owner: o.owner
        }))
      })
    }
    if (req.method === "GET" && url.pathname.startsWith("/data/order/")) {
      const o = orders.find((x) => x.id === url.pathname.slice("/data/order/".length))
      if (o === undefined) return send(res, 404, { error: "order not found" })
      return send(res, 200, {
        id: o.id,
        status: o.status,
        market: CONDITION,
        asset_id: o.tokenId,
        side: o.side,
        original_size: F.format(o.size),
        size_matched: F.format(o.matched),
        price: F.format(o.price)
      })
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
  userWss.on("connection", (socket) => {
    socket.once("message", (data) => {
      const sub = JSON.parse(data.toString()) as { auth?: { apiKey?: string } }
      if (sub.auth?.apiKey !== "fake-key") return socket.close()
      userSockets.add(socket)
    })
    socket.on("close", () => userSockets.delete(socket))
  })
  let opened = 0
  wss.on("connection", (socket) => {
    opened++
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("message", (data) => {
      const text = data.toString()
      if (text === "PING") return socket.send("PONG")
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
      for (const s of sockets) s.send(JSON.stringify(frame))
    },
    broadcastUser: (frame) => {
      for (const s of userSockets) s.send(JSON.stringify(frame))
    },
    userConnections: () => userSockets.size,
    dropSockets: () => {
      for (const s of sockets) s.terminate()
    },
    connections: () => sockets.size,
    opened: () => opened,
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
