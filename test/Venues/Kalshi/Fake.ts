/** A fake Kalshi exchange on loopback, written from the venue's API descriptions: REST and WebSocket, every signature checked, a small matching book. */
import { Effect, Either } from "effect"
import { type KeyObject } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { type WebSocket, WebSocketServer } from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import type { PlaceOrderRequest } from "../../../src/Services/VenueGateway.ts"
import { signingMessage, verifyMessage } from "../../../src/Venues/Kalshi/Signing.ts"
import { configFromEnv } from "../../../src/Venues/Kalshi/Venue.ts"
import type { SentRequest } from "./Spec.ts"

const f = F.of
const fmt = (x: F.Fixed, places: number) => {
  const whole = Math.trunc(x / F.SCALE)
  const frac = Math.round((x - whole * F.SCALE) / 10 ** (6 - places))
  return `${x < 0 && whole === 0 ? "-" : ""}${whole}.${String(Math.abs(frac)).padStart(places, "0")}`
}
const dollars = (x: F.Fixed) => fmt(x, 4)
const count = (x: F.Fixed) => fmt(x, 2)
const money = (x: F.Fixed) => fmt(x, 6)

export interface FakeMarketSpec {
  readonly ticker: string
  readonly event: string
  readonly title: string
  readonly status?: string
  /** Others' YES bids and NO bids, `[price, size]` in the venue's own (leg) prices. */
  readonly yes: ReadonlyArray<readonly [string, string]>
  readonly no: ReadonlyArray<readonly [string, string]>
}

/** The highest price with contracts resting (0 when none). */
const bestOf = (ladder: ReadonlyMap<number, F.Fixed>): F.Fixed =>
  [...ladder.entries()].reduce((best, [p, n]) => (n > 0 && p > best ? (p as F.Fixed) : best), F.ZERO)

interface FakeMarket {
  readonly ticker: string
  readonly event: string
  readonly title: string
  status: string
  result?: string
  settlementValue?: F.Fixed
  /** Others' liquidity: YES bids and NO bids by leg price. */
  readonly yes: Map<number, F.Fixed>
  readonly no: Map<number, F.Fixed>
}

export interface FakeOrder {
  readonly order_id: string
  client_order_id: string
  readonly ticker: string
  readonly side: "bid" | "ask"
  price: F.Fixed
  initial: F.Fixed
  filled: F.Fixed
  status: "resting" | "canceled" | "executed"
  /** Cost of the leg bought (YES for a bid, NO for an ask), taker and maker. */
  takerCost: F.Fixed
  makerCost: F.Fixed
  takerFees: F.Fixed
  created: number
  updated: number
  expiration: number | null
  lastUpdateReason?: string
}

interface Sub {
  readonly sid: number
  readonly channel: string
  readonly tickers: Set<string>
  seq: number
  /** Orderbook channel only: NO-side levels in YES-leg prices. */
  readonly yesPrice: boolean
}

interface Conn {
  readonly socket: WebSocket
  readonly subs: Array<Sub>
  /** Silent: sends nothing (no messages, no pings, no pongs) and never closes, as a stalled connection. */
  muted: boolean
}

/** What a test can make the exchange do to the next request of a route. */
export type Trick =
  | {
      readonly kind: "fail"
      readonly status: number
      readonly body: unknown
      readonly headers?: Record<string, string>
    }
  /** Carries the request out but never answers (as when the reply is lost). */
  | { readonly kind: "swallow" }
  /** Carries the request out, then answers `status` (a 5xx after the order reached the book). */
  | { readonly kind: "failAfter"; readonly status: number; readonly body: unknown }
  /** Carries the request out, then resets the connection without an answer. */
  | { readonly kind: "reset" }
  /** Carries the request out and answers it `ms` later (a slow round trip). */
  | { readonly kind: "delay"; readonly ms: number }

const takerFee = (n: F.Fixed, p: F.Fixed) =>
  F.roundTo(F.mul(F.mul(F.mul(f("0.07"), n, "up"), p, "up"), F.sub(F.ONE, p), "up"), f("0.0001"), "up")

export class FakeKalshi {
  readonly requests: Array<SentRequest> = []
  readonly commands: Array<unknown> = []
  readonly rejectedSignatures: Array<string> = []
  readonly markets = new Map<string, FakeMarket>()
  readonly orders: Array<FakeOrder> = []
  readonly fills: Array<Record<string, unknown>> = []
  readonly connections: Array<Conn> = []
  readonly tricks: Array<{ method: string; path: RegExp; trick: Trick }> = []
  /** Each request as it came in (`in`) and as it was answered (`out`), in that order: what overlapped what. */
  readonly timeline: Array<{ readonly at: "in" | "out"; readonly method: string; readonly path: string }> = []
  balance = f("1000")
  /** Seq numbers to skip on the next orderbook_delta messages (a lost message). */
  dropDeltas = 0
  /** The venue's default for `use_yes_price` when a subscription does not say (documented false; to be flipped). */
  defaultYesPrice = false
  /** The legacy `action` written on the next fills (the venue's enum: buy, sell, sell_partial, sell_to_close, ""). */
  fillAction: "buy" | "sell" | "sell_partial" | "sell_to_close" | "" = "buy"
  /** How long a `subscribed` answer waits (a venue slow to acknowledge). */
  ackDelayMs = 0
  /** The keep-alive: a Ping with body `heartbeat` this often to every connection (the venue's 10 s). */
  pingMs = 10_000
  /** Settlements of the account, newest last (`GET /portfolio/settlements`). */
  readonly settlements: Array<Record<string, unknown>> = []
  /** At most this many items on one page, whatever `limit` asks (the venue may answer fewer than asked). */
  pageCap = 1000
  /** Each series' fee schedule (`GET /series/{ticker}`); unlisted series are `quadratic` × 1. */
  readonly seriesFees = new Map<string, { fee_type: string; fee_multiplier: number }>()
  /** Event fee overrides (`GET /events/fee_changes`). */
  readonly feeChanges: Array<Record<string, unknown>> = []
  /** Markets settled: their positions are gone. */
  private readonly settledMarkets = new Set<string>()
  private pinger: ReturnType<typeof setInterval> | undefined
  private n = 0
  private sids = 0
  private server!: Server
  private wss!: WebSocketServer
  port = 0

