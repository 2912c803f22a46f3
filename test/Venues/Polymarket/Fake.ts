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
}

export interface FakePolymarket {
  readonly url: string
  readonly wsUrl: string
  /** Every order accepted, with the signer recovered from its EIP-712 signature. */
  readonly orders: Array<FakeOrder>
  /** Requests refused for a bad HMAC or an unknown signer. */
  readonly refusals: Array<string>
  /** The YES token's resting asks of other traders (price → size), matched by crossing buys. */
  readonly asks: Map<number, number>
  readonly bids: Map<number, number>
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
  const asks = new Map<number, number>([
    [F.of("0.6"), F.of("100")],
    [F.of("0.62"), F.of("50")]
  ])
  const bids = new Map<number, number>([[F.of("0.55"), F.of("80")]])
  const sockets = new Set<WebSocket>()

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
      let matched = F.ZERO
      if (o.tokenId === YES_TOKEN && o.side === "BUY") {
        const best = [...asks.keys()].sort((a, b) => a - b)[0]
        if (best !== undefined && best <= price) {
          if (j.postOnly === true)
            return send(res, 400, { success: false, errorMsg: "INVALID_POST_ONLY_ORDER: crosses" })
          matched = F.min(size, asks.get(best)! as F.Fixed)
          const left = asks.get(best)! - matched
          if (left > 0) asks.set(best, left)
          else asks.delete(best)
        }
      }
      if (j.orderType === "FOK" && matched < size) {
        return send(res, 400, { success: false, errorMsg: "FOK_ORDER_NOT_FILLED_ERROR" })
      }
      const id = orderHash(x, o)
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
        orderType: j.orderType
      })
      return send(res, 200, {
        success: true,
        errorMsg: "",
        orderID: id,
        status: status === "MATCHED" ? "matched" : "live",
        makingAmount: F.format((o.side === "BUY" ? F.mul(matched, price) : matched) as F.Fixed),
        takingAmount: F.format((o.side === "BUY" ? matched : F.mul(matched, price)) as F.Fixed)
      })
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
    req.on("end", () => void handle(req, body, res))
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
  wss.on("connection", (socket) => {
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
    refusals,
    asks,
    bids,
    rateLimitNext: 0,
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
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.terminate()
        for (const s of userSockets) s.terminate()
        wss.close()
        userWss.close()
        server.close(() => r())
      })
  }
  return fake
}
