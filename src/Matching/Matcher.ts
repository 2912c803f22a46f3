/**
 * The local matcher: an index of parsed propositions over the catalogs of every venue, and the rule that two
 * markets match only when their propositions are the same one, stated the same way round or as complements.
 */
import { distance } from "fastest-levenshtein"
import {
  decimal,
  hasTime,
  type Listing,
  millionths,
  parse,
  type Proposition,
  type Quantity,
  type When
} from "./Proposition.ts"
import { GENERIC, normalize, rewrite, words } from "./Text.ts"
import * as Id from "../Domain/Ids.ts"

export type Sides = "same" | "inverse"
/** What two markets' rules can disagree on, or leave unread. */
export type Dimension = "settlement_source" | "time" | "boundary" | "scope"
/** `matched`: the same question or its exact complement; `uncertain`: a candidate a person must judge; `none`. */
export type Verdict = "matched" | "uncertain" | "none"

/** One reason a candidate is uncertain: the dimension, whether it differs or could not be read, and in words. */
export interface Doubt {
  readonly dimension: Dimension | "tie" | "subject"
  readonly status: "differs" | "unread" | "close"
  readonly reason: string
}

export interface SideMap {
  readonly yes: "yes" | "no"
  readonly no: "yes" | "no"
}

export const SAME: SideMap = { yes: "yes", no: "no" }
export const FLIPPED: SideMap = { yes: "no", no: "yes" }

/** Whether the two venues' rules agree, and on what they do not. */
export interface RulesVerdict {
  readonly verdict: "same" | "differs" | "unknown"
  readonly differs: ReadonlyArray<Dimension>
  /** Dimensions one market's rules state and the other's do not. */
  readonly unread?: ReadonlyArray<Dimension>
}

export interface Explain {
  readonly anchor: Proposition
  readonly matched: Proposition | null
  readonly score: number | null
  readonly rules: RulesVerdict | null
  /** Why there is no match, when there is none. */
  readonly reason: string | null
}

export interface Answer {
  readonly anchor: string
  readonly event_id: string
  readonly verdict: Verdict
  /** Set only when the verdict is `matched`. */
  readonly matched: { readonly id: string; readonly venue: string; readonly side_map: SideMap } | null
  /** Set only when the verdict is `uncertain`: the market a person should judge, with the side_map it would take. */
  readonly candidate: {
    readonly id: string
    readonly venue: string
    readonly side_map: SideMap
    readonly score: number
  } | null
  /** Why the verdict is `uncertain`: the dimensions that differ or could not be read, or a close runner-up. */
  readonly reasons: ReadonlyArray<Doubt>
  readonly explain: Explain
}

/** The markets of other venues that match an event's markets, by venue (null: none there). */
export interface EventAnswer {
  readonly anchor: string
  readonly event_ids: ReadonlyArray<string>
  readonly events: Readonly<Record<string, ReadonlyArray<string> | null>>
}

/** Below this similarity of subjects two markets are not taken to ask the same question. */
export const MIN_SCORE = 0.62
/** The best candidate must lead the next compatible one by this much, else the answer is unsure. */
export const MARGIN = 0.08

interface Entry {
  readonly id: string
  readonly listing: Listing
  readonly prop: Proposition
  readonly terms: ReadonlyArray<string>
}

const idOf = (l: Listing) => `${l.venue}:${l.nativeId}`
const round = (x: number) => Number(x.toFixed(4))

type Scored = {
  readonly e: Entry
  readonly score: number
  readonly sides: Sides
  readonly doubts: ReadonlyArray<Doubt>
}

/** Two candidates' rules must differ this much in likeness to the anchor's for the rules to settle a tie. */
export const TIE_RULES_MARGIN = 0.1