  constructor(
    private readonly publicKey: KeyObject,
    specs: ReadonlyArray<FakeMarketSpec>,
    private readonly clock: () => number = () => Date.now()
  ) {
    for (const s of specs) {
      this.markets.set(s.ticker, {
        ticker: s.ticker,
        event: s.event,
        title: s.title,
        status: s.status ?? "active",
        yes: new Map(s.yes.map(([p, n]) => [f(p), f(n)])),
        no: new Map(s.no.map(([p, n]) => [f(p), f(n)]))
      })
    }
  }

  get apiUrl() {
    return `http://127.0.0.1:${this.port}/trade-api/v2`
  }
  get wsUrl() {
    return `ws://127.0.0.1:${this.port}/trade-api/ws/v2`
  }

  /** The next request of `method` on a path matching `path` meets the trick. */
  trick(method: string, path: RegExp, trick: Trick) {
    this.tricks.push({ method, path, trick })
  }

  start(): Promise<void> {
    this.server = createServer((req, res) => void this.onRequest(req, res))
    // pongs are the fake's to send: a silent connection answers none
    this.wss = new WebSocketServer({ noServer: true, autoPong: false })
    this.pinger = setInterval(() => {
      for (const c of this.connections) if (!c.muted) c.socket.ping("heartbeat")
    }, this.pingMs)
    this.server.on("upgrade", (req, socket, head) => {
      if (!this.verified(req, "GET", new URL(req.url ?? "/", "http://x").pathname)) {
        socket.write("HTTP/1.1 401 Unauthorized\r\n\r\n")
        socket.destroy()
        return
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.onSocket(ws))
    })
    return new Promise((resolve) =>
      this.server.listen(this.port, "127.0.0.1", () => {
        this.port = (this.server.address() as AddressInfo).port
        resolve()
      })
    )
  }

  stop(): Promise<void> {
    if (this.pinger !== undefined) clearInterval(this.pinger)
    for (const c of this.connections) c.socket.terminate()
    this.wss.close()
    this.server.closeAllConnections()
    return new Promise((resolve) => this.server.close(() => resolve()))
  }

  /** Closes every socket, as a network failure would. */
  dropSockets() {
    for (const c of this.connections.splice(0)) c.socket.terminate()
  }

  /** Every open socket falls silent: no close frame, no messages, no pings, no pongs (a stalled connection). */
  silence() {
    for (const c of this.connections) c.muted = true
  }

  /** Sends a message as is to every subscription of `channel` (a message the venue may send that a test shapes). */
  sendRaw(channel: string, message: { readonly type: string; readonly msg: unknown }) {
    this.push(channel, "", message)
  }

  /** A channel error on every subscription of `channel`; the terminal ones (10, 25) end the subscription. */
  channelError(channel: string, code: number) {
    for (const c of this.connections)
      for (const s of [...c.subs]) {
        if (s.channel !== channel) continue
        if (code === 10 || code === 25) c.subs.splice(c.subs.indexOf(s), 1)
        this.sendTo(c, {
          type: "error",
          sid: s.sid,
          msg: { code, msg: code === 25 ? "Subscription buffer overflow" : "Channel error" }
        })
      }
  }

  /** An own order in status `unknown`, as `user_orders` may report it. */
  pushUnknown(orderId: string) {
    const o = this.orders.find((x) => x.order_id === orderId)!
    this.push("user_orders", o.ticker, { type: "user_order", msg: { ...this.orderRecord(o), status: "unknown" } })
  }

