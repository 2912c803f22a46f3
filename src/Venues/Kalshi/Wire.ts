/** Kalshi's own records as schemas, and their exact conversion into our Domain records. */
import { Either, ParseResult, Schema } from "effect"
import { type MarketFees, quadraticFee } from "../../Domain/Fees.ts"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Market, MarketStatus, Side, Trade } from "../../Domain/Market.ts"
import { LadderBook } from "./Book.ts"
import type { VenueFill, VenueOrder, VenueOrderStatus, VenuePosition } from "../../Services/VenueGateway.ts"

/** The venue id Kalshi is served under. */
export const VENUE = "kalshi"

const HUNDRED = F.fromInt(100)
const CENT = F.of("0.01")

/** A Fixed held in a decoded record. */
export const FixedType = Schema.declare(
  (u: unknown): u is F.Fixed => typeof u === "number" && Number.isSafeInteger(u),
  {
    identifier: "Fixed"
  }
)

/** A fixed-point decimal string (`"0.5600"`, `"10.00"`) parsed exactly into millionths. */
export const FixedFromString = Schema.transformOrFail(Schema.String, FixedType, {
  strict: true,
  decode: (s, _, ast) => {
    const v = F.parse(s)
    return v === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, s, `not an exact decimal: ${s}`))
      : ParseResult.succeed(v)
  },
  encode: (x) => ParseResult.succeed(F.format(x))
})

/** A price in integer cents (the legacy fields), exact through division by 100. */
export const FixedFromCents = Schema.transformOrFail(Schema.Int, FixedType, {
  strict: true,
  decode: (c) => ParseResult.succeed(F.div(F.fromInt(c), HUNDRED)),
  encode: (x, _, ast) =>
    F.isMultipleOf(x, CENT)
      ? ParseResult.succeed(Math.round(x / 10_000))
      : ParseResult.fail(new ParseResult.Type(ast, x, "not a whole cent"))
})

/** A count as a fixed-point string or, in the legacy form, an integer. */
export const Count = Schema.Union(
  FixedFromString,
  Schema.transform(Schema.Int, FixedType, {
    strict: true,
    decode: (n) => F.fromInt(n),
    encode: (x) => Math.trunc(x / F.SCALE)
  })
)

/** A price as a dollar string or, in the legacy form, integer cents. */
export const Price = Schema.Union(FixedFromString, FixedFromCents)

const opt = Schema.optional
const optNull = <S extends Schema.Schema.Any>(s: S) => Schema.optional(Schema.NullOr(s))

/** One band of the tick grid: prices in [start, end] step by `step`. */
export const PriceRange = Schema.Struct({ start: FixedFromString, end: FixedFromString, step: FixedFromString })
export type PriceRange = typeof PriceRange.Type

export const KMarket = Schema.Struct({
  ticker: Schema.String,
  event_ticker: Schema.String,
  market_type: opt(Schema.String),
  title: opt(Schema.String),
  subtitle: opt(Schema.String),
  yes_sub_title: opt(Schema.String),
  no_sub_title: opt(Schema.String),
  status: Schema.String,
  open_time: opt(Schema.String),
  close_time: opt(Schema.String),
  result: opt(Schema.String),
  price_ranges: optNull(Schema.Array(PriceRange)),
  price_level_structure: opt(Schema.String),
  tick_size: opt(Schema.Int),
  fractional_trading_enabled: opt(Schema.Boolean),
  category: opt(Schema.String),
  yes_bid_dollars: opt(FixedFromString),
  yes_ask_dollars: opt(FixedFromString),
  no_bid_dollars: opt(FixedFromString),
  no_ask_dollars: opt(FixedFromString),
  last_price_dollars: opt(FixedFromString),
  yes_bid: opt(FixedFromCents),
  yes_ask: opt(FixedFromCents),
  last_price: opt(FixedFromCents),
  volume_fp: opt(FixedFromString),
  volume: opt(Schema.Int),
  open_interest_fp: opt(FixedFromString),
  exchange_index: opt(Schema.Int),
  settlement_value_dollars: optNull(FixedFromString)
})
export type KMarket = typeof KMarket.Type