const rulesCache = new WeakMap<Entry, ReadonlyArray<string>>()
/** The content words of a market's rules text, for settling ties. */
const rulesWords = (e: Entry): ReadonlyArray<string> => {
  let w = rulesCache.get(e)
  if (w === undefined) {
    w = e.listing.rules === undefined ? [] : [...new Set(words(rewrite(normalize(e.listing.rules.slice(0, 1200)))))]
    rulesCache.set(e, w)
  }
  return w
}

type Compat =
  | { readonly ok: true; readonly sides: Sides; readonly doubts: ReadonlyArray<Doubt> }
  | { readonly ok: false; readonly reason: string }

const DIRECTION: Readonly<Record<string, "up" | "down">> = { gt: "up", ge: "up", lt: "down", le: "down" }

/** How two thresholds relate: the same, exact complements, unsure at the boundary, or different. */
export type QuantityRelation =
  | { readonly ok: true; readonly sides: Sides; readonly exact: boolean; readonly unsure?: string }
  | { readonly ok: false; readonly reason: string }

const M = (s: string) => millionths(s, 1n)

/** A one-sided threshold as the closed bound it is on a figure published in steps of `step`: `> 3.0` is `≥ 3.1`. */
const closed = (c: string, v: bigint, step: bigint | undefined): { dir: "up" | "down"; v: bigint; closed: boolean } => {
  const dir = DIRECTION[c]!
  if (c === "ge" || c === "le") return { dir, v, closed: true }
  if (step === undefined) return { dir, v, closed: false }
  return { dir, v: c === "gt" ? v + step : v - step, closed: true }
}

/**
 * How two thresholds or brackets relate. `step` is the figure's published precision when known: then strict and
 * inclusive bounds are compared as the closed bounds they are on that figure ("above 3.0%" = "at least 3.1%" on a
 * figure published to one decimal; "fewer than 5" = "4 or fewer" on a count). A complement must be exact: `< x` and
 * `≥ x`, `≤ x` and `> x`; "fewer than N" and "more than N" both say NO at N and are not complements. Bounds one
 * written step apart are the same or complements only if the figure is published in that step: unsure without it.
 */
export const compareQuantities = (a: Quantity | null, b: Quantity | null, step?: string): QuantityRelation => {
  if (a === null && b === null) return { ok: true, sides: "same", exact: true }
  if (a === null || b === null) return { ok: false, reason: "threshold: only one states one" }
  if (a.unit !== b.unit && a.unit !== "" && b.unit !== "") return { ok: false, reason: "threshold: other unit" }
  if (a.comparator === b.comparator && a.low === b.low && (a.high ?? "") === (b.high ?? ""))
    return { ok: true, sides: "same", exact: true }
  const da = DIRECTION[a.comparator]
  const db = DIRECTION[b.comparator]
  if (da === undefined || db === undefined) {
    if (a.comparator !== b.comparator) return { ok: false, reason: "comparator: other kind" }
    return { ok: false, reason: "threshold: other value" }
  }
  const s = step === undefined ? undefined : M(step)
  const ca = closed(a.comparator, M(a.low), s)
  const cb = closed(b.comparator, M(b.low), s)
  // one written step: the least significant digit of the two thresholds as written
  const written = 10n ** BigInt(6 - Math.min(6, Math.max(a.decimals ?? 0, b.decimals ?? 0)))
  if (da === db) {
    if (ca.closed && cb.closed) {
      if (ca.v === cb.v) return { ok: true, sides: "same", exact: true }
      return { ok: false, reason: "threshold: other value" }
    }
    // one strict bound: the same only if the other sits one published step past it
    const [strict, other] = ca.closed ? [b, a] : [a, b]
    const past = strict.comparator === "gt" ? M(strict.low) + written : M(strict.low) - written
    if (
      DIRECTION[strict.comparator] === DIRECTION[other.comparator] &&
      closed(other.comparator, M(other.low), undefined).closed &&
      M(other.low) === past
    )
      return {
        ok: true,
        sides: "same",
        exact: false,
        unsure: `boundary: the same only if the figure is published in steps of ${decimal(written)}`
      }
    if (!ca.closed && !cb.closed && ca.v === cb.v) return { ok: true, sides: "same", exact: true }
    if (ca.v === cb.v) return { ok: false, reason: "boundary: at-or vs strictly at the same threshold" }
    return { ok: false, reason: "threshold: other value" }
  }
  // opposite directions: a complement needs the two bounds to meet with no gap and no overlap
  const up = da === "up" ? ca : cb
  const down = da === "up" ? cb : ca
  const upQ = da === "up" ? a : b
  const downQ = da === "up" ? b : a
  if (M(upQ.low) === M(downQ.low)) {
    // one strict, one inclusive at one value: exact complements; both strict say NO there, both inclusive YES
    const strictUp = upQ.comparator === "gt"
    const strictDown = downQ.comparator === "lt"
    if (strictUp !== strictDown) return { ok: true, sides: "inverse", exact: true }
    return {
      ok: true,
      sides: "inverse",
      exact: false,
      unsure: `boundary: both say ${strictUp ? "NO" : "YES"} at the threshold, not complements`
    }
  }
  if (up.closed && down.closed && s !== undefined && down.v + s === up.v)
    return { ok: true, sides: "inverse", exact: true }
  if (s === undefined && up.closed && down.closed && down.v + written === up.v)
    return {
      ok: true,
      sides: "inverse",
      exact: false,
      unsure: `boundary: complements only if the figure is published in steps of ${decimal(written)}`
    }
  return { ok: false, reason: "threshold: other value" }
}

const sameSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>) =>
  a.length === b.length && a.every((x) => b.includes(x))

/** Two `MM-DD` days (or deadlines), each with an optional year, agree when their known parts do. */
const sameDay = (a: string, b: string) => {
  if (a === b) return true
  const [ya, ra] = a.length > 5 ? [a.slice(0, 4), a.slice(5)] : [undefined, a]
  const [yb, rb] = b.length > 5 ? [b.slice(0, 4), b.slice(5)] : [undefined, b]
  return ra === rb && (ya === undefined || yb === undefined || ya === yb)
}

/** Whether two statements of time can be the same; undefined when they agree, else the reason. */
export const compareTimes = (a: When, b: When, years = true): string | undefined => {
  const fyA = a.periods.some((p) => p.startsWith("fy"))
  const fyB = b.periods.some((p) => p.startsWith("fy"))
  if (fyA !== fyB) return "period: fiscal year vs calendar"
  const qa = a.periods.filter((p) => p.startsWith("q"))
  const qb = b.periods.filter((p) => p.startsWith("q"))
  if ((qa.length > 0 || qb.length > 0) && !sameSet(qa, qb)) return "period: other quarters"
  const samePeriods = a.periods.length > 0 && sameSet(a.periods, b.periods)
  if (a.periods.length > 0 && b.periods.length > 0 && !samePeriods) return "period: other period"
  if ((a.day !== undefined) !== (b.day !== undefined) && (a.month !== undefined || b.month !== undefined))
    return "date: a day vs a month"
  if (a.day !== undefined && b.day !== undefined && !sameDay(a.day, b.day)) return "date: other day"
  if (a.month !== undefined && b.month !== undefined && a.month !== b.month) return "date: other month"
  if (!samePeriods && a.deadline !== undefined && b.deadline !== undefined && !sameDay(a.deadline, b.deadline))
    return "date: other deadline"
  if (years && a.years.length > 0 && b.years.length > 0 && !a.years.some((y) => b.years.includes(y)))
    return "date: other year"
  return undefined
}

/** The time a market states: its title's; a title with only a relative period also takes its rules' deadline. */
const effectiveTime = (p: Proposition, other: Proposition): When | null => {
  const t = p.when
  if (!hasTime(t)) return null
  const relativeOnly = t.periods.length > 0 && t.deadline === undefined && t.day === undefined && t.month === undefined
  if (relativeOnly && !sameSet(t.periods, other.when.periods) && p.rules.when?.deadline !== undefined)
    return { ...t, deadline: p.rules.when.deadline }
  return t
}

