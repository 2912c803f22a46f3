import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { MAX_BODY_BYTES, MAX_DEPTH, MAX_HEADER_BYTES } from "../../src/Http/BodyGuard.ts"
import { OwnerToken, rawExchange, type RawResponse, request, TestServerLive } from "./TestServer.ts"

/** Status and the contract's error body, whatever route or layer answered. */
const assertErrorBody = (
  res: { status: number; body: any; text: string },
  status: number,
  code = "validation_error"
) => {
  assert.strictEqual(res.status, status, res.text)
  assert.strictEqual(res.body?.error?.code, code, res.text)
  assert.isString(res.body.error.message)
  assert.property(res.body.error.details, "venue")
  assert.isBoolean(res.body.error.details.retryable)
}

const fields = (res: RawResponse): Array<string> => res.body.error.details.errors.map((e: any) => e.field)

const aMarket = Effect.map(request("GET", "/venues/sim/markets?limit=1"), (r) => r.body.data[0].id as string)

const order = (market: string, extra: Record<string, unknown> = {}) => ({
  market_id: market,
  side: "buy",
  type: "limit",
  amount: "1",
  price: "0.01",
  ...extra
})

const head = (token: string, lines: ReadonlyArray<string>) =>
  ["POST /trading/orders HTTP/1.1", "Host: 127.0.0.1", `Authorization: Bearer ${token}`, ...lines, "", ""].join("\r\n")