export const KEvent = Schema.Struct({
  event_ticker: Schema.String,
  series_ticker: Schema.String,
  title: Schema.String,
  sub_title: opt(Schema.String),
  category: opt(Schema.String),
  mutually_exclusive: opt(Schema.Boolean),
  markets: optNull(Schema.Array(KMarket))
})
export type KEvent = typeof KEvent.Type

export const EventsResponse = Schema.Struct({ cursor: opt(Schema.String), events: Schema.Array(KEvent) })
export const EventResponse = Schema.Struct({ event: KEvent, markets: optNull(Schema.Array(KMarket)) })
export const MarketsResponse = Schema.Struct({ cursor: opt(Schema.String), markets: Schema.Array(KMarket) })
export const MarketResponse = Schema.Struct({ market: KMarket })

export const FeeType = Schema.Literal(
  "quadratic",
  "quadratic_with_maker_fees",
  "quadratic_with_combo_maker_fees",
  "flat"
)
export type FeeType = typeof FeeType.Type

export const KSeries = Schema.Struct({
  ticker: Schema.String,
  title: Schema.String,
  category: opt(Schema.String),
  fee_type: FeeType,
  fee_multiplier: Schema.Number
})
export type KSeries = typeof KSeries.Type
export const SeriesResponse = Schema.Struct({ series: KSeries })

/** A ladder level `[price, count]` in any of the venue's three forms. */
const Level = Schema.Tuple(Price, Count)
const Ladder = Schema.Array(Level)
export type Ladder = ReadonlyArray<readonly [F.Fixed, F.Fixed]>

/** `GET /markets/{ticker}/orderbook`: bids of YES and bids of NO only. */
export const OrderbookResponse = Schema.Struct({
  orderbook_fp: opt(Schema.Struct({ yes_dollars: optNull(Ladder), no_dollars: optNull(Ladder) })),
  orderbook: opt(
    Schema.Struct({
      yes: optNull(Ladder),
      no: optNull(Ladder),
      yes_dollars: optNull(Ladder),
      no_dollars: optNull(Ladder)
    })
  )
})

export const KTrade = Schema.Struct({
  trade_id: Schema.String,
  ticker: Schema.String,
  created_time: Schema.String,
  yes_price_dollars: opt(FixedFromString),
  yes_price: opt(FixedFromCents),
  count_fp: opt(FixedFromString),
  count: opt(Schema.Int),
  taker_outcome_side: opt(Schema.Literal("yes", "no")),
  taker_side: opt(Schema.Literal("yes", "no")),
  taker_book_side: opt(Schema.Literal("bid", "ask"))
})
export type KTrade = typeof KTrade.Type
export const TradesResponse = Schema.Struct({ cursor: opt(Schema.String), trades: Schema.Array(KTrade) })

const Half = Schema.Literal("yes", "no")
/** The legacy `action` as the venue states it: an unknown action comes as `""`; the side is read from `book_side`. */
const Action = Schema.Literal("buy", "sell", "sell_partial", "sell_to_close", "")
const BookSide = Schema.Literal("bid", "ask")

