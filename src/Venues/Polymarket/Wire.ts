/** Polymarket's own records (Gamma catalog, CLOB book, Data API trades) as schemas, and their mapping to ours. */
import { Either, ParseResult, Schema } from "effect"
import * as F from "../../Domain/Fixed.ts"
import type { MarketFees } from "../../Domain/Fees.ts"
import type { Book, BookLevel, Market, MarketStatus, Trade } from "../../Domain/Market.ts"

export const VENUE = "polymarket"

/** A decimal the venue sends as a JSON number or a string ("0.01", 0.01, "5", 5), read exactly into millionths. */
export const Decimal = Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number), Schema.Number, {
  strict: true,
  decode: (x, _, ast) => {
    const text = typeof x === "number" ? decimalText(x) : x.trim()
    const v = text === undefined ? undefined : F.parse(text)
    return v === undefined
      ? ParseResult.fail(new ParseResult.Type(ast, x, "not a decimal with at most six places"))
      : ParseResult.succeed(v as number)
  },
  encode: (v) => ParseResult.succeed(F.format(v as F.Fixed))
})

/** The shortest text of a finite JSON number in plain (non-exponent) form, or undefined. */
const decimalText = (x: number): string | undefined => {
  if (!Number.isFinite(x)) return undefined
  const s = String(x)
  if (!s.includes("e")) return s
  const fixed = x.toFixed(7)
  return Number(fixed) === x ? fixed.replace(/0+$/, "").replace(/\.$/, "") : undefined
}

/** A JSON-encoded array of strings inside a string field (`"[\"Yes\", \"No\"]"`), as Gamma sends outcomes and tokens. */
export const JsonStrings = Schema.parseJson(Schema.Array(Schema.String))

/** The fee schedule Gamma attaches to a market: `rate × size × (p × (1 − p))^exponent`, paid by takers when `takerOnly`. */
export const GammaFeeSchedule = Schema.Struct({
  exponent: Schema.optional(Schema.Number),
  rate: Schema.optional(Decimal),
  takerOnly: Schema.optional(Schema.Boolean),
  rebateRate: Schema.optional(Decimal)
})

export const GammaTag = Schema.Struct({ label: Schema.optional(Schema.String), slug: Schema.optional(Schema.String) })

const Fields = {
  id: Schema.String,
  question: Schema.optional(Schema.String),
  conditionId: Schema.optional(Schema.String),
  slug: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  groupItemTitle: Schema.optional(Schema.String),
  startDate: Schema.optional(Schema.String),
  endDate: Schema.optional(Schema.String),
  outcomes: Schema.optional(JsonStrings),
  outcomePrices: Schema.optional(JsonStrings),
  clobTokenIds: Schema.optional(JsonStrings),
  active: Schema.optional(Schema.Boolean),
  closed: Schema.optional(Schema.Boolean),
  archived: Schema.optional(Schema.Boolean),
  acceptingOrders: Schema.optional(Schema.Boolean),
  enableOrderBook: Schema.optional(Schema.Boolean),
  orderPriceMinTickSize: Schema.optional(Decimal),
  orderMinSize: Schema.optional(Decimal),
  bestBid: Schema.optional(Schema.NullOr(Decimal)),
  bestAsk: Schema.optional(Schema.NullOr(Decimal)),
  lastTradePrice: Schema.optional(Schema.NullOr(Decimal)),
  negRisk: Schema.optional(Schema.Boolean),
  negRiskMarketID: Schema.optional(Schema.String),
  feesEnabled: Schema.optional(Schema.Boolean),
  makerBaseFee: Schema.optional(Schema.Number),
  takerBaseFee: Schema.optional(Schema.Number),
  feeType: Schema.optional(Schema.NullOr(Schema.String)),
  feeSchedule: Schema.optional(Schema.NullOr(GammaFeeSchedule)),
  umaResolutionStatus: Schema.optional(Schema.String),
  closedTime: Schema.optional(Schema.NullOr(Schema.String)),
  /** `"v2"` for a market of the venue's second protocol: its tokens are `positionIds`, its exchange version 3. */
  version: Schema.optional(Schema.NullOr(Schema.String)),
  positionIds: Schema.optional(Schema.NullOr(JsonStrings))
}

/** The event a market belongs to, as embedded in a Gamma market. */
export const GammaEventRef = Schema.Struct({
  id: Schema.String,
  slug: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(GammaTag))
})

/** A Gamma market (`GET /markets`, and embedded in events). Unlisted fields are ignored. */
export const GammaMarket = Schema.Struct({ ...Fields, events: Schema.optional(Schema.Array(GammaEventRef)) })
export type GammaMarket = typeof GammaMarket.Type

