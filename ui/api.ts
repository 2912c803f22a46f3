/** The server's HTTP API with the tab's access token; failures carry the error body's message and field errors. */

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

export const call = async <T = any>(
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  body?: unknown
): Promise<T> => {
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
  return parsed as T
}

export const get = <T = any>(path: string) => call<T>("GET", path)

/** A query string from the defined values. */
export const query = (params: Record<string, string | number | undefined | null>) => {
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
