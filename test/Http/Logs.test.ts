import { assert, describe, it } from "@effect/vitest"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Layer, Logger } from "effect"
import { redact } from "../../src/Http/Redact.ts"
import { OwnerToken, testServer } from "./TestServer.ts"

const logged: Array<string> = []
const captureLogs = Logger.replace(
  Logger.defaultLogger,
  Logger.make(({ message, annotations, cause }) =>
    logged.push(`${JSON.stringify(message)} ${JSON.stringify([...annotations])} ${String(cause)}`)
  )
)

const send = (path: string, headers: Record<string, string>) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(HttpClientRequest.get(path).pipe(HttpClientRequest.setHeaders(headers)))
    return { status: response.status, text: yield* response.text }
  }).pipe(Effect.scoped)

describe("secrets in logs", () => {
  it.layer(testServer().pipe(Layer.provide(captureLogs)))((it) => {
    it.effect("a token passed as ?key= on an ordinary route is refused, and neither logged nor echoed", () =>
      Effect.gen(function* () {
        const owner = yield* OwnerToken
        // The secret is all after `cb_<prefix>_`; it may hold `_` itself (base64url).
        const secret = owner.slice(owner.indexOf("_", "cb_".length) + 1)
        logged.length = 0
        const refused = yield* send(`/trading/me?key=${owner}`, {})
        assert.strictEqual(refused.status, 401, refused.text)
        const missing = yield* send(`/no/such/route?key=${owner}&token=hunter2`, {})
        assert.strictEqual(missing.status, 404, missing.text)
        assert.notInclude(missing.text, secret)
        assert.notInclude(missing.text, "hunter2")
        const wrong = yield* send(`/trading/nope?x=1`, { authorization: `Bearer ${owner}`, "x-api-key": owner })
        assert.strictEqual(wrong.status, 404, wrong.text)
        const lines = logged.join("\n")
        assert.include(lines, "/trading/me?key=[redacted]")
        assert.include(lines, "/no/such/route?key=[redacted]&token=[redacted]")
        assert.notInclude(lines, secret)
        assert.notInclude(lines, "hunter2")
      })
    )
  })

  it("masks query credentials, credential headers, bearer values and token-shaped strings", () => {
    const token = "cb_AbCd1234_0123456789abcdefghij0123456789abcdefghijK"
    assert.strictEqual(redact(`/trading/ws/events?since=3&key=${token}`), "/trading/ws/events?since=3&key=[redacted]")
    assert.strictEqual(redact(`authorization: Bearer ${token}`), "authorization: [redacted]")
    assert.strictEqual(redact(`{"x-api-key":"${token}"}`), '{"x-api-key":"[redacted]"}')
    assert.strictEqual(redact(`sent Bearer abc.def to it`), "sent Bearer [redacted] to it")
    assert.strictEqual(redact(`token ${token} revoked`), "token cb_AbCd1234_[redacted] revoked")
    assert.strictEqual(redact("cb_somethingmalformed-but-long"), "cb_[redacted]")
    assert.strictEqual(redact("/venues/sim/markets?limit=5&cursor=abc"), "/venues/sim/markets?limit=5&cursor=abc")
  })
})
