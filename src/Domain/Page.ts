/** Cursor pages: `{data, next_cursor, count}`, an opaque cursor bound to the filters, limits checked. */
import { ApiError } from "./Errors.ts"

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  readonly next_cursor: string | null
  readonly count: number
}

export const DEFAULT_LIMIT = 100
export const MAX_LIMIT = 1000

interface CursorState {
  /** The sort key of the last row handed out. */
  readonly k: string
  /** A digest of the filters the cursor was made under. */
  readonly f: string
}

/** A short stable digest (FNV-1a, 64 bits as hex) of the filters, in key order. */
export const filterDigest = (filters: Readonly<Record<string, unknown>>): string => {
  const text = JSON.stringify(
    Object.keys(filters)
      .sort()
      .filter((k) => filters[k] !== undefined && filters[k] !== null)
      .map((k) => [k, filters[k]])
  )
  let h1 = 0x811c9dc5
  let h2 = 0x01000193
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 0x01000193)
    h2 = Math.imul(h2 ^ c, 0x5bd1e995)
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0")
}

export const encodeCursor = (state: CursorState): string =>
  Buffer.from(JSON.stringify(state), "utf8").toString("base64url")

const decodeCursor = (cursor: string): CursorState | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (
      typeof value === "object" &&
      value !== null &&
      typeof (value as CursorState).k === "string" &&
      typeof (value as CursorState).f === "string"
    ) {
      return value as CursorState
    }
    return undefined
  } catch {
    return undefined
  }
}

export interface PageRequest {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Checks `limit` (1..1000, default 100) and the cursor against the filters; answers the limit and the key to start after. */
export const checkPageRequest = (
  request: PageRequest,
  filters: Readonly<Record<string, unknown>>
): { readonly limit: number; readonly after: string | undefined; readonly digest: string } | ApiError => {
  const limit = request.limit ?? DEFAULT_LIMIT
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    return ApiError.field("limit", `must be an integer from 1 to ${MAX_LIMIT}`)
  }
  const digest = filterDigest(filters)
  if (request.cursor === undefined || request.cursor === "") return { limit, after: undefined, digest }
  const state = decodeCursor(request.cursor)
  if (state === undefined) return ApiError.field("cursor", "not a cursor this server issued")
  if (state.f !== digest) {
    return ApiError.field("cursor", "this cursor was made with other filters; pass it back with the same filters")
  }
  return { limit, after: state.k, digest }
}

/**
 * One page of rows already in their list order, where `key` is strictly increasing along that order:
 * the rows after the cursor's key, at most `limit`, and a cursor when more remain.
 */
export const pageOf = <A, B = A>(
  rows: ReadonlyArray<A>,
  key: (row: A) => string,
  request: { readonly limit: number; readonly after: string | undefined; readonly digest: string },
  render: (row: A) => B = (row) => row as unknown as B
): Page<B> => {
  let start = 0
  if (request.after !== undefined) {
    const after = request.after
    let lo = 0
    let hi = rows.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (key(rows[mid]!) <= after) lo = mid + 1
      else hi = mid
    }
    start = lo
  }
  const slice = rows.slice(start, start + request.limit)
  const more = start + request.limit < rows.length
  const last = slice[slice.length - 1]
  return {
    data: slice.map(render),
    next_cursor: more && last !== undefined ? encodeCursor({ k: key(last), f: request.digest }) : null,
    count: slice.length
  }
}

/** A key that sorts descending numbers ascending as text (for newest-first lists). */
export const descendingKey = (n: number, tie: string): string =>
  (Number.MAX_SAFE_INTEGER - n).toString().padStart(16, "0") + "|" + tie

export const ascendingKey = (n: number, tie: string): string => n.toString().padStart(16, "0") + "|" + tie

/** The number and the tie of a `descendingKey`, or undefined when the text is not one. */
export const parseDescendingKey = (key: string): { readonly n: number; readonly tie: string } | undefined => {
  const bar = key.indexOf("|")
  if (bar !== 16) return undefined
  const head = Number(key.slice(0, bar))
  if (!Number.isSafeInteger(head) || head < 0) return undefined
  return { n: Number.MAX_SAFE_INTEGER - head, tie: key.slice(bar + 1) }
}

/**
 * One page from rows a store read after the cursor, in list order, at most `limit + 1` of them: the first `limit`,
 * and a cursor when the extra one says more remain.
 */
export const pageOfFetched = <A, B = A>(
  rows: ReadonlyArray<A>,
  key: (row: A) => string,
  request: { readonly limit: number; readonly digest: string },
  render: (row: A) => B = (row) => row as unknown as B
): Page<B> => {
  const slice = rows.slice(0, request.limit)
  const last = slice[slice.length - 1]
  return {
    data: slice.map(render),
    next_cursor:
      rows.length > request.limit && last !== undefined ? encodeCursor({ k: key(last), f: request.digest }) : null,
    count: slice.length
  }
}
