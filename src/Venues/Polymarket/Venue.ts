/** The Polymarket venue behind the VenueGateway seam: Gamma catalog, the YES token's CLOB book, signed trading. */
import type { HttpClient } from "@effect/platform"
import { Clock, Deferred, Duration, Effect, Either, Exit, PubSub, Schedule, Schema, Scope } from "effect"
import type { Address } from "viem"
import { getAddress } from "viem"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Trade } from "../../Domain/Market.ts"
import {
  capabilities,
  type HeartbeatStatus,
  type PlaceOrderRequest,
  type RemoteVenue,
  type StreamStatus,
  type Venue,
  VenueError,
  type VenueEvent,
  type VenueFill,
  type VenueOrder,
  type VenueOrderStatus
} from "../../Services/VenueGateway.ts"
import { classify, DEFAULT_HOSTS, type Hosts, type Identity, makeRest, type PolymarketRest } from "./Rest.ts"
import {
  exchangeFor,
  marketOrderAmounts,
  nearestTicks,
  type Order,
  orderAmounts,
  orderHash,
  orderJson,
  saltOf,
  type SignatureType,
  timestampOf,
  signerOf,
  signOrder,
  SIZE_STEP,
  ZERO_ADDRESS,
  ZERO_BYTES32
} from "./Signing.ts"
import {
  type ChannelHandlers,
  MakerOrder,
  MarketBooks,
  marketSubscription,
  type OwnFill,
  type OwnOrder,
  OwnFills,
  parseMarketFrame,
  parseUserFrame,
  runChannel,
  type UserOrderMessage,
  userSubscription
} from "./Stream.ts"
import {
  ClobBook,
  DataTrades,
  Decimal,
  fillFee,
  GammaMarkets,
  type PolymarketMarket,
  toBook,
  toMarket,
  toTrade,
  VENUE,
  venueMs
} from "./Wire.ts"

/** The venue's settings, read from the environment by {@link configFromEnv}. */
export interface PolymarketConfig {
  readonly hosts: Hosts
  readonly chainId: number
  readonly privateKey: string | undefined
  readonly funder: string | undefined
  readonly signatureType: SignatureType
  readonly apiKey: string | undefined
  readonly apiSecret: string | undefined
  readonly apiPassphrase: string | undefined
  readonly timeout: Duration.DurationInput
  /** How long the catalog is kept before Gamma is asked again. */
  readonly catalogTtl: Duration.DurationInput
  /** At most this many Gamma pages of 500 are read for the catalog. */
  readonly catalogPages: number
  /** How often the heartbeat is sent while an order rests (the venue cancels after about 10 s without one). */
  readonly heartbeatEvery: Duration.DurationInput
  /** How often a channel is PINGed, and how long it may stay silent (no message, no PONG) before it is reopened. */
  readonly pingEvery: Duration.DurationInput
  readonly staleAfter: Duration.DurationInput
}

const positiveInt = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number => {
  const text = env[name]
  if (text === undefined || text === "") return fallback
  if (!/^[1-9]\d*$/.test(text)) throw new Error(`${name} must be a positive whole number`)
  return Number(text)
}

