import { describe, expect, it } from "vitest"
import { SeededRandom } from "../../src/Domain/Random.ts"

const draw = (r: SeededRandom, n: number) => Array.from({ length: n }, () => r.nextU32())

describe("SeededRandom", () => {
  it("gives the same sequence for the same seed and another for another seed", () => {
    expect(draw(new SeededRandom(42), 50)).toEqual(draw(new SeededRandom(42), 50))
    expect(draw(new SeededRandom(42), 50)).not.toEqual(draw(new SeededRandom(43), 50))
  })

  it("derives independent named streams and restores a snapshot exactly", () => {
    expect(draw(SeededRandom.derive(1, "a"), 10)).not.toEqual(draw(SeededRandom.derive(1, "b"), 10))
    const r = new SeededRandom(9)
    draw(r, 17)
    const copy = SeededRandom.restore(r.snapshot())
    expect(draw(copy, 20)).toEqual(draw(r, 20))
  })

  it("draws integers inside the asked range, covering it", () => {
    const r = new SeededRandom(3)
    const seen = new Set<number>()
    for (let i = 0; i < 2000; i++) {
      const v = r.int(-2, 2)
      expect(v >= -2 && v <= 2 && Number.isInteger(v)).toBe(true)
      seen.add(v)
    }
    expect([...seen].sort()).toEqual([-1, -2, 0, 1, 2])
  })
})
