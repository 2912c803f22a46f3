import { describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import { assert } from "vitest"
import { type Comparator, type Listing } from "../../src/Matching/Proposition.ts"
import { compareQuantities, MatchIndex } from "../../src/Matching/Matcher.ts"

const LONG = process.env["CROSSBOOK_LONG"] !== undefined
const RUNS = LONG ? { numRuns: 500 } : { seed: 7, numRuns: 60 }

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]
const NAMES = [
  "Orla Quinn",
  "Teodor Varga",
  "Mina Sato",
  "Rafael Ibarra",
  "Greta Holm",
  "Kwame Mensah",
  "Lena Brandt",
  "Ivo Petrov"
]
const MEASURES = ["approval rating", "polling average", "favorability score", "net worth index"]

/** Each comparator in several wordings, and its complement. */
const WORDINGS: Readonly<Record<"gt" | "ge" | "lt" | "le", ReadonlyArray<(n: string) => string>>> = {
  gt: [(n) => `above ${n}`, (n) => `more than ${n}`, (n) => `greater than ${n}`],
  ge: [(n) => `at least ${n}`, (n) => `${n} or more`, (n) => `${n} or above`],
  lt: [(n) => `below ${n}`, (n) => `less than ${n}`, (n) => `under ${n}`],
  le: [(n) => `${n} or less`, (n) => `at most ${n}`, (n) => `${n} or below`]
}
const COMPLEMENT = { gt: "le", ge: "lt", lt: "ge", le: "gt" } as const

const proposition = fc.record({
  name: fc.constantFrom(...NAMES),
  measure: fc.constantFrom(...MEASURES),
  comparator: fc.constantFrom<"gt" | "ge" | "lt" | "le">("gt", "ge", "lt", "le"),
  tenths: fc.integer({ min: 100, max: 900 }),
  month: fc.integer({ min: 0, max: 11 }),
  day: fc.integer({ min: 1, max: 28 }),
  year: fc.integer({ min: 2025, max: 2030 }),
  wordA: fc.nat(2),
  wordB: fc.nat(2),
  complement: fc.boolean()
})
type P = typeof proposition extends fc.Arbitrary<infer T> ? T : never

const number = (tenths: number) => `${Math.floor(tenths / 10)}.${tenths % 10}%`

/** One venue asks in a question, the other in a headline; distractors on the answering venue differ by one thing. */
const pool = (p: P): { a: Listing; b: Listing; flipped: Listing; all: Array<Listing> } => {
  const when = `${MONTHS[p.month]} ${p.day}, ${p.year}`
  const cmp = (c: Comparator & keyof typeof WORDINGS, tenths: number, w: number) => WORDINGS[c][w]!(number(tenths))
  const a: Listing = {
    venue: "x",
    nativeId: "A",
    title: `Will ${p.name}'s ${p.measure} be ${cmp(p.comparator, p.tenths, p.wordA)} on ${when}?`
  }
  const theirs = p.complement ? COMPLEMENT[p.comparator] : p.comparator
  const headline = (id: string, c: keyof typeof WORDINGS, tenths: number, date = when) => ({
    venue: "y",
    nativeId: id,
    title: `${p.name} ${p.measure} ${cmp(c, tenths, p.wordB)} on ${date}?`
  })
  const b = headline("B", theirs, p.tenths)
  const flipped = headline("F", COMPLEMENT[theirs], p.tenths)
  const distractors = [
    headline("D1", theirs, p.tenths + 1),
    headline("D2", theirs, p.tenths, `${MONTHS[p.month]} ${p.day + 1}, ${p.year}`),
    {
      venue: "y",
      nativeId: "D3",
      title: `${NAMES[(NAMES.indexOf(p.name) + 1) % NAMES.length]} ${p.measure} ${cmp(theirs, p.tenths, p.wordB)} on ${when}?`
    }
  ]
  return { a, b, flipped, all: [a, b, ...distractors] }
}

describe("matching properties", () => {
  it("swapping the query and the answer gives the same side_map", () => {
    fc.assert(
      fc.property(proposition, (p) => {
        const { all } = pool(p)
        const index = new MatchIndex()
        index.addAll(all)
        const there = index.match("x:A")!.matched
        assert.isNotNull(there)
        assert.strictEqual(there!.id, "y:B")
        assert.deepStrictEqual(there!.side_map, p.complement ? { yes: "no", no: "yes" } : { yes: "yes", no: "no" })
        const back = index.match("y:B")!.matched
        assert.strictEqual(back?.id, "x:A")
        assert.deepStrictEqual(back!.side_map, there!.side_map)
      }),
      RUNS
    )
  })

  it("a complement's side_map is the flip", () => {
    fc.assert(
      fc.property(proposition, (p) => {
        const { a, b, flipped } = pool(p)
        const one = new MatchIndex()
        one.addAll([a, b])
        const other = new MatchIndex()
        other.addAll([a, flipped])
        const straight = one.match("x:A")!.matched!
        const turned = other.match("x:A")!.matched!
        assert.strictEqual(turned.id, "y:F")
        assert.deepStrictEqual(turned.side_map, { yes: straight.side_map.no, no: straight.side_map.yes })
      }),
      RUNS
    )
  })
})

describe("thresholds: what compareQuantities calls the same or a complement settles so at every value", () => {
  const ONE_SIDED = ["gt", "ge", "lt", "le"] as const
  const yes = (c: (typeof ONE_SIDED)[number], x: number, v: number) =>
    c === "gt" ? v > x : c === "ge" ? v >= x : c === "lt" ? v < x : v <= x
  it("on a whole count (step 1) and on a figure of unknown precision (tested at halves)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ONE_SIDED),
        fc.constantFrom(...ONE_SIDED),
        fc.integer({ min: 0, max: 8 }),
        fc.integer({ min: 0, max: 8 }),
        fc.boolean(),
        (ca, cb, x, y, counted) => {
          const q = (comparator: (typeof ONE_SIDED)[number], low: number) => ({
            comparator,
            low: String(low),
            unit: "",
            decimals: 0
          })
          const rel = compareQuantities(q(ca, x), q(cb, y), counted ? "1" : undefined)
          const values: Array<number> = []
          for (let v = -2; v <= 11; v += counted ? 1 : 0.5) values.push(v)
          const same = values.every((v) => yes(ca, x, v) === yes(cb, y, v))
          const complement = values.every((v) => yes(ca, x, v) !== yes(cb, y, v))
          if (rel.ok && rel.exact) {
            assert.isTrue(rel.sides === "same" ? same : complement, JSON.stringify({ ca, cb, x, y, counted, rel }))
          }
          // on a count every exact relation is found
          if (counted && same) assert.deepInclude(rel, { ok: true, sides: "same", exact: true })
          if (counted && complement) assert.deepInclude(rel, { ok: true, sides: "inverse", exact: true })
        }
      ),
      RUNS
    )
  })
})
