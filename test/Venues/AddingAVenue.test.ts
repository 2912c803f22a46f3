/**
 * Adding a venue, as docs/architecture.md walks through it: a venue defined in this file alone, registered, and
 * served end to end by the stack `serve` builds (markets, book, an order and its fill), listed by doctor and help.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Either, Layer, PubSub } from "effect"
import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { simulationCommands } from "../../sim/Cli.ts"
import { rootCommand } from "../../src/Cli.ts"
import { commandSpec, renderHelp, resolveCommand } from "../../src/CliHelp.ts"
import { doctor } from "../../src/Doctor.ts"
import * as F from "../../src/Domain/Fixed.ts"
import type { Book, Market } from "../../src/Domain/Market.ts"
import {
  capabilities,
  type PlaceOrderRequest,
  type Venue,
  VenueError,
  type VenueEvent,
  type VenueOrder
} from "../../src/Services/VenueGateway.ts"
import type { VenueRegistration } from "../../src/Venues/Registration.ts"
import { parseVenueList, registrationsWith, servedVenuesLayer } from "../../src/Venues/Venues.ts"
import { request } from "../Http/TestServer.ts"
import { authed, eventually, Owner, serveOn } from "./ServeVenues.ts"

// --- The venue: one market whose book never moves; a limit order that reaches its ask or bid fills there in full.

interface TinyConfig {
  /** The price the book sells YES at; it buys one tick below. */
  readonly ask: F.Fixed
}

const TICK = F.of("0.01")

/** Reads `TINY_ASK` (default 0.60): a price on the cent grid strictly between 0.01 and 1. */
const readTinyConfig = (env: Readonly<Record<string, string | undefined>>): Either.Either<TinyConfig, string> => {
  const text = env["TINY_ASK"]?.trim() || "0.60"
  const ask = F.parse(text)
  return ask !== undefined && ask > TICK && ask < F.ONE && ask % TICK === 0
    ? Either.right({ ask })
    : Either.left(`TINY_ASK must be a price on the cent grid between 0.02 and 0.99, not '${text}'`)
}

const makeTinyVenue = (config: TinyConfig) =>
  Effect.gen(function* () {
    const bid = F.sub(config.ask, TICK)
    const events = yield* PubSub.unbounded<VenueEvent>()
    const orders = new Map<string, VenueOrder>()
    let count = 0
    const market: Market = {
      venue: "tiny",
      nativeId: "ONE",
      eventId: "ONE",
      title: "Will the tiny venue trade?",
      subtitle: "",
      category: "Test",
      status: "open",
      openTime: 0,
      closeTime: Date.UTC(2100, 0, 1),
      tick: TICK,
      lot: F.ONE,
      result: null
    }
    const book = (ts: number): Book => ({
      ts,
      bids: [{ price: bid, size: F.of("100") }],
      asks: [{ price: config.ask, size: F.of("100") }]
    })
    const refuse = (reason: string) => Effect.fail(new VenueError({ venue: "tiny", kind: "rejected", reason }))

    const placeOrder = (r: PlaceOrderRequest) =>
      Effect.gen(function* () {
        if (r.nativeId !== market.nativeId) return yield* refuse(`no market ${r.nativeId}`)
        const now = yield* Clock.currentTimeMillis
        const venueOrderId = `t${++count}`
        const at = r.side === "buy" ? config.ask : bid
        const fills = r.side === "buy" ? r.price >= config.ask : r.price <= bid
        const order: VenueOrder = {
          venueOrderId,
          clientOrderId: r.clientOrderId,
          nativeId: r.nativeId,
          side: r.side,
          price: r.price,
          amount: r.amount,
          filled: fills ? r.amount : F.ZERO,
          status: fills ? "closed" : "open",
          averagePrice: fills ? at : null,
          cost: fills ? F.mul(at, r.amount) : F.ZERO,
          fee: F.ZERO,
          queuePriorityPreserved: null,
          updatedAt: now
        }
        orders.set(venueOrderId, order)
        const reported: Array<VenueEvent> = fills
          ? [
              {
                _tag: "Fill",
                fill: {
                  tradeId: `${venueOrderId}-1`,
                  venueOrderId,
                  clientOrderId: r.clientOrderId,
                  nativeId: r.nativeId,
                  side: r.side,
                  price: at,
                  amount: r.amount,
                  fee: F.ZERO,
                  liquidity: "taker",
                  ts: now
                }
              },
              { _tag: "Order", order }
            ]
          : [{ _tag: "Order", order }]
        yield* PubSub.publishAll(events, reported)
        return { ...order, events: reported }
      })

    const cancelOrder = (venueOrderId: string) =>
      Effect.gen(function* () {
        const order = orders.get(venueOrderId)
        if (order === undefined || order.status !== "open") return yield* refuse(`order ${venueOrderId} is not open`)
        const canceled: VenueOrder = { ...order, status: "canceled", updatedAt: yield* Clock.currentTimeMillis }
        orders.set(venueOrderId, canceled)
        yield* PubSub.publish(events, { _tag: "Order", order: canceled })
        return canceled
      })

    const venue: Venue = {
      info: {
        id: "tiny",
        name: "Tiny fixed book",
        book_model: "yes_book",
        // What the venue does; account reads (balance, positions, orders, fills) are the server's own ledger.
        has: capabilities({
          fetch_markets: true,
          search: true,
          fetch_order_book: true,
          fetch_trades: true,
          watch_order_book: false,
          create_order: true,
          cancel_order: true,
          cancel_all_orders: true,
          edit_order: false,
          fetch_orders: true,
          fetch_my_trades: true,
          fetch_positions: true,
          fetch_balance: true,
          post_only: false,
          reduce_only: false,
          ioc: false,
          fok: false,
          market_order: false
        })
      },
      accounts: ["default"],
      markets: Effect.succeed([market]),
      market: (nativeId) => Effect.succeed(nativeId === market.nativeId ? market : undefined),
      book: (nativeId) =>
        nativeId === market.nativeId ? Effect.map(Clock.currentTimeMillis, book) : refuse(`no market ${nativeId}`),
      trades: () => Effect.succeed([]),
      placeOrder,
      cancelOrder,
      amendOrder: () =>
        Effect.fail(new VenueError({ venue: "tiny", kind: "not_supported", reason: "tiny orders cannot be amended" })),
      orderByClientId: (clientOrderId) =>
        Effect.succeed([...orders.values()].find((o) => o.clientOrderId === clientOrderId)),
      subscribe: PubSub.subscribe(events)
    }
    return venue
  })

