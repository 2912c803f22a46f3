// POST /trading/buckets/from-match takes a `matched` verdict only: an uncertain candidate is refused with its reasons.
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { MatchingClient, type MatchResult } from "../../src/Services/MatchingClient.ts"
import { OwnerToken, request, testServer } from "../Http/TestServer.ts"

const SIDE = { yes: "no", no: "yes" } as const

/** A matcher that answers every market with the given verdict about the sim2 twin of `sim:<id>`. */
const matcherSaying = (verdict: "matched" | "uncertain" | "none", alsoMatched = false) =>
  Layer.succeed(MatchingClient, {
    match: (id) => {
      const twin = { id: `sim2:${id.slice(4).toLowerCase()}-no`, venue: "sim2", side_map: SIDE }
      const answer: MatchResult = {
        anchor: id,
        event_id: "e",
        verdict,
        matched: verdict === "matched" || alsoMatched ? twin : null,
        candidate: verdict === "uncertain" ? { ...twin, score: 0.9 } : null,
        reasons:
          verdict === "uncertain"
            ? [
                {
                  dimension: "time",
                  status: "differs",
                  reason: "time: the rules' deadlines are 2025-04-30 and 2026-01-01"
                }
              ]
            : []
      }
      return Effect.succeed(answer)
    },
    event: () => Effect.succeed(undefined)
  })

const anchorOf = Effect.gen(function* () {
  const sim = (yield* request("GET", "/venues/sim/markets?limit=1000")).body.data as Array<any>
  return sim[0].id as string
})

const fromMatch = (anchor: string) =>
  Effect.flatMap(OwnerToken, (token) =>
    request("POST", "/trading/buckets/from-match", { token, json: { market_id: anchor } })
  )

describe("a bucket from a match", () => {
  it.effect("an uncertain answer makes no bucket, and the refusal says why", () =>
    Effect.gen(function* () {
      const anchor = yield* anchorOf
      const res = yield* fromMatch(anchor)
      assert.strictEqual(res.status, 404, res.text)
      assert.strictEqual(res.body.error.code, "not_found")
      assert.include(res.body.error.message, "uncertain")
      assert.include(res.body.error.message, "deadlines")
      const buckets = yield* Effect.flatMap(OwnerToken, (token) => request("GET", "/trading/buckets", { token }))
      assert.deepStrictEqual(buckets.body.data, [])
    }).pipe(Effect.provide(testServer({ simVenues: 2, matching: matcherSaying("uncertain") })))
  )

  it.effect("a matcher that says uncertain but fills in matched is still refused", () =>
    Effect.gen(function* () {
      const res = yield* fromMatch(yield* anchorOf)
      assert.strictEqual(res.status, 404, res.text)
    }).pipe(Effect.provide(testServer({ simVenues: 2, matching: matcherSaying("uncertain", true) })))
  )

  it.effect("none is refused as no match", () =>
    Effect.gen(function* () {
      const res = yield* fromMatch(yield* anchorOf)
      assert.strictEqual(res.status, 404, res.text)
      assert.include(res.body.error.message, "no market on another venue")
    }).pipe(Effect.provide(testServer({ simVenues: 2, matching: matcherSaying("none") })))
  )
})
