/** Which markets the engine asks venues to stream: exactly those with a live parent, each asked and let go once. */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { ParentsByMarket, Summarized } from "../../src/Engine/LiveMarkets.ts"
import type { Runtime } from "../../src/Engine/Runtime.ts"

const parent = (id: string, marketId: string) => ({ id, marketId }) as unknown as Runtime

const step = fc.oneof(
  fc.record({
    op: fc.constant("set" as const),
    id: fc.integer({ min: 0, max: 7 }),
    market: fc.integer({ min: 0, max: 3 })
  }),
  fc.record({ op: fc.constant("delete" as const), id: fc.integer({ min: 0, max: 7 }) })
)

describe("ParentsByMarket", () => {
  it("streams a market while it has a live parent: first parent asks for it, last one lets it go, never twice", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const parents = new ParentsByMarket()
        const watched = new Set<string>()
        const heard: Array<string> = []
        parents.listen((marketId, on) => {
          heard.push(`${on ? "+" : "-"}${marketId}`)
          // a market is asked for only when not streamed, and let go only when streamed
          expect(watched.has(marketId)).toBe(!on)
          if (on) watched.add(marketId)
          else watched.delete(marketId)
        })
        for (const s of steps) {
          if (s.op === "set") parents.set(`p${s.id}`, parent(`p${s.id}`, `sim:M${s.market}`))
          else parents.delete(`p${s.id}`)
          const live = new Set([...parents.values()].map((rt) => rt.marketId))
          expect(new Set(parents.markets())).toEqual(live)
          expect(watched).toEqual(live)
        }
        parents.clear()
        expect(watched.size).toBe(0)
      })
    )
  })

  it("a parent held by its summary is read whole once, at its first use; counting and walking the ids read none", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), fc.array(fc.integer({ min: 0, max: 7 })), (steps, reads) => {
        // The same steps on parents held whole and on parents held by summaries: the same markets, ids and values.
        const whole = new ParentsByMarket()
        const summarized = new ParentsByMarket()
        const stored = new Map<string, Runtime>()
        const readIds: Array<string> = []
        const read = (id: string) => {
          readIds.push(id)
          return stored.get(id)!
        }
        for (let i = 0; i < 8; i++) {
          const rt = { ...parent(`p${i}`, `sim:M${i % 3}`), type: "stop_market", done: false } as Runtime
          stored.set(rt.id, rt)
          whole.set(rt.id, rt)
          summarized.holdSummarized(rt.id, new Summarized(rt.type, rt.marketId), read)
        }
        expect([...summarized.working()]).toEqual([...whole.working()])
        expect(summarized.summarizedCount).toBe(8)
        expect(readIds).toEqual([])
        for (const n of reads) expect(summarized.get(`p${n}`)).toBe(whole.get(`p${n}`))
        expect(readIds).toEqual([...new Set(reads.map((n) => `p${n}`))])
        for (const s of steps) {
          for (const parents of [whole, summarized]) {
            if (s.op === "set") parents.set(`p${s.id}`, parent(`p${s.id}`, `sim:M${s.market}`))
            else parents.delete(`p${s.id}`)
          }
          expect(summarized.markets()).toEqual(whole.markets())
          expect(summarized.size).toBe(whole.size)
        }
        expect([...summarized.values()]).toEqual([...whole.values()])
        expect(summarized.summarizedCount).toBe(0)
        expect(new Set(readIds).size).toBe(readIds.length)
      })
    )
  })

  it("moving a parent to another market lets the old one go and asks for the new one", () => {
    const parents = new ParentsByMarket()
    const heard: Array<string> = []
    parents.listen((m, on) => heard.push(`${on ? "+" : "-"}${m}`))
    parents.set("p1", parent("p1", "sim:A"))
    parents.set("p2", parent("p2", "sim:A"))
    parents.set("p1", parent("p1", "sim:B"))
    parents.delete("p2")
    expect(heard).toEqual(["+sim:A", "+sim:B", "-sim:A"])
  })
})