describe("what a request may carry", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("a body declared larger than the limit is 413 at once, before any of it is read", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        // 200 MB announced, a few bytes sent: only an answer that did not wait for the body can arrive.
        const res = yield* rawExchange([
          head(token, ["Content-Type: application/json", `Content-Length: ${200 * 1024 * 1024}`]),
          '{"notes":"'
        ])
        assertErrorBody(res, 413)
        assert.match(res.head, /connection: close/i)
        assert.strictEqual(res.body.error.details.max_bytes, MAX_BODY_BYTES)
      })
    )

    it.effect("a chunked body is counted as it streams: 413 as soon as it passes the limit, never buffered whole", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const chunk = "x".repeat(64 * 1024)
        const chunked = `${chunk.length.toString(16)}\r\n${chunk}\r\n`
        // Twice the limit in chunks and never the final chunk: the answer can only come from counting mid-stream.
        const parts = [
          head(token, ["Content-Type: application/json", "Transfer-Encoding: chunked"]),
          'a\r\n{"notes":"\r\n',
          ...Array.from({ length: (2 * MAX_BODY_BYTES) / chunk.length }, () => chunked)
        ]
        const res = yield* rawExchange(parts)
        assertErrorBody(res, 413)
        // A body under the limit, chunked, still goes through to the route.
        const market = yield* aMarket
        const small = JSON.stringify(order(market))
        const ok = yield* rawExchange([
          head(token, ["Content-Type: application/json", "Transfer-Encoding: chunked"]),
          `${Buffer.byteLength(small).toString(16)}\r\n${small}\r\n0\r\n\r\n`
        ])
        assert.strictEqual(ok.status, 201, ok.text)
      })
    )

    it.effect("a body nested deeper than the limit is 400 with the error body, however deep", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const market = yield* aMarket
        for (const depth of [MAX_DEPTH + 1, 4100, 50_000]) {
          const nested = "[".repeat(depth) + "]".repeat(depth)
          const res = yield* request("POST", "/trading/orders", {
            token,
            rawBody: JSON.stringify(order(market)).replace('"price"', `"tags":{"t":${nested}},"price"`)
          })
          assertErrorBody(res, 400)
          assert.include(res.body.error.message, "nested")
        }
        // Brackets inside strings are text, not nesting.
        const text = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { notes: "[".repeat(1000) + '{"' })
        })
        assert.strictEqual(text.status, 201, text.text)
      })
    )

    it.effect("a body that is not JSON is 415 on every route; malformed JSON stays 400 with field body", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const boundary = "----x"
        const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="notes"\r\n\r\nhi\r\n--${boundary}--\r\n`
        for (const [type, body] of [
          [`multipart/form-data; boundary=${boundary}`, multipart],
          ["application/x-www-form-urlencoded", "market_id=sim:X&side=buy"],
          ["text/plain", '{"market_id":"sim:X"}'],
          ["application/octet-stream", "\u0000\u0001"]
        ] as const) {
          for (const path of ["/trading/orders", "/trading/grants", "/trading/halt", "/no/such/route"]) {
            const res = yield* rawExchange([
              [
                `POST ${path} HTTP/1.1`,
                "Host: 127.0.0.1",
                `Authorization: Bearer ${token}`,
                `Content-Type: ${type}`,
                `Content-Length: ${Buffer.byteLength(body)}`,
                "",
                body
              ].join("\r\n")
            ])
            assertErrorBody(res, 415)
          }
        }
        // A non-JSON type with no body at all is an empty body: 422, not a reader waiting for parts forever.
        const empty = yield* rawExchange([
          `PUT /trading/risk HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: multipart/form-data; boundary=x\r\n\r\n`
        ])
        assertErrorBody(empty, 422)
        const malformed = yield* request("POST", "/trading/orders", { token, rawBody: '{"market_id": ' })
        assertErrorBody(malformed, 400)
        assert.deepStrictEqual(fields(malformed), ["body"])
        // A JSON type with parameters, or a +json type, is JSON.
        const market = yield* aMarket
        const ok = yield* rawExchange([
          [
            "POST /trading/orders HTTP/1.1",
            "Host: 127.0.0.1",
            `Authorization: Bearer ${token}`,
            "Content-Type: application/vnd.api+json; charset=utf-8",
            `Content-Length: ${Buffer.byteLength(JSON.stringify(order(market)))}`,
            "",
            JSON.stringify(order(market))
          ].join("\r\n")
        ])
        assert.strictEqual(ok.status, 201, ok.text)
      })
    )

    it.effect("long strings and large or deep tags are 422 naming the field", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const market = yield* aMarket
        const cases: ReadonlyArray<[Record<string, unknown>, string]> = [
          [{ notes: "n".repeat(2001) }, "notes"],
          [{ book: "b".repeat(129) }, "book"],
          [{ trader: "t".repeat(129) }, "trader"],
          [{ market_id: `sim:${"m".repeat(300)}` }, "market_id"],
          [{ tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])) }, "tags"],
          [{ tags: { a: { b: { c: { d: 1 } } } } }, "tags"],
          [{ tags: { big: "x".repeat(5000) } }, "tags"],
          [{ tags: { ["k".repeat(65)]: 1 } }, "tags"]
        ]
        for (const [extra, field] of cases) {
          const res = yield* request("POST", "/trading/orders", { token, json: order(market, extra) })
          assertErrorBody(res, 422)
          assert.isTrue(
            fields(res).some((f) => f === field || f.startsWith(`${field}.`)),
            res.text
          )
        }
        const fine = yield* request("POST", "/trading/orders", {
          token,
          json: order(market, { notes: "n".repeat(2000), tags: { a: { b: { c: 1 } }, list: [1, 2] } })
        })
        assert.strictEqual(fine.status, 201, fine.text)
      })
    )

    it.effect("a bad request line or headers past the limit answer the error body, not an empty one", () =>
      Effect.gen(function* () {
        for (const line of ["GARBAGE\r\n\r\n", "GET /\u0001 HTTP/1.1\r\nHost: x\r\n\r\n"]) {
          assertErrorBody(yield* rawExchange([line]), 400)
        }
        // An HTTP version the server does not speak is 505, with the same body.
        assertErrorBody(yield* rawExchange(["GET / HTTP/9.9\r\n\r\n"]), 505)
        const big = `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(MAX_HEADER_BYTES + 10)}\r\n\r\n`
        const res = yield* rawExchange([big])
        assertErrorBody(res, 431)
        assert.deepStrictEqual(res.body.error.details.errors[0].field, "headers")
        // Bad chunked framing is the parser's too.
        const framing = yield* rawExchange([
          "POST /trading/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"
        ])
        assertErrorBody(framing, 400)
      })
    )
  })
})
