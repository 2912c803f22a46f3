/**
 * The history API's answers, read from the store: the book at a time, the book's changes over a range as data and
 * absent segments, and trades over a range with their coverage. What was not recorded is always stated (an absent
 * segment, a coverage row), never skipped; a range longer than the host serves is refused (413), never cut.
 */
import { createHash } from "node:crypto"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { BookRow, DataStore, Levels, SpanRow } from "./Store.ts"
import * as Id from "../Domain/Ids.ts"

export const DEFAULT_LIMIT = 1000
export const MAX_LIMIT = 10_000
/** The longest range one request may ask for, unless the host is started with another. */
export const DEFAULT_MAX_RANGE_MS = 7 * 86_400_000
/** What every answer's times are: the venue's clock, in ms since the epoch. */
export const TIME_BASIS = "venue_ms" as const

export interface WireLevel {
  readonly price: string
  readonly size: string
}
export interface WireBook {
  readonly ts: number
  readonly bids: ReadonlyArray<WireLevel>
  readonly asks: ReadonlyArray<WireLevel>
}
export interface WireChange {
  readonly ts: number
  readonly received_ms: number
  readonly kind: "snapshot" | "change"
  readonly bids: ReadonlyArray<WireLevel>
  readonly asks: ReadonlyArray<WireLevel>
}
export interface Segment {
  readonly kind: "data" | "absent"
  readonly start_ms: number
  readonly end_ms: number
  readonly initial_book: WireBook | null
  readonly changes: ReadonlyArray<WireChange>
  readonly reason: string | null
}
export interface Coverage {
  readonly kind: "data" | "absent"
  readonly start_ms: number
  readonly end_ms: number
  readonly reason: string | null
}

export const metadataOf = (store: DataStore) => ({
  dataset_version: store.datasetVersion(),
  time_basis: TIME_BASIS
})

const wire = (levels: Levels): ReadonlyArray<WireLevel> => levels.map(([price, size]) => ({ price, size }))

/** One market's book, folded from a snapshot and the changes after it. */
class Folded {
  ts = 0
  readonly bids = new Map<string, string>()
  readonly asks = new Map<string, string>()

  apply(row: BookRow): void {
    if (row.kind === "snapshot") {
      this.bids.clear()
      this.asks.clear()
    }
    for (const [p, s] of row.bids)
      if (s === "0") this.bids.delete(p)
      else this.bids.set(p, s)
    for (const [p, s] of row.asks)
      if (s === "0") this.asks.delete(p)
      else this.asks.set(p, s)
    this.ts = row.ts
  }

  private static sorted(levels: Map<string, string>, falling: boolean): Array<readonly [F.Fixed, string]> {
    const out = [...levels].map(([p, s]) => [F.of(p), s] as const)
    out.sort((a, b) => (falling ? b[0] - a[0] : a[0] - b[0]))
    return out
  }

  book(side: "yes" | "no" = "yes", depth?: number): WireBook {
    const bids = Folded.sorted(this.bids, true)
    const asks = Folded.sorted(this.asks, false)
    const level = ([p, s]: readonly [F.Fixed, string]) => ({ price: F.format(p), size: s })
    const mirrored = ([p, s]: readonly [F.Fixed, string]) => ({ price: F.format(F.sub(F.ONE, p)), size: s })
    const [b, a] = side === "yes" ? [bids.map(level), asks.map(level)] : [asks.map(mirrored), bids.map(mirrored)]
    return {
      ts: this.ts,
      bids: depth === undefined ? b : b.slice(0, depth),
      asks: depth === undefined ? a : a.slice(0, depth)
    }
  }
}

