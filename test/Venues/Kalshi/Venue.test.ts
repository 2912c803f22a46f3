/** Kalshi's settings from the environment, the venue list of `serve`, and the order body our requests become. */
import { it as itEffect } from "@effect/vitest"
import { Effect, Either } from "effect"
import fc from "fast-check"
import { generateKeyPairSync } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import type { PlaceOrderRequest, Venue } from "../../../src/Services/VenueGateway.ts"
import { configFromEnv, createOrderBody, ENDPOINTS, kalshiCapabilities } from "../../../src/Venues/Kalshi/Venue.ts"
import { buildVenues, parseVenueList } from "../../../src/Venues/Venues.ts"

const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString()

describe("settings", () => {
  it("nothing set: prod endpoints, Basic tier buckets, no credentials", () => {
    const c = Either.getOrThrow(configFromEnv({}))
    expect(c).toMatchObject({
      env: "prod",
      apiUrl: ENDPOINTS.prod.api,
      wsUrl: ENDPOINTS.prod.ws,
      credentials: undefined,
      // Basic: reads 200/s over a two-second bucket, writes 100/s over one
      limits: { read: { capacity: 400, refillPerSecond: 200 }, write: { capacity: 100, refillPerSecond: 100 } },
      timeoutMs: 10_000
    })
  })

  it("demo, overridden URLs and buckets, the key as text or as a file", () => {
    const dir = mkdtempSync(join(tmpdir(), "kalshi-key-"))
    try {
      const file = join(dir, "key.pem")
      writeFileSync(file, PEM)
      const fromFile = Either.getOrThrow(
        configFromEnv({
          KALSHI_ENV: "demo",
          KALSHI_API_KEY_ID: "id-1",
          KALSHI_PRIVATE_KEY_PATH: file,
          KALSHI_WRITE_BUCKET: "200",
          KALSHI_WRITE_REFILL: "50"
        })
      )
      expect(fromFile.apiUrl).toBe(ENDPOINTS.demo.api)
      expect(fromFile.wsUrl).toBe(ENDPOINTS.demo.ws)
      expect(fromFile.credentials?.keyId).toBe("id-1")
      expect(fromFile.limits.write).toEqual({ capacity: 200, refillPerSecond: 50 })
      // a PEM pasted on one line with \n escapes, as .env files hold it
      const inline = configFromEnv({
        KALSHI_API_KEY_ID: "id-2",
        KALSHI_PRIVATE_KEY: PEM.replaceAll("\n", "\\n"),
        KALSHI_API_URL: "http://127.0.0.1:1/trade-api/v2",
        KALSHI_WS_URL: "ws://127.0.0.1:1/trade-api/ws/v2"
      })
      expect(Either.getOrThrow(inline)).toMatchObject({
        apiUrl: "http://127.0.0.1:1/trade-api/v2",
        wsUrl: "ws://127.0.0.1:1/trade-api/ws/v2"
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("half a credential, a bad key or a bad setting is an error naming the setting, never its value", () => {
    // A PEM frame around text that is no key (assembled, so no key-shaped text sits in the repository).
    const frame = (edge: string) => `-----${edge} PRIVATE KEY-----`
    const secret = `${frame("BEGIN")}\nnot really\n${frame("END")}`
    const cases = [
      [{ KALSHI_API_KEY_ID: "id" }, "KALSHI_PRIVATE_KEY_PATH or KALSHI_PRIVATE_KEY is missing"],
      [{ KALSHI_PRIVATE_KEY: PEM }, "KALSHI_API_KEY_ID is missing"],
      [{ KALSHI_API_KEY_ID: "id", KALSHI_PRIVATE_KEY: secret }, "KALSHI_PRIVATE_KEY is not a PEM private key"],
      [
        { KALSHI_API_KEY_ID: "id", KALSHI_PRIVATE_KEY_PATH: "/nonexistent/key.pem" },
        "KALSHI_PRIVATE_KEY_PATH cannot be read"
      ],
      [{ KALSHI_ENV: "staging" }, "KALSHI_ENV must be prod or demo"],
      [{ KALSHI_READ_BUCKET: "-1" }, "KALSHI_READ_BUCKET must be a positive number"]
    ] as const
    for (const [env, message] of cases) {
      const e = configFromEnv(env)
      expect(Either.isLeft(e) && e.left).toContain(message)
      expect(Either.isLeft(e) && e.left).not.toContain("not really")
    }
  })

  it("without credentials every trading capability reads false; with them, true", () => {
    const off = kalshiCapabilities(false)
    const on = kalshiCapabilities(true)
    expect(off.fetch_markets && off.fetch_order_book && off.fetch_trades && off.search).toBe(true)
    for (const k of ["create_order", "cancel_order", "edit_order", "fetch_balance", "watch_order_book"] as const) {
      expect(off[k]).toBe(false)
      expect(on[k]).toBe(true)
    }
  })
})

describe("the venue list", () => {
  it("a comma list, trimmed and lower-cased, each once; empty is the default", () => {
    expect(parseVenueList(undefined)).toEqual(["sim", "kalshi", "polymarket"])
    expect(parseVenueList(" ")).toEqual(["sim", "kalshi", "polymarket"])
    expect(parseVenueList("Kalshi, sim,kalshi")).toEqual(["kalshi", "sim"])
  })

  itEffect.scoped("builds the listed venues in order and names those it has no builder for", () =>
    Effect.gen(function* () {
      const fake = (id: string) => Effect.succeed({ info: { id } } as unknown as Venue)
      const { venues, skipped } = yield* buildVenues(["kalshi", "sim", "polymarket"], {
        sim: fake("sim"),
        kalshi: fake("kalshi")
      })
      expect(venues.map((v) => v.info.id)).toEqual(["kalshi", "sim"])
      expect(skipped).toEqual(["polymarket"])
    })
  )
})

const request = (over: Partial<PlaceOrderRequest>): PlaceOrderRequest => ({
  clientOrderId: "c-1",
  nativeId: "T",
  side: "buy",
  price: F.of("0.56"),
  amount: F.of("10"),
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  expiresAt: null,
  ...over
})

describe("the order body", () => {
  it("buy is a bid, sell an ask at the same YES price; every flag is carried, none dropped", () => {
    expect(createOrderBody(request({}))).toEqual({
      ticker: "T",
      client_order_id: "c-1",
      side: "bid",
      count: "10.00",
      price: "0.5600",
      time_in_force: "good_till_canceled",
      self_trade_prevention_type: "taker_at_cross"
    })
    expect(
      createOrderBody(
        request({ side: "sell", timeInForce: "gtd", expiresAt: 1_789_000_000_500, postOnly: true, reduceOnly: true })
      )
    ).toMatchObject({
      side: "ask",
      price: "0.5600",
      time_in_force: "good_till_canceled",
      expiration_time: 1_789_000_001,
      post_only: true,
      reduce_only: true
    })
    expect(createOrderBody(request({ timeInForce: "ioc" })).time_in_force).toBe("immediate_or_cancel")
    expect(createOrderBody(request({ timeInForce: "fok" })).time_in_force).toBe("fill_or_kill")
  })

  it("property: price and count strings parse back to exactly the request's values", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9_999 }), fc.integer({ min: 1, max: 10_000_000 }), (p, n) => {
        const price = (p * 100) as F.Fixed
        const amount = (n * 10_000) as F.Fixed
        const body = createOrderBody(request({ price, amount }))
        expect(F.parse(body.price)).toBe(price)
        expect(F.parse(body.count)).toBe(amount)
        expect(body.price).toMatch(/^\d\.\d{4}$/)
        expect(body.count).toMatch(/^\d+\.\d{2}$/)
      })
    )
  })
})
