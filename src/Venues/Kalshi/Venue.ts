/** The Kalshi venue behind the VenueGateway seam: public data without credentials, trading on `kalshi:default` with them. */
import type { HttpClient } from "@effect/platform"
import { Clock, Effect, Either, PubSub, Queue, Ref, type Scope } from "effect"
import { readFileSync } from "node:fs"
import type { MarketFees } from "../../Domain/Fees.ts"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Market, Trade } from "../../Domain/Market.ts"
import {
  type Capabilities,
  type PlaceOrderRequest,
  type Venue,
  VenueError,
  type VenueEvent,
  type VenueOrder
} from "../../Services/VenueGateway.ts"
import { BASIC_TIER, type Bucket, type CreateOrderBody, type Credentials, makeRest } from "./Rest.ts"
import { authHeaders, privateKeyFromPem } from "./Signing.ts"
import { connect, type StreamHandle } from "./Stream.ts"
import * as W from "./Wire.ts"

export const ENDPOINTS = {
  prod: { api: "https://external-api.kalshi.com/trade-api/v2", ws: "wss://external-api-ws.kalshi.com/trade-api/ws/v2" },
  demo: { api: "https://demo-api.kalshi.co/trade-api/v2", ws: "wss://demo-api.kalshi.co/trade-api/ws/v2" }
} as const

export interface KalshiConfig {
  readonly env: "prod" | "demo"
  readonly apiUrl: string
  readonly wsUrl: string
  readonly credentials: Credentials | undefined
  readonly limits: { readonly read: Bucket; readonly write: Bucket }
  /** How long a REST request may take. Default 10 s. */
  readonly timeoutMs: number
  /** How long the catalog of open markets is kept before it is read again. Default 60 s. */
  readonly catalogTtlMs: number
  /** At most this many pages of 200 events are read for the catalog. Default 50. */
  readonly catalogPages: number
}

type Env = Readonly<Record<string, string | undefined>>

const positive = (text: string | undefined, name: string): Either.Either<number | undefined, string> => {
  if (text === undefined || text === "") return Either.right(undefined)
  const n = Number(text)
  return Number.isFinite(n) && n > 0 ? Either.right(n) : Either.left(`${name} must be a positive number, not '${text}'`)
}

/**
 * Reads the settings of the issue from the environment: `KALSHI_ENV` (`prod` | `demo`), `KALSHI_API_URL`,
 * `KALSHI_WS_URL`, `KALSHI_API_KEY_ID` with `KALSHI_PRIVATE_KEY_PATH` or `KALSHI_PRIVATE_KEY`, and the buckets
 * `KALSHI_READ_BUCKET`/`KALSHI_READ_REFILL`, `KALSHI_WRITE_BUCKET`/`KALSHI_WRITE_REFILL` (tokens; Basic tier by
 * default) and `KALSHI_TIMEOUT_MS` (per request, default 10000). A key id without a readable key, or a key without an id, is an error: never a silent public-only start.
 * The message names the setting, never its value.
 */