/** A Gamma event with its markets (`GET /events`, `/events/keyset`, `/public-search`). */
export const GammaEvent = Schema.Struct({
  id: Schema.String,
  slug: Schema.optional(Schema.String),
  title: Schema.optional(Schema.String),
  category: Schema.optional(Schema.String),
  tags: Schema.optional(Schema.Array(GammaTag)),
  markets: Schema.optional(Schema.Array(GammaMarket))
})
export type GammaEvent = typeof GammaEvent.Type

export const GammaMarkets = Schema.Array(GammaMarket)

/** A keyset page of events: `next_cursor` absent on the last page. */
export const GammaEventsPage = Schema.Struct({
  events: Schema.Array(GammaEvent),
  next_cursor: Schema.optional(Schema.NullOr(Schema.String))
})

/** `GET /public-search`. */
export const GammaSearch = Schema.Struct({
  events: Schema.optional(Schema.NullOr(Schema.Array(GammaEvent))),
  pagination: Schema.optional(Schema.Struct({ hasMore: Schema.Boolean, totalResults: Schema.optional(Schema.Number) }))
})

export const ClobLevel = Schema.Struct({ price: Decimal, size: Decimal })

/** The CLOB's book of one token (`GET /book?token_id=`), and the `book` message of the market channel. */
export const ClobBook = Schema.Struct({
  market: Schema.String,
  asset_id: Schema.String,
  timestamp: Schema.Union(Schema.String, Schema.Number),
  hash: Schema.optional(Schema.String),
  bids: Schema.Array(ClobLevel),
  asks: Schema.Array(ClobLevel),
  min_order_size: Schema.optional(Decimal),
  tick_size: Schema.optional(Decimal),
  neg_risk: Schema.optional(Schema.Boolean),
  last_trade_price: Schema.optional(Schema.String)
})
export type ClobBook = typeof ClobBook.Type

/** A public trade from the Data API (`GET /trades?market=`): numbers, the outcome token traded, the taker's side. */
export const DataTrade = Schema.Struct({
  proxyWallet: Schema.optional(Schema.String),
  side: Schema.Literal("BUY", "SELL"),
  asset: Schema.String,
  conditionId: Schema.String,
  size: Decimal,
  price: Decimal,
  timestamp: Schema.Number,
  outcome: Schema.optional(Schema.String),
  outcomeIndex: Schema.optional(Schema.Number),
  transactionHash: Schema.optional(Schema.String)
})
export type DataTrade = typeof DataTrade.Type
export const DataTrades = Schema.Array(DataTrade)

/** The CLOB's price history (`GET /prices-history`): unix seconds and the price as a number. */
export const ClobPriceHistory = Schema.Struct({
  history: Schema.Array(Schema.Struct({ t: Schema.Number, p: Decimal }))
})

/** The venue's fees on one market, as Gamma states them. */
export interface PolymarketFees {
  readonly enabled: boolean
  /** Gamma's `feeType` (e.g. `economics_fees`): the category schedule the market falls under. */
  readonly type: string | null
  readonly rate: F.Fixed
  readonly exponent: number
  readonly takerOnly: boolean
  readonly rebateRate: F.Fixed
  readonly makerBaseFeeBps: number
  readonly takerBaseFeeBps: number
}

/** Our record of a Polymarket market: the venue-neutral market plus what trading on it needs. */
export interface PolymarketMarket extends Market {
  readonly gammaId: string
  readonly slug: string
  /** The token bought for YES (the outcome named "Yes", else the first) and the other one. */
  readonly yesToken: string
  readonly noToken: string
  readonly yesOutcome: string
  readonly noOutcome: string
  readonly negRisk: boolean
  /** The smallest order size the CLOB accepts, in shares. */
  readonly minSize: F.Fixed
  readonly fees: PolymarketFees
  readonly acceptingOrders: boolean
  /** The venue's protocol the market runs on: `2` trades other token ids on the version-3 exchange. */
  readonly protocol: 1 | 2
  /** When the market closed (ms), when Gamma says. */
  readonly closedAt: number | null
}

/** Shares trade in hundredths. */
export const LOT = F.of("0.01")
const DEFAULT_TICK = F.of("0.01")

const isoMs = (text: string | undefined): number => {
  if (text === undefined || text === "") return 0
  const ms = Date.parse(text)
  return Number.isFinite(ms) ? ms : 0
}

