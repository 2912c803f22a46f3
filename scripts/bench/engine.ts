/**
 * Engine throughput: market-data inputs through the driver with live complex parents of all nine types, against the
 * bare loop that only applies the same inputs to books.
 */
import { Context, Effect, Schema } from "effect"
import { performance } from "node:perf_hooks"
import { generateTape } from "../../sim/Generator.ts"
import { replay, replayTimings, Scenario } from "../../sim/Replay.ts"
import type { TapeEvent, TapeHeader } from "../../sim/Tape.ts"
import { TapeBook } from "../../sim/TapeBook.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { COMPLEX_TYPES } from "../../src/Engine/Registry.ts"
import { applyToBareBooks, cpuSeconds, timeBoth } from "./common.ts"

export interface Tape {
  readonly header: TapeHeader
  readonly events: ReadonlyArray<TapeEvent>
}

export const benchTape = (markets: number, durationS: number, seed = 11): Tape => {
  const { header, events } = generateTape({ seed, markets, durationS })
  return { header, events }
}

const cents = (p: F.Fixed) => Math.round(p / 10_000)
const px = (c: number) => F.format(F.mul(F.of("0.01"), F.fromInt(Math.min(98, Math.max(2, c)))))

/** The touch of every market once the tape's first moment has been applied. */
const touches = (tape: Tape, until: number) => {
  const books = new Map<string, TapeBook>()
  for (const e of tape.events) {
    if (e.ts > until) break
    let book = books.get(e.market)
    if (book === undefined) books.set(e.market, (book = new TapeBook()))
    book.apply(e)
  }
  return new Map(
    [...books].map(([id, b]) => [
      id,
      { bid: cents(b.bestBid() ?? F.of("0.49")), ask: cents(b.bestAsk() ?? F.of("0.51")) }
    ])
  )
}

/**
 * `count` parents spread over the tape's markets, the nine types in turn, each set the way a trader would: stops and
 * the stop legs some ticks away from the touch, resting children a few ticks behind it, a twap over an hour, a peg at
 * the near touch, a smart_taker whose limit keeps its clips from filling.
 */
export const mixedParents = (
  tape: Tape,
  count: number,
  at_ms: number,
  markets: ReadonlyArray<string> = tape.header.markets.map((m) => m.id)
) => {
  const t0 = tape.events[0]?.ts ?? 0
  const touch = touches(tape, t0 + at_ms)
  const orders: Array<unknown> = []
  for (let k = 0; k < count; k++) {
    const market_id = markets[k % markets.length]!
    const { bid, ask } = touch.get(market_id) ?? { bid: 49, ask: 51 }
    const buy = Math.floor(k / markets.length) % 2 === 0
    const side = buy ? "buy" : "sell"
    const away = 4 + (k % 17)
    const behind = 2 + (k % 7)
    const passive = buy ? px(bid - behind) : px(ask + behind)
    const stop = buy ? px(ask + away) : px(bid - away)
    const type = COMPLEX_TYPES[Math.floor(k / markets.length) % COMPLEX_TYPES.length]!
    const base = { market_id, side, type, amount: String(1 + (k % 5)) }
    const order = (() => {
      switch (type) {
        case "stop_market":
          return { ...base, stop_price: stop }
        case "stop_limit":
          return { ...base, stop_price: stop, price: buy ? px(ask + away + 2) : px(bid - away - 2) }
        case "trailing_stop":
          return { ...base, params: { trail: px(away) } }
        case "iceberg":
          return { ...base, amount: "6", price: passive, params: { display: "2", follow: k % 4 === 0 } }
        case "oco":
          return {
            ...base,
            params: {
              legs: [
                { type: "limit", side, price: passive },
                { type: "stop_market", stop_price: buy ? px(ask + away) : px(bid - away), side }
              ]
            }
          }
        case "bracket":
          return {
            ...base,
            params: {
              entry: { price: passive },
              take_profit: { price: buy ? px(ask + away) : px(bid - away) },
              stop_loss: { stop_price: buy ? px(bid - behind - 3) : px(ask + behind + 3) }
            }
          }
        case "twap":
          return { ...base, amount: "12", price: passive, params: { window_s: 7200, slices: 12, style: "limit" } }
        case "peg":
          return { ...base, params: { reference: "near", offset: "0.01" } }
        case "smart_taker":
          return { ...base, params: { limit: buy ? px(bid - 20) : px(ask + 20), interval_s: 900 } }
      }
    })()
    orders.push({ at_ms, order })
  }
  return Schema.decodeUnknownSync(Scenario)(orders)
}

