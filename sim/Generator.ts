/** A seeded generator of realistic binary-market tapes: drifting fair values, news jumps, makers, takers, settlements. */
import * as F from "../src/Domain/Fixed.ts"
import { SeededRandom } from "../src/Domain/Random.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"

/** Options of {@link generateTape}. */
export interface GenerateOptions {
  /** Any integer; only its low 32 bits matter (SeededRandom). */
  readonly seed: number
  /** Number of markets, 1–999. */
  readonly markets: number
  /** Simulated length in seconds. */
  readonly durationS: number
  /** ts of the opening snapshots; default 1_767_225_600_000 (2026-01-01T00:00:00Z). */
  readonly startMs?: number
  /** Time step in ms; every event of a step carries the step's ts. Default 250. */
  readonly stepMs?: number
  /**
   * Venues, 1–3 (default 1). Each venue after `sim` (`sim2`, `sim3`) lists every market again with makers and takers
   * of its own and a fair value tied to the first venue's (up to noise), every other one stated the other way round
   * (`sim2:gen-002-no`: its YES is `sim:GEN-002`'s NO), settling with it.
   */
  readonly venues?: number
}

/** Default start of generated tapes: 2026-01-01T00:00:00Z. */
export const DEFAULT_START_MS = 1_767_225_600_000
/** Default step between generator ticks, in ms. */
export const DEFAULT_STEP_MS = 250

// Prices are whole cents 1..99, sizes whole lots; fair values are in 1e-4 of a dollar (0..10000).
const PRICE: ReadonlyArray<string> = Array.from({ length: 101 }, (_, c) =>
  F.format(F.div(F.fromInt(c), F.fromInt(100)))
)
const NO_BID = 0
const NO_ASK = 100
const FAIR_MIN = 150
const FAIR_MAX = 9850
const QUOTE_LEVELS = 5
const FAR_LEVEL = 9
const JUMP_CHANCE = 0.0003
const SWITCH_TO_BUSY = 0.002
const SWITCH_TO_QUIET = 0.006
const TAKER_CHANCE_BUSY = 0.45
const TAKER_CHANCE_QUIET = 0.03
const RESOLVE_CHANCE = 0.3

interface MarketState {
  readonly id: string
  /** A market of another venue asking the same (or, flipped, the opposite) question as `base`. */
  readonly link?: { readonly base: MarketState; readonly flip: boolean }
  readonly rng: SeededRandom
  readonly bid: Int32Array
  readonly ask: Int32Array
  fair: number
  bestBid: number
  bestAsk: number
  busy: boolean
  resolveStep: number
  done: boolean
}

/**
 * Generates a tape of `markets` binary markets over `durationS` seconds. Per market: a fair value that random-walks
 * and now and then jumps a good part of the way toward 0 or 1 (news); makers quoting a few levels each side of it
 * with random sizes, adding and cancelling; takers hitting the bid or lifting the offer at the touch (each `trade`
 * is followed by the `change` it caused, at the same ts), more of them in busy stretches than in quiet ones, and
 * informed takers picking off quotes left on the wrong side of a moved fair value; and, for some markets, a
 * settlement: the fair value goes to 0 or 1, the stale side is swept, then `closed`, an empty snapshot, and
 * `settled` with the result. Starts with one snapshot per market.
 *
 * Tick 0.01 and lot 1; prices stay in [0.01, 0.99]; the book is never crossed after any event. Each market draws
 * from its own `SeededRandom.derive(seed, "market:<i>")` stream, so the same options give byte-identical
 * `formatTape` output.
 */
