/** The MatchingClient seam: given a market, the market on another venue asking the same question. */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { Clock, Context, Data, Duration, Effect, Layer, Option, Schedule, Schema } from "effect"
import { ErrorBody } from "../Domain/Errors.ts"
import { apiKey } from "./HostedConfig.ts"
import * as Id from "../Domain/Ids.ts"

export const SideMap = Schema.Struct({ yes: Schema.Literal("yes", "no"), no: Schema.Literal("yes", "no") })
export type SideMap = typeof SideMap.Type

/** One reason a match is `uncertain`: the dimension, whether it differs or could not be read, in words. */
export const MatchDoubt = Schema.Struct({
  dimension: Schema.String,
  status: Schema.Literal("differs", "unread", "close"),
  reason: Schema.String
}).annotations({ identifier: "MatchDoubt" })

export const MatchResult = Schema.Struct({
  anchor: Schema.String,
  event_id: Schema.String,
  /**
   * `matched` (the same question or its exact complement: `matched` holds it), `uncertain` (`candidate` and `reasons`
   * say what a person must judge), `none`. Absent from older matchers: then `matched` decides.
   */
  verdict: Schema.optional(Schema.Literal("matched", "uncertain", "none")),
  /** Set only when the verdict is `matched`: the one answer a bucket may be built on. */
  matched: Schema.NullOr(Schema.Struct({ id: Schema.String, venue: Schema.String, side_map: SideMap })),
  /** Set only when the verdict is `uncertain`: the market to judge, with the side_map it would take. */
  candidate: Schema.optional(
    Schema.NullOr(
      Schema.Struct({
        id: Schema.String,
        venue: Schema.String,
        side_map: SideMap,
        score: Schema.optional(Schema.Number)
      })
    )
  ),
  /** Why the verdict is `uncertain`: the dimensions that differ or could not be read. */
  reasons: Schema.optional(Schema.Array(MatchDoubt)),
  /** Beyond the interface: the two parsed propositions, the rules verdict, or why there is no match. */
  explain: Schema.optional(Schema.Unknown)
}).annotations({ identifier: "MatchResult" })
export type MatchResult = typeof MatchResult.Type

/** The verdict of an answer: its own, or from `matched` for a matcher that does not say one. */
export const verdictOf = (answer: MatchResult): "matched" | "uncertain" | "none" =>
  answer.verdict ?? (answer.matched === null ? "none" : "matched")

/** The market a bucket may be built on: an answer's match when, and only when, its verdict is `matched`. */
export const matchedOnly = (answer: MatchResult | undefined): MatchResult["matched"] =>
  answer === undefined || verdictOf(answer) !== "matched" ? null : answer.matched

/** The markets of other venues that match an event's markets, by venue (null: none on that venue). */
export const EventMatchResult = Schema.Struct({
  anchor: Schema.String,
  event_ids: Schema.Array(Schema.String),
  events: Schema.Record({ key: Schema.String, value: Schema.NullOr(Schema.Array(Schema.String)) })
}).annotations({ identifier: "EventMatchResult" })
export type EventMatchResult = typeof EventMatchResult.Type

export class MatchingError extends Data.TaggedError("MatchingError")<{
  readonly reason: string
  readonly retryable: boolean
  /** The query itself was refused (a malformed id or venue), before anything was asked. */
  readonly invalid?: boolean
}> {
  override get message(): string {
    return this.reason
  }
}

/** `<venue>:<native_id>`, both parts non-empty: the only id a matcher is asked about. */
export const parseMarketId = (id: string): { readonly venue: string; readonly nativeId: string } | undefined => {
  const parts = Id.parseMarketId(id)
  if (parts === undefined || /\s/.test(id)) return undefined
  return { venue: parts.venue, nativeId: parts.native }
}

const VENUE_ID = /^[a-z0-9][a-z0-9_-]*$/

