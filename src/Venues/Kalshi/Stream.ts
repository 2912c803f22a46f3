/** Kalshi's WebSocket: the protocol (commands, books with per-subscription `seq`, own orders and fills) and a connection that reconnects and notices silence. */
import { Duration, Effect, Either, Fiber, Queue, Ref, type Scope } from "effect"
import WebSocket from "ws"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Side, Trade } from "../../Domain/Market.ts"
import type { StreamStatus, VenueFill, VenueOrder } from "../../Services/VenueGateway.ts"
import { countField, LadderBook, ladderField, priceField, Sequencer } from "./Book.ts"
import * as W from "./Wire.ts"

/**
 * The channels of one account's connection: market data for the markets asked for, every market's lifecycle (the
 * venue takes no ticker filter on it), and the account's own.
 */
export const MARKET_CHANNELS = ["orderbook_delta", "ticker", "trade"] as const
export const LIFECYCLE_CHANNEL = "market_lifecycle_v2" as const
export const PRIVATE_CHANNELS = ["fill", "user_orders", "market_positions"] as const
export type Channel = (typeof MARKET_CHANNELS)[number] | typeof LIFECYCLE_CHANNEL | (typeof PRIVATE_CHANNELS)[number]

/** Channel errors the venue documents as terminal: the subscription is gone and must be made again. */
export const TERMINAL_ERROR_CODES: ReadonlySet<number> = new Set([10, 25])

/** A command to the venue, as the asyncapi document describes it. */
export type Command =
  | {
      readonly id: number
      readonly cmd: "subscribe"
      readonly params: {
        readonly channels: ReadonlyArray<Channel>
        readonly market_tickers?: ReadonlyArray<string>
        readonly use_yes_price?: boolean
      }
    }
  | {
      readonly id: number
      readonly cmd: "update_subscription"
      readonly params: {
        readonly sid: number
        readonly market_tickers: ReadonlyArray<string>
        readonly action: "add_markets" | "delete_markets" | "get_snapshot"
      }
    }
  | { readonly id: number; readonly cmd: "unsubscribe"; readonly params: { readonly sids: ReadonlyArray<number> } }

/** What the stream tells the venue adapter. */
export type StreamOutput =
  | { readonly _tag: "Book"; readonly ticker: string; readonly book: Book }
  /** Messages of one subscription were lost: every market of it is asked for a fresh snapshot (books channel). */
  | {
      readonly _tag: "Gap"
      readonly channel: string
      readonly sid: number
      readonly tickers: ReadonlyArray<string>
      readonly expected: number
      readonly got: number
    }
  | {
      readonly _tag: "Ticker"
      readonly ticker: string
      readonly bid: F.Fixed | null
      readonly ask: F.Fixed | null
      readonly ts: number
    }
  | { readonly _tag: "Trade"; readonly ticker: string; readonly trade: Trade }
  | { readonly _tag: "Fill"; readonly fill: VenueFill }
  | { readonly _tag: "Order"; readonly order: VenueOrder }
  /** The venue reported an own order in status `unknown`: not terminal, to be read again. */
  | { readonly _tag: "OrderUnknown"; readonly orderId: string; readonly ticker: string }
  | { readonly _tag: "Position"; readonly ticker: string; readonly contracts: F.Fixed }
  | {
      readonly _tag: "Lifecycle"
      readonly ticker: string
      readonly event: string
      /** `determined`/`settled`: the result and the YES side's settlement value, when the message carries them. */
      readonly result: string | undefined
      readonly settlementValue: F.Fixed | undefined
      readonly ts: number
    }
  /** An event's fee override was set or cleared. */
  | { readonly _tag: "FeeUpdate"; readonly eventTicker: string }
  | { readonly _tag: "Subscribed"; readonly channel: string; readonly sid: number }
  /** A terminal channel error: the channel was subscribed again. */
  | { readonly _tag: "Resubscribed"; readonly channel: string; readonly code: number }
  | { readonly _tag: "VenueError"; readonly code: number | string | null; readonly message: string }
  /** A message not understood; `trading` when it was an own fill or order (what it said is to be read back). */
  | { readonly _tag: "Unreadable"; readonly type: string; readonly reason: string; readonly trading: boolean }
  | { readonly _tag: "Connected"; readonly attempt: number }
  /** Every streamed market has its fresh snapshot since the connection opened. */
  | { readonly _tag: "Fresh" }
  /** Nothing (no message, no ping) came for `silentMs`: the socket is dropped and reopened. */
  | { readonly _tag: "Stale"; readonly silentMs: number }
  | { readonly _tag: "Disconnected"; readonly reason: string; readonly retryInMs: number }

