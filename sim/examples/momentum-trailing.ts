/** Example strategy: buy when the last trades climb, and protect the position with a trailing stop. */
import type { Strategy } from "../Strategy.ts"

const WINDOW = 8

/** A fresh strategy: its state lives in this closure, so two runs never share it. */
const momentum = (): Strategy => {
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
      if (rise < 0.02 || touch.bestAsk === null) return
      const ask = Math.round(Number(touch.bestAsk) * 100)
      ctx.place({
        market_id: trade.marketId,
        side: "buy",
        type: "market",
        amount: "10",
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
          params: { trail: "0.03" }
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
