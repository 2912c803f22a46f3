/** The deterministic simulated exchange behind the `sim` venue: seeded markets that move in discrete steps. */
import { quadraticFee } from "../../Domain/Fees.ts"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Market, Side, Trade } from "../../Domain/Market.ts"
import { SeededRandom } from "../../Domain/Random.ts"
import { generateMarkets, type SimMarketSpec } from "./Catalog.ts"
import { type Match, OrderBook, type OwnOrder, type Quote, type TimeInForce } from "./OrderBook.ts"

export type { TimeInForce } from "./OrderBook.ts"

const CENT = F.of("0.01")

/** The taker fee rate: 7% of p × (1 − p) per contract. */
export const TAKER_FEE_RATE = F.of("0.07")

/** `rate × amount × p × (1 − p)`, rounded up to the cent; zero when the rate is zero. */
export const tradingFee = (rate: F.Fixed, price: F.Fixed, amount: F.Fixed): F.Fixed =>
  quadraticFee(rate, price, amount, CENT)

/**
 * Fee on one taker fill: 0.07 × contracts × p × (1 − p), rounded up to the cent (10 at 0.50 → 0.175 → 0.18).
 * Exact for prices on the 0.01 grid and whole contracts (every intermediate product fits six places).
 */
export const takerFee = (price: F.Fixed, amount: F.Fixed): F.Fixed => tradingFee(TAKER_FEE_RATE, price, amount)

/** Fee rates; the fee of a fill is `rate × amount × p × (1 − p)` rounded up to the cent. */
export interface SimFees {
  /** Default 0.07. */
  readonly takerRate?: F.Fixed
  /** Default 0. */
  readonly makerRate?: F.Fixed
}

/** How to build a SimExchange; the same options always build the same exchange. */
export interface SimExchangeOptions {
  readonly seed: number
  /** Time the exchange starts at; markets move at `startMs + k × stepMs`, k = 1, 2, … */
  readonly startMs: number
  /** Time the catalog is generated for (default `startMs`). */
  readonly catalogStartMs?: number
  /** Number of markets (default 24). */
  readonly markets?: number
  /** Default 1000. */
  readonly stepMs?: number
  readonly fees?: SimFees
  /** The markets, in place of `generateMarkets(seed, catalogStartMs, markets)`. */
  readonly catalog?: ReadonlyArray<SimMarketSpec>
  /**
   * How long after it closes a market resolves (default two hours): YES or NO as its catalog `result` says, else
   * drawn from its own seeded stream, YES with the probability of its fair value at the close.
   */
  readonly settleAfterMs?: number
}

/** An own order as asked for; `tif` defaults to gtc, `clientOrderId` to the order id. */
export interface SimOrderRequest {
  readonly marketId: string
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly clientOrderId?: string
  readonly tif?: TimeInForce
  readonly postOnly?: boolean
  /** Required for gtd; a gtc order given one also expires then; ignored for ioc and fok. */
  readonly expiresAt?: number | null
}

/** Status of an own order; all but `open` are terminal. */
export type SimOrderStatus = "open" | "closed" | "canceled" | "expired" | "rejected"

/** An own order as the exchange reports it. */
export interface SimOrderView {
  readonly id: string
  readonly clientOrderId: string
  /** Native id of the market. */
  readonly marketId: string
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly filled: F.Fixed
  /** `amount − filled`. */
  readonly remaining: F.Fixed
  readonly status: SimOrderStatus
  readonly tif: TimeInForce
  readonly postOnly: boolean
  readonly expiresAt: number | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly avgPrice: F.Fixed | null
  /** Sum of price × amount over the fills. */
  readonly cost: F.Fixed
  readonly fee: F.Fixed
  /** After an amend: whether the order kept its queue place; null when never amended. */
  readonly queuePriorityPreserved: boolean | null
}

/** One execution of an own order. */
export interface SimFill {
  readonly orderId: string
  readonly clientOrderId: string
  readonly marketId: string
  readonly tradeId: string
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly side: Side
  readonly liquidity: "maker" | "taker"
  readonly fee: F.Fixed
  readonly ts: number
}

