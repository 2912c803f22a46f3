/** The tape parser's fast paths accept exactly what the schema accepts, and give the same events and errors. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { generateTape } from "../../sim/Generator.ts"
import { formatTape, formatTapeLine, parseTape, parseTapeStrict, type TapeEvent } from "../../sim/Tape.ts"

const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 3000 } : { seed: 11, numRuns: 300 }

/** The parse's events, or its error; `json` makes the comparison see key order too. */
const outcome = (parse: (text: string) => unknown, text: string) => {
  try {
    const ok = parse(text)
    return { ok, json: JSON.stringify(ok) }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}
const agree = (text: string) => expect(outcome(parseTape, text)).toEqual(outcome(parseTapeStrict, text))

/** A generated tape with a quote after every 7th event, a gap after every 41st and a status after every 97th. */
const generated = generateTape({ seed: 5, markets: 3, durationS: 20 })
const mixed: Array<TapeEvent> = []
generated.events.forEach((e, i) => {
  mixed.push(e)
  const at = { ts: e.ts, market: e.market }
  if (i % 7 === 3) mixed.push({ type: "quote", ...at, best_bid: i % 3 === 0 ? null : "0.41", best_ask: "0.6" })
  if (i % 41 === 5) mixed.push({ type: "gap", ...at, expected: i, got: i + 2 })
  if (i % 97 === 9) mixed.push({ type: "status", ...at, status: "open" })
})
const lines = formatTape(generated.header, mixed).split("\n").slice(0, -1)
const header = lines[0]!
/** A line index, every event type equally likely (snapshots are rare in a generated tape). */
const byType = new Map<string, Array<number>>()
lines.forEach((l, i) => {
  const type = i === 0 ? "header" : (JSON.parse(l) as TapeEvent).type
  if (i > 0) byType.set(type, [...(byType.get(type) ?? []), i])
})
const lineIndex = fc.constantFrom(...byType.values()).chain((indexes) => fc.constantFrom(...indexes))

/** The header and the lines around line `index` (0-based), that one replaced by `line`. */
const around = (index: number, line: string): string =>
  [header, ...lines.slice(Math.max(1, index - 3), index), line, ...lines.slice(index + 1, index + 4)].join("\n") + "\n"

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
  "settled",
  "sim:NOPE",
  "sim:GEN-002",
  [],
  [["0.45"]],
  [["0.45", "1", "2"]],
  [["0.45", 1]],
  [
    ["0.40", "1"],
    ["0.45", "1"]
  ],
  [
    ["0.45", "1"],
    ["0.40", "1"]
  ],
  [
    ["0.45", "1"],
    ["0.45", "2"]
  ],
  {}
)
/** Decimal-looking strings, canonical or not, up to and past the safe-integer range of millionths. */
const decimal = fc.oneof(
  fc.stringMatching(/^-?[0-9]{0,3}(\.[0-9]{0,8})?$/),
  fc.stringMatching(/^[1-9][0-9]{8,16}(\.[0-9]{1,7})?$/),
  fc.constantFrom("9007199254.740991", "9007199254.740992", "9000000000.999999", "0.000001", "0.999999", "1", "0")
)
const keys = [
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
  "best_bid",
  "best_ask",
  "expected",
  "got",
  "status",
  "result",
  "extra"
]
/** Characters that break or bend JSON: whitespace, quotes, escapes, structure, digits, control characters. */
const char = fc.constantFrom(
  " ",
  "\t",
  '"',
  "\\",
  ",",
  ":",
  "{",
  "}",
  "[",
  "]",
  ".",
  "-",
  "0",
  "1",
  "9",
  "e",
  "a",
  "\u0000"
)