/** An order as the read routes, the v1 routes and the `user_orders` channel report it. */
export const KOrder = Schema.Struct({
  order_id: Schema.String,
  client_order_id: opt(Schema.String),
  ticker: Schema.String,
  status: Schema.String,
  side: opt(Half),
  action: opt(Action),
  book_side: opt(BookSide),
  outcome_side: opt(Half),
  type: opt(Schema.String),
  yes_price_dollars: opt(FixedFromString),
  yes_price: opt(FixedFromCents),
  initial_count_fp: opt(FixedFromString),
  fill_count_fp: opt(FixedFromString),
  remaining_count_fp: opt(FixedFromString),
  initial_count: opt(Schema.Int),
  fill_count: opt(Schema.Int),
  remaining_count: opt(Schema.Int),
  taker_fill_cost_dollars: opt(FixedFromString),
  maker_fill_cost_dollars: opt(FixedFromString),
  taker_fees_dollars: opt(FixedFromString),
  maker_fees_dollars: opt(FixedFromString),
  created_time: opt(Schema.String),
  last_update_time: opt(Schema.String),
  last_updated_ts_ms: opt(Schema.Number),
  expiration_time: optNull(Schema.String),
  self_trade_prevention_type: opt(Schema.String)
})
export type KOrder = typeof KOrder.Type
export const OrdersResponse = Schema.Struct({ cursor: opt(Schema.String), orders: Schema.Array(KOrder) })
export const OrderResponse = Schema.Struct({ order: KOrder })

export const KFill = Schema.Struct({
  trade_id: Schema.String,
  fill_id: opt(Schema.String),
  order_id: Schema.String,
  client_order_id: opt(Schema.String),
  ticker: opt(Schema.String),
  market_ticker: opt(Schema.String),
  side: opt(Half),
  action: opt(Action),
  book_side: opt(BookSide),
  outcome_side: opt(Half),
  yes_price_dollars: opt(FixedFromString),
  yes_price: opt(FixedFromCents),
  count_fp: opt(FixedFromString),
  count: opt(Schema.Int),
  fee_cost: opt(FixedFromString),
  is_taker: Schema.Boolean,
  ts: opt(Schema.Number),
  ts_ms: opt(Schema.Number),
  created_time: opt(Schema.String)
})
export type KFill = typeof KFill.Type
export const FillsResponse = Schema.Struct({ cursor: opt(Schema.String), fills: Schema.Array(KFill) })

export const KMarketPosition = Schema.Struct({
  ticker: Schema.String,
  position_fp: opt(FixedFromString),
  position: opt(Schema.Int),
  market_exposure_dollars: opt(FixedFromString),
  realized_pnl_dollars: opt(FixedFromString),
  fees_paid_dollars: opt(FixedFromString),
  total_traded_dollars: opt(FixedFromString)
})
export type KMarketPosition = typeof KMarketPosition.Type
export const PositionsResponse = Schema.Struct({
  cursor: opt(Schema.String),
  market_positions: optNull(Schema.Array(KMarketPosition)),
  event_positions: optNull(Schema.Array(Schema.Struct({ event_ticker: Schema.String })))
})

/** `GET /portfolio/balance`: `balance` in cents, `balance_dollars` exact when sent. */
export const BalanceResponse = Schema.Struct({
  balance: Schema.Int,
  balance_dollars: opt(FixedFromString),
  portfolio_value: opt(Schema.Int),
  updated_ts: opt(Schema.Number)
})

const Bucket = Schema.Struct({ bucket_capacity: Schema.Number, refill_rate: Schema.Number })
export const AccountLimitsResponse = Schema.Struct({ usage_tier: Schema.String, read: Bucket, write: Bucket })

/** One market's settlement on the account (`GET /portfolio/settlements`). */
export const KSettlement = Schema.Struct({
  ticker: Schema.String,
  event_ticker: opt(Schema.String),
  market_result: Schema.String,
  yes_count_fp: opt(FixedFromString),
  no_count_fp: opt(FixedFromString),
  revenue: opt(Schema.Number),
  settled_time: Schema.String,
  fee_cost: opt(FixedFromString),
  /** Payout of one YES contract in cents. */
  value: optNull(Schema.Number)
})
export type KSettlement = typeof KSettlement.Type
export const SettlementsResponse = Schema.Struct({
  cursor: opt(Schema.String),
  settlements: Schema.Array(KSettlement)
})