/** What the exchange reports, in the order it happened. */
export type SimEvent =
  | { readonly _tag: "Trade"; readonly marketId: string; readonly trade: Trade }
  | { readonly _tag: "Fill"; readonly marketId: string; readonly fill: SimFill }
  | { readonly _tag: "OrderUpdate"; readonly order: SimOrderView }
  | { readonly _tag: "BookChanged"; readonly marketId: string; readonly ts: number }
  /** The market resolved: a YES contract pays `payout`, a NO contract `1 − payout`. */
  | { readonly _tag: "Settled"; readonly marketId: string; readonly payout: F.Fixed; readonly ts: number }

/** Why a request was refused: the venue rejected it, no such market or order, market not open, bad input. */
export type SimRefusalCode = "order_rejected" | "not_found" | "market_closed" | "invalid"

/** An expected refusal. `order` is set when the exchange recorded the order as rejected. */
export interface SimRefused {
  readonly _tag: "Refused"
  readonly reason: string
  readonly code: SimRefusalCode
  readonly order?: SimOrderView
  /** Events from bringing the exchange up to the request's time. */
  readonly events: ReadonlyArray<SimEvent>
}

/** A request the exchange carried out. */
export interface SimAccepted {
  readonly _tag: "Accepted"
  readonly order: SimOrderView
  /** Events from bringing the exchange up to the request's time, then those of the request. */
  readonly events: ReadonlyArray<SimEvent>
}

/** The answer to every order request: carried out or refused (never an exception for an expected refusal). */
export type SimOrderResult = SimAccepted | SimRefused

const TRADE_HISTORY = 1000

/** `n` whole lots (an integer times an integer count of millionths: exact). */
const lots = (n: number, lot: F.Fixed): F.Fixed => (n * lot) as F.Fixed
const LEVELS = 5

interface MarketState {
  market: Market
  readonly book: OrderBook
  readonly rng: SeededRandom
  /** A linked market's fair-value walk: a stream shared by its key, walked as the complement when flipped. */
  readonly walk: { readonly rng: SeededRandom; readonly flipped: boolean } | undefined
  /** Fair value in ticks. */
  fv: number
  readonly anchor: number
  readonly maxTicks: number
  readonly trades: Array<Trade>
  tradeSeq: number
  bookTs: number
  /** When a market that closed while the exchange ran resolves; null while open or when nothing is due. */
  settleAt: number | null
}

interface OrderRecord {
  readonly state: OwnOrder
  readonly marketId: string
  readonly createdAt: number
  updatedAt: number
  cost: F.Fixed
  fee: F.Fixed
}

const refused = (
  code: SimRefusalCode,
  reason: string,
  events: ReadonlyArray<SimEvent>,
  order?: SimOrderView
): SimRefused =>
  order === undefined ? { _tag: "Refused", code, reason, events } : { _tag: "Refused", code, reason, events, order }

/**
 * A deterministic simulated exchange: one order book and one fair value per market, moved in steps at
 * `startMs + k × stepMs` by a seeded stream per market (fair-value walk, maker quotes re-laid around it, takers).
 * Same options and the same calls give the same state, events and ids. Time is always passed in.
 */
/**
 * Finished own orders the exchange still answers for (by id and client id, a repeated client id refused) once they
 * end: enough for a late question or a retried placement; older ones are forgotten, as a venue's history ends.
 */
export const FINISHED_KEPT = 1024

export class SimExchange {
  private readonly startMs: number
  private readonly stepMs: number
  private readonly takerRate: F.Fixed
  private readonly makerRate: F.Fixed
  private readonly states: Array<MarketState> = []
  private readonly byId = new Map<string, MarketState>()
  /** Own orders by id and client id: every open one, and the last `FINISHED_KEPT` to finish. */
  private readonly records = new Map<string, OrderRecord>()
  private readonly byClient = new Map<string, OrderRecord>()
  /** How many records there may be before finished ones are let go again. */
  private sweepAt = 2 * FINISHED_KEPT
  private stepsRun = 0
  private clock: number
  private orderSeq = 0
  private readonly settleAfterMs: number
  /** Every market resolved while the exchange ran, in the order they resolved. */
  private readonly resolved: Array<{ readonly nativeId: string; readonly payout: F.Fixed; readonly ts: number }> = []

