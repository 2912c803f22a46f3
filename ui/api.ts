/** The server's HTTP API with the tab's access token; failures carry the error body's message and field errors. */
import type { Routes, Schemas } from "./api.gen.ts"

export type { Schemas }

const TOKEN_KEY = "crossbook.token"

export interface FieldError {
  readonly field: string
  readonly message: string
}

/** A non-2xx answer (or no answer): what the error body said. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: ReadonlyArray<FieldError>,
    readonly details: Record<string, unknown>
  ) {
    super(message)
  }
}

/** The token lives in sessionStorage: this tab only, gone when it closes. */
export const token = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (value: string) => sessionStorage.setItem(TOKEN_KEY, value),
  clear: () => sessionStorage.removeItem(TOKEN_KEY)
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/** One request to the server by path: the answer as it came (the typed way in is `api`). */
const call = async (method: Method, path: string, body?: unknown): Promise<unknown> => {
  const headers: Record<string, string> = { accept: "application/json" }
  const secret = token.get()
  if (secret !== null && path.startsWith("/trading")) headers["authorization"] = `Bearer ${secret}`
  if (body !== undefined) headers["content-type"] = "application/json"
  let response: Response
  try {
    response = await fetch(path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  } catch (error) {
    throw new ApiFailure(0, "network", `the server did not answer (${String(error)})`, [], {})
  }
  const text = await response.text()
  let parsed: any = undefined
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!response.ok) {
    const error = parsed?.error
    throw new ApiFailure(
      response.status,
      typeof error?.code === "string" ? error.code : "http_error",
      typeof error?.message === "string" ? error.message : `HTTP ${response.status}`,
      Array.isArray(error?.details?.errors) ? error.details.errors : [],
      typeof error?.details === "object" && error.details !== null ? error.details : {}
    )
  }
  return parsed
}

/** A route of the API, as `"<METHOD> <path>"` with its parameters in braces (`"GET /trading/orders/{id}"`). */
export type Route = keyof Routes

/** What a route answers, as the API describes it. */
export type Answer<R extends Route> = Routes[R]["answer"]

/** The parts of a request to a route: its path parameters, its query, its body. */
export interface Request<R extends Route> {
  readonly path?: Routes[R]["path"]
  readonly query?: Routes[R]["query"]
  readonly body?: Routes[R]["body"]
}

/**
 * A request to a route of the API, typed from the API's own description (ui/api.gen.ts, generated from the server's
 * HttpApi): a renamed route, parameter or field fails the dashboard's typecheck, not the page.
 */
export const api = <R extends Route>(route: R, request: Request<R> = {}): Promise<Answer<R>> => {
  const space = route.indexOf(" ")
  const params = (request.path ?? {}) as Readonly<Record<string, string>>
  const path = route.slice(space + 1).replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? ""))
  const q = query((request.query ?? {}) as Readonly<Record<string, string | number | boolean | undefined>>)
  return call(route.slice(0, space) as Method, `${path}${q}`, request.body) as Promise<Answer<R>>
}

/** The OpenAPI document itself, read to build the order ticket's fields (a document, not a route's record). */
export const openApiDocument = () => call("GET", "/openapi.json") as Promise<any>

/** A query string from the defined values. */
export const query = (params: Readonly<Record<string, string | number | boolean | undefined | null>>) => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, String(v))
  const s = q.toString()
  return s === "" ? "" : `?${s}`
}

/** Words for a failure: the message, the rule of a risk refusal, each field's problem. */
export const describe = (error: unknown): string => {
  if (!(error instanceof ApiFailure)) return String(error)
  const rule = typeof error.details["rule"] === "string" ? ` (rule ${error.details["rule"]})` : ""
  const fields = error.errors.map((e) => `${e.field}: ${e.message}`).join("; ")
  return `${error.message}${rule}${fields === "" ? "" : ` — ${fields}`}`
}

/** The socket address for a path on this server. */
export const socketUrl = (path: string) => `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}${path}`
