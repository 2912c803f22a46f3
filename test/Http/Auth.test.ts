import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { newToken } from "../../src/Services/Auth.ts"
import { OwnerToken, type RawResponse, request, testServer, TestServerLive } from "./TestServer.ts"

const assertError = (res: RawResponse, status: number, code: string) => {
  assert.strictEqual(res.status, status, res.text)
  assert.strictEqual(res.body.error.code, code)
  assert.isString(res.body.error.message)
  assert.property(res.body.error.details, "venue")
  assert.isBoolean(res.body.error.details.retryable)
}

const rawGet = (path: string, authorization: string | undefined) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let req = HttpClientRequest.get(path)
    if (authorization !== undefined) req = HttpClientRequest.setHeader(req, "authorization", authorization)
    const response = yield* client.execute(req)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, body: JSON.parse(text), text } as RawResponse
  }).pipe(Effect.scoped)

/** Makes a user with one grant and answers a token of that user. */
const userWith = (owner: string, user: string, account: string, permission: string) =>
  Effect.gen(function* () {
    const grant = yield* request("POST", "/trading/grants", { token: owner, json: { user, account, permission } })
    assert.include([200, 201], grant.status, grant.text)
    const key = yield* request("POST", "/trading/keys", { token: owner, json: { user, name: `${user}-key` } })
    assert.strictEqual(key.status, 201, key.text)
    return key.body.token as string
  })

