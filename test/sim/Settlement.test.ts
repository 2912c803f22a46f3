/** A tape's resolutions settle what a replay or a backtest holds: the report ends with settled P&L. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as F from "../../src/Domain/Fixed.ts"
import { backtest } from "../../sim/Backtest.ts"
import { replay } from "../../sim/Replay.ts"
import { renderReport } from "../../sim/Report.ts"
import type { Strategy } from "../../sim/Strategy.ts"
import { formatTape, type TapeEvent, type TapeHeader } from "../../sim/Tape.ts"

const header: TapeHeader = {
  type: "header",
  version: 1,
  source: "generated",
  markets: [
    { id: "sim:RAIN", title: "Rain tomorrow", tick: "0.01", lot: "1" },
    { id: "sim:SUN", title: "Sun tomorrow", tick: "0.01", lot: "1" },
    { id: "sim:WIND", title: "Wind tomorrow", tick: "0.01", lot: "1" }
  ]
}

/** Three markets: RAIN resolves YES, SUN resolves YES too, WIND only closes (no result yet). */
const events: ReadonlyArray<TapeEvent> = [
  ...["sim:RAIN", "sim:SUN", "sim:WIND"].map((market): TapeEvent => ({
    type: "snapshot",
    ts: 1_000,
    market,
    bids: [["0.4", "100"]],
    asks: [["0.42", "100"]]
  })),
  { type: "trade", ts: 2_000, market: "sim:RAIN", price: "0.42", amount: "1", taker_side: "buy" },
  ...["sim:RAIN", "sim:SUN", "sim:WIND"].flatMap((market): ReadonlyArray<TapeEvent> => [
    { type: "status", ts: 60_000, market, status: "closed" },
    { type: "snapshot", ts: 60_000, market, bids: [], asks: [] }
  ]),
  { type: "status", ts: 60_000, market: "sim:RAIN", status: "settled", result: "yes" },
  { type: "status", ts: 61_000, market: "sim:SUN", status: "settled", result: "yes" },
  // A repeated line settles nothing twice.
  { type: "status", ts: 62_000, market: "sim:SUN", status: "settled", result: "yes" },
  { type: "trade", ts: 63_000, market: "sim:WIND", price: "0.5", amount: "1", taker_side: "buy" }
]
const tape = formatTape(header, events)

/**
 * At the first trade (every book is shown by then): buys 10 YES of RAIN, sells 5 of SUN (holding NO), buys 2 YES of
 * WIND, and leaves a bid resting on RAIN.
 */
const holder = (): Strategy => {
  let started = false
  return {
    name: "holder",
    onTrade: (ctx) => {
      if (started) return
      started = true
      ctx.place({ market_id: "sim:RAIN", side: "buy", type: "market", amount: "10", price: "0.42" })
      ctx.place({ market_id: "sim:SUN", side: "sell", type: "market", amount: "5", price: "0.4" })
      ctx.place({ market_id: "sim:WIND", side: "buy", type: "market", amount: "2", price: "0.42" })
      ctx.place({ market_id: "sim:RAIN", side: "buy", type: "limit", amount: "3", price: "0.3" })
    }
  }
}

describe("settlement in the simulator", () => {
  it.live("a backtest's report ends with the settled P&L of the markets that resolved while held", () =>
    Effect.gen(function* () {
      const report = yield* backtest({ tape, strategy: holder(), seed: 2 })
      assert.deepStrictEqual(report.refused, [])
      // RAIN: 10 YES bought at 0.42 pay 1 each (+5.8). SUN: 5 NO sold at YES 0.40 (cost 0.60 each) pay 0 (−3).
      assert.deepStrictEqual(
        report.settlements.map((s) => [s.market_id, s.contracts, s.payout, s.realized_pnl, s.cash_change]),
        [
          ["sim:RAIN", "10", "1", "5.8", "10"],
          ["sim:SUN", "-5", "1", "-3", "0"]
        ]
      )
      assert.strictEqual(report.pnl.settled, "2.8")
      assert.strictEqual(report.pnl.realized, "2.8")
      // WIND is closed without a result: its two contracts are held still, unmarked (no book).
      assert.strictEqual(report.pnl.unrealized, null)
      // Cash at the end: the start, less what was paid (fees included), plus the payouts.
      const paid = report.fills.reduce(
        (sum, f) =>
          F.add(
            sum,
            F.add(F.of(f.fee), F.mul(f.side === "buy" ? F.of(f.price) : F.sub(F.ONE, F.of(f.price)), F.of(f.amount)))
          ),
        F.ZERO
      )
      assert.strictEqual(report.final_equity, F.format(F.add(F.sub(F.of("10000"), paid), F.fromInt(10))))
      const html = renderReport(report)
      assert.include(html, "Settled P&amp;L")
      assert.include(html, '<table id="settlements">')
      assert.include(html, "<td>sim:SUN</td><td>-5</td><td>1</td><td>-3</td><td>0</td>")
    })
  )

  it.live("a replay books each resolution once, after the venue canceled what rested there", () =>
    Effect.gen(function* () {
      const orders = [
        {
          at_ms: 500,
          order: { market_id: "sim:RAIN", side: "buy" as const, type: "market" as const, amount: "4", price: "0.42" }
        },
        {
          at_ms: 500,
          order: { market_id: "sim:SUN", side: "buy" as const, type: "limit" as const, amount: "1", price: "0.1" }
        }
      ]
      const a = yield* replay({ tape, orders, seed: 1 })
      const b = yield* replay({ tape, orders, seed: 1 })
      assert.strictEqual(a.log, b.log)
      const log = a.log
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
      const settled = log.filter((e) => e.kind === "position.settled")
      assert.deepStrictEqual(
        settled.map((e) => [e.payload.market_id, e.payload.contracts, e.payload.cash_change]),
        [["sim:RAIN", "4", "4"]]
      )
      const canceled = log.findIndex((e) => e.kind === "order.canceled" && e.payload.market_id === "sim:SUN")
      assert.isAbove(canceled, -1)
      const rain = a.summary.positions.find((p) => p.market_id === "sim:RAIN")!
      assert.strictEqual(rain.contracts, "0")
      assert.strictEqual(rain.realized_pnl, "2.32")
    })
  )
})
