/** `crossbook doctor`: the home, its lock and databases, and each venue (reachable, credentials present, clock skew). */
import Database from "better-sqlite3"
import { Clock, Effect } from "effect"
import { existsSync, statSync } from "node:fs"
import { homeHolder } from "./Home.ts"
import { ENDPOINTS as KALSHI_ENDPOINTS } from "./Venues/Kalshi/Venue.ts"
import { DEFAULT_HOSTS as POLYMARKET_HOSTS } from "./Venues/Polymarket/Rest.ts"
import { registryFile } from "./Registry.ts"

export type CheckStatus = "ok" | "warn" | "fail"

export interface Check {
  readonly name: string
  readonly status: CheckStatus
  readonly detail: string
}

/**
 * A venue as doctor sees it: the environment variables its credentials come from (any one of each group will do),
 * and the URL that tells whether it is reachable and what its clock says. Real venues join this list.
 */
export interface VenueProbe {
  readonly id: string
  /** Each inner list is one credential; any of its variables provides it. */
  readonly credentials: ReadonlyArray<ReadonlyArray<string>>
  /** Undefined for a venue inside the server (no network, the server's own clock). */
  readonly url?: (env: NodeJS.ProcessEnv) => string
  /** What the settings say about the account, when there is something to say: a note, a warning or a failure. */
  readonly account?: (env: NodeJS.ProcessEnv) => { readonly status: CheckStatus; readonly detail: string } | undefined
}

/**
 * Which Polymarket signature type the settings sign with, and whether the account can trade with it: new accounts
 * trade through a deposit wallet (type 3, the default once `POLYMARKET_FUNDER` is set); a bare key signs as an EOA,
 * which the venue refuses for them ("maker address not allowed, please use the deposit wallet flow").
 */
export const polymarketAccount = (env: NodeJS.ProcessEnv): { status: CheckStatus; detail: string } | undefined => {
  if ((env["POLYMARKET_PRIVATE_KEY"] ?? "") === "") return undefined
  const funder = env["POLYMARKET_FUNDER"] ?? ""
  const type = env["POLYMARKET_SIGNATURE_TYPE"] || (funder === "" ? "0" : "3")
  const names: Record<string, string> = { "0": "EOA", "1": "proxy wallet", "2": "Gnosis Safe", "3": "deposit wallet" }
  if (names[type] === undefined) return { status: "fail", detail: "POLYMARKET_SIGNATURE_TYPE must be 0, 1, 2 or 3" }
  if (type !== "0" && funder === "") {
    return {
      status: "fail",
      detail: `signature type ${type} (${names[type]}) needs POLYMARKET_FUNDER, the wallet's address`
    }
  }
  if (type === "0") {
    return {
      status: "warn",
      detail:
        "signs as a bare EOA (type 0): accounts opened through the deposit-wallet flow need type 3 — set POLYMARKET_FUNDER to the deposit wallet's address (type 3 is then the default)"
    }
  }
  return { status: "ok", detail: `signs as a ${names[type]} (type ${type}) for ${funder}` }
}

export const VENUES: ReadonlyArray<VenueProbe> = [
  { id: "sim", credentials: [] },
  {
    id: "kalshi",
    credentials: [["KALSHI_API_KEY_ID"], ["KALSHI_PRIVATE_KEY_PATH", "KALSHI_PRIVATE_KEY"]],
    // The host `serve` trades on: KALSHI_API_URL, else the endpoint of KALSHI_ENV.
    url: (env) =>
      `${base(env["KALSHI_API_URL"], KALSHI_ENDPOINTS[env["KALSHI_ENV"]?.trim() === "demo" ? "demo" : "prod"].api)}/exchange/status`
  },
  {
    id: "polymarket",
    credentials: [["POLYMARKET_PRIVATE_KEY"]],
    url: (env) => `${base(env["POLYMARKET_CLOB_URL"], POLYMARKET_HOSTS.clob)}/time`,
    account: polymarketAccount
  }
]

/** A base URL as the venue reads it from the environment: the variable when set and not blank, else the default. */
const base = (given: string | undefined, fallback: string): string => (given?.trim() || fallback).replace(/\/+$/, "")

const mode = (file: string): number => statSync(file).mode & 0o777
const octal = (m: number): string => `0${m.toString(8)}`

/** A database file: present, 0600 with its -wal and -shm, and SQLite's quick check, opened read-only. */
const databaseCheck = (name: string, file: string): Check => {
  if (!existsSync(file)) return { name, status: "warn", detail: `${file} does not exist yet (serve creates it)` }
  const loose = [file, `${file}-wal`, `${file}-shm`].filter((f) => existsSync(f) && (mode(f) & 0o077) !== 0)
  if (loose.length > 0) {
    return {
      name,
      status: "fail",
      detail: `${loose.map((f) => `${f} is ${octal(mode(f))}`).join(", ")}: others can read it; chmod 600 it`
    }
  }
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true, timeout: 2000 })
    try {
      const result = db.pragma("quick_check", { simple: true })
      if (result !== "ok") return { name, status: "fail", detail: `${file}: integrity check says ${String(result)}` }
    } finally {
      db.close()
    }
  } catch (error) {
    return { name, status: "fail", detail: `${file} cannot be read as a database (${(error as Error).message})` }
  }
  return { name, status: "ok", detail: `${file} (0600, integrity ok)` }
}