// --- The registration: the one value the server is given.

const tinyRegistration: VenueRegistration<TinyConfig> = {
  id: "tiny",
  description: "A fixed book with one market, for the walk-through",
  settings: {
    variables: ["TINY_ASK"],
    credentials: [],
    read: readTinyConfig
  },
  doctor: {
    account: (env) =>
      Either.match(readTinyConfig(env), {
        onLeft: (detail) => ({ status: "fail", detail }),
        onRight: ({ ask }) => ({ status: "ok", detail: `sells YES at ${F.format(ask)}` })
      })
  },
  build: makeTinyVenue
}

// --- The server `serve` builds, with the registration passed in.

const server = (env: Record<string, string>) => {
  const registrations = [tinyRegistration]
  const venues = servedVenuesLayer({
    list: parseVenueList("sim,tiny", registrationsWith(registrations)),
    env,
    seed: 7,
    simVenues: 1,
    registrations
  })
  return serveOn(Layer.orDie(venues))
}

const place = (json: Record<string, unknown>) =>
  authed("POST", "/trading/orders", { account: "tiny:default", market_id: "tiny:ONE", type: "limit", ...json })

describe("adding a venue", () => {
  it.live(
    "a venue registered from outside the shared files serves its market, its book, an order and its fill",
    () =>
      Effect.gen(function* () {
        const venues = yield* request("GET", "/venues")
        assert.deepStrictEqual(
          venues.body.data.map((v: any) => v.id),
          ["sim", "tiny"]
        )
        const tiny = yield* request("GET", "/venues/tiny")
        assert.strictEqual(tiny.body.has.create_order, true)
        assert.strictEqual(tiny.body.has.edit_order, false)
        // its own account, and the paper account every venue has
        const accounts = yield* authed("GET", "/trading/accounts?account=*")
        assert.includeMembers(
          accounts.body.data.map((a: any) => a.account),
          ["tiny:default", "tiny:paper"]
        )

        const markets = yield* request("GET", "/venues/tiny/markets")
        assert.strictEqual(markets.status, 200, markets.text)
        assert.deepStrictEqual(
          markets.body.data.map((m: any) => m.id),
          ["tiny:ONE"]
        )
        const book = yield* request("GET", "/venues/tiny/markets/tiny:ONE/book")
        assert.strictEqual(book.status, 200, book.text)
        assert.deepStrictEqual(book.body.asks[0], { price: "0.55", size: "100" })
        assert.deepStrictEqual(book.body.bids[0], { price: "0.54", size: "100" })

        // a buy at or above the ask fills there in full; one below it rests, and cancels
        const filled = yield* place({ side: "buy", amount: "5", price: "0.58" })
        assert.strictEqual(filled.status, 201, filled.text)
        assert.strictEqual(filled.body.status, "closed")
        assert.strictEqual(filled.body.filled, "5")
        const fills = yield* eventually(
          authed("GET", "/trading/fills?account=tiny:default"),
          (r: any) => r.body.data?.length === 1
        )
        assert.strictEqual(fills.body.data[0].price, "0.55")
        assert.strictEqual(fills.body.data[0].amount, "5")
        const positions = yield* authed("GET", "/trading/positions?account=tiny:default")
        assert.deepStrictEqual(
          positions.body.data.map((p: any) => [p.market_id, p.contracts]),
          [["tiny:ONE", "5"]]
        )

        const resting = yield* place({ side: "buy", amount: "2", price: "0.50" })
        assert.strictEqual(resting.body.status, "open", resting.text)
        const canceled = yield* Effect.flatMap(Owner, (token) =>
          request("DELETE", `/trading/orders/${resting.body.id}`, { token })
        )
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")

        // what `has` says it cannot do is refused before the venue is asked
        const twice = yield* place({ side: "buy", amount: "2", price: "0.50" })
        const amended = yield* Effect.flatMap(Owner, (token) =>
          request("PATCH", `/trading/orders/${twice.body.id}`, { token, json: { price: "0.51" } })
        )
        assert.strictEqual(amended.status, 501, amended.text)
        assert.strictEqual(amended.body.error.code, "not_supported")
      }).pipe(Effect.provide(server({ TINY_ASK: "0.55" }))),
    20_000
  )

  it.effect("a bad setting stops the server from starting, with the registration's sentence", () =>
    Effect.gen(function* () {
      const started = yield* Effect.either(
        Layer.build(
          servedVenuesLayer({
            list: ["tiny"],
            env: { TINY_ASK: "1.5" },
            seed: 7,
            simVenues: 1,
            registrations: [tinyRegistration]
          })
        )
      )
      assert.isTrue(started._tag === "Left")
      if (started._tag === "Left") assert.include(String(started.left), "TINY_ASK must be a price")
    }).pipe(Effect.scoped)
  )

  it("is the walk-through of docs/architecture.md: its registration there is this file's, word for word", () => {
    const page = readFileSync(join(import.meta.dirname, "../../docs/architecture.md"), "utf8")
    const section = page.slice(page.indexOf("## Adding a venue"))
    const shown = /```ts\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf("\n## ", 1)))
    assert.isNotNull(shown)
    assert.include(readFileSync(import.meta.filename, "utf8"), shown![1]!)
  })

  it("is served by default, listed on serve's help page with its settings, and checked by doctor", async () => {
    const registrations = registrationsWith([tinyRegistration])
    assert.deepStrictEqual(parseVenueList(undefined, registrations), ["sim", "kalshi", "polymarket", "tiny"])
    assert.deepStrictEqual(parseVenueList(undefined), ["sim", "kalshi", "polymarket"])

    const root = commandSpec(rootCommand(simulationCommands, [tinyRegistration]))
    const serve = stripVTControlCharacters(renderHelp(root, resolveCommand(root, ["serve"]).spec, false, registrations))
    assert.match(serve, /^Venues:$/m)
    assert.match(serve, /^ {2}tiny +A fixed book with one market, for the walk-through\. Settings: TINY_ASK$/m)
    assert.match(serve, /^ {2}kalshi +Kalshi: /m)
    assert.include(serve, "KALSHI_API_KEY_ID")

    const home = mkdtempSync(join(tmpdir(), "crossbook-tiny-"))
    const check = (env: NodeJS.ProcessEnv) =>
      Effect.runPromise(
        doctor({
          home,
          dbFile: join(home, "engine.db"),
          controlFile: join(home, "control.db"),
          env,
          venues: registrations.filter((r) => r.id === "sim" || r.id === "tiny")
        })
      ).then((report) => report.checks.filter((c) => c.name.startsWith("venue ")))
    assert.deepStrictEqual(await check({ TINY_ASK: "0.42" }), [
      { name: "venue sim", status: "ok", detail: "embedded, reachable, no clock skew; no credentials needed" },
      {
        name: "venue tiny",
        status: "ok",
        detail: "embedded, reachable, no clock skew; no credentials needed; sells YES at 0.42"
      }
    ])
    const bad = await check({ TINY_ASK: "abc" })
    assert.strictEqual(bad[1]!.status, "fail")
    assert.include(bad[1]!.detail, "TINY_ASK must be a price on the cent grid")
  })
})
