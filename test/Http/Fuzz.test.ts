/**
 * Malformed and adversarial requests against a running server: every answer is 2xx or 101, or carries the error body
 * with a code that matches its status; none is 5xx. Seeded; `npm run test:long` runs many more with a random seed.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import fc from "fast-check"
import { PLAIN_TYPES } from "../../src/Domain/Order.ts"
import { COMPLEX_TYPES } from "../../src/Engine/Registry.ts"
import { MAX_BODY_BYTES, MAX_HEADER_BYTES } from "../../src/Http/BodyGuard.ts"
import { OwnerToken, rawExchange, type RawExchange, request, testServer } from "./TestServer.ts"

const LONG = process.env["CROSSBOOK_LONG"] !== undefined
const SEED = LONG ? Math.floor(Math.random() * 2 ** 31) : 20_261_123
const RUNS = LONG ? 20_000 : 1000

/** The statuses each error code may come with. */
const STATUSES_OF: Record<string, ReadonlyArray<number>> = {
  validation_error: [400, 408, 413, 414, 415, 422, 431, 505],
  not_supported: [501],
  unknown_venue: [400],
  order_rejected: [400],
  insufficient_funds: [400],
  unauthorized: [401],
  forbidden: [403],
  not_found: [404],
  market_not_found: [404],
  risk_rejected: [409],
  rate_limit_exceeded: [429]
}

// The access log would print a line per refusal: only errors are shown.
const runtime = ManagedRuntime.make(testServer().pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error))))
let token = ""
let market = ""
let orderId = "o_000001"

beforeAll(async () => {
  token = await runtime.runPromise(OwnerToken)
  market = await runtime.runPromise(
    Effect.map(request("GET", "/venues/sim/markets?limit=1"), (r) => r.body.data[0].id as string)
  )
  const placed = await runtime.runPromise(
    request("POST", "/trading/orders", {
      token,
      json: { market_id: market, side: "buy", type: "limit", amount: "1", price: "0.01" }
    })
  )
  orderId = placed.body.id
})

afterAll(() => runtime.dispose())

const ROUTES = [
  "/",
  "/health",
  "/openapi.json",
  "/venues",
  "/venues/sim",
  "/venues/nope",
  "/venues/sim/markets",
  "/venues/sim/markets/{market}",
  "/venues/sim/markets/{market}/book",
  "/venues/sim/markets/{market}/trades",
  "/venues/sim/markets/kalshi:X/book",
  "/trading/me",
  "/trading/accounts",
  "/trading/status",
  "/trading/orders",
  "/trading/orders/{order}",
  "/trading/orders/o_999999",
  "/trading/fills",
  "/trading/positions",
  "/trading/balances",
  "/trading/pnl",
  "/trading/fair-values",
  "/trading/risk",
  "/trading/halt",
  "/trading/resume",
  "/trading/keys",
  "/trading/keys/tok_nothere",
  "/trading/grants",
  "/trading/audit",
  "/trading/ws/events",
  "/no/such/route"
]

const QUERY_KEYS = [
  "limit",
  "cursor",
  "status",
  "since",
  "depth",
  "side",
  "search",
  "query",
  "account",
  "parent_id",
  "market_id",
  "level",
  "kinds",
  "key",
  "user",
  "permission",
  "book"
]
const QUERY_VALUES = fc.oneof(
  fc.constantFrom("", "0", "-1", "1001", "1e3", "abc", "all", "open,canceled", "sim:default", "*", "yes", "no", "%00"),
  fc.integer({ min: -5, max: 5000 }).map(String),
  fc.string({ maxLength: 20 }).map(encodeURIComponent)
)

const word = fc.stringMatching(/^[a-z_]{1,12}$/)
const decimal = fc.oneof(
  fc.constantFrom("0.5", "0.01", "1", "0", "-1", "1.5", "0.333", "1e-2", "NaN", ""),
  fc.double().map(String)
)

