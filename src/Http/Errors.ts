/** Every failure leaves the server as the contract's error body: one global middleware does the mapping. */
import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { redact } from "./Redact.ts"

export { fromVenueError } from "../Domain/VenueErrors.ts"

export const respond = (error: ApiError): HttpServerResponse.HttpServerResponse => {
  const body = error.body
  const retryAfter = body.error.details["retry_after"]
  return HttpServerResponse.unsafeJson(body, {
    status: error.status,
    ...(typeof retryAfter === "number" ? { headers: { "retry-after": String(Math.ceil(retryAfter)) } } : {})
  })
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"])

/** A decode message quotes the value it refused: a long one is cut, so an answer never echoes a whole body back. */
const shortened = (message: string): string =>
  message.replace(
    /actual "((?:[^"\\]|\\.){80,})"/g,
    (_, text: string) => `actual "${text.slice(0, 40)}…" (${text.length} characters)`
  )

const fromDecodeError = (method: string, error: HttpApiError.HttpApiDecodeError): ApiError => {
  const errors = error.issues.map((issue) => {
    const field = issue.path.map(String).join(".") || "body"
    // An unknown key: say so plainly, with the keys the body does take.
    const expected = issue._tag === "Unexpected" ? /expected: (.*)$/.exec(issue.message)?.[1] : undefined
    return {
      field,
      message:
        issue._tag === "Unexpected"
          ? `unknown field '${field}'${expected === undefined ? "" : `; known fields: ${expected.replace(/"/g, "").split(" | ").join(", ")}`}`
          : shortened(issue.message)
    }
  })
  return BODY_METHODS.has(method) ? ApiError.validation(errors, undefined, 422) : ApiError.validation(errors)
}

/** Maps one failure to the error the client sees; undefined for an interruption, which is left alone. */
export const toApiError = (cause: Cause.Cause<unknown>, method: string): Effect.Effect<ApiError | undefined> => {
  if (Cause.isInterruptedOnly(cause)) return Effect.succeed(undefined)
  // A body that is not JSON reaches here as a defect of the request reader, so defects are looked at too.
  const failure = Option.orElse(Cause.failureOption(cause), () => Cause.dieOption(cause))
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof ApiError) return Effect.succeed(error)
    if (error instanceof HttpApiError.HttpApiDecodeError) return Effect.succeed(fromDecodeError(method, error))
    if (HttpServerError.isServerError(error)) {
      if (error._tag === "RouteNotFound") {
        return Effect.succeed(ApiError.notFound(`no route ${method} ${redact(error.request.url)}`))
      }
      if (error._tag === "RequestError" && error.reason === "Decode") {
        return Effect.succeed(ApiError.validation([{ field: "body", message: "the body is not valid JSON" }]))
      }
    }
  }
  // The cause may quote the request (its URL, its headers): it is logged as text with every secret masked.
  return Effect.logError("request failed", redact(Cause.pretty(cause, { renderErrorCause: true }))).pipe(
    Effect.as(ApiError.internal())
  )
}

/** The global middleware: any failure of any route becomes the contract's error body. */
export const ErrorMiddleware = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      Effect.flatMap(toApiError(cause, request.method), (error) =>
        error === undefined ? Effect.failCause(cause) : Effect.succeed(respond(error))
      )
    )
  )
)