/** An event-level fee override (`GET /events/fee_changes`): null type and multiplier clear it. */
export const KEventFeeChange = Schema.Struct({
  id: Schema.String,
  event_ticker: Schema.String,
  series_ticker: opt(Schema.String),
  fee_type_override: Schema.NullOr(Schema.String),
  fee_multiplier_override: Schema.NullOr(Schema.Number),
  scheduled_ts: Schema.String
})
export type KEventFeeChange = typeof KEventFeeChange.Type
export const EventFeeChangesResponse = Schema.Struct({
  cursor: opt(Schema.String),
  event_fee_changes: Schema.Array(KEventFeeChange)
})
export const QueuePositionResponse = Schema.Struct({ queue_position_fp: FixedFromString })

/** The v2 order routes answer with counts, not whole orders. */
export const CreateOrderV2Response = Schema.Struct({
  order_id: Schema.String,
  client_order_id: opt(Schema.String),
  fill_count: FixedFromString,
  remaining_count: FixedFromString,
  ts_ms: Schema.Number
})
export const BatchCreateOrdersV2Response = Schema.Struct({ orders: Schema.Array(CreateOrderV2Response) })
export const CancelOrderV2Response = Schema.Struct({
  order_id: Schema.String,
  client_order_id: opt(Schema.String),
  reduced_by: FixedFromString,
  ts_ms: Schema.Number
})
export const BatchCancelOrdersV2Response = Schema.Struct({ orders: Schema.Array(CancelOrderV2Response) })
export const AmendOrderV2Response = Schema.Struct({
  order_id: Schema.String,
  client_order_id: opt(Schema.String),
  ts_ms: Schema.Number
})
export const DecreaseOrderV2Response = Schema.Struct({
  order_id: Schema.String,
  remaining_count: FixedFromString,
  ts_ms: Schema.Number
})
export const OrderGroupResponse = Schema.Struct({
  contracts_limit_fp: opt(FixedFromString),
  is_auto_cancel_enabled: opt(Schema.Boolean),
  orders: Schema.Array(Schema.Unknown)
})
export const CreateOrderGroupResponse = Schema.Struct({ order_group_id: Schema.String })

const OhlcDollars = Schema.Struct({
  open_dollars: opt(FixedFromString),
  high_dollars: opt(FixedFromString),
  low_dollars: opt(FixedFromString),
  close_dollars: opt(FixedFromString)
})
export const CandlesticksResponse = Schema.Struct({
  ticker: Schema.String,
  candlesticks: Schema.Array(
    Schema.Struct({
      end_period_ts: Schema.Number,
      yes_bid: OhlcDollars,
      yes_ask: OhlcDollars,
      volume_fp: opt(FixedFromString),
      open_interest_fp: opt(FixedFromString)
    })
  )
})

/** An answer whose body is empty or not read (`204 No Content`). */
export const EmptyResponse = Schema.Struct({})

/** The venue's error body: `{"error": {"code", "message", "details"?}}`. */
export const ErrorResponse = Schema.Struct({
  error: Schema.Struct({ code: Schema.String, message: Schema.String, details: opt(Schema.Unknown) })
})

/** What a record of the venue failed to decode into. */
export const decodeEither = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { onExcessProperty: "ignore" })
  return (u: unknown): Either.Either<A, string> =>
    Either.mapLeft(decode(u), (e) => ParseResult.TreeFormatter.formatErrorSync(e))
}

// ---------------------------------------------------------------------------------------------------------------
// Conversion into our records

const ms = (iso: string | undefined): number => {
  if (iso === undefined || iso === "") return 0
  const t = Date.parse(iso)
  return Number.isFinite(t) ? t : 0
}

