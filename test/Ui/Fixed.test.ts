import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { complement, fromMicros, same, toMicros } from "../../ui/fixed.ts"

/** Decimal strings with up to six places, as the API sends prices and sizes. */
const decimal = fc
  .tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 999_999 }), fc.integer({ min: 0, max: 6 }))
  .map(([whole, frac, places]) =>
    places === 0 ? String(whole) : `${whole}.${String(frac).padStart(6, "0").slice(0, places)}`
  )

describe("the dashboard's decimals", () => {
  it("read and write back the same value, in the API's shortest form", () => {
    fc.assert(
      fc.property(decimal, (text) => {
        const back = fromMicros(toMicros(text))
        expect(same(back, text)).toBe(true)
        expect(back).toBe(fromMicros(toMicros(back)))
        expect(back === "0" || !/\.\d*0$/.test(back)).toBe(true)
      })
    )
  })

  it("mirror a YES price to NO exactly: 1 − p, and back again", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 999_999 }), (micros) => {
        const price = fromMicros(micros)
        expect(toMicros(complement(price)) + micros).toBe(1_000_000)
        expect(complement(complement(price))).toBe(price)
      })
    )
    expect(complement("0.35")).toBe("0.65")
    expect(complement("0.999")).toBe("0.001")
  })

  it("refuse what is not a decimal", () => {
    for (const bad of ["", "abc", "1.2345678", "1e3", "0x10"]) expect(Number.isNaN(toMicros(bad))).toBe(true)
  })
})
