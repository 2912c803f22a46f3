/**
 * The matching protocol over any MatchingClient, for a host to mount: `GET /match/market?id=<venue>:<native>[&venue=]`
 * answers the Match result (404 `market_not_found` when the matcher does not hold the id), `GET /match/event?id=`
 * the event's matches. Every refusal is the contract's error body.
 */
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { MatchingClient, type MatchingError } from "../Services/MatchingClient.ts"
import * as Id from "../Domain/Ids.ts"
import { respond } from "./Errors.ts"

/** A matcher's failure as the error body: a refused query is the caller's (400), anything else the matcher's (502). */
const fromMatchingError = (error: MatchingError): ApiError =>
  error.invalid === true
    ? ApiError.field("id", error.reason)
    : new ApiError({
        status: 502,
        code: "venue_error",
        message: `the matcher failed: ${error.reason}`,
        details: { venue: null, retryable: error.retryable }
      })

const query = Effect.map(HttpServerRequest.ParsedSearchParams, (params) => {
  const one = (key: string) => {
    const value = params[key]
    return typeof value === "string" && value !== "" ? value : undefined
  }
  return { id: one("id"), venue: one("venue") }
})

const answer = <A>(
  run: (
    client: MatchingClient["Type"],
    id: string,
    venue: string | undefined
  ) => Effect.Effect<A | undefined, MatchingError>
) =>
  Effect.gen(function* () {
    const { id, venue } = yield* query
    if (id === undefined) return respond(ApiError.field("id", "required: a market id <venue>:<native_id>"))
    const client = yield* MatchingClient
    const result = yield* Effect.either(run(client, id, venue))
    if (result._tag === "Left") return respond(fromMatchingError(result.left))
    if (result.right === undefined) {
      return respond(ApiError.marketNotFound(Id.venuePrefix(id) ?? "", id))
    }
    return HttpServerResponse.unsafeJson(result.right)
  })

/** The two routes of the protocol; they read the MatchingClient from the context. */
export const matchingRouter = HttpRouter.empty.pipe(
  HttpRouter.get(
    "/match/market",
    answer((client, id, venue) => client.match(id, venue))
  ),
  HttpRouter.get(
    "/match/event",
    answer((client, id) => client.event(id))
  )
)