  /**
   * The market resolves: `determined` then `settled` on market_lifecycle_v2 (every subscriber: the channel takes no
   * ticker filter), a settlement for the account's position, the payout in the balance, the position gone.
   */
  settle(ticker: string, result: "yes" | "no" | "scalar", valueDollars?: string) {
    const m = this.markets.get(ticker)!
    const value = valueDollars !== undefined ? f(valueDollars) : result === "yes" ? F.ONE : F.ZERO
    m.status = "finalized"
    m.result = result
    m.settlementValue = value
    for (const o of this.orders) if (o.ticker === ticker && o.status === "resting") this.cancel(o, "CloseCancel")
    const now = this.clock()
    this.lifecycleAll({
      market_ticker: ticker,
      event_type: "determined",
      result,
      settlement_value: dollars(value),
      determination_ts: Math.floor(now / 1000)
    })
    let yes = F.ZERO
    let no = F.ZERO
    for (const x of this.fills) {
      if (x["ticker"] !== ticker) continue
      const n = f(x["count_fp"] as string)
      if (x["book_side"] === "bid") yes = F.add(yes, n)
      else no = F.add(no, n)
    }
    const net = F.sub(yes, no)
    const yesHeld = net > 0 ? net : F.ZERO
    const noHeld = net < 0 ? F.neg(net) : F.ZERO
    const revenue = F.add(F.mul(yesHeld, value), F.mul(noHeld, F.sub(F.ONE, value)))
    if (yesHeld > 0 || noHeld > 0) {
      this.settlements.push({
        ticker,
        exchange_index: 0,
        event_ticker: m.event,
        market_result: result,
        yes_count_fp: count(yesHeld),
        yes_total_cost_dollars: money(F.ZERO),
        no_count_fp: count(noHeld),
        no_total_cost_dollars: money(F.ZERO),
        revenue: Math.round(revenue / 10_000),
        settled_time: new Date(now).toISOString(),
        fee_cost: dollars(F.ZERO),
        value: Math.round(value / 10_000)
      })
      this.balance = F.add(this.balance, revenue)
    }
    this.settledMarkets.add(ticker)
    this.lifecycleAll({ market_ticker: ticker, event_type: "settled", settled_ts: Math.floor(now / 1000) })
  }

  private lifecycleAll(msg: Record<string, unknown>) {
    for (const c of this.connections)
      for (const s of c.subs) {
        if (s.channel !== "market_lifecycle_v2") continue
        s.seq += 1
        this.sendTo(c, { type: "market_lifecycle_v2", sid: s.sid, seq: s.seq, msg })
      }
  }

  private sendTo(c: Conn, message: unknown) {
    if (!c.muted) c.socket.send(JSON.stringify(message))
  }

  /** Others' liquidity changes at one level (a venue delta); streamed to subscribers. */
  move(ticker: string, side: "yes" | "no", price: string, delta: string) {
    const m = this.markets.get(ticker)!
    const ladder = side === "yes" ? m.yes : m.no
    const p = f(price)
    const size = F.add(ladder.get(p) ?? F.ZERO, f(delta))
    if (size > 0) ladder.set(p, size)
    else ladder.delete(p)
    this.delta(ticker, side, p, f(delta))
  }

  /**
   * Public trades, newest last: an outside taker traded `count` against others' liquidity at YES price `price`,
   * buying YES (`taker` yes: the NO bids at 1 − price thin out) or NO (the YES bids at price thin out).
   */
  readonly publicTrades: Array<{
    ticker: string
    id: string
    price: F.Fixed
    count: F.Fixed
    taker: "yes" | "no"
    ts: number
  }> = []

  /** An outside taker trades with others' liquidity: a public trade, and the level it took from thins (a delta). */
  trade(ticker: string, taker: "yes" | "no", price: string, amount: string) {
    this.print(ticker, taker, price, amount)
    if (taker === "yes") this.move(ticker, "no", F.format(F.sub(F.ONE, f(price))), `-${amount}`)
    else this.move(ticker, "yes", price, `-${amount}`)
  }

  /**
   * A public trade listed on `/markets/trades` and streamed on the `trade` channel as the venue sends it, and nothing
   * else (its delta streamed apart, or before it).
   */
  print(ticker: string, taker: "yes" | "no", price: string, amount: string) {
    const trade = {
      ticker,
      id: `t-${this.publicTrades.length + 1}`,
      price: f(price),
      count: f(amount),
      taker,
      ts: this.clock()
    }
    this.publicTrades.push(trade)
    for (const c of this.connections)
      for (const s of c.subs) {
        if (s.channel !== "trade" || !s.tickers.has(ticker)) continue
        s.seq += 1
        this.sendTo(c, {
          type: "trade",
          sid: s.sid,
          seq: s.seq,
          msg: {
            trade_id: trade.id,
            market_ticker: ticker,
            yes_price_dollars: dollars(trade.price),
            no_price_dollars: dollars(F.sub(F.ONE, trade.price)),
            count_fp: count(trade.count),
            taker_side: taker,
            taker_outcome_side: taker,
            taker_book_side: taker === "yes" ? "bid" : "ask",
            ts: Math.floor(trade.ts / 1000),
            ts_ms: trade.ts
          }
        })
      }
  }

  /** An outside taker fills `amount` of an own resting order (it becomes the maker). */
  fillResting(orderId: string, amount: string) {
    const o = this.orders.find((x) => x.order_id === orderId)!
    const n = F.min(f(amount), F.sub(o.initial, o.filled))
    this.execute(o, n, o.price, false)
    this.delta(o.ticker, o.side === "bid" ? "yes" : "no", o.side === "bid" ? o.price : F.sub(F.ONE, o.price), F.neg(n))
    this.pushOrder(o)
  }

