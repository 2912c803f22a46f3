/** Kalshi's trading side: placements, cancels, amends, order and fill reads, settlements, balance and positions. */
import { Clock, Effect, Either, PubSub } from "effect"
import { randomUUID } from "node:crypto"
import * as F from "../../Domain/Fixed.ts"
import {
  type PlaceOrderRequest,
  VenueError,
  type VenueEvent,
  type VenueFill,
  type VenueOrder
} from "../../Services/VenueGateway.ts"
import type { KalshiCatalog } from "./Catalog.ts"
import { type CreateOrderBody, type KalshiRest, unreadable, venueError } from "./Rest.ts"
import type { KalshiConfig } from "./Settings.ts"
import * as W from "./Wire.ts"

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

/** Why Kalshi would refuse this placement before it is sent, if it would: its documented rules on order flags. */
export const placementRule = (r: PlaceOrderRequest): string | undefined =>
  r.reduceOnly && r.timeInForce !== "ioc"
    ? "reduce_only: Kalshi takes reduce_only only on an immediate-or-cancel order (time_in_force ioc)"
    : undefined

/** What the trading side needs: the REST client, the settings, the catalog (a market's grid) and the event hub. */
export interface TradingDeps {
  readonly rest: KalshiRest
  readonly config: KalshiConfig
  readonly catalog: KalshiCatalog
  readonly events: PubSub.PubSub<VenueEvent>
}

/** Builds the trading side of one account; it remembers the orders it saw for cancels, amends and look-ups. */
export const makeKalshiTrading = ({ rest, config, catalog, events }: TradingDeps) => {
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
      const k = yield* Effect.mapError(catalog.kMarket(r.nativeId), (e) => new VenueError({ ...e, sent: false }))
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
        const k = yield* catalog.kMarket(before.nativeId)
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

  /**
   * What the venue did while the socket could not be trusted: orders known open and every fill since `since` read
   * back and published (the desk books each trade id once).
   */
  const readBack = (since: number) =>
    Effect.gen(function* () {
      for (const o of [...orders.values()].filter((x) => x.status === "open")) {
        const read = yield* Effect.either(orderById(o.venueOrderId))
        if (Either.isRight(read) && read.right !== undefined)
          yield* PubSub.publish(events, { _tag: "Order", order: read.right })
      }
      const fills = yield* Effect.either(fillsSince(since))
      if (Either.isLeft(fills)) yield* Effect.logError(`kalshi: fills could not be read back: ${fills.left.reason}`)
      else for (const fill of fills.right) yield* PubSub.publish(events, { _tag: "Fill", fill })
    })

  /** Results stated by `determined` messages, for the `settled` message that follows. */
  const determined = new Map<string, F.Fixed>()

  /** A market's result was stated; it waits for its `settled` message (bounded, the oldest go first). */
  const resultDetermined = (ticker: string, payout: F.Fixed) => {
    determined.set(ticker, payout)
    if (determined.size > 10_000) determined.delete(determined.keys().next().value!)
  }

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

  return {
    placeOrder,
    cancelOrder,
    amendOrder,
    decreaseOrder,
    // one request cancels every resting order of the account; the venue answers 204 without a count
    cancelAll: Effect.as(rest.cancelAll, 0),
    orderByClientId,
    orderById,
    fetchOrder,
    fillsSince,
    settlementsSince,
    balance,
    positions,
    openOrders,
    readBack,
    /** The socket reported an own order: it is remembered and its market held. */
    sawOrder: (o: VenueOrder) => {
      held.add(o.nativeId)
      remember(o)
    },
    /** The socket reported an own fill: its market is held. */
    sawFill: (fill: VenueFill) => void held.add(fill.nativeId),
    resultDetermined,
    settled
  }
}

/** The trading side of one Kalshi account. */
export type KalshiTrading = ReturnType<typeof makeKalshiTrading>
