/** Exact decimal money: integer counts of 1e-6 held in a JS number (always a safe integer). */

/** An exact decimal with six places, stored as an integer number of millionths. */
export type Fixed = number & { readonly __fixed: unique symbol }

export const SCALE = 1_000_000
const SCALE_BIG = 1_000_000n
const PLACES = 6
export const ZERO = 0 as Fixed
export const ONE = SCALE as Fixed

const POW10 = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]

/**
 * Parses a decimal string such as "0.35" or "10" (`-?\d{1,15}(\.\d{1,6})?`); undefined when it is not one or has
 * over six places. A scan of the characters, no regular expression: tapes parse millions of these.
 */
export const parse = (text: string): Fixed | undefined => {
  const n = text.length
  let i = 0
  const negative = n > 0 && text.charCodeAt(0) === 45
  if (negative) i = 1
  let whole = 0
  const wholeStart = i
  for (; i < n; i++) {
    const c = text.charCodeAt(i) - 48
    if (c < 0 || c > 9) break
    whole = whole * 10 + c
  }
  const wholeDigits = i - wholeStart
  if (wholeDigits < 1 || wholeDigits > 15) return undefined
  let frac = 0
  if (i < n) {
    if (text.charCodeAt(i) !== 46) return undefined
    i += 1
    const fracStart = i
    for (; i < n; i++) {
      const c = text.charCodeAt(i) - 48
      if (c < 0 || c > 9) return undefined
      frac = frac * 10 + c
    }
    const fracDigits = i - fracStart
    if (fracDigits < 1 || fracDigits > PLACES) return undefined
    frac *= POW10[PLACES - fracDigits]!
  }
  const value = whole * SCALE + frac
  if (!Number.isSafeInteger(value)) return undefined
  return (negative && value !== 0 ? -value : value) as Fixed
}

/** Parses or throws; for literals in code and tests. */
export const of = (text: string): Fixed => {
  const v = parse(text)
  if (v === undefined) throw new Error(`not a decimal: ${text}`)
  return v
}

/** Formats with no trailing zeros: 350000 → "0.35", 10000000 → "10". */
export const format = (x: Fixed): string => {
  const neg = x < 0
  const abs = neg ? -x : x
  const whole = Math.floor(abs / SCALE)
  const frac = abs - whole * SCALE
  let text = String(whole)
  if (frac !== 0) {
    // The fraction's digits less its trailing zeros, with the leading zeros its place needs.
    let digits = PLACES
    let rest = frac
    while (rest % 10 === 0) {
      rest /= 10
      digits -= 1
    }
    const shown = String(rest)
    text += shown.length === digits ? "." + shown : "." + "00000".slice(0, digits - shown.length) + shown
  }
  return neg ? "-" + text : text
}

export const formatOrNull = (x: Fixed | null | undefined): string | null =>
  x === null || x === undefined ? null : format(x)

/** From an integer count of whole units (contracts, ticks of size one). */
export const fromInt = (n: number): Fixed => (n * SCALE) as Fixed

export const add = (a: Fixed, b: Fixed): Fixed => (a + b) as Fixed
export const sub = (a: Fixed, b: Fixed): Fixed => (a - b) as Fixed
export const neg = (a: Fixed): Fixed => (a === 0 ? 0 : -a) as Fixed
export const min = (a: Fixed, b: Fixed): Fixed => (a < b ? a : b)
export const max = (a: Fixed, b: Fixed): Fixed => (a > b ? a : b)

export type Rounding = "down" | "up" | "half_even"

const divRound = (num: bigint, den: bigint, mode: Rounding): bigint => {
  const sign = num < 0n !== den < 0n ? -1n : 1n
  const n = num < 0n ? -num : num
  const d = den < 0n ? -den : den
  const q = n / d
  const r = n % d
  let out = q
  if (r !== 0n) {
    if (mode === "up") out = sign > 0n ? q + 1n : q
    else if (mode === "down") out = sign > 0n ? q : q + 1n
    else {
      const twice = r * 2n
      if (twice > d || (twice === d && q % 2n === 1n)) out = q + 1n
    }
  }
  return sign * out
}

/** Below this in magnitude a product, a scaled dividend and every step `divRoundNumber` takes with them are exact. */
const EXACT = 2 ** 52

/**
 * `divRound` in plain numbers, for a numerator and a divisor both below `EXACT` in magnitude. The float quotient's floor
 * is the true one: a quotient that is not a whole number lies at least 1/d from the next, farther than half its ulp
 * (n/d · 2^-53) while n < 2^53. The remainder and twice it are exact integers too, so it answers what `divRound` does.
 */
const divRoundNumber = (num: number, den: number, mode: Rounding): number => {
  const negative = num < 0 !== den < 0
  const n = num < 0 ? -num : num
  const d = den < 0 ? -den : den
  const q = Math.floor(n / d)
  const r = n - q * d
  let out = q
  if (r !== 0) {
    if (mode === "up") out = negative ? q : q + 1
    else if (mode === "down") out = negative ? q + 1 : q
    else if (2 * r > d || (2 * r === d && q % 2 === 1)) out = q + 1
  }
  // Adding zero turns a negative zero (from a −0 given, or a quotient of zero) into zero.
  return (negative ? -out : out) + 0
}

/** a × b, rounded as asked (default half-even) to six places. "down"/"up" round toward −∞/+∞. */
export const mul = (a: Fixed, b: Fixed, mode: Rounding = "half_even"): Fixed => {
  // A product below 2^52 is exact as a float (a larger true product never rounds below it): no BigInt needed.
  const product = a * b
  if (product < EXACT && product > -EXACT) return divRoundNumber(product, SCALE, mode) as Fixed
  return Number(divRound(BigInt(a) * BigInt(b), SCALE_BIG, mode)) as Fixed
}

/** a ÷ b, rounded as asked (default half-even) to six places. */
export const div = (a: Fixed, b: Fixed, mode: Rounding = "half_even"): Fixed => {
  if (b === 0) throw new RangeError("division by zero")
  const scaled = a * SCALE
  if (scaled < EXACT && scaled > -EXACT && b < EXACT && b > -EXACT) return divRoundNumber(scaled, b, mode) as Fixed
  return Number(divRound(BigInt(a) * SCALE_BIG, BigInt(b), mode)) as Fixed
}

/** Rounds x to a multiple of step: "down" toward −∞, "up" toward +∞. */
export const roundTo = (x: Fixed, step: Fixed, mode: "down" | "up"): Fixed => {
  const r = ((x % step) + step) % step
  if (r === 0) return x
  return (mode === "down" ? x - r : x - r + step) as Fixed
}

export const isMultipleOf = (x: Fixed, step: Fixed): boolean => x % step === 0
