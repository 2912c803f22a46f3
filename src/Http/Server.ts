/** Composition of the HTTP server: the API, its docs, the error mapping, on a Node listener. */
import { type HttpApp, HttpApiBuilder, HttpApiScalar, HttpServer, HttpServerRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, FiberRef, Layer, LogLevel } from "effect"
import { performance } from "node:perf_hooks"
import { createServer, type Server, STATUS_CODES } from "node:http"
import type { Duplex } from "node:stream"
import { Api } from "./Api.ts"
import { ApiError } from "../Domain/Errors.ts"
import { bodyGuard, MAX_BODY_BYTES, MAX_HEADER_BYTES } from "./BodyGuard.ts"
import { ErrorMiddleware } from "./Errors.ts"
import { EventsRoute } from "./Events.ts"
import { MarketsRoute } from "./Markets.ts"
import { UiRoute } from "./Ui.ts"
import { BucketsLive } from "./Buckets/Http.ts"
import { DeskLive } from "./Desk/Http.ts"
import { MetaLive } from "./Meta/Http.ts"
import { MetricsLive } from "./Metrics/Http.ts"
import { redact } from "./Redact.ts"
import { AuthorizationLive } from "./Security.ts"
import { TradingLive } from "./Trading/Http.ts"
import { VenuesLive } from "./Venues/Http.ts"

/** The API with its handlers; needs the seams the handlers use. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([MetaLive, VenuesLive, TradingLive, DeskLive, BucketsLive, MetricsLive]),
  Layer.provide(AuthorizationLive)
)

/** Routes beside the API (docs, OpenAPI document) and the global error mapping. */
export const HttpAppLive = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" }),
  EventsRoute,
  MarketsRoute,
  UiRoute,
  ErrorMiddleware
).pipe(Layer.provideMerge(ApiLive))

/**
 * The access log: a request that failed (status 400 and up) is logged at info with its method, path, status and time;
 * one that succeeded at debug only, so a busy trading client does not cost a console write per order. The debug line is
 * not even built unless the minimum log level lets it through. Secrets in the URL (`?key=`) are masked.
 */
const accessLog = <E, R>(app: HttpApp.Default<E, R>): HttpApp.Default<E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
    const started = performance.now()
    const debug = LogLevel.greaterThanEqual(LogLevel.Debug, fiber.getFiberRef(FiberRef.currentMinimumLogLevel))
    return Effect.onExit(app, (exit) => {
      const status = Exit.isSuccess(exit) ? exit.value.status : 500
      if (status < 400 && !debug) return Effect.void
      return (status >= 400 ? Effect.logInfo : Effect.logDebug)("Sent HTTP response").pipe(
        Effect.annotateLogs({
          "http.method": request.method,
          "http.url": redact(request.url),
          "http.status": status,
          "http.ms": Math.round((performance.now() - started) * 10) / 10
        })
      )
    })
  })

/** The HTTP app served on whatever `HttpServer` is provided (a real port, or a test server). */
export const HttpServeLive = HttpApiBuilder.serve((app) => accessLog(bodyGuard(app))).pipe(Layer.provide(HttpAppLive))

/** A request line's shape: a method token, a target, a version; what a parser refusal is judged by. */
const REQUEST_LINE = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+) (\S+)(?: |\r?\n|$)/

/** The first line of the bytes Node's parser stopped in (it keeps the packet on the error). */
const firstLine = (raw: Buffer | undefined): { readonly text: string; readonly ended: boolean } => {
  if (raw === undefined) return { text: "", ended: false }
  const text = raw.subarray(0, MAX_HEADER_BYTES + 2).toString("latin1")
  const end = text.indexOf("\n")
  return { text: end < 0 ? text : text.slice(0, end), ended: end >= 0 }
}

/**
 * The error body of a request Node's parser refused before the app saw it: 400 for a request it cannot read, 501 for
 * a method no route has, 505 for an HTTP version other than 1.x, 414 for a target past the header limit, 431 for
 * headers past it, 413 for a body whose length cannot be held, 408 for one that did not arrive in time.
 */
export const parserRefusal = (code: string | undefined, raw?: Buffer, message = ""): ApiError => {
  const refuse = (
    status: number,
    message: string,
    field: string,
    retryable = false,
    errorCode: ApiError["code"] = "validation_error"
  ) =>
    new ApiError({
      status,
      code: errorCode,
      message,
      details: { venue: null, retryable, errors: [{ field, message }] }
    })
  const line = firstLine(raw)
  const shaped = REQUEST_LINE.exec(line.text)
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return shaped !== null && (!line.ended || line.text.length > MAX_HEADER_BYTES / 2)
        ? refuse(414, `the request target is longer than the ${MAX_HEADER_BYTES}-byte header limit allows`, "url")
        : refuse(431, `the request line and headers are larger than ${MAX_HEADER_BYTES} bytes`, "headers")
    case "HPE_INVALID_METHOD":
      return shaped !== null && /^[A-Z][A-Z0-9_-]*$/.test(shaped[1]!)
        ? refuse(501, `method ${shaped[1]} is not supported`, "method", false, "not_supported")
        : refuse(400, "malformed HTTP request line", "request")
    case "HPE_INVALID_VERSION":
      return refuse(505, "only HTTP/1.0 and HTTP/1.1 are served", "version")
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return /overflow/i.test(message)
        ? refuse(413, `the body is larger than ${MAX_BODY_BYTES} bytes`, "body")
        : refuse(400, "malformed or repeated Content-Length", "content-length")
    case "HPE_INVALID_CHUNK_SIZE":
    case "HPE_INVALID_EOF_STATE":
    case "HPE_STRICT":
      return refuse(400, `malformed chunked body (${code})`, "body")
    case "ERR_HTTP_REQUEST_TIMEOUT":
    case "ERR_HTTP_HEADERS_TIMEOUT":
      return refuse(408, "the request did not arrive in time", "request", true)
    default:
      return refuse(400, `malformed HTTP request (${code ?? "parse error"})`, "request")
  }
}

/**
 * Node's parser answers a request it cannot parse (a bad request line, headers past the limit) by itself, with an
 * empty body; this writes the error body instead, then closes the connection.
 */
export const onClientError = (
  error: Error & { readonly code?: string; readonly rawPacket?: Buffer; readonly reason?: string },
  socket: Duplex
): void => {
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy()
    return
  }
  const refusal = parserRefusal(error.code, error.rawPacket, error.message)
  const body = JSON.stringify(refusal.body)
  socket.end(
    `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? "Error"}\r\n` +
      "content-type: application/json\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      "connection: close\r\n\r\n" +
      body
  )
}

/** Node's HTTP server with the header limit and the parser's refusals in the error body. */
export const makeNodeServer = (): Server => {
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES })
  server.on("clientError", onClientError)
  return server
}

export interface ListenOptions {
  readonly host: string
  readonly port: number
}

export const listen = (options: ListenOptions) =>
  HttpServeLive.pipe(
    HttpServer.withLogAddress,
    Layer.provide(NodeHttpServer.layer(makeNodeServer, { host: options.host, port: options.port }))
  )
