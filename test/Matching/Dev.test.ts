import { describe, expect, it } from "vitest"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { evaluate, parseCatalog, parsePairs } from "../../src/Matching/Eval.ts"
import { MatchIndex } from "../../src/Matching/Matcher.ts"

const SHARED = new URL("../../../shared/fixtures/matching/", import.meta.url)
const have = existsSync(fileURLToPath(new URL("pairs.dev.jsonl", SHARED)))
const read = (name: string) => readFileSync(fileURLToPath(new URL(name, SHARED)), "utf8")

describe.skipIf(!have)(
  have
    ? "the labelled development set"
    : "the labelled development set — SKIPPED: ../shared/fixtures/matching/ is absent",
  () => {
    it("holds the floors: precision ≥ 0.99, recall ≥ 0.9, every side_map right, every up-or-down refused", () => {
      const index = new MatchIndex()
      index.addAll(parseCatalog(read("kalshi.jsonl")))
      index.addAll(parseCatalog(read("polymarket.jsonl")))
      const { lines, summary } = evaluate(index, parsePairs(read("pairs.dev.jsonl")))
      const wrong = lines.filter((l) => l.outcome === "fp" || l.side_map_ok === false)
      expect(wrong).toEqual([])
      expect(summary.precision).toBeGreaterThanOrEqual(0.99)
      expect(summary.recall).toBeGreaterThanOrEqual(0.9)
      expect(summary.side_map_accuracy).toBe(1)
      expect(summary.crypto_cases).toBeGreaterThan(0)
      expect(summary.crypto_refused).toBe(summary.crypto_cases)
    })

    it("finds the published inverted pair inverted: above 3.9% against 3.9% or less", () => {
      const index = new MatchIndex()
      index.addAll(parseCatalog(read("kalshi.jsonl")))
      index.addAll(parseCatalog(read("polymarket.jsonl")))
      const inverse = parsePairs(read("pairs.dev.jsonl")).filter(
        (c) => c.relation === "inverse" && c.a.nativeId === "KXU3-25FEB-T3.9"
      )
      expect(inverse.length).toBe(1)
      for (const c of inverse) {
        const answer = index.match(`${c.a.venue}:${c.a.nativeId}`)
        expect(answer?.verdict).toBe("matched")
        expect(answer?.matched).toEqual({
          id: `${c.b!.venue}:${c.b!.nativeId}`,
          venue: c.b!.venue,
          side_map: { yes: "no", no: "yes" }
        })
      }
    })

    it("never matches a pair the set calls inverse that both say NO at the threshold (above 50 and less than 50)", () => {
      const index = new MatchIndex()
      index.addAll(parseCatalog(read("kalshi.jsonl")))
      index.addAll(parseCatalog(read("polymarket.jsonl")))
      const answer = index.match("kalshi:KXRTCAPTAINAMERICA-50")
      expect(answer?.verdict).toBe("uncertain")
      expect(answer?.matched).toBeNull()
      expect(answer?.reasons.map((r) => r.dimension)).toEqual(["boundary"])
    })
  }
)