  /**
   * The market's lifecycle moves (`deactivated` pauses it, `activated` opens it): streamed on market_lifecycle_v2 to
   * every subscriber (the channel takes no ticker filter).
   */
  lifecycle(ticker: string, event: "activated" | "deactivated", status: string) {
    this.markets.get(ticker)!.status = status
    this.lifecycleAll({ market_ticker: ticker, event_type: event, is_deactivated: event === "deactivated" })
  }

  /** The venue cancels an own resting order by itself (an expiry, a market rule, another client), saying why. */
  cancelOutside(
    orderId: string,
    reason: "ExpiryCancel" | "HaltCancel" | "CloseCancel" | "MarginCancel" = "HaltCancel"
  ) {
    this.cancel(
      this.orders.find((x) => x.order_id === orderId)!,
      reason
    )
  }

  // ------------------------------------------------------------------------------------------ REST

  private verified(req: IncomingMessage, method: string, path: string): boolean {
    const key = req.headers["kalshi-access-key"]
    const ts = req.headers["kalshi-access-timestamp"]
    const sig = req.headers["kalshi-access-signature"]
    const ok =
      typeof key === "string" &&
      typeof ts === "string" &&
      typeof sig === "string" &&
      verifyMessage(this.publicKey, signingMessage(Number(ts), method, path), sig)
    if (!ok) this.rejectedSignatures.push(`${method} ${path}`)
    return ok
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", "http://x")
    const method = req.method ?? "GET"
    let raw = ""
    for await (const chunk of req) raw += String(chunk)
    const body = raw === "" ? undefined : (JSON.parse(raw) as Record<string, any>)
    const query = Object.fromEntries(url.searchParams.entries())
    this.requests.push({ method, path: url.pathname, query, ...(body === undefined ? {} : { body }) })
    this.timeline.push({ at: "in", method, path: url.pathname })
    const send = (status: number, payload?: unknown, headers: Record<string, string> = {}) => {
      this.timeline.push({ at: "out", method, path: url.pathname })
      res.writeHead(status, { "content-type": "application/json", ...headers })
      res.end(payload === undefined ? "" : JSON.stringify(payload))
    }
    const error = (status: number, code: string, message: string) => send(status, { error: { code, message } })
    const path = url.pathname.replace(/^\/trade-api\/v2/, "")
    const isPrivate = path.startsWith("/portfolio") || path.startsWith("/account")
    // public routes may come signed too; a signature that is there must verify
    if (
      (isPrivate || req.headers["kalshi-access-signature"] !== undefined) &&
      !this.verified(req, method, url.pathname)
    )
      return error(401, "authentication_error", "bad signature")
    const t = this.tricks.findIndex((x) => x.method === method && x.path.test(path))
    const trick = t === -1 ? undefined : this.tricks.splice(t, 1)[0]!.trick
    if (trick?.kind === "fail") return send(trick.status, trick.body, trick.headers)
    const answer = (status: number, payload?: unknown) =>
      trick?.kind === "swallow"
        ? undefined
        : trick?.kind === "failAfter"
          ? send(trick.status, trick.body)
          : trick?.kind === "reset"
            ? void (this.timeline.push({ at: "out", method, path: url.pathname }), req.socket.destroy())
            : trick?.kind === "delay"
              ? void setTimeout(() => send(status, payload), trick.ms)
              : send(status, payload)
    /** One page of a list, by the venue's `limit` (default 100) and an opaque `cursor` (here an offset). */
    const paged = <A>(list: ReadonlyArray<A>) => {
      const start = query["cursor"] ? Number(query["cursor"]) : 0
      const limit = Math.min(this.pageCap, query["limit"] ? Number(query["limit"]) : 100)
      return {
        items: list.slice(start, start + limit),
        cursor: start + limit < list.length ? String(start + limit) : ""
      }
    }

    let m: RegExpExecArray | null
    if (method === "GET" && path === "/events") return answer(200, this.events(query))
    if (method === "GET" && path === "/events/fee_changes") {
      const page = paged(
        this.feeChanges.filter(
          (c) => query["event_ticker"] === undefined || c["event_ticker"] === query["event_ticker"]
        )
      )
      return answer(200, { event_fee_changes: page.items, cursor: page.cursor })
    }
    if (method === "GET" && path === "/markets/trades") {
      const trades = this.publicTrades
        .filter((t) => query["ticker"] === undefined || t.ticker === query["ticker"])
        .reverse()
        .slice(0, query["limit"] ? Number(query["limit"]) : 100)
        .map((t) => ({
          trade_id: t.id,
          ticker: t.ticker,
          created_time: new Date(t.ts).toISOString(),
          yes_price_dollars: dollars(t.price),
          no_price_dollars: dollars(F.sub(F.ONE, t.price)),
          count_fp: count(t.count),
          taker_side: t.taker
        }))
      return answer(200, { cursor: "", trades })
    }
    if (method === "GET" && (m = /^\/series\/([^/]+)$/.exec(path))) {
      const ticker = decodeURIComponent(m[1]!)
      return answer(200, {
        series: {
          ticker,
          title: `Series ${ticker}`,
          category: "Test",
          ...(this.seriesFees.get(ticker) ?? { fee_type: "quadratic", fee_multiplier: 1 })
        }
      })
    }
    if (method === "GET" && (m = /^\/markets\/([^/]+)$/.exec(path))) {
      const market = this.markets.get(decodeURIComponent(m[1]!))
      return market ? answer(200, { market: this.marketRecord(market) }) : error(404, "not_found", "market not found")
    }
    if (method === "GET" && (m = /^\/markets\/([^/]+)\/orderbook$/.exec(path))) {
      const market = this.markets.get(decodeURIComponent(m[1]!))
      if (!market) return error(404, "not_found", "market not found")
      const { yes, no } = this.ladders(market)
      return answer(200, { orderbook_fp: { yes_dollars: yes, no_dollars: no } })
    }
    if (method === "GET" && path === "/portfolio/balance")
      return answer(200, { balance: Math.round(this.balance / 10_000), balance_dollars: dollars(this.balance) })
    if (method === "GET" && path === "/portfolio/orders") {
      const list = this.orders
        .filter((o) => (query["ticker"] ? o.ticker === query["ticker"] : true))
        .filter((o) => (query["status"] ? o.status === query["status"] : true))
        .filter((o) => (query["min_ts"] ? o.created >= Number(query["min_ts"]) * 1000 : true))
        .slice()
        .reverse()
      const page = paged(list)
      return answer(200, { cursor: page.cursor, orders: page.items.map((o) => this.orderRecord(o)) })
    }
    if (method === "GET" && (m = /^\/portfolio\/orders\/([^/]+)$/.exec(path))) {
      const o = this.orders.find((x) => x.order_id === m![1])
      return o ? answer(200, { order: this.orderRecord(o) }) : error(404, "not_found", "order not found")
    }
    if (method === "GET" && path === "/portfolio/fills") {
      const list = this.fills
        .filter((x) => (query["order_id"] ? x["order_id"] === query["order_id"] : true))
        .filter((x) => (query["min_ts"] ? (x["ts"] as number) >= Number(query["min_ts"]) : true))
        .slice()
        .reverse()
      const page = paged(list)
      return answer(200, { cursor: page.cursor, fills: page.items })
    }
    if (method === "GET" && path === "/portfolio/settlements") {
      const list = this.settlements
        .filter((x) => (query["ticker"] ? x["ticker"] === query["ticker"] : true))
        .filter((x) =>
          query["min_ts"] ? Date.parse(x["settled_time"] as string) >= Number(query["min_ts"]) * 1000 : true
        )
        .slice()
        .reverse()
      const page = paged(list)
      return answer(200, { cursor: page.cursor, settlements: page.items })
    }
    if (method === "GET" && path === "/portfolio/positions") {
      const held = new Map<string, F.Fixed>()
      for (const x of this.fills) {
        const n = f(x["count_fp"] as string)
        const t = x["ticker"] as string
        if (this.settledMarkets.has(t)) continue
        held.set(t, F.add(held.get(t) ?? F.ZERO, x["book_side"] === "bid" ? n : F.neg(n)))
      }
      return answer(200, {
        cursor: "",
        market_positions: [...held.entries()].map(([ticker, n]) => ({ ticker, position_fp: count(n) }))
      })
    }
    if (method === "POST" && path === "/portfolio/events/orders") return this.create(body!, answer, error)
    if (method === "DELETE" && path === "/portfolio/events/orders") {
      for (const o of this.orders) if (o.status === "resting") this.cancel(o)
      return answer(204)
    }
    if ((m = /^\/portfolio\/events\/orders\/([^/]+)(\/amend|\/decrease)?$/.exec(path))) {
      const o = this.orders.find((x) => x.order_id === m![1])
      if (!o || o.status !== "resting") return error(404, "not_found", "order not found or not resting")
      if (method === "DELETE") {
        const left = F.sub(o.initial, o.filled)
        this.cancel(o)
        return answer(200, {
          order_id: o.order_id,
          client_order_id: o.client_order_id,
          reduced_by: count(left),
          ts_ms: this.clock()
        })
      }
      if (m[2] === "/decrease") {
        const to = f(body!["reduce_to"])
        this.resize(o, F.add(o.filled, to))
        return answer(200, {
          order_id: o.order_id,
          remaining_count: count(F.sub(o.initial, o.filled)),
          ts_ms: this.clock()
        })
      }
      if (m[2] === "/amend") {
        const renamed = body!["updated_client_order_id"] as string | undefined
        if (renamed !== undefined && this.orders.some((x) => x.client_order_id === renamed))
          return error(409, "order_already_exists", "an order with this client_order_id exists")
        if (renamed !== undefined) o.client_order_id = renamed
        const price = f(body!["price"])
        if (price !== o.price) {
          const left = F.sub(o.initial, o.filled)
          this.delta(o.ticker, o.side === "bid" ? "yes" : "no", this.legPrice(o), F.neg(left))
          o.price = price
          this.delta(o.ticker, o.side === "bid" ? "yes" : "no", this.legPrice(o), left)
        }
        this.resize(o, f(body!["count"]))
        return answer(200, { order_id: o.order_id, client_order_id: o.client_order_id, ts_ms: this.clock() })
      }
    }
    return error(404, "not_found", `no route ${method} ${path}`)
  }