/** Whether two markets' times agree: titles against titles, a title against the other's rules when it has none. */
const timesAgree = (a: Proposition, b: Proposition): string | undefined => {
  const ta = effectiveTime(a, b)
  const tb = effectiveTime(b, a)
  if (ta !== null && tb !== null) return compareTimes(ta, tb)
  // rules name many years in passing: against a title only their deadlines, days, months and periods count
  if (ta !== null && b.rules.when !== null && hasTime(b.rules.when)) return compareTimes(ta, b.rules.when, false)
  if (tb !== null && a.rules.when !== null && hasTime(a.rules.when)) return compareTimes(a.rules.when, tb, false)
  return undefined
}

/** The step of the figure both markets are read against: one stated by either, when they do not disagree. */
const stepOf = (a: Proposition, b: Proposition): string | undefined =>
  a.step !== undefined && b.step !== undefined ? (a.step === b.step ? a.step : undefined) : (a.step ?? b.step)

/**
 * Whether two markets can be one question. Kind, key tokens, threshold value, title times and a title's named source
 * must agree (else no match); what the rules texts say of time, scope, settlement source and the boundary is read
 * by `rulesVerdict`, and each of those that differs or cannot be read is a doubt: the pair is at most `uncertain`.
 */
export const compatible = (a: Proposition, b: Proposition): Compat => {
  if (a.kind === "updown" || b.kind === "updown") return { ok: false, reason: "crypto up-or-down: never matched" }
  if (a.kind !== b.kind) return { ok: false, reason: `kind: ${a.kind} vs ${b.kind}` }
  if (!sameSet(a.keys, b.keys)) return { ok: false, reason: "outcome or competition differs" }
  const q = compareQuantities(a.quantity, b.quantity, stepOf(a, b))
  if (!q.ok) return q
  const time = timesAgree(a, b)
  if (time !== undefined) return { ok: false, reason: time }
  // a source the title names must be one the other market names, in its title or its rules
  const named = (p: Proposition) => [...p.source, ...p.rules.source]
  if (a.source.length > 0 && named(b).length > 0 && !a.source.some((s) => named(b).includes(s)))
    return { ok: false, reason: "settlement source differs" }
  if (b.source.length > 0 && named(a).length > 0 && !b.source.some((s) => named(a).includes(s)))
    return { ok: false, reason: "settlement source differs" }
  const doubts: Array<Doubt> = []
  if (a.kind === "price") {
    // each venue settles an asset's price on its own reference: only the same named source is the same question
    const sa = named(a)
    const sb = named(b)
    if (sa.length > 0 && sb.length > 0 && !sa.some((s) => sb.includes(s)))
      return { ok: false, reason: "price: settlement source differs" }
    if (sa.length === 0 || sb.length === 0)
      doubts.push({
        dimension: "settlement_source",
        status: "unread",
        reason: "price: a settlement source is not stated"
      })
  }
  const verdict = rulesVerdict(a, b)
  for (const d of verdict.differs) doubts.push({ dimension: d, status: "differs", reason: differsReason(d, a, b, q) })
  let sides = q.sides
  if (a.kind === "h2h" && a.sides !== undefined && b.sides !== undefined && a.winner !== undefined) {
    const o = (x: ReadonlyArray<string>, y: ReadonlyArray<string>) => x.filter((t) => y.includes(t)).length
    const straight = o(a.sides[0], b.sides[0]) + o(a.sides[1], b.sides[1])
    const crossed = o(a.sides[0], b.sides[1]) + o(a.sides[1], b.sides[0])
    if (straight === crossed) return { ok: false, reason: "head-to-head: sides do not line up" }
    const aligned = straight > crossed ? a.winner : ((1 - a.winner) as 0 | 1)
    sides = aligned === b.winner ? q.sides : q.sides === "same" ? "inverse" : "same"
  }
  return { ok: true, sides, doubts }
}