  constructor(options: SimExchangeOptions) {
    const stepMs = options.stepMs ?? 1000
    if (!Number.isSafeInteger(stepMs) || stepMs <= 0)
      throw new RangeError(`stepMs must be a positive integer: ${stepMs}`)
    this.startMs = options.startMs
    this.stepMs = stepMs
    this.clock = options.startMs
    this.takerRate = options.fees?.takerRate ?? TAKER_FEE_RATE
    this.makerRate = options.fees?.makerRate ?? F.ZERO
    this.settleAfterMs = options.settleAfterMs ?? 2 * 3_600_000
    const specs =
      options.catalog ?? generateMarkets(options.seed, options.catalogStartMs ?? options.startMs, options.markets ?? 24)
    const fees = { taker: this.takerRate, maker: this.makerRate, step: CENT }
    for (const spec of specs) {
      const market: Market = { ...spec.market, feeSchedule: fees }
      const fv = Math.round(spec.fairValue / market.tick)
      const state: MarketState = {
        market,
        book: new OrderBook(),
        rng: SeededRandom.derive(options.seed, market.nativeId),
        walk:
          spec.link === undefined
            ? undefined
            : { rng: SeededRandom.derive(options.seed, `walk:${spec.link.key}`), flipped: spec.link.flipped },
        fv,
        anchor: fv,
        maxTicks: Math.round(F.ONE / market.tick),
        trades: [],
        tradeSeq: 0,
        bookTs: options.startMs,
        settleAt: null
      }
      if (market.status !== "settled") this.layQuotes(state)
      this.states.push(state)
      this.byId.set(market.nativeId, state)
    }
  }

  /** The exchange's clock: the latest time it was brought to. */
  now(): number {
    return this.clock
  }

  /** Every market, sorted by native id. */
  markets(): ReadonlyArray<Market> {
    return this.states.map((s) => s.market)
  }

  market(nativeId: string): Market | undefined {
    return this.byId.get(nativeId)?.market
  }

  /** The aggregated YES book (own and maker size summed), best first; empty for an unknown market. */
  book(nativeId: string, depth?: number): Book {
    const s = this.byId.get(nativeId)
    if (s === undefined) return { ts: this.clock, bids: [], asks: [] }
    return { ts: s.bookTs, bids: s.book.levels("buy", depth), asks: s.book.levels("sell", depth) }
  }

  /** Recent public trades, newest first (the last 1000 at most), optionally only those at or after `sinceMs`. */
  trades(nativeId: string, opts?: { readonly sinceMs?: number }): ReadonlyArray<Trade> {
    const s = this.byId.get(nativeId)
    if (s === undefined) return []
    const since = opts?.sinceMs ?? -Infinity
    const out: Array<Trade> = []
    for (let i = s.trades.length - 1; i >= 0 && out.length < TRADE_HISTORY; i--) {
      const t = s.trades[i]!
      if (t.ts < since) break
      out.push(t)
    }
    return out
  }

  /** The market's current fair value; throws for an unknown market. */
  fairValue(nativeId: string): F.Fixed {
    const s = this.byId.get(nativeId)
    if (s === undefined) throw new RangeError(`unknown sim market: ${nativeId}`)
    return (s.fv * s.market.tick) as F.Fixed
  }

  order(orderId: string): SimOrderView | undefined {
    const r = this.records.get(orderId)
    return r === undefined ? undefined : this.view(r)
  }

  orderByClientId(clientOrderId: string): SimOrderView | undefined {
    const r = this.byClient.get(clientOrderId)
    return r === undefined ? undefined : this.view(r)
  }

  /** Own orders still resting, oldest first. */
  openOrders(): ReadonlyArray<SimOrderView> {
    const out: Array<SimOrderView> = []
    for (const r of this.records.values()) if (r.state.status === "open") out.push(this.view(r))
    return out
  }

  /** The markets resolved while the exchange ran, at or after `sinceMs`, oldest first. */
  settlements(
    sinceMs: number
  ): ReadonlyArray<{ readonly nativeId: string; readonly payout: F.Fixed; readonly ts: number }> {
    return this.resolved.filter((r) => r.ts >= sinceMs)
  }

