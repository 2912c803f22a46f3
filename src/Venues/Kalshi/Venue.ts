/** The Kalshi venue behind the VenueGateway seam: public data without credentials, trading on `kalshi:default` with them. */
import type { HttpClient } from "@effect/platform"
import { Clock, Effect, Either, PubSub, Queue, Ref, type Scope } from "effect"
import { randomUUID } from "node:crypto"
import { readFileSync } from "node:fs"
import type { MarketFees } from "../../Domain/Fees.ts"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Market, Trade } from "../../Domain/Market.ts"
import {
  type Capabilities,
  type PlaceOrderRequest,
  type RemoteVenue,
  type Venue,
  VenueError,
  type VenueEvent,
  type VenueFill,
  type VenueOrder
} from "../../Services/VenueGateway.ts"
import { BASIC_TIER, type Bucket, type CreateOrderBody, type Credentials, makeRest } from "./Rest.ts"
import { authHeaders, privateKeyFromPem } from "./Signing.ts"
import { connect, type StreamHandle, type StreamOutput } from "./Stream.ts"
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
  /** A socket silent this long (no message, no ping; the venue pings every 10 s) is stale and reopened. Default 30 s. */
  readonly streamIdleMs: number
  /** How long a series' fee schedule and an event's fee overrides are kept before they are read again. Default 10 min. */
  readonly feeTtlMs: number
  /** Whether the books subscription asks for YES-leg prices (`use_yes_price`, sent explicitly). Default true. */
  readonly yesPrice: boolean
  /** At most this many pages are read by one paged read (fills, orders, settlements). Default 100. */
  readonly maxPages: number
}

type Env = Readonly<Record<string, string | undefined>>

const positive = (text: string | undefined, name: string): Either.Either<number | undefined, string> => {
  if (text === undefined || text === "") return Either.right(undefined)
  const n = Number(text)
  return Number.isFinite(n) && n > 0 ? Either.right(n) : Either.left(`${name} must be a positive number, not '${text}'`)
}

/**
 * Reads the settings of the issue from the environment: `KALSHI_ENV` (`prod` | `demo`), `KALSHI_API_URL`,
 * `KALSHI_WS_URL`, `KALSHI_API_KEY_ID` with `KALSHI_PRIVATE_KEY_PATH` or `KALSHI_PRIVATE_KEY`, the buckets
 * `KALSHI_READ_BUCKET`/`KALSHI_READ_REFILL`, `KALSHI_WRITE_BUCKET`/`KALSHI_WRITE_REFILL` (tokens; Basic tier by
 * default), `KALSHI_TIMEOUT_MS` (per request, default 10000), `KALSHI_STREAM_IDLE_MS` (default 30000),
 * `KALSHI_FEE_TTL_MS` (default 600000) and `KALSHI_USE_YES_PRICE` (`true` | `false`, default true). A key id without
 * a readable key, or a key without an id, is an error: never a silent public-only start.
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
    const streamIdleMs = yield* positive(env["KALSHI_STREAM_IDLE_MS"], "KALSHI_STREAM_IDLE_MS")
    const feeTtlMs = yield* positive(env["KALSHI_FEE_TTL_MS"], "KALSHI_FEE_TTL_MS")
    const yesPriceText = (env["KALSHI_USE_YES_PRICE"] ?? "").trim().toLowerCase()
    if (yesPriceText !== "" && yesPriceText !== "true" && yesPriceText !== "false")
      return yield* Either.left(`KALSHI_USE_YES_PRICE must be true or false, not '${yesPriceText}'`)
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
      catalogPages: 50,
      streamIdleMs: streamIdleMs ?? 30_000,
      feeTtlMs: feeTtlMs ?? 600_000,
      yesPrice: yesPriceText !== "false",
      maxPages: 100
    }
  })

/**
 * What Kalshi can do here: trading needs credentials; the socket needs them too (the venue authenticates it).
 * `reduce_only` is partial: the venue takes it only on an immediate-or-cancel order.
 */
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
  reduce_only: trading ? "partial" : false,
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