  private legPrice(o: FakeOrder) {
    return o.side === "bid" ? o.price : F.sub(F.ONE, o.price)
  }

  private resize(o: FakeOrder, initial: F.Fixed) {
    const before = F.sub(o.initial, o.filled)
    o.initial = initial
    const after = F.sub(o.initial, o.filled)
    this.delta(o.ticker, o.side === "bid" ? "yes" : "no", this.legPrice(o), F.sub(after, before))
    o.updated = this.clock()
    if (after <= 0) o.status = "canceled"
    this.pushOrder(o)
  }

  private cancel(o: FakeOrder, reason?: string) {
    const left = F.sub(o.initial, o.filled)
    o.status = "canceled"
    o.updated = this.clock()
    if (reason !== undefined) o.lastUpdateReason = reason
    this.delta(o.ticker, o.side === "bid" ? "yes" : "no", this.legPrice(o), F.neg(left))
    this.pushOrder(o)
  }

  private create(
    b: Record<string, any>,
    answer: (status: number, payload?: unknown) => void,
    error: (status: number, code: string, message: string) => void
  ) {
    const market = this.markets.get(b["ticker"])
    if (!market) return error(404, "not_found", "market not found")
    if (market.status !== "active") return error(409, "market_closed", "market is not open for trading")
    if (b["reduce_only"] === true && b["time_in_force"] !== "immediate_or_cancel")
      return error(
        400,
        "invalid_parameters",
        "Orders with reduce_only set to true will be rejected unless time_in_force is immediate_or_cancel."
      )
    const price = f(b["price"])
    const n = f(b["count"])
    const side = b["side"] as "bid" | "ask"
    const cost = side === "bid" ? F.mul(price, n) : F.mul(F.sub(F.ONE, price), n)
    if (cost > this.balance) return error(400, "insufficient_balance", "not enough balance for this order")
    if (b["client_order_id"] && this.orders.some((o) => o.client_order_id === b["client_order_id"]))
      return error(409, "order_already_exists", "an order with this client_order_id exists")
    const now = this.clock()
    const o: FakeOrder = {
      order_id: `ord-${++this.n}`,
      client_order_id: b["client_order_id"] ?? "",
      ticker: market.ticker,
      side,
      price,
      initial: n,
      filled: F.ZERO,
      status: "resting",
      takerCost: F.ZERO,
      makerCost: F.ZERO,
      takerFees: F.ZERO,
      created: now,
      updated: now,
      expiration: typeof b["expiration_time"] === "number" ? b["expiration_time"] * 1000 : null
    }
    // crossing: a bid takes NO bids at 1 − q ≤ p; an ask takes YES bids at ≥ p
    const contra = side === "bid" ? market.no : market.yes
    const levels = [...contra.keys()].sort((a, b) => b - a)
    const crosses = (q: number) => (side === "bid" ? F.sub(F.ONE, q as F.Fixed) <= price : q >= price)
    if (b["post_only"] === true && levels.some(crosses))
      return error(400, "post_only_cross", "post-only order would cross")
    this.orders.push(o)
    for (const q of levels) {
      if (!crosses(q) || o.filled >= o.initial) break
      const available = contra.get(q)!
      const take = F.min(available, F.sub(o.initial, o.filled))
      const yesPrice = side === "bid" ? F.sub(F.ONE, q as F.Fixed) : (q as F.Fixed)
      this.execute(o, take, yesPrice, true)
      const left = F.sub(available, take)
      if (left > 0) contra.set(q, left)
      else contra.delete(q)
      this.delta(market.ticker, side === "bid" ? "no" : "yes", q as F.Fixed, F.neg(take))
    }
    const left = F.sub(o.initial, o.filled)
    if (left > 0) {
      if (b["time_in_force"] === "fill_or_kill" && o.filled === 0) o.status = "canceled"
      else if (b["time_in_force"] !== "good_till_canceled") o.status = "canceled"
      else this.delta(market.ticker, side === "bid" ? "yes" : "no", this.legPrice(o), left)
    } else o.status = "executed"
    this.pushOrder(o)
    return answer(201, {
      order_id: o.order_id,
      client_order_id: o.client_order_id,
      fill_count: count(o.filled),
      remaining_count: count(o.status === "resting" ? left : F.ZERO),
      ts_ms: now
    })
  }