const differsReason = (d: Dimension, a: Proposition, b: Proposition, q: QuantityRelation): string => {
  switch (d) {
    case "time":
      return `time: the rules' deadlines are ${a.rules.deadline ?? "unstated"} and ${b.rules.deadline ?? "unstated"} (exclusive)`
    case "scope":
      return `scope: ${a.rules.scope.join(", ") || "unstated"} against ${b.rules.scope.join(", ") || "unstated"}`
    case "settlement_source":
      return `settlement source: ${[...a.source, ...a.rules.source].join(", ")} against ${[...b.source, ...b.rules.source].join(", ")}`
    case "boundary":
      return q.ok && q.unsure !== undefined ? q.unsure : "boundary: not an exact complement"
  }
}

/** Scopes that cannot both hold: whoever holds an office next against the winner of an election, interim counted or not. */
const scopeDiffers = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  const has = (x: ReadonlyArray<string>, s: string) => x.includes(s)
  if ((has(a, "interim") && has(b, "no_interim")) || (has(a, "no_interim") && has(b, "interim"))) return true
  if ((has(a, "succession") && has(b, "election")) || (has(a, "election") && has(b, "succession"))) return true
  if ((has(a, "succession") && has(b, "no_interim")) || (has(a, "no_interim") && has(b, "succession"))) return true
  return false
}

/**
 * The `rules` verdict: settlement source, time, scope and boundary as the rules texts state them. A deadline is
 * what the rules say, never the market's close time.
 */
export const rulesVerdict = (a: Proposition, b: Proposition): RulesVerdict => {
  const differs: Array<Dimension> = []
  const sa = [...a.source, ...a.rules.source]
  const sb = [...b.source, ...b.rules.source]
  if (sa.length > 0 && sb.length > 0 && !sa.some((s) => sb.includes(s))) differs.push("settlement_source")
  const da = a.rules.deadline
  const db = b.rules.deadline
  if (da !== undefined && db !== undefined && !sameDay(da, db)) differs.push("time")
  if (scopeDiffers(a.rules.scope, b.rules.scope)) differs.push("scope")
  const q = compareQuantities(a.quantity, b.quantity, stepOf(a, b))
  if (q.ok && !q.exact) differs.push("boundary")
  if (differs.length > 0) return { verdict: "differs", differs }
  return { verdict: a.rules.present && b.rules.present ? "same" : "unknown", differs }
}

/** One venue's catalog: its entries and an inverted index from term to entry. */
class VenueIndex {
  readonly entries: Array<Entry> = []
  readonly postings = new Map<string, Array<number>>()
  add(entry: Entry) {
    const at = this.entries.length
    this.entries.push(entry)
    for (const t of entry.terms) {
      let list = this.postings.get(t)
      if (list === undefined) this.postings.set(t, (list = []))
      list.push(at)
    }
  }
}

/** The index of every venue's catalog; `setCatalog` replaces one venue's markets (a refresh). */
export class MatchIndex {
  private readonly venues = new Map<string, VenueIndex>()
  private readonly byId = new Map<string, Entry>()
  private readonly df = new Map<string, number>()
  private total = 0

  /** Replaces the markets of one venue with these. */
  setCatalog(venue: string, listings: ReadonlyArray<Listing>): void {
    const old = this.venues.get(venue)
    if (old !== undefined) {
      for (const e of old.entries) this.byId.delete(e.id)
      for (const [t, list] of old.postings) this.df.set(t, (this.df.get(t) ?? 0) - list.length)
      this.total -= old.entries.length
    }
    const index = new VenueIndex()
    for (const listing of listings) {
      if (listing.venue !== venue) continue
      const prop = parse(listing)
      const terms = [...new Set([...prop.subject, ...prop.keys])]
      const entry: Entry = { id: idOf(listing), listing, prop, terms }
      if (this.byId.has(entry.id)) continue
      index.add(entry)
      this.byId.set(entry.id, entry)
    }
    for (const [t, list] of index.postings) this.df.set(t, (this.df.get(t) ?? 0) + list.length)
    this.total += index.entries.length
    this.venues.set(venue, index)
  }

