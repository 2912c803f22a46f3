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
  readonly setup?: (owner: string, market: string) => Effect.Effect<string, unknown, any>
}

const order = (market: string) => ({ market_id: market, side: "buy", amount: "1", type: "limit", price: "0.01" })

/** A resting order placed by the owner; answers its id. */
const placed = (owner: string, market: string) =>
  Effect.map(request("POST", "/trading/orders", { token: owner, json: order(market) }), (r) => {
    assert.strictEqual(r.status, 201, r.text)
    return r.body.id as string
  })

const RULES = {
  kill_switch: false,
  max_order_contracts: null,
  max_order_notional: null,
  price_collar: null,
  max_open_orders: null,
  max_position_contracts: null,
  max_orders_per_minute: null,
  daily_loss_limit: null
}

const desk = (
  method: Method,
  path: string,
  permission: Route["permission"],
  ok: ReadonlyArray<number>,
  extra: Partial<Route> = {}
): Route => ({ method, path, permission, account: "sim:default", ok, ...extra })

/** Every /trading route of the contract, with the permission it needs. `{market}` stands for an open market's id. */
const ROUTES: ReadonlyArray<Route> = [
  { method: "GET", path: "/trading/me", permission: "any", account: "*", ok: [200] },
  desk("GET", "/trading/accounts", "view", [200]),
  desk("GET", "/trading/status", "view", [200]),
  desk("POST", "/trading/orders", "trade", [201], { json: "order" }),
  desk("GET", "/trading/orders", "view", [200]),
  desk("GET", "", "view", [200], {
    setup: (owner, market) => Effect.map(placed(owner, market), (id) => `/trading/orders/${id}`)
  }),
  desk("PATCH", "", "trade", [200], {
    json: { price: "0.02" },
    setup: (owner, market) => Effect.map(placed(owner, market), (id) => `/trading/orders/${id}`)
  }),
  desk("DELETE", "", "trade", [200], {
    setup: (owner, market) => Effect.map(placed(owner, market), (id) => `/trading/orders/${id}`)
  }),
  desk("DELETE", "/trading/orders", "trade", [200]),
  desk("GET", "/trading/fills", "view", [200]),
  desk("GET", "/trading/positions", "view", [200]),
  desk("GET", "/trading/balances", "view", [200]),
  desk("GET", "/trading/pnl", "view", [200]),
  desk("GET", "/trading/fair-values", "view", [200]),
  desk("PUT", "/trading/fair-values", "trade", [200], { json: { values: {} } }),
  desk("GET", "/trading/risk", "view", [200]),
  desk("PUT", "/trading/risk", "manage_credentials", [200], { json: RULES }),
  desk("POST", "/trading/halt", "trade", [200], { json: { reason: "matrix", scope: "*", policy: "hold" } }),
  desk("POST", "/trading/resume", "trade", [200]),
  desk("GET", "/metrics", "view", [200]),
  { method: "POST", path: "/trading/keys", permission: "manage_credentials", account: "*", json: {}, ok: [201] },
  { method: "GET", path: "/trading/keys", permission: "manage_credentials", account: "*", ok: [200] },
  {
    method: "DELETE",
    path: "",
    permission: "manage_credentials",
    account: "*",
    ok: [200],
    setup: (owner: string) =>
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
        const market = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0].id as string
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
              const path = route.setup === undefined ? route.path : yield* route.setup(owner, market)
              const json = route.json === "order" ? order(market) : route.json
              const res = yield* request(route.method, path, { token, ...(json === undefined ? {} : { json }) })
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
        const owner = yield* OwnerToken
        const market = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0].id as string
        for (const route of ROUTES) {
          const path = route.setup === undefined ? route.path : yield* route.setup(owner, market)
          const json = route.json === "order" ? order("sim:X") : route.json
          const res = yield* request(route.method, path, json === undefined ? {} : { json })
          assert.strictEqual(res.status, 401, `${route.method} ${path}`)
          assert.strictEqual(res.body.error.code, "unauthorized")
        }
      })
    )
  })
})
