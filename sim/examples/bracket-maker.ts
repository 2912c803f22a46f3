/** Example strategy: a market maker that joins the best bid with a bracket: take 2 ticks of profit or stop out 4 below (by default). */
import type { Strategy, StrategyParams } from "../Strategy.ts"

const cents = (price: string) => Math.round(Number(price) * 100)
const price = (c: number) => String(Math.min(99, Math.max(1, c)) / 100)
const DONE = new Set(["closed", "canceled", "expired", "rejected"])

/** The parameters a sweep may set, with their defaults: profit and stop in ticks, the size, the requote interval. */
export const params = { take_ticks: 2, stop_ticks: 4, amount: "5", quote_ms: 10_000 }

/** A fresh strategy: its state lives in this closure, so two runs never share it. */
const bracketMaker = (given: StrategyParams = {}): Strategy => {
  const { take_ticks, stop_ticks, amount, quote_ms } = { ...params, ...given } as typeof params
  let working: string | null = null
  let placedAt = 0
  return {
    name: "bracket maker",
    onStart: (ctx) => ctx.setTimer(1_000, "quote"),
    onTimer: (ctx, name) => {
      if (name !== "quote") return
      ctx.setTimer(quote_ms, "quote")
      const market = ctx.markets[0]
      if (market === undefined) return
      const flat = Number(ctx.position(market).contracts) === 0
      if (working !== null && DONE.has(ctx.status(working) ?? "rejected")) working = null
      // An entry nobody took within a minute is pulled while nothing is held, and the quote moves to the new bid.
      if (working !== null && flat && ctx.now - placedAt > 60_000) {
        ctx.cancel(working)
        working = null
      }
      if (working !== null) return
      const touch = ctx.touch(market)
      if (touch.bestBid === null || touch.bestAsk === null) return
      const bid = cents(touch.bestBid)
      working = ctx.place({
        market_id: market,
        side: "buy",
        type: "bracket",
        amount,
        params: {
          entry: { price: price(bid) },
          take_profit: { price: price(bid + take_ticks) },
          stop_loss: { stop_price: price(bid - stop_ticks) }
        }
      })
      placedAt = ctx.now
      ctx.log(`bracket ${working} at ${price(bid)}`)
    },
    onFill: (ctx, fill) => ctx.log(`${fill.side} ${fill.amount} @ ${fill.price} (${fill.strategyOrder})`)
  }
}

export default bracketMaker