export const configFromEnv = (env: Env): Either.Either<KalshiConfig, string> =>
  Either.gen(function* () {
    const name = (env["KALSHI_ENV"] ?? "prod").trim() || "prod"
    if (name !== "prod" && name !== "demo") return yield* Either.left(`KALSHI_ENV must be prod or demo, not '${name}'`)
    const keyId = env["KALSHI_API_KEY_ID"]?.trim() || undefined
    const keyPath = env["KALSHI_PRIVATE_KEY_PATH"]?.trim() || undefined
    const keyText = env["KALSHI_PRIVATE_KEY"]?.trim() || undefined
    let credentials: Credentials | undefined
    if (keyId !== undefined || keyPath !== undefined || keyText !== undefined) {
      if (keyId === undefined)
        return yield* Either.left("KALSHI_API_KEY_ID is missing: the private key needs its key id")
      if (keyPath === undefined && keyText === undefined)
        return yield* Either.left("KALSHI_PRIVATE_KEY_PATH or KALSHI_PRIVATE_KEY is missing for KALSHI_API_KEY_ID")
      const pem = yield* Either.try({
        try: () => keyText ?? readFileSync(keyPath!, "utf8"),
        catch: () => `KALSHI_PRIVATE_KEY_PATH cannot be read`
      })
      const key = yield* Either.try({
        try: () => privateKeyFromPem(pem.includes("\\n") ? pem.replaceAll("\\n", "\n") : pem),
        catch: () =>
          (keyText !== undefined ? "KALSHI_PRIVATE_KEY" : "KALSHI_PRIVATE_KEY_PATH") + " is not a PEM private key"
      })
      credentials = { keyId, key }
    }
    const readCap = yield* positive(env["KALSHI_READ_BUCKET"], "KALSHI_READ_BUCKET")
    const readRefill = yield* positive(env["KALSHI_READ_REFILL"], "KALSHI_READ_REFILL")
    const writeCap = yield* positive(env["KALSHI_WRITE_BUCKET"], "KALSHI_WRITE_BUCKET")
    const writeRefill = yield* positive(env["KALSHI_WRITE_REFILL"], "KALSHI_WRITE_REFILL")
    const timeoutMs = yield* positive(env["KALSHI_TIMEOUT_MS"], "KALSHI_TIMEOUT_MS")
    return {
      env: name,
      apiUrl: env["KALSHI_API_URL"]?.trim() || ENDPOINTS[name].api,
      wsUrl: env["KALSHI_WS_URL"]?.trim() || ENDPOINTS[name].ws,
      credentials,
      limits: {
        read: {
          capacity: readCap ?? BASIC_TIER.read.capacity,
          refillPerSecond: readRefill ?? BASIC_TIER.read.refillPerSecond
        },
        write: {
          capacity: writeCap ?? BASIC_TIER.write.capacity,
          refillPerSecond: writeRefill ?? BASIC_TIER.write.refillPerSecond
        }
      },
      timeoutMs: timeoutMs ?? 10_000,
      catalogTtlMs: 60_000,
      catalogPages: 50
    }
  })

/** What Kalshi can do here: trading needs credentials; the socket needs them too (the venue authenticates it). */
export const kalshiCapabilities = (trading: boolean): Capabilities => ({
  fetch_markets: true,
  search: true,
  fetch_order_book: true,
  fetch_trades: true,
  watch_order_book: trading,
  create_order: trading,
  cancel_order: trading,
  cancel_all_orders: trading,
  edit_order: trading,
  fetch_orders: trading,
  fetch_my_trades: trading,
  fetch_positions: trading,
  fetch_balance: trading,
  post_only: trading,
  reduce_only: trading,
  ioc: trading,
  fok: trading,
  market_order: trading
})

/** A price as the v2 routes take it: four places ("0.5600"); a count with two ("10.00"). */
const places = (x: F.Fixed, n: 2 | 4): string => {
  const step = 10 ** (6 - n)
  const whole = Math.trunc(x / F.SCALE)
  const frac = Math.round((x - whole * F.SCALE) / step)
  return `${whole}.${String(frac).padStart(n, "0")}`
}

const TIF = {
  gtc: "good_till_canceled",
  gtd: "good_till_canceled",
  ioc: "immediate_or_cancel",
  fok: "fill_or_kill"
} as const

/** The body of a placement: `buy` is a bid on the YES book, `sell` an ask (a NO order at the YES price). */
export const createOrderBody = (r: PlaceOrderRequest): CreateOrderBody => ({
  ticker: r.nativeId,
  client_order_id: r.clientOrderId,
  side: r.side === "buy" ? "bid" : "ask",
  count: places(r.amount, 2),
  price: places(r.price, 4),
  time_in_force: TIF[r.timeInForce],
  self_trade_prevention_type: "taker_at_cross",
  ...(r.postOnly ? { post_only: true } : {}),
  ...(r.reduceOnly ? { reduce_only: true } : {}),
  ...(r.timeInForce === "gtd" && r.expiresAt !== null ? { expiration_time: Math.ceil(r.expiresAt / 1000) } : {})
})

const venueError = (kind: VenueError["kind"], reason: string) => new VenueError({ venue: W.VENUE, kind, reason })
const unreadable = (what: string) => (reason: string) => venueError("unavailable", `unreadable ${what}: ${reason}`)