/** Refuses a malformed id or target venue before anything is asked of a matcher. */
export const checkQuery = (id: string, targetVenue?: string): Effect.Effect<void, MatchingError> => {
  if (parseMarketId(id) === undefined)
    return Effect.fail(
      new MatchingError({ reason: `'${id}' is not a market id <venue>:<native_id>`, retryable: false, invalid: true })
    )
  if (targetVenue !== undefined && !VENUE_ID.test(targetVenue))
    return Effect.fail(
      new MatchingError({ reason: `'${targetVenue}' is not a venue id`, retryable: false, invalid: true })
    )
  return Effect.void
}

/** What the local matcher answers from (the index over every venue's catalog): a market's match, an event's matches. */
export interface MatchSource {
  readonly match: (id: string, targetVenue?: string) => MatchResult | undefined
  readonly matchEvent: (id: string) => EventMatchResult | undefined
}

export class MatchingClient extends Context.Tag("crossbook/MatchingClient")<
  MatchingClient,
  {
    /** The match of a market; undefined when the service does not hold that id (its 404). */
    readonly match: (id: string, targetVenue?: string) => Effect.Effect<MatchResult | undefined, MatchingError>
    /** The matches of the markets of a market's event (`id` a market, or `<venue>:<event_id>`); undefined: unknown. */
    readonly event: (id: string) => Effect.Effect<EventMatchResult | undefined, MatchingError>
  }
>() {
  /**
   * The hosted matcher at `url` (`SERVICE_MATCHING_URL`), with the API key as a bearer token: each request bounded
   * by `timeout` (default 10 s), started at most `perSecond` times a second (default 10), and retried up to
   * `retries` times (default 2) only when the failure is retryable (a timeout, no connection, 429, 5xx).
   */
  static layerHosted(options: HostedOptions) {
    return Layer.effect(
      MatchingClient,
      Effect.map(HttpClient.HttpClient, (client) => makeHosted(client, options))
    )
  }

  /**
   * The local matcher over an index of every venue's catalog. The index is read at each call, so a refresh of a
   * venue's catalog (`index.setCatalog(venue, listings)`) is seen by the next match.
   */
  static layerMatcher(index: MatchSource) {
    return Layer.succeed(MatchingClient, {
      match: (id, targetVenue) =>
        Effect.zipRight(
          checkQuery(id, targetVenue),
          Effect.sync(() => index.match(id, targetVenue))
        ),
      event: (id) =>
        Effect.zipRight(
          checkQuery(id),
          Effect.sync(() => index.matchEvent(id))
        )
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
    const venueOf = (id: string) => Id.venuePrefix(id) ?? ""
    const find = (id: string) => {
      for (const pair of pairs) {
        const other = pair.a === id ? pair.b : pair.b === id ? pair.a : undefined
        if (other !== undefined) return { pair, other }
      }
      return undefined
    }
    return Layer.succeed(MatchingClient, {
      match: (id, targetVenue) => {
        const found = find(id)
        if (found === undefined) return Effect.succeed(undefined)
        const { pair, other } = found
        const sideMap = pair.inverted ? ({ yes: "no", no: "yes" } as const) : ({ yes: "yes", no: "no" } as const)
        const matched =
          targetVenue === undefined || venueOf(other) === targetVenue
            ? { id: other, venue: venueOf(other), side_map: sideMap }
            : null
        return Effect.succeed({
          anchor: id,
          event_id: pair.eventId,
          verdict: matched === null ? ("none" as const) : ("matched" as const),
          matched
        })
      },
      event: (id) => {
        const found = find(id)
        if (found === undefined) return Effect.succeed(undefined)
        return Effect.succeed({
          anchor: id,
          event_ids: [found.pair.eventId],
          events: { [venueOf(id)]: [id], [venueOf(found.other)]: [found.other] }
        })
      }
    })
  }
}

export interface HostedOptions {
  readonly url: string
  readonly apiKey: string | undefined
  readonly timeout?: Duration.DurationInput
  readonly perSecond?: number
  readonly retries?: number
}

/** What a 401 tells the user to do. */
export const KEY_HINT = "run `crossbook login` then `crossbook keys create`, or set SERVICE_API_KEY"

/**
 * Starts at most `perSecond` requests a second: each takes the next free slot, `1/perSecond` s after the one before,
 * and waits for it on the Clock.
 */
export const makePacer = (perSecond: number): Effect.Effect<void> => {
  const gap = 1000 / Math.max(perSecond, 0.001)
  let next = Number.NEGATIVE_INFINITY
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    const slot = Math.max(now, next)
    next = slot + gap
    return slot > now ? Effect.sleep(Duration.millis(slot - now)) : Effect.void
  })
}