/** The tick grid of a market: `price_ranges` when sent, else the legacy `tick_size` in cents, else one cent. */
export const tickGrid = (m: KMarket): ReadonlyArray<PriceRange> => {
  if (m.price_ranges && m.price_ranges.length > 0) return m.price_ranges
  const step = m.tick_size !== undefined && m.tick_size > 0 ? F.div(F.fromInt(m.tick_size), HUNDRED) : CENT
  return [{ start: F.ZERO, end: F.ONE, step }]
}

/** Whether `price` lies strictly inside (0, 1) and on the grid of one of its bands. */
export const onGrid = (grid: ReadonlyArray<PriceRange>, price: F.Fixed): boolean =>
  price > 0 &&
  price < F.ONE &&
  grid.some((r) => price >= r.start && price <= r.end && F.isMultipleOf(F.sub(price, r.start), r.step))

/** The nearest valid prices below and above `price` (either may be absent at the ends of the grid). */
export const nearestOnGrid = (
  grid: ReadonlyArray<PriceRange>,
  price: F.Fixed
): { readonly below: F.Fixed | undefined; readonly above: F.Fixed | undefined } => {
  let below: F.Fixed | undefined
  let above: F.Fixed | undefined
  for (const r of grid) {
    const lo = F.add(r.start, F.roundTo(F.sub(F.min(F.max(price, r.start), r.end), r.start), r.step, "down"))
    const hi = F.add(r.start, F.roundTo(F.sub(F.min(F.max(price, r.start), r.end), r.start), r.step, "up"))
    for (const p of [lo, hi]) {
      if (p <= 0 || p >= F.ONE || p < r.start || p > r.end) continue
      if (p <= price && (below === undefined || p > below)) below = p
      if (p >= price && (above === undefined || p < above)) above = p
    }
  }
  return { below, above }
}

/** The finest step of the grid: the `tick` of our Market record (the grid itself decides what is valid). */
export const finestTick = (grid: ReadonlyArray<PriceRange>): F.Fixed =>
  grid.reduce((t, r) => (r.step > 0 && r.step < t ? r.step : t), F.ONE)

/** Kalshi's market lifecycle in our three statuses. */
export const marketStatus = (status: string): MarketStatus => {
  switch (status) {
    case "active":
    case "open":
      return "open"
    case "determined":
    case "amended":
    case "finalized":
    case "settled":
      return "settled"
    default:
      return "closed"
  }
}

/** Whether the venue refuses orders on a market in this status because it is paused or closed. */
export const isHalted = (status: string): boolean => marketStatus(status) !== "open"

export const toMarket = (m: KMarket, event?: KEvent): Market => ({
  venue: VENUE,
  nativeId: m.ticker,
  eventId: m.event_ticker,
  title: m.title && m.title !== "" ? m.title : (event?.title ?? m.ticker),
  subtitle: m.yes_sub_title ?? m.subtitle ?? event?.sub_title ?? "",
  category: m.category ?? event?.category ?? "",
  status: marketStatus(m.status),
  openTime: ms(m.open_time),
  closeTime: ms(m.close_time),
  tick: finestTick(tickGrid(m)),
  lot: m.fractional_trading_enabled === true ? CENT : F.ONE,
  result: m.result === "yes" || m.result === "no" ? m.result : null,
  quote: {
    bestBid: priced(m.yes_bid_dollars ?? m.yes_bid),
    bestAsk: priced(m.yes_ask_dollars ?? m.yes_ask),
    last: priced(m.last_price_dollars ?? m.last_price)
  }
})

/** A quoted price; Kalshi states an empty side as 0 (bid) or 1 (ask). */
const priced = (x: F.Fixed | undefined): F.Fixed | null => (x === undefined || x <= 0 || x >= F.ONE ? null : x)

/** Every market of a page of events, with the event's title and category where the market lacks them. */
export const marketsOfEvents = (events: ReadonlyArray<KEvent>): Array<Market> =>
  events.flatMap((e) => (e.markets ?? []).map((m) => toMarket(m, e)))

