/** The data host's handlers and its HTTP app: the history API over the store, login, keys, the OpenAPI document. */
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Clock, Context, Effect, Layer } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { bodyGuard } from "../Http/BodyGuard.ts"
import { ErrorMiddleware } from "../Http/Errors.ts"
import { NAME, VERSION } from "../Version.ts"
import { ApiKeyAuth, CurrentSession, DataApi, SessionAuth } from "./Api.ts"
import { HistoryClient, HistoryError } from "../Services/HistoryClient.ts"
import { bookAt, bookRange, DEFAULT_MAX_RANGE_MS, tradesRange } from "./History.ts"
import { Tapes } from "./Tapes.ts"
import { Keys } from "./Keys.ts"
import type { DataStore } from "./Store.ts"

/** What the data host serves from: its store, the keys on it, and the longest range one request may ask for. */
export class DataHost extends Context.Tag("crossbook/DataHost")<
  DataHost,
  { readonly store: DataStore; readonly keys: Keys; readonly maxRangeMs: number }
>() {
  static layer(store: DataStore, options: { readonly maxRangeMs?: number } = {}) {
    return Layer.succeed(DataHost, {
      store,
      keys: new Keys(store),
      maxRangeMs: options.maxRangeMs ?? DEFAULT_MAX_RANGE_MS
    })
  }
}

const BEARER = /^Bearer[ ]+(\S+)\s*$/i

export const KEY_HINT =
  "run `crossbook login --url <data_url>` with a code from the host's owner, then `crossbook keys create`; " +
  "or set SERVICE_API_KEY"

/** The bearer secret of the request, or undefined. */
const bearerOf = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const header = request.headers["authorization"]
  return header === undefined ? undefined : BEARER.exec(header)?.[1]
})

/**
 * Fails with 401 (and the hint) unless the request carries a valid API key; for routes mounted beside the API (the
 * matching routes) as well as the history group.
 */
export const requireApiKey = Effect.gen(function* () {
  const host = yield* DataHost
  const secret = yield* bearerOf
  const now = yield* Clock.currentTimeMillis
  if (secret === undefined) {
    return yield* Effect.fail(ApiError.unauthorized(`missing API key (Authorization: Bearer <key>): ${KEY_HINT}`))
  }
  if (!host.keys.checkKey(secret, now)) {
    return yield* Effect.fail(ApiError.unauthorized(`unknown or revoked API key: ${KEY_HINT}`))
  }
})

const ApiKeyAuthLive = Layer.effect(
  ApiKeyAuth,
  Effect.map(DataHost, (host) => ({
    bearer: () => Effect.provideService(requireApiKey, DataHost, host)
  }))
)

const SessionAuthLive = Layer.effect(
  SessionAuth,
  Effect.map(DataHost, (host) => ({
    bearer: () =>
      Effect.gen(function* () {
        const secret = yield* bearerOf
        const now = yield* Clock.currentTimeMillis
        const session = secret === undefined ? undefined : host.keys.session(secret, now)
        if (session === undefined) {
          return yield* Effect.fail(
            ApiError.unauthorized(
              "missing or expired session: run `crossbook login --url <data_url>` with a code from the host's owner " +
                "(`crossbook data invite`)"
            )
          )
        }
        return session
      })
  }))
)

const answer = <A>(result: A | ApiError): Effect.Effect<A, ApiError> =>
  result instanceof ApiError ? Effect.fail(result) : Effect.succeed(result)

const HostLive = HttpApiBuilder.group(DataApi, "host", (handlers) =>
  Effect.succeed(
    handlers
      .handle("root", () =>
        Effect.succeed({
          name: `${NAME} data host`,
          version: VERSION,
          links: {
            health: "/health",
            openapi: "/openapi.json",
            login: "/v1/login",
            keys: "/v1/keys",
            markets: "/v1/markets",
            book_at: "/v1/order-book/at",
            book_range: "/v1/order-book/range",
            trades_range: "/v1/trades/range"
          }
        })
      )
      .handle("health", () => Effect.succeed({ status: "ok" as const, version: VERSION }))
  )
)

/** The history API over the host's own store, in process: what a tape is read through here. */
const storeClient = (host: DataHost["Type"]): HistoryClient["Type"] => {
  const local = <A>(result: A | ApiError): Effect.Effect<A, HistoryError> =>
    result instanceof ApiError
      ? Effect.fail(
          new HistoryError({
            kind: result.status === 404 ? "not_found" : "http",
            message: result.message,
            status: result.status,
            code: result.code,
            retryable: false
          })
        )
      : Effect.succeed(result)
  return {
    url: `${NAME} data host`,
    markets: Effect.sync(() => {
      const data = host.store.markets()
      return { data, next_cursor: null, count: data.length }
    }),
    bookAt: (r) => Effect.suspend(() => local(bookAt(host.store, r))),
    bookRange: (r) => Effect.suspend(() => local(bookRange(host.store, r, host.maxRangeMs))),
    tradesRange: (r) => Effect.suspend(() => local(tradesRange(host.store, r, host.maxRangeMs)))
  }
}