describe("access tokens", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("401 for no token, a wrong scheme, a malformed, an unknown and a revoked token", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        assertError(yield* rawGet("/trading/me", undefined), 401, "unauthorized")
        assertError(yield* rawGet("/trading/me", `Basic ${owner}`), 401, "unauthorized")
        assertError(yield* rawGet("/trading/me", owner), 401, "unauthorized")
        assertError(yield* rawGet("/trading/me", "Bearer "), 401, "unauthorized")
        assertError(yield* rawGet("/trading/me", "Bearer not-a-token"), 401, "unauthorized")
        assertError(yield* rawGet("/trading/me", `Bearer ${newToken().token}`), 401, "unauthorized")
        const issued = yield* request("POST", "/trading/keys", { token: owner, json: { name: "to-revoke" } })
        assert.strictEqual((yield* rawGet("/trading/me", `Bearer ${issued.body.token}`)).status, 200)
        const revoked = yield* request("DELETE", `/trading/keys/${issued.body.id}`, { token: owner })
        assert.strictEqual(revoked.status, 200)
        assert.isNumber(revoked.body.revoked_at)
        assertError(yield* rawGet("/trading/me", `Bearer ${issued.body.token}`), 401, "unauthorized")
      })
    )

    it.effect("the token is also taken from X-API-Key; Authorization wins when both are sent", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const client = yield* HttpClient.HttpClient
        const send = (headers: Record<string, string>) =>
          Effect.flatMap(
            client.execute(HttpClientRequest.get("/trading/me").pipe(HttpClientRequest.setHeaders(headers))),
            (r) => Effect.map(r.json, (body: any) => ({ status: r.status, body }))
          ).pipe(Effect.scoped)
        const byKey = yield* send({ "x-api-key": owner })
        assert.strictEqual(byKey.status, 200)
        assert.strictEqual(byKey.body.name, "owner")
        assert.strictEqual((yield* send({ "X-API-Key": `  ${owner} ` })).status, 200)
        assert.strictEqual((yield* send({ "x-api-key": newToken().token })).body.error.code, "unauthorized")
        const both = yield* send({ authorization: "Bearer not-a-token", "x-api-key": owner })
        assert.strictEqual(both.status, 401)
      })
    )

    it.effect("GET /trading/me names the user, the token and its permissions per account", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const me = yield* request("GET", "/trading/me", { token: owner })
        assert.strictEqual(me.status, 200)
        assert.strictEqual(me.body.name, "owner")
        assert.match(me.body.token_id, /^tok_/)
        assert.deepStrictEqual(me.body.accounts, [
          { account: "*", permissions: ["view", "trade", "manage_credentials", "manage_members"] }
        ])
        const viewer = yield* userWith(owner, "me-viewer", "sim:default", "view")
        const mine = yield* request("GET", "/trading/me", { token: viewer })
        assert.deepStrictEqual(mine.body.accounts, [{ account: "sim:default", permissions: ["view"] }])
      })
    )

    it.effect("an issued token is shown once, listed without its secret, and carries its user's permissions", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const issued = yield* request("POST", "/trading/keys", { token: owner, json: { name: "laptop" } })
        assert.strictEqual(issued.status, 201)
        assert.match(issued.body.token, /^cb_[A-Za-z0-9]{8}_[A-Za-z0-9_-]{43}$/)
        assert.isTrue(issued.body.token.startsWith(issued.body.prefix))
        const list = yield* request("GET", "/trading/keys", { token: owner })
        assert.strictEqual(list.status, 200)
        assert.notInclude(list.text, issued.body.token)
        assert.notInclude(list.text, issued.body.token.slice(issued.body.prefix.length + 1))
        const row = list.body.data.find((t: any) => t.id === issued.body.id)
        assert.strictEqual(row.name, "laptop")
        assert.notProperty(row, "token")
        const me = yield* request("GET", "/trading/me", { token: issued.body.token })
        assert.strictEqual(me.body.name, "owner")
        const missing = yield* request("POST", "/trading/keys", { token: owner, json: { user: "nobody-here" } })
        assertError(missing, 404, "not_found")
      })
    )

    it.effect("malformed JSON is 400 with field body; a body off its schema is 422 with details.errors", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const malformed = yield* request("POST", "/trading/grants", { token: owner, rawBody: '{"user": ' })
        assertError(malformed, 400, "validation_error")
        assert.deepStrictEqual(malformed.body.error.details.errors[0].field, "body")
        const wrong = yield* request("POST", "/trading/grants", {
          token: owner,
          json: { user: "x", account: "sim:default", permission: "fly" }
        })
        assertError(wrong, 422, "validation_error")
        assert.strictEqual(wrong.body.error.details.errors[0].field, "permission")
        const missing = yield* request("POST", "/trading/grants", { token: owner, json: { user: "x" } })
        assertError(missing, 422, "validation_error")
        const fields = missing.body.error.details.errors.map((e: any) => e.field).sort()
        assert.includeMembers(fields, ["account"])
        const badAccount = yield* request("POST", "/trading/grants", {
          token: owner,
          json: { user: "x", account: "nasdaq:main", permission: "view" }
        })
        assertError(badAccount, 400, "unknown_venue")
      })
    )
  })
})

