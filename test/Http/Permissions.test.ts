import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { OwnerToken, request, TestServerLive } from "./TestServer.ts"

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"
const PERMISSIONS = ["view", "trade", "manage_credentials", "manage_members"] as const

interface Route {
  readonly method: Method
  readonly path: string
  readonly permission: (typeof PERMISSIONS)[number] | "any"
  /** The account the operation concerns. */
  readonly account: "sim:default" | "*"
  readonly json?: unknown
  /** Statuses a permitted caller may see (2xx, or 501 where this version has no handler yet). */
  readonly ok: ReadonlyArray<number>
  /** Prepares what the call needs, with the owner's token, and answers the final path. */
  readonly setup?: (owner: string) => Effect.Effect<string, unknown, any>
}

const pending = (method: Method, path: string, permission: Route["permission"], json?: unknown): Route => ({
  method,
  path,
  permission,
  account: "sim:default",
  ...(json === undefined ? {} : { json }),
  ok: [501]
})

/** Every /trading route of the contract, with the permission it needs. */
const ROUTES: ReadonlyArray<Route> = [
  { method: "GET", path: "/trading/me", permission: "any", account: "*", ok: [200] },
  { method: "GET", path: "/trading/accounts", permission: "view", account: "sim:default", ok: [200] },
  { method: "GET", path: "/trading/status", permission: "view", account: "sim:default", ok: [200] },
  pending("POST", "/trading/orders", "trade", { market_id: "sim:X", side: "buy", amount: "1", type: "limit" }),
  pending("GET", "/trading/orders", "view"),
  pending("GET", "/trading/orders/o_1", "view"),
  pending("PATCH", "/trading/orders/o_1", "trade", { price: "0.5" }),
  pending("DELETE", "/trading/orders/o_1", "trade"),
  pending("DELETE", "/trading/orders", "trade"),
  pending("GET", "/trading/fills", "view"),
  pending("GET", "/trading/positions", "view"),
  pending("GET", "/trading/balances", "view"),
  pending("GET", "/trading/pnl", "view"),
  pending("GET", "/trading/fair-values", "view"),
  pending("PUT", "/trading/fair-values", "trade", {}),
  pending("GET", "/trading/risk", "view"),
  pending("PUT", "/trading/risk", "manage_credentials", {}),
  pending("POST", "/trading/halt", "trade", { reason: "test", scope: "*", policy: "hold" }),
  pending("POST", "/trading/resume", "trade", {}),
  { method: "POST", path: "/trading/keys", permission: "manage_credentials", account: "*", json: {}, ok: [201] },
  { method: "GET", path: "/trading/keys", permission: "manage_credentials", account: "*", ok: [200] },
  {
    method: "DELETE",
    path: "",
    permission: "manage_credentials",
    account: "*",
    ok: [200],
    setup: (owner) =>
      Effect.map(
        request("POST", "/trading/keys", { token: owner, json: { name: "victim" } }),
        (r) => `/trading/keys/${r.body.id}`
      )
  },
  { method: "GET", path: "/trading/grants", permission: "manage_members", account: "*", ok: [200] },
  {
    method: "POST",
    path: "/trading/grants",
    permission: "manage_members",
    account: "sim:default",
    json: { user: "matrix-subject", account: "sim:default", permission: "view" },
    ok: [200, 201]
  },
  {
    method: "DELETE",
    path: "",
    permission: "manage_members",
    account: "sim:default",
    ok: [200],
    setup: (owner) =>
      Effect.as(
        request("POST", "/trading/grants", {
          token: owner,
          json: { user: "matrix-removed", account: "sim:default", permission: "trade" }
        }),
        "/trading/grants?user=matrix-removed&account=sim:default&permission=trade"
      )
  },
  { method: "GET", path: "/trading/audit", permission: "manage_members", account: "*", ok: [200] }
]

const SCOPES = ["sim:default", "sim:other", "*"] as const

describe("permission matrix", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("every /trading route × each permission on the right account, another account and *", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        const tokens = new Map<string, string>()
        for (const permission of PERMISSIONS) {
          for (const scope of SCOPES) {
            const user = `u-${permission}-${scope.replace(/[^a-z*]/g, "")}`.replace("*", "star")
            yield* request("POST", "/trading/grants", { token: owner, json: { user, account: scope, permission } })
            const key = yield* request("POST", "/trading/keys", { token: owner, json: { user } })
            assert.strictEqual(key.status, 201, key.text)
            tokens.set(`${permission}|${scope}`, key.body.token)
          }
        }
        let checked = 0
        for (const route of ROUTES) {
          for (const permission of PERMISSIONS) {
            for (const scope of SCOPES) {
              const token = tokens.get(`${permission}|${scope}`)!
              const path = route.setup === undefined ? route.path : yield* route.setup(owner)
              const res = yield* request(route.method, path, {
                token,
                ...(route.json === undefined ? {} : { json: route.json })
              })
              const label = `${route.method} ${path} with ${permission} on ${scope}`
              const permitted =
                route.permission === "any" ||
                (route.permission === permission && (scope === route.account || scope === "*"))
              if (permitted) {
                assert.include(route.ok, res.status, `${label}: ${res.text}`)
              } else {
                assert.strictEqual(res.status, 403, `${label}: ${res.text}`)
                assert.strictEqual(res.body.error.code, "forbidden")
                assert.strictEqual(res.body.error.details.permission, route.permission)
                assert.include(res.body.error.message, route.permission)
              }
              checked++
            }
          }
        }
        assert.strictEqual(checked, ROUTES.length * PERMISSIONS.length * SCOPES.length)
      })
    )

    it.effect("every /trading route answers 401 without a token", () =>
      Effect.gen(function* () {
        for (const route of ROUTES) {
          const path = route.path === "" ? "/trading/keys/tok_x" : route.path
          const res = yield* request(route.method, path, route.json === undefined ? {} : { json: route.json })
          assert.strictEqual(res.status, 401, `${route.method} ${path}`)
          assert.strictEqual(res.body.error.code, "unauthorized")
        }
      })
    )
  })
})
