/** The MatchingClient seam: given a market, the market on another venue asking the same question. */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Data, Effect, Layer, Schema } from "effect"
import type { MatchIndex } from "../Matching/Matcher.ts"

export const SideMap = Schema.Struct({ yes: Schema.Literal("yes", "no"), no: Schema.Literal("yes", "no") })

export const MatchResult = Schema.Struct({
  anchor: Schema.String,
  event_id: Schema.String,
  matched: Schema.NullOr(Schema.Struct({ id: Schema.String, venue: Schema.String, side_map: SideMap })),
  /** Beyond the interface: the two parsed propositions, the rules verdict, or why there is no match. */
  explain: Schema.optional(Schema.Unknown)
})
export type MatchResult = typeof MatchResult.Type

export class MatchingError extends Data.TaggedError("MatchingError")<{
  readonly reason: string
  readonly retryable: boolean
}> {}

export class MatchingClient extends Context.Tag("crossbook/MatchingClient")<
  MatchingClient,
  {
    /** The match of a market; undefined when the service does not hold that id (its 404). */
    readonly match: (id: string, targetVenue?: string) => Effect.Effect<MatchResult | undefined, MatchingError>
  }
>() {
  /** The hosted matcher at `SERVICE_MATCHING_URL`, with the API key as a bearer token. */
  static layerHosted(options: { readonly url: string; readonly apiKey: string | undefined }) {
    return Layer.effect(
      MatchingClient,
      Effect.gen(function* () {
        const client = yield* HttpClient.HttpClient
        const decode = Schema.decodeUnknown(MatchResult)
        return {
          match: (id: string, targetVenue?: string): Effect.Effect<MatchResult | undefined, MatchingError> => {
            let request = HttpClientRequest.get(`${options.url.replace(/\/$/, "")}/match/market`).pipe(
              HttpClientRequest.setUrlParam("id", id)
            )
            if (targetVenue !== undefined) request = HttpClientRequest.setUrlParam(request, "venue", targetVenue)
            if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
            return client.execute(request).pipe(
              Effect.flatMap((response): Effect.Effect<MatchResult | undefined, unknown> => {
                if (response.status === 404) return Effect.succeed(undefined)
                if (response.status !== 200) {
                  return Effect.fail(
                    new MatchingError({
                      reason: `matching service answered ${response.status}`,
                      retryable: response.status === 429 || response.status >= 500
                    })
                  )
                }
                return Effect.flatMap(response.json, decode)
              }),
              Effect.mapError((e: unknown) =>
                e instanceof MatchingError ? e : new MatchingError({ reason: String(e), retryable: true })
              ),
              Effect.scoped
            )
          }
        }
      })
    )
  }

  /**
   * The local matcher over an index of every venue's catalog. The index is read at each call, so a refresh of a
   * venue's catalog (`index.setCatalog(venue, listings)`) is seen by the next match.
   */
  static layerMatcher(index: MatchIndex) {
    return Layer.succeed(MatchingClient, {
      match: (id, targetVenue) => Effect.sync(() => index.match(id, targetVenue))
    })
  }

  /** A fixed table of pairs: for the simulator and tests. Each pair is listed once and matched both ways. */
  static layerLocal(
    pairs: ReadonlyArray<{
      readonly a: string
      readonly b: string
      readonly eventId: string
      readonly inverted: boolean
    }>
  ) {
    const venueOf = (id: string) => id.slice(0, id.indexOf(":"))
    return Layer.succeed(MatchingClient, {
      match: (id, targetVenue) => {
        for (const pair of pairs) {
          const other = pair.a === id ? pair.b : pair.b === id ? pair.a : undefined
          if (other === undefined) continue
          const sideMap = pair.inverted ? ({ yes: "no", no: "yes" } as const) : ({ yes: "yes", no: "no" } as const)
          const matched =
            targetVenue === undefined || venueOf(other) === targetVenue
              ? { id: other, venue: venueOf(other), side_map: sideMap }
              : null
          return Effect.succeed({ anchor: id, event_id: pair.eventId, matched })
        }
        return Effect.succeed(undefined)
      }
    })
  }
}
