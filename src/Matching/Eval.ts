/** The matcher's evaluation over labelled pairs: one line per case, then precision, recall and refusals. */
import type { Market } from "../Domain/Market.ts"
import { type Answer, type Doubt, MatchIndex, type RulesVerdict, type SideMap, type Verdict } from "./Matcher.ts"
import type { Listing } from "./Proposition.ts"

/** A catalog record (`venue, native_id, title, yes_label?, rules?, close_time?, event_ticker?`) as a listing. */
export const listingOfRecord = (r: Record<string, unknown>): Listing | undefined => {
  const venue = r["venue"]
  const nativeId = r["native_id"]
  const title = r["title"]
  if (typeof venue !== "string" || typeof nativeId !== "string" || typeof title !== "string") return undefined
  const str = (k: string) => (typeof r[k] === "string" && r[k] !== "" ? (r[k] as string) : undefined)
  const close = str("close_time")
  const closeTime = close === undefined ? undefined : Date.parse(close)
  return {
    venue,
    nativeId,
    title,
    yesLabel: str("yes_label"),
    rules: str("rules"),
    closeTime: closeTime === undefined || Number.isNaN(closeTime) ? undefined : closeTime,
    eventId: str("event_ticker") ?? str("event_id") ?? str("slug")
  }
}

/** A venue's market record as a listing: the subtitle is the YES outcome's label where venues give one. */
export const listingOfMarket = (m: Market): Listing => ({
  venue: m.venue,
  nativeId: m.nativeId,
  title: m.title,
  yesLabel: m.subtitle === "" ? undefined : m.subtitle,
  closeTime: m.closeTime,
  eventId: m.eventId
})

/** Parses JSON lines into listings, skipping blank lines; throws on a line that is not a market record. */
export const parseCatalog = (text: string): Array<Listing> => {
  const out: Array<Listing> = []
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue
    const listing = listingOfRecord(JSON.parse(line) as Record<string, unknown>)
    if (listing === undefined) throw new Error(`line ${i + 1}: not a market record (venue, native_id, title)`)
    out.push(listing)
  }
  return out
}

export type Relation = "same" | "inverse" | "none" | "crypto_updown"

export interface Case {
  readonly id: string
  readonly a: Listing
  readonly b: Listing | null
  readonly relation: Relation
  readonly sideMap: SideMap | null
  /** The kind of question or mistake the case tests (`scope`, `deadline`, `near_complement`, …), when labelled. */
  readonly kind?: string | undefined
}

/** Parses the labelled pairs file. */
export const parsePairs = (text: string): Array<Case> =>
  text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line, i) => {
      const r = JSON.parse(line) as Record<string, unknown>
      const a = listingOfRecord(r["a"] as Record<string, unknown>)
      const b = r["b"] === null ? null : (listingOfRecord(r["b"] as Record<string, unknown>) ?? null)
      const relation = r["relation"] as Relation
      if (a === undefined || !["same", "inverse", "none", "crypto_updown"].includes(relation))
        throw new Error(`pairs line ${i + 1}: needs a and a relation`)
      const sm = r["side_map"] as SideMap | null | undefined
      const kind = typeof r["kind"] === "string" ? r["kind"] : undefined
      return { id: String(r["id"]), a, b, relation, sideMap: sm ?? null, kind }
    })

export interface CaseLine {
  readonly id: string
  readonly anchor: string
  readonly verdict: Verdict
  /** The match; set only when the verdict is `matched`. */
  readonly matched: string | null
  readonly side_map: SideMap | null
  /** The candidate a person should judge; set only when the verdict is `uncertain`. */
  readonly candidate: string | null
  /** Why the verdict is `uncertain`. */
  readonly reasons: ReadonlyArray<Doubt>
  readonly rules: RulesVerdict | null
  readonly relation: Relation
  readonly kind: string | null
  /**
   * `tp` a right match, `fp` a wrong one, `fn` a missed one (none found), `tn` rightly none, `uncertain` a candidate
   * left to a person (neither a hit nor a false match), `unlabelled` a match on a `none` row to a market the pairs file
   * says nothing about.
   */
  readonly outcome: "tp" | "fp" | "fn" | "tn" | "uncertain" | "unlabelled"
  readonly side_map_ok: boolean | null
  readonly reason: string | null
}

export interface Counts {
  cases: number
  tp: number
  fp: number
  fn: number
  tn: number
  uncertain: number
  unlabelled: number
  /** tp ÷ (tp + fp) of the matches made on these rows; null when none was made. */
  precision?: number | null
  /** Rows whose labelled `b` was matched ÷ `same`/`inverse` rows; null when there are none. */
  recall?: number | null
}

export interface Summary {
  readonly summary: true
  readonly cases: number
  readonly matches_made: number
  readonly correct: number
  readonly wrong: number
  readonly unlabelled: number
  readonly precision: number | null
  readonly recall: number | null
  readonly side_map_accuracy: number | null
  readonly crypto_refused: number
  readonly crypto_cases: number
  /** Cases answered `uncertain`: counted apart, neither a hit nor a false match. */
  readonly uncertain: number
  readonly relations: Record<string, Counts>
  /** The same counts by the kind of question or mistake each case is labelled with. */
  readonly kinds: Record<string, Counts>
}

