// A backtest's hooks run in plain code between tape events where the services can answer at once; through their
// Effects they must give the same report, byte for byte.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { backtest } from "../../sim/Backtest.ts"
import { generateTape } from "../../sim/Generator.ts"
import { simWiring, type Wiring } from "../../sim/Replay.ts"
import type { Strategy, StrategyContext } from "../../sim/Strategy.ts"
import { formatTape } from "../../sim/Tape.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"

/**
 * The same services with every answer at once taken away: the venues show no view and place nothing in plain code,
 * the store counts no fills. Each hook's turn then goes through the services' Effects, as every one once did.
 */
const throughEffects: Wiring = (venues, seed, startingCash) => {
  const gateway = Layer.effect(
    VenueGateway,
    Effect.map(VenueGateway, (g) =>
      VenueGateway.fromVenues(
        g.venues.map((venue) => {
          const { now: _now, view: _view, ...rest } = venue as typeof venue & { view?: unknown }
          return rest
        })
      )
    )
  ).pipe(Layer.provide(venues))
  const services = simWiring(gateway, seed, startingCash)
  return Layer.merge(
    services,
    Layer.effect(
      OrderStore,
      Effect.map(OrderStore, (store) => {
        const { now: _now, ...rest } = store
        return rest
      })
    ).pipe(Layer.provide(services))
  )
}

/** One thing the strategy does at its `at`-th market event (or timer). */
const Act = fc.record({
  at: fc.nat({ max: 400 }),
  kind: fc.integer({ min: 0, max: 7 }),
  market: fc.nat({ max: 1 }),
  buy: fc.boolean(),
  away: fc.integer({ min: -3, max: 8 }),
  amount: fc.integer({ min: 1, max: 5 }),
  afterMs: fc.integer({ min: 0, max: 20_000 })
})
type Act = typeof Act extends fc.Arbitrary<infer A> ? A : never

const cents = (c: number) => (Math.min(98, Math.max(2, c)) / 100).toFixed(2)
const centsOf = (price: string | null) => (price === null ? null : Math.round(Number(price) * 100))

/** A strategy that acts out `acts`: orders of several types, cancels, timers, and reads of what it holds. */
const scripted = (acts: ReadonlyArray<Act>): Strategy => {
  let n = 0
  const ids: Array<string> = []
  const act = (ctx: StrategyContext, a: Act) => {
    const market = ctx.markets[a.market % ctx.markets.length]!
    const touch = ctx.touch(market)
    const bid = centsOf(touch.bestBid)
    const ask = centsOf(touch.bestAsk)
    ctx.log(`${n} ${JSON.stringify(ctx.pnl())} ${JSON.stringify(ctx.position(market))}`)
    if (bid === null || ask === null) return
    const side = a.buy ? "buy" : "sell"
    const base = { market_id: market, side, amount: String(a.amount) } as const
    const through = a.buy ? cents(ask + a.away) : cents(bid - a.away)
    const behind = a.buy ? cents(bid - Math.abs(a.away)) : cents(ask + Math.abs(a.away))
    switch (a.kind) {
      case 0:
        ids.push(ctx.place({ ...base, type: "limit", price: behind }))
        break
      case 1:
        ids.push(ctx.place({ ...base, type: "market", price: through }))
        break
      case 2:
        ids.push(ctx.place({ ...base, type: "trailing_stop", params: { trail: cents(Math.abs(a.away) + 1) } }))
        break
      case 3:
        ids.push(ctx.place({ ...base, type: "stop_market", stop_price: through }))
        break
      case 4:
        ids.push(ctx.place({ ...base, type: "iceberg", price: through, params: { display: "1" } }))
        break
      case 5:
        if (ids.length > 0) ctx.cancel(ids[a.amount % ids.length]!)
        break
      case 6:
        ctx.setTimer(a.afterMs, `t${a.at}`)
        break
      default:
        // Refused by the desk: a price off the grid.
        ids.push(ctx.place({ ...base, type: "limit", price: "0.505" }))
    }
    for (const id of ids) ctx.log(`${id} ${ctx.status(id)}`)
  }
  const onEvent = (ctx: StrategyContext) => {
    n += 1
    for (const a of acts) if (a.at === n) act(ctx, a)
  }
  return {
    name: "scripted",
    onBook: onEvent,
    onTrade: onEvent,
    onTimer: (ctx, name) => {
      const a = acts.find((x) => `t${x.at}` === name)
      if (a !== undefined) act(ctx, { ...a, kind: a.amount % 5 })
    },
    onFill: (ctx, fill) => {
      ctx.log(`fill ${fill.strategyOrder} ${fill.side} ${fill.amount}@${fill.price}`)
      if (fill.side === "buy" && fill.strategyOrder.startsWith("s-")) {
        ids.push(
          ctx.place({ market_id: fill.marketId, side: "sell", type: "limit", amount: fill.amount, price: "0.97" })
        )
      }
    }
  }
}

describe("backtests in plain code between events", () => {
  it.live(
    "give the report, event log hash included, that the services' Effects give for any strategy's acts",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.integer({ min: 1, max: 1_000 }),
            fc.array(Act, { minLength: 1, maxLength: 14 }),
            async (seed, acts) => {
              const g = generateTape({ seed, markets: 2, durationS: 120 })
              const tape = formatTape(g.header, g.events)
              const plain = await Effect.runPromise(backtest({ tape, strategy: scripted(acts), seed }))
              const effects = await Effect.runPromise(
                backtest({ tape, strategy: scripted(acts), seed, wiring: throughEffects })
              )
              assert.strictEqual(JSON.stringify(plain), JSON.stringify(effects))
            }
          ),
          { numRuns: 25 }
        )
      ),
    120_000
  )
})
