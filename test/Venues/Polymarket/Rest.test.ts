/** The Polymarket REST client against a loopback server: signed headers, error mapping, 429, timeouts. */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Schema } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { classify, makeRest, type Identity } from "../../../src/Venues/Polymarket/Rest.ts"
import { hmacSignature, recoverClobAuth, signerOf } from "../../../src/Venues/Polymarket/Signing.ts"

const SECRET = Buffer.from("a test secret of thirty-two bytes").toString("base64url")
const signer = signerOf("0x" + "42".repeat(32))

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void
let handler: Handler = (_req, _body, res) => res.end("{}")
let base = ""
const server = createServer((req, res) => {
  let body = ""
  req.on("data", (c) => (body += c))
  req.on("end", () => handler(req, body, res))
})

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const run = <A>(
  f: (rest: Effect.Effect.Success<ReturnType<typeof makeRest>>) => Effect.Effect<A, unknown>,
  identity?: Identity
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const rest = yield* makeRest(
        { hosts: { clob: base, gamma: base, data: base, ws: "" }, timeout: "300 millis" },
        identity
      )
      return yield* f(rest)
    }).pipe(Effect.scoped, Effect.provide(FetchHttpClient.layer), Effect.either)
  )

describe("Polymarket REST", () => {
  it("an L2 call carries headers whose HMAC the server can check over timestamp + method + path + body", async () => {
    let seen: Record<string, string | undefined> = {}
    let ok = false
    handler = (req, body, res) => {
      seen = {
        address: req.headers["poly_address"] as string,
        key: req.headers["poly_api_key"] as string,
        pass: req.headers["poly_passphrase"] as string
      }
      const ts = req.headers["poly_timestamp"] as string
      ok =
        req.headers["poly_signature"] ===
        hmacSignature(SECRET, ts, req.method!, req.url!, body === "" ? undefined : body)
      res.setHeader("content-type", "application/json")
      res.end(JSON.stringify({ success: true }))
    }
    const identity: Identity = { signer, chainId: 137, creds: { key: "k1", secret: SECRET, passphrase: "p1" } }
    const r = await run(
      (rest) =>
        rest.json(
          { family: "order", host: "clob", method: "POST", path: "/order", body: { a: 1 }, auth: "l2" },
          Schema.Struct({ success: Schema.Boolean })
        ),
      identity
    )
    expect(r).toMatchObject({ _tag: "Right", right: { success: true } })
    expect(ok).toBe(true)
    expect(seen).toEqual({ address: signer.address, key: "k1", pass: "p1" })
  })

  it("an L1 call carries a ClobAuth signature that recovers to the signer", async () => {
    let recovered = ""
    handler = (req, _body, res) => {
      void recoverClobAuth(
        req.headers["poly_address"] as `0x${string}`,
        137,
        Number(req.headers["poly_timestamp"]),
        Number(req.headers["poly_nonce"]),
        req.headers["poly_signature"] as `0x${string}`
      ).then((a) => {
        recovered = a
        res.end(JSON.stringify({ apiKey: "k", secret: SECRET, passphrase: "p" }))
      })
    }
    const r = await run(
      (rest) => rest.raw({ family: "clob", host: "clob", method: "GET", path: "/auth/derive-api-key", auth: "l1" }),
      {
        signer,
        chainId: 137,
        creds: undefined
      }
    )
    expect(r._tag).toBe("Right")
    expect(recovered).toBe(signer.address)
  })

  it("429 passes through as rate_limited with Retry-After; 503 as unavailable; a slow answer as timeout", async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 429
      res.setHeader("retry-after", "7")
      res.end(JSON.stringify({ error: "Too Many Requests" }))
    }
    expect(await run((rest) => rest.raw({ family: "book", host: "clob", method: "GET", path: "/book" }))).toMatchObject(
      {
        left: { kind: "rate_limited", retryAfterS: 7, reason: "Too Many Requests" }
      }
    )
    handler = (_req, _body, res) => {
      res.statusCode = 503
      res.end(JSON.stringify({ error: "Trading is currently cancel-only" }))
    }
    expect(await run((rest) => rest.raw({ family: "order", host: "clob", method: "GET", path: "/x" }))).toMatchObject({
      left: { kind: "unavailable", reason: "trading is paused or cancel-only: Trading is currently cancel-only" }
    })
    handler = () => {}
    expect(
      await run((rest) => rest.raw({ family: "gamma", host: "gamma", method: "GET", path: "/markets" }))
    ).toMatchObject({
      left: { kind: "timeout" }
    })
  })

  it("an L2 call without credentials never leaves the machine", async () => {
    let called = false
    handler = (_req, _body, res) => {
      called = true
      res.end("{}")
    }
    expect(
      await run((rest) =>
        rest.raw({ family: "order", host: "clob", method: "DELETE", path: "/cancel-all", auth: "l2" })
      )
    ).toMatchObject({
      left: { kind: "unavailable", reason: "no credentials configured" }
    })
    expect(called).toBe(false)
  })
})

describe("the CLOB's errorMsg codes", () => {
  it.each([
    [400, { errorMsg: "INVALID_ORDER_NOT_ENOUGH_BALANCE: not enough balance / allowance" }, "insufficient_funds"],
    [400, { errorMsg: "INVALID_ORDER_MIN_TICK_SIZE: price breaks minimum tick size rule" }, "rejected"],
    [400, { errorMsg: "INVALID_ORDER_MIN_SIZE" }, "rejected"],
    [400, { errorMsg: "INVALID_POST_ONLY_ORDER: post only order crosses the book" }, "rejected"],
    [400, { errorMsg: "MARKET_NOT_READY" }, "market_closed"],
    [400, { error: "the orderbook 123 does not exist" }, "market_closed"],
    [425, { error: "engine restarting" }, "unavailable"],
    [500, "upstream", "unavailable"],
    [401, { error: "Unauthorized/Invalid api key" }, "unavailable"]
  ] as const)("HTTP %i %j → %s, with the venue's reason", (status, body, kind) => {
    const e = classify(status, typeof body === "string" ? body : JSON.stringify(body), undefined)
    expect(e.kind).toBe(kind)
    expect(e.reason).toContain(typeof body === "string" ? body : Object.values(body)[0]!.split(":")[0])
  })
})