/** Reads `POLYMARKET_*` settings; a malformed one is an error naming it, never a silent default. */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): PolymarketConfig => {
  const chain = env["POLYMARKET_CHAIN_ID"] ?? "137"
  if (chain !== "137" && chain !== "80002") throw new Error("POLYMARKET_CHAIN_ID must be 137 or 80002")
  // a deposit wallet (type 3) is how new accounts trade; a bare key with no funder address can only be an EOA
  const fundedBy = env["POLYMARKET_FUNDER"]
  const type = env["POLYMARKET_SIGNATURE_TYPE"] || (fundedBy !== undefined && fundedBy !== "" ? "3" : "0")
  if (!/^[0-3]$/.test(type)) throw new Error("POLYMARKET_SIGNATURE_TYPE must be 0, 1, 2 or 3")
  if (type !== "0" && (fundedBy === undefined || fundedBy === "") && env["POLYMARKET_PRIVATE_KEY"]) {
    throw new Error(`POLYMARKET_SIGNATURE_TYPE=${type} needs POLYMARKET_FUNDER, the wallet's address`)
  }
  const key = env["POLYMARKET_PRIVATE_KEY"]
  if (key !== undefined && key !== "" && !/^(0x)?[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error("POLYMARKET_PRIVATE_KEY must be 32 bytes in hex")
  }
  const nonEmpty = (name: string) => (env[name] === undefined || env[name] === "" ? undefined : env[name])
  return {
    hosts: {
      clob: nonEmpty("POLYMARKET_CLOB_URL") ?? DEFAULT_HOSTS.clob,
      gamma: nonEmpty("POLYMARKET_GAMMA_URL") ?? DEFAULT_HOSTS.gamma,
      data: nonEmpty("POLYMARKET_DATA_URL") ?? DEFAULT_HOSTS.data,
      ws: nonEmpty("POLYMARKET_WS_URL") ?? DEFAULT_HOSTS.ws
    },
    chainId: Number(chain),
    privateKey: nonEmpty("POLYMARKET_PRIVATE_KEY"),
    funder: nonEmpty("POLYMARKET_FUNDER"),
    signatureType: Number(type) as SignatureType,
    apiKey: nonEmpty("POLYMARKET_API_KEY"),
    apiSecret: nonEmpty("POLYMARKET_API_SECRET"),
    apiPassphrase: nonEmpty("POLYMARKET_API_PASSPHRASE"),
    timeout: Duration.seconds(10),
    catalogTtl: Duration.minutes(5),
    catalogPages: 20,
    heartbeatEvery: Duration.millis(positiveInt(env, "POLYMARKET_HEARTBEAT_MS", 5000)),
    pingEvery: Duration.millis(positiveInt(env, "POLYMARKET_PING_MS", 10_000)),
    staleAfter: Duration.millis(positiveInt(env, "POLYMARKET_STALE_MS", 20_000))
  }
}

/** What the venue can do: public data always, trading only with a key. */
export const polymarketCapabilities = (trading: boolean) =>
  capabilities({
    fetch_markets: true,
    search: true,
    fetch_order_book: true,
    fetch_trades: true,
    watch_order_book: true,
    create_order: trading,
    cancel_order: trading,
    cancel_all_orders: trading,
    edit_order: false,
    fetch_orders: trading,
    fetch_my_trades: trading,
    fetch_positions: false,
    fetch_balance: false,
    post_only: trading,
    reduce_only: trading ? "partial" : false,
    ioc: trading,
    fok: trading,
    market_order: trading
  })

const CredsAnswer = Schema.Struct({ apiKey: Schema.String, secret: Schema.String, passphrase: Schema.String })
const VersionAnswer = Schema.Struct({ version: Schema.Number })
const TickAnswer = Schema.Struct({ minimum_tick_size: Schema.Union(Schema.Number, Schema.String) })
const PostOrderAnswer = Schema.Struct({
  success: Schema.optional(Schema.Boolean),
  errorMsg: Schema.optional(Schema.String),
  orderID: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  makingAmount: Schema.optional(Schema.String),
  takingAmount: Schema.optional(Schema.String)
})
const OpenOrder = Schema.Struct({
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
type OpenOrder = typeof OpenOrder.Type

/** An own trade as `GET /data/trades` reports it. */
const ClobTrade = Schema.Struct({
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
type ClobTrade = typeof ClobTrade.Type

const BalanceAnswer = Schema.Struct({ balance: Schema.String })

/** A Data API position (`GET /positions?user=`): `redeemable` once its market resolved. */
const DataPositions = Schema.Array(
  Schema.Struct({
    conditionId: Schema.String,
    asset: Schema.String,
    size: Decimal,
    redeemable: Schema.optional(Schema.Boolean)
  })
)
const Canceled = Schema.Struct({ canceled: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))) })
const HeartbeatAnswer = Schema.Struct({ heartbeat_id: Schema.optional(Schema.NullOr(Schema.String)) })

const fail = (kind: VenueError["kind"], reason: string) => Effect.fail(new VenueError({ venue: VENUE, kind, reason }))

/** What we asked for, kept per venue order id: the venue knows the token, we know the YES side and client id. */
interface Placed extends OwnOrder {
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
interface Leg {
  readonly tokenId: string
  readonly venueSide: "BUY" | "SELL"
  readonly venuePrice: F.Fixed
  readonly onNoToken: boolean
}

/** Builds the Polymarket venue. Without a private key it serves public data and refuses to trade. */
export const makePolymarketVenue = (
  config: PolymarketConfig
): Effect.Effect<Venue, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function* () {
    const signer = config.privateKey === undefined ? undefined : signerOf(config.privateKey)
    const identity: Identity | undefined =
      signer === undefined
        ? undefined
        : {
            signer,
            chainId: config.chainId,
            creds:
              config.apiKey !== undefined && config.apiSecret !== undefined && config.apiPassphrase !== undefined
                ? { key: config.apiKey, secret: config.apiSecret, passphrase: config.apiPassphrase }
                : undefined
          }
    const funder: Address | undefined =
      signer === undefined ? undefined : config.funder !== undefined ? getAddress(config.funder) : signer.address
    const rest: PolymarketRest = yield* makeRest({ hosts: config.hosts, timeout: config.timeout }, identity)
    const events = yield* PubSub.unbounded<VenueEvent>()
    const venueScope = yield* Effect.scope

    // ------------------------------------------------------------------ catalog

    const byId = new Map<string, PolymarketMarket>()
    const byAlias = new Map<string, string>()
    const remember = (m: PolymarketMarket) => {
      byId.set(m.nativeId, m)
      byAlias.set(m.gammaId, m.nativeId)
      if (m.slug !== "") byAlias.set(m.slug, m.nativeId)
      return m
    }
    let catalog: { at: number; markets: ReadonlyArray<PolymarketMarket> } | undefined

    const markets = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      if (catalog !== undefined && now - catalog.at < Duration.toMillis(config.catalogTtl)) return catalog.markets
      const out: Array<PolymarketMarket> = []
      for (let page = 0; page < config.catalogPages; page++) {
        const rows = yield* rest.json(
          {
            family: "gamma",
            host: "gamma",
            method: "GET",
            path: `/markets?closed=false&limit=500&offset=${page * 500}&order=id&ascending=true`
          },
          GammaMarkets
        )
        for (const r of rows) {
          const m = toMarket(r)
          if (m !== undefined) out.push(remember(m))
        }
        if (rows.length < 500) break
      }
      out.sort((a, b) => (a.nativeId < b.nativeId ? -1 : a.nativeId > b.nativeId ? 1 : 0))
      catalog = { at: now, markets: out }
      return out
    })

    /** Ticks the venue moved since the catalog was read (`tick_size_change`, or a refusal), by YES token. */
    const ticks = new Map<string, F.Fixed>()
    const withTick = (m: PolymarketMarket): PolymarketMarket => {
      const tick = ticks.get(m.yesToken) ?? books.ticks.get(m.yesToken)
      return tick === undefined || tick === m.tick ? m : { ...m, tick }
    }

    /** A market by condition id, Gamma id or slug, with the tick the venue uses now. */
    const market = (id: string): Effect.Effect<PolymarketMarket | undefined, VenueError> =>
      Effect.map(catalogMarket(id), (m) => (m === undefined ? undefined : withTick(m)))

    const catalogMarket = (id: string): Effect.Effect<PolymarketMarket | undefined, VenueError> =>
      Effect.gen(function* () {
        const known = byId.get(id) ?? byId.get(byAlias.get(id) ?? "")
        if (known !== undefined) return known
        const query = id.startsWith("0x")
          ? `condition_ids=${encodeURIComponent(id)}`
          : /^\d+$/.test(id)
            ? `id=${id}`
            : `slug=${encodeURIComponent(id)}`
        const rows = yield* rest.json(
          { family: "gamma", host: "gamma", method: "GET", path: `/markets?${query}` },
          GammaMarkets
        )
        const found = rows.map((r) => toMarket(r)).find((m) => m !== undefined)
        return found === undefined ? undefined : remember(found)
      })

    const requireMarket = (id: string) =>
      Effect.flatMap(market(id), (m) => (m === undefined ? fail("rejected", `no market ${id}`) : Effect.succeed(m)))

    // ------------------------------------------------------------------ books: streamed when subscribed, else REST

    const books = new MarketBooks()
    /** How many open watches stream each YES token. */
    const streamed = new Map<string, number>()

    const book = (nativeId: string): Effect.Effect<Book, VenueError> =>
      Effect.gen(function* () {
        const m = yield* requireMarket(nativeId)
        const live = streamed.has(m.yesToken) ? books.book(m.yesToken) : undefined
        if (live !== undefined) return live.toBook()
        const raw = yield* rest.json(
          { family: "book", host: "clob", method: "GET", path: `/book?token_id=${m.yesToken}` },
          ClobBook
        )
        return toBook(raw, m)
      })

    const trades = (nativeId: string): Effect.Effect<ReadonlyArray<Trade>, VenueError> =>
      Effect.gen(function* () {
        const m = yield* requireMarket(nativeId)
        const rows = yield* rest.json(
          { family: "data", host: "data", method: "GET", path: `/trades?market=${m.nativeId}&limit=100` },
          DataTrades
        )
        return rows.flatMap((t) => toTrade(t, m) ?? []).sort((a, b) => b.ts - a.ts)
      })

    // ------------------------------------------------------------------ trading

    const clock = yield* Effect.clock
    const nowMs = () => clock.unsafeCurrentTimeMillis()

    const ensureCreds = Effect.gen(function* () {
      if (identity === undefined) return yield* fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY")
      if (identity.creds !== undefined) return identity.creds
      const answer = yield* rest
        .json({ family: "clob", host: "clob", method: "GET", path: "/auth/derive-api-key", auth: "l1" }, CredsAnswer)
        .pipe(
          Effect.orElse(() =>
            rest.json({ family: "clob", host: "clob", method: "POST", path: "/auth/api-key", auth: "l1" }, CredsAnswer)
          )
        )
      identity.creds = { key: answer.apiKey, secret: answer.secret, passphrase: answer.passphrase }
      return identity.creds
    })

    /** The exchange version `/version` last reported: read again whenever the venue answers `order_version_mismatch`. */
    let exchangeVersion: number | undefined
    const readVersion = Effect.gen(function* () {
      const v = yield* rest.json({ family: "clob", host: "clob", method: "GET", path: "/version" }, VersionAnswer)
      exchangeVersion = v.version
      return v.version
    })
    const version = Effect.suspend(() =>
      exchangeVersion === undefined ? readVersion : Effect.succeed(exchangeVersion)
    )
    /** A market of the venue's second protocol trades on the version-3 exchange whatever `/version` says. */
    const exchangeOf = (m: PolymarketMarket, v: number) =>
      exchangeFor(config.chainId, m.protocol === 2 ? 3 : v, m.negRisk)

    /** What we asked for, by venue order id (the order's hash), known before the order is sent. */
    const placed = new Map<string, Placed>()
    /** Orders last seen resting: while there is one, the heartbeat runs. */
    const resting = new Set<string>()
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
      fee: fillFee(f.feeRateBps, byId.get(f.own.nativeId)?.fees.exponent ?? 1, f.tokenPrice, f.amount),
      liquidity: f.liquidity,
      ts: f.ts
    })

    // ------------------------------------------------------------------ stream state

    const channels = new Map<string, StreamStatus & { opens: number }>()
    const publish = (e: VenueEvent) => Effect.runSync(PubSub.publish(events, e))
    /** Handlers that keep a channel's state and report it stale, resumed (market) or to be read back (user). */
    const tracked = (channel: string, handlers: ChannelHandlers, resyncOnReopen: boolean): ChannelHandlers => {
      channels.set(channel, { channel, state: "connecting", lastMessageAt: null, reconnects: 0, opens: 0 })
      const update = (f: (s: StreamStatus & { opens: number }) => Partial<StreamStatus & { opens: number }>) => {
        const s = channels.get(channel)
        if (s !== undefined) channels.set(channel, { ...s, ...f(s) })
      }
      return {
        onOpen: () => {
          const at = nowMs()
          const before = channels.get(channel)
          update((s) => ({
            state: "live",
            opens: s.opens + 1,
            reconnects: s.opens > 0 ? s.reconnects + 1 : 0,
            lastMessageAt: at
          }))
          const sub = handlers.onOpen()
          if (before !== undefined && before.opens > 0 && resyncOnReopen) {
            publish({ _tag: "Stream", channel, state: "resync", lastMessageAgeMs: null, ts: at })
          }
          return sub
        },
        onFrame: handlers.onFrame,
        onHeard: (at) => update(() => ({ lastMessageAt: at })),
        onStale: (silentMs) => {
          update(() => ({ state: "stale" }))
          publish({ _tag: "Stream", channel, state: "stale", lastMessageAgeMs: silentMs, ts: nowMs() })
        },
        onClose: (reason) => {
          update((s) => ({ state: s.state === "stale" ? "stale" : "connecting" }))
          handlers.onClose(reason)
        }
      }
    }
    const channelOptions = { pingEvery: config.pingEvery, staleAfter: config.staleAfter, now: nowMs }

    // own fills: counted once when matched; a failed trade is reported as a reversal
    const ownFills = new OwnFills((id) => placed.get(id))
    let userChannel = false
    /** Done once the user channel has connected: an own trade is only heard of on a subscribed channel. */
    const userOpen = yield* Deferred.make<void>()

    /** A venue-side cancel (CANCELLATION: a heartbeat lapse, an expiry, the operator) as an `Order` event. */
    const onUserOrder = (msg: UserOrderMessage) => {
      if (msg.type.toUpperCase() !== "CANCELLATION") return
      const m = byId.get(msg.market)
      const row: OpenOrder = {
        id: msg.id,
        status: "CANCELED",
        market: msg.market,
        asset_id: msg.asset_id,
        side: msg.side,
        original_size: F.format(msg.original_size as F.Fixed),
        size_matched: F.format(msg.size_matched as F.Fixed),
        price: F.format(msg.price as F.Fixed)
      }
      const p = placed.get(msg.id) ?? (m === undefined ? undefined : derive(row, m))
      if (p === undefined) return
      placed.set(msg.id, p)
      resting.delete(msg.id)
      publish({ _tag: "Order", order: fromOpenOrder(row, p, nowMs()) })
    }

    const startUserChannel = (creds: { key: string; secret: string; passphrase: string }) =>
      Effect.gen(function* () {
        if (!userChannel) {
          userChannel = true
          const handlers = tracked(
            "user",
            {
              onOpen: () => {
                Deferred.unsafeDone(userOpen, Exit.void)
                return userSubscription(creds, [])
              },
              onFrame: (text) => {
                const frame = parseUserFrame(text)
                for (const bad of frame.bad) {
                  // an own order or trade we could not read: what the venue did is to be read back
                  Effect.runSync(Effect.logWarning(`polymarket user channel: unreadable message (${bad})`))
                  publish({ _tag: "Stream", channel: "user", state: "resync", lastMessageAgeMs: null, ts: nowMs() })
                }
                for (const msg of frame.messages) {
                  if (msg.event_type === "order") {
                    onUserOrder(msg)
                    continue
                  }
                  for (const c of ownFills.apply(msg)) {
                    const fill = toFill(c.fill)
                    if (c._tag === "Reversed") {
                      Effect.runSync(
                        Effect.logWarning(`polymarket trade ${fill.tradeId} failed after it matched: reversed`)
                      )
                    }
                    publish(
                      c._tag === "Reversed"
                        ? { _tag: "FillReversed", fill, reason: "the venue reported the trade FAILED after it matched" }
                        : { _tag: "Fill", fill }
                    )
                  }
                }
              },
              onClose: () => {}
            },
            true
          )
          yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/user`, handlers, channelOptions).pipe(
            Scope.extend(venueScope)
          )
        }
        // the first placement waits a moment for the channel, so that its own fills are heard; never for long
        yield* Deferred.await(userOpen).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      })

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
        ticks.set(m.yesToken, tick)
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
        const p: Placed = {
          clientOrderId: r.clientOrderId,
          nativeId: m.nativeId,
          side: r.side,
          price: r.price,
          amount: F.roundTo(r.amount, SIZE_STEP, "down"),
          target: Number(leg.venueSide === "BUY" ? order.takerAmount : order.makerAmount) as F.Fixed,
          onNoToken: leg.onNoToken,
          tokenId: leg.tokenId,
          venueSide: leg.venueSide,
          expiresAt: order.expiration > 0n ? (Number(order.expiration) - 60) * 1000 : null
        }
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
        const venueStatus =
          filled >= p.target ? "MATCHED" : said === "delayed" ? "DELAYED" : market ? "CANCELED" : "LIVE"
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

    /** Own trades since `since` (ms), every page, FAILED ones left out. */
    const ownTrades = (since: number, marketId?: string) =>
      pages(
        `/data/trades?after=${Math.floor(since / 1000)}${marketId === undefined ? "" : `&market=${marketId}`}`,
        ClobTrade
      )

    /** The own legs of a trade the CLOB reports, as fills on our YES leg. */
    const legsOf = (t: ClobTrade, m: PolymarketMarket, key: string): Array<OwnFill> => {
      const ts = venueMs(t.match_time) < 1e12 ? venueMs(t.match_time) * 1000 : venueMs(t.match_time)
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
      const yes = (o: OwnOrder, price: number) => (o.onNoToken ? F.ONE - price : price) as F.Fixed
      const out: Array<OwnFill> = []
      if (t.trader_side === "TAKER" || placed.has(t.taker_order_id)) {
        const o = own(t.taker_order_id, t.asset_id, t.side, t.price, t.size)
        out.push({
          tradeId: `${t.id}:${t.taker_order_id}`,
          venueOrderId: t.taker_order_id,
          own: o,
          price: yes(o, t.price),
          amount: t.size as F.Fixed,
          liquidity: "taker",
          ts,
          tokenPrice: t.price as F.Fixed,
          feeRateBps: Number(t.fee_rate_bps ?? 0) || 0
        })
      }
      for (const mo of t.maker_orders) {
        const mine =
          placed.has(mo.order_id) ||
          mo.owner === key ||
          (mo.maker_address !== undefined &&
            funder !== undefined &&
            mo.maker_address.toLowerCase() === funder.toLowerCase())
        if (!mine) continue
        // a maker on the taker's token took the other side; on the other token, the same side (a mint or merge)
        const side = mo.asset_id === t.asset_id ? (t.side === "BUY" ? "SELL" : "BUY") : t.side
        const o = own(mo.order_id, mo.asset_id, side, mo.price, mo.matched_amount)
        out.push({
          tradeId: `${t.id}:${mo.order_id}`,
          venueOrderId: mo.order_id,
          own: o,
          price: yes(o, mo.price),
          amount: mo.matched_amount as F.Fixed,
          liquidity: "maker",
          ts,
          tokenPrice: mo.price as F.Fixed,
          feeRateBps: Number(mo.fee_rate_bps ?? 0) || 0
        })
      }
      return out
    }

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
            const p: Placed = {
              clientOrderId: r.clientOrderId,
              nativeId: m.nativeId,
              side: r.side,
              price: r.price,
              amount: F.roundTo(r.amount, SIZE_STEP, "down"),
              target,
              onNoToken: leg.onNoToken,
              tokenId: leg.tokenId,
              venueSide: leg.venueSide,
              expiresAt: r.timeInForce === "gtd" ? r.expiresAt : null
            }
            placed.set(o.id, p)
            signedFor.set(r.clientOrderId, o.id)
            return fromOpenOrder(o, p, yield* Clock.currentTimeMillis)
          }
        }
        return undefined
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
          remember(m)
          const ts = m.closedAt ?? now
          if (ts >= since) out.push({ nativeId: m.nativeId, payout: m.result === "yes" ? F.ONE : F.ZERO, ts })
        }
        return out.sort((a, b) => a.ts - b.ts)
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

    // ------------------------------------------------------------------ heartbeat: resting orders die without it

    let beat: HeartbeatStatus = { active: false, ok: true, lastOkAt: null, lastError: null, lastErrorAt: null }
    let heartbeatId = ""
    const sendHeartbeat = Effect.gen(function* () {
      if (resting.size === 0) {
        beat = { ...beat, active: false }
        return
      }
      const now = yield* Clock.currentTimeMillis
      yield* rest
        .json(
          {
            family: "clob",
            host: "clob",
            method: "POST",
            path: "/v1/heartbeats",
            body: { heartbeat_id: heartbeatId },
            auth: "l2"
          },
          HeartbeatAnswer
        )
        .pipe(
          Effect.matchEffect({
            onSuccess: (a) =>
              Effect.sync(() => {
                heartbeatId = a.heartbeat_id ?? heartbeatId
                beat = { ...beat, active: true, ok: true, lastOkAt: now }
              }),
            onFailure: (e) =>
              Effect.zipRight(
                Effect.sync(() => {
                  beat = { ...beat, active: true, ok: false, lastError: e.reason, lastErrorAt: now }
                }),
                Effect.logWarning(`polymarket heartbeat failed: ${e.reason}; resting orders may be canceled`)
              )
          })
        )
    })
    if (identity !== undefined) {
      yield* sendHeartbeat.pipe(Effect.repeat(Schedule.spaced(config.heartbeatEvery)), Effect.ignore, Effect.forkScoped)
    }

    // ------------------------------------------------------------------ streams

    const subscribe = Effect.gen(function* () {
      return yield* PubSub.subscribe(events)
    })

    let watches = 0
    /** Streams the YES books of these markets into the event queue, for as long as the scope lasts. */
    const watch = (nativeIds: ReadonlyArray<string>): Effect.Effect<void, VenueError, Scope.Scope> =>
      Effect.gen(function* () {
        const ms = yield* Effect.forEach(nativeIds, requireMarket)
        const byToken = new Map(ms.map((m) => [m.yesToken, m.nativeId]))
        for (const t of byToken.keys()) {
          streamed.set(t, (streamed.get(t) ?? 0) + 1)
        }
        // Let go, a token no other watch streams is read from REST again, never from a book left to go stale.
        yield* Effect.addFinalizer(() =>
          Effect.sync(() => {
            for (const t of byToken.keys()) {
              const n = streamed.get(t) ?? 0
              if (n > 1) streamed.set(t, n - 1)
              else {
                streamed.delete(t)
                books.books.delete(t)
              }
            }
          })
        )
        const channel = `market:${++watches}`
        yield* Effect.addFinalizer(() => Effect.sync(() => channels.delete(channel)))
        /** Set on a reopen: the first fresh snapshot after it says the stream resumed. */
        let reopened = false
        let opens = 0
        const handlers = tracked(
          channel,
          {
            onOpen: () => {
              if (opens++ > 0) reopened = true
              // this connection's books are trusted again only from the fresh snapshots it is about to send
              for (const t of byToken.keys()) books.books.delete(t)
              return marketSubscription([...byToken.keys()])
            },
            onFrame: (text) => {
              for (const msg of parseMarketFrame(text).messages) {
                for (const u of books.apply(msg)) {
                  if (u._tag === "Resolved") {
                    const m = byId.get(u.market)
                    if (m === undefined || !ms.some((x) => x.nativeId === m.nativeId)) continue
                    const payout = u.winner === m.yesToken ? F.ONE : F.ZERO
                    byId.set(m.nativeId, { ...m, status: "settled", result: payout === F.ONE ? "yes" : "no" })
                    catalog = undefined
                    publish({ _tag: "Settled", nativeId: m.nativeId, payout, ts: u.ts > 0 ? u.ts : nowMs() })
                    continue
                  }
                  const nativeId = byToken.get(u.assetId)
                  if (u._tag === "Book" && nativeId !== undefined) {
                    if (reopened) {
                      reopened = false
                      publish({ _tag: "Stream", channel, state: "resumed", lastMessageAgeMs: null, ts: nowMs() })
                    }
                    publish({ _tag: "Book", nativeId, ts: u.ts })
                  }
                  // Only YES tokens are subscribed: their last trade is the YES price.
                  if (u._tag === "Trade" && nativeId !== undefined) {
                    publish({ _tag: "Trade", nativeId, price: u.price, ts: u.ts })
                  }
                }
              }
            },
            // a book the socket no longer keeps is read from REST until the fresh snapshots arrive
            onClose: () => {
              for (const t of byToken.keys()) books.books.delete(t)
            }
          },
          false
        )
        yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/market`, handlers, channelOptions)
      })

    const venue: RemoteVenue<ReturnType<typeof polymarketCapabilities>> & { readonly watch: typeof watch } = {
      cancelAll,
      cancelMarket,
      heartbeat: Effect.sync(() => beat),
      streamsTrades: true,
      remote: true,
      info: {
        id: VENUE,
        name: "Polymarket",
        book_model: "yes_book",
        has: polymarketCapabilities(identity !== undefined)
      },
      accounts: identity === undefined ? [] : ["default"],
      markets,
      market,
      book,
      trades,
      placeOrder,
      cancelOrder,
      amendOrder: () => fail("not_supported", "Polymarket has no amend: cancel and place again"),
      openOrders: identity === undefined ? fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY") : openOrders,
      orderByClientId,
      orderById,
      fillsSince,
      settlementsSince,
      streams: Effect.sync(() =>
        [...channels.values()].map(({ channel, state, lastMessageAt, reconnects }) => ({
          channel,
          state,
          lastMessageAt,
          reconnects
        }))
      ),
      subscribe,
      watch
    }
    return venue
  })
