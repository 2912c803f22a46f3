/** Bearer tokens on `/trading`: the middleware that finds the principal, and the per-account permission check. */
import { HttpApiMiddleware, HttpApiSecurity, HttpServerRequest } from "@effect/platform"
import { Context, Effect, Layer } from "effect"
import { ApiError, ApiErrorWire } from "../Domain/Errors.ts"
import { allows, Auth, type Permission, type Principal } from "../Services/Auth.ts"

export class CurrentPrincipal extends Context.Tag("crossbook/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("crossbook/Authorization", {
  failure: ApiErrorWire,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const BEARER = /^Bearer[ ]+(\S+)\s*$/i

/**
 * The token of a request: `Authorization: Bearer <token>` (the scheme is checked here: the platform does not), or
 * `X-API-Key: <token>`, which clients written for key-header APIs send.
 */
export const requestToken = (headers: Readonly<Record<string, string | undefined>>): string | ApiError => {
  const header = headers["authorization"]
  const apiKey = headers["x-api-key"]?.trim()
  if (header === undefined || header.trim() === "") {
    if (apiKey !== undefined && apiKey !== "") return apiKey
    return ApiError.unauthorized("missing access token: send 'Authorization: Bearer <token>' or 'X-API-Key: <token>'")
  }
  const m = BEARER.exec(header)
  if (m === null) return ApiError.unauthorized("the Authorization header must be 'Bearer <token>'")
  return m[1]!
}

export const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.map(Auth, (auth) => ({
    bearer: () =>
      Effect.contextWithEffect((context: Context.Context<never>) => {
        const request = Context.unsafeGet(context as Context.Context<any>, HttpServerRequest.HttpServerRequest)
        const token = requestToken(request.headers)
        return typeof token === "string" ? auth.authenticate(token) : Effect.fail(token)
      })
  }))
)

/** Fails with 403 naming the permission unless the principal holds it on the account (or on `*`). */
export const requirePermission = (permission: Permission, account: string) =>
  Effect.flatMap(CurrentPrincipal, (principal) =>
    allows(principal, permission, account)
      ? Effect.succeed(principal)
      : Effect.fail(ApiError.forbidden(permission, account))
  )

/** The request as the audit log records it. */
export const requestInfo = Effect.map(HttpServerRequest.HttpServerRequest, (request) => ({
  method: request.method,
  path: new URL(request.url, "http://localhost").pathname
}))

/** Fails with 403 naming the first of the accounts the principal lacks the permission on. */
export const requireOnEvery = (permission: Permission, accounts: ReadonlyArray<string>) =>
  Effect.forEach(accounts, (account) => requirePermission(permission, account), { discard: true })
