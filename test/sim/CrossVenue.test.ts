// Tapes over several venues, and a backtest of a bucket strategy that buys wherever a proposition is cheapest.
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import cheapestBucket from "../../sim/examples/cheapest-bucket.ts"
import { backtest } from "../../sim/Backtest.ts"
import { generateTape } from "../../sim/Generator.ts"
import { strategyOf } from "../../sim/Strategy.ts"
import { formatTape, type TapeEvent } from "../../sim/Tape.ts"

/** The touch of every market after each event, from the tape's own changes. */
const touches = (events: ReadonlyArray<TapeEvent>) => {
  const books = new Map<string, { bids: Map<string, number>; asks: Map<string, number> }>()
  const out: Array<{ ts: number; market: string; bid: number | null; ask: number | null }> = []
  for (const e of events) {
    if (e.type === "snapshot") {
      books.set(e.market, {
        bids: new Map(e.bids.map(([p, s]) => [p, Number(s)])),
        asks: new Map(e.asks.map(([p, s]) => [p, Number(s)]))
      })
    } else if (e.type === "change") {
      const side = books.get(e.market)![e.side === "bid" ? "bids" : "asks"]
      if (Number(e.size) === 0) side.delete(e.price)
      else side.set(e.price, Number(e.size))
    } else continue
    const book = books.get(e.market)!
    const bids = [...book.bids.keys()].map(Number)
    const asks = [...book.asks.keys()].map(Number)
    out.push({
      ts: e.ts,
      market: e.market,
      bid: bids.length === 0 ? null : Math.max(...bids),
      ask: asks.length === 0 ? null : Math.min(...asks)
    })
  }
  return out
}

describe("tapes over several venues", () => {
  it("sim2 lists every market again, every other one flipped, its prices tied to sim's, settling with it", () => {
    const one = generateTape({ seed: 3, markets: 4, durationS: 600 })
    const two = generateTape({ seed: 3, markets: 4, durationS: 600, venues: 2 })
    assert.deepStrictEqual(
      two.header.markets.map((m) => m.id),
      ["sim:GEN-001", "sim:GEN-002", "sim:GEN-003", "sim:GEN-004"].concat([
        "sim2:gen-001",
        "sim2:gen-002-no",
        "sim2:gen-003",
        "sim2:gen-004-no"
      ])
    )
    // The first venue's markets are the tape one venue gives: same events, in the same order.
    assert.deepStrictEqual(
      two.events.filter((e) => e.market.startsWith("sim:")),
      one.events
    )
    // Mids agree up to noise and spreads: a flipped twin's mid near 1 − the base's.
    const last = new Map<string, number>()
    const gaps: Array<number> = []
    for (const t of touches(two.events)) {
      if (t.bid === null || t.ask === null) continue
      last.set(t.market, (t.bid + t.ask) / 2)
      if (!t.market.startsWith("sim2:")) continue
      const flip = t.market.endsWith("-no")
      const base = `sim:${t.market.slice(5).replace(/-no$/, "").toUpperCase()}`
      const baseMid = last.get(base)
      if (baseMid === undefined) continue
      gaps.push(Math.abs((flip ? 1 - baseMid : baseMid) - (t.bid + t.ask) / 2))
    }
    gaps.sort((x, y) => x - y)
    assert.isAbove(gaps.length, 100)
    assert.isAtMost(gaps[Math.floor(gaps.length / 2)]!, 0.02, "the median gap")
    assert.isAtMost(gaps[Math.floor(gaps.length * 0.99)]!, 0.03, "the gap 99 times in 100")
    // A settled base settles its twins the same way (flipped: the other way).
    const settled = new Map(
      two.events.flatMap((e) => (e.type === "status" && e.status === "settled" ? [[e.market, e.result]] : []))
    )
    for (const [market, result] of settled) {
      if (!market.startsWith("sim:")) continue
      const n = Number(market.slice(-3))
      const flip = n % 2 === 0
      const twin = `sim2:gen-${market.slice(-3)}${flip ? "-no" : ""}`
      assert.strictEqual(settled.get(twin), flip ? (result === "yes" ? "no" : "yes") : result, twin)
    }
  })
})

describe("a backtest across venues", () => {
  it.live(
    "buys each proposition wherever it is cheapest: fills on both venues, the flipped twins sold, the same report twice",
    () =>
      Effect.gen(function* () {
        const generated = generateTape({ seed: 5, markets: 2, durationS: 300, venues: 2 })
        const tape = formatTape(generated.header, generated.events)
        const strategy = () => strategyOf(cheapestBucket, { below: 0.99, worst: "0.99", every_s: 10 })
        const a = yield* backtest({ tape, strategy: strategy(), seed: 5 })
        const b = yield* backtest({ tape, strategy: strategy(), seed: 5 })
        assert.deepStrictEqual(a, b)
        assert.deepStrictEqual(a.refused, [])
        assert.include(a.log.join("\n"), "bucket:b_000002: sim:GEN-002, sim2:gen-002-no (flipped)")
        const venues = new Set(a.fills.map((f) => f.market_id.slice(0, f.market_id.indexOf(":"))))
        assert.deepStrictEqual([...venues].sort(), ["sim", "sim2"])
        for (const f of a.fills) {
          // every leg buys the bucket's YES: the flipped twin's NO, a sell of its YES
          assert.strictEqual(f.side, f.market_id.endsWith("-no") ? "sell" : "buy", f.market_id)
          const inBucket = f.market_id.endsWith("-no") ? 1 - Number(f.price) : Number(f.price)
          assert.isAtMost(inBucket + Number(f.fee) / Number(f.amount), 0.99 + 1e-9)
        }
        // Two venues, two accounts: the run starts with both accounts' cash.
        assert.strictEqual(a.starting_cash, "20000")
        assert.strictEqual(a.equity[0]![1].slice(0, 4), "2000")
      })
  )
})
