/** Polymarket's WebSocket channels: the market channel's books kept per token, the user channel's orders and trades. */
import { Duration, Effect, Either, Schedule, Schema, type Scope } from "effect"
import WebSocket from "ws"
import * as F from "../../Domain/Fixed.ts"
import type { Book } from "../../Domain/Market.ts"
import { ClobBook, decode, Decimal, sortLevels, venueMs } from "./Wire.ts"

// ---------------------------------------------------------------------------------------------- market channel

const BookMessage = Schema.extend(ClobBook, Schema.Struct({ event_type: Schema.Literal("book") }))

export const PriceChangeEntry = Schema.Struct({
  asset_id: Schema.String,
  price: Decimal,
  /** The level's new aggregate size (0 removes it), not a difference. */
  size: Decimal,
  side: Schema.Literal("BUY", "SELL"),
  hash: Schema.optional(Schema.String),
  best_bid: Schema.optional(Schema.NullOr(Schema.String)),
  best_ask: Schema.optional(Schema.NullOr(Schema.String))
})
export type PriceChangeEntry = typeof PriceChangeEntry.Type

const PriceChangeMessage = Schema.Struct({
  event_type: Schema.Literal("price_change"),
  market: Schema.String,
  timestamp: Schema.Union(Schema.String, Schema.Number),
  price_changes: Schema.Array(PriceChangeEntry)
})

const TickSizeChangeMessage = Schema.Struct({
  event_type: Schema.Literal("tick_size_change"),
  market: Schema.String,
  asset_id: Schema.String,
  old_tick_size: Decimal,
  new_tick_size: Decimal,
  timestamp: Schema.Union(Schema.String, Schema.Number)
})

const LastTradePriceMessage = Schema.Struct({
  event_type: Schema.Literal("last_trade_price"),
  market: Schema.String,
  asset_id: Schema.String,
  price: Decimal,
  size: Decimal,
  side: Schema.Literal("BUY", "SELL"),
  timestamp: Schema.Union(Schema.String, Schema.Number),
  transaction_hash: Schema.optional(Schema.String)
})

/** A market resolved (sent with `custom_feature_enabled`): the winning token and outcome. */
const MarketResolvedMessage = Schema.Struct({
  event_type: Schema.Literal("market_resolved"),
  market: Schema.String,
  winning_asset_id: Schema.String,
  winning_outcome: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.Union(Schema.String, Schema.Number))
})

export const MarketMessage = Schema.Union(
  BookMessage,
  PriceChangeMessage,
  TickSizeChangeMessage,
  LastTradePriceMessage,
  MarketResolvedMessage
)
export type MarketMessage = typeof MarketMessage.Type

/**
 * The messages of one text frame of a channel: a frame is one message or an array of them; "PONG" and kinds not in
 * `kinds` give nothing; a message of those kinds that `schema` cannot read is returned in `bad` with the reason.
 */
const parseFrame = <A>(
  text: string,
  kinds: ReadonlySet<string>,
  schema: Schema.Schema<A, any>
): { readonly messages: Array<A>; readonly bad: Array<string> } => {
  const messages: Array<A> = []
  const bad: Array<string> = []
  const trimmed = text.trim()
  if (trimmed === "" || trimmed === "PONG" || trimmed === "PING") return { messages, bad }
  let json: unknown
  try {
    json = JSON.parse(trimmed)
  } catch {
    return { messages, bad: [`not JSON: ${trimmed.slice(0, 80)}`] }
  }
  for (const m of Array.isArray(json) ? json : [json]) {
    const kind = typeof m === "object" && m !== null ? (m as Record<string, unknown>)["event_type"] : undefined
    if (typeof kind !== "string" || !kinds.has(kind)) continue
    const r = decode(schema)(m)
    if (Either.isRight(r)) messages.push(r.right)
    else bad.push(`${kind}: ${r.left}`)
  }
  return { messages, bad }
}

const MARKET_KINDS: ReadonlySet<string> = new Set([
  "book",
  "price_change",
  "tick_size_change",
  "last_trade_price",
  "market_resolved"
])

/** The messages of one text frame of the market channel (see {@link parseFrame}). */
export const parseMarketFrame = (text: string) => parseFrame(text, MARKET_KINDS, MarketMessage)