export const generateTape = (options: GenerateOptions): { header: TapeHeader; events: Array<TapeEvent> } => {
  const { seed, markets: count, durationS } = options
  const startMs = options.startMs ?? DEFAULT_START_MS
  const stepMs = options.stepMs ?? DEFAULT_STEP_MS
  if (!Number.isSafeInteger(seed)) throw new RangeError("seed must be an integer")
  if (!Number.isInteger(count) || count < 1 || count > 999) throw new RangeError("markets must be 1–999")
  if (!(durationS >= 0) || !Number.isFinite(durationS)) throw new RangeError("durationS must be ≥ 0")
  if (!Number.isSafeInteger(startMs) || startMs < 0) throw new RangeError("startMs must be a non-negative integer")
  if (!Number.isSafeInteger(stepMs) || stepMs < 1) throw new RangeError("stepMs must be a positive integer")
  const venueCount = options.venues ?? 1
  if (!Number.isInteger(venueCount) || venueCount < 1 || venueCount > 3) throw new RangeError("venues must be 1–3")
  const steps = Math.floor((durationS * 1000) / stepMs)

  const events: Array<TapeEvent> = []
  let ts = startMs

  const set = (m: MarketState, side: "bid" | "ask", c: number, size: number): void => {
    if (side === "bid") {
      m.bid[c] = size
      if (size > 0) {
        if (c > m.bestBid) m.bestBid = c
      } else if (c === m.bestBid) {
        let b = c - 1
        while (b > NO_BID && m.bid[b] === 0) b--
        m.bestBid = b
      }
    } else {
      m.ask[c] = size
      if (size > 0) {
        if (c < m.bestAsk) m.bestAsk = c
      } else if (c === m.bestAsk) {
        let a = c + 1
        while (a < NO_ASK && m.ask[a] === 0) a++
        m.bestAsk = a
      }
    }
    events.push({ type: "change", ts, market: m.id, side, price: PRICE[c]!, size: String(size) })
  }

  /** One taker order at the touch: trade then change, level by level; returns the lots left unfilled. */
  const take = (m: MarketState, buy: boolean, want: number, maxLevels: number): number => {
    for (let n = 0; n < maxLevels && want > 0; n++) {
      const c = buy ? m.bestAsk : m.bestBid
      if (c === (buy ? NO_ASK : NO_BID)) break
      const have = buy ? m.ask[c]! : m.bid[c]!
      const q = want < have ? want : have
      events.push({
        type: "trade",
        ts,
        market: m.id,
        price: PRICE[c]!,
        amount: String(q),
        taker_side: buy ? "buy" : "sell"
      })
      set(m, buy ? "ask" : "bid", c, have - q)
      want -= q
    }
    return want
  }

  const makerSize = (r: SeededRandom): number => (r.chance(0.1) ? r.int(200, 2000) : r.int(1, 150))

  const state: Array<MarketState> = []
  /** A linked market's fair value: its base's (the complement when flipped), moved by up to `noise`. */
  const linkedFair = (m: MarketState, noise: number) => {
    const base = m.link!.flip ? 10000 - m.link!.base.fair : m.link!.base.fair
    const fair = base + m.rng.int(-noise, noise)
    return fair < FAIR_MIN ? FAIR_MIN : fair > FAIR_MAX ? FAIR_MAX : fair
  }
  const open = (i: number, venue: number, base: MarketState | undefined) => {
    const flip = base !== undefined && i % 2 === 1
    const rng = SeededRandom.derive(seed, venue === 1 ? `market:${i}` : `market:${i}:sim${venue}`)
    const number = String(i + 1).padStart(3, "0")
    const m: MarketState = {
      id: venue === 1 ? `sim:GEN-${number}` : `sim${venue}:gen-${number}${flip ? "-no" : ""}`,
      ...(base === undefined ? {} : { link: { base, flip } }),
      rng,
      bid: new Int32Array(101),
      ask: new Int32Array(101),
      fair: 0,
      bestBid: NO_BID,
      bestAsk: NO_ASK,
      busy: false,
      resolveStep: -1,
      done: false
    }
    m.fair = base === undefined ? rng.int(1500, 8500) : linkedFair(m, 50)
    m.busy = rng.chance(0.3)
    // A linked market settles with its base, never on its own.
    m.resolveStep =
      base === undefined && rng.chance(RESOLVE_CHANCE) ? rng.int(Math.floor(steps / 4), Math.max(steps, 1)) : -1
    const bids: Array<[string, string]> = []
    const asks: Array<[string, string]> = []
    const top = Math.ceil(m.fair / 100)
    const bottom = Math.floor(m.fair / 100)
    for (let k = 1; k <= QUOTE_LEVELS; k++) {
      const b = top - k
      const a = bottom + k
      if (b > NO_BID) {
        m.bid[b] = rng.int(10, 500)
        if (m.bestBid === NO_BID) m.bestBid = b
        bids.push([PRICE[b]!, String(m.bid[b])])
      }
      if (a < NO_ASK) {
        m.ask[a] = rng.int(10, 500)
        if (m.bestAsk === NO_ASK) m.bestAsk = a
        asks.push([PRICE[a]!, String(m.ask[a])])
      }
    }
    events.push({ type: "snapshot", ts, market: m.id, bids, asks })
    state.push(m)
  }
  for (let i = 0; i < count; i++) open(i, 1, undefined)
  for (let venue = 2; venue <= venueCount; venue++) for (let i = 0; i < count; i++) open(i, venue, state[i])

  /** Each settled market's result, for the markets linked to it. */
  const results = new Map<MarketState, boolean>()
  const resolve = (m: MarketState): void => {
    const r = m.rng
    const yes = m.link === undefined ? r.int(0, 9999) < m.fair : results.get(m.link.base)! !== m.link.flip
    results.set(m, yes)
    m.fair = yes ? 10000 : 0
    take(m, yes, Number.MAX_SAFE_INTEGER, NO_ASK)
    events.push({ type: "status", ts, market: m.id, status: "closed" })
    m.bid.fill(0)
    m.ask.fill(0)
    m.bestBid = NO_BID
    m.bestAsk = NO_ASK
    events.push({ type: "snapshot", ts, market: m.id, bids: [], asks: [] })
    events.push({ type: "status", ts, market: m.id, status: "settled", result: yes ? "yes" : "no" })
    m.done = true
  }

  const step = (m: MarketState, s: number): void => {
    const r = m.rng
    if (s === m.resolveStep || (m.link !== undefined && m.link.base.done)) return resolve(m)
    if (r.chance(m.busy ? SWITCH_TO_QUIET : SWITCH_TO_BUSY)) m.busy = !m.busy

    if (m.link !== undefined) m.fair = linkedFair(m, 30)
    else {
      m.fair += r.int(-6, 6)
      if (r.chance(JUMP_CHANCE)) {
        const target = r.chance(0.5) ? 10000 : 0
        m.fair += Math.trunc(((target - m.fair) * r.int(20, 60)) / 100)
      }
      m.fair = m.fair < FAIR_MIN ? FAIR_MIN : m.fair > FAIR_MAX ? FAIR_MAX : m.fair
    }

    // Informed takers pick off quotes left half a cent or more on the wrong side of fair.
    for (let n = 0; n < 4 && m.bestAsk < NO_ASK && m.bestAsk * 100 <= m.fair - 50; n++)
      take(m, true, m.ask[m.bestAsk]!, 1)
    for (let n = 0; n < 4 && m.bestBid > NO_BID && m.bestBid * 100 >= m.fair + 50; n++)
      take(m, false, m.bid[m.bestBid]!, 1)

    const top = Math.ceil(m.fair / 100)
    const bottom = Math.floor(m.fair / 100)
    const makers = m.busy ? r.int(1, 3) : r.int(0, 2)
    for (let n = 0; n < makers; n++) {
      const bid = r.chance(0.5)
      const k = 1 + Math.min(r.int(0, QUOTE_LEVELS - 1), r.int(0, QUOTE_LEVELS - 1))
      const c = bid ? top - k : bottom + k
      if (bid ? c <= NO_BID || c >= m.bestAsk : c >= NO_ASK || c <= m.bestBid) continue
      const cur = bid ? m.bid[c]! : m.ask[c]!
      const next = cur > 0 && r.chance(0.35) ? cur - r.int(1, cur) : cur + makerSize(r)
      set(m, bid ? "bid" : "ask", c, next)
    }

    if (r.chance(0.08)) {
      let low = NO_BID + 1
      while (low < m.bestBid && m.bid[low] === 0) low++
      if (low <= m.bestBid && m.bid[low]! > 0 && top - low > FAR_LEVEL) set(m, "bid", low, 0)
      let high = NO_ASK - 1
      while (high > m.bestAsk && m.ask[high] === 0) high--
      if (high >= m.bestAsk && m.ask[high]! > 0 && high - bottom > FAR_LEVEL) set(m, "ask", high, 0)
    }

    if (r.chance(m.busy ? TAKER_CHANCE_BUSY : TAKER_CHANCE_QUIET)) {
      const mid = m.bestBid > NO_BID && m.bestAsk < NO_ASK ? (m.bestBid + m.bestAsk) * 50 : m.fair
      const lean = Math.max(-20, Math.min(20, Math.trunc((m.fair - mid) / 5)))
      const buy = r.int(0, 99) < 50 + lean
      const want = r.chance(0.15) ? r.int(50, 600) : r.int(1, 60)
      take(m, buy, want, 3)
    }
  }

  for (let s = 1; s <= steps; s++) {
    ts = startMs + s * stepMs
    for (const m of state) if (!m.done) step(m, s)
  }

  const header: TapeHeader = {
    type: "header",
    version: 1,
    source: "generated",
    markets: state.map((m, i) => ({
      id: m.id,
      title: `Generated market ${(i % count) + 1}${m.link?.flip === true ? ", stated the other way round" : ""}`,
      tick: "0.01",
      lot: "1"
    })),
    seed,
    notes: `sim/Generator.ts: ${count} markets, ${durationS} s, step ${stepMs} ms${
      venueCount > 1 ? `, on ${venueCount} venues` : ""
    }`
  }
  return { header, events }
}