/** A Kalshi venue, built from its settings; its socket and buckets live as long as the scope. */
export const makeKalshiVenue = (
  config: KalshiConfig
): Effect.Effect<Venue, never, Scope.Scope | HttpClient.HttpClient> =>
  Effect.gen(function* () {
    const rest = yield* makeRest({
      baseUrl: config.apiUrl,
      credentials: config.credentials,
      timeout: `${config.timeoutMs} millis`,
      limits: config.limits
    })
    const trading = config.credentials !== undefined
    const events = yield* PubSub.unbounded<VenueEvent>()
    /** The catalog of open markets as last read, and the same by ticker (a placement looks its market up there). */
    const catalog = yield* Ref.make<
      { at: number; markets: ReadonlyArray<Market>; byTicker: ReadonlyMap<string, Market> } | undefined
    >(undefined)
    /**
     * Each market as last read, and when: taken as it is while younger than the catalog's time to live, read again
     * after (a socket's lifecycle message drops it sooner, but only for the markets the socket follows).
     */
    const known = new Map<string, { readonly market: W.KMarket; readonly at: number }>()
    /** What we know of each order: its market (cancel and amend need it) and its last state. */
    const orders = new Map<string, VenueOrder>()
    const byClientId = new Map<string, string>()
    const remember = (o: VenueOrder) => {
      orders.set(o.venueOrderId, o)
      if (o.clientOrderId !== "") byClientId.set(o.clientOrderId, o.venueOrderId)
      return o
    }

    const now = Clock.currentTimeMillis

    const readCatalog = Effect.gen(function* () {
      const out: Array<Market> = []
      let cursor: string | undefined
      for (let page = 0; page < config.catalogPages; page++) {
        const r = yield* rest.events({ limit: 200, status: "open", ...(cursor ? { cursor } : {}) })
        const at = yield* now
        for (const e of r.events) for (const market of e.markets ?? []) known.set(market.ticker, { market, at })
        out.push(...W.marketsOfEvents(r.events))
        cursor = r.cursor
        if (!cursor || r.events.length === 0) break
      }
      return out.sort((a, b) => (a.nativeId < b.nativeId ? -1 : a.nativeId > b.nativeId ? 1 : 0))
    })

    const markets = Effect.gen(function* () {
      const t = yield* now
      const cached = yield* Ref.get(catalog)
      if (cached !== undefined && t - cached.at < config.catalogTtlMs) return cached.markets
      const read = yield* readCatalog
      yield* Ref.set(catalog, { at: t, markets: read, byTicker: new Map(read.map((m) => [m.nativeId, m])) })
      return read
    })

    const kMarket = (ticker: string) =>
      Effect.gen(function* () {
        const t = yield* now
        const k = known.get(ticker)
        if (k !== undefined && t - k.at < config.catalogTtlMs) return k.market
        const r = yield* rest.market(ticker).pipe(
          Effect.map((x) => x.market),
          Effect.catchIf(
            (e) => e.kind === "rejected" && /not.found|404/i.test(e.reason),
            () => Effect.succeed(undefined)
          ),
          // A read that fails leaves the market as last read, where there is one (the venue judges an order anyway).
          Effect.catchAll((e) => (k === undefined ? Effect.fail(e) : Effect.succeed(k.market)))
        )
        if (r === undefined) known.delete(ticker)
        else if (r !== k?.market) known.set(ticker, { market: r, at: t })
        return r
      })

    const market = (ticker: string) =>
      Effect.gen(function* () {
        const t = yield* now
        const listed = yield* Ref.get(catalog)
        const row = listed?.byTicker.get(ticker)
        // The catalog's row while the catalog is fresh (it carries the event's title and category); after, the
        // market as read again, with the row's words.
        if (listed !== undefined && row !== undefined && t - listed.at < config.catalogTtlMs) return row
        const k = yield* kMarket(ticker)
        if (k === undefined) return undefined
        const read = W.toMarket(k)
        return row === undefined ? read : { ...read, title: row.title, subtitle: row.subtitle, category: row.category }
      })

    // The socket: one per account, when there is an account (the venue authenticates every connection).
    let stream: StreamHandle | undefined
    const wsPath = new URL(config.wsUrl).pathname
    const disconnectedAt = yield* Ref.make<number | undefined>(undefined)

    /** After a reconnect: orders known open and the fills since the drop are read back and published. */
    const reconcile = (since: number) =>
      Effect.gen(function* () {
        const open = [...orders.values()].filter((o) => o.status === "open")
        for (const o of open) {
          const r = yield* Effect.either(rest.order(o.venueOrderId))
          if (Either.isLeft(r)) continue
          const t = yield* now
          const mapped = W.toOrder(r.right.order, t)
          if (Either.isRight(mapped)) {
            remember(mapped.right)
            yield* PubSub.publish(events, { _tag: "Order", order: mapped.right })
          }
        }
        const fills = yield* Effect.either(rest.fills({ limit: 1000, min_ts: Math.floor(since / 1000) - 1 }))
        if (Either.isRight(fills)) {
          for (const f of fills.right.fills) {
            const fill = W.toFill(f)
            if (Either.isRight(fill)) yield* PubSub.publish(events, { _tag: "Fill", fill: fill.right })
          }
        }
      })

    if (config.credentials !== undefined) {
      const creds = config.credentials
      stream = yield* connect({
        url: config.wsUrl,
        headers: Effect.map(now, (t) => authHeaders(creds.keyId, creds.key, t, "GET", wsPath)),
        tickers: [],
        privateChannels: true
      })
      const handle = stream
      yield* Effect.forkScoped(
        Effect.forever(
          Effect.gen(function* () {
            const o = yield* Queue.take(handle.outputs)
            switch (o._tag) {
              case "Book":
                yield* PubSub.publish(events, { _tag: "Book", nativeId: o.ticker, ts: o.book.ts })
                break
              case "Trade":
                yield* PubSub.publish(events, {
                  _tag: "Trade",
                  nativeId: o.ticker,
                  price: o.trade.price,
                  ts: o.trade.ts
                })
                break
              case "Fill":
                yield* PubSub.publish(events, { _tag: "Fill", fill: o.fill })
                break
              case "Order":
                remember(o.order)
                yield* PubSub.publish(events, { _tag: "Order", order: o.order })
                break
              case "Gap":
                yield* Effect.logWarning(
                  `kalshi: ${o.ticker} lost messages on sid ${o.sid} (expected seq ${o.expected}, got ${o.got}); asked for a fresh snapshot`
                )
                break
              case "Disconnected": {
                const t = yield* now
                yield* Ref.update(disconnectedAt, (at) => at ?? t)
                yield* Effect.logWarning(`kalshi: socket ${o.reason}; reconnecting in ${o.retryInMs} ms`)
                break
              }
              case "Connected": {
                const since = yield* Ref.getAndSet(disconnectedAt, undefined)
                if (o.attempt > 0 && since !== undefined) yield* reconcile(since)
                break
              }
              case "Lifecycle":
                // a market opened, paused, closed or settled: read it again on next use
                known.delete(o.ticker)
                yield* Ref.set(catalog, undefined)
                break
              case "VenueError":
                yield* Effect.logWarning(`kalshi: socket error ${String(o.code)}: ${o.message}`)
                break
              default:
                break
            }
          })
        )
      )
    }

    const book = (ticker: string): Effect.Effect<Book, VenueError> =>
      Effect.gen(function* () {
        if (stream !== undefined) {
          const streamed = yield* stream.book(ticker)
          if (streamed !== undefined) return streamed
          yield* stream.addMarkets([ticker])
        }
        const r = yield* rest.orderbook(ticker)
        return W.toBook(r, yield* now)
      })

    const trades = (ticker: string): Effect.Effect<ReadonlyArray<Trade>, VenueError> =>
      Effect.map(rest.trades({ ticker, limit: 100 }), (r) =>
        r.trades.flatMap((t) => {
          const x = W.toTrade(t)
          return Either.isRight(x) ? [x.right] : []
        })
      )

    /**
     * A market's fee schedule: its series' (the event ticker's first part names the series), read once per series.
     * A `flat` schedule, whose table the API does not publish, is none (undefined).
     */
    const seriesFees = new Map<string, MarketFees | undefined>()
    const fees = (ticker: string): Effect.Effect<MarketFees | undefined, VenueError> =>
      Effect.gen(function* () {
        const m = yield* market(ticker)
        if (m === undefined) return yield* Effect.fail(venueError("rejected", `no market ${ticker}`))
        const seriesTicker = m.eventId.split("-")[0]!
        if (seriesFees.has(seriesTicker)) return seriesFees.get(seriesTicker)
        const r = yield* rest.series(seriesTicker)
        const schedule = yield* Either.mapLeft(W.feeSchedule(r.series), unreadable("series"))
        const rates = W.marketFees(schedule)
        seriesFees.set(seriesTicker, rates)
        return rates
      })

    const fetchOrder = (venueOrderId: string) =>
      Effect.gen(function* () {
        const r = yield* rest.order(venueOrderId)
        const o = yield* Either.mapLeft(W.toOrder(r.order, yield* now), unreadable("order"))
        return remember(o)
      })

    /** The fills of an order, as events to hand back with the answer (the socket brings them too; the desk dedupes). */
    const fillsOf = (venueOrderId: string) =>
      Effect.map(rest.fills({ order_id: venueOrderId, limit: 1000 }), (r) =>
        r.fills.flatMap((f): Array<VenueEvent> => {
          const x = W.toFill(f)
          return Either.isRight(x) ? [{ _tag: "Fill", fill: x.right }] : []
        })
      )

    const placeOrder = (r: PlaceOrderRequest): Effect.Effect<VenueOrder, VenueError> =>
      Effect.gen(function* () {
        const k = yield* kMarket(r.nativeId)
        if (k === undefined) return yield* Effect.fail(venueError("rejected", `market ${r.nativeId} not found`))
        if (W.isHalted(k.status)) return yield* Effect.fail(venueError("market_closed", `market is ${k.status}`))
        const grid = W.tickGrid(k)
        if (!W.onGrid(grid, r.price)) {
          const { below, above } = W.nearestOnGrid(grid, r.price)
          return yield* Effect.fail(
            venueError(
              "rejected",
              `price ${F.format(r.price)} is off the market's tick grid; nearest valid: ${[below, above]
                .filter((p) => p !== undefined)
                .map((p) => F.format(p))
                .join(", ")}`
            )
          )
        }
        const answer = yield* rest.createOrder(createOrderBody(r))
        const t = yield* now
        const filled = answer.fill_count
        const remaining = answer.remaining_count
        const immediate = r.timeInForce === "ioc" || r.timeInForce === "fok"
        if (filled > 0) {
          // The order (its average price and fees) and its fills are read together: one round trip after the
          // placement's, not two, while the desk waits for the answer.
          const [full, fills] = yield* Effect.all(
            [
              Effect.orElseSucceed(fetchOrder(answer.order_id), () => undefined),
              Effect.orElseSucceed(fillsOf(answer.order_id), (): ReadonlyArray<VenueEvent> => [])
            ],
            { concurrency: 2 }
          )
          if (full !== undefined) return { ...full, events: fills }
        }
        const order: VenueOrder = {
          venueOrderId: answer.order_id,
          clientOrderId: r.clientOrderId,
          nativeId: r.nativeId,
          side: r.side,
          price: r.price,
          amount: r.amount,
          filled,
          status: remaining > 0 ? (immediate ? "canceled" : "open") : filled > 0 ? "closed" : "canceled",
          averagePrice: filled > 0 ? r.price : null,
          cost: F.mul(r.price, filled),
          fee: F.ZERO,
          queuePriorityPreserved: null,
          updatedAt: answer.ts_ms || t
        }
        return remember(order)
      })

    const known_ = (venueOrderId: string) =>
      Effect.suspend(() => {
        const o = orders.get(venueOrderId)
        return o !== undefined ? Effect.succeed(o) : fetchOrder(venueOrderId)
      })

    const cancelOrder = (venueOrderId: string) =>
      Effect.gen(function* () {
        const before = yield* known_(venueOrderId)
        yield* rest.cancelOrder(venueOrderId, before.nativeId)
        return yield* fetchOrder(venueOrderId).pipe(
          Effect.orElseSucceed(() => remember({ ...before, status: "canceled" as const, updatedAt: before.updatedAt }))
        )
      })

    const amendOrder = (venueOrderId: string, changes: { readonly price?: F.Fixed; readonly amount?: F.Fixed }) =>
      Effect.gen(function* () {
        const before = yield* fetchOrder(venueOrderId)
        const price = changes.price ?? before.price
        const amount = changes.amount ?? before.amount
        if (amount <= before.filled)
          return yield* Effect.fail(venueError("rejected", "the new amount is not above what filled"))
        const priceSame = price === before.price
        if (priceSame && amount < before.amount) {
          // only smaller: the decrease route keeps the order's place in the queue
          yield* rest.decreaseOrder(venueOrderId, before.nativeId, places(F.sub(amount, before.filled), 2))
        } else {
          const k = yield* kMarket(before.nativeId)
          if (k !== undefined && !W.onGrid(W.tickGrid(k), price))
            return yield* Effect.fail(venueError("rejected", `price ${F.format(price)} is off the market's tick grid`))
          yield* rest.amendOrder(venueOrderId, {
            ticker: before.nativeId,
            side: before.side === "buy" ? "bid" : "ask",
            price: places(price, 4),
            count: places(amount, 2),
            ...(before.clientOrderId !== ""
              ? { client_order_id: before.clientOrderId, updated_client_order_id: before.clientOrderId }
              : {})
          })
        }
        const after = yield* fetchOrder(venueOrderId)
        return remember({ ...after, queuePriorityPreserved: priceSame && amount <= before.amount })
      })

    /** An order with the fills it has had, for the desk to catch up on (it skips fills it knows). */
    const withFills = (o: VenueOrder | undefined) =>
      o === undefined || o.filled === 0
        ? Effect.succeed(o)
        : Effect.map(
            Effect.orElseSucceed(fillsOf(o.venueOrderId), () => []),
            (events): VenueOrder => ({ ...o, events })
          )

    const orderByClientId = (clientOrderId: string) => Effect.flatMap(findByClientId(clientOrderId), withFills)

    const findByClientId = (clientOrderId: string) =>
      Effect.gen(function* () {
        const id = byClientId.get(clientOrderId)
        if (id !== undefined) return yield* Effect.map(fetchOrder(id), (o): VenueOrder | undefined => o)
        let cursor: string | undefined
        for (let page = 0; page < 10; page++) {
          const r = yield* rest.orders({ limit: 1000, ...(cursor ? { cursor } : {}) })
          const t = yield* now
          for (const k of r.orders) {
            const o = W.toOrder(k, t)
            if (Either.isRight(o)) remember(o.right)
          }
          const found = r.orders.find((o) => o.client_order_id === clientOrderId)
          if (found !== undefined) return orders.get(found.order_id)
          cursor = r.cursor
          if (!cursor) break
        }
        return undefined
      })

    const balance = Effect.map(rest.balance, (b) => ({
      cash: W.toBalance(b),
      portfolioValue: b.portfolio_value === undefined ? null : F.div(F.fromInt(b.portfolio_value), F.fromInt(100))
    }))

    const positions = Effect.gen(function* () {
      const out: Array<W.Position> = []
      let cursor: string | undefined
      for (let page = 0; page < 20; page++) {
        const r = yield* rest.positions({ limit: 1000, ...(cursor ? { cursor } : {}) })
        out.push(...(r.market_positions ?? []).map(W.toPosition).filter((p) => p.contracts !== 0))
        cursor = r.cursor
        if (!cursor) break
      }
      return out
    })

    const openOrders = Effect.gen(function* () {
      const out: Array<VenueOrder> = []
      let cursor: string | undefined
      for (let page = 0; page < 20; page++) {
        const r = yield* rest.orders({ status: "resting", limit: 1000, ...(cursor ? { cursor } : {}) })
        const t = yield* now
        for (const k of r.orders) {
          const o = W.toOrder(k, t)
          if (Either.isRight(o)) out.push(remember(o.right))
        }
        cursor = r.cursor
        if (!cursor) break
      }
      return out
    })

    const decreaseOrder = (venueOrderId: string, remaining: F.Fixed) =>
      Effect.gen(function* () {
        const before = yield* known_(venueOrderId)
        yield* rest.decreaseOrder(venueOrderId, before.nativeId, places(remaining, 2))
        const after = yield* fetchOrder(venueOrderId)
        return remember({ ...after, queuePriorityPreserved: true })
      })

    const notTrading = <A>(): Effect.Effect<A, VenueError> =>
      Effect.fail(venueError("not_supported", "no Kalshi credentials are configured (KALSHI_API_KEY_ID)"))

    const venue: Venue = {
      info: { id: W.VENUE, name: "Kalshi", book_model: "yes_book", has: kalshiCapabilities(trading) },
      remote: true,
      // With credentials a book read subscribes the market's deltas and trades on the socket.
      streamsTrades: stream !== undefined,
      accounts: trading ? ["default"] : [],
      markets,
      market,
      book,
      trades,
      placeOrder: trading ? placeOrder : () => notTrading(),
      cancelOrder: trading ? cancelOrder : () => notTrading(),
      amendOrder: trading ? amendOrder : () => notTrading(),
      orderByClientId: trading ? orderByClientId : () => notTrading(),
      subscribe: PubSub.subscribe(events),
      balance: trading ? balance : notTrading(),
      positions: trading ? positions : notTrading(),
      openOrders: trading ? openOrders : notTrading(),
      decreaseOrder: trading ? decreaseOrder : () => notTrading(),
      // one request cancels every resting order of the account; the venue answers 204 without a count
      cancelAll: trading ? Effect.as(rest.cancelAll, 0) : notTrading(),
      fees
    }
    return venue
  })

/** The Kalshi builder from the environment: a settings error (a key id without its key…) fails with a sentence. */
export const kalshiBuilder = (env: Env): Effect.Effect<Venue, string, Scope.Scope | HttpClient.HttpClient> =>
  Effect.flatMap(configFromEnv(env), makeKalshiVenue)