/** A place-order body, sometimes right, mostly wrong in one or more ways. */
const orderBody = fc
  .record(
    {
      market_id: fc.oneof(fc.constant("{market}"), fc.constantFrom("sim:NOPE", "kalshi:X", "", "::"), fc.string()),
      side: fc.oneof(fc.constantFrom("buy", "sell"), fc.string({ maxLength: 5 }), fc.integer()),
      type: fc.constantFrom(...PLAIN_TYPES, ...COMPLEX_TYPES, "nope"),
      amount: fc.oneof(decimal, fc.integer()),
      price: fc.oneof(decimal, fc.double(), fc.constant(null)),
      stop_price: decimal,
      time_in_force: fc.constantFrom("gtc", "gtd", "ioc", "fok", "day", 1),
      expires_at: fc.oneof(fc.integer(), fc.constant(-1), fc.string()),
      post_only: fc.oneof(fc.boolean(), fc.constant("true")),
      reduce_only: fc.oneof(fc.boolean(), fc.constant(0)),
      client_order_id: fc.oneof(fc.string({ maxLength: 80 }), fc.constant("dup")),
      account: fc.oneof(
        fc.constantFrom("sim:default", "sim:other", "*", "nope", "kalshi:default"),
        fc.record({
          venue: fc.constantFrom("sim", "x"),
          name: fc.constantFrom("default", "y"),
          subaccount: fc.anything()
        })
      ),
      tags: fc.oneof(fc.dictionary(fc.string({ maxLength: 70 }), fc.jsonValue({ maxDepth: 5 })), fc.anything()),
      notes: fc.oneof(
        fc.string(),
        fc.nat({ max: 4000 }).map((n) => "n".repeat(n))
      ),
      params: fc.oneof(
        fc.dictionary(
          fc.constantFrom("display", "window_s", "slices", "trail", "legs", "entry", "clip", "reference", "x"),
          fc.jsonValue({ maxDepth: 3 })
        ),
        fc.anything()
      ),
      [`extra_${"field"}`]: fc.anything()
    },
    { requiredKeys: [] }
  )
  .chain((body) =>
    fc.constant(JSON.parse(JSON.stringify(body).replaceAll('"{market}"', JSON.stringify(market || "sim:X"))))
  )

/** What goes in a body: JSON of every kind, broken JSON, deep nesting, huge strings. */
const bodyText = fc.oneof(
  orderBody.map((b) => JSON.stringify(b)),
  fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
  orderBody.chain((b) => fc.nat({ max: 60 }).map((n) => JSON.stringify(b).slice(0, n))),
  fc.integer({ min: 1, max: 20_000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
  fc.integer({ min: 1, max: 3000 }).map((n) => '{"a":'.repeat(n) + "1" + "}".repeat(n)),
  fc
    .constantFrom(MAX_BODY_BYTES - 100, MAX_BODY_BYTES + 1, 2 * MAX_BODY_BYTES)
    .map((n) => `{"notes":"${"x".repeat(n)}"}`),
  fc.string({ maxLength: 200 }),
  fc
    .record({ user: word, account: fc.constantFrom("sim:default", "*", "x:y"), permission: word }, { requiredKeys: [] })
    .map((b) => JSON.stringify(b)),
  fc
    .record({ reason: fc.string(), scope: fc.string(), policy: fc.string() }, { requiredKeys: [] })
    .map((b) => JSON.stringify(b))
)

const CONTENT_TYPES = [
  undefined,
  "application/json",
  "application/json; charset=utf-8",
  "application/problem+json",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  "text/plain",
  "application/octet-stream",
  "garbage"
]

type Attack = { readonly label: string; readonly parts: ReadonlyArray<string>; readonly method: string }

const httpRequest: fc.Arbitrary<Attack> = fc
  .record({
    method: fc.oneof(
      fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"),
      fc.stringMatching(/^[A-Z]{1,8}$/)
    ),
    route: fc.constantFrom(...ROUTES),
    suffix: fc.oneof(fc.constant(""), fc.constantFrom("/", "/x", "/%2e%2e", "//", "/%ZZ"), fc.string({ maxLength: 8 })),
    query: fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), QUERY_VALUES), { maxLength: 4 }),
    auth: fc.constantFrom("bearer", "apikey", "none", "garbage", "basic", "both"),
    contentType: fc.constantFrom(...CONTENT_TYPES),
    body: fc.option(bodyText, { freq: 3 }),
    chunked: fc.boolean(),
    shortLength: fc.boolean()
  })
  .map((r) => {
    const path =
      r.route.replace("{market}", encodeURIComponent(market)).replace("{order}", orderId) +
      encodeURI(r.suffix).replace(/[\r\n ]/g, "")
    const query = r.query.map(([k, v]) => `${k}=${v}`).join("&")
    const headers = ["Host: 127.0.0.1", "Connection: close"]
    if (r.auth === "bearer" || r.auth === "both") headers.push(`Authorization: Bearer ${token}`)
    if (r.auth === "apikey" || r.auth === "both") headers.push(`X-API-Key: ${token}`)
    if (r.auth === "garbage") headers.push("Authorization: Bearer cb_garbage")
    if (r.auth === "basic") headers.push("Authorization: Basic dXNlcjpwYXNz")
    if (r.contentType !== undefined) headers.push(`Content-Type: ${r.contentType}`)
    const parts: Array<string> = []
    if (r.body !== null) {
      const bytes = Buffer.byteLength(r.body)
      if (r.chunked) {
        headers.push("Transfer-Encoding: chunked")
        parts.push(`${bytes.toString(16)}\r\n${r.body}\r\n0\r\n\r\n`)
      } else {
        // A Content-Length that lies short cuts the JSON and leaves bytes that look like a next request.
        const declared = r.shortLength ? Math.max(0, bytes - 3) : bytes
        headers.push(`Content-Length: ${declared}`)
        parts.push(r.body)
      }
    }
    const line = `${r.method} ${path}${query === "" ? "" : `?${query}`} HTTP/1.1`
    return {
      label: `${line} [${r.contentType ?? "no type"}, ${r.auth}, body ${r.body?.length ?? "none"}${r.chunked ? " chunked" : ""}${r.shortLength ? " short" : ""}]`,
      method: r.method,
      parts: [`${line}\r\n${headers.join("\r\n")}\r\n\r\n`, ...parts]
    }
  })

