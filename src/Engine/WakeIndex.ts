/**
 * Which parents a market view wakes. Each parent sleeps in the bands its core watches; per market and reference the
 * bands sit in two sorted lists (by `low` and by `high`), so a view costs O(1) when it wakes nobody and
 * O(log n + woken) when it wakes someone: never a scan of every parent of the market. A view with the numbers of the
 * last one that woke nobody, with nobody filed or taken out since, is answered from them alone.
 */
import type { Band, MarketView, Reference, Watch } from "./Core.ts"
import { kept, referenceIn } from "./Core.ts"

interface Entry {
  readonly bound: number
  readonly id: string
}

/** The bands of one reference of one market. */
class Lists {
  /** Wake at `value <= low`: sorted by low, a view wakes a suffix. */
  readonly lows: Array<Entry> = []
  /** Wake at `value >= high`: sorted by high, a view wakes a prefix. */
  readonly highs: Array<Entry> = []
  /** Wake when the view has no such number. */
  readonly missing = new Set<string>()

  get size() {
    return this.lows.length + this.highs.length + this.missing.size
  }
}

const position = (list: ReadonlyArray<Entry>, bound: number, id: string): number => {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const e = list[mid]!
    if (e.bound < bound || (e.bound === bound && e.id < id)) lo = mid + 1
    else hi = mid
  }
  return lo
}

const insert = (list: Array<Entry>, bound: number, id: string) => {
  // Parents come in id order at start, most of them after every entry of their bound: appended, not spliced.
  const last = list[list.length - 1]
  if (last === undefined || last.bound < bound || (last.bound === bound && last.id < id)) list.push({ bound, id })
  else list.splice(position(list, bound, id), 0, { bound, id })
}

const remove = (list: Array<Entry>, bound: number, id: string) => {
  const at = position(list, bound, id)
  if (list[at]?.id === id) list.splice(at, 1)
}

/** The parents of one market. */
class MarketEntry {
  /** Parents that see every view. */
  readonly always = new Set<string>()
  readonly refs = new Map<Reference, Lists>()
  /** The same lists with their references, in the order they came: what a view walks (no lookup per reference). */
  readonly present: Array<{ readonly ref: Reference; readonly lists: Lists }> = []
  /**
   * The last view that woke nobody here, while no parent was filed or taken out since (`quiet`): the same numbers wake
   * nobody again, with no list looked at. Most views of a book repeat the last one (a change behind the touch).
   */
  quiet = false
  quietBid: number | null = null
  quietAsk: number | null = null
  quietLast: number | null = null

  listsFor(ref: Reference): Lists {
    let lists = this.refs.get(ref)
    if (lists === undefined) {
      this.refs.set(ref, (lists = new Lists()))
      this.present.push({ ref, lists })
    }
    return lists
  }

  get empty() {
    if (this.always.size > 0) return false
    for (const lists of this.refs.values()) if (lists.size > 0) return false
    return true
  }
}

/** Where a parent sleeps: its market and the bands it is filed under. */
interface Place {
  readonly marketId: string
  readonly watch: Watch
}

/** A band with no bound that ignores a missing number never wakes anyone; a lazy one is not woken by views. */
const sleepsIn = (b: Band) => b.lazy !== true && (b.missing || b.low > -Infinity || b.high < Infinity)

export class WakeIndex {
  private readonly markets = new Map<string, MarketEntry>()
  /** Where each parent sleeps now, to take it out again. */
  private readonly placed = new Map<string, Place>()
  /** The one place of the parents that share a list of bands (`set`'s `shared`). */
  private readonly shared = new WeakMap<ReadonlyArray<Band>, Place>()

  /** Parents indexed (sleeping in some band or seeing every view). */
  get size(): number {
    return this.placed.size
  }

  /**
   * Puts a parent to sleep in `watch` (replacing where it slept before). `shared`: `given` is a list of the exact
   * length that never changes (one many parents share), kept as it is rather than copied.
   */
  set(id: string, marketId: string, given: Watch, shared = false): void {
    let place = shared && given !== "all" ? this.shared.get(given) : undefined
    if (place === undefined || place.marketId !== marketId) {
      const filed = given === "all" ? given : kept(given, sleepsIn)
      // Kept as a list of the exact length: a core may build its bands in a list with room to grow.
      place = { marketId, watch: filed === given && filed !== "all" && !shared ? filed.slice() : filed }
      if (shared && given !== "all") this.shared.set(given, place)
    }
    const watch = place.watch
    const before = this.placed.get(id)
    if (before !== undefined) {
      if (before.marketId === marketId && sameWatch(before.watch, watch)) return
      this.delete(id)
    }
    if (watch !== "all" && watch.length === 0) return
    let entry = this.markets.get(marketId)
    if (entry === undefined) this.markets.set(marketId, (entry = new MarketEntry()))
    entry.quiet = false
    this.placed.set(id, place)
    if (watch === "all") {
      entry.always.add(id)
      return
    }
    for (const band of watch) {
      const lists = entry.listsFor(band.ref)
      if (band.low !== Number.NEGATIVE_INFINITY) insert(lists.lows, band.low, id)
      if (band.high !== Number.POSITIVE_INFINITY) insert(lists.highs, band.high, id)
      if (band.missing) lists.missing.add(id)
    }
  }