/** A range as a columnar tape, once the range is one the host serves; the tape format comes from `Tapes`. */
const tapeRange = (host: DataHost["Type"], r: { market_id: string; start_ms: number; end_ms: number }) =>
  Effect.gen(function* () {
    const refused = bookRange(host.store, { ...r, limit: 1 }, host.maxRangeMs)
    if (refused instanceof ApiError) return yield* Effect.fail(refused)
    const tapes = yield* Effect.serviceOption(Tapes)
    if (tapes._tag === "None") {
      return yield* Effect.fail(
        new ApiError({ status: 501, code: "not_supported", message: "this host has no tape format", details: {} })
      )
    }
    const internal = (error: { readonly message: string }) =>
      new ApiError({ status: 500, code: "internal_error", message: error.message, details: {} })
    const tape = yield* tapes.value
      .tapeFromHistory(storeClient(host), r.market_id, r.start_ms, r.end_ms)
      .pipe(Effect.mapError(internal))
    return yield* tapes.value.arrowOf(tape.text).pipe(Effect.mapError(internal))
  })

const HistoryLive = HttpApiBuilder.group(DataApi, "history", (handlers) =>
  Effect.map(DataHost, (host) =>
    handlers
      .handle("markets", () =>
        Effect.sync(() => {
          const data = host.store.markets()
          return { data, next_cursor: null, count: data.length }
        })
      )
      .handle("bookAt", ({ payload }) => Effect.suspend(() => answer(bookAt(host.store, payload))))
      .handle("bookRange", ({ payload }) =>
        Effect.suspend(() => answer(bookRange(host.store, payload, host.maxRangeMs)))
      )
      .handle("tradesRange", ({ payload }) =>
        Effect.suspend(() => answer(tradesRange(host.store, payload, host.maxRangeMs)))
      )
      .handle("tapeRange", ({ payload }) => tapeRange(host, payload))
  )
)

const LoginLive = HttpApiBuilder.group(DataApi, "login", (handlers) =>
  Effect.map(DataHost, (host) =>
    handlers.handle("login", ({ payload }) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const session = host.keys.login(payload.code.trim(), now)
        return session === undefined
          ? Effect.fail(
              ApiError.unauthorized(
                "the code is unknown, used or expired: ask the host's owner for a new one (`crossbook data invite`)"
              )
            )
          : Effect.succeed(session)
      })
    )
  )
)

const KeysLive = HttpApiBuilder.group(DataApi, "keys", (handlers) =>
  Effect.map(DataHost, (host) =>
    handlers
      .handle("createKey", ({ payload }) =>
        Effect.gen(function* () {
          const session = yield* CurrentSession
          const now = yield* Clock.currentTimeMillis
          return host.keys.createKey(session, payload.name ?? "default", now)
        })
      )
      .handle("listKeys", () =>
        Effect.map(CurrentSession, (session) => {
          const data = host.keys.listKeys(session)
          return { data, next_cursor: null, count: data.length }
        })
      )
      .handle("revokeKey", ({ path }) =>
        Effect.gen(function* () {
          const session = yield* CurrentSession
          const now = yield* Clock.currentTimeMillis
          const record = host.keys.revokeKey(session, path.id, now)
          return record === undefined ? yield* Effect.fail(ApiError.notFound(`no key '${path.id}'`)) : record
        })
      )
  )
)

export const DataApiLive = HttpApiBuilder.api(DataApi).pipe(
  Layer.provide([HostLive, HistoryLive, LoginLive, KeysLive]),
  Layer.provide([ApiKeyAuthLive, SessionAuthLive])
)

/**
 * The data host's HTTP app on whatever `HttpServer` is provided. `extra` mounts more routes beside the API (with
 * `HttpApiBuilder.Router.use`), such as the matching routes; they may use `requireApiKey` and `DataHost`.
 */
export const dataHostApp = <E = never, R = never>(extra?: Layer.Layer<never, E, R>) =>
  HttpApiBuilder.serve(bodyGuard).pipe(
    Layer.provide(
      Layer.mergeAll(
        HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
        ErrorMiddleware,
        extra ?? Layer.empty
      ).pipe(Layer.provideMerge(DataApiLive))
    )
  )
