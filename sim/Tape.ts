/** The tape: crossbook's one line-delimited JSON format for recorded or generated YES books, changes and trades. */
/**
 * # Tape format, version 1
 *
 * UTF-8 text, one JSON object per line, every line ending in "\n" (the last one too). Line 1 is the
 * header; every other line is an event. Keys appear in the order written below; {@link formatTape} always
 * writes them so, which makes the same tape the same bytes.
 *
 * Header:
 * `{"type":"header","version":1,"source":"generated"|"polymarket"|"kalshi","markets":[{"id","title","tick","lot"}],"seed"?,"notes"?}`
 * - `id` is `<venue>:<native id>` (`polymarket:<token id>`, `kalshi:<ticker>`, `sim:GEN-001`); every event's
 *   `market` names one of these ids.
 * - `tick` is the price grid and `lot` the order-size step the sim venue enforces for its own orders.
 *   Recorded sizes need not be multiples of `lot` (Polymarket reports fills to 1e-6).
 *
 * Events, each with `ts` (integer ms since the Unix epoch; never decreasing from one line to the next):
 * - `{"type":"snapshot","ts","market","bids":[[price,size],...],"asks":[[price,size],...]}` — the whole YES
 *   book, each side best first (bids by falling price, asks by rising price), no zero sizes; replaces the book.
 * - `{"type":"change","ts","market","side":"bid"|"ask","price","size"}` — the new total size at one level;
 *   `"0"` removes the level.
 * - `{"type":"trade","ts","market","price","amount","taker_side":"buy"|"sell"}` — a print; `taker_side` is the
 *   taker's direction in YES terms. A trade does not change the book: the changes it caused follow it as
 *   `change` events (the generator writes them right after the trade with the same `ts`; recorded tapes keep
 *   the venue's order).
 * - `{"type":"status","ts","market","status":"open"|"closed"|"settled","result"?:"yes"|"no"}` — `result` only
 *   with `settled`. A status does not change the book; a cleared book is written as an empty snapshot.
 * - `{"type":"quote","ts","market","best_bid":price|null,"best_ask":price|null}` — the best bid/ask as the venue
 *   stated it in the recording, describing the market's book at the end of its `ts` (after every snapshot and
 *   change of that market with the same `ts`: venues split one update into several messages with one
 *   timestamp). Replays compare their own book against it; it never changes the book.
 * - `{"type":"gap","ts","market","expected":n,"got":n}` — a sequence gap found in a recorded stream. The
 *   book after a gap may be wrong until the next snapshot.
 *
 * Every price is a YES price and every price and size a canonical decimal string: digits, at most six places,
 * no trailing zeros, no sign ("0.45", "100", "0" — never "0.450" or "1e2"). Prices lie strictly between 0 and 1.
 * Snapshot sizes and trade amounts are positive; a change size may be "0".
 */
import { Either, ParseResult, Schema } from "effect"
import * as F from "../src/Domain/Fixed.ts"

const canonical = (s: string): F.Fixed | undefined => {
  const v = F.parse(s)
  return v !== undefined && v >= 0 && F.format(v) === s ? v : undefined
}

const Price = Schema.String.pipe(
  Schema.filter((s) => {
    const v = canonical(s)
    return (v !== undefined && v > 0 && v < F.ONE) || `expected a canonical decimal price in (0, 1), got "${s}"`
  })
)
const Size = Schema.String.pipe(
  Schema.filter((s) => canonical(s) !== undefined || `expected a canonical non-negative decimal, got "${s}"`)
)
const PositiveSize = Schema.String.pipe(
  Schema.filter((s) => (canonical(s) ?? 0) > 0 || `expected a canonical positive decimal, got "${s}"`)
)
const Ts = Schema.Int.pipe(Schema.nonNegative())
const MarketId = Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_-]*:\S+$/))
const Level = Schema.Tuple(Price, PositiveSize)

/** One market a tape covers. */
export const TapeMarket = Schema.Struct({ id: MarketId, title: Schema.String, tick: PositiveSize, lot: PositiveSize })
export type TapeMarket = typeof TapeMarket.Type

