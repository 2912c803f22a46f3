/** Decimal strings as integer millionths, so the NO side of a book is exactly 1 − p. */
const SCALE = 1_000_000

export const toMicros = (text: string): number => {
  const m = /^(-?)(\d+)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (m === null) return NaN
  const units = Number(m[2]) * SCALE + Number((m[3] ?? "").padEnd(6, "0"))
  return m[1] === "-" ? -units : units
}

export const fromMicros = (micros: number): string => {
  const sign = micros < 0 ? "-" : ""
  const abs = Math.abs(micros)
  const whole = Math.floor(abs / SCALE)
  const frac = String(abs % SCALE)
    .padStart(6, "0")
    .replace(/0+$/, "")
  return `${sign}${whole}${frac === "" ? "" : `.${frac}`}`
}

/** 1 − p for a price string. */
export const complement = (price: string) => fromMicros(SCALE - toMicros(price))

export const same = (a: string, b: string) => toMicros(a) === toMicros(b)