export interface Throughput {
  /** Market inputs per second through venue, driver and engine, after the parents were placed. */
  readonly inputsPerS: number
  /** The same inputs applied to bare books. */
  readonly baselinePerS: number
  /** The timed inputs per CPU second of this process, and the bare books' the same way. */
  readonly inputsPerCpuS: number
  readonly baselinePerCpuS: number
  readonly inputs: number
  /** Inputs inside the timed window (from the first progress report after the parents were placed). */
  readonly timedInputs: number
  /** Parents placed: every one of the scenario's (a refusal fails the run). */
  readonly liveAtStart: number
  readonly liveAtEnd: number
  /** Parents woken per market view. */
  readonly wokenPerView: number
  /** Parents woken, by type. */
  readonly wokenByType: Readonly<Record<string, number>>
  /** Where the timed inputs' wall time went (`ReplayTimings`, over the timed inputs only). */
  readonly window: {
    readonly ms: number
    /** Inputs that caused no timed work: their time is the window's less the timed work's. */
    readonly marketMs: number
    readonly own: { readonly ms: number; readonly events: number }
    readonly woken: { readonly ms: number; readonly parents: number; readonly views: number }
    readonly scheduled: { readonly ms: number; readonly moments: number }
  }
}

/** Runs `parents` parents over the tape; the inputs after the parents were placed are timed. */
export const throughput = async (tape: Tape, parents: number): Promise<Throughput> => {
  const at_ms = 1
  const orders = mixedParents(tape, parents, at_ms)
  const t0 = tape.events[0]?.ts ?? 0
  const first = tape.events.findIndex((e) => e.ts > t0 + at_ms)
  const inputs = tape.events.length - first
  let start = 0
  let cpuStart = 0
  let cpuEnd = 0
  let startedAt = first
  let end = 0
  let endedAt = first
  let liveAtEnd = 0
  let stats: ReturnType<Engine["Type"]["stats"]> = { views: 0, woken: 0, wokenByType: {} }
  const timings = replayTimings(() => performance.now())
  const segments = () => structuredClone({ own: timings.own, woken: timings.woken, scheduled: timings.scheduled })
  let atStart = segments()
  const { summary } = await Effect.runPromise(
    replay({
      tape,
      orders,
      seed: 1,
      startingCash: "1000000000",
      // As `sim replay` and backtests run: the log is hashed and handed on as it is written, not kept whole.
      keepLog: false,
      timings,
      onProgress: (done, total) => {
        if (start === 0 && done > first) {
          start = performance.now()
          cpuStart = cpuSeconds()
          startedAt = done
          atStart = segments()
        }
        if (done === total) {
          end = performance.now()
          cpuEnd = cpuSeconds()
          endedAt = done
        }
      },
      hooks: {
        end: (run) =>
          Effect.gen(function* () {
            const engine = Context.get(run.context, Engine)
            liveAtEnd = yield* engine.liveCount
            stats = engine.stats()
          })
      }
    })
  )
  // A refused parent would leave the window with fewer live parents than it claims.
  if (summary.orders.refused.length > 0) {
    const one = summary.orders.refused[0]!
    throw new Error(`${summary.orders.refused.length} scenario orders refused, first: ${one.code} ${one.message}`)
  }
  const bare = timeBoth(3, () => applyToBareBooks(tape.events))
  const ms = end - start
  const own = { ms: timings.own.ms - atStart.own.ms, events: timings.own.events - atStart.own.events }
  const woken = {
    ms: timings.woken.ms - atStart.woken.ms,
    parents: timings.woken.parents - atStart.woken.parents,
    views: timings.woken.count - atStart.woken.count
  }
  const scheduled = {
    ms: timings.scheduled.ms - atStart.scheduled.ms,
    moments: timings.scheduled.count - atStart.scheduled.count
  }
  return {
    inputsPerS: Math.round((endedAt - startedAt) / (ms / 1000)),
    baselinePerS: Math.round(tape.events.length / bare.wall),
    inputsPerCpuS: Math.round((endedAt - startedAt) / (cpuEnd - cpuStart)),
    baselinePerCpuS: Math.round(tape.events.length / bare.cpu),
    inputs,
    timedInputs: endedAt - startedAt,
    liveAtStart: parents,
    liveAtEnd,
    wokenPerView: stats.woken / Math.max(1, stats.views),
    wokenByType: stats.wokenByType as Readonly<Record<string, number>>,
    window: { ms, marketMs: ms - own.ms - woken.ms - scheduled.ms, own, woken, scheduled }
  }
}