/**
 * The YES book from Kalshi's two bid ladders: YES bids are our bids; a NO bid at q is a YES ask at 1 − q.
 * Levels of the same price are summed; empty levels are dropped.
 */
export const bookFromLadders = (yes: Ladder, no: Ladder, ts: number): Book => {
  const book = new LadderBook()
  book.snapshot(yes, no, false)
  return book.book(ts)
}

export const toBook = (r: typeof OrderbookResponse.Type, ts: number): Book => {
  const fp = r.orderbook_fp
  const legacy = r.orderbook
  const yes = fp?.yes_dollars ?? legacy?.yes_dollars ?? legacy?.yes ?? []
  const no = fp?.no_dollars ?? legacy?.no_dollars ?? legacy?.no ?? []
  return bookFromLadders(yes, no, ts)
}

/** The side that took liquidity: a YES taker (or the bid side of the book) is our `buy`. */
const takerSide = (t: KTrade): Side =>
  (t.taker_outcome_side ?? t.taker_side) === "yes" ||
  (t.taker_outcome_side === undefined && t.taker_side === undefined && t.taker_book_side === "bid")
    ? "buy"
    : "sell"

export const toTrade = (t: KTrade): Either.Either<Trade, string> => {
  const price = t.yes_price_dollars ?? t.yes_price
  const amount = t.count_fp ?? (t.count !== undefined ? F.fromInt(t.count) : undefined)
  if (price === undefined || amount === undefined) return Either.left(`trade ${t.trade_id}: no price or count`)
  return Either.right({ id: t.trade_id, ts: ms(t.created_time), price, amount, takerSide: takerSide(t) })
}

/**
 * Our side of a Kalshi order or fill: the bid of the YES book (YES bought, or NO sold) is `buy`. `book_side` decides,
 * else `outcome_side`, else the legacy `side` and `action` (every `sell…` action sells).
 */
export const sideOf = (r: {
  readonly book_side?: "bid" | "ask" | undefined
  readonly outcome_side?: "yes" | "no" | undefined
  readonly side?: "yes" | "no" | undefined
  readonly action?: typeof Action.Type | undefined
}): Side => {
  if (r.book_side !== undefined) return r.book_side === "bid" ? "buy" : "sell"
  if (r.outcome_side !== undefined) return r.outcome_side === "yes" ? "buy" : "sell"
  const yes = r.side !== "no"
  const buy = r.action === undefined || !r.action.startsWith("sell")
  return yes === buy ? "buy" : "sell"
}

/** Whether a record states its direction in a way {@link sideOf} reads without guessing. */
export const sideStated = (r: {
  readonly book_side?: unknown
  readonly outcome_side?: unknown
  readonly side?: unknown
  readonly action?: string | undefined
}): boolean =>
  r.book_side !== undefined ||
  r.outcome_side !== undefined ||
  (r.side !== undefined && r.action !== undefined && r.action !== "")

/**
 * Kalshi's order statuses in ours. `unknown` (the venue does not yet know the order's state) is not terminal: it
 * reads as open while contracts remain, and the adapter reads the order again.
 */
export const orderStatus = (status: string, remaining: F.Fixed, expired: boolean): VenueOrderStatus => {
  switch (status) {
    case "resting":
    case "pending":
    case "unknown":
      return remaining > 0 ? "open" : "closed"
    case "executed":
      return "closed"
    case "canceled":
      return expired ? "expired" : "canceled"
    default:
      return "rejected"
  }
}

const count = (fp: F.Fixed | undefined, legacy: number | undefined): F.Fixed | undefined =>
  fp ?? (legacy !== undefined ? F.fromInt(legacy) : undefined)

/**
 * Our record of a Kalshi order. `cost` is the YES-price cost of what filled (Kalshi states the cost of the side
 * bought: a NO buy's cost becomes filled − cost); `fee` is taker plus maker fees.
 */