describe("the tape parser's fast paths", () => {
  it("give the schema's events on generated tapes", () => {
    for (const seed of [1, 2, 3]) {
      const g = generateTape({ seed, markets: 4, durationS: 30 })
      agree(formatTape(g.header, g.events))
    }
    agree(lines.join("\n") + "\n")
  })

  it("accept a line with a corrupted value only when the schema does, and fail with the schema's message", () => {
    fc.assert(
      fc.property(
        lineIndex,
        fc.constantFrom(...keys),
        fc.oneof(badValue, decimal),
        fc.boolean(),
        (index, key, value, drop) => {
          const json = JSON.parse(lines[index]!) as Record<string, unknown>
          if (drop) delete json[key]
          else json[key] = value
          agree(around(index, JSON.stringify(json)))
        }
      ),
      RUNS
    )
  })

  it("accept random decimals in every price and size slot exactly when the schema does", () => {
    fc.assert(
      fc.property(lineIndex, decimal, fc.nat(), (index, value, pick) => {
        const e = JSON.parse(lines[index]!) as Record<string, unknown>
        const slots = ["price", "size", "amount", "best_bid", "best_ask"].filter((k) => typeof e[k] === "string")
        const levels = [e["bids"], e["asks"]].filter(
          (l): l is Array<[string, string]> => Array.isArray(l) && l.length > 0
        )
        if (slots.length > 0) e[slots[pick % slots.length]!] = value
        else if (levels.length > 0) {
          const side = levels[pick % levels.length]!
          side[pick % side.length]![pick % 2] = value
        }
        agree(around(index, JSON.stringify(e)))
        agree(around(index, formatTapeLine(e as TapeEvent)))
      }),
      RUNS
    )
  })

  it("read text-level damage (inserted, dropped or changed characters, escapes, odd numbers) as the schema does", () => {
    fc.assert(
      fc.property(
        lineIndex,
        fc.nat(),
        char,
        fc.constantFrom("insert", "append", "delete", "replace", "escape", "ts"),
        fc.constantFrom(
          "0",
          "01",
          "1e3",
          "1.0",
          "-0",
          "1234567890123456",
          "123456789012345",
          "12345678901234567",
          "9007199254740993",
          " 1",
          "1 "
        ),
        (index, at, c, how, ts) => {
          const line = lines[index]!
          const i = at % line.length
          const damaged =
            how === "insert"
              ? line.slice(0, i) + c + line.slice(i)
              : how === "append"
                ? line + c
                : how === "delete"
                  ? line.slice(0, i) + line.slice(i + 1)
                  : how === "replace"
                    ? line.slice(0, i) + c + line.slice(i + 1)
                    : how === "escape"
                      ? line.slice(0, i) + "\\u" + line.charCodeAt(i).toString(16).padStart(4, "0") + line.slice(i + 1)
                      : line.replace(/"ts":\d+/, `"ts":${ts}`)
          agree(around(index, damaged))
        }
      ),
      RUNS
    )
  })

  it("take market ids with quotes, backslashes or control characters through the schema", () => {
    const ids = ["sim:a\\", 'sim:"q"', "sim:t\u0001", "kalshi:X\u00e9\ud800", "sim:plain"]
    const h = { type: "header" as const, version: 1 as const, source: "kalshi" as const, markets: [] as Array<never> }
    const head = JSON.stringify({ ...h, markets: ids.map((id) => ({ id, title: id, tick: "0.01", lot: "1" })) })
    expect(parseTapeStrict(head + "\n").header.markets).toHaveLength(ids.length)
    for (const id of ids) {
      const event: TapeEvent = { type: "change", ts: 1, market: id, side: "bid", price: "0.5", size: "1" }
      agree(`${head}\n${formatTapeLine(event)}\n`)
      agree(`${head}\n${JSON.stringify(event)}\n`)
    }
    // A raw backslash before the closing quote: `sim:a\` is a header id, but here it escapes the quote.
    agree(`${head}\n{"type":"change","ts":1,"market":"sim:a\\","side":"bid","price":"0.5","size":"1"}\n`)
    agree(`${head}\n{"type":"quote","ts":1,"market":"sim:a\\","best_bid":null,"best_ask":null}\n`)
  })
})