  /** Adds markets of any venues to what the index holds (each venue's catalog is replaced as a whole). */
  addAll(listings: ReadonlyArray<Listing>): void {
    const grouped = new Map<string, Array<Listing>>()
    for (const l of listings) {
      let list = grouped.get(l.venue)
      if (list === undefined) grouped.set(l.venue, (list = []))
      list.push(l)
    }
    for (const [venue, list] of grouped) {
      const kept = this.venues.get(venue)?.entries.map((e) => e.listing) ?? []
      this.setCatalog(venue, [...kept, ...list])
    }
  }

  get size(): number {
    return this.total
  }

  has(id: string): boolean {
    return this.byId.has(id)
  }

  /** The listing of a market the index holds. */
  listing(id: string): Listing | undefined {
    return this.byId.get(id)?.listing
  }

  /** The venues whose catalogs the index holds. */
  venueIds(): Array<string> {
    return [...this.venues.keys()]
  }

  /** The ids of one venue's markets in an event, in id order. */
  eventMembers(venue: string, eventId: string): Array<string> {
    const entries = this.venues.get(venue)?.entries ?? []
    return entries
      .filter((e) => (e.listing.eventId ?? e.id) === eventId)
      .map((e) => e.id)
      .sort()
  }

  /**
   * The markets of other venues that match the markets of one event: `id` is a market of the event, or
   * `<venue>:<event_id>`. Undefined when the index holds neither.
   */
  matchEvent(id: string): EventAnswer | undefined {
    const held = this.byId.get(id)
    const parts = Id.parseMarketId(id)
    if (parts === undefined) return undefined
    const venue = held?.listing.venue ?? parts.venue
    const eventId = held === undefined ? parts.native : (held.listing.eventId ?? held.id)
    const members = this.eventMembers(venue, eventId)
    if (members.length === 0) return undefined
    const events: Record<string, Array<string> | null> = { [venue]: members }
    const eventIds = new Set([`${venue}:${eventId}`])
    for (const other of this.venues.keys()) if (other !== venue) events[other] = null
    for (const member of members) {
      const matched = this.match(member)?.matched
      if (matched === null || matched === undefined) continue
      const list = events[matched.venue] ?? []
      if (!list.includes(matched.id)) list.push(matched.id)
      events[matched.venue] = list.sort()
      const listing = this.byId.get(matched.id)?.listing
      eventIds.add(`${matched.venue}:${listing?.eventId ?? matched.id}`)
    }
    return { anchor: id, event_ids: [...eventIds].sort(), events }
  }

  private weight(t: string): number {
    if (t.startsWith("k_")) return 0
    const idf = Math.log(1 + this.total / (1 + (this.df.get(t) ?? 0)))
    return GENERIC.has(t) ? idf * 0.3 : idf
  }

