/** The Auth seam: access tokens, grants of permissions on accounts, and the append-only audit log. */
import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer, Stream, SubscriptionRef } from "effect"
import { createHash, randomBytes, timingSafeEqual } from "node:crypto"
import { ApiError } from "../Domain/Errors.ts"
import * as Id from "../Domain/Ids.ts"

export const PERMISSIONS = ["view", "trade", "manage_credentials", "manage_members"] as const
export type Permission = (typeof PERMISSIONS)[number]

export interface Grant {
  readonly account: string
  readonly permission: Permission
}

/** Who a valid token speaks for, with the grants of its user. */
export interface Principal {
  readonly userId: string
  readonly name: string
  readonly tokenId: string
  readonly grants: ReadonlyArray<Grant>
}

/** The request a change came from, as the audit log records it. */
export interface RequestInfo {
  readonly method: string
  readonly path: string
}

export interface TokenRecord {
  readonly id: string
  readonly user: string
  readonly user_id: string
  readonly name: string
  readonly prefix: string
  readonly created_at: number
  readonly last_used_at: number | null
  readonly revoked_at: number | null
}

export interface GrantRecord {
  readonly user: string
  readonly user_id: string
  readonly account: string
  readonly permission: Permission
  readonly created_at: number
}

export interface AuditRecord {
  readonly id: number
  readonly ts: number
  readonly actor: { readonly user: string; readonly user_id: string; readonly token_id: string | null }
  readonly request: RequestInfo
  readonly action: string
  readonly subject: string
  readonly before: unknown
  readonly after: unknown
}

/** No permission implies another; a grant on `*` covers every account. */
export const allows = (principal: Principal, permission: Permission, account: string): boolean =>
  principal.grants.some((g) => g.permission === permission && (g.account === "*" || g.account === account))

/** `*` or `<venue>:<name>`. */
export const isAccount = (account: string): account is Id.AccountId | "*" =>
  account === "*" || /^[a-z][a-z0-9_-]*:[^\s:]+$/.test(account)

const TOKEN = /^cb_([A-Za-z0-9]{8})_([A-Za-z0-9_-]{43})$/
const ALPHANUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** `length` letters and digits from the system's secure random source: the readable part of a secret's name. */
export const randomId = (length: number): string => {
  const bytes = randomBytes(length)
  let out = ""
  for (let i = 0; i < length; i++) out += ALPHANUM[bytes[i]! % ALPHANUM.length]
  return out
}

const hashOf = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()

/** A new token: a readable prefix naming it, then 32 random bytes. The secret is the whole string. */
export const newToken = (): { readonly id: string; readonly prefix: string; readonly token: string } => {
  const short = randomId(8)
  return { id: `tok_${short}`, prefix: `cb_${short}`, token: `cb_${short}_${randomBytes(32).toString("base64url")}` }
}

const LAST_USED_EVERY_MS = 60_000

type AuthService = {
  /** The principal of a bearer token; 401 for a malformed, unknown or revoked one. */
  readonly authenticate: (token: string) => Effect.Effect<Principal, ApiError>
  /** On a control database with no user yet, creates the owner (all four permissions on `*`) and its token. */
  readonly bootstrapOwner: Effect.Effect<{ readonly token: string; readonly record: TokenRecord } | undefined>
  /** Another token for the owner, shown once; for the command line. */
  readonly createOwnerToken: (
    name: string,
    request: RequestInfo
  ) => Effect.Effect<{ readonly token: string; readonly record: TokenRecord }>
  /** Whether a token is still valid (exists, not revoked), without touching `last_used_at`. */
  readonly isValid: (token: string) => Effect.Effect<boolean>
  readonly issueToken: (
    actor: Principal,
    request: RequestInfo,
    input: { readonly user?: string | undefined; readonly name?: string | undefined }
  ) => Effect.Effect<{ readonly token: string; readonly record: TokenRecord }, ApiError>
  readonly listTokens: Effect.Effect<ReadonlyArray<TokenRecord>>
  readonly revokeToken: (actor: Principal, request: RequestInfo, id: string) => Effect.Effect<TokenRecord, ApiError>
  readonly listGrants: Effect.Effect<ReadonlyArray<GrantRecord>>
  readonly addGrant: (
    actor: Principal,
    request: RequestInfo,
    grant: { readonly user: string; readonly account: string; readonly permission: Permission }
  ) => Effect.Effect<{ readonly grant: GrantRecord; readonly created: boolean }, ApiError>
  readonly removeGrant: (
    actor: Principal,
    request: RequestInfo,
    grant: { readonly user: string; readonly account: string; readonly permission: Permission }
  ) => Effect.Effect<GrantRecord, ApiError>
  /** Audit rows, newest first, with id below `before` when given. */
  readonly audit: (before: number | undefined, limit: number) => Effect.Effect<ReadonlyArray<AuditRecord>>
  /**
   * A count of the changes to tokens and grants: the current one at once, then each new one once it is committed.
   * Holders of long-lived connections (the events socket) check their token again on each.
   */
  readonly changes: Stream.Stream<number>
}

