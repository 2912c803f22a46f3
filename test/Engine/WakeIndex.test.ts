/** The wake index answers exactly the parents a brute-force check of every band would wake, and no scan is needed. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Band, type MarketView, type Watch, wakes } from "../../src/Engine/Core.ts"
import { DueHeap, WakeIndex } from "../../src/Engine/WakeIndex.ts"

const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 3000 } : { seed: 42, numRuns: 300 }
const T = 10_000
const level = fc.integer({ min: 0, max: 20 }).map((n) => n * T)
const bound = (inf: number) => fc.oneof(level, fc.constant(inf))

const bandArb: fc.Arbitrary<Band> = fc.record({
  ref: fc.constantFrom("bid", "ask", "mid", "last"),
  low: bound(Number.NEGATIVE_INFINITY),
  high: bound(Number.POSITIVE_INFINITY),
  missing: fc.boolean()
})
const watchArb: fc.Arbitrary<Watch> = fc.oneof(
  { arbitrary: fc.constant("all" as const), weight: 1 },
  { arbitrary: fc.array(bandArb, { maxLength: 3 }), weight: 6 }
)
const viewArb: fc.Arbitrary<MarketView> = fc.record({
  bestBid: fc.option(level),
  bestAsk: fc.option(level),
  last: fc.option(level)
}) as fc.Arbitrary<MarketView>

type Op =
  | { readonly t: "set"; readonly id: number; readonly market: number; readonly watch: Watch }
  | { readonly t: "delete"; readonly id: number }
  | { readonly t: "view"; readonly market: number; readonly view: MarketView }
  /** The last view of the market again (most views of a book repeat the last one). */
  | { readonly t: "again"; readonly market: number }

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ t: fc.constant("set" as const), id: fc.nat(15), market: fc.nat(2), watch: watchArb }),
    weight: 4
  },
  { arbitrary: fc.record({ t: fc.constant("delete" as const), id: fc.nat(15) }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("view" as const), market: fc.nat(2), view: viewArb }), weight: 4 },
  { arbitrary: fc.record({ t: fc.constant("again" as const), market: fc.nat(2) }), weight: 4 }
)

describe("the wake index", () => {
  it("wakes exactly the parents with a band the view leaves (or that watch everything), in id order, however often a view repeats", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 60 }), (ops) => {
        const index = new WakeIndex()
        const model = new Map<string, { market: string; watch: Watch }>()
        const lastView = new Map<number, MarketView>()
        for (const op0 of ops) {
          const last = op0.t === "again" ? lastView.get(op0.market) : undefined
          if (op0.t === "again" && last === undefined) continue
          const op: Exclude<Op, { t: "again" }> =
            op0.t === "again" ? { t: "view", market: op0.market, view: { ...last! } } : op0
          if (op.t === "view") lastView.set(op.market, op.view)
          if (op.t === "set") {
            index.set(`p${op.id}`, `m${op.market}`, op.watch)
            const inert = (b: Band) => !b.missing && b.low === -Infinity && b.high === Infinity
            if (op.watch !== "all" && op.watch.every(inert)) model.delete(`p${op.id}`)
            else model.set(`p${op.id}`, { market: `m${op.market}`, watch: op.watch })
          } else if (op.t === "delete") {
            index.delete(`p${op.id}`)
            model.delete(`p${op.id}`)
          } else {
            const expected = [...model]
              .filter(
                ([, p]) => p.market === `m${op.market}` && (p.watch === "all" || p.watch.some((b) => wakes(b, op.view)))
              )
              .map(([id]) => id)
              .sort()
            expect(index.woken(`m${op.market}`, op.view) ?? []).toEqual(expected)
            expect(index.watches(`m${op.market}`)).toBe([...model.values()].some((p) => p.market === `m${op.market}`))
          }
          expect(index.size).toBe(model.size)
        }
      }),
      RUNS
    )
  })
})

describe("a view that repeats the last one", () => {
  it("wakes a parent filed since the last time it woke nobody", () => {
    const index = new WakeIndex()
    const view: MarketView = { bestBid: (40 * T) as MarketView["bestBid"], bestAsk: null, last: null }
    index.set("a", "m", [{ ref: "bid", low: 30 * T, high: Infinity, missing: false }])
    expect(index.woken("m", view)).toBeNull()
    expect(index.woken("m", { ...view })).toBeNull()
    index.set("b", "m", [{ ref: "bid", low: 45 * T, high: Infinity, missing: false }])
    expect(index.woken("m", { ...view })).toEqual(["b"])
    index.delete("b")
    expect(index.woken("m", { ...view })).toBeNull()
    // Filed on another market, it changes nothing here.
    index.set("c", "n", [{ ref: "bid", low: 45 * T, high: Infinity, missing: false }])
    expect(index.woken("m", { ...view })).toBeNull()
    index.set("a", "m", [{ ref: "bid", low: 40 * T, high: Infinity, missing: false }])
    expect(index.woken("m", { ...view })).toEqual(["a"])
  })
})

describe("the due heap", () => {
  it("pops its entries earliest first, ties by id, whatever the order they were pushed and popped in", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.record({ at: fc.nat(20), id: fc.constantFrom("a", "b", "c", "d") }), fc.constant(null)), {
          maxLength: 80
        }),
        (ops) => {
          const heap = new DueHeap()
          const model: Array<{ at: number; id: string }> = []
          const order = (x: { at: number; id: string }, y: { at: number; id: string }) =>
            x.at - y.at || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)
          for (const op of ops) {
            if (op === null) {
              model.sort(order)
              expect(heap.pop()).toEqual(model.shift())
            } else {
              heap.push(op.at, op.id)
              model.push(op)
            }
            model.sort(order)
            expect(heap.peek()).toEqual(model[0])
            expect(heap.size).toBe(model.length)
          }
        }
      ),
      RUNS
    )
  })
})
