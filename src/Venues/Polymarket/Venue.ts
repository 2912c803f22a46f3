/** The Polymarket venue behind the VenueGateway seam: Gamma catalog, the YES token's CLOB book, signed trading. */
import type { HttpClient } from "@effect/platform"
import { Clock, Deferred, Duration, Effect, Exit, PubSub, Random, Schedule, Schema, Scope } from "effect"
import type { Address } from "viem"
import { getAddress } from "viem"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Trade } from "../../Domain/Market.ts"
import {
  type Capabilities,
  type HeartbeatStatus,
  type PlaceOrderRequest,
  type Venue,
  VenueError,
  type VenueEvent,
  type VenueOrder,
  type VenueOrderStatus
} from "../../Services/VenueGateway.ts"
import { classify, DEFAULT_HOSTS, type Hosts, type Identity, makeRest, type PolymarketRest } from "./Rest.ts"
import {
  exchangeFor,
  nearestTicks,
  type Order,
  orderAmounts,
  orderJson,
  type SignatureType,
  signerOf,
  signOrder,
  ZERO_ADDRESS,
  ZERO_BYTES32
} from "./Signing.ts"
import {
  MarketBooks,
  marketSubscription,
  OwnFills,
  parseMarketFrame,
  parseUserFrame,
  runChannel,
  userSubscription
} from "./Stream.ts"
import { ClobBook, DataTrades, GammaMarkets, type PolymarketMarket, toBook, toMarket, toTrade, VENUE } from "./Wire.ts"

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
  const type = env["POLYMARKET_SIGNATURE_TYPE"] ?? "0"
  if (!/^[0-3]$/.test(type)) throw new Error("POLYMARKET_SIGNATURE_TYPE must be 0, 1, 2 or 3")
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
    heartbeatEvery: Duration.millis(positiveInt(env, "POLYMARKET_HEARTBEAT_MS", 5000))
  }
}

/** What the venue can do: public data always, trading only with a key. */
export const polymarketCapabilities = (trading: boolean): Capabilities => ({
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
  fetch_my_trades: false,
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
  created_at: Schema.optional(Schema.Number)
})
type OpenOrder = typeof OpenOrder.Type

const OpenOrdersPage = Schema.Struct({
  data: Schema.Array(OpenOrder),
  next_cursor: Schema.optional(Schema.NullOr(Schema.String))
})
const Canceled = Schema.Struct({ canceled: Schema.optional(Schema.NullOr(Schema.Array(Schema.String))) })
const HeartbeatAnswer = Schema.Struct({ heartbeat_id: Schema.optional(Schema.NullOr(Schema.String)) })

const fail = (kind: VenueError["kind"], reason: string) => Effect.fail(new VenueError({ venue: VENUE, kind, reason }))

/** What we asked for, kept per venue order id: the venue knows the token, we know the YES side and client id. */
interface Placed {
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: "buy" | "sell"
  /** The YES price and size we asked for. */
  readonly price: F.Fixed
  readonly amount: F.Fixed
  /** Whether the venue order is on the NO token (a `sell` placed as a BUY of NO at 1 − p). */
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

    let exchangeVersion: number | undefined
    const version = Effect.gen(function* () {
      if (exchangeVersion !== undefined) return exchangeVersion
      const v = yield* rest.json({ family: "clob", host: "clob", method: "GET", path: "/version" }, VersionAnswer)
      exchangeVersion = v.version
      return v.version
    })

    const placed = new Map<string, Placed>()
    /** Orders last seen resting: while there is one, the heartbeat runs. */
    const resting = new Set<string>()
    const byClientId = new Map<string, string>()