/** One token's book as the channel leaves it: levels by price, with the venue's time of the last change. */
export class TokenBook {
  readonly bids = new Map<number, number>()
  readonly asks = new Map<number, number>()
  ts = 0

  snapshot(levels: {
    readonly bids: ReadonlyArray<{ price: number; size: number }>
    readonly asks: ReadonlyArray<{ price: number; size: number }>
    readonly ts: number
  }): void {
    this.bids.clear()
    this.asks.clear()
    for (const l of levels.bids) if (l.size > 0) this.bids.set(l.price, l.size)
    for (const l of levels.asks) if (l.size > 0) this.asks.set(l.price, l.size)
    this.ts = levels.ts
  }

  /** Sets a level's aggregate size: BUY is a bid, SELL an ask; size 0 removes the level. */
  set(side: "BUY" | "SELL", price: number, size: number, ts: number): void {
    const levels = side === "BUY" ? this.bids : this.asks
    if (size > 0) levels.set(price, size)
    else levels.delete(price)
    this.ts = Math.max(this.ts, ts)
  }

  bestBid(): F.Fixed | null {
    let best: number | null = null
    for (const p of this.bids.keys()) if (best === null || p > best) best = p
    return best as F.Fixed | null
  }

  bestAsk(): F.Fixed | null {
    let best: number | null = null
    for (const p of this.asks.keys()) if (best === null || p < best) best = p
    return best as F.Fixed | null
  }

  /** The book best first. */
  toBook(): Book {
    const levels = (m: Map<number, number>) => [...m.entries()].map(([price, size]) => ({ price, size }))
    return { ts: this.ts, bids: sortLevels(levels(this.bids), "bids"), asks: sortLevels(levels(this.asks), "asks") }
  }
}

/** A stated best price ("0" bid / "1" ask / "" mean none) as a price or null; undefined when unreadable. */
export const statedBest = (x: string | null | undefined): F.Fixed | null | undefined => {
  if (x === undefined) return undefined
  if (x === null || x === "") return null
  const v = F.parse(x)
  if (v === undefined) return undefined
  return v <= 0 || v >= F.ONE ? null : v
}

/** What applying one message changed. */
export type BookUpdate =
  | { readonly _tag: "Book"; readonly assetId: string; readonly ts: number }
  | { readonly _tag: "Tick"; readonly assetId: string; readonly tick: F.Fixed; readonly ts: number }
  | {
      readonly _tag: "Trade"
      readonly assetId: string
      readonly price: F.Fixed
      readonly size: F.Fixed
      readonly side: "BUY" | "SELL"
      readonly ts: number
    }
  | { readonly _tag: "Resolved"; readonly market: string; readonly winner: string; readonly ts: number }

/** The books of every token the channel reports, kept from `book` snapshots and `price_change` entries. */
export class MarketBooks {
  readonly books = new Map<string, TokenBook>()
  readonly ticks = new Map<string, F.Fixed>()

  book(assetId: string): TokenBook | undefined {
    return this.books.get(assetId)
  }

  /** Forgets every book: after a reconnect nothing is trusted until a fresh `book` arrives. */
  clear(): void {
    this.books.clear()
  }

  /** Applies one message; a change for a token without a snapshot yet is dropped (the snapshot will carry it). */
  apply(m: MarketMessage): Array<BookUpdate> {
    switch (m.event_type) {
      case "book": {
        const b = this.books.get(m.asset_id) ?? new TokenBook()
        b.snapshot({ bids: m.bids, asks: m.asks, ts: venueMs(m.timestamp) })
        this.books.set(m.asset_id, b)
        if (m.tick_size !== undefined) this.ticks.set(m.asset_id, m.tick_size as F.Fixed)
        return [{ _tag: "Book", assetId: m.asset_id, ts: b.ts }]
      }
      case "price_change": {
        const ts = venueMs(m.timestamp)
        const out: Array<BookUpdate> = []
        for (const e of m.price_changes) {
          const b = this.books.get(e.asset_id)
          if (b === undefined) continue
          b.set(e.side, e.price, e.size, ts)
          if (!out.some((u) => u._tag === "Book" && u.assetId === e.asset_id))
            out.push({ _tag: "Book", assetId: e.asset_id, ts })
        }
        return out
      }
      case "tick_size_change": {
        this.ticks.set(m.asset_id, m.new_tick_size as F.Fixed)
        return [{ _tag: "Tick", assetId: m.asset_id, tick: m.new_tick_size as F.Fixed, ts: venueMs(m.timestamp) }]
      }
      case "last_trade_price":
        return [
          {
            _tag: "Trade",
            assetId: m.asset_id,
            price: m.price as F.Fixed,
            size: m.size as F.Fixed,
            side: m.side,
            ts: venueMs(m.timestamp)
          }
        ]
      case "market_resolved":
        return [{ _tag: "Resolved", market: m.market, winner: m.winning_asset_id, ts: venueMs(m.timestamp ?? 0) }]
    }
  }
}

