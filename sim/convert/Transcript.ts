/** Shared pieces of the transcript converters: the recorder's envelope, exact time and decimal reading, the report. */
import * as F from "../../src/Domain/Fixed.ts"
import type { TapeEvent, TapeMarket } from "../Tape.ts"

/** One line of a recorded transcript: `{"dir": "out"|"in", "t": <unix s float>, "msg": ...}`. */
export interface TranscriptLine {
  /** 1-based line number in the transcript text. */
  readonly line: number
  readonly dir: "in" | "out"
  /** The envelope's receive time in whole ms (truncated), when the line has one. */
  readonly tMs: number | undefined
  readonly msg: unknown
}

/**
 * Seconds as a decimal string ("1789659362.29631") to whole ms, truncating below the ms, by digit arithmetic:
 * no binary multiply of a fraction. Undefined for anything but plain digits with an optional fraction.
 */
export const secondsTextToMs = (text: string): number | undefined => {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (m === null) return undefined
  const ms = Number(m[1]) * 1000 + Number(((m[2] ?? "") + "000").slice(0, 3))
  return Number.isSafeInteger(ms) ? ms : undefined
}

/**
 * The envelope's `t` (a JSON number of seconds) to whole ms. The number is read back through `String(t)`, the
 * shortest decimal that round-trips to the same double — the same digits the recorder (Python's json, which
 * writes `repr`) put in the file — and then truncated to the ms by {@link secondsTextToMs}.
 */
export const envelopeMs = (t: unknown): number | undefined =>
  typeof t === "number" && Number.isFinite(t) && t >= 0 ? secondsTextToMs(String(t)) : undefined

/** Splits a transcript into envelopes; lines that are not envelopes are returned as `bad`. Blank lines are ignored. */
export const readTranscript = (
  text: string
): { lines: Array<TranscriptLine>; bad: Array<{ line: number; reason: string }> } => {
  const lines: Array<TranscriptLine> = []
  const bad: Array<{ line: number; reason: string }> = []
  const raw = text.split("\n")
  for (let i = 0; i < raw.length; i++) {
    const s = raw[i]!.trim()
    if (s === "") continue
    let o: unknown
    try {
      o = JSON.parse(s)
    } catch {
      bad.push({ line: i + 1, reason: "not JSON" })
      continue
    }
    if (!isRecord(o) || (o["dir"] !== "in" && o["dir"] !== "out") || !("msg" in o)) {
      bad.push({ line: i + 1, reason: "not a {dir, t, msg} envelope" })
      continue
    }
    lines.push({ line: i + 1, dir: o["dir"], tMs: envelopeMs(o["t"]), msg: o["msg"] })
  }
  return { lines, bad }
}

export const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x)

/** A decimal string in canonical tape form ("0.470" → "0.47", "450.00" → "450"); undefined when unreadable. */
export const canonicalDecimal = (text: unknown): string | undefined => {
  if (typeof text !== "string") return undefined
  const v = F.parse(text)
  return v === undefined ? undefined : F.format(v)
}

/** Whole milliseconds from an integer or a string of digits (venue timestamps such as "1789659361018"). */
export const integerMs = (x: unknown): number | undefined => {
  if (typeof x === "number") return Number.isSafeInteger(x) && x >= 0 ? x : undefined
  if (typeof x === "string" && /^\d{1,16}$/.test(x)) {
    const n = Number(x)
    return Number.isSafeInteger(n) ? n : undefined
  }
  return undefined
}

/** A sequence gap found while converting. */
export interface GapReport {
  readonly line: number
  readonly market: string
  readonly sid: number
  readonly expected: number
  readonly got: number
}

/** A transcript line or message the converter did not turn into tape events, and why. */
export interface SkippedMessage {
  readonly line: number
  readonly kind: string
  readonly reason: string
}

/** What a converter saw and did. */
export interface ConvertReport {
  /** Non-blank transcript lines read. */
  readonly lines: number
  /** Messages seen per kind (venue message type; `out:<cmd>` for outgoing lines; the text for text frames). */
  readonly messages: Readonly<Record<string, number>>
  /** Tape events written per event type. */
  readonly emitted: Readonly<Record<string, number>>
  readonly gaps: ReadonlyArray<GapReport>
  readonly skipped: ReadonlyArray<SkippedMessage>
  /** Book events whose venue ts was earlier than the same market's previous book event and was raised to it. */
  readonly clamped: number
  readonly warnings: ReadonlyArray<string>
}

/** Collects events and the report while a converter walks a transcript in line order. */
export class Collector {
  readonly messages: Record<string, number> = {}
  readonly gaps: Array<GapReport> = []
  readonly skipped: Array<SkippedMessage> = []
  readonly warnings: Array<string> = []
  private readonly markets = new Map<string, TapeMarket>()
  private readonly lastBookTs = new Map<string, number>()
  private readonly events: Array<TapeEvent> = []
  private clamped = 0

  constructor(readonly linesRead: number) {}

  count(kind: string): void {
    this.messages[kind] = (this.messages[kind] ?? 0) + 1
  }

  skip(line: number, kind: string, reason: string): void {
    this.skipped.push({ line, kind, reason })
  }

  /** Registers a market the first time it is seen (header order is first appearance). */
  market(m: TapeMarket): void {
    if (!this.markets.has(m.id)) this.markets.set(m.id, m)
  }

  updateMarket(id: string, patch: Partial<TapeMarket>): void {
    const m = this.markets.get(id)
    if (m !== undefined) this.markets.set(id, { ...m, ...patch })
  }

  /**
   * The ts a book event (snapshot, change, gap) of `market` gets: its own, raised to the market's previous
   * book event when the venue's clock would put it earlier, so sorting by ts never reorders a market's book.
   */
  bookTs(market: string, ts: number): number {
    const last = this.lastBookTs.get(market)
    if (last !== undefined && ts < last) {
      this.clamped++
      ts = last
    }
    this.lastBookTs.set(market, ts)
    return ts
  }

  emit(event: TapeEvent): void {
    this.events.push(event)
  }

  /** Events sorted by ts, ties kept in emission (transcript line) order, and the report. */
  finish(): { markets: Array<TapeMarket>; events: Array<TapeEvent>; report: ConvertReport } {
    const events = this.events.slice().sort((a, b) => a.ts - b.ts)
    const emitted: Record<string, number> = {}
    for (const e of events) emitted[e.type] = (emitted[e.type] ?? 0) + 1
    return {
      markets: [...this.markets.values()],
      events,
      report: {
        lines: this.linesRead,
        messages: this.messages,
        emitted,
        gaps: this.gaps,
        skipped: this.skipped,
        clamped: this.clamped,
        warnings: this.warnings
      }
    }
  }
}
