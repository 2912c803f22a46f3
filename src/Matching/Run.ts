/** What `crossbook match` and `crossbook match eval` do, loaded when one of them runs (not with the command tree). */
import { FetchHttpClient, FileSystem } from "@effect/platform"
import { Console, Context, Effect, Layer } from "effect"
import { homeFolder } from "../Home.ts"
import {
  checkQuery,
  type EventMatchResult,
  MatchingClient,
  type MatchResult,
  serviceApiKey,
  type SideMap,
  verdictOf
} from "../Services/MatchingClient.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { parseVenueList, servedVenuesLayer, simVenueCountFrom } from "../Venues/Venues.ts"
import { makeLocalMatcher } from "./Local.ts"
import { evaluate, parseCatalog, parsePairs } from "./Eval.ts"
import { MatchIndex } from "./Matcher.ts"

/** An index over the catalog files. */
const loadIndex = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const index = new MatchIndex()
    for (const file of files) {
      const text = yield* fs.readFileString(file)
      const listings = yield* Effect.try({
        try: () => parseCatalog(text),
        catch: (e) => new Error(`${file}: ${e instanceof Error ? e.message : String(e)}`)
      })
      index.addAll(listings)
    }
    return index
  })

/** `crossbook match eval`: each labelled case through the local matcher, then the summary. */
export const runEval = ({ catalogs, pairs }: { readonly catalogs: ReadonlyArray<string>; readonly pairs: string }) =>
  Effect.gen(function* () {
    if (catalogs.length === 0) return yield* Effect.fail(new Error("match eval needs at least one --catalog FILE"))
    const index = yield* loadIndex(catalogs)
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(pairs)
    const cases = yield* Effect.try({
      try: () => parsePairs(text),
      catch: (e) => new Error(`${pairs}: ${e instanceof Error ? e.message : String(e)}`)
    })
    const { lines, summary } = evaluate(index, cases)
    for (const l of lines) yield* Console.log(JSON.stringify(l))
    yield* Console.log(JSON.stringify(summary))
  })

/** An answer in words: the match and its side_map, or why there is none. */
export const describeMatch = (answer: MatchResult): string => {
  const explain = (answer.explain ?? {}) as {
    score?: number | null
    rules?: { verdict: string; differs: ReadonlyArray<string> } | null
    reason?: string | null
  }
  const sidesOf = (m: SideMap) => (m.yes === "yes" ? "same sides (yes→yes, no→no)" : "flipped (yes→no, no→yes)")
  const verdict = verdictOf(answer)
  if (verdict === "uncertain" && answer.candidate !== undefined && answer.candidate !== null) {
    const reasons = (answer.reasons ?? []).map((r) => `  - ${r.dimension} ${r.status}: ${r.reason}`)
    return [
      `${answer.anchor}: uncertain → ${answer.candidate.id} would be ${sidesOf(answer.candidate.side_map)}; judge before trading:`,
      ...reasons
    ].join("\n")
  }
  if (answer.matched === null || verdict !== "matched")
    return `${answer.anchor}: no match${explain.reason ? ` (${explain.reason})` : ""}`
  const { id, side_map } = answer.matched
  const sides = sidesOf(side_map)
  const rules =
    explain.rules === undefined || explain.rules === null
      ? ""
      : `; rules ${explain.rules.verdict}${explain.rules.differs.length > 0 ? ` on ${explain.rules.differs.join(", ")}` : ""}`
  const score = typeof explain.score === "number" ? `; score ${explain.score}` : ""
  return `${answer.anchor} → ${id}: ${sides}${score}${rules}`
}

/** An event's matches in words, one venue a line. */
export const describeEvent = (answer: EventMatchResult): string =>
  [
    `${answer.anchor} (events ${answer.event_ids.join(", ")})`,
    ...Object.entries(answer.events).map(([venue, ids]) => `  ${venue}: ${ids === null ? "none" : ids.join(", ")}`)
  ].join("\n")

/**
 * The matcher `crossbook match` asks: the hosted one at SERVICE_MATCHING_URL (key from SERVICE_API_KEY, else the
 * saved one), else the local matcher over the catalog files given, else over the configured venues' catalogs.
 */
const matcherFor = (options: {
  readonly catalogs: ReadonlyArray<string>
  readonly venues: string | undefined
  readonly seed: number
  readonly simVenues: number | undefined
}) =>
  Effect.gen(function* () {
    const hosted = process.env["SERVICE_MATCHING_URL"]
    if (hosted !== undefined && hosted !== "") {
      return yield* Effect.provide(
        MatchingClient,
        MatchingClient.layerHosted({ url: hosted, apiKey: serviceApiKey(process.env, homeFolder()) }).pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      )
    }
    if (options.catalogs.length > 0) {
      const index = yield* loadIndex(options.catalogs)
      return yield* Effect.provide(MatchingClient, MatchingClient.layerMatcher(index))
    }
    const simVenues = yield* Effect.mapError(
      simVenueCountFrom(options.simVenues, process.env["CROSSBOOK_SIM_VENUES"]),
      (message) => new Error(message)
    )
    const gateway = yield* Layer.build(
      servedVenuesLayer({
        list: parseVenueList(options.venues ?? process.env["CROSSBOOK_VENUES"]),
        env: process.env,
        seed: options.seed,
        simVenues
      })
    ).pipe(
      Effect.map((context) => Context.get(context, VenueGateway)),
      Effect.mapError((message) => new Error(message))
    )
    return makeLocalMatcher(gateway).client
  })

/** `crossbook match ID`: the answer of the hosted matcher, or of the local one, in words or as JSON. */
export const runMatch = (o: {
  readonly id: string
  readonly venue: string | undefined
  readonly event: boolean
  readonly json: boolean
  readonly catalogs: ReadonlyArray<string>
  readonly venues: string | undefined
  readonly simSeed: number | undefined
  readonly simVenues: number | undefined
}) =>
  Effect.gen(function* () {
    const id = o.id
    const target = o.venue
    // a malformed id or venue is refused before any catalog is loaded or any service asked
    yield* checkQuery(id, target)
    const client = yield* matcherFor({
      catalogs: o.catalogs,
      venues: o.venues,
      seed: o.simSeed ?? Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1),
      simVenues: o.simVenues
    })
    if (o.event) {
      const answer = yield* client.event(id)
      if (answer === undefined) return yield* Effect.fail(new Error(`the matcher holds no market or event ${id}`))
      return yield* Console.log(o.json ? JSON.stringify(answer) : describeEvent(answer))
    }
    const answer = yield* client.match(id, target)
    if (answer === undefined) return yield* Effect.fail(new Error(`the matcher holds no market ${id}`))
    yield* Console.log(o.json ? JSON.stringify(answer) : describeMatch(answer))
  }).pipe(Effect.scoped)