type Fields = Readonly<Record<string, unknown>>
const isRecord = (x: unknown): x is Fields => typeof x === "object" && x !== null && !Array.isArray(x)

const decodeOrder = W.decodeEither(W.KOrder)
const decodeFill = W.decodeEither(W.KFill)
const TRADING_TYPES: ReadonlySet<string> = new Set(["fill", "user_order"])

const msOf = (m: Fields, fallback: number): number => {
  const ms = m["ts_ms"]
  if (typeof ms === "number" && Number.isSafeInteger(ms)) return ms
  const s = m["ts"]
  return typeof s === "number" && Number.isSafeInteger(s) ? s * 1000 : fallback
}

const isMarketChannel = (c: string): c is (typeof MARKET_CHANNELS)[number] =>
  (MARKET_CHANNELS as ReadonlyArray<string>).includes(c)

export interface ProtocolOptions {
  /**
   * Whether the books subscription asks for YES-leg prices on the NO side (`use_yes_price`). Sent explicitly either
   * way, so a change of the venue's default never mirrors the NO side twice. Default true.
   */
  readonly yesPrice?: boolean
}

/**
 * The protocol of one connection, without I/O: the commands to send, and what each incoming message means.
 * Books are kept per market ticker from `orderbook_snapshot` and `orderbook_delta`; `seq` is checked per `sid`. A
 * jump on the books subscription answers a `Gap` plus one `get_snapshot` for every market of that subscription
 * (their books are suspect until the snapshots come); a terminal channel error subscribes the channel again.
 */
export class StreamProtocol {
  private nextId = 1
  private readonly pending = new Map<number, { channels: ReadonlyArray<Channel>; tickers: ReadonlyArray<string> }>()
  private readonly sidOfChannel = new Map<string, number>()
  private readonly channelOfSid = new Map<number, string>()
  private readonly sequencer = new Sequencer()
  private readonly books = new Map<string, LadderBook>()
  /** Markets whose book waits for a snapshot (a new connection, a gap). */
  private readonly awaiting = new Set<string>()
  private readonly tickers: Array<string>
  readonly yesPrice: boolean

  constructor(
    tickers: ReadonlyArray<string>,
    private readonly privateChannels: boolean,
    options: ProtocolOptions = {}
  ) {
    this.tickers = [...new Set(tickers)]
    this.yesPrice = options.yesPrice ?? true
  }

  /** The subscriptions of a new connection: market channels for the tickers known, lifecycle, then the account's own. */
  open(): Array<Command> {
    this.pending.clear()
    this.sidOfChannel.clear()
    this.channelOfSid.clear()
    this.sequencer.clear()
    this.books.clear()
    this.awaiting.clear()
    const out: Array<Command> = []
    if (this.tickers.length > 0) {
      for (const t of this.tickers) this.awaiting.add(t)
      for (const channel of MARKET_CHANNELS) out.push(this.subscribe(channel, [...this.tickers]))
    }
    out.push(this.subscribe(LIFECYCLE_CHANNEL))
    if (this.privateChannels) for (const channel of PRIVATE_CHANNELS) out.push(this.subscribe(channel))
    return out
  }

  /**
   * Adds markets to the market channels: subscribes them when this is the first market; adds them to a subscription
   * the venue acknowledged; a subscription not acknowledged yet gets them when its acknowledgement comes.
   */
  addMarkets(tickers: ReadonlyArray<string>): Array<Command> {
    const fresh = [...new Set(tickers)].filter((t) => !this.tickers.includes(t))
    if (fresh.length === 0) return []
    const first = this.tickers.length === 0
    this.tickers.push(...fresh)
    for (const t of fresh) this.awaiting.add(t)
    if (first) return MARKET_CHANNELS.map((channel) => this.subscribe(channel, fresh))
    const out: Array<Command> = []
    for (const channel of MARKET_CHANNELS) {
      const sid = this.sidOfChannel.get(channel)
      if (sid !== undefined) out.push(this.update(sid, fresh, "add_markets"))
    }
    return out
  }