/** The book of a span after row `uptoId`: from the newest snapshot or checkpoint before it, then the rows between. */
const foldUpTo = (store: DataStore, span: number, uptoId: number): Folded => {
  const folded = new Folded()
  const snapshot = store.lastSnapshot(span, Number.MAX_SAFE_INTEGER, uptoId)
  if (snapshot === undefined) return folded
  folded.apply(snapshot)
  let after = snapshot.id
  const checkpoint = store.lastCheckpoint(span, uptoId)
  if (checkpoint !== undefined && checkpoint.row_id > snapshot.id) {
    const row = store.bookRow(checkpoint.row_id)!
    folded.apply({ ...row, kind: "snapshot", bids: checkpoint.bids, asks: checkpoint.asks })
    after = checkpoint.row_id
  }
  for (;;) {
    const rows = store.bookRows(span, after, Number.MAX_SAFE_INTEGER, 5000, uptoId)
    for (const row of rows) folded.apply(row)
    if (rows.length < 5000) return folded
    after = rows[rows.length - 1]!.id
  }
}

const marketOrFail = (store: DataStore, marketId: string): ApiError | undefined =>
  store.market(marketId) === undefined ? ApiError.marketNotFound(Id.venuePrefix(marketId) ?? "", marketId) : undefined

interface Stretch {
  readonly kind: "data" | "absent"
  readonly start_ms: number
  readonly end_ms: number
  readonly span?: SpanRow
  readonly reason: string | null
}

/** `[fromMs, toMs]` cut into the recorded spans and the absent stretches between them, in order. */
const stretches = (store: DataStore, marketId: string, fromMs: number, toMs: number): Array<Stretch> => {
  const out: Array<Stretch> = []
  let at = fromMs
  const absent = (start: number, end: number) =>
    out.push({
      kind: "absent",
      start_ms: start,
      end_ms: end,
      reason: store.absentReason(marketId, start, end) ?? "not_recorded"
    })
  for (const span of store.spans(marketId, fromMs, toMs)) {
    const start = Math.max(span.start_ms, fromMs)
    if (start > at) absent(at, start)
    const end = Math.min(span.end_ms, toMs)
    out.push({ kind: "data", start_ms: start, end_ms: end, span, reason: null })
    at = end
  }
  if (at < toMs || out.length === 0) absent(at, toMs)
  return out
}

