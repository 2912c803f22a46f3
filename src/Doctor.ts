/** `crossbook doctor`: the home, its lock and databases, and each venue (reachable, credentials present, clock skew). */
import Database from "better-sqlite3"
import { Clock, Effect } from "effect"
import { existsSync, statSync } from "node:fs"
import { homeHolder } from "./Home.ts"
import { BUILT_IN_VENUES } from "./Venues/BuiltIn.ts"
import type { VenueRegistration } from "./Venues/Registration.ts"
import { registryFile } from "./Registry.ts"

export type CheckStatus = "ok" | "warn" | "fail"

export interface Check {
  readonly name: string
  readonly status: CheckStatus
  readonly detail: string
}

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

/**
 * A registered venue's check: its credentials (present or not, never their values), what its settings say about the
 * account, and its URL fetched with a short timeout; the clock skew comes from the answer's Date header (to the
 * second). A venue without a URL is embedded.
 */
const venueCheck = (venue: VenueRegistration, env: NodeJS.ProcessEnv, timeoutMs: number) =>
  Effect.gen(function* () {
    const wanted = venue.settings.credentials
    const missing = wanted.filter((names) => !names.some((n) => (env[n] ?? "") !== ""))
    const credentials =
      wanted.length === 0
        ? "no credentials needed"
        : missing.length === 0
          ? `credentials present (${wanted.map((names) => names.join(" or ")).join(", ")})`
          : `credentials missing: ${missing.map((names) => names.join(" or ")).join(", ")}`
    const account = venue.doctor?.account?.(env)
    const note = account === undefined ? "" : `; ${account.detail}`
    if (venue.doctor?.url === undefined) {
      return {
        name: `venue ${venue.id}`,
        status: account?.status ?? "ok",
        detail: `embedded, reachable, no clock skew; ${credentials}${note}`
      } as Check
    }
    const url = yield* venue.doctor.url(env)
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
  /** The venues checked (default the built-in ones). */
  readonly venues?: ReadonlyArray<VenueRegistration>
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
      options.venues ?? BUILT_IN_VENUES,
      (venue) => venueCheck(venue, env, options.timeoutMs ?? 3000),
      { concurrency: "unbounded" }
    )
    return { checks: [...checks, ...venues] } satisfies DoctorReport
  })
