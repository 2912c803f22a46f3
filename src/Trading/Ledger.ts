/** The ledger: positions netted on the YES leg, cash and P&L, all from fills with exact arithmetic. */
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"

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

/** One market's position: `contracts` > 0 holds YES, < 0 holds NO; `averagePrice` is the YES price paid (or sold at). */
export interface Position {
  readonly account: string
  readonly marketId: string
  readonly contracts: F.Fixed
  readonly averagePrice: F.Fixed | null
  readonly realized: F.Fixed
  readonly fees: F.Fixed
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

/** Positions per (account, market) and cash per account, kept in step with every fill. */
export class Ledger {
  private readonly positions = new Map<string, Position>()
  private readonly cash = new Map<string, F.Fixed>()
  readonly fills: Array<Fill> = []
  private readonly fillIds = new Set<string>()

  constructor(private readonly startingCash: (account: string) => F.Fixed) {}

  private key(account: string, marketId: string): string {
    return `${account}\u0000${marketId}`
  }

  position(account: string, marketId: string): Position {
    return this.positions.get(this.key(account, marketId)) ?? emptyPosition(account, marketId)
  }

  allPositions(): ReadonlyArray<Position> {
    return [...this.positions.values()].sort((a, b) =>
      a.account === b.account ? (a.marketId < b.marketId ? -1 : 1) : a.account < b.account ? -1 : 1
    )
  }

  cashOf(account: string): F.Fixed {
    return this.cash.get(account) ?? this.startingCash(account)
  }

  has(fillId: string): boolean {
    return this.fillIds.has(fillId)
  }

  /** Records a fill once; a fill seen before (same id) changes nothing and answers false. */
  record(fill: Fill): boolean {
    if (this.fillIds.has(fill.id)) return false
    this.fillIds.add(fill.id)
    this.fills.push(fill)
    const before = this.position(fill.account, fill.marketId)
    this.cash.set(fill.account, F.add(this.cashOf(fill.account), cashDelta(before.contracts, fill)))
    this.positions.set(this.key(fill.account, fill.marketId), applyFill(before, fill))
    return true
  }
}
