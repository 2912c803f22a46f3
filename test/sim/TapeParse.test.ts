/** The tape parser's fast path accepts exactly what the schema accepts, and gives the same events and errors. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { generateTape } from "../../sim/Generator.ts"
import { formatTape, parseTape, parseTapeStrict } from "../../sim/Tape.ts"

const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 3000 } : { seed: 11, numRuns: 300 }

const outcome = (parse: (text: string) => unknown, text: string) => {
  try {
    return { ok: parse(text) }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}

const generated = generateTape({ seed: 5, markets: 3, durationS: 20 })
const lines = formatTape(generated.header, generated.events).split("\n").slice(0, -1)

/** Values a corrupted key may take: wrong types, non-canonical or out-of-range decimals, unknown names. */
const badValue = fc.constantFrom<unknown>(
  null,
  7,
  -1,
  1.5,
  "x",
  "",
  "0",
  "1",
  "0.50",
  "1e-2",
  "-0.1",
  "0.0000001",
  "100",
  "0.45",
  "bid",
  "sell",
  "sim:NOPE",
  [],
  [["0.45"]],
  [["0.45", "1", "2"]],
  [
    ["0.40", "1"],
    ["0.45", "1"]
  ],
  [
    ["0.45", "1"],
    ["0.40", "1"]
  ],
  {}
)

describe("the tape parser's fast path", () => {
  it("gives the schema's events on generated tapes", () => {
    for (const seed of [1, 2, 3]) {
      const g = generateTape({ seed, markets: 4, durationS: 30 })
      const text = formatTape(g.header, g.events)
      expect(parseTape(text)).toEqual(parseTapeStrict(text))
    }
  })

  it("accepts a corrupted line only when the schema does, and fails with the schema's message", () => {
    fc.assert(
      fc.property(
        fc.nat(lines.length - 2),
        fc.oneof(
          fc.constantFrom(
            "type",
            "ts",
            "market",
            "side",
            "price",
            "size",
            "amount",
            "taker_side",
            "bids",
            "asks",
            "extra"
          )
        ),
        badValue,
        fc.boolean(),
        (at, key, value, drop) => {
          const index = at + 1
          const json = JSON.parse(lines[index]!) as Record<string, unknown>
          if (drop) delete json[key]
          else json[key] = value
          const text = [...lines.slice(0, index), JSON.stringify(json), ...lines.slice(index + 1)].join("\n") + "\n"
          expect(outcome(parseTape, text)).toEqual(outcome(parseTapeStrict, text))
        }
      ),
      RUNS
    )
  })
})
