/** Benchmarks: each figure against a baseline run in the same process, printed as JSON lines and a table. */
import { Effect } from "effect"
import { performance } from "node:perf_hooks"
import { generateTape } from "../sim/Generator.ts"
import { replay } from "../sim/Replay.ts"
import { formatTape, parseTape } from "../sim/Tape.ts"
import { TapeBook } from "../sim/TapeBook.ts"
import * as F from "../src/Domain/Fixed.ts"
import type { MarketView, ParentSpec } from "../src/Engine/Core.ts"
import { stopMarket, validateStopMarket } from "../src/Engine/Stop.ts"
import * as Trailing from "../src/Engine/Trailing.ts"

interface Figure {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly baseline: number
  readonly ratio: number
  readonly target?: string
}

const figures: Array<Figure> = []
const report = (f: Figure) => {
  figures.push(f)
  console.log(JSON.stringify(f))
}

/** Best of `rounds` timed runs after one warm-up; answers seconds. */
const time = (rounds: number, run: () => void): number => {
  run()
  let best = Number.POSITIVE_INFINITY
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    run()
    best = Math.min(best, (performance.now() - start) / 1000)
  }
  return best
}

// 1. Decision cores: market inputs per second through stop and trailing-stop cores, against the bare loop that
//    only reads the same views.
{
  const views: Array<MarketView> = []
  let bid = 500_000
  for (let i = 0; i < 200_000; i++) {
    bid = Math.min(980_000, Math.max(20_000, bid + ((i * 7919) % 5) * 10_000 - 20_000))
    views.push({ bestBid: bid as F.Fixed, bestAsk: (bid + 10_000) as F.Fixed, last: null })
  }
  const spec: ParentSpec = {
    id: "mo_1",
    side: "sell",
    amount: F.of("10"),
    price: null,
    stopPrice: F.of("0.01"),
    timeInForce: "gtc",
    postOnly: false,
    reduceOnly: false,
    tick: F.of("0.01"),
    lot: F.of("1"),
    createdAt: 0
  }
  const stopParams = validateStopMarket(spec, {})
  const trailParams = Trailing.validate({ ...spec, stopPrice: null }, { trail: "0.9" })
  if ("errors" in stopParams || "errors" in trailParams) throw new Error("bench params")
  let sink = 0
  const baseline = time(5, () => {
    for (const v of views) sink += v.bestBid! > v.bestAsk! ? 1 : 0
  })
  const cores = time(5, () => {
    let s = stopMarket.init(spec, stopParams.params, 1).state
    let t = Trailing.core.init({ ...spec, stopPrice: null }, trailParams.params, 1).state
    let ts = 0
    for (const view of views) {
      s = stopMarket.step(spec, stopParams.params, s, { _tag: "Market", ts: ++ts, view }).state
      t = Trailing.core.step({ ...spec, stopPrice: null }, trailParams.params, t, { _tag: "Market", ts, view }).state
    }
  })
  void sink
  const inputs = views.length * 2
  report({
    name: "cores.market_inputs_per_s",
    value: Math.round(inputs / cores),
    unit: "inputs/s",
    baseline: Math.round(views.length / baseline),
    ratio: Number((inputs / cores / (views.length / baseline)).toFixed(4))
  })
}

// 2. Replay end to end (parse, tape venue, desk, engine, journal) against parsing the same tape and applying it to
//    bare books.
{
  const generated = generateTape({ seed: 3, markets: 2, durationS: 120 })
  const text = formatTape(generated.header, generated.events)
  const events = generated.events.length
  const bare = time(3, () => {
    const { events: parsed } = parseTape(text)
    const books = new Map<string, TapeBook>()
    for (const e of parsed) {
      let book = books.get(e.market)
      if (book === undefined) books.set(e.market, (book = new TapeBook()))
      book.apply(e)
    }
  })
  const run = () => Effect.runPromise(replay({ tape: text, orders: [], seed: 1 })).then(() => undefined)
  await run()
  const start = performance.now()
  await run()
  const full = (performance.now() - start) / 1000
  report({
    name: "replay.inputs_per_s",
    value: Math.round(events / full),
    unit: "inputs/s",
    baseline: Math.round(events / bare),
    ratio: Number((bare / full).toFixed(4)),
    target: ">= 300000 inputs/s"
  })
}

console.log("")
console.log("figure                       value           baseline        ratio")
for (const f of figures) {
  console.log(
    `${f.name.padEnd(28)} ${String(f.value).padStart(10)} ${f.unit.padEnd(5)} ${String(f.baseline).padStart(10)}   ${f.ratio}`
  )
}
