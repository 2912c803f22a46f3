/**
 * The data host's credentials: one-time invite codes its owner issues, the sessions a login with one opens, and the
 * API keys a session creates. Every secret is stored as its SHA-256 only; the secret itself is shown once.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { randomId } from "../Services/Auth.ts"
import type { DataStore } from "./Store.ts"

export const INVITE_TTL_MS = 24 * 3_600_000
export const SESSION_TTL_MS = 30 * 24 * 3_600_000

/** The hex SHA-256 a secret is stored as. */
export const hashSecret = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

const sameHash = (a: string, b: string): boolean =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))

export interface KeyRecord {
  readonly id: string
  readonly name: string
  readonly prefix: string
  readonly created_at: number
  readonly last_used_at: number | null
  readonly revoked_at: number | null
}

export interface Session {
  readonly id: string
  readonly user: string
}

const KEY = /^cbk_([A-Za-z0-9]{8})_[A-Za-z0-9_-]{43}$/
const SESSION = /^cbs_[A-Za-z0-9_-]{43}$/
const INVITE = /^cbi_[A-Za-z0-9]{24}$/

const LAST_USED_EVERY_MS = 60_000

/** Invites, sessions and keys on the store's database. */
export class Keys {
  constructor(private readonly store: DataStore) {}

  private get db() {
    return this.store.db
  }

  /** A one-time code for `crossbook login`, valid for a day; the code is shown once. */
  invite(user: string, now: number, ttlMs = INVITE_TTL_MS): { readonly code: string; readonly expires_at: number } {
    const code = `cbi_${randomId(24)}`
    this.db
      .prepare("INSERT INTO invites (id, hash, user_name, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run(`inv_${randomId(8)}`, hashSecret(code), user, now, now + ttlMs)
    return { code, expires_at: now + ttlMs }
  }

  /** Spends an invite code on a session; undefined when the code is unknown, used or expired. */
  login(
    code: string,
    now: number
  ): { readonly session: string; readonly user: string; readonly expires_at: number } | undefined {
    if (!INVITE.test(code)) return undefined
    return this.db.transaction(() => {
      const invite = this.db
        .prepare("SELECT id, user_name, expires_at, used_at FROM invites WHERE hash = ?")
        .get(hashSecret(code)) as
        { id: string; user_name: string; expires_at: number; used_at: number | null } | undefined
      if (invite === undefined || invite.used_at !== null || invite.expires_at <= now) return undefined
      this.db.prepare("UPDATE invites SET used_at = ? WHERE id = ?").run(now, invite.id)
      const session = `cbs_${randomBytes(32).toString("base64url")}`
      this.db
        .prepare(
          "INSERT INTO sessions (id, hash, user_name, invite_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)"
        )
        .run(`ses_${randomId(8)}`, hashSecret(session), invite.user_name, invite.id, now, now + SESSION_TTL_MS)
      return { session, user: invite.user_name, expires_at: now + SESSION_TTL_MS }
    })()
  }

  /** The session of a session secret; undefined when unknown or expired. */
  session(secret: string, now: number): Session | undefined {
    if (!SESSION.test(secret)) return undefined
    const row = this.db
      .prepare("SELECT id, hash, user_name, expires_at FROM sessions WHERE hash = ?")
      .get(hashSecret(secret)) as { id: string; hash: string; user_name: string; expires_at: number } | undefined
    if (row === undefined || !sameHash(row.hash, hashSecret(secret)) || row.expires_at <= now) return undefined
    return { id: row.id, user: row.user_name }
  }

  /** A new API key for the session's user; the key is in this answer only. */
  createKey(session: Session, name: string, now: number): { readonly key: string; readonly record: KeyRecord } {
    const short = randomId(8)
    const key = `cbk_${short}_${randomBytes(32).toString("base64url")}`
    const record: KeyRecord = {
      id: `key_${short}`,
      name,
      prefix: `cbk_${short}`,
      created_at: now,
      last_used_at: null,
      revoked_at: null
    }
    this.db
      .prepare("INSERT INTO api_keys (id, prefix, hash, user_name, name, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(record.id, record.prefix, hashSecret(key), session.user, name, now)
    return { key, record }
  }

  listKeys(session: Session): ReadonlyArray<KeyRecord> {
    return this.db
      .prepare(
        "SELECT id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE user_name = ? ORDER BY created_at, id"
      )
      .all(session.user) as Array<KeyRecord>
  }

  /** Revokes one of the session user's keys; undefined when the user has no such key. */
  revokeKey(session: Session, id: string, now: number): KeyRecord | undefined {
    return this.db.transaction(() => {
      this.db
        .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND user_name = ? AND revoked_at IS NULL")
        .run(now, id, session.user)
      return this.db
        .prepare(
          "SELECT id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE id = ? AND user_name = ?"
        )
        .get(id, session.user) as KeyRecord | undefined
    })()
  }

  /** Whether an API key is valid (known, not revoked); notes its use at most once a minute. */
  checkKey(key: string, now: number): boolean {
    const m = KEY.exec(key)
    if (m === null) return false
    const row = this.db
      .prepare("SELECT id, hash, last_used_at, revoked_at FROM api_keys WHERE prefix = ?")
      .get(`cbk_${m[1]}`) as
      { id: string; hash: string; last_used_at: number | null; revoked_at: number | null } | undefined
    if (row === undefined || row.revoked_at !== null || !sameHash(row.hash, hashSecret(key))) return false
    if (row.last_used_at === null || now - row.last_used_at >= LAST_USED_EVERY_MS) {
      this.db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").run(now, row.id)
    }
    return true
  }
}