  /** The markets streamed. */
  get markets(): ReadonlyArray<string> {
    return this.tickers
  }

  /** The streamed book of a market, when a snapshot has come and no gap has made it suspect since. */
  book(ticker: string, ts: number): Book | undefined {
    return this.awaiting.has(ticker) ? undefined : this.books.get(ticker)?.book(ts)
  }

  private subscribe(channel: Channel, market_tickers?: ReadonlyArray<string>): Command {
    const id = this.nextId++
    this.pending.set(id, { channels: [channel], tickers: market_tickers ?? [] })
    const params =
      market_tickers === undefined
        ? { channels: [channel] }
        : channel === "orderbook_delta"
          ? { channels: [channel], market_tickers, use_yes_price: this.yesPrice }
          : { channels: [channel], market_tickers }
    return { id, cmd: "subscribe", params }
  }

  private update(sid: number, market_tickers: ReadonlyArray<string>, action: "add_markets" | "get_snapshot"): Command {
    return { id: this.nextId++, cmd: "update_subscription", params: { sid, market_tickers, action } }
  }

  /** Reads one incoming message (parsed JSON) received at `now`. */
  receive(message: unknown, now: number): { readonly outputs: Array<StreamOutput>; readonly commands: Array<Command> } {
    const outputs: Array<StreamOutput> = []
    const commands: Array<Command> = []
    if (!isRecord(message))
      return {
        outputs: [{ _tag: "Unreadable", type: "unknown", reason: "not an object", trading: false }],
        commands
      }
    const type = typeof message["type"] === "string" ? message["type"] : "unknown"
    const m = message["msg"]
    const unreadable = (reason: string) =>
      outputs.push({ _tag: "Unreadable", type, reason, trading: TRADING_TYPES.has(type) })
    if (!isRecord(m)) {
      unreadable("no msg object")
      return { outputs, commands }
    }
    const sid = typeof message["sid"] === "number" ? message["sid"] : undefined
    const seq = typeof message["seq"] === "number" ? message["seq"] : undefined
    const ticker = typeof m["market_ticker"] === "string" ? m["market_ticker"] : undefined
    /** Whether the message is in sequence; a jump is a gap of its whole subscription. */
    const inSequence = (): boolean => {
      if (sid === undefined || seq === undefined) return true
      const gap = this.sequencer.next(sid, seq)
      if (gap === undefined) return true
      const channel = this.channelOfSid.get(sid) ?? type
      const tickers = channel === "orderbook_delta" ? [...this.tickers] : []
      outputs.push({ _tag: "Gap", channel, sid, tickers, ...gap })
      if (tickers.length > 0) {
        for (const t of tickers) this.awaiting.add(t)
        commands.push(this.update(sid, tickers, "get_snapshot"))
      }
      return false
    }
    switch (type) {
      case "subscribed": {
        const channel = m["channel"]
        const s = m["sid"]
        if (typeof channel === "string" && typeof s === "number") {
          this.sidOfChannel.set(channel, s)
          this.channelOfSid.set(s, channel)
          outputs.push({ _tag: "Subscribed", channel, sid: s })
          const id = message["id"]
          const asked = typeof id === "number" ? this.pending.get(id) : undefined
          if (typeof id === "number") this.pending.delete(id)
          // markets added while the venue had not acknowledged the subscription yet
          if (isMarketChannel(channel)) {
            const carried = new Set(asked?.tickers ?? this.tickers)
            const missing = this.tickers.filter((t) => !carried.has(t))
            if (missing.length > 0) commands.push(this.update(s, missing, "add_markets"))
          }
        } else unreadable("no channel or sid")
        break
      }
      case "orderbook_snapshot": {
        const yes = ladderField(m, "yes")
        const no = ladderField(m, "no")
        if (ticker === undefined || yes === undefined || no === undefined) {
          unreadable("no ticker or unreadable levels")
          break
        }
        if (sid !== undefined && seq !== undefined) this.sequencer.next(sid, seq)
        const book = this.books.get(ticker) ?? new LadderBook()
        book.snapshot(yes, no, this.yesPrice)
        this.books.set(ticker, book)
        const wasAwaiting = this.awaiting.delete(ticker)
        outputs.push({ _tag: "Book", ticker, book: book.book(now) })
        if (wasAwaiting && this.awaiting.size === 0) outputs.push({ _tag: "Fresh" })
        break
      }
      case "orderbook_delta": {
        const price = priceField(m, "price_dollars", "price")
        const delta = countField(m, "delta_fp", "delta")
        const side = m["side"]
        if (ticker === undefined || price === undefined || delta === undefined || (side !== "yes" && side !== "no")) {
          unreadable("no ticker, price, delta or side")
          break
        }
        const ok = inSequence()
        const book = this.books.get(ticker)
        if (book === undefined) break
        book.change(side, price, delta, this.yesPrice)
        // a gap leaves the books suspect: each is published again once its fresh snapshot comes
        if (ok && !this.awaiting.has(ticker)) outputs.push({ _tag: "Book", ticker, book: book.book(msOf(m, now)) })
        break
      }
      case "ticker": {
        const bid = priceField(m, "yes_bid_dollars", "yes_bid")
        const ask = priceField(m, "yes_ask_dollars", "yes_ask")
        if (ticker === undefined || bid === undefined || ask === undefined) {
          unreadable("no ticker or yes bid/ask")
          break
        }
        outputs.push({
          _tag: "Ticker",
          ticker,
          bid: bid <= 0 || bid >= F.ONE ? null : bid,
          ask: ask <= 0 || ask >= F.ONE ? null : ask,
          ts: msOf(m, now)
        })
        break
      }
      case "trade": {
        const price = priceField(m, "yes_price_dollars", "yes_price")
        const amount = countField(m, "count_fp", "count")
        const outcome = m["taker_outcome_side"] ?? m["taker_side"]
        const bookSide = m["taker_book_side"]
        const takerSide: Side | undefined =
          outcome === "yes" || bookSide === "bid" ? "buy" : outcome === "no" || bookSide === "ask" ? "sell" : undefined
        const id = m["trade_id"]
        if (
          ticker === undefined ||
          price === undefined ||
          amount === undefined ||
          takerSide === undefined ||
          typeof id !== "string"
        ) {
          unreadable("no ticker, price, count, taker side or id")
          break
        }
        inSequence()
        outputs.push({ _tag: "Trade", ticker, trade: { id, ts: msOf(m, now), price, amount, takerSide } })
        break
      }
      case "fill": {
        const fill = Either.flatMap(decodeFill(m), W.toFill)
        if (Either.isLeft(fill)) unreadable(fill.left)
        else outputs.push({ _tag: "Fill", fill: fill.right })
        break
      }
      case "user_order": {
        if (m["status"] === "unknown" && typeof m["order_id"] === "string") {
          outputs.push({
            _tag: "OrderUnknown",
            orderId: m["order_id"],
            ticker: typeof m["ticker"] === "string" ? m["ticker"] : ""
          })
          break
        }
        const order = Either.flatMap(decodeOrder(m), (o) => W.toOrder(o, now))
        if (Either.isLeft(order)) unreadable(order.left)
        else outputs.push({ _tag: "Order", order: order.right })
        break
      }
      case "market_position": {
        const contracts = countField(m, "position_fp", "position")
        if (ticker === undefined || contracts === undefined) unreadable("no ticker or position")
        else outputs.push({ _tag: "Position", ticker, contracts })
        break
      }
      case "market_lifecycle_v2": {
        const event = m["event_type"]
        if (ticker === undefined || typeof event !== "string") {
          unreadable("no ticker or event_type")
          break
        }
        inSequence()
        const value = typeof m["settlement_value"] === "string" ? F.parse(m["settlement_value"]) : undefined
        const ts =
          typeof m["settled_ts"] === "number"
            ? m["settled_ts"] * 1000
            : typeof m["determination_ts"] === "number"
              ? m["determination_ts"] * 1000
              : now
        outputs.push({
          _tag: "Lifecycle",
          ticker,
          event,
          result: typeof m["result"] === "string" ? m["result"] : undefined,
          settlementValue: value,
          ts
        })
        break
      }
      case "event_fee_update": {
        inSequence()
        const event = m["event_ticker"]
        if (typeof event === "string") outputs.push({ _tag: "FeeUpdate", eventTicker: event })
        else unreadable("no event_ticker")
        break
      }
      case "error": {
        const code = m["code"]
        const channel = sid === undefined ? undefined : this.channelOfSid.get(sid)
        outputs.push({
          _tag: "VenueError",
          code: typeof code === "number" || typeof code === "string" ? code : null,
          message: typeof m["msg"] === "string" ? m["msg"] : JSON.stringify(m)
        })
        if (sid !== undefined && channel !== undefined && typeof code === "number" && TERMINAL_ERROR_CODES.has(code)) {
          this.sidOfChannel.delete(channel)
          this.channelOfSid.delete(sid)
          this.sequencer.forget(sid)
          const again = isMarketChannel(channel)
            ? this.tickers.length > 0
              ? this.subscribe(channel, [...this.tickers])
              : undefined
            : this.subscribe(channel as Channel)
          if (channel === "orderbook_delta") for (const t of this.tickers) this.awaiting.add(t)
          if (again !== undefined) commands.push(again)
          outputs.push({ _tag: "Resubscribed", channel, code })
        }
        break
      }
      case "ok":
      case "unsubscribed":
      case "list_subscriptions":
      case "event_lifecycle":
        break
      default:
        outputs.push({ _tag: "Unreadable", type, reason: "not a channel this adapter reads", trading: false })
    }
    return { outputs, commands }
  }
}