  /** Weighted Dice similarity of two subjects; a long word one or two edits away counts as the same word. */
  similarity(a: ReadonlyArray<string>, b: ReadonlyArray<string>): number {
    let shared = 0
    let wa = 0
    let wb = 0
    const unmatchedB = new Set(b)
    const unmatchedA: Array<string> = []
    for (const t of a) {
      const w = this.weight(t)
      wa += w
      if (unmatchedB.delete(t)) shared += 2 * w
      else unmatchedA.push(t)
    }
    for (const t of b) wb += this.weight(t)
    for (const t of unmatchedA) {
      if (t.length === 1 && /^[a-z]$/.test(t)) {
        // a team written by its initial ("Los Angeles D") is the one whose name starts with it
        for (const u of unmatchedB) {
          if (u.length >= 4 && u.startsWith(t)) {
            shared += 2 * Math.min(this.weight(t), this.weight(u))
            unmatchedB.delete(u)
            break
          }
        }
        continue
      }
      if (t.length < 5) {
        for (const u of unmatchedB) {
          if (u.length === 1 && /^[a-z]$/.test(u) && t.length >= 4 && t.startsWith(u)) {
            shared += 2 * Math.min(this.weight(t), this.weight(u))
            unmatchedB.delete(u)
            break
          }
        }
        continue
      }
      for (const u of unmatchedB) {
        if (u.length === 1 && /^[a-z]$/.test(u) && t.startsWith(u)) {
          shared += 2 * Math.min(this.weight(t), this.weight(u))
          unmatchedB.delete(u)
          break
        }
        if (u.length < 5 || u[0] !== t[0]) continue
        const limit = Math.min(t.length, u.length) >= 8 ? 2 : 1
        // a stem cut short ("capit" of "capitals") or a misspelling ("capitols") is the same word
        if (u.startsWith(t) || t.startsWith(u) || (Math.abs(u.length - t.length) <= limit && distance(t, u) <= limit)) {
          shared += this.weight(t) + this.weight(u)
          unmatchedB.delete(u)
          break
        }
      }
    }
    return wa + wb === 0 ? 0 : shared / (wa + wb)
  }