export const toOrder = (o: KOrder, now: number): Either.Either<VenueOrder, string> => {
  const price = o.yes_price_dollars ?? o.yes_price
  const filled = count(o.fill_count_fp, o.fill_count) ?? F.ZERO
  const remaining = count(o.remaining_count_fp, o.remaining_count)
  const initial =
    count(o.initial_count_fp, o.initial_count) ?? (remaining !== undefined ? F.add(filled, remaining) : undefined)
  if (price === undefined || initial === undefined) return Either.left(`order ${o.order_id}: no price or count`)
  const side = sideOf(o)
  const boughtCost = F.add(o.taker_fill_cost_dollars ?? F.ZERO, o.maker_fill_cost_dollars ?? F.ZERO)
  const cost = side === "buy" ? boughtCost : F.sub(filled, boughtCost)
  const left = remaining ?? F.sub(initial, filled)
  const expiresAt = o.expiration_time ? ms(o.expiration_time) : undefined
  return Either.right({
    venueOrderId: o.order_id,
    clientOrderId: o.client_order_id ?? "",
    nativeId: o.ticker,
    side,
    price,
    amount: initial,
    filled,
    status: orderStatus(o.status, left, expiresAt !== undefined && expiresAt > 0 && expiresAt <= now),
    averagePrice: filled > 0 ? F.div(cost, filled) : null,
    cost: filled > 0 ? cost : F.ZERO,
    fee: F.add(o.taker_fees_dollars ?? F.ZERO, o.maker_fees_dollars ?? F.ZERO),
    queuePriorityPreserved: null,
    updatedAt: o.last_updated_ts_ms ?? (ms(o.last_update_time) || ms(o.created_time))
  })
}

export const toFill = (f: KFill): Either.Either<VenueFill, string> => {
  const price = f.yes_price_dollars ?? f.yes_price
  const amount = count(f.count_fp, f.count)
  const ticker = f.market_ticker ?? f.ticker
  if (price === undefined || amount === undefined || ticker === undefined)
    return Either.left(`fill ${f.trade_id}: no price, count or ticker`)
  if (!sideStated(f)) return Either.left(`fill ${f.trade_id}: no book_side, outcome_side or readable action`)
  return Either.right({
    tradeId: f.trade_id,
    venueOrderId: f.order_id,
    clientOrderId: f.client_order_id ?? "",
    nativeId: ticker,
    side: sideOf(f),
    price,
    amount,
    fee: f.fee_cost ?? F.ZERO,
    liquidity: f.is_taker ? "taker" : "maker",
    ts: f.ts_ms ?? (f.ts !== undefined ? f.ts * 1000 : ms(f.created_time))
  })
}

/** A market position netted on the YES leg (negative = NO held). */
export type Position = VenuePosition

export const toPosition = (p: KMarketPosition): Position => ({
  nativeId: p.ticker,
  contracts: count(p.position_fp, p.position) ?? F.ZERO,
  exposure: p.market_exposure_dollars ?? null,
  realizedPnl: p.realized_pnl_dollars ?? null,
  feesPaid: p.fees_paid_dollars ?? null
})

/** Cash available, exact: `balance_dollars` when sent, else the legacy cents. */
export const toBalance = (b: typeof BalanceResponse.Type): F.Fixed =>
  b.balance_dollars ?? F.div(F.fromInt(b.balance), HUNDRED)

// ---------------------------------------------------------------------------------------------------------------
// Fees

/** A series' fee schedule, or an event's override of it. `type` is the venue's name (a type without a formula here has no rates). */
export interface FeeSchedule {
  readonly type: string
  readonly multiplier: F.Fixed
}

export const feeSchedule = (s: KSeries): Either.Either<FeeSchedule, string> => {
  const multiplier = F.parse(String(s.fee_multiplier))
  return multiplier === undefined
    ? Either.left(`series ${s.ticker}: fee_multiplier ${s.fee_multiplier} is not an exact decimal`)
    : Either.right({ type: s.fee_type, multiplier })
}

