/**
 * One trading strategy, run unchanged through `serve`'s layers on the sim venue, on the fake Kalshi and on the fake
 * Polymarket: the venues are interchangeable behind the VenueGateway seam.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import { generateKeyPairSync } from "node:crypto"
import * as F from "../../src/Domain/Fixed.ts"
import { signerOf } from "../../src/Venues/Polymarket/Signing.ts"
import { request } from "../Http/TestServer.ts"
import { Owner, serveVenues } from "./ServeVenues.ts"
import { FakeKalshi } from "./Kalshi/Fake.ts"
import { CONDITION, startFake } from "./Polymarket/Fake.ts"

/** How to stand a venue up for the strategy: its env (with a fake started in the scope) and the market to trade. */
interface Setup {
  readonly venue: string
  readonly env: Effect.Effect<Record<string, string>, never, Scope.Scope>
  /** The market to trade; on the sim, one whose ask leaves room for the stop's slippage. */
  readonly market: Effect.Effect<string, unknown, any>
}

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
const POLY_KEY = "0x" + "4d".repeat(32)

const SETUPS: ReadonlyArray<Setup> = [
  {
    venue: "sim",
    env: Effect.succeed({}),
    market: Effect.gen(function* () {
      const list = yield* request("GET", "/venues/sim/markets?limit=50")
      for (const m of list.body.data as ReadonlyArray<any>) {
        const book = yield* request("GET", `/venues/sim/markets/${m.id}/book`)
        const ask = F.parse(book.body.asks?.[0]?.price ?? "")
        const bid = F.parse(book.body.bids?.[0]?.price ?? "")
        if (ask !== undefined && bid !== undefined && ask >= F.of("0.4") && ask <= F.of("0.9")) return m.id as string
      }
      return yield* Effect.dieMessage("no sim market with a book in range")
    })
  },
  {
    venue: "kalshi",
    env: Effect.map(
      Effect.acquireRelease(
        Effect.promise(async () => {
          const fake = new FakeKalshi(publicKey, [
            {
              ticker: "KXSTRAT-26",
              event: "KXSTRAT-26",
              title: "Will the strategy run?",
              yes: [["0.40", "20"]],
              no: [
                ["0.55", "10"],
                ["0.50", "30"]
              ]
            }
          ])
          await fake.start()
          return fake
        }),
        (fake) => Effect.promise(() => fake.stop())
      ),
      (fake) => ({
        KALSHI_API_URL: fake.apiUrl,
        KALSHI_WS_URL: fake.wsUrl,
        KALSHI_API_KEY_ID: "key-1",
        KALSHI_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString()
      })
    ),
    market: Effect.succeed("kalshi:KXSTRAT-26")
  },
  {
    venue: "polymarket",
    env: Effect.map(
      Effect.acquireRelease(
        Effect.promise(() => startFake(signerOf(POLY_KEY).address)),
        (fake) => Effect.promise(() => fake.close())
      ),
      (fake) => ({
        POLYMARKET_CLOB_URL: fake.url,
        POLYMARKET_GAMMA_URL: fake.url,
        POLYMARKET_DATA_URL: fake.url,
        POLYMARKET_WS_URL: fake.wsUrl,
        POLYMARKET_PRIVATE_KEY: POLY_KEY
      })
    ),
    market: Effect.succeed(`polymarket:${CONDITION}`)
  }
]

/** The server as `serve` builds it, with the sim and the one venue under test. */
const server = (setup: Setup) =>
  serveVenues({
    list: setup.venue === "sim" ? ["sim"] : ["sim", setup.venue],
    env: setup.env,
    sim: { seed: 11, markets: 12 }
  })

const authed = (method: "GET" | "POST" | "DELETE", path: string, json?: unknown) =>
  Effect.flatMap(Owner, (token) => request(method, path, { token, ...(json === undefined ? {} : { json }) }))