  private execute(o: FakeOrder, n: F.Fixed, yesPrice: F.Fixed, taker: boolean) {
    const legPrice = o.side === "bid" ? yesPrice : F.sub(F.ONE, yesPrice)
    const fee = taker ? takerFee(n, yesPrice) : F.ZERO
    o.filled = F.add(o.filled, n)
    if (taker) {
      o.takerCost = F.add(o.takerCost, F.mul(legPrice, n))
      o.takerFees = F.add(o.takerFees, fee)
    } else o.makerCost = F.add(o.makerCost, F.mul(legPrice, n))
    if (o.filled >= o.initial) o.status = "executed"
    this.balance = F.sub(this.balance, F.add(F.mul(legPrice, n), fee))
    const now = this.clock()
    o.updated = now
    const fill = {
      fill_id: `tr-${++this.n}`,
      trade_id: `tr-${this.n}`,
      order_id: o.order_id,
      client_order_id: o.client_order_id,
      market_ticker: o.ticker,
      ticker: o.ticker,
      side: o.side === "bid" ? "yes" : "no",
      action: this.fillAction,
      book_side: o.side,
      outcome_side: o.side === "bid" ? "yes" : "no",
      yes_price_dollars: dollars(yesPrice),
      no_price_dollars: dollars(F.sub(F.ONE, yesPrice)),
      count_fp: count(n),
      fee_cost: money(fee),
      is_taker: taker,
      ts: Math.floor(now / 1000),
      ts_ms: now,
      created_time: new Date(now).toISOString()
    }
    this.fills.push(fill)
    this.push("fill", o.ticker, { type: "fill", msg: fill })
  }