/** Line 1 of every tape. */
export const TapeHeader = Schema.Struct({
  type: Schema.Literal("header"),
  version: Schema.Literal(1),
  source: Schema.Literal("generated", "polymarket", "kalshi"),
  markets: Schema.Array(TapeMarket),
  seed: Schema.optionalWith(Schema.Int, { exact: true }),
  notes: Schema.optionalWith(Schema.String, { exact: true })
})
export type TapeHeader = typeof TapeHeader.Type

export const SnapshotEvent = Schema.Struct({
  type: Schema.Literal("snapshot"),
  ts: Ts,
  market: MarketId,
  bids: Schema.Array(Level),
  asks: Schema.Array(Level)
})
export type SnapshotEvent = typeof SnapshotEvent.Type

export const ChangeEvent = Schema.Struct({
  type: Schema.Literal("change"),
  ts: Ts,
  market: MarketId,
  side: Schema.Literal("bid", "ask"),
  price: Price,
  size: Size
})
export type ChangeEvent = typeof ChangeEvent.Type

export const TradeEvent = Schema.Struct({
  type: Schema.Literal("trade"),
  ts: Ts,
  market: MarketId,
  price: Price,
  amount: PositiveSize,
  taker_side: Schema.Literal("buy", "sell")
})
export type TradeEvent = typeof TradeEvent.Type

export const StatusEvent = Schema.Struct({
  type: Schema.Literal("status"),
  ts: Ts,
  market: MarketId,
  status: Schema.Literal("open", "closed", "settled"),
  result: Schema.optionalWith(Schema.Literal("yes", "no"), { exact: true })
})
export type StatusEvent = typeof StatusEvent.Type

export const QuoteEvent = Schema.Struct({
  type: Schema.Literal("quote"),
  ts: Ts,
  market: MarketId,
  best_bid: Schema.NullOr(Price),
  best_ask: Schema.NullOr(Price)
})
export type QuoteEvent = typeof QuoteEvent.Type

export const GapEvent = Schema.Struct({
  type: Schema.Literal("gap"),
  ts: Ts,
  market: MarketId,
  expected: Schema.Int.pipe(Schema.nonNegative()),
  got: Schema.Int.pipe(Schema.nonNegative())
})
export type GapEvent = typeof GapEvent.Type

/** Any line after the header. */
export const TapeEvent = Schema.Union(SnapshotEvent, ChangeEvent, TradeEvent, StatusEvent, QuoteEvent, GapEvent)
export type TapeEvent = typeof TapeEvent.Type

/** A whole tape in memory. */
export interface Tape {
  readonly header: TapeHeader
  readonly events: ReadonlyArray<TapeEvent>
}

const TapeLine = Schema.Union(TapeHeader, TapeEvent)
const decodeLine = Schema.decodeUnknownEither(TapeLine, { errors: "first" })

// Decoding ignores unknown keys (twice as fast as onExcessProperty: "error"); they are refused here instead.
const KEYS: Record<string, ReadonlySet<string>> = {
  header: new Set(["type", "version", "source", "markets", "seed", "notes"]),
  snapshot: new Set(["type", "ts", "market", "bids", "asks"]),
  change: new Set(["type", "ts", "market", "side", "price", "size"]),
  trade: new Set(["type", "ts", "market", "price", "amount", "taker_side"]),
  status: new Set(["type", "ts", "market", "status", "result"]),
  quote: new Set(["type", "ts", "market", "best_bid", "best_ask"]),
  gap: new Set(["type", "ts", "market", "expected", "got"])
}
const MARKET_KEYS: ReadonlySet<string> = new Set(["id", "title", "tick", "lot"])

const unknownKey = (json: Record<string, unknown>, type: string): string | undefined => {
  const allowed = KEYS[type]!
  for (const k in json) if (!allowed.has(k)) return k
  if (type === "header" && Array.isArray(json["markets"])) {
    for (const m of json["markets"] as Array<Record<string, unknown>>)
      for (const k in m) if (!MARKET_KEYS.has(k)) return k
  }
  return undefined
}

const strictlyOrdered = (levels: ReadonlyArray<readonly [string, string]>, falling: boolean): boolean => {
  for (let i = 1; i < levels.length; i++) {
    const a = F.of(levels[i - 1]![0])
    const b = F.of(levels[i]![0])
    if (falling ? b >= a : b <= a) return false
  }
  return true
}

