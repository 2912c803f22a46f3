/** The home folder: `$CROSSBOOK_HOME`, else `~/.crossbook`, created 0700, its files 0600, owned by one server at a time. */
import Database from "better-sqlite3"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync
} from "node:fs"
import { homedir } from "node:os"
import { join, resolve } from "node:path"

export const homeFolder = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(env["CROSSBOOK_HOME"] ?? join(homedir(), ".crossbook"))

/** Creates the folder (0700) if needed, tightens its mode if it is looser, and answers its path. */
export const ensureHome = (path: string): string => {
  mkdirSync(path, { recursive: true, mode: 0o700 })
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o700)
  return path
}

/**
 * Makes every file this process creates from now on readable by its owner only (umask 0o077). The server holds
 * tokens, orders and balances: SQLite creates its `-wal` and `-shm` files itself, so the umask is the one place that
 * covers them all.
 */
export const privateFiles = (): void => {
  process.umask(0o077)
}

/** Tightens to 0600 the files given that exist (with SQLite's `-wal` and `-shm` beside each) and every file of the home. */
export const tightenModes = (home: string, files: ReadonlyArray<string> = []): void => {
  const inHome = existsSync(home) ? readdirSync(home).map((name) => join(home, name)) : []
  const all = [...inHome, ...files.flatMap((f) => [f, `${f}-wal`, `${f}-shm`, `${f}-journal`])]
  for (const file of all) {
    if (!existsSync(file)) continue
    const stat = statSync(file)
    if (stat.isFile() && (stat.mode & 0o077) !== 0) chmodSync(file, 0o600)
  }
}

/** The lock that makes one process the owner of a home: a SQLite file held in exclusive locking mode. */
export const lockFile = (home: string): string => join(home, "home.lock")

/** Who holds the lock, written by the holder once it has it (the lock file itself cannot be read while held). */
export const ownerFile = (home: string): string => join(home, "home.owner")

export interface HomeOwner {
  readonly pid: number
  readonly command: string
  readonly started_at: number
}

/** The home is owned by another live process. */
export class HomeLocked extends Data.TaggedError("HomeLocked")<{
  readonly home: string
  readonly owner: HomeOwner | undefined
}> {
  override get message(): string {
    const who =
      this.owner === undefined
        ? "another process"
        : `process ${this.owner.pid} (crossbook ${this.owner.command}, since ${new Date(this.owner.started_at).toISOString()})`
    return `the home ${this.home} is in use by ${who}: stop it first, or give this one another home with CROSSBOOK_HOME`
  }
}

export const readOwner = (home: string): HomeOwner | undefined => {
  try {
    const value = JSON.parse(readFileSync(ownerFile(home), "utf8")) as Partial<HomeOwner>
    return typeof value.pid === "number" && typeof value.command === "string" && typeof value.started_at === "number"
      ? { pid: value.pid, command: value.command, started_at: value.started_at }
      : undefined
  } catch {
    return undefined
  }
}

/** Opens the lock file and takes SQLite's exclusive lock on it, waiting at most `waitMs`; undefined when it is held. */
const tryLock = (home: string, waitMs: number): Database.Database | undefined => {
  const db = new Database(lockFile(home), { timeout: waitMs })
  try {
    db.pragma("journal_mode = MEMORY")
    db.pragma("locking_mode = EXCLUSIVE")
    db.exec("BEGIN EXCLUSIVE")
    return db
  } catch (error) {
    db.close()
    if ((error as { code?: string }).code === "SQLITE_BUSY") return undefined
    throw error
  }
}

/**
 * Takes the home for this process for the life of the scope: an exclusive lock held by the operating system, so a
 * process that dies (even by SIGKILL) leaves no stale lock behind, and a pid that was reused cannot fool it. Fails with
 * `HomeLocked` naming the holder's pid when another process has it. Nothing else in the home is read or written first.
 */
export const acquireHome = (home: string, command: string) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const db = tryLock(home, 250)
      if (db === undefined) return yield* new HomeLocked({ home, owner: readOwner(home) })
      const owner: HomeOwner = { pid: process.pid, command, started_at: Date.now() }
      writeFileSync(ownerFile(home), JSON.stringify(owner) + "\n", { mode: 0o600 })
      return db
    }),
    (db) => Effect.sync(() => db.close())
  )

/** Whether the home is owned now, without keeping it: the holder when it is, undefined when it is free. */
export const homeHolder = (
  home: string
): { readonly held: false } | { readonly held: true; readonly owner: HomeOwner | undefined } => {
  if (!existsSync(lockFile(home))) return { held: false }
  const db = tryLock(home, 0)
  if (db === undefined) return { held: true, owner: readOwner(home) }
  db.close()
  return { held: false }
}

/** Whether a home holds nothing yet (absent or empty): a command that fails before using it leaves it so. */
export const isNewHome = (home: string): boolean => !existsSync(home) || readdirSync(home).length === 0

/**
 * Puts a home that was new back as it was, once its lock is released: when it holds nothing but the lock and its
 * owner's note (a start that stopped before opening a database), those go, and the folder with them.
 */
export const forgetNewHome = (home: string): void => {
  if (!existsSync(home)) return
  const names = readdirSync(home)
  const lockOnly = names.every((name) => name === "home.lock" || name === "home.owner" || name.startsWith("home.lock-"))
  if (!lockOnly) return
  for (const name of names) rmSync(join(home, name), { force: true })
  try {
    rmdirSync(home)
  } catch {
    // something else put a file there meanwhile: the folder stays
  }
}