/** The index of the YES leg: the outcome named "Yes" (any case), else the first. */
export const yesIndex = (outcomes: ReadonlyArray<string>): number => {
  const i = outcomes.findIndex((o) => o.trim().toLowerCase() === "yes")
  return i < 0 ? 0 : i
}

/**
 * Maps a Gamma market to ours; undefined for a market with no order book yet (no condition id or no two tokens),
 * which cannot be quoted or traded.
 */
const quoted = (x: number | null | undefined): F.Fixed | null =>
  x === undefined || x === null || x <= 0 || x >= F.ONE ? null : (x as F.Fixed)

export const toMarket = (
  m: GammaMarket,
  event?: GammaEvent | typeof GammaEventRef.Type
): PolymarketMarket | undefined => {
  const protocol = m.version === "v2" && (m.positionIds?.length ?? 0) === 2 ? 2 : 1
  const tokens = protocol === 2 ? m.positionIds! : (m.clobTokenIds ?? [])
  const outcomes = m.outcomes ?? ["Yes", "No"]
  if (m.conditionId === undefined || m.conditionId === "" || tokens.length !== 2 || outcomes.length !== 2) {
    return undefined
  }
  const yes = yesIndex(outcomes)
  const no = 1 - yes
  const ev = event ?? m.events?.[0]
  const prices = (m.outcomePrices ?? []).map((p) => F.parse(p))
  let status: MarketStatus = m.active === true && m.closed !== true && m.archived !== true ? "open" : "closed"
  let result: "yes" | "no" | null = null
  if (m.closed === true && prices.length === 2) {
    if (prices[yes] === F.ONE && prices[no] === F.ZERO) result = "yes"
    else if (prices[no] === F.ONE && prices[yes] === F.ZERO) result = "no"
    if (result !== null) status = "settled"
  }
  const schedule = m.feeSchedule ?? undefined
  const fees: PolymarketFees = {
    enabled: m.feesEnabled === true,
    type: m.feeType ?? null,
    rate: (schedule?.rate ?? F.ZERO) as F.Fixed,
    exponent: schedule?.exponent ?? 1,
    takerOnly: schedule?.takerOnly ?? true,
    rebateRate: (schedule?.rebateRate ?? F.ZERO) as F.Fixed,
    makerBaseFeeBps: m.makerBaseFee ?? 0,
    takerBaseFeeBps: m.takerBaseFee ?? 0
  }
  const closedAt = isoMs(m.closedTime ?? undefined)
  return {
    venue: VENUE,
    nativeId: m.conditionId,
    eventId: ev?.id ?? "",
    title: m.question ?? ev?.title ?? m.conditionId,
    subtitle: m.groupItemTitle ?? "",
    category: m.category ?? ev?.category ?? ev?.tags?.find((t) => t.label !== undefined)?.label ?? "",
    status,
    openTime: isoMs(m.startDate),
    closeTime: isoMs(m.endDate),
    tick: (m.orderPriceMinTickSize ?? DEFAULT_TICK) as F.Fixed,
    lot: LOT,
    result,
    gammaId: m.id,
    slug: m.slug ?? "",
    yesToken: tokens[yes]!,
    noToken: tokens[no]!,
    yesOutcome: outcomes[yes]!,
    noOutcome: outcomes[no]!,
    negRisk: m.negRisk === true,
    minSize: (m.orderMinSize ?? F.fromInt(1)) as F.Fixed,
    acceptingOrders: m.acceptingOrders !== false && status === "open",
    // Gamma's quote is the first outcome's: ours only when that is the YES leg
    ...(yes === 0
      ? {
          quote: {
            bestBid: quoted(m.bestBid),
            bestAsk: quoted(m.bestAsk),
            last: quoted(m.lastTradePrice)
          }
        }
      : {}),
    fees,
    ...(feeScheduleOf(fees) === undefined ? {} : { feeSchedule: feeScheduleOf(fees)! }),
    protocol,
    closedAt: closedAt === 0 ? null : closedAt
  }
}

/** Fees are charged to 5 decimals of USDC. */
export const FEE_STEP = F.of("0.00001")

/**
 * The market's fees as the desk reserves them: `rate × contracts × p × (1 − p)`, takers only unless Gamma says makers
 * pay too. For an exponent above 1 this is an upper bound (p × (1 − p) ≤ ¼); a market with fees and an exponent below
 * 1 states none as data (undefined), and neither does a market without fees (zero).
 */