/** How to reach the venue's socket. */
export interface StreamOptions {
  readonly url: string
  /** Fresh handshake headers for each connection (Kalshi signs `GET` + the socket's path with a new timestamp). */
  readonly headers: Effect.Effect<Record<string, string>>
  readonly tickers: ReadonlyArray<string>
  readonly privateChannels: boolean
  /** First retry delay; doubled after each failed attempt up to `maxBackoff`. Default 250 ms. */
  readonly minBackoff?: Duration.DurationInput
  /** Default 30 s. */
  readonly maxBackoff?: Duration.DurationInput
  /**
   * A connection silent this long (no message, no ping) is stale: dropped and reopened. Default 30 s (the venue pings
   * every 10 s).
   */
  readonly idleTimeout?: Duration.DurationInput
  /** Whether the books subscription asks for YES-leg prices (`use_yes_price`). Default true. */
  readonly yesPrice?: boolean
}

/** A running connection: what it says, and the markets it may be asked to add. */
export interface StreamHandle {
  readonly outputs: Queue.Dequeue<StreamOutput>
  readonly addMarkets: (tickers: ReadonlyArray<string>) => Effect.Effect<void>
  readonly book: (ticker: string) => Effect.Effect<Book | undefined>
  /** Closes the current socket (as a network failure would); the connection reopens after its backoff. */
  readonly drop: Effect.Effect<void>
  /** The commands sent so far, in order, across connections. */
  readonly sent: Effect.Effect<ReadonlyArray<Command>>
  /** The connection's state, when it last heard the venue, and how often it reopened. */
  readonly status: Effect.Effect<StreamStatus>
  /** The markets streamed. */
  readonly markets: Effect.Effect<ReadonlyArray<string>>
}