/**
 * The event-level override in force at `now` among an event's fee changes: the latest one scheduled at or before
 * `now`. `null` when none is in force or the latest clears it (the series' schedule applies); Left when unreadable.
 */
export const feeOverride = (
  changes: ReadonlyArray<KEventFeeChange>,
  now: number
): Either.Either<FeeSchedule | null, string> => {
  let latest: KEventFeeChange | undefined
  let latestAt = -Infinity
  for (const c of changes) {
    const at = ms(c.scheduled_ts)
    if (at <= now && at >= latestAt) {
      latest = c
      latestAt = at
    }
  }
  if (latest === undefined || latest.fee_type_override === null || latest.fee_multiplier_override === null)
    return Either.right(null)
  const multiplier = F.parse(String(latest.fee_multiplier_override))
  return multiplier === undefined
    ? Either.left(`event ${latest.event_ticker}: fee_multiplier_override is not an exact decimal`)
    : Either.right({ type: latest.fee_type_override, multiplier })
}

/**
 * What one YES contract of a resolved market pays: the venue's stated value where it gives one (a scalar or void
 * result), else 1 for `yes` and 0 for `no`; undefined when the result is not known yet.
 */
export const payoutOf = (result: string | undefined, value: F.Fixed | undefined): F.Fixed | undefined => {
  if (value !== undefined) return value
  if (result === "yes") return F.ONE
  if (result === "no") return F.ZERO
  return undefined
}

/** A settlement of the account as our record: the market, what one YES contract paid, and when. */
export const toSettlement = (
  s: KSettlement
): Either.Either<{ readonly nativeId: string; readonly payout: F.Fixed; readonly ts: number }, string> => {
  const value =
    typeof s.value === "number" && Number.isSafeInteger(s.value) ? F.div(F.fromInt(s.value), HUNDRED) : undefined
  const payout = payoutOf(s.market_result, s.market_result === "scalar" ? value : undefined)
  return payout === undefined
    ? Either.left(`settlement of ${s.ticker}: result ${s.market_result} without a value`)
    : Either.right({ nativeId: s.ticker, payout, ts: ms(s.settled_time) })
}

const TAKER_RATE = F.of("0.07")
/** Maker fees are a quarter of the taker rate, or half of it for the combo schedule. */
const MAKER_SHARE: Record<FeeType, F.Fixed | undefined> = {
  quadratic: F.ZERO,
  quadratic_with_maker_fees: F.of("0.25"),
  quadratic_with_combo_maker_fees: F.of("0.5"),
  flat: undefined
}
/** Kalshi rounds each fee up to a hundredth of a cent. */
const FEE_STEP = F.of("0.0001")

/**
 * The fee of a fill of `contracts` at YES price `price`: `rate × multiplier × C × P × (1 − P)`, rounded up to
 * $0.0001, with the maker rate a share of the taker one. Undefined for the `flat` schedule, whose table is
 * not published in the API description: the fills' own `fee_cost` is what counts.
 */
export const estimateFee = (
  schedule: FeeSchedule,
  contracts: F.Fixed,
  price: F.Fixed,
  liquidity: "maker" | "taker"
): F.Fixed | undefined => {
  const fees = marketFees(schedule)
  return fees === undefined
    ? undefined
    : quadraticFee(liquidity === "taker" ? fees.taker : fees.maker, price, contracts, fees.step)
}

/** A series' schedule as the rates and step of the quadratic formula; undefined for the unpublished `flat` one. */
export const marketFees = (schedule: FeeSchedule): MarketFees | undefined => {
  const makerShare = (MAKER_SHARE as Record<string, F.Fixed | undefined>)[schedule.type]
  if (makerShare === undefined) return undefined
  const taker = F.mul(TAKER_RATE, schedule.multiplier, "up")
  return { taker, maker: F.mul(taker, makerShare, "up"), step: FEE_STEP }
}