describe("grants and the audit log", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("every grant and token change writes exactly one audit row; no change writes none", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const audit = () => request("GET", "/trading/audit?limit=1000", { token: owner })
        const start = (yield* audit()).body.count
        const add = yield* request("POST", "/trading/grants", {
          token: owner,
          json: { user: "carol", account: "sim:default", permission: "trade" }
        })
        assert.strictEqual(add.status, 201)
        const afterAdd = (yield* audit()).body
        // A new user and its grant: two changes, two rows.
        assert.strictEqual(afterAdd.count, start + 2)
        assert.deepStrictEqual(
          afterAdd.data.slice(0, 2).map((r: any) => r.action),
          ["grant.add", "user.create"]
        )
        const row = afterAdd.data[0]
        assert.strictEqual(row.actor.user, "owner")
        assert.deepStrictEqual(row.request, { method: "POST", path: "/trading/grants" })
        assert.isNull(row.before)
        assert.strictEqual(row.after.permission, "trade")
        const again = yield* request("POST", "/trading/grants", {
          token: owner,
          json: { user: "carol", account: "sim:default", permission: "trade" }
        })
        assert.strictEqual(again.status, 200)
        assert.strictEqual((yield* audit()).body.count, start + 2)
        const key = yield* request("POST", "/trading/keys", { token: owner, json: { user: "carol" } })
        assert.strictEqual((yield* audit()).body.data[0].action, "token.issue")
        yield* request("DELETE", `/trading/keys/${key.body.id}`, { token: owner })
        const revokeRow = (yield* audit()).body.data[0]
        assert.strictEqual(revokeRow.action, "token.revoke")
        assert.isNull(revokeRow.before.revoked_at)
        assert.isNumber(revokeRow.after.revoked_at)
        const del = yield* request("DELETE", "/trading/grants?user=carol&account=sim:default&permission=trade", {
          token: owner
        })
        assert.strictEqual(del.status, 200)
        const end = (yield* audit()).body
        assert.strictEqual(end.count, start + 5)
        assert.strictEqual(end.data[0].action, "grant.remove")
        assert.isNull(end.data[0].after)
        const gone = yield* request("DELETE", "/trading/grants?user=carol&account=sim:default&permission=trade", {
          token: owner
        })
        assertError(gone, 404, "not_found")
        assert.strictEqual((yield* audit()).body.count, start + 5)
      })
    )

    it.effect("the audit log pages newest first, every row once", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        for (let i = 0; i < 5; i++) {
          yield* request("POST", "/trading/grants", {
            token: owner,
            json: { user: `pager${i}`, account: "sim:default", permission: "view" }
          })
        }
        const all = (yield* request("GET", "/trading/audit?limit=1000", { token: owner })).body.data.map(
          (r: any) => r.id
        )
        assert.deepStrictEqual(
          all,
          [...all].sort((a: number, b: number) => b - a)
        )
        const seen: Array<number> = []
        let cursor: string | null = null
        do {
          const page: RawResponse = yield* request(
            "GET",
            `/trading/audit?limit=3${cursor === null ? "" : `&cursor=${cursor}`}`,
            { token: owner }
          )
          seen.push(...page.body.data.map((r: any) => r.id))
          cursor = page.body.next_cursor
        } while (cursor !== null)
        assert.deepStrictEqual(seen, all)
      })
    )
  })
})

describe("secrets and the append-only table on disk", () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-auth-"))
  const control = join(dir, "control.db")
  const engine = join(dir, "engine.db")

  it.effect("an issued secret appears nowhere in either database file, and works", () =>
    Effect.gen(function* () {
      const owner = yield* OwnerToken
      const issued = yield* request("POST", "/trading/keys", { token: owner, json: { name: "disk" } })
      assert.strictEqual(issued.status, 201)
      const me = yield* request("GET", "/trading/me", { token: issued.body.token })
      assert.strictEqual(me.status, 200)
      const secretPart = issued.body.token.slice(issued.body.prefix.length + 1)
      for (const file of [control, `${control}-wal`, engine, `${engine}-wal`]) {
        let bytes: Buffer
        try {
          bytes = readFileSync(file)
        } catch {
          continue
        }
        for (const secret of [owner, issued.body.token, secretPart, owner.slice(12)]) {
          assert.strictEqual(bytes.indexOf(Buffer.from(secret, "utf8")), -1, `${secret.slice(0, 6)}… in ${file}`)
        }
      }
    }).pipe(Effect.provide(testServer({ control, engine })))
  )

  it("a direct UPDATE or DELETE on the audit table fails", () => {
    const db = new Database(control)
    const count = (db.prepare("SELECT COUNT(*) AS n FROM audit").get() as { n: number }).n
    assert.isAbove(count, 0)
    assert.throws(() => db.prepare("UPDATE audit SET action = 'forged'").run(), /append-only/)
    assert.throws(() => db.prepare("DELETE FROM audit").run(), /append-only/)
    assert.strictEqual((db.prepare("SELECT COUNT(*) AS n FROM audit").get() as { n: number }).n, count)
    db.close()
  })
})