// ---------------------------------------------------------------------------------------------- user channel

/** An own order's change on the user channel. */
export const UserOrderMessage = Schema.Struct({
  event_type: Schema.Literal("order"),
  id: Schema.String,
  market: Schema.String,
  asset_id: Schema.String,
  side: Schema.Literal("BUY", "SELL"),
  price: Decimal,
  original_size: Decimal,
  size_matched: Decimal,
  /** PLACEMENT, UPDATE (a fill) or CANCELLATION. */
  type: Schema.String,
  status: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.Union(Schema.String, Schema.Number))
})
export type UserOrderMessage = typeof UserOrderMessage.Type

export const MakerOrder = Schema.Struct({
  order_id: Schema.String,
  asset_id: Schema.String,
  matched_amount: Decimal,
  price: Decimal,
  outcome: Schema.optional(Schema.String),
  owner: Schema.optional(Schema.String),
  fee_rate_bps: Schema.optional(Schema.Union(Schema.String, Schema.Number))
})
export type MakerOrder = typeof MakerOrder.Type

/** A trade touching an own order: `MATCHED`, then `MINED`/`CONFIRMED`, or `RETRYING`/`FAILED`. */
export const UserTradeMessage = Schema.Struct({
  event_type: Schema.Literal("trade"),
  id: Schema.String,
  market: Schema.String,
  asset_id: Schema.String,
  side: Schema.Literal("BUY", "SELL"),
  price: Decimal,
  size: Decimal,
  status: Schema.String,
  taker_order_id: Schema.String,
  maker_orders: Schema.Array(MakerOrder),
  trader_side: Schema.optional(Schema.Literal("TAKER", "MAKER")),
  fee_rate_bps: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  owner: Schema.optional(Schema.String),
  timestamp: Schema.optional(Schema.Union(Schema.String, Schema.Number)),
  matchtime: Schema.optional(Schema.Union(Schema.String, Schema.Number))
})
export type UserTradeMessage = typeof UserTradeMessage.Type

export const UserMessage = Schema.Union(UserOrderMessage, UserTradeMessage)
export type UserMessage = typeof UserMessage.Type

const USER_KINDS: ReadonlySet<string> = new Set(["order", "trade"])

/** The messages of one user-channel frame (one message or an array), as for the market channel. */
export const parseUserFrame = (text: string) => parseFrame(text, USER_KINDS, UserMessage)

// ---------------------------------------------------------------------------------------------- the socket

/** How a channel connection behaves: the keep-alive and the reconnect backoff. */
export interface ChannelOptions {
  readonly pingEvery: Duration.DurationInput
  /** A connection that hears nothing (no message, no PONG) for this long is dropped and opened again. */
  readonly staleAfter: Duration.DurationInput
  readonly backoffFirst: Duration.DurationInput
  readonly backoffMax: Duration.DurationInput
  /** The clock the silence is measured on (ms). */
  readonly now: () => number
}

export const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  pingEvery: Duration.seconds(10),
  staleAfter: Duration.seconds(20),
  backoffFirst: Duration.millis(250),
  backoffMax: Duration.seconds(30),
  now: () => performance.timeOrigin + performance.now()
}

/** One connection's life: opened, each text frame, closed (with why). */
export interface ChannelHandlers {
  /** Called on every (re)connect, before any frame; returns the subscription to send. */
  readonly onOpen: () => unknown
  readonly onFrame: (text: string) => void
  readonly onClose: (reason: string) => void
  /** The connection was silent past `staleAfter` (ms since it last heard anything) and is being dropped. */
  readonly onStale?: (silentMs: number) => void
  /** Anything was heard (a frame or a PONG), at this time. */
  readonly onHeard?: (at: number) => void
}