const junkLine: fc.Arbitrary<Attack> = fc
  .oneof(
    fc.string({ maxLength: 60 }),
    fc.uint8Array({ maxLength: 60 }).map((b) => Buffer.from(b).toString("latin1")),
    fc.constantFrom("GET / HTTP/9.9", "GET", "GET  HTTP/1.1", "\u0000\u0001", "GET / HTTP/1.1\r\nHost"),
    fc.constantFrom("BREW", "FOO", "get", "PROPFIND2", "X-Y").map((m) => `${m} /health HTTP/1.1\r\nHost: x`),
    fc.constantFrom("3.0", "1.9", "11", "x").map((v) => `GET /health HTTP/${v}\r\nHost: x`),
    fc.string({ maxLength: 30 }).map((s) => `GET /${s} HTTP/1.1\r\nX: \u0001${s}`)
  )
  // Blank lines before a request line are skipped by HTTP parsers, as the protocol says: not a request at all.
  .filter((line) => line.replace(/[\r\n]/g, "") !== "")
  .map((line) => ({ label: `raw ${JSON.stringify(line)}`, method: "RAW", parts: [`${line}\r\n\r\n`] }))

const bigHeaders: fc.Arbitrary<Attack> = fc
  .record({
    size: fc.integer({ min: MAX_HEADER_BYTES - 200, max: 3 * MAX_HEADER_BYTES }),
    count: fc.integer({ min: 1, max: 4 }),
    route: fc.constantFrom("/health", "/trading/orders", "/trading/ws/events")
  })
  .map(({ count, route, size }) => {
    const each = Math.ceil(size / count)
    const headers = Array.from({ length: count }, (_, i) => `X-Big-${i}: ${"a".repeat(each)}`).join("\r\n")
    return {
      label: `${count} headers of ${each} bytes on ${route}`,
      method: "GET",
      parts: [`GET ${route} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headers}\r\n\r\n`]
    }
  })

const longUrl: fc.Arbitrary<Attack> = fc
  .integer({ min: MAX_HEADER_BYTES - 100, max: 2 * MAX_HEADER_BYTES })
  .map((size) => ({
    label: `a target of ${size} bytes`,
    method: "GET",
    parts: [`GET /venues?${"q".repeat(size)} HTTP/1.1\r\nHost: x\r\n\r\n`]
  }))

const wsUpgrade: fc.Arbitrary<Attack> = fc
  .record(
    {
      method: fc.constantFrom("GET", "POST", "HEAD"),
      upgrade: fc.constantFrom("websocket", "WebSocket", "h2c", ""),
      connection: fc.constantFrom("Upgrade", "keep-alive, Upgrade", "close"),
      key: fc.constantFrom("dGhlIHNhbXBsZSBub25jZQ==", "short", "", "!!!!!!!!!!!!!!!!!!!!!!=="),
      version: fc.constantFrom("13", "8", "99", "", "abc"),
      protocol: fc.constantFrom("chat", "a b", "a,,b", "x,x", ""),
      query: fc.constantFrom("", "?since=abc", "?since=3&kinds=order", "?key=cb_bad", "?since=-1"),
      auth: fc.boolean()
    },
    { requiredKeys: ["method"] }
  )
  .map((u) => {
    const headers = ["Host: 127.0.0.1"]
    if (u.upgrade !== undefined) headers.push(`Upgrade: ${u.upgrade}`)
    if (u.connection !== undefined) headers.push(`Connection: ${u.connection}`)
    if (u.key !== undefined) headers.push(`Sec-WebSocket-Key: ${u.key}`)
    if (u.version !== undefined) headers.push(`Sec-WebSocket-Version: ${u.version}`)
    if (u.protocol !== undefined) headers.push(`Sec-WebSocket-Protocol: ${u.protocol}`)
    if (u.auth === true) headers.push(`Authorization: Bearer ${token}`)
    const line = `${u.method} /trading/ws/events${u.query ?? ""} HTTP/1.1`
    return {
      label: `upgrade ${line} ${headers.slice(1).join("; ")}`,
      method: u.method,
      parts: [`${line}\r\n${headers.join("\r\n")}\r\n\r\n`]
    }
  })