  // ------------------------------------------------------------------------------------------ records

  private marketRecord(m: FakeMarket) {
    return {
      ticker: m.ticker,
      event_ticker: m.event,
      market_type: "binary",
      title: m.title,
      yes_sub_title: "Yes",
      no_sub_title: "No",
      status: m.status,
      open_time: "2026-01-01T00:00:00Z",
      close_time: "2099-01-01T00:00:00Z",
      result: m.result ?? "",
      ...(m.settlementValue === undefined ? {} : { settlement_value_dollars: dollars(m.settlementValue) }),
      price_level_structure: "linear_cent",
      price_ranges: [{ start: "0.0000", end: "1.0000", step: "0.0100" }],
      // the top of the book as the market object states it: the YES ask is 1 − the best NO bid
      yes_bid_dollars: dollars(bestOf(m.yes)),
      yes_ask_dollars: dollars(F.sub(F.ONE, bestOf(m.no))),
      last_price_dollars: dollars(F.ZERO)
    }
  }

  private events(query: Record<string, string>) {
    const byEvent = new Map<string, Array<FakeMarket>>()
    for (const m of this.markets.values()) byEvent.set(m.event, [...(byEvent.get(m.event) ?? []), m])
    const all = [...byEvent.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1))
    const start = query["cursor"] ? Number(query["cursor"]) : 0
    const limit = query["limit"] ? Number(query["limit"]) : 200
    const page = all.slice(start, start + limit)
    return {
      cursor: start + limit < all.length ? String(start + limit) : "",
      events: page.map(([event, ms]) => ({
        event_ticker: event,
        series_ticker: event.split("-")[0],
        title: `Event ${event}`,
        sub_title: "",
        category: "Test",
        markets: ms.map((m) => this.marketRecord(m))
      }))
    }
  }

  /** Both ladders as the venue publishes them: others' bids plus own resting orders, ascending. */
  private ladders(m: FakeMarket) {
    const yes = new Map(m.yes)
    const no = new Map(m.no)
    for (const o of this.orders) {
      if (o.ticker !== m.ticker || o.status !== "resting") continue
      const ladder = o.side === "bid" ? yes : no
      const p = this.legPrice(o)
      ladder.set(p, F.add(ladder.get(p) ?? F.ZERO, F.sub(o.initial, o.filled)))
    }
    const out = (l: Map<number, F.Fixed>) =>
      [...l.entries()].sort((a, b) => a[0] - b[0]).map(([p, n]) => [dollars(p as F.Fixed), count(n)])
    return { yes: out(yes), no: out(no) }
  }

  private orderRecord(o: FakeOrder) {
    return {
      order_id: o.order_id,
      client_order_id: o.client_order_id,
      ticker: o.ticker,
      status: o.status,
      side: "yes",
      action: o.side === "bid" ? "buy" : "sell",
      book_side: o.side,
      outcome_side: o.side === "bid" ? "yes" : "no",
      type: "limit",
      yes_price_dollars: dollars(o.price),
      no_price_dollars: dollars(F.sub(F.ONE, o.price)),
      initial_count_fp: count(o.initial),
      fill_count_fp: count(o.filled),
      remaining_count_fp: count(o.status === "resting" ? F.sub(o.initial, o.filled) : F.ZERO),
      taker_fill_cost_dollars: money(o.takerCost),
      maker_fill_cost_dollars: money(o.makerCost),
      taker_fees_dollars: money(o.takerFees),
      maker_fees_dollars: money(F.ZERO),
      created_time: new Date(o.created).toISOString(),
      last_update_time: new Date(o.updated).toISOString(),
      last_updated_ts_ms: o.updated,
      ...(o.expiration === null ? {} : { expiration_time: new Date(o.expiration).toISOString() }),
      ...(o.lastUpdateReason === undefined ? {} : { last_update_reason: o.lastUpdateReason }),
      self_trade_prevention_type: "taker_at_cross"
    }
  }

  // ------------------------------------------------------------------------------------------ WebSocket

  private onSocket(socket: WebSocket) {
    const conn: Conn = { socket, subs: [], muted: false }
    this.connections.push(conn)
    socket.on("close", () => {
      const i = this.connections.indexOf(conn)
      if (i !== -1) this.connections.splice(i, 1)
    })
    socket.on("ping", (data) => {
      if (!conn.muted) socket.pong(data)
    })
    socket.on("message", (data) => {
      if (conn.muted) return
      const cmd = JSON.parse(String(data)) as { id: number; cmd: string; params: Record<string, any> }
      this.commands.push(cmd)
      const reply = (x: unknown) => this.sendTo(conn, x)
      if (cmd.cmd === "subscribe") {
        for (const channel of cmd.params["channels"] as Array<string>) {
          const sub: Sub = {
            sid: ++this.sids,
            channel,
            // the lifecycle channel takes no ticker filter: it carries every market
            tickers: new Set(channel === "market_lifecycle_v2" ? [] : (cmd.params["market_tickers"] ?? [])),
            seq: 0,
            yesPrice: cmd.params["use_yes_price"] ?? this.defaultYesPrice
          }
          const acknowledge = () => {
            conn.subs.push(sub)
            reply({ type: "subscribed", id: cmd.id, msg: { channel, sid: sub.sid } })
            if (channel === "orderbook_delta") for (const t of sub.tickers) this.snapshot(conn, sub, t, cmd.id)
          }
          if (this.ackDelayMs > 0) setTimeout(acknowledge, this.ackDelayMs)
          else acknowledge()
        }
      } else if (cmd.cmd === "update_subscription") {
        const sub = conn.subs.find((s) => s.sid === cmd.params["sid"])
        if (!sub) return reply({ type: "error", id: cmd.id, msg: { code: 7, msg: "Unknown subscription ID" } })
        const tickers = (cmd.params["market_tickers"] ?? []) as Array<string>
        if (cmd.params["action"] === "add_markets") {
          for (const t of tickers) sub.tickers.add(t)
          reply({ type: "ok", id: cmd.id, sid: sub.sid, seq: ++sub.seq, msg: { market_tickers: [...sub.tickers] } })
          if (sub.channel === "orderbook_delta") for (const t of tickers) this.snapshot(conn, sub, t, cmd.id)
        } else if (cmd.params["action"] === "get_snapshot") {
          if (sub.channel !== "orderbook_delta")
            return reply({ type: "error", id: cmd.id, msg: { code: 13, msg: "Unsupported action" } })
          for (const t of tickers) this.snapshot(conn, sub, t, cmd.id)
        }
      }
    })
  }

  /** A NO bid at leg price q as the subscription reports it: q, or the YES-leg price 1 − q with `use_yes_price`. */
  private noLevel(sub: Sub, legPrice: F.Fixed): F.Fixed {
    return sub.yesPrice ? F.sub(F.ONE, legPrice) : legPrice
  }

  private snapshot(conn: Conn, sub: Sub, ticker: string, id: number) {
    const m = this.markets.get(ticker)
    if (!m) return
    const { yes, no } = this.ladders(m)
    const noSide = sub.yesPrice ? no.map(([p, n]) => [dollars(this.noLevel(sub, f(p!))), n]).reverse() : no
    this.sendTo(conn, {
      type: "orderbook_snapshot",
      id,
      sid: sub.sid,
      seq: ++sub.seq,
      msg: { market_ticker: ticker, yes_dollars_fp: yes, no_dollars_fp: noSide }
    })
  }

  private delta(ticker: string, side: "yes" | "no", legPrice: F.Fixed, delta: F.Fixed) {
    if (delta === 0) return
    const now = this.clock()
    for (const c of this.connections)
      for (const s of c.subs) {
        if (s.channel !== "orderbook_delta" || !s.tickers.has(ticker)) continue
        s.seq += 1
        if (this.dropDeltas > 0) {
          this.dropDeltas -= 1
          continue
        }
        const price = side === "no" ? this.noLevel(s, legPrice) : legPrice
        this.sendTo(c, {
          type: "orderbook_delta",
          sid: s.sid,
          seq: s.seq,
          msg: { market_ticker: ticker, price_dollars: dollars(price), delta_fp: count(delta), side, ts_ms: now }
        })
      }
  }

  private pushOrder(o: FakeOrder) {
    this.push("user_orders", o.ticker, { type: "user_order", msg: this.orderRecord(o) })
  }

  private push(channel: string, _ticker: string, message: { type: string; msg: unknown }) {
    for (const c of this.connections)
      for (const s of c.subs) if (s.channel === channel) this.sendTo(c, { ...message, sid: s.sid })
  }
}