/** One connection until it closes or fails: sends the subscription, PINGs on a timer, hands frames on. */
const connectOnce = (url: string, handlers: ChannelHandlers, options: ChannelOptions): Effect.Effect<void, string> =>
  Effect.async<void, string>((resume) => {
    const ws = new WebSocket(url)
    let ping: ReturnType<typeof setInterval> | undefined
    let opened = false
    let heard = options.now()
    const staleMs = Duration.toMillis(options.staleAfter)
    ws.on("open", () => {
      opened = true
      heard = options.now()
      ws.send(JSON.stringify(handlers.onOpen()))
      const every = Math.min(Duration.toMillis(options.pingEvery), Math.max(10, Math.floor(staleMs / 4)))
      let sinceLastPing = 0
      ping = setInterval(() => {
        const silent = options.now() - heard
        if (silent > staleMs) {
          handlers.onStale?.(silent)
          ws.terminate()
          return
        }
        sinceLastPing += every
        if (sinceLastPing >= Duration.toMillis(options.pingEvery) && ws.readyState === WebSocket.OPEN) {
          sinceLastPing = 0
          ws.send("PING")
        }
      }, every)
    })
    ws.on("message", (data, isBinary) => {
      heard = options.now()
      handlers.onHeard?.(heard)
      if (!isBinary) handlers.onFrame(data.toString())
    })
    let finished = false
    const finish = (reason: string) => {
      if (ping !== undefined) clearInterval(ping)
      ping = undefined
      if (finished) return
      finished = true
      handlers.onClose(reason)
      resume(Effect.fail(opened ? `closed: ${reason}` : `could not connect: ${reason}`))
    }
    ws.on("error", (e) => {
      finish(e.message)
      ws.terminate()
    })
    ws.on("close", (code) => finish(`code ${code}`))
    return Effect.sync(() => {
      if (ping !== undefined) clearInterval(ping)
      ws.removeAllListeners()
      ws.on("error", () => {})
      ws.terminate()
    })
  })

/**
 * Keeps a channel connected for as long as the scope lasts, reconnecting with capped exponential backoff. The
 * venue sends no sequence numbers: `onOpen` runs on every reconnect so the caller drops what it held and resubscribes,
 * and the fresh `book` messages that follow are the resync.
 */
export const runChannel = (
  url: string,
  handlers: ChannelHandlers,
  given: Partial<ChannelOptions> = {}
): Effect.Effect<void, never, Scope.Scope> => {
  const options: ChannelOptions = { ...DEFAULT_CHANNEL_OPTIONS, ...given }
  return connectOnce(url, handlers, options).pipe(
    Effect.retry(
      Schedule.exponential(options.backoffFirst).pipe(
        Schedule.modifyDelay((d) => Duration.min(d, Duration.decode(options.backoffMax)))
      )
    ),
    Effect.ignore,
    // the first placement opens the user channel from inside the desk's uninterruptible region: the connection
    // must still end with its scope
    Effect.interruptible,
    Effect.forkScoped,
    Effect.asVoid
  )
}

/** The market channel's subscription for a set of tokens. */
export const marketSubscription = (assetIds: ReadonlyArray<string>) => ({
  assets_ids: assetIds,
  type: "market",
  custom_feature_enabled: true
})

/** A later subscription on an open market channel. */
export const marketSubscribe = (assetIds: ReadonlyArray<string>) => ({ assets_ids: assetIds, operation: "subscribe" })

/** The user channel's subscription, authenticated with the L2 credentials. */
export const userSubscription = (
  creds: { readonly key: string; readonly secret: string; readonly passphrase: string },
  markets: ReadonlyArray<string>
) => ({
  auth: { apiKey: creds.key, secret: creds.secret, passphrase: creds.passphrase },
  markets,
  type: "user"
})

// ---------------------------------------------------------------------------------------------- own fills

/** What we know of an own order: enough to turn the venue's token trade into a fill on our YES leg. */
export interface OwnOrder {
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: "buy" | "sell"
  /** The order rests on the NO token (a `sell` placed as a BUY of NO at 1 − p). */
  readonly onNoToken: boolean
}

