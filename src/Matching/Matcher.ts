/**
 * The local matcher: an index of parsed propositions over the catalogs of every venue, and the rule that two
 * markets match only when their propositions are the same one, stated the same way round or as complements.
 */
import { distance } from "fastest-levenshtein"
import { hasTime, type Listing, parse, type Proposition, type Quantity, type When } from "./Proposition.ts"
import { GENERIC } from "./Text.ts"

export type Sides = "same" | "inverse"
export type Dimension = "settlement_source" | "time" | "boundary"

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
  readonly matched: { readonly id: string; readonly venue: string; readonly side_map: SideMap } | null
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

type Compat = { readonly ok: true; readonly sides: Sides } | { readonly ok: false; readonly reason: string }

const DIRECTION: Readonly<Record<string, "up" | "down">> = { gt: "up", ge: "up", lt: "down", le: "down" }
const INCLUSIVE: Readonly<Record<string, boolean>> = { gt: false, ge: true, lt: false, le: true }

/** How two thresholds or brackets relate: the same, complements (up to the boundary), or different. */
export const compareQuantities = (
  a: Quantity | null,
  b: Quantity | null
):
  | { readonly ok: true; readonly sides: Sides; readonly exact: boolean }
  | { readonly ok: false; readonly reason: string } => {
  if (a === null && b === null) return { ok: true, sides: "same", exact: true }
  if (a === null || b === null) return { ok: false, reason: "threshold: only one states one" }
  if (a.unit !== b.unit && a.unit !== "" && b.unit !== "") return { ok: false, reason: "threshold: other unit" }
  if (a.low !== b.low || (a.high ?? "") !== (b.high ?? "")) return { ok: false, reason: "threshold: other value" }
  if (a.comparator === b.comparator) return { ok: true, sides: "same", exact: true }
  const da = DIRECTION[a.comparator]
  const db = DIRECTION[b.comparator]
  if (da === undefined || db === undefined) return { ok: false, reason: "comparator: other kind" }
  if (da === db) return { ok: false, reason: "boundary: at-or vs strictly at the same threshold" }
  return { ok: true, sides: "inverse", exact: INCLUSIVE[a.comparator] !== INCLUSIVE[b.comparator] }
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

/** The hard checks: kind, keys, threshold, time, source. Subjects are scored apart. */
export const compatible = (a: Proposition, b: Proposition): Compat => {
  if (a.kind === "updown" || b.kind === "updown") return { ok: false, reason: "crypto up-or-down: never matched" }
  if (a.kind !== b.kind) return { ok: false, reason: `kind: ${a.kind} vs ${b.kind}` }
  if (!sameSet(a.keys, b.keys)) return { ok: false, reason: "outcome or competition differs" }
  const q = compareQuantities(a.quantity, b.quantity)
  if (!q.ok) return q
  const time = timesAgree(a, b)
  if (time !== undefined) return { ok: false, reason: time }
  // a source the title names must be one the other market names, in its title or its rules
  const named = (p: Proposition) => [...p.source, ...p.rules.source]
  if (a.source.length > 0 && named(b).length > 0 && !a.source.some((s) => named(b).includes(s)))
    return { ok: false, reason: "settlement source differs" }
  if (b.source.length > 0 && named(a).length > 0 && !b.source.some((s) => named(a).includes(s)))
    return { ok: false, reason: "settlement source differs" }
  if (a.kind === "price") {
    // each venue settles an asset's price on its own reference: only the same named source is the same question
    const sa = [...a.source, ...a.rules.source]
    const sb = [...b.source, ...b.rules.source]
    if (sa.length === 0 || sb.length === 0) return { ok: false, reason: "price: settlement source not stated" }
    if (!sa.some((s) => sb.includes(s))) return { ok: false, reason: "price: settlement source differs" }
  }
  if (a.kind === "h2h" && a.sides !== undefined && b.sides !== undefined && a.winner !== undefined) {
    const o = (x: ReadonlyArray<string>, y: ReadonlyArray<string>) => x.filter((t) => y.includes(t)).length
    const straight = o(a.sides[0], b.sides[0]) + o(a.sides[1], b.sides[1])
    const crossed = o(a.sides[0], b.sides[1]) + o(a.sides[1], b.sides[0])
    if (straight === crossed) return { ok: false, reason: "head-to-head: sides do not line up" }
    const aligned = straight > crossed ? a.winner : ((1 - a.winner) as 0 | 1)
    return { ok: true, sides: aligned === b.winner ? q.sides : q.sides === "same" ? "inverse" : "same" }
  }
  return { ok: true, sides: q.sides }
}

/** The `rules` verdict: settlement source, time and boundary as the rules texts state them. */
export const rulesVerdict = (a: Proposition, b: Proposition): RulesVerdict => {
  const differs: Array<Dimension> = []
  const sa = [...a.source, ...a.rules.source]
  const sb = [...b.source, ...b.rules.source]
  if (sa.length > 0 && sb.length > 0 && !sa.some((s) => sb.includes(s))) differs.push("settlement_source")
  const wa = a.rules.when
  const wb = b.rules.when
  if (wa !== null && wb !== null && hasTime(wa) && hasTime(wb) && compareTimes(wa, wb) !== undefined)
    differs.push("time")
  const q = compareQuantities(a.quantity, b.quantity)
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
    const colon = id.indexOf(":")
    if (colon < 1) return undefined
    const venue = held?.listing.venue ?? id.slice(0, colon)
    const eventId = held === undefined ? id.slice(colon + 1) : (held.listing.eventId ?? held.id)
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
    type Scored = { e: Entry; score: number; sides: Sides }
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
        const s: Scored = { e: c, score, sides: compat.sides }
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
      matched: null,
      explain: { anchor: entry.prop, matched, score, rules: null, reason }
    })
    if (entry.prop.kind === "updown") return none("crypto up-or-down: each venue sets its own price to beat")
    const best = this.best(entry, target)
    const second = best.second
    let top = best.top
    if (top === undefined) return none(best.reason)
    let score = Number(top.score.toFixed(4))
    if (top.score < MIN_SCORE) return none(`closest subject too far (${score})`, top.e.prop, score)
    if (second !== undefined && second.e.listing.venue === top.e.listing.venue && top.score - second.score < MARGIN) {
      // the two sides of one game listed there, one stated as we state it and one as its complement, both answer
      // the question: the one stated the same way is taken; any other tie is unsure
      const event = top.e.listing.eventId
      const sides =
        top.e.prop.kind === "h2h" &&
        second.e.prop.kind === "h2h" &&
        event !== undefined &&
        second.e.listing.eventId === event &&
        top.sides !== second.sides
      if (!sides) return none(`unsure: ${second.e.id} is as close`, top.e.prop, score)
      top = top.sides === "same" ? top : second
      score = Number(top.score.toFixed(4))
    }
    // the answer must see the anchor as its own best match on the anchor's venue
    const back = this.best(top.e, entry.listing.venue).top
    if (back !== undefined && back.e.id !== entry.id && back.score > top.score)
      return none(`${top.e.id} is closer to ${back.e.id}`, top.e.prop, score)
    return {
      anchor: entry.id,
      event_id: entry.listing.eventId ?? top.e.listing.eventId ?? entry.id,
      matched: { id: top.e.id, venue: top.e.listing.venue, side_map: top.sides === "same" ? SAME : FLIPPED },
      explain: {
        anchor: entry.prop,
        matched: top.e.prop,
        score,
        rules: rulesVerdict(entry.prop, top.e.prop),
        reason: null
      }
    }
  }
}