/** Fetches the venue's URL with a short timeout; the clock skew comes from the answer's Date header (to the second). */
const venueCheck = (venue: VenueProbe, env: NodeJS.ProcessEnv, timeoutMs: number) =>
  Effect.gen(function* () {
    const missing = venue.credentials.filter((names) => !names.some((n) => (env[n] ?? "") !== ""))
    const credentials =
      venue.credentials.length === 0
        ? "no credentials needed"
        : missing.length === 0
          ? `credentials present (${venue.credentials.map((names) => names.join(" or ")).join(", ")})`
          : `credentials missing: ${missing.map((names) => names.join(" or ")).join(", ")}`
    if (venue.url === undefined) {
      return {
        name: `venue ${venue.id}`,
        status: "ok",
        detail: `embedded, reachable, no clock skew; ${credentials}`
      } as Check
    }
    const url = venue.url(env)
    const account = venue.account?.(env)
    const note = account === undefined ? "" : `; ${account.detail}`
    const before = yield* Clock.currentTimeMillis
    const answer = yield* Effect.tryPromise((signal) => fetch(url, { signal, method: "GET" })).pipe(
      Effect.timeout(timeoutMs),
      Effect.option
    )
    const after = yield* Clock.currentTimeMillis
    if (answer._tag === "None") {
      return {
        name: `venue ${venue.id}`,
        status: "warn",
        detail: `${url} unreachable (no answer within ${timeoutMs} ms); ${credentials}${note}`
      } as Check
    }
    const date = answer.value.headers.get("date")
    const theirs = date === null ? Number.NaN : Date.parse(date)
    const skew = Number.isNaN(theirs) ? undefined : Math.round((theirs + 500 - (before + after) / 2) / 1000)
    const skewText =
      skew === undefined ? "clock skew unknown (no Date header)" : `clock skew ${skew >= 0 ? "+" : ""}${skew} s`
    const status: CheckStatus =
      account?.status === "fail"
        ? "fail"
        : missing.length > 0 || (skew !== undefined && Math.abs(skew) > 2) || account?.status === "warn"
          ? "warn"
          : "ok"
    return {
      name: `venue ${venue.id}`,
      status,
      detail: `${url} reachable (HTTP ${answer.value.status}), ${skewText}; ${credentials}${note}`
    } as Check
  })

export interface DoctorReport {
  readonly checks: ReadonlyArray<Check>
}

/** Runs every check; none of them writes anything, and a venue that is unreachable is a warning, not a failure. */
export const doctor = (options: {
  readonly home: string
  readonly dbFile: string
  readonly controlFile: string
  readonly env?: NodeJS.ProcessEnv
  readonly venues?: ReadonlyArray<VenueProbe>
  readonly timeoutMs?: number
}) =>
  Effect.gen(function* () {
    const env = options.env ?? process.env
    const checks: Array<Check> = []
    const { home } = options
    if (!existsSync(home)) {
      checks.push({ name: "home", status: "warn", detail: `${home} does not exist yet (serve creates it, 0700)` })
    } else {
      const m = mode(home)
      checks.push(
        (m & 0o077) === 0
          ? { name: "home", status: "ok", detail: `${home} (${octal(m)})` }
          : { name: "home", status: "fail", detail: `${home} is ${octal(m)}: others can enter it; chmod 700 it` }
      )
      const holder = homeHolder(home)
      checks.push({
        name: "lock",
        status: "ok",
        detail: holder.held
          ? `held by process ${holder.owner?.pid ?? "unknown"} (a server runs on this home)`
          : "free (no server runs on this home)"
      })
      const registry = registryFile(home)
      if (existsSync(registry)) {
        const m = mode(registry)
        checks.push(
          (m & 0o077) === 0
            ? { name: "registry", status: "ok", detail: `${registry} (${octal(m)})` }
            : { name: "registry", status: "fail", detail: `${registry} is ${octal(m)}: it holds tokens; chmod 600 it` }
        )
      }
    }
    checks.push(databaseCheck("engine database", options.dbFile))
    checks.push(databaseCheck("control database", options.controlFile))
    const venues = yield* Effect.forEach(
      options.venues ?? VENUES,
      (venue) => venueCheck(venue, env, options.timeoutMs ?? 3000),
      { concurrency: "unbounded" }
    )
    return { checks: [...checks, ...venues] } satisfies DoctorReport
  })