export const feeScheduleOf = (fees: PolymarketFees): MarketFees | undefined => {
  if (!fees.enabled || fees.rate === 0) return { taker: F.ZERO, maker: F.ZERO, step: FEE_STEP }
  if (fees.exponent < 1) return undefined
  return { taker: fees.rate, maker: fees.takerOnly ? F.ZERO : fees.rate, step: FEE_STEP }
}

/**
 * The fee the venue charged on one fill of `amount` shares at token price `price`, at the rate the trade reports
 * (`fee_rate_bps`): `amount × rate × (p × (1 − p))^exponent`, cut to 5 decimals as the venue charges it.
 */
export const fillFee = (rateBps: number, exponent: number, price: F.Fixed, amount: F.Fixed): F.Fixed => {
  if (!(rateBps > 0)) return F.ZERO
  const rate = F.div(F.fromInt(Math.round(rateBps)), F.fromInt(10_000), "down")
  const pq = F.mul(price, F.sub(F.ONE, price), "down")
  let curve = F.ONE
  for (let i = 0; i < Math.max(1, Math.round(exponent)); i++) curve = F.mul(curve, pq, "down")
  return F.roundTo(F.mul(F.mul(amount, rate, "down"), curve, "down"), FEE_STEP, "down")
}

/** Every tradable market of a list of events, in the events' order. */
export const marketsOfEvents = (events: ReadonlyArray<GammaEvent>): Array<PolymarketMarket> =>
  events.flatMap((e) => (e.markets ?? []).flatMap((m) => toMarket(m, e) ?? []))

/** Levels merged by price (the last one for a price wins), zero sizes dropped, best first. */
export const sortLevels = (
  levels: ReadonlyArray<{ readonly price: number; readonly size: number }>,
  side: "bids" | "asks"
): Array<BookLevel> => {
  const byPrice = new Map<number, number>()
  for (const l of levels) {
    if (l.size > 0) byPrice.set(l.price, l.size)
    else byPrice.delete(l.price)
  }
  const out = [...byPrice.entries()].map(([price, size]) => ({ price: price as F.Fixed, size: size as F.Fixed }))
  return out.sort(side === "bids" ? (a, b) => b.price - a.price : (a, b) => a.price - b.price)
}

/** Whole ms from the venue's timestamp (ms as digits or a number); 0 when unreadable. */
export const venueMs = (x: string | number): number => {
  const n = typeof x === "number" ? x : /^\d{1,16}$/.test(x) ? Number(x) : NaN
  return Number.isSafeInteger(n) && n >= 0 ? n : 0
}

/**
 * A token's CLOB book as our YES book: the YES token's book as it is (re-sorted best first: the venue sends it
 * best-last), the NO token's mirrored at 1 − p.
 */
export const toBook = (book: ClobBook, market: Pick<PolymarketMarket, "yesToken" | "noToken">): Book => {
  const own: Book = {
    ts: venueMs(book.timestamp),
    bids: sortLevels(book.bids, "bids"),
    asks: sortLevels(book.asks, "asks")
  }
  if (book.asset_id === market.yesToken) return own
  if (book.asset_id === market.noToken) {
    return {
      ts: own.ts,
      bids: own.asks.map((l) => ({ price: (F.ONE - l.price) as F.Fixed, size: l.size })),
      asks: own.bids.map((l) => ({ price: (F.ONE - l.price) as F.Fixed, size: l.size }))
    }
  }
  throw new Error(`book of token ${book.asset_id} is not one of this market's tokens`)
}

/**
 * A Data API trade as a trade of our YES leg: a trade of the NO token at p is a YES trade at 1 − p with the taker's
 * side turned (buying NO is selling YES). Undefined for a token of another market.
 */
export const toTrade = (t: DataTrade, market: Pick<PolymarketMarket, "yesToken" | "noToken">): Trade | undefined => {
  const isYes = t.asset === market.yesToken
  if (!isYes && t.asset !== market.noToken) return undefined
  const buy = t.side === "BUY"
  return {
    id: `${t.transactionHash ?? t.timestamp}:${t.asset.slice(-12)}:${t.proxyWallet ?? ""}`,
    ts: t.timestamp * 1000,
    price: (isYes ? t.price : F.ONE - t.price) as F.Fixed,
    amount: t.size as F.Fixed,
    takerSide: buy === isYes ? "buy" : "sell"
  }
}

/** Decodes an unknown JSON value with a schema, as an Either with the parse error's readable message. */
export const decode =
  <A, I>(schema: Schema.Schema<A, I>) =>
  (u: unknown): Either.Either<A, string> =>
    Either.mapLeft(Schema.decodeUnknownEither(schema)(u), (e) => ParseResult.TreeFormatter.formatErrorSync(e))
