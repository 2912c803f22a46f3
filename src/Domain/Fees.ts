/** A market's fee schedule as data, so that code above the venue (the bucket router) can price a fill's fee. */
import * as F from "./Fixed.ts"

/**
 * The fee of a fill is `rate × contracts × p × (1 − p)` rounded up to `step`, with `taker` or `maker` as the rate
 * (the schedule of the sim venues and of Kalshi's quadratic series).
 */
export interface MarketFees {
  readonly taker: F.Fixed
  readonly maker: F.Fixed
  readonly step: F.Fixed
}

export const NO_FEES: MarketFees = { taker: F.ZERO, maker: F.ZERO, step: F.of("0.000001") }

/** `rate × amount × p × (1 − p)`, rounded up to `step`; zero when the rate is zero. */
export const quadraticFee = (rate: F.Fixed, price: F.Fixed, amount: F.Fixed, step: F.Fixed): F.Fixed => {
  if (rate === 0) return F.ZERO
  const raw = F.mul(F.mul(F.mul(rate, amount, "up"), price, "up"), F.sub(F.ONE, price), "up")
  return F.roundTo(raw, step, "up")
}

/**
 * The most a contract can pay in fees when filled at `price` in fills of whole lots, whether it takes or makes: the
 * fee of one lot over the lot, rounded up. A fill of k lots pays at most k times one lot's fee, since rounding k·x
 * up never passes k times x rounded up.
 */
export const worstFeePerContract = (fees: MarketFees, price: F.Fixed, lot: F.Fixed): F.Fixed => {
  const rate = F.max(fees.taker, fees.maker)
  return F.div(quadraticFee(rate, price, lot, fees.step), lot, "up")
}