export interface RangeRequest {
  readonly market_id: string
  readonly start_ms: number
  readonly end_ms: number
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const digest = (r: RangeRequest, route: string): string =>
  createHash("sha256").update(`${route}|${r.market_id}|${r.start_ms}|${r.end_ms}`).digest("hex").slice(0, 16)

const encodeCursor = (d: string, after: number): string =>
  Buffer.from(JSON.stringify({ d, a: after })).toString("base64url")

/** The row id a cursor continues after; a cursor made for another request is a 400. */
const decodeCursor = (r: RangeRequest, route: string): number | ApiError => {
  if (r.cursor === undefined) return 0
  try {
    const value = JSON.parse(Buffer.from(r.cursor, "base64url").toString("utf8")) as { d?: unknown; a?: unknown }
    if (typeof value.a === "number" && Number.isSafeInteger(value.a) && value.d === digest(r, route)) return value.a
  } catch {
    // not a cursor of ours
  }
  return ApiError.field("cursor", "not a cursor of this request: pass next_cursor back with the same market and range")
}

/** Checks the parts of a range request the schema cannot: order, length, limit. */
const checkRange = (r: RangeRequest, maxRangeMs: number): ApiError | undefined => {
  if (r.end_ms < r.start_ms) return ApiError.field("end_ms", "must not be before start_ms")
  if (r.limit !== undefined && (r.limit < 1 || r.limit > MAX_LIMIT)) {
    return ApiError.field("limit", `must be from 1 to ${MAX_LIMIT}`)
  }
  if (r.end_ms - r.start_ms > maxRangeMs) {
    return new ApiError({
      status: 413,
      code: "result_too_large",
      message:
        `the range is ${r.end_ms - r.start_ms} ms; this host answers at most ${maxRangeMs} ms per request: ` +
        "ask for shorter ranges one after another",
      details: { venue: null, retryable: false, max_range_ms: maxRangeMs }
    })
  }
  return undefined
}

export const bookAt = (
  store: DataStore,
  r: {
    readonly market_id: string
    readonly as_of_ms: number
    readonly side?: "yes" | "no" | undefined
    readonly depth?: number | undefined
  }
) => {
  const missing = marketOrFail(store, r.market_id)
  if (missing !== undefined) return missing
  const [here] = stretches(store, r.market_id, r.as_of_ms, r.as_of_ms)
  const last = here?.span === undefined ? undefined : store.lastRowAt(here.span.id, r.as_of_ms)
  return {
    metadata: metadataOf(store),
    market_id: r.market_id,
    as_of_ms: r.as_of_ms,
    book: last === undefined ? null : foldUpTo(store, here!.span!.id, last.id).book(r.side ?? "yes", r.depth),
    absence_reason: last === undefined ? (here?.reason ?? "not_recorded") : null
  }
}

const changeOf = (row: BookRow): WireChange => ({
  ts: row.ts,
  received_ms: row.received_ms,
  kind: row.kind,
  bids: wire(row.bids),
  asks: wire(row.asks)
})

export const bookRange = (store: DataStore, r: RangeRequest, maxRangeMs = DEFAULT_MAX_RANGE_MS) => {
  const refused = checkRange(r, maxRangeMs) ?? marketOrFail(store, r.market_id)
  if (refused !== undefined) return refused
  const after = decodeCursor(r, "book")
  if (after instanceof ApiError) return after
  const limit = r.limit ?? DEFAULT_LIMIT
  const resumed = after === 0 ? undefined : store.bookRow(after)
  const from = resumed === undefined ? r.start_ms : Math.max(r.start_ms, resumed.ts)
  const segments: Array<Segment> = []
  let room = limit
  let lastId = after
  let next: string | null = null
  for (const s of stretches(store, r.market_id, from, r.end_ms)) {
    if (s.kind === "absent" || s.span === undefined) {
      segments.push({ ...s, initial_book: null, changes: [] })
      continue
    }
    if (room === 0) {
      next = encodeCursor(digest(r, "book"), lastId)
      break
    }
    const span = s.span.id
    // The book before the first change listed: after the resumed row, or everything up to the segment's start.
    const startRow = resumed !== undefined && resumed.span_id === span ? resumed : store.lastRowAt(span, s.start_ms)
    const initial = startRow === undefined ? undefined : foldUpTo(store, span, startRow.id)
    const rows = store.bookRows(span, startRow?.id ?? 0, s.end_ms, room + 1)
    const cut = rows.length > room
    const taken = cut ? rows.slice(0, room) : rows
    room -= taken.length
    lastId = taken[taken.length - 1]?.id ?? startRow?.id ?? lastId
    const end = cut ? (taken[taken.length - 1]?.ts ?? s.start_ms) : s.end_ms
    segments.push({
      kind: "data",
      start_ms: s.start_ms,
      end_ms: end,
      initial_book: initial === undefined ? null : { ...initial.book(), ts: s.start_ms },
      changes: taken.map(changeOf),
      reason: null
    })
    if (cut) {
      next = encodeCursor(digest(r, "book"), lastId)
      break
    }
  }
  return { metadata: metadataOf(store), market_id: r.market_id, segments, next_cursor: next }
}

export const tradesRange = (store: DataStore, r: RangeRequest, maxRangeMs = DEFAULT_MAX_RANGE_MS) => {
  const refused = checkRange(r, maxRangeMs) ?? marketOrFail(store, r.market_id)
  if (refused !== undefined) return refused
  const after = decodeCursor(r, "trades")
  if (after instanceof ApiError) return after
  const limit = r.limit ?? DEFAULT_LIMIT
  const rows = store.trades(r.market_id, r.start_ms, r.end_ms, after, limit + 1)
  const taken = rows.slice(0, limit)
  const coverage: Array<Coverage> = stretches(store, r.market_id, r.start_ms, r.end_ms).map((s) => ({
    kind: s.kind,
    start_ms: s.start_ms,
    end_ms: s.end_ms,
    reason: s.reason
  }))
  return {
    metadata: metadataOf(store),
    market_id: r.market_id,
    trades: taken.map((t) => ({
      id: t.trade_id,
      ts: t.ts,
      received_ms: t.received_ms,
      price: t.price,
      amount: t.amount,
      taker_side: t.taker_side
    })),
    coverage,
    next_cursor: rows.length > limit ? encodeCursor(digest(r, "trades"), taken[taken.length - 1]!.id) : null
  }
}