  /**
   * Resolves a market at `nowMs` (after advancing to it): a YES contract pays `payout` (1 for YES, 0 for NO, or a
   * figure between), own orders resting in it are canceled and the book is emptied. A market settled already, or an
   * unknown one, is left as it is (no event).
   */
  resolve(nativeId: string, payout: F.Fixed, nowMs: number): ReadonlyArray<SimEvent> {
    const out: Array<SimEvent> = []
    this.advance(nowMs, out)
    const s = this.byId.get(nativeId)
    if (s !== undefined && s.market.status !== "settled") this.settle(s, payout, this.clock, out)
    return out
  }

  /** Size displayed ahead of a resting own order in its level's queue; undefined when it does not rest. */
  queueAhead(orderId: string): F.Fixed | undefined {
    const r = this.records.get(orderId)
    return r === undefined ? undefined : this.byId.get(r.marketId)?.book.queueAhead(orderId)
  }

  /**
   * Runs, in time order, every step at or before `nowMs` not yet run (markets in native id order within a step)
   * and every expiry of a resting own order; returns what happened. One call or many up to the same time give
   * the same state and events.
   */
  advanceTo(nowMs: number): ReadonlyArray<SimEvent> {
    const out: Array<SimEvent> = []
    this.advance(nowMs, out)
    return out
  }

  /** Places an own order at `nowMs` (after advancing to it). */
  placeOrder(req: SimOrderRequest, nowMs: number): SimOrderResult {
    const events: Array<SimEvent> = []
    this.advance(nowMs, events)
    const t = this.clock
    const s = this.byId.get(req.marketId)
    if (s === undefined) return refused("not_found", "market_not_found", events)
    if (s.market.status !== "open") return refused("market_closed", `market_${s.market.status}`, events)
    if (t >= s.market.closeTime) return refused("market_closed", "market_closed", events)
    const bad = this.checkPrice(s.market, req.price) ?? this.checkAmount(s.market, req.amount)
    if (bad !== undefined) return refused("invalid", bad, events)
    const tif = req.tif ?? "gtc"
    const postOnly = req.postOnly ?? false
    const rests = tif === "gtc" || tif === "gtd"
    const expiresAt = rests ? (req.expiresAt ?? null) : null
    if (tif === "gtd" && expiresAt === null) return refused("invalid", "gtd_requires_expires_at", events)
    if (expiresAt !== null && expiresAt <= t) return refused("invalid", "expires_at_not_in_future", events)
    if (postOnly && !rests) return refused("invalid", "post_only_requires_gtc_or_gtd", events)
    const previous = req.clientOrderId === undefined ? undefined : this.byClient.get(req.clientOrderId)
    if (previous !== undefined && previous.state.status !== "rejected") {
      return refused("invalid", "duplicate_client_order_id", events)
    }
    // The exchange's start in the id: a server started again later never hands out an id the last run used, so a
    // report about a new order is never taken for one the desk kept from before.
    const id = `sim-${this.startMs.toString(36)}-${String(++this.orderSeq).padStart(6, "0")}`
    const clientOrderId = req.clientOrderId ?? id
    const version = s.book.version
    const placed = s.book.place({
      id,
      clientOrderId,
      side: req.side,
      price: req.price,
      amount: req.amount,
      tif,
      postOnly,
      expiresAt
    })
    const record: OrderRecord = {
      state: placed.order,
      marketId: s.market.nativeId,
      createdAt: t,
      updatedAt: t,
      cost: F.ZERO,
      fee: F.ZERO
    }
    this.records.set(id, record)
    this.byClient.set(clientOrderId, record)
    if (this.records.size >= this.sweepAt) this.sweep()
    if (placed.reason !== null) return refused("order_rejected", placed.reason, events, this.view(record))
    this.emitMatches(s, placed.matches, t, events)
    events.push({ _tag: "OrderUpdate", order: this.view(record) })
    this.bookChanged(s, version, t, events)
    return { _tag: "Accepted", order: this.view(record), events }
  }

  /**
   * Lets go of every finished own order but the last `FINISHED_KEPT` to finish (by their last change), in the books
   * too; open ones all stay. It runs once the records have doubled since it last ran, so a placement pays O(1) for it
   * on average and a long run keeps what is open and a bounded tail.
   */
  private sweep(): void {
    const finished: Array<[string, OrderRecord]> = []
    for (const entry of this.records) if (entry[1].state.status !== "open") finished.push(entry)
    // Newest first: by the last change, then the later placed.
    finished.reverse().sort((a, b) => b[1].updatedAt - a[1].updatedAt)
    for (const [id, r] of finished.slice(FINISHED_KEPT)) {
      this.records.delete(id)
      if (this.byClient.get(r.state.clientOrderId) === r) this.byClient.delete(r.state.clientOrderId)
      this.byId.get(r.marketId)?.book.forget(id)
    }
    this.sweepAt = 2 * Math.max(this.records.size, FINISHED_KEPT)
  }