const makeHosted = (client: HttpClient.HttpClient, options: HostedOptions): MatchingClient["Type"] => {
  const base = options.url.replace(/\/+$/, "")
  const timeout = Duration.decode(options.timeout ?? "10 seconds")
  const pace = makePacer(options.perSecond ?? 10)
  const retries = options.retries ?? 2

  /** One GET of the protocol: the decoded answer, undefined for "no such market", or why not. */
  const get = <A>(
    path: string,
    params: Record<string, string>,
    schema: Schema.Schema<A, any>
  ): Effect.Effect<A | undefined, MatchingError> => {
    let request = HttpClientRequest.get(`${base}${path}`).pipe(
      HttpClientRequest.setUrlParams(params),
      HttpClientRequest.acceptJson
    )
    if (options.apiKey !== undefined) request = HttpClientRequest.bearerToken(request, options.apiKey)
    const where = `${base}${path}`
    const attempt = pace.pipe(
      Effect.zipRight(
        client.execute(request).pipe(
          Effect.flatMap((response) => Effect.map(response.text, (text) => ({ status: response.status, text }))),
          Effect.scoped,
          Effect.timeoutFail({
            duration: timeout,
            onTimeout: () =>
              new MatchingError({
                reason: `${where} did not answer within ${Duration.format(timeout)}`,
                retryable: true
              })
          })
        )
      ),
      Effect.mapError((e) =>
        e instanceof MatchingError
          ? e
          : new MatchingError({
              reason: `cannot reach the matching service at ${base} (${String(e)})`,
              retryable: true
            })
      ),
      Effect.flatMap(({ status, text }): Effect.Effect<A | undefined, MatchingError> => {
        const body = parseJson(text)
        const error = Option.getOrUndefined(Schema.decodeUnknownOption(ErrorBody)(body))
        if (status === 200) {
          return Schema.decodeUnknown(schema)(body).pipe(
            Effect.mapError(
              () =>
                new MatchingError({
                  reason: `${where} answered 200 with a body that is not the protocol's`,
                  retryable: false
                })
            )
          )
        }
        if (status === 404) {
          if (error !== undefined) return Effect.succeed(undefined)
          return Effect.fail(
            new MatchingError({
              reason: `no matching service at ${base}: ${path} answered 404 without the service's error body; check SERVICE_MATCHING_URL`,
              retryable: false
            })
          )
        }
        if (status === 401) {
          return Effect.fail(
            new MatchingError({
              reason: `the matching service at ${base} ${options.apiKey === undefined ? "needs an API key" : "refused the API key"} (401): ${KEY_HINT}`,
              retryable: false
            })
          )
        }
        const said = error === undefined ? "" : `: ${error.error.code}: ${error.error.message}`
        return Effect.fail(
          new MatchingError({
            reason: `the matching service at ${base} answered ${status}${said}`,
            retryable: status === 429 || status >= 500
          })
        )
      })
    )
    return attempt.pipe(
      Effect.retry({
        times: retries,
        while: (e) => e.retryable,
        schedule: Schedule.exponential("200 millis")
      })
    )
  }

  return {
    match: (id, targetVenue) =>
      Effect.zipRight(
        checkQuery(id, targetVenue),
        get("/match/market", targetVenue === undefined ? { id } : { id, venue: targetVenue }, MatchResult)
      ),
    event: (id) => Effect.zipRight(checkQuery(id), get("/match/event", { id }, EventMatchResult))
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The key the hosted clients send: `SERVICE_API_KEY`, else the one `crossbook keys create` saved in `<home>/api-key`. */
export const serviceApiKey = (env: Readonly<Record<string, string | undefined>>, home: string): string | undefined =>
  apiKey(home, env)
