/** Kalshi's settings: the hosts, the key, the request buckets and the timings, read from the environment. */
import { Either } from "effect"
import { readFileSync } from "node:fs"
import { BASIC_TIER, type Bucket, type Credentials } from "./Rest.ts"
import { privateKeyFromPem } from "./Signing.ts"

/** The venue's hosts: production and the demo exchange. */
export const ENDPOINTS = {
  prod: { api: "https://external-api.kalshi.com/trade-api/v2", ws: "wss://external-api-ws.kalshi.com/trade-api/ws/v2" },
  demo: { api: "https://demo-api.kalshi.co/trade-api/v2", ws: "wss://demo-api.kalshi.co/trade-api/ws/v2" }
} as const

/** The venue's settings, read from the environment by {@link configFromEnv}. */
export interface KalshiConfig {
  readonly env: "prod" | "demo"
  readonly apiUrl: string
  readonly wsUrl: string
  readonly credentials: Credentials | undefined
  readonly limits: { readonly read: Bucket; readonly write: Bucket }
  /** How long a REST request may take. Default 10 s. */
  readonly timeoutMs: number
  /** How long the catalog of open markets is kept before it is read again. Default 60 s. */
  readonly catalogTtlMs: number
  /** At most this many pages of 200 events are read for the catalog. Default 50. */
  readonly catalogPages: number
  /** A socket silent this long (no message, no ping; the venue pings every 10 s) is stale and reopened. Default 30 s. */
  readonly streamIdleMs: number
  /** How long a series' fee schedule and an event's fee overrides are kept before they are read again. Default 10 min. */
  readonly feeTtlMs: number
  /** Whether the books subscription asks for YES-leg prices (`use_yes_price`, sent explicitly). Default true. */
  readonly yesPrice: boolean
  /** At most this many pages are read by one paged read (fills, orders, settlements). Default 100. */
  readonly maxPages: number
}

/** The environment the settings are read from. */
export type Env = Readonly<Record<string, string | undefined>>

const positive = (text: string | undefined, name: string): Either.Either<number | undefined, string> => {
  if (text === undefined || text === "") return Either.right(undefined)
  const n = Number(text)
  return Number.isFinite(n) && n > 0 ? Either.right(n) : Either.left(`${name} must be a positive number, not '${text}'`)
}

/**
 * Reads the settings of the issue from the environment: `KALSHI_ENV` (`prod` | `demo`), `KALSHI_API_URL`,
 * `KALSHI_WS_URL`, `KALSHI_API_KEY_ID` with `KALSHI_PRIVATE_KEY_PATH` or `KALSHI_PRIVATE_KEY`, the buckets
 * `KALSHI_READ_BUCKET`/`KALSHI_READ_REFILL`, `KALSHI_WRITE_BUCKET`/`KALSHI_WRITE_REFILL` (tokens; Basic tier by
 * default), `KALSHI_TIMEOUT_MS` (per request, default 10000), `KALSHI_STREAM_IDLE_MS` (default 30000),
 * `KALSHI_FEE_TTL_MS` (default 600000) and `KALSHI_USE_YES_PRICE` (`true` | `false`, default true). A key id without
 * a readable key, or a key without an id, is an error: never a silent public-only start.
 * The message names the setting, never its value.
 */
export const configFromEnv = (env: Env): Either.Either<KalshiConfig, string> =>
  Either.gen(function* () {
    const name = (env["KALSHI_ENV"] ?? "prod").trim() || "prod"
    if (name !== "prod" && name !== "demo") return yield* Either.left(`KALSHI_ENV must be prod or demo, not '${name}'`)
    const keyId = env["KALSHI_API_KEY_ID"]?.trim() || undefined
    const keyPath = env["KALSHI_PRIVATE_KEY_PATH"]?.trim() || undefined
    const keyText = env["KALSHI_PRIVATE_KEY"]?.trim() || undefined
    let credentials: Credentials | undefined
    if (keyId !== undefined || keyPath !== undefined || keyText !== undefined) {
      if (keyId === undefined)
        return yield* Either.left("KALSHI_API_KEY_ID is missing: the private key needs its key id")
      if (keyPath === undefined && keyText === undefined)
        return yield* Either.left("KALSHI_PRIVATE_KEY_PATH or KALSHI_PRIVATE_KEY is missing for KALSHI_API_KEY_ID")
      const pem = yield* Either.try({
        try: () => keyText ?? readFileSync(keyPath!, "utf8"),
        catch: () => `KALSHI_PRIVATE_KEY_PATH cannot be read`
      })
      const key = yield* Either.try({
        try: () => privateKeyFromPem(pem.includes("\\n") ? pem.replaceAll("\\n", "\n") : pem),
        catch: () =>
          (keyText !== undefined ? "KALSHI_PRIVATE_KEY" : "KALSHI_PRIVATE_KEY_PATH") + " is not a PEM private key"
      })
      credentials = { keyId, key }
    }
    const readCap = yield* positive(env["KALSHI_READ_BUCKET"], "KALSHI_READ_BUCKET")
    const readRefill = yield* positive(env["KALSHI_READ_REFILL"], "KALSHI_READ_REFILL")
    const writeCap = yield* positive(env["KALSHI_WRITE_BUCKET"], "KALSHI_WRITE_BUCKET")
    const writeRefill = yield* positive(env["KALSHI_WRITE_REFILL"], "KALSHI_WRITE_REFILL")
    const timeoutMs = yield* positive(env["KALSHI_TIMEOUT_MS"], "KALSHI_TIMEOUT_MS")
    const streamIdleMs = yield* positive(env["KALSHI_STREAM_IDLE_MS"], "KALSHI_STREAM_IDLE_MS")
    const feeTtlMs = yield* positive(env["KALSHI_FEE_TTL_MS"], "KALSHI_FEE_TTL_MS")
    const yesPriceText = (env["KALSHI_USE_YES_PRICE"] ?? "").trim().toLowerCase()
    if (yesPriceText !== "" && yesPriceText !== "true" && yesPriceText !== "false")
      return yield* Either.left(`KALSHI_USE_YES_PRICE must be true or false, not '${yesPriceText}'`)
    return {
      env: name,
      apiUrl: env["KALSHI_API_URL"]?.trim() || ENDPOINTS[name].api,
      wsUrl: env["KALSHI_WS_URL"]?.trim() || ENDPOINTS[name].ws,
      credentials,
      limits: {
        read: {
          capacity: readCap ?? BASIC_TIER.read.capacity,
          refillPerSecond: readRefill ?? BASIC_TIER.read.refillPerSecond
        },
        write: {
          capacity: writeCap ?? BASIC_TIER.write.capacity,
          refillPerSecond: writeRefill ?? BASIC_TIER.write.refillPerSecond
        }
      },
      timeoutMs: timeoutMs ?? 10_000,
      catalogTtlMs: 60_000,
      catalogPages: 50,
      streamIdleMs: streamIdleMs ?? 30_000,
      feeTtlMs: feeTtlMs ?? 600_000,
      yesPrice: yesPriceText !== "false",
      maxPages: 100
    }
  })
