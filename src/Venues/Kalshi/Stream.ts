/** Kalshi's WebSocket: the protocol (commands, books with per-subscription `seq`, own orders and fills) and a connection that reconnects. */
import { Duration, Effect, Either, Fiber, Queue, Ref, type Scope } from "effect"
import WebSocket from "ws"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Side, Trade } from "../../Domain/Market.ts"
import type { VenueFill, VenueOrder } from "../../Services/VenueGateway.ts"
import { countField, LadderBook, ladderField, priceField, Sequencer } from "./Book.ts"
import * as W from "./Wire.ts"

/** The channels of one account's connection: market data for the markets asked for, and the account's own. */
export const MARKET_CHANNELS = ["orderbook_delta", "ticker", "trade", "market_lifecycle_v2"] as const
export const PRIVATE_CHANNELS = ["fill", "user_orders", "market_positions"] as const
export type Channel = (typeof MARKET_CHANNELS)[number] | (typeof PRIVATE_CHANNELS)[number]

/** A command to the venue, as the asyncapi document describes it. */
export type Command =
  | {
      readonly id: number
      readonly cmd: "subscribe"
      readonly params: { readonly channels: ReadonlyArray<Channel>; readonly market_tickers?: ReadonlyArray<string> }
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
  | {
      readonly _tag: "Gap"
      readonly ticker: string
      readonly sid: number
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
  | { readonly _tag: "Position"; readonly ticker: string; readonly contracts: F.Fixed }
  | { readonly _tag: "Lifecycle"; readonly ticker: string; readonly event: string }
  | { readonly _tag: "Subscribed"; readonly channel: string; readonly sid: number }
  | { readonly _tag: "VenueError"; readonly code: number | string | null; readonly message: string }
  | { readonly _tag: "Unreadable"; readonly type: string; readonly reason: string }
  | { readonly _tag: "Connected"; readonly attempt: number }
  | { readonly _tag: "Disconnected"; readonly reason: string; readonly retryInMs: number }

type Fields = Readonly<Record<string, unknown>>
const isRecord = (x: unknown): x is Fields => typeof x === "object" && x !== null && !Array.isArray(x)

const decodeOrder = W.decodeEither(W.KOrder)
const decodeFill = W.decodeEither(W.KFill)

const msOf = (m: Fields, fallback: number): number => {
  const ms = m["ts_ms"]
  if (typeof ms === "number" && Number.isSafeInteger(ms)) return ms
  const s = m["ts"]
  return typeof s === "number" && Number.isSafeInteger(s) ? s * 1000 : fallback
}

/**
 * The protocol of one connection, without I/O: the commands to send, and what each incoming message means.
 * Books are kept per market ticker from `orderbook_snapshot` and `orderbook_delta`; `seq` is checked per `sid`, and a
 * jump answers a `Gap` plus a `get_snapshot` command for that market (the book is suspect until the snapshot comes).
 */
export class StreamProtocol {
  private nextId = 1
  private readonly channelOfCommand = new Map<number, ReadonlyArray<Channel>>()
  private readonly sidOfChannel = new Map<string, number>()
  private readonly sequencer = new Sequencer()
  private readonly books = new Map<string, LadderBook>()
  private readonly tickers: Array<string>

  constructor(
    tickers: ReadonlyArray<string>,
    private readonly privateChannels: boolean
  ) {
    this.tickers = [...new Set(tickers)]
  }

  /** The subscriptions of a new connection: market channels for the tickers known, then the account's own. */
  open(): Array<Command> {
    this.channelOfCommand.clear()
    this.sidOfChannel.clear()
    this.sequencer.clear()
    this.books.clear()
    const out: Array<Command> = []
    if (this.tickers.length > 0) {
      for (const channel of MARKET_CHANNELS) out.push(this.subscribe([channel], [...this.tickers]))
    }
    if (this.privateChannels) for (const channel of PRIVATE_CHANNELS) out.push(this.subscribe([channel]))
    return out
  }

  /** Adds markets to the market channels (subscribing them when this is the first market). */
  addMarkets(tickers: ReadonlyArray<string>): Array<Command> {
    const fresh = tickers.filter((t) => !this.tickers.includes(t))
    if (fresh.length === 0) return []
    const first = this.tickers.length === 0
    this.tickers.push(...fresh)
    if (first) return MARKET_CHANNELS.map((channel) => this.subscribe([channel], fresh))
    const out: Array<Command> = []
    for (const channel of MARKET_CHANNELS) {
      const sid = this.sidOfChannel.get(channel)
      if (sid !== undefined)
        out.push({
          id: this.nextId++,
          cmd: "update_subscription",
          params: { sid, market_tickers: fresh, action: "add_markets" }
        })
    }
    return out
  }

  /** The markets streamed. */
  get markets(): ReadonlyArray<string> {
    return this.tickers
  }

  /** The streamed book of a market, when a snapshot has come. */
  book(ticker: string, ts: number): Book | undefined {
    return this.books.get(ticker)?.book(ts)
  }

  private subscribe(channels: ReadonlyArray<Channel>, market_tickers?: ReadonlyArray<string>): Command {
    const id = this.nextId++
    this.channelOfCommand.set(id, channels)
    return market_tickers === undefined
      ? { id, cmd: "subscribe", params: { channels } }
      : { id, cmd: "subscribe", params: { channels, market_tickers } }
  }

  /** Reads one incoming message (parsed JSON) received at `now`. */
  receive(message: unknown, now: number): { readonly outputs: Array<StreamOutput>; readonly commands: Array<Command> } {
    const outputs: Array<StreamOutput> = []
    const commands: Array<Command> = []
    if (!isRecord(message))
      return { outputs: [{ _tag: "Unreadable", type: "unknown", reason: "not an object" }], commands }
    const type = typeof message["type"] === "string" ? message["type"] : "unknown"
    const m = message["msg"]
    const unreadable = (reason: string) => outputs.push({ _tag: "Unreadable", type, reason })
    if (!isRecord(m)) {
      unreadable("no msg object")
      return { outputs, commands }
    }
    const sid = typeof message["sid"] === "number" ? message["sid"] : undefined
    const seq = typeof message["seq"] === "number" ? message["seq"] : undefined
    const ticker = typeof m["market_ticker"] === "string" ? m["market_ticker"] : undefined
    const checkSeq = (t: string): void => {
      if (sid === undefined || seq === undefined) return
      const gap = this.sequencer.next(sid, seq)
      if (gap === undefined) return
      outputs.push({ _tag: "Gap", ticker: t, sid, ...gap })
      commands.push({
        id: this.nextId++,
        cmd: "update_subscription",
        params: { sid, market_tickers: [t], action: "get_snapshot" }
      })
    }
    switch (type) {
      case "subscribed": {
        const channel = m["channel"]
        const s = m["sid"]
        if (typeof channel === "string" && typeof s === "number") {
          this.sidOfChannel.set(channel, s)
          outputs.push({ _tag: "Subscribed", channel, sid: s })
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
        book.snapshot(yes, no, false)
        this.books.set(ticker, book)
        outputs.push({ _tag: "Book", ticker, book: book.book(now) })
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
        const before = outputs.length
        checkSeq(ticker)
        const book = this.books.get(ticker)
        if (book === undefined) break
        book.change(side, price, delta, false)
        // a gap leaves the book suspect: it is published again once the fresh snapshot comes
        if (outputs.length === before) outputs.push({ _tag: "Book", ticker, book: book.book(msOf(m, now)) })
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
        checkSeq(ticker)
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
        if (ticker === undefined || typeof event !== "string") unreadable("no ticker or event_type")
        else outputs.push({ _tag: "Lifecycle", ticker, event })
        break
      }
      case "error": {
        const code = m["code"]
        outputs.push({
          _tag: "VenueError",
          code: typeof code === "number" || typeof code === "string" ? code : null,
          message: typeof m["msg"] === "string" ? m["msg"] : JSON.stringify(m)
        })
        break
      }
      case "ok":
      case "unsubscribed":
      case "list_subscriptions":
        break
      default:
        outputs.push({ _tag: "Unreadable", type, reason: "not a channel this adapter reads" })
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
  /** A connection silent this long (no message, no ping) is dropped and reopened. Default 30 s (the venue pings every 10 s). */
  readonly idleTimeout?: Duration.DurationInput
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
}

/** The delay before attempt `n` (0-based) after a failure: min · 2ⁿ, capped. */
export const backoffMs = (n: number, minMs: number, maxMs: number): number =>
  Math.min(maxMs, minMs * 2 ** Math.min(n, 30))

/**
 * Opens the socket for as long as the scope lasts: subscribes, reads, answers gaps with `get_snapshot`, and on any
 * close reconnects with exponential backoff and subscribes again (the attempt counter restarts after a connection
 * that opened). The `ws` client answers the venue's pings with pongs itself.
 */
export const connect = (options: StreamOptions): Effect.Effect<StreamHandle, never, Scope.Scope> =>
  Effect.gen(function* () {
    const outputs = yield* Queue.unbounded<StreamOutput>()
    yield* Effect.addFinalizer(() => Queue.shutdown(outputs))
    const protocol = new StreamProtocol(options.tickers, options.privateChannels)
    const current = yield* Ref.make<WebSocket | undefined>(undefined)
    const sent: Array<Command> = []
    const minMs = Duration.toMillis(options.minBackoff ?? "250 millis")
    const maxMs = Duration.toMillis(options.maxBackoff ?? "30 seconds")
    const idleMs = Duration.toMillis(options.idleTimeout ?? "30 seconds")

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
        const now = () => Date.now()
        return yield* Effect.async<{ readonly opened: boolean; readonly reason: string }>((resume) => {
          const ws = new WebSocket(options.url, { headers, handshakeTimeout: idleMs })
          let opened = false
          let lastHeard = now()
          let watchdog: ReturnType<typeof setInterval> | undefined
          const done = (reason: string) => {
            if (watchdog !== undefined) clearInterval(watchdog)
            resume(Effect.succeed({ opened, reason }))
          }
          ws.on("open", () => {
            opened = true
            Effect.runSync(Ref.set(current, ws))
            Queue.unsafeOffer(outputs, { _tag: "Connected", attempt })
            send(ws, protocol.open())
            watchdog = setInterval(
              () => {
                if (now() - lastHeard > idleMs) ws.terminate()
              },
              Math.max(10, Math.floor(idleMs / 4))
            )
          })
          ws.on("ping", () => {
            lastHeard = now()
          })
          ws.on("message", (data) => {
            lastHeard = now()
            let parsed: unknown
            try {
              parsed = JSON.parse(String(data))
            } catch {
              Queue.unsafeOffer(outputs, { _tag: "Unreadable", type: "unknown", reason: "not JSON" })
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
      book: (ticker) => Effect.sync(() => protocol.book(ticker, Date.now())),
      drop: Effect.flatMap(Ref.get(current), (ws) => Effect.sync(() => ws?.terminate())),
      sent: Effect.sync(() => [...sent])
    }
  })