const idOf = (l: Listing) => `${l.venue}:${l.nativeId}`
const round = (x: number) => Number(x.toFixed(4))
const emptyCounts = (): Counts => ({ cases: 0, tp: 0, fp: 0, fn: 0, tn: 0, uncertain: 0, unlabelled: 0 })

/** Each group's counts with its precision and recall. */
const withRates = (
  groups: Record<string, Counts>,
  found: ReadonlyMap<Counts, number>,
  positives: ReadonlyMap<Counts, number>
): Record<string, Counts> => {
  const out: Record<string, Counts> = {}
  for (const key of Object.keys(groups).sort()) {
    const c = groups[key]!
    const p = positives.get(c) ?? 0
    out[key] = {
      ...c,
      precision: c.tp + c.fp === 0 ? null : round(c.tp / (c.tp + c.fp)),
      recall: p === 0 ? null : round((found.get(c) ?? 0) / p)
    }
  }
  return out
}

/**
 * Runs every case's `a` through the matcher. On a `same` or `inverse` row the match must be `b`; on a `none` row it
 * must not be `b` (another market is right if another row pairs it with the anchor, else unlabelled); on a
 * `crypto_updown` row there must be none. Precision is right matches over right and wrong ones, recall the `same`
 * and `inverse` rows whose `b` was found, side_map accuracy the right matches whose side_map equals the label.
 */
export const evaluate = (
  index: MatchIndex,
  cases: ReadonlyArray<Case>
): { lines: Array<CaseLine>; summary: Summary } => {
  const truth = new Map<string, SideMap>()
  for (const c of cases) {
    if (c.b === null || (c.relation !== "same" && c.relation !== "inverse")) continue
    const sm = c.sideMap ?? (c.relation === "same" ? { yes: "yes", no: "no" } : { yes: "no", no: "yes" })
    truth.set(`${idOf(c.a)}|${idOf(c.b)}`, sm)
    truth.set(`${idOf(c.b)}|${idOf(c.a)}`, sm)
  }
  const lines: Array<CaseLine> = []
  const relations: Record<string, Counts> = {}
  const kinds: Record<string, Counts> = {}
  const found_ = new Map<Counts, number>()
  const positives_ = new Map<Counts, number>()
  let uncertain = 0
  let correct = 0
  let wrong = 0
  let unlabelled = 0
  let sideOk = 0
  let positives = 0
  let found = 0
  let crypto = 0
  let refused = 0
  for (const c of cases) {
    const anchor = idOf(c.a)
    const answer: Answer = index.match(anchor) ?? index.matchListing(c.a)
    const matched = answer.matched?.id ?? null
    const label = matched === null ? undefined : truth.get(`${anchor}|${matched}`)
    let outcome: CaseLine["outcome"]
    let sideMapOk: boolean | null = null
    if (label !== undefined) {
      sideMapOk = label.yes === answer.matched!.side_map.yes && label.no === answer.matched!.side_map.no
      if (sideMapOk) sideOk += 1
    }
    const positive = c.relation === "same" || c.relation === "inverse"
    const hit = positive && c.b !== null && matched === idOf(c.b)
    if (positive) {
      positives += 1
      if (hit) found += 1
      outcome = hit ? "tp" : matched === null ? "fn" : label !== undefined ? "tp" : "fp"
    } else if (c.relation === "crypto_updown") {
      crypto += 1
      if (matched === null) refused += 1
      outcome = matched === null ? "tn" : "fp"
    } else {
      // a `none` row says only that b is not the match: another answer is judged by the other rows, or not at all
      outcome =
        matched === null
          ? "tn"
          : c.b !== null && matched === idOf(c.b)
            ? "fp"
            : label !== undefined
              ? "tp"
              : "unlabelled"
    }
    if (matched === null && answer.verdict === "uncertain") outcome = "uncertain"
    if (outcome === "uncertain") uncertain += 1
    if (outcome === "tp" && matched !== null) correct += 1
    if (outcome === "fp") wrong += 1
    if (outcome === "unlabelled") unlabelled += 1
    for (const r of [
      (relations[c.relation] ??= emptyCounts()),
      ...(c.kind === undefined ? [] : [(kinds[c.kind] ??= emptyCounts())])
    ]) {
      r.cases += 1
      r[outcome] += 1
      if (positive) positives_.set(r, (positives_.get(r) ?? 0) + 1)
      if (hit) found_.set(r, (found_.get(r) ?? 0) + 1)
    }
    lines.push({
      id: c.id,
      anchor,
      verdict: answer.verdict ?? (matched === null ? "none" : "matched"),
      matched,
      side_map: answer.matched?.side_map ?? null,
      candidate: answer.candidate?.id ?? null,
      reasons: answer.reasons ?? [],
      rules: answer.explain.rules,
      relation: c.relation,
      kind: c.kind ?? null,
      outcome,
      side_map_ok: sideMapOk,
      reason: answer.explain.reason
    })
  }
  return {
    lines,
    summary: {
      summary: true,
      cases: cases.length,
      matches_made: correct + wrong + unlabelled,
      correct,
      wrong,
      unlabelled,
      precision: correct + wrong === 0 ? null : round(correct / (correct + wrong)),
      recall: positives === 0 ? null : round(found / positives),
      side_map_accuracy: correct === 0 ? null : round(sideOk / correct),
      crypto_refused: refused,
      crypto_cases: crypto,
      uncertain,
      relations: withRates(relations, found_, positives_),
      kinds: withRates(kinds, found_, positives_)
    }
  }
}
