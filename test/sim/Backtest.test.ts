import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import bracketMaker from "../../sim/examples/bracket-maker.ts"
import momentum from "../../sim/examples/momentum-trailing.ts"
import { backtest } from "../../sim/Backtest.ts"
import { generateTape } from "../../sim/Generator.ts"
import { renderReport } from "../../sim/Report.ts"
import { strategyOf } from "../../sim/Strategy.ts"
import { formatTape } from "../../sim/Tape.ts"

const generated = generateTape({ seed: 4, markets: 2, durationS: 600 })
const tape = formatTape(generated.header, generated.events)

describe("backtest", () => {
  for (const [name, make] of [
    ["bracket maker", bracketMaker],
    ["momentum with a trailing stop", momentum]
  ] as const) {
    it.live(`${name}: runs through the engine, reports P&L, and gives the same report twice`, () =>
      Effect.gen(function* () {
        const a = yield* backtest({ tape, strategy: strategyOf(make), seed: 4 })
        const b = yield* backtest({ tape, strategy: strategyOf(make), seed: 4 })
        assert.deepStrictEqual(a, b)
        assert.strictEqual(a.strategy, name)
        assert.isAbove(a.orders, 0)
        assert.deepStrictEqual(a.refused, [])
        assert.isAbove(a.equity.length, 10)
        assert.strictEqual(a.equity[0]![1].slice(0, 4), "1000")
        assert.isAtLeast(Number(a.max_drawdown), 0)
        // Equity at the end is the starting cash plus the net P&L.
        if (a.pnl.net !== null) {
          assert.closeTo(Number(a.final_equity), Number(a.starting_cash) + Number(a.pnl.net), 0.01)
        }
        const html = renderReport(a)
        // One file: uPlot and the data inlined, nothing loaded from anywhere.
        assert.include(html, "var uPlot=")
        assert.notMatch(html, /<(script|link|img)[^>]+(src|href)=/, "the page loads nothing")
        const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!)
        assert.strictEqual(data.equity.length, a.equity.length)
        assert.strictEqual(data.prices.length, a.prices.points.length)
        assert.strictEqual(data.fills.length, a.fills.filter((f) => f.market_id === a.prices.market_id).length)
      })
    )
  }

  it.live("the bracket maker's fills pair up: each exit sells what an entry bought", () =>
    Effect.gen(function* () {
      const report = yield* backtest({ tape, strategy: strategyOf(bracketMaker), seed: 4 })
      const bought = report.fills.filter((f) => f.side === "buy").reduce((s, f) => s + Number(f.amount), 0)
      const sold = report.fills.filter((f) => f.side === "sell").reduce((s, f) => s + Number(f.amount), 0)
      assert.isAbove(bought, 0)
      assert.isAtMost(bought - sold, 5, "at most one bracket's entry is held at the end")
      assert.isAtLeast(bought - sold, 0)
    })
  )
})