/** The delay before attempt `n` (0-based) after a failure: min · 2ⁿ, capped. */
export const backoffMs = (n: number, minMs: number, maxMs: number): number =>
  Math.min(maxMs, minMs * 2 ** Math.min(n, 30))

/**
 * Opens the socket for as long as the scope lasts: subscribes, reads, answers gaps with `get_snapshot`, and on any
 * close reconnects with exponential backoff and subscribes again (the attempt counter restarts after a connection
 * that opened). A connection that hears nothing (no message, no ping) for the idle bound is stale: it is dropped and
 * reopened. The `ws` client answers the venue's pings with pongs itself. Times come from the Clock.
 */
export const connect = (options: StreamOptions): Effect.Effect<StreamHandle, never, Scope.Scope> =>
  Effect.gen(function* () {
    const clock = yield* Effect.clock
    const now = () => clock.unsafeCurrentTimeMillis()
    const outputs = yield* Queue.unbounded<StreamOutput>()
    yield* Effect.addFinalizer(() => Queue.shutdown(outputs))
    const protocol = new StreamProtocol(options.tickers, options.privateChannels, {
      ...(options.yesPrice === undefined ? {} : { yesPrice: options.yesPrice })
    })
    const current = yield* Ref.make<WebSocket | undefined>(undefined)
    const sent: Array<Command> = []
    const minMs = Duration.toMillis(options.minBackoff ?? "250 millis")
    const maxMs = Duration.toMillis(options.maxBackoff ?? "30 seconds")
    const idleMs = Duration.toMillis(options.idleTimeout ?? "30 seconds")
    const state: { value: StreamStatus["state"]; lastMessageAt: number | null; reconnects: number } = {
      value: "connecting",
      lastMessageAt: null,
      reconnects: 0
    }

    const send = (ws: WebSocket, commands: ReadonlyArray<Command>) => {
      for (const c of commands) {
        sent.push(c)
        if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(c))
      }
    }

    /** One connection, from the handshake to its close; answers whether it opened, and why it ended. */
    const once = (attempt: number) =>
      Effect.gen(function* () {
        const headers = yield* options.headers
        return yield* Effect.async<{ readonly opened: boolean; readonly reason: string }>((resume) => {
          const ws = new WebSocket(options.url, { headers, handshakeTimeout: idleMs })
          let opened = false
          let lastHeard = now()
          let watchdog: ReturnType<typeof setInterval> | undefined
          let ended: string | undefined
          const heard = () => {
            lastHeard = now()
            state.lastMessageAt = lastHeard
          }
          const done = (reason: string) => {
            if (watchdog !== undefined) clearInterval(watchdog)
            resume(Effect.succeed({ opened, reason: ended ?? reason }))
          }
          ws.on("open", () => {
            opened = true
            state.value = "live"
            Effect.runSync(Ref.set(current, ws))
            Queue.unsafeOffer(outputs, { _tag: "Connected", attempt })
            send(ws, protocol.open())
            watchdog = setInterval(
              () => {
                const silent = now() - lastHeard
                if (silent <= idleMs || ended !== undefined) return
                ended = `silent for ${silent} ms`
                state.value = "stale"
                Queue.unsafeOffer(outputs, { _tag: "Stale", silentMs: silent })
                ws.terminate()
              },
              Math.max(10, Math.floor(idleMs / 4))
            )
          })
          ws.on("ping", heard)
          ws.on("pong", heard)
          ws.on("message", (data) => {
            heard()
            let parsed: unknown
            try {
              parsed = JSON.parse(String(data))
            } catch {
              Queue.unsafeOffer(outputs, { _tag: "Unreadable", type: "unknown", reason: "not JSON", trading: false })
              return
            }
            const { outputs: out, commands } = protocol.receive(parsed, now())
            for (const o of out) Queue.unsafeOffer(outputs, o)
            send(ws, commands)
          })
          ws.on("error", () => {})
          ws.on("close", (code, reason) => done(`closed ${code}${reason.length > 0 ? ` ${String(reason)}` : ""}`))
          return Effect.sync(() => {
            if (watchdog !== undefined) clearInterval(watchdog)
            ws.removeAllListeners("close")
            ws.on("error", () => {})
            ws.terminate()
          })
        })
      })

    const loop = Effect.gen(function* () {
      let failures = 0
      let attempt = 0
      for (;;) {
        const { opened, reason } = yield* once(attempt++)
        yield* Ref.set(current, undefined)
        failures = opened ? 0 : failures + 1
        if (state.value !== "stale") state.value = failures > 1 ? "down" : "connecting"
        state.reconnects += 1
        const wait = opened ? minMs : backoffMs(failures - 1, minMs, maxMs)
        Queue.unsafeOffer(outputs, { _tag: "Disconnected", reason, retryInMs: wait })
        yield* Effect.sleep(Duration.millis(wait))
      }
    })
    const fiber = yield* Effect.forkScoped(loop)
    yield* Effect.addFinalizer(() => Fiber.interrupt(fiber))

    return {
      outputs,
      addMarkets: (tickers) =>
        Effect.flatMap(Ref.get(current), (ws) =>
          Effect.sync(() => {
            const commands = protocol.addMarkets(tickers)
            if (ws !== undefined) send(ws, commands)
          })
        ),
      book: (ticker) => Effect.sync(() => protocol.book(ticker, now())),
      drop: Effect.flatMap(Ref.get(current), (ws) => Effect.sync(() => ws?.terminate())),
      sent: Effect.sync(() => [...sent]),
      markets: Effect.sync(() => [...protocol.markets]),
      status: Effect.sync(() => ({
        channel: "socket",
        state: state.value,
        lastMessageAt: state.lastMessageAt,
        reconnects: state.reconnects
      }))
    }
  })
