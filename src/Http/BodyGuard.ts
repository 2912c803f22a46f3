/** What a request may carry: its body is JSON, at most `MAX_BODY_BYTES`, read with the limit while it streams, and nested at most `MAX_DEPTH` deep. */
import { type HttpApp, HttpMethod, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect } from "effect"
import type { IncomingMessage } from "node:http"
import { ApiError } from "../Domain/Errors.ts"
import { respond } from "./Errors.ts"

/** The largest body any route takes. An order is well under 4 KB; a fair-values update of a thousand markets under 100 KB. */
export const MAX_BODY_BYTES = 256 * 1024
/** The deepest nesting of arrays and objects a body may have (an order with oco legs and tags needs five). */
export const MAX_DEPTH = 32
/** The most bytes of request line and headers Node's parser accepts; past it the answer is 431. */
export const MAX_HEADER_BYTES = 16 * 1024

const refusal = (status: number, message: string, extra: Record<string, unknown> = {}) =>
  new ApiError({
    status,
    code: "validation_error",
    message,
    details: { venue: null, retryable: false, errors: [{ field: "body", message }], ...extra }
  })

/** 413: the body passed `MAX_BODY_BYTES`; the connection is closed so the rest of it is never read. */
export const tooLarge = () =>
  respond(refusal(413, `the body is larger than ${MAX_BODY_BYTES} bytes`, { max_bytes: MAX_BODY_BYTES })).pipe(
    HttpServerResponse.setHeader("connection", "close")
  )

/** `application/json` or a `+json` type, whatever its parameters; no content type at all is read as JSON too. */
export const isJsonType = (contentType: string | undefined): boolean => {
  if (contentType === undefined) return true
  const type = contentType.split(";")[0]!.trim().toLowerCase()
  return type === "" || type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"))
}

/** The deepest nesting of `[` and `{` in a JSON text, outside strings; stops counting once past `limit`. */
export const jsonDepth = (text: string, limit = MAX_DEPTH): number => {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92 /* \ */) i++
      else if (c === 34 /* " */) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--
  }
  return deepest
}

type Read = { readonly _tag: "text"; readonly text: string } | { readonly _tag: "tooLarge" }

/** Reads the body with the limit applied to every chunk as it arrives; past the limit it stops reading at once. */
const readLimited = (source: IncomingMessage, limit: number) =>
  Effect.async<Read, ApiError>((resume) => {
    const chunks: Array<Buffer> = []
    let bytes = 0
    const done = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      bytes += chunk.length
      if (bytes > limit) {
        done()
        source.pause()
        resume(Effect.succeed({ _tag: "tooLarge" }))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      done()
      resume(Effect.succeed({ _tag: "text", text: Buffer.concat(chunks).toString("utf8") }))
    }
    const onError = () => {
      done()
      resume(Effect.fail(ApiError.field("body", "the body could not be read")))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    return Effect.sync(done)
  })

/** The request with its body already read and parsed: the routes' decoders take it from here. */
const withBody = (request: HttpServerRequest.HttpServerRequest, text: string, json: unknown) => {
  const wrapped = Object.create(request) as HttpServerRequest.HttpServerRequest
  Object.defineProperties(wrapped, {
    // Whatever JSON type it came as (`+json`, none at all), the routes' decoders read it as JSON.
    headers: { value: { ...request.headers, "content-type": "application/json" } },
    text: { value: Effect.succeed(text) },
    json: { value: Effect.succeed(json) },
    arrayBuffer: { value: Effect.sync(() => new TextEncoder().encode(text).buffer) }
  })
  return wrapped
}

const hasBody = (source: IncomingMessage): boolean => {
  const length = source.headers["content-length"]
  if (length !== undefined) return Number(length) > 0
  return source.headers["transfer-encoding"] !== undefined
}

/**
 * Runs before routing: a request with a body that is not JSON answers 415, one larger than `MAX_BODY_BYTES` 413
 * (declared in Content-Length, or counted while it streams: it is never buffered whole), one nested deeper than
 * `MAX_DEPTH` or not JSON at all 400. Every refusal carries the error body.
 */
export const bodyGuard = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    if (!hasBody(source)) {
      // No body is an empty JSON body, whatever type it names (a multipart reader would wait for parts forever).
      return HttpMethod.hasBody(request.method)
        ? Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(request, "", null))
        : app
    }
    const contentType = source.headers["content-type"]
    if (!isJsonType(contentType)) {
      return Effect.succeed(
        respond(
          new ApiError({
            status: 415,
            code: "validation_error",
            message: `the body must be JSON (Content-Type: application/json), not '${contentType}'`,
            details: {
              venue: null,
              retryable: false,
              errors: [{ field: "content-type", message: "must be application/json" }]
            }
          })
        ).pipe(HttpServerResponse.setHeader("connection", "close"))
      )
    }
    const declared = Number(source.headers["content-length"] ?? 0)
    if (declared > MAX_BODY_BYTES) return Effect.succeed(tooLarge())
    return Effect.flatMap(Effect.either(readLimited(source, MAX_BODY_BYTES)), (read) => {
      if (read._tag === "Left") return Effect.succeed(respond(read.left))
      if (read.right._tag === "tooLarge") return Effect.succeed(tooLarge())
      const text = read.right.text
      if (jsonDepth(text) > MAX_DEPTH) {
        return Effect.succeed(respond(refusal(400, `the body is nested deeper than ${MAX_DEPTH} levels`)))
      }
      let json: unknown
      try {
        json = text.trim() === "" ? null : JSON.parse(text)
      } catch {
        return Effect.succeed(respond(ApiError.field("body", "the body is not valid JSON")))
      }
      return Effect.provideService(app, HttpServerRequest.HttpServerRequest, withBody(request, text, json))
    })
  })