/** One own fill in our terms: YES price, shares, and which trade and order it came from. */
export interface OwnFill {
  readonly tradeId: string
  readonly venueOrderId: string
  readonly own: OwnOrder
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly liquidity: "maker" | "taker"
  readonly ts: number
  /** The token price the leg traded at, and the fee rate (bps) the venue applied to it. */
  readonly tokenPrice: F.Fixed
  readonly feeRateBps: number
}

const bps = (x: string | number | undefined): number => {
  const n = typeof x === "number" ? x : x === undefined ? 0 : Number(x)
  return Number.isFinite(n) && n > 0 ? n : 0
}

/** A trade's time in ms, whether the venue gave it in seconds or in ms. */
export const tradeMs = (x: string | number): number => {
  const raw = venueMs(x)
  return raw < 1e12 ? raw * 1000 : raw
}

/** A trade as the venue reports it (user channel or `GET /data/trades`): what its own legs are read from. */
export interface TradeLegs<M extends MakerOrder> {
  readonly id: string
  readonly taker_order_id: string
  readonly price: number
  readonly size: number
  readonly fee_rate_bps?: string | number | undefined
  readonly maker_orders: ReadonlyArray<M>
}

/**
 * The own legs of one trade as fills on our YES leg: the taker's when `taker` gives its order, then each maker's that
 * `maker` gives. A leg on the NO token is priced at 1 − its token price.
 */
export const ownLegs = <M extends MakerOrder>(
  t: TradeLegs<M>,
  ts: number,
  taker: () => OwnOrder | undefined,
  maker: (m: M) => OwnOrder | undefined
): Array<OwnFill> => {
  const leg = (
    orderId: string,
    own: OwnOrder,
    price: number,
    size: number,
    liquidity: "maker" | "taker",
    rate: string | number | undefined
  ): OwnFill => ({
    tradeId: `${t.id}:${orderId}`,
    venueOrderId: orderId,
    own,
    price: (own.onNoToken ? F.ONE - price : price) as F.Fixed,
    amount: size as F.Fixed,
    liquidity,
    ts,
    tokenPrice: price as F.Fixed,
    feeRateBps: bps(rate)
  })
  const takerOrder = taker()
  const legs: Array<OwnFill> =
    takerOrder === undefined ? [] : [leg(t.taker_order_id, takerOrder, t.price, t.size, "taker", t.fee_rate_bps)]
  for (const m of t.maker_orders) {
    const o = maker(m)
    if (o !== undefined) legs.push(leg(m.order_id, o, m.price, m.matched_amount, "maker", m.fee_rate_bps))
  }
  return legs
}

/** What a trade update means for the ledger: a new fill, or the reversal of one counted before. */
export type FillChange =
  { readonly _tag: "Fill"; readonly fill: OwnFill } | { readonly _tag: "Reversed"; readonly fill: OwnFill }

/**
 * Counts each own fill once. A trade is `MATCHED` first and later `MINED`/`CONFIRMED` (or `RETRYING`, then
 * `FAILED`): the fill is counted at the first status that is not `FAILED` and never again; a `FAILED` trade
 * reverses the fills it had counted.
 */
export class OwnFills {
  private readonly counted = new Map<string, OwnFill>()
  private readonly reversed = new Set<string>()

  constructor(private readonly own: (venueOrderId: string) => OwnOrder | undefined) {}

  apply(t: UserTradeMessage): Array<FillChange> {
    // `matchtime` is in seconds, `timestamp` in ms
    const legs = ownLegs(
      t,
      tradeMs(t.matchtime ?? t.timestamp ?? 0),
      () => this.own(t.taker_order_id),
      (m) => this.own(m.order_id)
    )
    const failed = t.status.toUpperCase() === "FAILED"
    const out: Array<FillChange> = []
    for (const leg of legs) {
      if (this.reversed.has(leg.tradeId)) continue
      const before = this.counted.get(leg.tradeId)
      if (failed) {
        this.reversed.add(leg.tradeId)
        if (before !== undefined) out.push({ _tag: "Reversed", fill: before })
      } else if (before === undefined) {
        this.counted.set(leg.tradeId, leg)
        out.push({ _tag: "Fill", fill: leg })
      }
    }
    return out
  }
}