const semanticProblem = (x: TapeHeader | TapeEvent): string | undefined => {
  switch (x.type) {
    case "header": {
      const ids = new Set(x.markets.map((m) => m.id))
      return ids.size === x.markets.length ? undefined : "market ids repeat"
    }
    case "snapshot":
      if (!strictlyOrdered(x.bids, true)) return "snapshot bids must be best first with distinct prices"
      if (!strictlyOrdered(x.asks, false)) return "snapshot asks must be best first with distinct prices"
      return undefined
    case "status":
      return x.result !== undefined && x.status !== "settled" ? "result is only allowed with status settled" : undefined
    case "gap":
      return x.expected === x.got ? "a gap needs expected ≠ got" : undefined
    default:
      return undefined
  }
}

/**
 * Parses and validates one line (header or event); throws an Error that names `lineNumber` when given.
 * Unknown keys, non-canonical decimals and misordered snapshot levels are errors.
 */
export const parseTapeLine = (line: string, lineNumber?: number): TapeHeader | TapeEvent => {
  const where = lineNumber === undefined ? "tape line" : `tape line ${lineNumber}`
  let json: unknown
  try {
    json = JSON.parse(line)
  } catch (e) {
    throw new Error(`${where}: not JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  const decoded = decodeLine(json)
  if (Either.isLeft(decoded)) {
    throw new Error(`${where}: ${ParseResult.TreeFormatter.formatErrorSync(decoded.left)}`)
  }
  const extra = unknownKey(json as Record<string, unknown>, decoded.right.type)
  if (extra !== undefined) throw new Error(`${where}: unknown key "${extra}"`)
  const problem = semanticProblem(decoded.right)
  if (problem !== undefined) throw new Error(`${where}: ${problem}`)
  return decoded.right
}

const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

/**
 * Event lines written exactly as {@link formatTapeLine} writes them (snapshot, change, trade, quote: keys in order, no
 * spaces, no escapes, a `ts` of at most 15 digits, a market id of the header free of quotes, backslashes and control
 * characters), read character by character without `JSON.parse`. The JSON of such a line holds just these keys with
 * these values, so checking the values here checks what the schema checks. Any other line answers undefined and goes
 * on to {@link makeFastLine}.
 */
const makeCanonicalLine = (markets: ReadonlySet<string>) => {
  const ids = new Map<string, string>()
  for (const id of markets) {
    let plain = true
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i)
      if (c < 0x20 || c === 0x22 || c === 0x5c) plain = false
    }
    if (plain) ids.set(id, id)
  }
  let line = ""
  let pos = 0
  /** Where the last decimal's digits began. */
  let from = 0
  // slice and === beat startsWith and a charCodeAt loop here (on the sliced strings that split gives).
  const lit = (s: string): boolean => {
    if (line.slice(pos, pos + s.length) !== s) return false
    pos += s.length
    return true
  }
  /** A JSON integer of 1 to 15 digits (no sign, no leading zero): exactly what JSON.parse reads; else -1. */
  const int = (): number => {
    const start = pos
    let c = line.charCodeAt(pos) - 48
    if (!(c >= 0 && c <= 9)) return -1
    let v = c
    pos += 1
    if (c === 0) return v
    for (;;) {
      c = line.charCodeAt(pos) - 48
      if (!(c >= 0 && c <= 9)) break
      v = v * 10 + c
      pos += 1
      if (pos - start > 15) return -1
    }
    return v
  }
  /**
   * A canonical decimal and its closing quote, from `pos` (just after the opening quote): digits without a leading
   * zero, then at most six places not ending in zero, making a safe integer of millionths — what `canonical` accepts.
   * Answers its Fixed value (the text is `line.slice(from, pos - 1)`), else -1.
   */
  const decimal = (): number => {
    from = pos
    let c = line.charCodeAt(pos) - 48
    if (!(c >= 0 && c <= 9)) return -1
    let whole = c
    pos += 1
    if (c !== 0) {
      for (;;) {
        c = line.charCodeAt(pos) - 48
        if (!(c >= 0 && c <= 9)) break
        whole = whole * 10 + c
        pos += 1
        if (pos - from > 15) return -1
      }
    }
    let frac = 0
    let code = line.charCodeAt(pos)
    if (code === 46) {
      pos += 1
      const fracStart = pos
      let last = 0
      for (;;) {
        c = line.charCodeAt(pos) - 48
        if (!(c >= 0 && c <= 9)) break
        frac = frac * 10 + c
        last = c
        pos += 1
        if (pos - fracStart > 6) return -1
      }
      const places = pos - fracStart
      if (places === 0 || last === 0) return -1
      frac *= POW10[6 - places]!
      code = line.charCodeAt(pos)
    }
    if (code !== 34) return -1
    pos += 1
    const v = whole * F.SCALE + frac
    return Number.isSafeInteger(v) ? v : -1
  }
  const price = (): number => {
    const v = decimal()
    return v > 0 && v < F.SCALE ? v : -1
  }
  const text = (): string => line.slice(from, pos - 1)
  /** A header market id and its closing quote, from just after the opening quote; else undefined. */
  const market = (): string | undefined => {
    const end = line.indexOf('"', pos)
    if (end < 0) return undefined
    const id = ids.get(line.slice(pos, end))
    pos = end + 1
    return id
  }
  const levels = (falling: boolean): Array<readonly [string, string]> | undefined => {
    if (!lit("[")) return undefined
    const out: Array<readonly [string, string]> = []
    if (lit("]")) return out
    let last = -1
    for (;;) {
      if (!lit('["')) return undefined
      const p = price()
      if (p < 0 || (last >= 0 && (falling ? p >= last : p <= last))) return undefined
      const pt = text()
      if (!lit(',"') || decimal() <= 0) return undefined
      out.push([pt, text()])
      if (!lit("]")) return undefined
      last = p
      if (lit("]")) return out
      if (!lit(",")) return undefined
    }
  }
  const nullOrPrice = (): string | null | undefined => {
    if (lit("null")) return null
    if (!lit('"') || price() < 0) return undefined
    return text()
  }
  const end = (): boolean => lit("}") && pos === line.length

  return (input: string): TapeEvent | undefined => {
    line = input
    pos = 0
    if (!lit('{"type":"')) return undefined
    switch (line.charCodeAt(pos)) {
      case 99: {
        if (!lit('change","ts":')) return undefined
        const ts = int()
        if (ts < 0 || !lit(',"market":"')) return undefined
        const m = market()
        if (m === undefined || !lit(',"side":"')) return undefined
        const side = lit('bid"') ? "bid" : lit('ask"') ? "ask" : undefined
        if (side === undefined || !lit(',"price":"') || price() < 0) return undefined
        const p = text()
        if (!lit(',"size":"') || decimal() < 0) return undefined
        const size = text()
        if (!end()) return undefined
        return { type: "change", ts, market: m, side, price: p, size }
      }
      case 116: {
        if (!lit('trade","ts":')) return undefined
        const ts = int()
        if (ts < 0 || !lit(',"market":"')) return undefined
        const m = market()
        if (m === undefined || !lit(',"price":"') || price() < 0) return undefined
        const p = text()
        if (!lit(',"amount":"') || decimal() <= 0) return undefined
        const amount = text()
        if (!lit(',"taker_side":"')) return undefined
        const taker = lit('buy"') ? "buy" : lit('sell"') ? "sell" : undefined
        if (taker === undefined || !end()) return undefined
        return { type: "trade", ts, market: m, price: p, amount, taker_side: taker }
      }
      case 115: {
        if (!lit('snapshot","ts":')) return undefined
        const ts = int()
        if (ts < 0 || !lit(',"market":"')) return undefined
        const m = market()
        if (m === undefined || !lit(',"bids":')) return undefined
        const bids = levels(true)
        if (bids === undefined || !lit(',"asks":')) return undefined
        const asks = levels(false)
        if (asks === undefined || !end()) return undefined
        return { type: "snapshot", ts, market: m, bids, asks }
      }
      case 113: {
        if (!lit('quote","ts":')) return undefined
        const ts = int()
        if (ts < 0 || !lit(',"market":"')) return undefined
        const m = market()
        if (m === undefined || !lit(',"best_bid":')) return undefined
        const bid = nullOrPrice()
        if (bid === undefined || !lit(',"best_ask":')) return undefined
        const ask = nullOrPrice()
        if (ask === undefined || !end()) return undefined
        return { type: "quote", ts, market: m, best_bid: bid, best_ask: ask }
      }
      default:
        return undefined
    }
  }
}

/**
 * The common event lines (snapshot, change, trade) checked by hand for exactly what the schema checks, on a market of
 * the header; undefined sends the line through {@link parseTapeLine}, which accepts it or says what is wrong. It never
 * accepts what the schema refuses (`test/sim/TapeParse.test.ts` holds it to that).
 */
const makeFastLine = (markets: ReadonlySet<string>) => {
  const canonicalSeen = new Map<string, F.Fixed | undefined>()
  const canon = (value: unknown): F.Fixed | undefined => {
    if (typeof value !== "string") return undefined
    let v = canonicalSeen.get(value)
    if (v === undefined && !canonicalSeen.has(value)) {
      v = canonical(value)
      if (canonicalSeen.size < 100_000) canonicalSeen.set(value, v)
    }
    return v
  }
  const price = (value: unknown): boolean => {
    const v = canon(value)
    return v !== undefined && v > 0 && v < F.ONE
  }
  const positive = (value: unknown): boolean => {
    const v = canon(value)
    return v !== undefined && v > 0
  }
  const keysAre = (json: Record<string, unknown>, count: number, allowed: ReadonlySet<string>): boolean => {
    let n = 0
    for (const k in json) {
      if (!allowed.has(k)) return false
      n += 1
    }
    return n === count
  }
  const levels = (value: unknown, falling: boolean): value is ReadonlyArray<readonly [string, string]> => {
    if (!Array.isArray(value)) return false
    let last: F.Fixed | undefined
    for (const level of value) {
      if (!Array.isArray(level) || level.length !== 2 || !price(level[0]) || !positive(level[1])) return false
      const p = canon(level[0])!
      if (last !== undefined && (falling ? p >= last : p <= last)) return false
      last = p
    }
    return true
  }
  return (line: string): TapeEvent | undefined => {
    let json: Record<string, unknown>
    try {
      json = JSON.parse(line) as Record<string, unknown>
    } catch {
      return undefined
    }
    if (typeof json !== "object" || json === null || Array.isArray(json)) return undefined
    const { type, ts, market } = json
    if (typeof ts !== "number" || !Number.isSafeInteger(ts) || ts < 0) return undefined
    if (typeof market !== "string" || !markets.has(market)) return undefined
    switch (type) {
      case "change": {
        const { side, price: p, size } = json
        if (!keysAre(json, 6, KEYS["change"]!) || (side !== "bid" && side !== "ask")) return undefined
        if (!price(p) || canon(size) === undefined) return undefined
        return { type, ts, market, side, price: p as string, size: size as string }
      }
      case "trade": {
        const { price: p, amount, taker_side } = json
        if (!keysAre(json, 6, KEYS["trade"]!) || (taker_side !== "buy" && taker_side !== "sell")) return undefined
        if (!price(p) || !positive(amount)) return undefined
        return { type, ts, market, price: p as string, amount: amount as string, taker_side }
      }
      case "snapshot": {
        const { bids, asks } = json
        if (!keysAre(json, 5, KEYS["snapshot"]!) || !levels(bids, true) || !levels(asks, false)) return undefined
        return {
          type,
          ts,
          market,
          bids: bids.map(([a, b]) => [a, b] as const),
          asks: asks.map(([a, b]) => [a, b] as const)
        }
      }
      default:
        return undefined
    }
  }
}

/**
 * Parses a whole tape, validating every line: a header first, then events for the header's markets in
 * non-decreasing `ts`. Throws an Error naming the first bad line (1-based). A final newline is expected;
 * a blank line anywhere else is an error.
 */
export const parseTape = (text: string): { header: TapeHeader; events: Array<TapeEvent> } => parseTapeWith(text, true)

/** {@link parseTape} with every line through the schema (no fast path): the reference the fast path is held to. */
export const parseTapeStrict = (text: string): { header: TapeHeader; events: Array<TapeEvent> } =>
  parseTapeWith(text, false)

const parseTapeWith = (text: string, fast: boolean): { header: TapeHeader; events: Array<TapeEvent> } => {
  const lines = text.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  const header = parseHeaderLine(lines[0]!)
  const parse = makeEventParser(header, fast)
  const events: Array<TapeEvent> = []
  for (let i = 1; i < lines.length; i++) events.push(parse(lines[i]!, i + 1))
  return { header, events }
}

/** Parses line 1 of a tape (a final "\r" is dropped); throws when it is not a valid header. */
export const parseHeaderLine = (line: string): TapeHeader => {
  const first = parseTapeLine(line.replace(/\r$/, ""), 1)
  if (first.type !== "header") throw new Error("tape line 1: expected the header")
  return first
}

/**
 * A parser of the event lines that follow `header`, one at a time and in order (a final "\r" is dropped): each line is
 * validated as {@link parseTape} does, on a market of the header and not before the line ahead of it. Throws an Error
 * naming the line number it is given.
 */
export const makeEventParser = (header: TapeHeader, fast = true): ((line: string, n: number) => TapeEvent) => {
  const markets = new Set(header.markets.map((m) => m.id))
  const canonicalLine = fast ? makeCanonicalLine(markets) : () => undefined
  const fastLine = fast ? makeFastLine(markets) : () => undefined
  let lastTs = -1
  return (input, n) => {
    const line = input.charCodeAt(input.length - 1) === 13 ? input.slice(0, -1) : input
    const x = canonicalLine(line) ?? fastLine(line) ?? parseTapeLine(line, n)
    if (x.type === "header") throw new Error(`tape line ${n}: a second header`)
    if (!markets.has(x.market)) throw new Error(`tape line ${n}: market ${x.market} is not in the header`)
    if (x.ts < lastTs) throw new Error(`tape line ${n}: ts ${x.ts} is before the previous line's ${lastTs}`)
    lastTs = x.ts
    return x
  }
}

// JSON.stringify escapes only quotes, backslashes, control characters and lone surrogates; other strings are quoted as they are.
const plain = (s: string): boolean => {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return false
  }
  return true
}
const q = (s: string): string => (plain(s) ? '"' + s + '"' : JSON.stringify(s))
const qn = (s: string | null): string => (s === null ? "null" : q(s))
const levelsJson = (levels: ReadonlyArray<readonly [string, string]>): string => {
  let out = "["
  for (let i = 0; i < levels.length; i++) {
    const l = levels[i]!
    out += (i === 0 ? "[" : ",[") + q(l[0]) + "," + q(l[1]) + "]"
  }
  return out + "]"
}