const eventually = <A>(read: Effect.Effect<A, any, any>, check: (a: A) => boolean, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 400; i++) {
      const a = yield* read
      if (check(a)) return a
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage(`${what} not reached in time`)
  })

/** Net YES contracts held in the market, as the desk reports them. */
const held = (account: string, market: string) =>
  Effect.map(
    authed("GET", `/trading/positions?account=${account}`),
    (r) => (r.body.data as ReadonlyArray<any>).find((p) => p.market_id === market)?.contracts ?? "0"
  )

/**
 * The strategy: take the best ask with an IOC, rest a bid far from the touch and pull it, then protect the position
 * with a sell stop already through the market, which fires at once and sells into the bids.
 */
const strategy = (setup: Setup) =>
  Effect.gen(function* () {
    const account = `${setup.venue}:default`
    const market = yield* setup.market
    const order = (json: Record<string, unknown>) =>
      authed("POST", "/trading/orders", { account, market_id: market, ...json })

    const book = yield* request("GET", `/venues/${setup.venue}/markets/${market}/book`)
    assert.strictEqual(book.status, 200, book.text)
    const ask = book.body.asks[0].price as string

    // 1. take: an IOC at the best ask fills (in full or in part), and the desk's position is what filled
    const taken = yield* order({ side: "buy", type: "limit", amount: "5", price: ask, time_in_force: "ioc" })
    assert.strictEqual(taken.status, 201, taken.text)
    const done = yield* eventually(
      authed("GET", `/trading/orders/${taken.body.id}`),
      (r) => F.of(r.body.filled) > 0 && ["closed", "canceled"].includes(r.body.status),
      "the taker's fill"
    )
    const bought = done.body.filled as string
    const position = yield* eventually(held(account, market), (c) => c === bought, "the position")
    assert.strictEqual(position, bought)

    // 2. rest far from the touch and pull it: nothing fills
    const resting = yield* order({ side: "buy", type: "limit", amount: "5", price: "0.1" })
    assert.strictEqual(resting.status, 201, resting.text)
    assert.strictEqual(resting.body.status, "open")
    const pulled = yield* authed("DELETE", `/trading/orders/${resting.body.id}`)
    assert.strictEqual(pulled.status, 200, pulled.text)
    assert.strictEqual(pulled.body.status, "canceled")
    assert.strictEqual(pulled.body.filled, "0")

    // 3. a protective sell stop at the ask is through the bid already: it fires and sells what was bought
    const after = yield* request("GET", `/venues/${setup.venue}/markets/${market}/book`)
    const stopAt = after.body.asks[0].price as string
    const stop = yield* order({
      side: "sell",
      type: "stop_market",
      amount: bought,
      stop_price: stopAt,
      params: { max_slippage: "0.3" }
    })
    assert.strictEqual(stop.status, 201, stop.text)
    const fired = yield* eventually(
      authed("GET", `/trading/orders/${stop.body.id}`),
      (r) => ["closed", "canceled"].includes(r.body.status),
      "the stop's end"
    )
    assert.isTrue(F.of(fired.body.filled) > 0, JSON.stringify(fired.body.info))
    const left = F.format(F.sub(F.of(bought), F.of(fired.body.filled)))
    yield* eventually(held(account, market), (c) => c === left, "the position after the stop")

    // the ledger's fills add up to the orders' filled amounts
    const fills = yield* authed("GET", `/trading/fills?account=${account}&market_id=${market}`)
    const byOrder = new Map<string, number>()
    for (const f of fills.body.data as ReadonlyArray<any>) {
      byOrder.set(f.order_id, (byOrder.get(f.order_id) ?? 0) + F.of(f.amount))
    }
    assert.strictEqual(F.format((byOrder.get(taken.body.id) ?? 0) as F.Fixed), bought)
  })

describe("one strategy on every venue", () => {
  for (const setup of SETUPS) {
    it.live(`on ${setup.venue}`, () => strategy(setup).pipe(Effect.provide(server(setup))), 40_000)
  }
})
