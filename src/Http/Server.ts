/** Composition of the HTTP server: the API, its docs, the error mapping, on a Node listener. */
import { HttpApiBuilder, HttpApiScalar, HttpMiddleware, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { createServer } from "node:http"
import { Api } from "./Api.ts"
import { ErrorMiddleware } from "./Errors.ts"
import { EventsRoute } from "./Events.ts"
import { DeskLive } from "./Desk/Http.ts"
import { MetaLive } from "./Meta/Http.ts"
import { AuthorizationLive } from "./Security.ts"
import { TradingLive } from "./Trading/Http.ts"
import { VenuesLive } from "./Venues/Http.ts"

/** The API with its handlers; needs the seams the handlers use. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([MetaLive, VenuesLive, TradingLive, DeskLive]),
  Layer.provide(AuthorizationLive)
)

/** Routes beside the API (docs, OpenAPI document) and the global error mapping. */
export const HttpAppLive = Layer.mergeAll(
  HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
  HttpApiScalar.layer({ path: "/docs" }),
  EventsRoute,
  ErrorMiddleware
).pipe(Layer.provideMerge(ApiLive))

/** The HTTP app served on whatever `HttpServer` is provided (a real port, or a test server). */
export const HttpServeLive = HttpApiBuilder.serve(HttpMiddleware.logger).pipe(Layer.provide(HttpAppLive))

export interface ListenOptions {
  readonly host: string
  readonly port: number
}

export const listen = (options: ListenOptions) =>
  HttpServeLive.pipe(
    HttpServer.withLogAddress,
    Layer.provide(NodeHttpServer.layer(createServer, { host: options.host, port: options.port }))
  )