/** One line in canonical form (no newline). Does not validate; {@link parseTapeLine} does. */
export const formatTapeLine = (x: TapeHeader | TapeEvent): string => {
  switch (x.type) {
    case "header": {
      const markets = x.markets.map((m) => ({ id: m.id, title: m.title, tick: m.tick, lot: m.lot }))
      const out: Record<string, unknown> = { type: "header", version: x.version, source: x.source, markets }
      if (x.seed !== undefined) out["seed"] = x.seed
      if (x.notes !== undefined) out["notes"] = x.notes
      return JSON.stringify(out)
    }
    case "snapshot":
      return `{"type":"snapshot","ts":${x.ts},"market":${q(x.market)},"bids":${levelsJson(x.bids)},"asks":${levelsJson(x.asks)}}`
    case "change":
      return `{"type":"change","ts":${x.ts},"market":${q(x.market)},"side":${q(x.side)},"price":${q(x.price)},"size":${q(x.size)}}`
    case "trade":
      return `{"type":"trade","ts":${x.ts},"market":${q(x.market)},"price":${q(x.price)},"amount":${q(x.amount)},"taker_side":${q(x.taker_side)}}`
    case "status": {
      const result = x.result === undefined ? "" : `,"result":${q(x.result)}`
      return `{"type":"status","ts":${x.ts},"market":${q(x.market)},"status":${q(x.status)}${result}}`
    }
    case "quote":
      return `{"type":"quote","ts":${x.ts},"market":${q(x.market)},"best_bid":${qn(x.best_bid)},"best_ask":${qn(x.best_ask)}}`
    case "gap":
      return `{"type":"gap","ts":${x.ts},"market":${q(x.market)},"expected":${x.expected},"got":${x.got}}`
  }
}

/** The canonical text of a tape: header line, one line per event, trailing newline. Same tape ⇒ same bytes. */
export const formatTape = (header: TapeHeader, events: ReadonlyArray<TapeEvent>): string => {
  const parts = new Array<string>(events.length + 1)
  parts[0] = formatTapeLine(header)
  for (let i = 0; i < events.length; i++) parts[i + 1] = formatTapeLine(events[i]!)
  return parts.join("\n") + "\n"
}
