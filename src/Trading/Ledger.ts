/** The ledger: positions netted on the YES leg, cash and P&L, all from fills with exact arithmetic. */
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"
import { type Settlement, settlementOf } from "./Settlement.ts"

export interface Fill {
  readonly id: string
  readonly orderId: string
  readonly clientOrderId: string
  readonly parentId: string | null
  readonly account: string
  readonly marketId: string
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  readonly fee: F.Fixed
  readonly liquidity: "maker" | "taker"
  readonly tradeId: string
  readonly book: string
  readonly ts: number
}

/**
 * One market's position: `contracts` > 0 holds YES, < 0 holds NO; `averagePrice` is the YES price paid (or sold at).
 * `settled` is set once the market resolved and the position was closed at its payout.
 */
export interface Position {
  readonly account: string
  readonly marketId: string
  readonly contracts: F.Fixed
  readonly averagePrice: F.Fixed | null
  readonly realized: F.Fixed
  readonly fees: F.Fixed
  readonly settled?: SettledMark | undefined
}

/**
 * How a position was settled: the payout per YES contract, the contracts it closed (signed), the P&L it booked, and on
 * a venue whose payout waits for the holder to redeem it (Polymarket), the redemption.
 */
export interface SettledMark {
  readonly payout: F.Fixed
  readonly contracts: F.Fixed
  readonly realized: F.Fixed
  readonly ts: number
  readonly redemption?: Redemption | undefined
}

/** What the holder can redeem of a settlement (payout × contracts of the side held), and when the venue redeemed it. */
export interface Redemption {
  readonly amount: F.Fixed
  readonly redeemedAt: number | null
}

/** What is left to redeem of a settled position: its amount until the venue redeemed it; 0 where nothing waits. */
export const redeemableAmount = (settled: SettledMark | undefined): F.Fixed => {
  const r = settled?.redemption
  return r === undefined || r.redeemedAt !== null ? F.ZERO : r.amount
}

const emptyPosition = (account: string, marketId: string): Position => ({
  account,
  marketId,
  contracts: F.ZERO,
  averagePrice: null,
  realized: F.ZERO,
  fees: F.ZERO
})

/**
 * Applies one fill. Buying YES while short (holding NO) closes first: each pair pays out 1, so the realized P&L of a
 * closed contract is `average − price` on a short and `price − average` on a long.
 */
export const applyFill = (position: Position, fill: Fill): Position => {
  const signed = fill.side === "buy" ? fill.amount : F.neg(fill.amount)
  const q = position.contracts
  const fees = F.add(position.fees, fill.fee)
  const sameWay = q === 0 || q > 0 === signed > 0
  if (sameWay) {
    const next = F.add(q, signed)
    const paid = F.add(F.mul(position.averagePrice ?? F.ZERO, Math.abs(q) as F.Fixed), F.mul(fill.price, fill.amount))
    return { ...position, contracts: next, averagePrice: F.div(paid, Math.abs(next) as F.Fixed), fees }
  }
  const closing = F.min(Math.abs(q) as F.Fixed, fill.amount)
  const average = position.averagePrice ?? fill.price
  const perContract = q > 0 ? F.sub(fill.price, average) : F.sub(average, fill.price)
  const realized = F.add(position.realized, F.mul(perContract, closing))
  const next = F.add(q, signed)
  const averagePrice = next === 0 ? null : Math.sign(next) === Math.sign(q) ? average : fill.price
  return { ...position, contracts: next, averagePrice, realized, fees }
}

/**
 * Cash a fill moves. Buying YES costs `p` a contract and selling YES returns `p`; opening NO costs `1 − p` and closing
 * NO returns `1 − p`. Fees are always paid.
 */
export const cashDelta = (before: F.Fixed, fill: Fill): F.Fixed => {
  const signed = fill.side === "buy" ? fill.amount : F.neg(fill.amount)
  let delta = F.neg(fill.fee)
  // The part that closes the held side, then the part that opens.
  const closing = before === 0 || before > 0 === signed > 0 ? F.ZERO : F.min(Math.abs(before) as F.Fixed, fill.amount)
  const opening = F.sub(fill.amount, closing)
  const noPrice = F.sub(F.ONE, fill.price)
  if (fill.side === "buy") {
    delta = F.add(delta, F.mul(noPrice, closing)) // sells held NO at 1 − p
    delta = F.sub(delta, F.mul(fill.price, opening))
  } else {
    delta = F.add(delta, F.mul(fill.price, closing)) // sells held YES at p
    delta = F.sub(delta, F.mul(noPrice, opening))
  }
  return delta
}

/** Collateral a resting order holds: `p` a contract to buy YES, `1 − p` to buy NO. */
export const collateral = (side: Side, price: F.Fixed, remaining: F.Fixed): F.Fixed =>
  F.mul(side === "buy" ? price : F.sub(F.ONE, price), remaining)

/** Unrealized P&L of a position at a mark; null without a mark. */
export const unrealized = (position: Position, mark: F.Fixed | null): F.Fixed | null => {
  if (position.contracts === 0) return F.ZERO
  if (mark === null || position.averagePrice === null) return null
  const perContract = position.contracts > 0 ? F.sub(mark, position.averagePrice) : F.sub(position.averagePrice, mark)
  return F.mul(perContract, Math.abs(position.contracts) as F.Fixed)
}