/** A started fake exchange for the scope; `tune` sets it up before it starts (its ping interval…). */
export const fakeKalshi = (
  publicKey: KeyObject,
  specs: ReadonlyArray<FakeMarketSpec>,
  tune: (fake: FakeKalshi) => void = () => {}
) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const fake = new FakeKalshi(publicKey, specs)
      tune(fake)
      await fake.start()
      return fake
    }),
    (fake) => Effect.promise(() => fake.stop())
  )

/** The venue's settings pointed at a fake exchange, trading with the key whose public half the fake holds. */
export const tradingConfig = (fake: FakeKalshi, privateKeyPem: string) =>
  Either.getOrThrow(
    configFromEnv({
      KALSHI_API_URL: fake.apiUrl,
      KALSHI_WS_URL: fake.wsUrl,
      KALSHI_API_KEY_ID: "k",
      KALSHI_PRIVATE_KEY: privateKeyPem
    })
  )

/** A resting buy of 5 at 0.30 on KXA-1, with what a test changes. */
export const orderOn = (over: Partial<PlaceOrderRequest>): PlaceOrderRequest => ({
  clientOrderId: "c",
  nativeId: "KXA-1",
  side: "buy",
  price: F.of("0.3"),
  amount: F.of("5"),
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  expiresAt: null,
  ...over
})