  /** Cancels a resting own order at `nowMs` (after advancing to it). */
  cancelOrder(orderId: string, nowMs: number): SimOrderResult {
    const events: Array<SimEvent> = []
    this.advance(nowMs, events)
    const r = this.records.get(orderId)
    if (r === undefined) return refused("not_found", "order_not_found", events)
    if (r.state.status !== "open") return refused("order_rejected", `order_${r.state.status}`, events, this.view(r))
    const s = this.byId.get(r.marketId)!
    const version = s.book.version
    s.book.cancel(orderId)
    r.updatedAt = this.clock
    events.push({ _tag: "OrderUpdate", order: this.view(r) })
    this.bookChanged(s, version, this.clock, events)
    return { _tag: "Accepted", order: this.view(r), events }
  }

  /**
   * Amends price and/or amount of a resting own order at `nowMs`. The order keeps its queue place only when the
   * price is unchanged and the amount not increased; otherwise it goes to the back of its (new) level, trading
   * first if the new price crosses (refused for post-only). The amount may not go below what is filled; equal
   * to it closes the order.
   */
  amendOrder(
    orderId: string,
    changes: { readonly price?: F.Fixed; readonly amount?: F.Fixed },
    nowMs: number
  ): SimOrderResult {
    const events: Array<SimEvent> = []
    this.advance(nowMs, events)
    const t = this.clock
    const r = this.records.get(orderId)
    if (r === undefined) return refused("not_found", "order_not_found", events)
    if (r.state.status !== "open") return refused("order_rejected", `order_${r.state.status}`, events, this.view(r))
    const s = this.byId.get(r.marketId)!
    const bad =
      (changes.price === undefined ? undefined : this.checkPrice(s.market, changes.price)) ??
      (changes.amount === undefined ? undefined : this.checkAmount(s.market, changes.amount))
    if (bad !== undefined) return refused("invalid", bad, events, this.view(r))
    const version = s.book.version
    const amended = s.book.amend(orderId, changes)
    if (amended._tag === "Refused") {
      const code = amended.reason === "post_only_would_cross" ? "order_rejected" : "invalid"
      return refused(code, amended.reason, events, this.view(r))
    }
    r.updatedAt = t
    this.emitMatches(s, amended.matches, t, events)
    events.push({ _tag: "OrderUpdate", order: this.view(r) })
    this.bookChanged(s, version, t, events)
    return { _tag: "Accepted", order: this.view(r), events }
  }

  private checkPrice(market: Market, price: F.Fixed): string | undefined {
    if (!Number.isSafeInteger(price) || !F.isMultipleOf(price, market.tick)) return "price_off_tick"
    if (price < market.tick || price > F.ONE - market.tick) return "price_out_of_range"
    return undefined
  }

  private checkAmount(market: Market, amount: F.Fixed): string | undefined {
    if (!Number.isSafeInteger(amount) || amount <= 0 || !F.isMultipleOf(amount, market.lot))
      return "amount_not_lot_multiple"
    return undefined
  }

  private advance(nowMs: number, out: Array<SimEvent>): void {
    if (!Number.isFinite(nowMs)) throw new RangeError(`not a time: ${nowMs}`)
    for (;;) {
      const nextStep = this.startMs + (this.stepsRun + 1) * this.stepMs
      let nextExpiry = Infinity
      for (const s of this.states) {
        const e = s.book.nextExpiry()
        if (e !== null && e < nextExpiry) nextExpiry = e
      }
      if (nextExpiry <= nextStep && nextExpiry <= nowMs) {
        this.clock = Math.max(this.clock, nextExpiry)
        for (const s of this.states) this.expire(s, nextExpiry, out)
        continue
      }
      if (nextStep > nowMs) break
      this.clock = Math.max(this.clock, nextStep)
      for (const s of this.states) {
        if (s.market.status === "open") this.step(s, nextStep, out)
        else if (s.settleAt !== null && nextStep >= s.settleAt) this.settle(s, this.resultOf(s), nextStep, out)
      }
      this.stepsRun++
    }
    this.clock = Math.max(this.clock, nowMs)
  }

