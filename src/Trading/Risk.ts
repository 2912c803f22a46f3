/** Risk rules checked before any order leaves for a venue; each refusal names its rule. */
import { Schema } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"

const Limit = Schema.NullOr(Schema.String.pipe(Schema.pattern(/^\d+(\.\d{1,6})?$/)))

/** The rules as the API carries them: decimals as strings, null = no limit. */
export const RiskRules = Schema.Struct({
  kill_switch: Schema.Boolean,
  max_order_contracts: Limit,
  max_order_notional: Limit,
  price_collar: Limit.annotations({ description: "Largest distance of a limit price from the mark" }),
  max_open_orders: Schema.NullOr(Schema.Int.pipe(Schema.nonNegative())),
  max_position_contracts: Limit,
  max_orders_per_minute: Schema.NullOr(Schema.Int.pipe(Schema.nonNegative())),
  daily_loss_limit: Limit
}).annotations({ identifier: "RiskRules" })
export type RiskRules = typeof RiskRules.Type

export const DEFAULT_RULES: RiskRules = {
  kill_switch: false,
  max_order_contracts: null,
  max_order_notional: null,
  price_collar: null,
  max_open_orders: null,
  max_position_contracts: null,
  max_orders_per_minute: null,
  daily_loss_limit: null
}

export interface RiskInput {
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  /** Fair value, else the book's mid; null when neither is known. */
  readonly mark: F.Fixed | null
  readonly openOrders: number
  /** Net YES contracts held now in this market. */
  readonly position: F.Fixed
  readonly ordersLastMinute: number
  /** Today's P&L (realized − fees + unrealized); a loss is negative. */
  readonly pnlToday: F.Fixed
}

export interface RiskRefusal {
  readonly rule: keyof RiskRules
  readonly message: string
}

const limit = (text: string | null): F.Fixed | null => (text === null ? null : F.of(text))

/** The first rule the order breaks, or undefined. Notional is what the order can lose: p (YES) or 1 − p (NO) a contract. */
export const checkRisk = (rules: RiskRules, input: RiskInput): RiskRefusal | undefined => {
  if (rules.kill_switch) return { rule: "kill_switch", message: "the kill switch is on: no order may leave" }
  const maxContracts = limit(rules.max_order_contracts)
  if (maxContracts !== null && input.amount > maxContracts) {
    return {
      rule: "max_order_contracts",
      message: `${F.format(input.amount)} contracts is over max_order_contracts ${F.format(maxContracts)}`
    }
  }
  const maxNotional = limit(rules.max_order_notional)
  const perContract = input.side === "buy" ? input.price : F.sub(F.ONE, input.price)
  const notional = F.mul(perContract, input.amount)
  if (maxNotional !== null && notional > maxNotional) {
    return {
      rule: "max_order_notional",
      message: `notional ${F.format(notional)} is over max_order_notional ${F.format(maxNotional)}`
    }
  }
  const collar = limit(rules.price_collar)
  if (collar !== null && input.mark !== null && Math.abs(input.price - input.mark) > collar) {
    return {
      rule: "price_collar",
      message: `price ${F.format(input.price)} is more than ${F.format(collar)} from the mark ${F.format(input.mark)}`
    }
  }
  if (rules.max_open_orders !== null && input.openOrders >= rules.max_open_orders) {
    return {
      rule: "max_open_orders",
      message: `${input.openOrders} orders are open; max_open_orders is ${rules.max_open_orders}`
    }
  }
  const maxPosition = limit(rules.max_position_contracts)
  if (maxPosition !== null) {
    const after = F.add(input.position, input.side === "buy" ? input.amount : F.neg(input.amount))
    if (Math.abs(after) > maxPosition) {
      return {
        rule: "max_position_contracts",
        message: `the position would reach ${F.format(after)}, over max_position_contracts ${F.format(maxPosition)}`
      }
    }
  }
  if (rules.max_orders_per_minute !== null && input.ordersLastMinute >= rules.max_orders_per_minute) {
    return {
      rule: "max_orders_per_minute",
      message: `${input.ordersLastMinute} orders in the last minute; max_orders_per_minute is ${rules.max_orders_per_minute}`
    }
  }
  const maxLoss = limit(rules.daily_loss_limit)
  if (maxLoss !== null && F.neg(input.pnlToday) >= maxLoss) {
    return {
      rule: "daily_loss_limit",
      message: `today's loss ${F.format(F.neg(input.pnlToday))} has reached daily_loss_limit ${F.format(maxLoss)}`
    }
  }
  return undefined
}
