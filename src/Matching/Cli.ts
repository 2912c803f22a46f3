/** `crossbook match ID` and `crossbook match eval`: the local matcher over catalog files, or the configured matcher. */
import { Args, Command, Options } from "@effect/cli"
import * as FileSystem from "@effect/platform/FileSystem"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { serviceUrl } from "../Client.ts"

// The matcher, the evaluation and the hosted client load when a match command runs, not with the command tree.
const matcher = Effect.promise(() => import("./Matcher.ts"))
const evaluation = Effect.promise(() => import("./Eval.ts"))

const catalogs = Options.file("catalog").pipe(
  Options.withDescription("A catalog of markets, one JSON record a line (venue, native_id, title, rules?, yes_label?)"),
  Options.repeated
)

/** An index over the catalog files. */
const loadIndex = (files: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const { MatchIndex } = yield* matcher
    const { parseCatalog } = yield* evaluation
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
      const { evaluate, parsePairs } = yield* evaluation
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

/** `crossbook match ID`: from the catalogs given, else the hosted matcher, else the trading server's match route. */
export const matchCommand = Command.make(
  "match",
  {
    catalogs,
    venue: Options.text("venue").pipe(Options.withDescription("Only a market on this venue"), Options.optional),
    id: Args.text({ name: "ID" }).pipe(
      Args.withDescription("<venue>:<native_id> of the market to match"),
      Args.optional
    )
  },
  ({ catalogs, venue, id: given }) =>
    Effect.gen(function* () {
      if (Option.isNone(given)) return yield* Effect.fail(new Error("match needs an ID (<venue>:<native_id>), or eval"))
      const id = given.value
      const target = Option.getOrUndefined(venue)
      if (catalogs.length > 0) {
        const index = yield* loadIndex(catalogs)
        const answer = index.match(id, target)
        if (answer === undefined) return yield* Effect.fail(new Error(`${id} is not in the catalogs given`))
        return yield* Console.log(JSON.stringify(answer))
      }
      const hosted = process.env["SERVICE_MATCHING_URL"]
      if (hosted !== undefined && hosted !== "") {
        const { MatchingClient } = yield* Effect.promise(() => import("../Services/MatchingClient.ts"))
        // By module, not from the packages' indexes: importing an index whole would keep every module of it.
        const FetchHttpClient = yield* Effect.promise(() => import("@effect/platform/FetchHttpClient"))
        const Layer = yield* Effect.promise(() => import("effect/Layer"))
        const client = yield* Effect.provide(
          MatchingClient,
          MatchingClient.layerHosted({ url: hosted, apiKey: process.env["SERVICE_API_KEY"] }).pipe(
            Layer.provide(FetchHttpClient.layer)
          )
        )
        const answer = yield* client.match(id, target)
        if (answer === undefined) return yield* Effect.fail(new Error(`the matching service does not hold ${id}`))
        return yield* Console.log(JSON.stringify(answer))
      }
      const colon = id.indexOf(":")
      if (colon < 1) return yield* Effect.fail(new Error(`${id}: expected <venue>:<native_id>`))
      const path = `/venues/${encodeURIComponent(id.slice(0, colon))}/markets/${encodeURIComponent(id)}/match`
      const query = target === undefined ? "" : `?venue=${encodeURIComponent(target)}`
      const response = yield* Effect.tryPromise(() => fetch(`${serviceUrl()}${path}${query}`))
      const text = yield* Effect.tryPromise(() => response.text())
      if (!response.ok) return yield* Effect.fail(new Error(`GET ${path} answered ${response.status}: ${text}`))
      yield* Console.log(text)
    })
).pipe(
  Command.withDescription(
    "The market on another venue asking the same question, with its side_map and the reasons (--catalog: the local matcher over those files)"
  ),
  Command.withSubcommands([evalCommand])
)
