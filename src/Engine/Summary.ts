/** A quiet parent's summary: what a start files it under (its market, bands and due times) without reading its state. */
import { VERSION } from "../Version.ts"
import type { MarketId } from "../Domain/Ids.ts"
import type { Band, Reference, Watch } from "./Core.ts"
import { type Driver, kindOf, type Runtime } from "./Runtime.ts"

/** A summary read back: the parent waits for market data or a due time, with no child and nothing to settle. */
export interface Summary {
  readonly type: string
  readonly marketId: MarketId
  /** What its core watches, as `rewatch` files it. */
  readonly watch: Watch
  /** Its lazy bands, or undefined when it has none. */
  readonly lazy: ReadonlyArray<Band> | undefined
  /** Its expiry and timers, as the due heap holds them. */
  readonly due: ReadonlyArray<number>
}

const SEP = "\t"
const REFERENCES: ReadonlySet<string> = new Set<Reference>(["bid", "ask", "mid", "last"])

/**
 * The summary of a parent as it is now, or null when a start must read its state whole: it is ending or done, has a
 * child, or trades several markets. Written under the engine's version: what a core watches is the code's reading of
 * the state, so a summary of another version is not trusted (its parent is read whole, and summarized again).
 */
export const summaryOf = (d: Driver, rt: Runtime): string | null => {
  if (rt.done || rt.ending !== null || rt.children.length > 0 || rt.members !== undefined) return null
  if (rt.type.includes(SEP) || rt.marketId.includes(SEP)) return null
  const watch = kindOf(d, rt).core.watch?.(rt.spec, rt.params, rt.state) ?? "all"
  let bands = "*"
  if (watch !== "all") {
    bands = ""
    for (let i = 0; i < watch.length; i++) {
      const b = watch[i]!
      bands += `${i === 0 ? "" : ","}${b.ref} ${b.low} ${b.high} ${b.missing ? 1 : 0}${b.lazy === true ? " lazy" : ""}`
    }
  }
  let due = rt.expiresAt === null ? "" : String(rt.expiresAt)
  for (const t of rt.timers) due += `${due === "" ? "" : ","}${t.at}`
  return `${VERSION}${SEP}${rt.type}${SEP}${rt.marketId}${SEP}${bands}${SEP}${due}`
}

const band = (text: string): Band | undefined => {
  const [ref, low, high, missing, lazy, ...rest] = text.split(" ")
  if (ref === undefined || !REFERENCES.has(ref) || rest.length > 0) return undefined
  if (missing !== "0" && missing !== "1") return undefined
  if (lazy !== undefined && lazy !== "lazy") return undefined
  const lo = Number(low)
  const hi = Number(high)
  if (Number.isNaN(lo) || Number.isNaN(hi) || low === "" || high === "") return undefined
  const out: Band = { ref: ref as Reference, low: lo, high: hi, missing: missing === "1" }
  return lazy === undefined ? out : { ...out, lazy: true }
}

/** A summary's text read back; undefined for one this version did not write, or cannot read. */
export const readSummary = (text: string): Summary | undefined => {
  const parts = text.split(SEP)
  if (parts.length !== 5 || parts[0] !== VERSION) return undefined
  const [, type, marketId, bands, due] = parts as [string, string, string, string, string]
  if (type === "" || marketId === "") return undefined
  // Lists of the exact length: every parent with this summary sleeps in this one.
  const list = bands === "*" || bands === "" ? [] : bands.split(",").map(band)
  if (list.some((b) => b === undefined)) return undefined
  const watch: Watch = bands === "*" ? "all" : (list as Array<Band>)
  const times = due === "" ? [] : due.split(",").map(Number)
  if (times.some((t) => !Number.isFinite(t))) return undefined
  const lazy = watch === "all" ? [] : watch.filter((b) => b.lazy === true)
  return {
    type,
    marketId: marketId as MarketId,
    watch,
    lazy: lazy.length === 0 ? undefined : lazy,
    due: times
  }
}