    const fromOpenOrder = (o: OpenOrder, p: Placed, now: number): VenueOrder => {
      const filled = F.parse(o.size_matched) ?? F.ZERO
      const status: VenueOrderStatus =
        o.status === "LIVE" || o.status === "live"
          ? "open"
          : filled >= p.amount
            ? "closed"
            : o.status.toLowerCase().includes("cancel")
              ? "canceled"
              : "closed"
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
        updatedAt: (o.created_at ?? now / 1000) * 1000
      }
    }

    // own fills: counted once when matched; a failed trade is logged as a reversal (no VenueEvent carries it yet)
    const ownFills = new OwnFills((id) => placed.get(id))
    let userChannel = false
    /** Done once the user channel has connected: an own trade is only heard of on a subscribed channel. */
    const userOpen = yield* Deferred.make<void>()
    const startUserChannel = (creds: { key: string; secret: string; passphrase: string }) =>
      Effect.gen(function* () {
        if (!userChannel) {
          userChannel = true
          yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/user`, {
            onOpen: () => {
              Deferred.unsafeDone(userOpen, Exit.void)
              return userSubscription(creds, [])
            },
            onFrame: (text) => {
              for (const msg of parseUserFrame(text).messages) {
                if (msg.event_type !== "trade") continue
                for (const c of ownFills.apply(msg)) {
                  const f = c.fill
                  const fill = {
                    tradeId: f.tradeId,
                    venueOrderId: f.venueOrderId,
                    clientOrderId: f.own.clientOrderId,
                    nativeId: f.own.nativeId,
                    side: f.own.side,
                    price: f.price,
                    amount: f.amount,
                    fee: F.ZERO,
                    liquidity: f.liquidity,
                    ts: f.ts
                  }
                  // a trade FAILED after it matched undoes the fill counted then, with an event that says so
                  const event: VenueEvent =
                    c._tag === "Reversed"
                      ? { _tag: "FillReversed", fill, reason: "the venue reported the trade FAILED after it matched" }
                      : { _tag: "Fill", fill }
                  if (c._tag === "Reversed") {
                    Effect.runSync(Effect.logWarning(`polymarket trade ${f.tradeId} failed after it matched: reversed`))
                  }
                  Effect.runSync(PubSub.publish(events, event))
                }
              }
            },
            onClose: () => {}
          }).pipe(Scope.extend(venueScope))
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

    const placeOrder = (r: PlaceOrderRequest): Effect.Effect<VenueOrder, VenueError> =>
      Effect.gen(function* () {
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
        // buy = BUY YES at p; sell = BUY NO at 1 − p, or with reduce_only a SELL of the YES held, at p
        const sellYes = r.side === "sell" && r.reduceOnly
        const onNoToken = r.side === "sell" && !r.reduceOnly
        const tokenId = onNoToken ? m.noToken : m.yesToken
        const venuePrice = onNoToken ? ((F.ONE - r.price) as F.Fixed) : r.price
        const venueSide = sellYes ? "SELL" : "BUY"
        const amounts = orderAmounts(venueSide, venuePrice, r.amount, m.tick)
        const v = yield* version
        const exchange = exchangeFor(config.chainId, v, m.negRisk)
        if (exchange === undefined) {
          return yield* fail("not_supported", `no known exchange for chain ${config.chainId}, version ${v}`)
        }
        const now = yield* Clock.currentTimeMillis
        const salt = BigInt(yield* Random.nextIntBetween(1, 2 ** 31 - 1))
        const maker = funder!
        const orderType =
          r.timeInForce === "gtc" ? "GTC" : r.timeInForce === "gtd" ? "GTD" : r.timeInForce === "fok" ? "FOK" : "FAK"
        // the venue expires a GTD order a minute before the expiration it is given
        const expiration =
          r.timeInForce === "gtd" && r.expiresAt !== null ? BigInt(Math.ceil(r.expiresAt / 1000) + 60) : 0n
        const order: Order = {
          salt,
          maker,
          signer: config.signatureType === 3 ? maker : identity!.signer.address,
          tokenId,
          makerAmount: amounts.makerAmount,
          takerAmount: amounts.takerAmount,
          side: venueSide,
          signatureType: config.signatureType,
          timestamp: BigInt(now),
          metadata: ZERO_BYTES32,
          builder: ZERO_BYTES32,
          expiration,
          taker: ZERO_ADDRESS,
          nonce: 0n,
          feeRateBps: 0n
        }
        const signature = yield* Effect.promise(() => signOrder(identity!.signer, exchange, order))
        const body = {
          order: orderJson(order, signature, v),
          owner: creds.key,
          orderType,
          ...(r.postOnly ? { postOnly: true } : {})
        }
        const answer = yield* rest
          .json({ family: "order", host: "clob", method: "POST", path: "/order", body, auth: "l2" }, PostOrderAnswer)
          .pipe(
            Effect.catchIf(
              (e) => e.kind === "rejected" && e.reason.includes("INVALID_ORDER_MIN_TICK_SIZE"),
              (e) => refusedTick(m, r.price, e.reason)
            )
          )
        if (answer.success === false || answer.orderID === undefined || answer.orderID === "") {
          if ((answer.errorMsg ?? "").includes("INVALID_ORDER_MIN_TICK_SIZE")) {
            return yield* refusedTick(m, r.price, answer.errorMsg ?? "")
          }
          return yield* Effect.fail(
            classify(400, JSON.stringify({ errorMsg: answer.errorMsg ?? "refused" }), undefined)
          )
        }
        const p: Placed = {
          clientOrderId: r.clientOrderId,
          nativeId: m.nativeId,
          side: r.side,
          price: r.price,
          amount: F.roundTo(r.amount, F.of("0.01"), "down"),
          onNoToken
        }
        placed.set(answer.orderID, p)
        resting.add(answer.orderID)
        byClientId.set(r.clientOrderId, answer.orderID)
        const shares = F.parse(venueSide === "BUY" ? (answer.takingAmount ?? "0") : (answer.makingAmount ?? "0"))
        const filled = (shares ?? F.ZERO) as F.Fixed
        const status: VenueOrderStatus =
          filled >= p.amount ? "closed" : orderType === "FOK" || orderType === "FAK" ? "canceled" : "open"
        if (status !== "open") resting.delete(answer.orderID)
        return fromOpenOrder(
          {
            id: answer.orderID,
            status: status === "open" ? "LIVE" : status === "closed" ? "MATCHED" : "CANCELED",
            market: m.nativeId,
            asset_id: tokenId,
            side: venueSide,
            original_size: F.format(p.amount),
            size_matched: F.format(filled),
            price: F.format(venuePrice)
          },
          p,
          now
        )
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
      let cursor = ""
      for (let page = 0; page < 100; page++) {
        const r = yield* rest.json(
          {
            family: "clob",
            host: "clob",
            method: "GET",
            path: `/data/orders${cursor === "" ? "" : `?next_cursor=${encodeURIComponent(cursor)}`}`,
            auth: "l2"
          },
          OpenOrdersPage
        )
        for (const o of r.data) {
          const m = yield* market(o.market)
          if (m === undefined) continue
          const onNoToken = o.asset_id === m.noToken
          const price = F.parse(o.price) ?? F.ZERO
          const p: Placed = placed.get(o.id) ?? {
            clientOrderId: "",
            nativeId: m.nativeId,
            side: onNoToken || o.side === "SELL" ? "sell" : "buy",
            price: onNoToken ? ((F.ONE - price) as F.Fixed) : price,
            amount: F.parse(o.original_size) ?? F.ZERO,
            onNoToken
          }
          placed.set(o.id, p)
          const view = fromOpenOrder(o, p, now)
          if (view.status === "open") resting.add(o.id)
          out.push(view)
        }
        if (r.next_cursor === undefined || r.next_cursor === null || r.next_cursor === "LTE=" || r.data.length === 0)
          break
        cursor = r.next_cursor
      }
      return out
    })

    const readOrder = (venueOrderId: string): Effect.Effect<VenueOrder, VenueError> =>
      Effect.gen(function* () {
        yield* ensureCreds
        const p = placed.get(venueOrderId)
        if (p === undefined) return yield* fail("rejected", `order ${venueOrderId} was not placed by this server`)
        const o = yield* rest.json(
          { family: "clob", host: "clob", method: "GET", path: `/data/order/${venueOrderId}`, auth: "l2" },
          OpenOrder
        )
        const view = fromOpenOrder(o, p, yield* Clock.currentTimeMillis)
        if (view.status !== "open") resting.delete(venueOrderId)
        return view
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
        yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/market`, {
          onOpen: () => {
            // this connection's books are trusted again only from the fresh snapshots it is about to send
            for (const t of byToken.keys()) books.books.delete(t)
            return marketSubscription([...byToken.keys()])
          },
          onFrame: (text) => {
            for (const msg of parseMarketFrame(text).messages) {
              for (const u of books.apply(msg)) {
                const nativeId = byToken.get(u.assetId)
                if (u._tag === "Book" && nativeId !== undefined) {
                  Effect.runSync(PubSub.publish(events, { _tag: "Book", nativeId, ts: u.ts }))
                }
                // Only YES tokens are subscribed: their last trade is the YES price.
                if (u._tag === "Trade" && nativeId !== undefined) {
                  Effect.runSync(PubSub.publish(events, { _tag: "Trade", nativeId, price: u.price, ts: u.ts }))
                }
              }
            }
          },
          onClose: () => {}
        })
      })

    const venue: Venue & { readonly watch: typeof watch } = {
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
      orderByClientId: (clientOrderId) => {
        const id = byClientId.get(clientOrderId)
        return id === undefined ? Effect.succeed(undefined) : readOrder(id)
      },
      subscribe,
      watch
    }
    return venue
  })