const venueError = (kind: VenueError["kind"], reason: string, sent?: boolean) =>
  new VenueError({ venue: W.VENUE, kind, reason, ...(sent === undefined ? {} : { sent }) })

/** Why Kalshi would refuse this placement before it is sent, if it would: its documented rules on order flags. */
export const placementRule = (r: PlaceOrderRequest): string | undefined =>
  r.reduceOnly && r.timeInForce !== "ioc"
    ? "reduce_only: Kalshi takes reduce_only only on an immediate-or-cancel order (time_in_force ioc)"
    : undefined
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
    /** Markets the account has dealt in here: a settlement of one whose payout no message states is read. */
    const held = new Set<string>()
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

    /** Markets a lifecycle message named since they were last read: read again on next use, one by one. */
    const changed = new Set<string>()

    const markets = Effect.gen(function* () {
      const t = yield* now
      const cached = yield* Ref.get(catalog)
      if (cached !== undefined && t - cached.at < config.catalogTtlMs) {
        const rows = [...changed].filter((ticker) => cached.byTicker.has(ticker))
        if (rows.length === 0) return cached.markets
        for (const ticker of rows) yield* market(ticker)
        return (yield* Ref.get(catalog))?.markets ?? cached.markets
      }
      const read = yield* readCatalog
      changed.clear()
      yield* Ref.set(catalog, { at: t, markets: read, byTicker: new Map(read.map((m) => [m.nativeId, m])) })
      return read
    })

    /** Puts a market read again in the catalog in place of its old row (an open catalog keeps open markets only). */
    const patchCatalog = (m: Market) =>
      Ref.update(catalog, (c) => {
        if (c === undefined || !c.byTicker.has(m.nativeId)) return c
        const list = c.markets.flatMap((x) => (x.nativeId !== m.nativeId ? [x] : m.status === "open" ? [m] : []))
        const byTicker = new Map(c.byTicker)
        if (m.status === "open") byTicker.set(m.nativeId, m)
        else byTicker.delete(m.nativeId)
        return { at: c.at, markets: list, byTicker }
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
        if (listed !== undefined && row !== undefined && t - listed.at < config.catalogTtlMs && !changed.has(ticker))
          return row
        const k = yield* kMarket(ticker)
        if (k === undefined) return undefined
        const read = W.toMarket(k)
        const out =
          row === undefined ? read : { ...read, title: row.title, subtitle: row.subtitle, category: row.category }
        if (changed.delete(ticker)) yield* patchCatalog(out)
        return out
      })

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
     * A market's fee schedule: its event's override where one is in force (`/events/fee_changes`), else its series'
     * (the event ticker's first part names the series). Each is kept for the fee time to live; an `event_fee_update`
     * on the socket drops the event's at once. A schedule whose table the API does not publish (`flat`) is none.
     */
    const seriesFees = new Map<string, { readonly at: number; readonly schedule: W.FeeSchedule }>()
    const eventFees = new Map<string, { readonly at: number; readonly changes: ReadonlyArray<W.KEventFeeChange> }>()
    const fees = (ticker: string): Effect.Effect<MarketFees | undefined, VenueError> =>
      Effect.gen(function* () {
        const m = yield* market(ticker)
        if (m === undefined) return yield* Effect.fail(venueError("rejected", `no market ${ticker}`))
        const t = yield* now
        const seriesTicker = m.eventId.split("-")[0]!
        let series = seriesFees.get(seriesTicker)
        if (series === undefined || t - series.at >= config.feeTtlMs) {
          const r = yield* rest.series(seriesTicker)
          series = { at: t, schedule: yield* Either.mapLeft(W.feeSchedule(r.series), unreadable("series")) }
          seriesFees.set(seriesTicker, series)
        }
        let event = eventFees.get(m.eventId)
        if (event === undefined || t - event.at >= config.feeTtlMs) {
          const changes: Array<W.KEventFeeChange> = []
          let cursor: string | undefined
          for (let page = 0; page < config.maxPages; page++) {
            const r = yield* rest.eventFeeChanges({
              event_ticker: m.eventId,
              limit: 1000,
              ...(cursor ? { cursor } : {})
            })
            changes.push(...r.event_fee_changes.filter((c) => c.event_ticker === m.eventId))
            cursor = r.cursor
            if (!cursor) break
          }
          event = { at: t, changes }
          eventFees.set(m.eventId, event)
        }
        const override = yield* Either.mapLeft(W.feeOverride(event.changes, t), unreadable("event fee change"))
        return W.marketFees(override ?? series.schedule)
      })

    const fetchOrder = (venueOrderId: string) =>
      Effect.gen(function* () {
        const r = yield* rest.order(venueOrderId)
        const o = yield* Either.mapLeft(W.toOrder(r.order, yield* now), unreadable("order"))
        return remember(o)
      })

    /** The fills of an order, every page, as events to hand back with the answer (the desk books each trade once). */
    const fillsOf = (venueOrderId: string) =>
      Effect.gen(function* () {
        const raw = yield* allPages("fills", (cursor) =>
          Effect.map(rest.fills({ order_id: venueOrderId, limit: 1000, ...(cursor ? { cursor } : {}) }), (r) => ({
            items: r.fills,
            cursor: r.cursor
          }))
        )
        return raw.flatMap((f): Array<VenueEvent> => {
          const x = W.toFill(f)
          return Either.isRight(x) ? [{ _tag: "Fill", fill: x.right }] : []
        })
      })

    /** A fresh client id for an amended order: the venue may refuse the current one as `updated_client_order_id`. */
    const amendedClientId = (_current: string) => Effect.sync(() => randomUUID())

    const placeOrder = (r: PlaceOrderRequest): Effect.Effect<VenueOrder, VenueError> =>
      Effect.gen(function* () {
        const rule = placementRule(r)
        if (rule !== undefined) return yield* Effect.fail(venueError("rejected", rule, false))
        // every check before the placement leaves: a failure here certainly placed nothing
        const k = yield* Effect.mapError(kMarket(r.nativeId), (e) => new VenueError({ ...e, sent: false }))
        if (k === undefined) return yield* Effect.fail(venueError("rejected", `market ${r.nativeId} not found`, false))
        if (W.isHalted(k.status)) return yield* Effect.fail(venueError("market_closed", `market is ${k.status}`, false))
        const grid = W.tickGrid(k)
        if (!W.onGrid(grid, r.price)) {
          const { below, above } = W.nearestOnGrid(grid, r.price)
          return yield* Effect.fail(
            venueError(
              "rejected",
              `price ${F.format(r.price)} is off the market's tick grid; nearest valid: ${[below, above]
                .filter((p) => p !== undefined)
                .map((p) => F.format(p))
                .join(", ")}`,
              false
            )
          )
        }
        held.add(r.nativeId)
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
              ? {
                  client_order_id: before.clientOrderId,
                  updated_client_order_id: yield* amendedClientId(before.clientOrderId)
                }
              : {})
          })
        }
        const after = yield* fetchOrder(venueOrderId)
        return remember({ ...after, queuePriorityPreserved: priceSame && amount <= before.amount })
      })

    /** An order with the fills it has had, for the desk to catch up on (it skips fills it knows). */
    /** An order with the fills it has had, for the desk to catch up on (it skips fills it knows). */
    const withFills = (o: VenueOrder | undefined) =>
      o === undefined || o.filled === 0
        ? Effect.succeed(o)
        : Effect.map(fillsOf(o.venueOrderId), (events): VenueOrder => ({ ...o, events }))

    /**
     * The documented look-up of an order by its client id: the account's orders in the request's market (every
     * market without one), every page; `undefined` only once every page was read without it.
     */
    const orderByClientId = (clientOrderId: string, request?: PlaceOrderRequest) =>
      Effect.flatMap(findByClientId(clientOrderId, request?.nativeId), withFills)

    const findByClientId = (clientOrderId: string, ticker: string | undefined) =>
      Effect.gen(function* () {
        const id = byClientId.get(clientOrderId)
        if (id !== undefined) {
          const o = yield* orderById(id)
          if (o !== undefined) return o
        }
        let cursor: string | undefined
        for (let page = 0; page < config.maxPages; page++) {
          const r = yield* rest.orders({ limit: 1000, ...(ticker ? { ticker } : {}), ...(cursor ? { cursor } : {}) })
          const t = yield* now
          for (const k of r.orders) {
            const o = W.toOrder(k, t)
            if (Either.isRight(o)) remember(o.right)
          }
          const found = r.orders.find((o) => o.client_order_id === clientOrderId)
          if (found !== undefined) {
            const o = orders.get(found.order_id)
            if (o === undefined)
              return yield* Effect.fail(venueError("unavailable", `order ${found.order_id} is unreadable`))
            return o
          }
          cursor = r.cursor
          if (!cursor) return undefined
        }
        return yield* Effect.fail(
          venueError("unavailable", `no answer on client order id ${clientOrderId} within ${config.maxPages} pages`)
        )
      })

    /** One order by the venue's id whatever its state; undefined when the venue has none. */
    const orderById = (venueOrderId: string): Effect.Effect<VenueOrder | undefined, VenueError> =>
      fetchOrder(venueOrderId).pipe(
        Effect.map((o): VenueOrder | undefined => o),
        Effect.catchIf(
          (e) => e.kind === "rejected" && /not.found|404/i.test(e.reason),
          () => Effect.succeed(undefined)
        )
      )

    /** Reads every page of a paged route; fails when the pages run past the bound (the answer would be partial). */
    const allPages = <A>(
      what: string,
      page: (
        cursor: string | undefined
      ) => Effect.Effect<{ readonly items: ReadonlyArray<A>; readonly cursor?: string | undefined }, VenueError>
    ) =>
      Effect.gen(function* () {
        const out: Array<A> = []
        let cursor: string | undefined
        for (let n = 0; n < config.maxPages; n++) {
          const r = yield* page(cursor)
          out.push(...r.items)
          cursor = r.cursor
          if (!cursor || r.items.length === 0) return out
        }
        return yield* Effect.fail(venueError("unavailable", `${what}: more than ${config.maxPages} pages`))
      })

    /** Every own fill since `since` (ms), every page, oldest first. */
    const fillsSince = (since: number) =>
      Effect.gen(function* () {
        const raw = yield* allPages("fills", (cursor) =>
          Effect.map(
            rest.fills({ limit: 1000, min_ts: Math.floor(since / 1000), ...(cursor ? { cursor } : {}) }),
            (r) => ({ items: r.fills, cursor: r.cursor })
          )
        )
        const out: Array<VenueFill> = []
        for (const f of raw) {
          const fill = yield* Either.mapLeft(W.toFill(f), unreadable("fill"))
          if (fill.ts >= since) out.push(fill)
        }
        return out.sort((a, b) => a.ts - b.ts || (a.tradeId < b.tradeId ? -1 : a.tradeId > b.tradeId ? 1 : 0))
      })

    /** The account's settlements since `since` (ms), every page, oldest first. */
    const settlementsSince = (since: number) =>
      Effect.gen(function* () {
        const raw = yield* allPages("settlements", (cursor) =>
          Effect.map(
            rest.settlements({ limit: 1000, min_ts: Math.floor(since / 1000), ...(cursor ? { cursor } : {}) }),
            (r) => ({ items: r.settlements, cursor: r.cursor })
          )
        )
        const out: Array<{ readonly nativeId: string; readonly payout: F.Fixed; readonly ts: number }> = []
        for (const x of raw) {
          const settled = yield* Either.mapLeft(W.toSettlement(x), unreadable("settlement"))
          if (settled.ts >= since) out.push(settled)
        }
        return out.sort((a, b) => a.ts - b.ts)
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

    // The socket: one per account, when there is an account (the venue authenticates every connection).
    let stream: StreamHandle | undefined
    const wsPath = new URL(config.wsUrl).pathname
    const startedAt = yield* now
    /** Results stated by `determined` messages, for the `settled` message that follows. */
    const determined = new Map<string, F.Fixed>()
    let lastFillTs: number | undefined
    /** Since when the socket was not to be trusted (a drop, a silence), until it is back with fresh snapshots. */
    let lostAt: number | undefined
    let recovering = false

    const streamEvent = (state: "stale" | "resumed" | "resync") =>
      Effect.gen(function* () {
        const t = yield* now
        const status = stream === undefined ? undefined : yield* stream.status
        const last = status?.lastMessageAt ?? null
        yield* PubSub.publish(events, {
          _tag: "Stream",
          channel: "socket",
          state,
          lastMessageAgeMs: last === null ? null : Math.max(0, t - last),
          ts: t
        })
      })

    /**
     * What the venue did while the socket could not be trusted: a `resync` for the desk, then orders known open and
     * every fill since `since` read back and published (the desk books each trade id once).
     */
    const reconcile = (since: number, why: string) =>
      Effect.gen(function* () {
        yield* Effect.logWarning(`kalshi: reading orders and fills back since ${since} (${why})`)
        yield* streamEvent("resync")
        for (const o of [...orders.values()].filter((x) => x.status === "open")) {
          const read = yield* Effect.either(orderById(o.venueOrderId))
          if (Either.isRight(read) && read.right !== undefined)
            yield* PubSub.publish(events, { _tag: "Order", order: read.right })
        }
        const fills = yield* Effect.either(fillsSince(since))
        if (Either.isLeft(fills)) yield* Effect.logError(`kalshi: fills could not be read back: ${fills.left.reason}`)
        else for (const fill of fills.right) yield* PubSub.publish(events, { _tag: "Fill", fill })
      })

    /** Where a read-back after an unreadable message starts: a second before the last fill seen, else the start. */
    const sinceLastFill = Effect.sync(() => Math.max(0, (lastFillTs ?? startedAt) - 1000))

    /** A market resolved: its payout from the message, the `determined` one before it, or the market read again. */
    const settled = (ticker: string, stated: F.Fixed | undefined, ts: number) =>
      Effect.gen(function* () {
        let payout = stated ?? determined.get(ticker)
        if (payout === undefined && held.has(ticker)) {
          const k = yield* Effect.either(rest.market(ticker))
          if (Either.isRight(k)) {
            const m = k.right.market
            payout = W.payoutOf(
              m.result,
              m.result === "scalar" || m.result === "" ? (m.settlement_value_dollars ?? undefined) : undefined
            )
          }
        }
        determined.delete(ticker)
        if (payout === undefined) return
        yield* PubSub.publish(events, { _tag: "Settled", nativeId: ticker, payout, ts })
      })

    const resumed = Effect.suspend(() => {
      recovering = false
      return streamEvent("resumed")
    })

    if (config.credentials !== undefined) {
      const creds = config.credentials
      stream = yield* connect({
        url: config.wsUrl,
        headers: Effect.map(now, (t) => authHeaders(creds.keyId, creds.key, t, "GET", wsPath)),
        tickers: [],
        privateChannels: true,
        idleTimeout: `${config.streamIdleMs} millis`,
        yesPrice: config.yesPrice
      })
      const handle = stream
      const step = (o: StreamOutput) =>
        Effect.gen(function* () {
          switch (o._tag) {
            case "Book":
              yield* PubSub.publish(events, { _tag: "Book", nativeId: o.ticker, ts: o.book.ts })
              break
            case "Trade":
              yield* PubSub.publish(events, { _tag: "Trade", nativeId: o.ticker, price: o.trade.price, ts: o.trade.ts })
              break
            case "Fill":
              held.add(o.fill.nativeId)
              lastFillTs = Math.max(lastFillTs ?? 0, o.fill.ts)
              yield* PubSub.publish(events, { _tag: "Fill", fill: o.fill })
              break
            case "Order":
              held.add(o.order.nativeId)
              remember(o.order)
              yield* PubSub.publish(events, { _tag: "Order", order: o.order })
              break
            case "OrderUnknown": {
              // not terminal: the order is read again; while the venue cannot say, the desk reconciles
              const read = yield* Effect.either(fetchOrder(o.orderId))
              if (Either.isRight(read)) yield* PubSub.publish(events, { _tag: "Order", order: read.right })
              else yield* reconcile(yield* sinceLastFill, `order ${o.orderId} in status unknown`)
              break
            }
            case "Gap":
              yield* Effect.logWarning(
                `kalshi: ${o.channel} (sid ${o.sid}) lost messages (expected seq ${o.expected}, got ${o.got})` +
                  (o.tickers.length > 0 ? `; fresh snapshots asked for ${o.tickers.join(", ")}` : "")
              )
              if (o.channel === "market_lifecycle_v2") {
                // a lost lifecycle message may have changed any market: every market is read again
                known.clear()
                yield* Ref.set(catalog, undefined)
              }
              break
            case "Stale":
              yield* Effect.logWarning(`kalshi: socket silent for ${o.silentMs} ms; reopening it`)
              lostAt ??= yield* now
              yield* streamEvent("stale")
              break
            case "Disconnected":
              lostAt ??= yield* now
              yield* Effect.logWarning(`kalshi: socket ${o.reason}; reconnecting in ${o.retryInMs} ms`)
              break
            case "Connected": {
              const since = lostAt
              lostAt = undefined
              if (o.attempt > 0 && since !== undefined) {
                recovering = true
                yield* reconcile(since - 1000, "the socket reopened")
                // without markets streamed there is no snapshot to wait for
                if ((yield* handle.markets).length === 0) yield* resumed
              }
              break
            }
            case "Fresh":
              if (recovering) yield* resumed
              break
            case "Lifecycle": {
              // one market changed: that market alone is read again on next use (the channel carries every
              // market of the venue: only those the catalog lists are remembered as changed)
              known.delete(o.ticker)
              if ((yield* Ref.get(catalog))?.byTicker.has(o.ticker) === true) changed.add(o.ticker)
              if (o.event === "determined") {
                const payout = W.payoutOf(
                  o.result,
                  o.result === "yes" || o.result === "no" ? undefined : o.settlementValue
                )
                if (payout !== undefined) determined.set(o.ticker, payout)
                // results wait for their `settled` message; bounded, the oldest go first
                if (determined.size > 10_000) determined.delete(determined.keys().next().value!)
              }
              if (o.event === "settled") {
                const payout =
                  o.result !== undefined || o.settlementValue !== undefined
                    ? W.payoutOf(o.result, o.result === "yes" || o.result === "no" ? undefined : o.settlementValue)
                    : undefined
                yield* settled(o.ticker, payout, o.ts)
              }
              break
            }
            case "FeeUpdate":
              eventFees.delete(o.eventTicker)
              break
            case "Resubscribed":
              yield* Effect.logWarning(`kalshi: ${o.channel} ended with terminal error ${o.code}; subscribed again`)
              if ((["fill", "user_orders"] as ReadonlyArray<string>).includes(o.channel))
                yield* reconcile(yield* sinceLastFill, `${o.channel} was subscribed again`)
              break
            case "Unreadable":
              if (o.trading) {
                yield* Effect.logError(`kalshi: unreadable ${o.type} message: ${o.reason}`)
                yield* reconcile(yield* sinceLastFill, `an unreadable ${o.type} message`)
              }
              break
            case "VenueError":
              yield* Effect.logWarning(`kalshi: socket error ${String(o.code)}: ${o.message}`)
              break
            default:
              break
          }
        })
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(handle.outputs), step)))
    }

    const venue: RemoteVenue<ReturnType<typeof kalshiCapabilities>> = {
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
      orderById: trading ? orderById : () => notTrading(),
      fillsSince: trading ? fillsSince : () => notTrading(),
      settlementsSince: trading ? settlementsSince : () => notTrading(),
      streams: stream === undefined ? Effect.succeed([]) : Effect.map(stream.status, (x) => [x]),
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