const attack = fc.oneof(
  { arbitrary: httpRequest, weight: 6 },
  { arbitrary: junkLine, weight: 2 },
  { arbitrary: bigHeaders, weight: 1 },
  { arbitrary: longUrl, weight: 1 },
  { arbitrary: wsUpgrade, weight: 2 }
)

/**
 * The answer to one attack: 2xx or 101, or the error body with a code that matches the status, never a server
 * failure (5xx other than the parser's 501 for an unknown method and 505 for an HTTP version).
 */
const check = (a: Attack, res: RawExchange) => {
  const where = `${a.label}\n→ ${res.head.split("\r\n")[0]} ${res.text.slice(0, 300)}`
  assert.isAbove(res.status, 99, `no answer: ${where}`)
  if (res.status !== 501 && res.status !== 505) assert.isBelow(res.status, 500, where)
  if (res.status < 300) return
  if (a.method === "HEAD") return // a HEAD answer has no body by definition
  const error = res.body?.error
  assert.isObject(error, where)
  assert.isString(error.code, where)
  assert.isString(error.message, where)
  assert.isObject(error.details, where)
  assert.isTrue(error.details.venue === null || typeof error.details.venue === "string", where)
  assert.isBoolean(error.details.retryable, where)
  assert.include(STATUSES_OF[error.code] ?? [], res.status, `code ${error.code} with status ${res.status}: ${where}`)
  assert.match(res.head, /\r\ncontent-type: application\/json/i, where)
}

describe("protocol-level refusals carry the error body", () => {
  const cases: ReadonlyArray<readonly [string, number, string, ReadonlyArray<string>]> = [
    ["a request line that is not one", 400, "validation_error", ["hello there\r\n\r\n"]],
    ["an unknown method", 501, "not_supported", ["BREW /health HTTP/1.1\r\nHost: x\r\n\r\n"]],
    ["an HTTP version other than 1.x", 505, "validation_error", ["GET /health HTTP/3.1\r\nHost: x\r\n\r\n"]],
    [
      "a URL past the header limit",
      414,
      "validation_error",
      [`GET /${"a".repeat(MAX_HEADER_BYTES + 10)} HTTP/1.1\r\n\r\n`]
    ],
    [
      "headers past the limit",
      431,
      "validation_error",
      [`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(MAX_HEADER_BYTES + 10)}\r\n\r\n`]
    ],
    [
      "a broken chunk size",
      400,
      "validation_error",
      [
        "POST /trading/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
          "Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
      ]
    ],
    [
      "a Content-Length no body can have",
      413,
      "validation_error",
      ["POST /trading/orders HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n"]
    ]
  ]
  for (const [what, status, code, parts] of cases) {
    it(`${what}: ${status} ${code}`, async () => {
      const res = await runtime.runPromise(rawExchange(parts, { timeoutMs: 3000 }))
      assert.strictEqual(res.status, status, res.text)
      assert.strictEqual(res.body?.error?.code, code, res.text)
      assert.deepInclude(res.body.error.details, { venue: null, retryable: false })
      assert.match(res.head, /\r\ncontent-type: application\/json/i)
    })
  }
})

describe("fuzzing the server", () => {
  it(
    `every answer to malformed and adversarial requests is 2xx or the error body, never 5xx (seed ${SEED})`,
    async () => {
      await fc.assert(
        fc.asyncProperty(attack, async (a) => {
          const res = await runtime.runPromise(rawExchange(a.parts, { timeoutMs: 3000, head: a.method === "HEAD" }))

          check(a, res)
        }),
        {
          seed: SEED,
          numRuns: RUNS,
          reporter: (details) => {
            if (details.failed) {
              throw new Error(`fuzz failed with seed ${SEED} (rerun with it): ${fc.defaultReportMessage(details)}`)
            }
          }
        }
      )
    },
    LONG ? 600_000 : 60_000
  )
})