/** A position as the store keeps it: decimals as strings. */
export interface PositionRow {
  readonly contracts: string
  readonly average_price: string | null
  readonly realized: string
  readonly fees: string
  readonly settled?: {
    readonly payout: string
    readonly contracts: string
    readonly realized: string
    readonly ts: number
    readonly redemption?: { readonly amount: string; readonly redeemed_at: number | null }
  }
}

export const positionRow = (p: Position): PositionRow => {
  const row = {
    contracts: F.format(p.contracts),
    average_price: F.formatOrNull(p.averagePrice),
    realized: F.format(p.realized),
    fees: F.format(p.fees)
  }
  if (p.settled === undefined) return row
  const s = p.settled
  const settled = {
    payout: F.format(s.payout),
    contracts: F.format(s.contracts),
    realized: F.format(s.realized),
    ts: s.ts
  }
  const r = s.redemption
  return {
    ...row,
    settled:
      r === undefined ? settled : { ...settled, redemption: { amount: F.format(r.amount), redeemed_at: r.redeemedAt } }
  }
}

export const positionOfRow = (account: string, marketId: string, row: PositionRow): Position => {
  const position: Position = {
    account,
    marketId,
    contracts: F.of(row.contracts),
    averagePrice: row.average_price === null ? null : F.of(row.average_price),
    realized: F.of(row.realized),
    fees: F.of(row.fees)
  }
  const s = row.settled
  if (s === undefined) return position
  const settled = { payout: F.of(s.payout), contracts: F.of(s.contracts), realized: F.of(s.realized), ts: s.ts }
  const r = s.redemption
  return {
    ...position,
    settled:
      r === undefined ? settled : { ...settled, redemption: { amount: F.of(r.amount), redeemedAt: r.redeemed_at } }
  }
}

/**
 * Positions per (account, market) and the cash fills moved per account, kept in step with every fill. It holds no
 * fills: they are in the store, and each fill's ledger rows are written with it, so a start reads the ledger back.
 */
export class Ledger {
  private readonly positions = new Map<string, Position>()
  /** `allPositions` as last answered, until a position changes. */
  private sorted: ReadonlyArray<Position> | undefined
  /** Cash moved by fills, per account: cash is the starting cash plus this. */
  private readonly moved = new Map<string, F.Fixed>()

  constructor(private readonly startingCash: (account: string) => F.Fixed) {}

  private key(account: string, marketId: string): string {
    return `${account}\u0000${marketId}`
  }

  position(account: string, marketId: string): Position {
    return this.positions.get(this.key(account, marketId)) ?? emptyPosition(account, marketId)
  }

  /** Every position, by account then market: the same list (not to be changed) until a position changes. */
  allPositions(): ReadonlyArray<Position> {
    this.sorted ??= [...this.positions.values()].sort((a, b) =>
      a.account === b.account ? (a.marketId < b.marketId ? -1 : 1) : a.account < b.account ? -1 : 1
    )
    return this.sorted
  }

  private put(position: Position): void {
    this.positions.set(this.key(position.account, position.marketId), position)
    this.sorted = undefined
  }

  cashOf(account: string): F.Fixed {
    return F.add(this.startingCash(account), this.cashMoved(account))
  }

  cashMoved(account: string): F.Fixed {
    return this.moved.get(account) ?? F.ZERO
  }

  /** Puts back a position and an account's cash moved, as the store kept them. */
  restore(position: Position): void {
    this.put(position)
  }

  restoreCash(account: string, moved: F.Fixed): void {
    this.moved.set(account, moved)
  }

  /**
   * Closes a position at its market's payout (see `settlementOf`) and answers the settlement, or undefined when there
   * is nothing to settle (no contracts held, or settled already). `redeems`: the venue pays it once redeemed.
   */
  settle(account: string, marketId: string, payout: F.Fixed, ts: number, redeems = false): Settlement | undefined {
    const settlement = settlementOf(this.position(account, marketId), payout, ts, redeems)
    if (settlement === undefined) return undefined
    this.put(settlement.position)
    this.moved.set(account, F.add(this.cashMoved(account), settlement.cashChange))
    return settlement
  }

  /**
   * Marks a settled position's payout redeemed at `ts` and answers the position it leaves, or undefined when nothing
   * waits to be redeemed there (redeemed already, or nothing to redeem).
   */
  redeem(account: string, marketId: string, ts: number): Position | undefined {
    const position = this.position(account, marketId)
    const settled = position.settled
    if (settled?.redemption === undefined || redeemableAmount(settled) === 0) return undefined
    const after = { ...position, settled: { ...settled, redemption: { ...settled.redemption, redeemedAt: ts } } }
    this.put(after)
    return after
  }

  /** Applies a fill (the caller makes sure each fill comes once) and answers the position it leaves. */
  record(fill: Fill): Position {
    const before = this.position(fill.account, fill.marketId)
    this.moved.set(fill.account, F.add(this.cashMoved(fill.account), cashDelta(before.contracts, fill)))
    const after = applyFill(before, fill)
    this.put(after)
    return after
  }
}