export class Auth extends Context.Tag("crossbook/Auth")<Auth, AuthService>() {
  /** For the simulator and backtests: every token speaks for one owner with all permissions; nothing is stored. */
  static readonly layerAllowAll = Layer.succeed(Auth, {
    authenticate: () =>
      Effect.succeed({
        userId: "sim",
        name: "simulation",
        tokenId: "sim",
        grants: PERMISSIONS.map((permission) => ({ account: "*", permission }))
      }),
    bootstrapOwner: Effect.succeed(undefined),
    createOwnerToken: () => Effect.die("the simulator issues no tokens"),
    isValid: () => Effect.succeed(true),
    issueToken: () => Effect.fail(ApiError.notFound("the simulator issues no tokens")),
    listTokens: Effect.succeed([]),
    revokeToken: (_actor, _request, id) => Effect.fail(ApiError.notFound(`no token '${id}'`)),
    listGrants: Effect.succeed([]),
    addGrant: () => Effect.fail(ApiError.notFound("the simulator keeps no grants")),
    removeGrant: () => Effect.fail(ApiError.notFound("the simulator keeps no grants")),
    audit: () => Effect.succeed([]),
    changes: Stream.make(0)
  } satisfies AuthService)

  /** On the control database. Infrastructure failures are defects; each change and its audit row share a transaction. */
  static readonly layerSql = Layer.effect(
    Auth,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      /** Principals by token hash, dropped on every change of tokens or grants. */
      const cache = new Map<string, { principal: Principal; lastUsed: number | null }>()
      const generation = yield* SubscriptionRef.make(0)
      const change = <A, E>(effect: Effect.Effect<A, E>) =>
        sql.withTransaction(effect).pipe(
          Effect.catchTag("SqlError", Effect.die),
          Effect.ensuring(
            Effect.zipRight(
              Effect.sync(() => cache.clear()),
              SubscriptionRef.update(generation, (n) => n + 1)
            )
          )
        )

      const writeAudit = (row: {
        actor: AuditRecord["actor"]
        request: RequestInfo
        action: string
        subject: string
        before: unknown
        after: unknown
      }) =>
        Effect.flatMap(
          Clock.currentTimeMillis,
          (ts) =>
            sql`INSERT INTO audit (ts, actor, request, action, subject, before, after) VALUES (
              ${ts}, ${JSON.stringify(row.actor)}, ${JSON.stringify(row.request)}, ${row.action}, ${row.subject},
              ${row.before === null ? null : JSON.stringify(row.before)}, ${row.after === null ? null : JSON.stringify(row.after)})`
        )

      const actorOf = (p: Principal) => ({ user: p.name, user_id: p.userId, token_id: p.tokenId })

      const tokenRecord = (row: any): TokenRecord => ({
        id: row.id,
        user: row.user,
        user_id: row.user_id,
        name: row.name,
        prefix: row.prefix,
        created_at: row.created_at,
        last_used_at: row.last_used_at ?? null,
        revoked_at: row.revoked_at ?? null
      })

      const tokenById = (id: string) =>
        Effect.map(
          sql`SELECT t.*, u.name AS user FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ${id}`,
          (rows) => (rows[0] === undefined ? undefined : tokenRecord(rows[0]))
        )

      const userByName = (name: string) =>
        Effect.map(
          sql<{ id: string; name: string }>`SELECT id, name FROM users WHERE name = ${name}`,
          (rows) => rows[0]
        )

      const ensureUser = (name: string, actor: AuditRecord["actor"], request: RequestInfo) =>
        Effect.gen(function* () {
          const existing = yield* userByName(name)
          if (existing !== undefined) return existing
          const ts = yield* Clock.currentTimeMillis
          const user = { id: `usr_${randomId(10)}`, name }
          yield* sql`INSERT INTO users (id, name, created_at) VALUES (${user.id}, ${user.name}, ${ts})`
          yield* writeAudit({
            actor,
            request,
            action: "user.create",
            subject: `user:${name}`,
            before: null,
            after: { id: user.id, name, created_at: ts }
          })
          return user
        })

      const insertToken = (userId: string, name: string, actor: AuditRecord["actor"], request: RequestInfo) =>
        Effect.gen(function* () {
          const fresh = newToken()
          const ts = yield* Clock.currentTimeMillis
          yield* sql`INSERT INTO tokens (id, user_id, name, prefix, hash, created_at)
            VALUES (${fresh.id}, ${userId}, ${name}, ${fresh.prefix}, ${hashOf(fresh.token).toString("hex")}, ${ts})`
          const record = (yield* tokenById(fresh.id))!
          yield* writeAudit({
            actor,
            request,
            action: "token.issue",
            subject: `token:${fresh.id}`,
            before: null,
            after: record
          })
          return { token: fresh.token, record }
        })

      const grantRecord = (row: any): GrantRecord => ({
        user: row.user,
        user_id: row.user_id,
        account: row.account,
        permission: row.permission,
        created_at: row.created_at
      })

      const findGrant = (userId: string, account: string, permission: Permission) =>
        Effect.map(
          sql`SELECT g.*, u.name AS user FROM grants g JOIN users u ON u.id = g.user_id
            WHERE g.user_id = ${userId} AND g.account = ${account} AND g.permission = ${permission}`,
          (rows) => (rows[0] === undefined ? undefined : grantRecord(rows[0]))
        )

      /** Finds the live token row of a token string, comparing hashes in constant time. */
      const lookup = (token: string) =>
        Effect.gen(function* () {
          const m = TOKEN.exec(token)
          if (m === null) return undefined
          const rows = yield* sql<{
            id: string
            user_id: string
            hash: string
            revoked_at: number | null
            last_used_at: number | null
            user: string
          }>`
            SELECT t.id, t.user_id, t.hash, t.revoked_at, t.last_used_at, u.name AS user
            FROM tokens t JOIN users u ON u.id = t.user_id WHERE t.prefix = ${`cb_${m[1]}`}`
          const row = rows[0]
          if (row === undefined) return undefined
          const stored = Buffer.from(row.hash, "hex")
          const given = hashOf(token)
          if (stored.length !== given.length || !timingSafeEqual(stored, given)) return undefined
          if (row.revoked_at !== null) return undefined
          return row
        })

      const system = { user: "system", user_id: "system", token_id: null }

      const service: AuthService = {
        authenticate: Effect.fnUntraced(
          function* (token: string) {
            const key = hashOf(token).toString("hex")
            const now = yield* Clock.currentTimeMillis
            const cached = cache.get(key)
            if (cached !== undefined && cached.lastUsed !== null && now - cached.lastUsed < LAST_USED_EVERY_MS) {
              return cached.principal
            }
            const row = yield* lookup(token)
            if (row === undefined) return yield* Effect.fail(ApiError.unauthorized("unknown or revoked access token"))
            const grants = yield* sql<{ account: string; permission: Permission }>`
              SELECT account, permission FROM grants WHERE user_id = ${row.user_id} ORDER BY account, permission`
            yield* sql`UPDATE tokens SET last_used_at = ${now} WHERE id = ${row.id}`
            const principal: Principal = { userId: row.user_id, name: row.user, tokenId: row.id, grants }
            cache.set(key, { principal, lastUsed: now })
            return principal
          },
          Effect.catchTag("SqlError", Effect.die)
        ),

        bootstrapOwner: change(
          Effect.gen(function* () {
            const users = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM users`
            if ((users[0]?.n ?? 0) > 0) return undefined
            const request = { method: "BOOTSTRAP", path: "serve" }
            const owner = yield* ensureUser("owner", system, request)
            const ts = yield* Clock.currentTimeMillis
            for (const permission of PERMISSIONS) {
              yield* sql`INSERT INTO grants (user_id, account, permission, created_at) VALUES (${owner.id}, '*', ${permission}, ${ts})`
              yield* writeAudit({
                actor: system,
                request,
                action: "grant.add",
                subject: `grant:owner|*|${permission}`,
                before: null,
                after: { user: "owner", user_id: owner.id, account: "*", permission, created_at: ts }
              })
            }
            return yield* insertToken(owner.id, "owner", system, request)
          })
        ),

        createOwnerToken: (name, request) =>
          change(
            Effect.gen(function* () {
              const owner = yield* userByName("owner")
              if (owner === undefined) {
                const created = yield* service.bootstrapOwner
                if (created !== undefined) return created
              }
              return yield* insertToken((yield* userByName("owner"))!.id, name, system, request)
            })
          ),

        isValid: (token) =>
          lookup(token).pipe(
            Effect.map((row) => row !== undefined),
            Effect.catchTag("SqlError", Effect.die)
          ),

        issueToken: (actor, request, input) =>
          change(
            Effect.gen(function* () {
              const userName = input.user ?? actor.name
              const user = yield* userByName(userName)
              if (user === undefined) {
                return yield* Effect.fail(
                  ApiError.notFound(`no user '${userName}'; users are created by POST /trading/grants`)
                )
              }
              return yield* insertToken(user.id, input.name ?? userName, actorOf(actor), request)
            })
          ),

        listTokens:
          sql`SELECT t.*, u.name AS user FROM tokens t JOIN users u ON u.id = t.user_id ORDER BY t.created_at, t.id`.pipe(
            Effect.map((rows) => rows.map(tokenRecord)),
            Effect.orDie
          ),

        revokeToken: (actor, request, id) =>
          change(
            Effect.gen(function* () {
              const before = yield* tokenById(id)
              if (before === undefined) return yield* Effect.fail(ApiError.notFound(`no token '${id}'`))
              if (before.revoked_at !== null) return before
              const ts = yield* Clock.currentTimeMillis
              yield* sql`UPDATE tokens SET revoked_at = ${ts} WHERE id = ${id}`
              const after = (yield* tokenById(id))!
              yield* writeAudit({
                actor: actorOf(actor),
                request,
                action: "token.revoke",
                subject: `token:${id}`,
                before,
                after
              })
              return after
            })
          ),

        listGrants: sql`SELECT g.*, u.name AS user FROM grants g JOIN users u ON u.id = g.user_id
          ORDER BY u.name, g.account, g.permission`.pipe(
          Effect.map((rows) => rows.map(grantRecord)),
          Effect.orDie
        ),

        addGrant: (actor, request, grant) =>
          change(
            Effect.gen(function* () {
              const user = yield* ensureUser(grant.user, actorOf(actor), request)
              const existing = yield* findGrant(user.id, grant.account, grant.permission)
              if (existing !== undefined) return { grant: existing, created: false }
              const ts = yield* Clock.currentTimeMillis
              yield* sql`INSERT INTO grants (user_id, account, permission, created_at)
                VALUES (${user.id}, ${grant.account}, ${grant.permission}, ${ts})`
              const after = (yield* findGrant(user.id, grant.account, grant.permission))!
              yield* writeAudit({
                actor: actorOf(actor),
                request,
                action: "grant.add",
                subject: `grant:${grant.user}|${grant.account}|${grant.permission}`,
                before: null,
                after
              })
              return { grant: after, created: true }
            })
          ),

        removeGrant: (actor, request, grant) =>
          change(
            Effect.gen(function* () {
              const user = yield* userByName(grant.user)
              const before = user === undefined ? undefined : yield* findGrant(user.id, grant.account, grant.permission)
              if (user === undefined || before === undefined) {
                return yield* Effect.fail(
                  ApiError.notFound(`no grant of '${grant.permission}' on '${grant.account}' to '${grant.user}'`)
                )
              }
              yield* sql`DELETE FROM grants WHERE user_id = ${user.id} AND account = ${grant.account} AND permission = ${grant.permission}`
              yield* writeAudit({
                actor: actorOf(actor),
                request,
                action: "grant.remove",
                subject: `grant:${grant.user}|${grant.account}|${grant.permission}`,
                before,
                after: null
              })
              return before
            })
          ),

        audit: (before, limit) =>
          (before === undefined
            ? sql`SELECT * FROM audit ORDER BY id DESC LIMIT ${limit}`
            : sql`SELECT * FROM audit WHERE id < ${before} ORDER BY id DESC LIMIT ${limit}`
          ).pipe(
            Effect.map((rows) =>
              rows.map((row: any): AuditRecord => ({
                id: row.id,
                ts: row.ts,
                actor: JSON.parse(row.actor),
                request: JSON.parse(row.request),
                action: row.action,
                subject: row.subject,
                before: row.before === null ? null : JSON.parse(row.before),
                after: row.after === null ? null : JSON.parse(row.after)
              }))
            ),
            Effect.orDie
          ),

        changes: generation.changes
      }
      return service
    })
  )
}