  private expire(s: MarketState, t: number, out: Array<SimEvent>): void {
    const version = s.book.version
    for (const o of s.book.expireUpTo(t)) {
      const r = this.records.get(o.id)!
      r.updatedAt = o.expiresAt ?? t
      out.push({ _tag: "OrderUpdate", order: this.view(r) })
    }
    this.bookChanged(s, version, t, out)
  }

  /** One move of one market: close it when its time has come, else walk, re-quote and let takers trade. */
  private step(s: MarketState, t: number, out: Array<SimEvent>): void {
    const version = s.book.version
    if (t >= s.market.closeTime) {
      s.market = { ...s.market, status: "closed" }
      s.settleAt = t + this.settleAfterMs
      this.cancelOwn(s, t, out)
      this.bookChanged(s, version, t, out)
      return
    }
    this.walk(s)
    this.emitMatches(s, this.layQuotes(s), t, out)
    const rng = s.rng
    const u = rng.nextFloat()
    const takers = u < 0.45 ? 0 : u < 0.8 ? 1 : u < 0.95 ? 2 : 3
    for (let i = 0; i < takers; i++) {
      const side: Side = rng.chance(0.5) ? "buy" : "sell"
      const size = rng.chance(0.1) ? rng.int(50, 400) : rng.int(1, 40)
      const sweep = rng.chance(0.15) ? 1 : 0
      const best = side === "buy" ? s.book.bestAsk() : s.book.bestBid()
      if (best === null) continue
      const ticks = Math.round(best / s.market.tick) + (side === "buy" ? sweep : -sweep)
      const limit = (Math.max(1, Math.min(s.maxTicks - 1, ticks)) * s.market.tick) as F.Fixed
      this.emitMatches(s, s.book.take(side, limit, lots(size, s.market.lot)), t, out)
    }
    this.bookChanged(s, version, t, out)
  }

  /** Cancels every own order resting in a market. */
  private cancelOwn(s: MarketState, t: number, out: Array<SimEvent>): void {
    for (const o of s.book.openOrders()) {
      s.book.cancel(o.id)
      const r = this.records.get(o.id)!
      r.updatedAt = t
      out.push({ _tag: "OrderUpdate", order: this.view(r) })
    }
  }

  /** A closed market's payout: its catalog's result, else YES drawn with the probability of its last fair value. */
  private resultOf(s: MarketState): F.Fixed {
    if (s.market.result !== null) return s.market.result === "yes" ? F.ONE : F.ZERO
    return s.rng.nextFloat() * s.maxTicks < s.fv ? F.ONE : F.ZERO
  }

  /** Resolves a market: own orders canceled, the book emptied, the result stated, and the `Settled` event. */
  private settle(s: MarketState, payout: F.Fixed, t: number, out: Array<SimEvent>): void {
    const version = s.book.version
    this.cancelOwn(s, t, out)
    this.emitMatches(s, s.book.setMakerQuotes([], []), t, out)
    const result = payout === F.ONE ? "yes" : payout === F.ZERO ? "no" : null
    s.market = { ...s.market, status: "settled", result }
    s.settleAt = null
    this.resolved.push({ nativeId: s.market.nativeId, payout, ts: t })
    this.bookChanged(s, version, t, out)
    out.push({ _tag: "Settled", marketId: s.market.nativeId, payout, ts: t })
  }

  /** Fair-value walk in ticks: mostly 0–2 ticks, sometimes a jump, mildly pulled back to where it started. */
  private walk(s: MarketState): void {
    const rng = s.walk?.rng ?? s.rng
    // a flipped market walks its complement, so that it moves exactly as the market it is linked to
    const flipped = s.walk?.flipped ?? false
    const fv = flipped ? s.maxTicks - s.fv : s.fv
    const anchor = flipped ? s.maxTicks - s.anchor : s.anchor
    const u = rng.nextFloat()
    const direction = rng.nextFloat()
    const jump = rng.int(3, 8)
    const d = u < 0.01 ? jump : u < 0.11 ? 2 : u < 0.41 ? 1 : 0
    const distance = fv - anchor
    const pullDown = Math.min(0.3, Math.abs(distance) / 50)
    const up = distance > 0 ? direction >= 0.5 + pullDown : distance < 0 ? direction < 0.5 + pullDown : direction < 0.5
    const next = Math.max(2, Math.min(s.maxTicks - 2, fv + (up ? d : -d)))
    s.fv = flipped ? s.maxTicks - next : next
  }