  /** Candidates on one venue: entries sharing a rare enough term, most shared weight first. */
  private candidates(entry: Entry, venue: VenueIndex, limit: number): Array<Entry> {
    const cap = Math.max(256, venue.entries.length * 0.03)
    const terms = entry.terms
      .filter((t) => !t.startsWith("k_"))
      .map((t) => ({ t, list: venue.postings.get(t) }))
      .filter((x): x is { t: string; list: Array<number> } => x.list !== undefined)
      .sort((x, y) => x.list.length - y.list.length)
    const scores = new Map<number, number>()
    let used = 0
    for (const { t, list } of terms) {
      if (list.length > cap && used > 0) break
      used += 1
      const w = this.weight(t)
      const n = Math.min(list.length, 4 * cap)
      for (let i = 0; i < n; i++) scores.set(list[i]!, (scores.get(list[i]!) ?? 0) + w)
    }
    return [...scores.entries()]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, limit)
      .map(([i]) => venue.entries[i]!)
  }

  /** The best compatible entry on other venues (or one), with the runner-up's score; or why there is none. */
  private best(entry: Entry, target: string | undefined) {
    let top: Scored | undefined
    let second: Scored | undefined
    let reason = "no market on another venue asks this question"
    let nearest: { score: number; why: string } | undefined
    for (const [name, venue] of this.venues) {
      if (name === entry.listing.venue || (target !== undefined && name !== target)) continue
      for (const c of this.candidates(entry, venue, 64)) {
        const score = this.similarity(entry.prop.subject, c.prop.subject)
        const compat = compatible(entry.prop, c.prop)
        if (!compat.ok) {
          if (nearest === undefined || score > nearest.score) nearest = { score, why: compat.reason }
          continue
        }
        const s: Scored = { e: c, score, sides: compat.sides, doubts: compat.doubts }
        if (top === undefined || score > top.score || (score === top.score && c.id < top.e.id)) {
          second = top
          top = s
        } else if (second === undefined || score > second.score) second = s
      }
    }
    if (nearest !== undefined && nearest.score >= MIN_SCORE && (top === undefined || nearest.score > top.score))
      reason = `nearest market differs: ${nearest.why}`
    return { top, second, reason }
  }

  /**
   * Of two candidates close in score, the one the rules texts settle: the one with no doubts against one with some,
   * else the one whose rules read clearly closer to the anchor's (wording, source, dates). Undefined: not settled.
   */
  private settleTie(entry: Entry, x: Scored, y: Scored): Scored | undefined {
    if (x.doubts.length === 0 && y.doubts.length > 0) return x
    if (y.doubts.length === 0 && x.doubts.length > 0) return y
    const r = rulesWords(entry)
    if (r.length === 0) return undefined
    const rx = this.similarity(r, rulesWords(x.e))
    const ry = this.similarity(r, rulesWords(y.e))
    if (rx - ry >= TIE_RULES_MARGIN) return x
    if (ry - rx >= TIE_RULES_MARGIN) return y
    return undefined
  }

  /** The match of a market held by the index; undefined when it holds no such id. */
  match(id: string, target?: string): Answer | undefined {
    const entry = this.byId.get(id)
    return entry === undefined ? undefined : this.matchEntry(entry, target)
  }

  /** The match of any market, held by the index or not. */
  matchListing(listing: Listing, target?: string): Answer {
    const prop = parse(listing)
    return this.matchEntry(
      { id: idOf(listing), listing, prop, terms: [...new Set([...prop.subject, ...prop.keys])] },
      target
    )
  }

  private matchEntry(entry: Entry, target: string | undefined): Answer {
    const none = (reason: string, matched: Proposition | null = null, score: number | null = null): Answer => ({
      anchor: entry.id,
      event_id: entry.listing.eventId ?? entry.id,
      verdict: "none",
      matched: null,
      candidate: null,
      reasons: [],
      explain: { anchor: entry.prop, matched, score, rules: null, reason }
    })
    if (entry.prop.kind === "updown") return none("crypto up-or-down: each venue sets its own price to beat")
    const best = this.best(entry, target)
    const second = best.second
    let top = best.top
    if (top === undefined) return none(best.reason)
    if (top.score < MIN_SCORE)
      return none(`closest subject too far (${round(top.score)})`, top.e.prop, round(top.score))
    const doubts: Array<Doubt> = [...top.doubts]
    if (second !== undefined && second.e.listing.venue === top.e.listing.venue && top.score - second.score < MARGIN) {
      // the two sides of one game listed there, one stated as we state it and one as its complement, both answer
      // the question: the one stated the same way is taken; any other tie is settled by the rules texts, or unsure
      const event = top.e.listing.eventId
      const sides =
        top.e.prop.kind === "h2h" &&
        second.e.prop.kind === "h2h" &&
        event !== undefined &&
        second.e.listing.eventId === event &&
        top.sides !== second.sides
      if (sides) top = top.sides === "same" ? top : second
      else {
        const settled = this.settleTie(entry, top, second)
        if (settled === undefined) {
          doubts.push({
            dimension: "tie",
            status: "close",
            reason: `${second.e.id} is as close (${round(second.score)})`
          })
        } else {
          top = settled
          doubts.splice(0, doubts.length, ...settled.doubts)
        }
      }
    }
    // the answer must see the anchor as its own best match on the anchor's venue
    const back = this.best(top.e, entry.listing.venue).top
    if (back !== undefined && back.e.id !== entry.id && back.score > top.score) {
      const theirs = this.settleTie(top.e, back, { e: entry, score: top.score, sides: top.sides, doubts: top.doubts })
      if (theirs === undefined || theirs.e.id !== entry.id)
        doubts.push({ dimension: "tie", status: "close", reason: `${top.e.id} is closer to ${back.e.id}` })
    }
    const score = round(top.score)
    const sideMap = top.sides === "same" ? SAME : FLIPPED
    const rules = rulesVerdict(entry.prop, top.e.prop)
    const explain = { anchor: entry.prop, matched: top.e.prop, score, rules, reason: null }
    const eventId = entry.listing.eventId ?? top.e.listing.eventId ?? entry.id
    if (doubts.length > 0)
      return {
        anchor: entry.id,
        event_id: eventId,
        verdict: "uncertain",
        matched: null,
        candidate: { id: top.e.id, venue: top.e.listing.venue, side_map: sideMap, score },
        reasons: doubts,
        explain: { ...explain, reason: `uncertain: ${doubts.map((d) => d.reason).join("; ")}` }
      }
    return {
      anchor: entry.id,
      event_id: eventId,
      verdict: "matched",
      matched: { id: top.e.id, venue: top.e.listing.venue, side_map: sideMap },
      candidate: null,
      reasons: [],
      explain
    }
  }
}
