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

const OWN = new URL("../../fixtures/matching/", import.meta.url)
const readOwn = (name: string) => readFileSync(fileURLToPath(new URL(name, OWN)), "utf8")

describe.skipIf(!have)(
  have
    ? "our own development set and its held-apart part"
    : "our own development set — SKIPPED: the catalogs in ../shared/fixtures/matching/ are absent",
  () => {
    const index = new MatchIndex()
    if (have) {
      index.addAll(parseCatalog(read("kalshi.jsonl")))
      index.addAll(parseCatalog(read("polymarket.jsonl")))
    }
    for (const part of ["pairs.tune.jsonl", "pairs.held.jsonl"]) {
      it(`${part}: precision ≥ 0.99 on matched, recall ≥ 0.9, every side_map right, every up-or-down refused`, () => {
        const cases = parsePairs(readOwn(part))
        expect(cases.length).toBeGreaterThan(50)
        expect(cases.every((c) => c.kind !== undefined)).toBe(true)
        const { lines, summary } = evaluate(index, cases)
        expect(lines.filter((l) => l.outcome === "fp" || l.side_map_ok === false)).toEqual([])
        expect(summary.precision).toBeGreaterThanOrEqual(0.99)
        expect(summary.recall).toBeGreaterThanOrEqual(0.9)
        expect(summary.side_map_accuracy).toBe(1)
        expect(summary.crypto_refused).toBe(summary.crypto_cases)
        // matched and side_map only on a matched verdict; an uncertain line carries its candidate and reasons
        for (const l of lines) {
          expect(l.matched !== null).toBe(l.verdict === "matched")
          expect(l.side_map !== null).toBe(l.verdict === "matched")
          if (l.verdict === "uncertain") {
            expect(l.candidate).not.toBeNull()
            expect(l.reasons.length).toBeGreaterThan(0)
            expect(l.outcome).toBe("uncertain")
          }
        }
      })
    }

    it("no hard negative of the scope, deadline or near-complement kinds is ever matched", () => {
      const cases = [...parsePairs(readOwn("pairs.tune.jsonl")), ...parsePairs(readOwn("pairs.held.jsonl"))]
      const hard = cases.filter((c) => ["scope", "deadline", "near_complement", "boundary"].includes(c.kind ?? ""))
      expect(hard.length).toBeGreaterThan(10)
      for (const c of hard) {
        const answer = index.match(`${c.a.venue}:${c.a.nativeId}`)!
        expect(answer.matched?.id ?? null, c.id).not.toBe(`${c.b!.venue}:${c.b!.nativeId}`)
      }
    })
  }
)