  /** Takes a parent out: no view wakes it. */
  delete(id: string): void {
    const before = this.placed.get(id)
    if (before === undefined) return
    this.placed.delete(id)
    const entry = this.markets.get(before.marketId)
    if (entry === undefined) return
    entry.quiet = false
    if (before.watch === "all") entry.always.delete(id)
    else {
      for (const band of before.watch) {
        const lists = entry.refs.get(band.ref)
        if (lists === undefined) continue
        if (band.low !== Number.NEGATIVE_INFINITY) remove(lists.lows, band.low, id)
        if (band.high !== Number.POSITIVE_INFINITY) remove(lists.highs, band.high, id)
        if (band.missing) lists.missing.delete(id)
      }
    }
    if (entry.empty) this.markets.delete(before.marketId)
  }

  /** Whether any parent watches this market at all. */
  watches(marketId: string): boolean {
    return this.markets.has(marketId)
  }

  /** The parents `view` wakes, in id order; null when none. */
  woken(marketId: string, view: MarketView): Array<string> | null {
    const entry = this.markets.get(marketId)
    if (entry === undefined) return null
    if (
      entry.quiet &&
      entry.quietBid === view.bestBid &&
      entry.quietAsk === view.bestAsk &&
      entry.quietLast === view.last
    ) {
      return null
    }
    let out: Array<string> | null = entry.always.size > 0 ? [...entry.always] : null
    // Any order of references will do: what they wake is sorted below.
    for (const { ref, lists } of entry.present) {
      const value = referenceIn(ref, view)
      if (value === null) {
        if (lists.missing.size > 0) (out ??= []).push(...lists.missing)
        continue
      }
      const { lows, highs } = lists
      // The common case first: the view is inside every band of this reference.
      if (lows.length > 0 && value <= lows[lows.length - 1]!.bound) {
        out ??= []
        for (let i = position(lows, value, ""); i < lows.length; i++) out.push(lows[i]!.id)
      }
      if (highs.length > 0 && value >= highs[0]!.bound) {
        out ??= []
        const end = position(highs, value + 1, "")
        for (let i = 0; i < end; i++) out.push(highs[i]!.id)
      }
    }
    if (out === null) {
      entry.quiet = true
      entry.quietBid = view.bestBid
      entry.quietAsk = view.bestAsk
      entry.quietLast = view.last
      return null
    }
    if (out.length < 2) return out
    return [...new Set<string>(out)].sort()
  }
}

const sameWatch = (a: Watch, b: Watch): boolean => {
  if (a === "all" || b === "all") return a === b
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x: Band = a[i]!
    const y: Band = b[i]!
    if (x.ref !== y.ref || x.low !== y.low || x.high !== y.high || x.missing !== y.missing) return false
  }
  return true
}

/** A min-heap of (time, parent id), earliest first (ties by id), for the driver's timers and expiries. */
export class DueHeap {
  private readonly items: Array<{ readonly at: number; readonly id: string }> = []

  get size(): number {
    return this.items.length
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i]!
    const b = this.items[j]!
    return a.at < b.at || (a.at === b.at && a.id < b.id)
  }

  private swap(i: number, j: number) {
    const t = this.items[i]!
    this.items[i] = this.items[j]!
    this.items[j] = t
  }

  push(at: number, id: string): void {
    this.items.push({ at, id })
    for (let i = this.items.length - 1; i > 0;) {
      const up = (i - 1) >> 1
      if (!this.less(i, up)) break
      this.swap(i, up)
      i = up
    }
  }

  peek(): { readonly at: number; readonly id: string } | undefined {
    return this.items[0]
  }

  pop(): { readonly at: number; readonly id: string } | undefined {
    const top = this.items[0]
    const last = this.items.pop()
    if (top === undefined || last === undefined || this.items.length === 0) return top
    this.items[0] = last
    for (let i = 0; ;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < this.items.length && this.less(l, m)) m = l
      if (r < this.items.length && this.less(r, m)) m = r
      if (m === i) break
      this.swap(i, m)
      i = m
    }
    return top
  }
}