  /** Re-lays the maker's five levels each side around the fair value (spread 1–3 ticks). */
  private layQuotes(s: MarketState): ReadonlyArray<Match> {
    const rng = s.rng
    const tick = s.market.tick
    const spread = rng.int(1, 3)
    const lean = rng.int(0, 1)
    const bidTop = s.fv - Math.floor(spread / 2) - (spread % 2 === 1 ? lean : 0)
    const bids: Array<Quote> = []
    const asks: Array<Quote> = []
    for (let i = 0; i < LEVELS; i++) {
      for (const side of ["buy", "sell"] as const) {
        const ticks = side === "buy" ? bidTop - i : bidTop + spread + i
        const keep = rng.chance(0.7)
        const fresh = i === 0 ? rng.int(10, 150) : rng.int(20, 500)
        if (ticks < 1 || ticks > s.maxTicks - 1) continue
        const price = (ticks * tick) as F.Fixed
        const existing = s.book.makerSize(side, price)
        const size = keep && existing > 0 ? existing : lots(fresh, s.market.lot)
        ;(side === "buy" ? bids : asks).push({ price, size })
      }
    }
    return s.book.setMakerQuotes(bids, asks)
  }

  private emitMatches(s: MarketState, matches: ReadonlyArray<Match>, t: number, out: Array<SimEvent>): void {
    const marketId = s.market.nativeId
    for (const m of matches) {
      const trade: Trade = {
        id: `${marketId}-${++s.tradeSeq}`,
        ts: t,
        price: m.price,
        amount: m.amount,
        takerSide: m.takerSide
      }
      s.trades.push(trade)
      if (s.trades.length > 2 * TRADE_HISTORY) s.trades.splice(0, s.trades.length - TRADE_HISTORY)
      out.push({ _tag: "Trade", marketId, trade })
      if (m.taker !== null) this.fill(m.taker, "taker", trade, marketId, out)
      if (m.maker !== null) {
        this.fill(m.maker, "maker", trade, marketId, out)
        if (m.makerClosed) out.push({ _tag: "OrderUpdate", order: this.view(this.records.get(m.maker.id)!) })
      }
    }
  }

  private fill(o: OwnOrder, liquidity: "maker" | "taker", trade: Trade, marketId: string, out: Array<SimEvent>): void {
    const r = this.records.get(o.id)!
    const fee = tradingFee(liquidity === "taker" ? this.takerRate : this.makerRate, trade.price, trade.amount)
    r.cost = F.add(r.cost, F.mul(trade.price, trade.amount))
    r.fee = F.add(r.fee, fee)
    r.updatedAt = trade.ts
    const fill: SimFill = {
      orderId: o.id,
      clientOrderId: o.clientOrderId,
      marketId,
      tradeId: trade.id,
      price: trade.price,
      amount: trade.amount,
      side: o.side,
      liquidity,
      fee,
      ts: trade.ts
    }
    out.push({ _tag: "Fill", marketId, fill })
  }

  private bookChanged(s: MarketState, version: number, t: number, out: Array<SimEvent>): void {
    if (s.book.version === version) return
    s.bookTs = t
    out.push({ _tag: "BookChanged", marketId: s.market.nativeId, ts: t })
  }

  private view(r: OrderRecord): SimOrderView {
    const o = r.state
    return {
      id: o.id,
      clientOrderId: o.clientOrderId,
      marketId: r.marketId,
      side: o.side,
      price: o.price,
      amount: o.amount,
      filled: o.filled,
      remaining: F.sub(o.amount, o.filled),
      status: o.status,
      tif: o.tif,
      postOnly: o.postOnly,
      expiresAt: o.expiresAt,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      avgPrice: o.filled === 0 ? null : F.div(r.cost, o.filled),
      cost: r.cost,
      fee: r.fee,
      queuePriorityPreserved: o.queuePriorityPreserved
    }
  }
}
