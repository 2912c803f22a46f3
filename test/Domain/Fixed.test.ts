import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as F from "../../src/Domain/Fixed.ts"

describe("Fixed", () => {
  it("parses and formats decimal strings exactly", () => {
    expect(F.parse("0.35")).toBe(350_000)
    expect(F.parse("10")).toBe(10_000_000)
    expect(F.parse("-0.000001")).toBe(-1)
    expect(F.format(F.of("0.10"))).toBe("0.1")
    expect(F.format(F.of("12.000500"))).toBe("12.0005")
    expect(F.format(F.of("-3.5"))).toBe("-3.5")
    for (const bad of ["", ".5", "1.", "0.1234567", "1e3", "abc", "0x10", " 1"]) expect(F.parse(bad)).toBeUndefined()
  })

  it("round-trips every six-place decimal", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e12, max: 1e12 }), (n) => {
        const x = n as F.Fixed
        expect(F.parse(F.format(x))).toBe(x)
      })
    )
  })

  it("multiplies without binary floating point error", () => {
    // 0.07 × 0.1 is 0.007000000000000001 in binary floating point.
    expect(F.format(F.mul(F.of("0.07"), F.of("0.1")))).toBe("0.007")
    expect(F.format(F.mul(F.of("0.29"), F.of("100")))).toBe("29")
    expect(F.mul(F.of("0.000001"), F.of("0.5"), "up")).toBe(1)
    expect(F.mul(F.of("0.000001"), F.of("0.5"), "down")).toBe(0)
    expect(F.mul(F.of("0.000001"), F.of("0.5"))).toBe(0)
    expect(F.mul(F.of("0.000003"), F.of("0.5"))).toBe(2)
  })

  it("rounds to a step toward −∞ or +∞", () => {
    const tick = F.of("0.01")
    expect(F.format(F.roundTo(F.of("0.456"), tick, "down"))).toBe("0.45")
    expect(F.format(F.roundTo(F.of("0.451"), tick, "up"))).toBe("0.46")
    expect(F.format(F.roundTo(F.of("0.45"), tick, "up"))).toBe("0.45")
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        const x = n as F.Fixed
        const down = F.roundTo(x, tick, "down")
        const up = F.roundTo(x, tick, "up")
        expect(F.isMultipleOf(down, tick) && F.isMultipleOf(up, tick)).toBe(true)
        expect(down <= x && x <= up && up - down <= tick).toBe(true)
      })
    )
  })

  it("divides with the asked rounding", () => {
    expect(F.format(F.div(F.of("1"), F.of("3")))).toBe("0.333333")
    expect(F.format(F.div(F.of("2"), F.of("3")))).toBe("0.666667")
    expect(F.format(F.div(F.of("2"), F.of("3"), "down"))).toBe("0.666666")
  })
})

describe("parse", () => {
  /** The grammar as a regular expression: what the character scan must accept, and the value it must give. */
  const reference = (text: string): number | undefined => {
    const m = /^(-)?(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text)
    if (m === null) return undefined
    const value = Number(m[2]) * 1_000_000 + (m[3] === undefined ? 0 : Number(m[3].padEnd(6, "0")))
    if (!Number.isSafeInteger(value)) return undefined
    return m[1] === "-" && value !== 0 ? -value : value
  }
  const pieces = fc.oneof(
    fc.constantFrom("-", ".", "0", "00", "1", "9", "123456789012345", "1234567", "e", " ", "+", "٣", ":", "/"),
    fc.stringMatching(/^\d{0,17}$/)
  )
  it("accepts exactly the decimals of the grammar, with the same value", () => {
    fc.assert(
      fc.property(fc.array(pieces, { maxLength: 5 }), (parts) => {
        const text = parts.join("")
        expect(F.parse(text)).toBe(reference(text))
      }),
      { numRuns: 5000, seed: 7 }
    )
  })
})

describe("mul and div", () => {
  /** n ÷ d on exact integers, rounded as asked: floor and ceiling from BigInt, then the mode picks. */
  const reference = (n: bigint, d: bigint, mode: F.Rounding): number => {
    const floor = n / d - (n % d !== 0n && n < 0n !== d < 0n ? 1n : 0n)
    const rest = n - floor * d
    if (rest === 0n) return Number(floor)
    if (mode === "down") return Number(floor)
    if (mode === "up") return Number(floor + 1n)
    // Twice the distance to the floor against the divisor's magnitude; a tie goes to the even one.
    const twice = 2n * (rest < 0n ? -rest : rest)
    const size = d < 0n ? -d : d
    if (twice > size || (twice === size && floor % 2n !== 0n)) return Number(floor + 1n)
    return Number(floor)
  }
  const MODES = ["down", "up", "half_even"] as const
  // Magnitudes on both sides of where a float product stops being exact (2^52), and small ones with many ties.
  const value = fc.oneof(
    fc.integer({ min: -2_000_000, max: 2_000_000 }),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
    fc.double({ min: -(2 ** 40), max: 2 ** 40, noNaN: true }).map(Math.trunc),
    fc.constantFrom(1, -1, 500_000, -500_000, 1_500_000, 2 ** 26, 2 ** 26 + 1, 67_108_863, 4_503_599_627, 9_007_199_254)
  )
  const nonzero = value.filter((v) => v !== 0)

  it("multiply exactly, rounded as asked, on both sides of the float-exact range", () => {
    fc.assert(
      fc.property(value, value, fc.constantFrom(...MODES), (a, b, mode) => {
        const got = F.mul(a as F.Fixed, b as F.Fixed, mode)
        expect(got).toBe(reference(BigInt(a) * BigInt(b), 1_000_000n, mode))
        expect(Object.is(got, -0)).toBe(false)
      }),
      { numRuns: 20_000, seed: 11 }
    )
  })

  it("divide exactly, rounded as asked, on both sides of the float-exact range", () => {
    fc.assert(
      fc.property(value, nonzero, fc.constantFrom(...MODES), (a, b, mode) => {
        const got = F.div(a as F.Fixed, b as F.Fixed, mode)
        expect(got).toBe(reference(BigInt(a) * 1_000_000n, BigInt(b), mode))
        expect(Object.is(got, -0)).toBe(false)
      }),
      { numRuns: 20_000, seed: 12 }
    )
  })

  it("round a half to the even neighbour and the rest toward the asked infinity", () => {
    expect(F.mul(F.of("0.000001"), F.of("0.5"))).toBe(0)
    expect(F.mul(F.of("-0.000001"), F.of("0.5"))).toBe(0)
    expect(F.mul(F.of("-0.000003"), F.of("0.5"))).toBe(-2)
    expect(F.mul(F.of("-0.000001"), F.of("0.5"), "down")).toBe(-1)
    expect(F.mul(F.of("-0.000001"), F.of("0.5"), "up")).toBe(0)
    expect(F.div(F.of("-1"), F.of("3"), "down")).toBe(-333_334)
    expect(F.div(F.of("-1"), F.of("3"), "up")).toBe(-333_333)
    expect(F.div(F.of("0.45"), F.of("2"))).toBe(225_000)
    expect(F.div(F.of("0.000003"), F.of("2"))).toBe(2)
    expect(F.div(F.of("0.000005"), F.of("2"))).toBe(2)
  })
})
