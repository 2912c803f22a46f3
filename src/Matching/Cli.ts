/** `crossbook match ID` and `crossbook match eval`: the local matcher over catalog files, or the configured matcher. */
import { Args, Command, Options } from "@effect/cli"
import { FetchHttpClient, FileSystem } from "@effect/platform"
import { Console, Context, Effect, Layer, Option } from "effect"
import { homeFolder } from "../Home.ts"
import {
  checkQuery,
  type EventMatchResult,
  MatchingClient,
  type MatchResult,
  serviceApiKey
} from "../Services/MatchingClient.ts"
import { VenueGateway } from "../Services/VenueGateway.ts"
import { parseVenueList, servedVenuesLayer, simVenueCountFrom } from "../Venues/Venues.ts"
import { makeLocalMatcher } from "./Local.ts"
import { evaluate, parseCatalog, parsePairs } from "./Eval.ts"
import { MatchIndex } from "./Matcher.ts"

const catalogs = Options.file("catalog").pipe(
  Options.withDescription("A catalog of markets, one JSON record a line (venue, native_id, title, rules?, yes_label?)"),
  Options.repeated
)

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

const evalCommand = Command.make(
  "eval",
  {
    catalogs,
    pairs: Options.file("pairs").pipe(Options.withDescription("Labelled pairs, one JSON case a line"))
  },
  ({ catalogs, pairs }) =>
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
).pipe(
  Command.withDescription(
    "Run the local matcher on each labelled case's `a`: one JSON line per case, then precision, recall, side_map accuracy and refusals"
  )
)

/** An answer in words: the match and its side_map, or why there is none. */
export const describeMatch = (answer: MatchResult): string => {
  const explain = (answer.explain ?? {}) as {
    score?: number | null
    rules?: { verdict: string; differs: ReadonlyArray<string> } | null
    reason?: string | null
  }
  if (answer.matched === null) return `${answer.anchor}: no match${explain.reason ? ` (${explain.reason})` : ""}`
  const { id, side_map } = answer.matched
  const sides = side_map.yes === "yes" ? "same sides (yes→yes, no→no)" : "flipped (yes→no, no→yes)"
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

/** `crossbook match ID [--event] [--venue v] [--json]`: the market on another venue asking the same question. */
export const matchCommand = Command.make(
  "match",
  {
    catalogs,
    venue: Options.text("venue").pipe(Options.withDescription("Only a market on this venue"), Options.optional),
    event: Options.boolean("event").pipe(
      Options.withDescription("Match every market of the ID's event (ID a market, or <venue>:<event_id>)")
    ),
    json: Options.boolean("json").pipe(Options.withDescription("Print the answer as one JSON document")),
    venues: Options.text("venues").pipe(
      Options.withDescription(
        "Venues whose catalogs the local matcher reads (default $CROSSBOOK_VENUES or sim,kalshi,polymarket)"
      ),
      Options.optional
    ),
    simSeed: Options.integer("sim-seed").pipe(
      Options.withDescription("Seed of the sim venues (default $CROSSBOOK_SIM_SEED or 1), as serve uses"),
      Options.optional
    ),
    simVenues: Options.integer("sim-venues").pipe(
      Options.withDescription("How many sim venues (default $CROSSBOOK_SIM_VENUES or 1), as serve uses"),
      Options.optional
    ),
    id: Args.text({ name: "ID" }).pipe(
      Args.withDescription("<venue>:<native_id> of the market to match"),
      Args.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      if (Option.isNone(o.id)) return yield* Effect.fail(new Error("match needs an ID (<venue>:<native_id>), or eval"))
      const id = o.id.value
      const target = Option.getOrUndefined(o.venue)
      // a malformed id or venue is refused before any catalog is loaded or any service asked
      yield* checkQuery(id, target)
      const client = yield* matcherFor({
        catalogs: o.catalogs,
        venues: Option.getOrUndefined(o.venues),
        seed: Option.getOrElse(o.simSeed, () => Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1)),
        simVenues: Option.getOrUndefined(o.simVenues)
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
).pipe(
  Command.withDescription(
    "The market on another venue asking the same question, with its side_map: from SERVICE_MATCHING_URL when set, else the local matcher (over --catalog files, else the configured venues)"
  ),
  Command.withSubcommands([evalCommand])
)
