/** Example strategy: buy when the last trades climb, and protect the position with a trailing stop. */
import type { Strategy, StrategyParams } from "../Strategy.ts"

/** The parameters a sweep may set, with their defaults: trades in the window, the rise that buys, the trail, the size. */
export const params = { window: 8, rise: 0.02, trail: "0.03", amount: "10" }

/** A fresh strategy: its state lives in this closure, so two runs never share it. */
const momentum = (given: StrategyParams = {}): Strategy => {
  const { window: WINDOW, rise: RISE, trail, amount } = { ...params, ...given } as typeof params
  const prices: Array<number> = []
  let holding = false
  return {
    name: "momentum with a trailing stop",
    onTrade: (ctx, trade) => {
      if (trade.marketId !== ctx.markets[0]) return
      prices.push(Number(trade.price))
      if (prices.length > WINDOW) prices.shift()
      if (holding || prices.length < WINDOW) return
      const rise = prices[prices.length - 1]! - prices[0]!
      const touch = ctx.touch(trade.marketId)
      if (rise < RISE || touch.bestAsk === null) return
      const ask = Math.round(Number(touch.bestAsk) * 100)
      ctx.place({
        market_id: trade.marketId,
        side: "buy",
        type: "market",
        amount,
        price: String(Math.min(99, ask + 1) / 100)
      })
      holding = true
      ctx.log(`momentum +${rise.toFixed(2)}: buying at up to ${(Math.min(99, ask + 1) / 100).toFixed(2)}`)
    },
    onFill: (ctx, fill) => {
      if (fill.side === "buy" && fill.strategyOrder.startsWith("s-") && !fill.clientOrderId.startsWith("mo_")) {
        ctx.place({
          market_id: fill.marketId,
          side: "sell",
          type: "trailing_stop",
          amount: fill.amount,
          reduce_only: true,
          params: { trail }
        })
      }
      if (fill.side === "sell" && Number(ctx.position(fill.marketId).contracts) <= 0) {
        holding = false
        prices.length = 0
      }
    }
  }
}

export default momentum
