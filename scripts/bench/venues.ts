/**
 * Per-venue reaction: a stop on the fake Kalshi and Polymarket exchanges (the test fakes, on loopback), and the time
 * from a streamed book change that crosses it to its child order reaching the exchange (the request taken in), against the time the same
 * change takes to reach the adapter's event queue (the stream alone). Runs alone with
 * `node --expose-gc bin/run-ts.js scripts/bench/venues.ts`.
 */
import { Context, Effect, Exit, Fiber, Layer, Queue, Scope } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { performance } from "node:perf_hooks"
import { pathToFileURL } from "node:url"
import { submitOrder } from "../../src/Orders.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import { serverServices } from "../../src/Assembly.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import { makeSimVenue } from "../../src/Venues/SimVenue.ts"
import { venuesLayerFromList } from "../../src/Venues/Venues.ts"
import { signerOf } from "../../src/Venues/Polymarket/Signing.ts"
import { FakeKalshi } from "../../test/Venues/Kalshi/Fake.ts"
import { CONDITION, startFake } from "../../test/Venues/Polymarket/Fake.ts"
import { type Figure, ratio } from "./common.ts"

const CYCLES = 100

const quantile = (xs: ReadonlyArray<number>, q: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

/** Waits, a millisecond at a time, until `ready` holds (at most `ms`). */
const until = (ready: () => boolean, ms = 5000) =>
  Effect.gen(function* () {
    const start = performance.now()
    while (!ready()) {
      if (performance.now() - start > ms) return yield* Effect.dieMessage("bench: the venue did not get there in time")
      yield* Effect.sleep("1 millis")
    }
  })

interface Harness {
  readonly venue: string
  readonly marketId: string
  readonly env: Record<string, string>
  /** The stop: its size and its price, under the best bid until `cross`. */
  readonly amount: string
  readonly stopPrice: string
  /** How many orders the exchange has received. */
  readonly received: () => number
  /** Streams the change that takes the bid through the stop. */
  readonly cross: () => void
  /** Streams the book back above the stop, with the liquidity the child took. */
  readonly restore: () => void
  readonly subscribed: () => boolean
  readonly stop: () => Promise<void>
}

/**
 * Runs `CYCLES` stops through the server's own layers over the venue: each cycle places a sell stop under the best
 * bid, waits until the stream is watched, stamps the time, streams the change through it, and stamps the child's
 * arrival at the exchange; the stream alone is the time from the same change to its Book event in the venue's queue.
 */
const measure = (h: Harness) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const services = serverServices({
      seed: 7,
      store: OrderStore.layerMemory,
      auth: Auth.layerAllowAll,
      venues: venuesLayerFromList({
        list: [h.venue],
        env: h.env,
        sim: makeSimVenue({ seed: 7, stepMs: 1000, markets: 2 })
      }).pipe(Layer.orDie)
    })
    const context = yield* Layer.buildWithScope(services, scope)
    const gateway = Context.get(context, VenueGateway)
    const desk = Context.get(context, Desk)
    const venue = gateway.venue(h.venue)!
    // The stream alone: when each Book event reaches a queue of the venue's.
    const queue = yield* Scope.extend(venue.subscribe, scope)
    /** When the first Book event after the change reached the queue (0 until it does). */
    let firstBook = 0
    const watcher = yield* Effect.fork(
      Effect.forever(
        Effect.map(Queue.take(queue), (e) => {
          if (e._tag === "Book" && firstBook === 0) firstBook = performance.now()
        })
      )
    )
    const reactions: Array<number> = []
    const streams: Array<number> = []
    for (let i = 0; i < CYCLES + 10; i++) {
      const { order } = yield* submitOrder(
        { market_id: h.marketId, side: "sell", type: "stop_market", amount: h.amount, stop_price: h.stopPrice },
        `${h.venue}:default`,
        "bench"
      ).pipe(Effect.provide(context), Effect.orDie)
      yield* until(h.subscribed)
      yield* Effect.sleep("5 millis")
      const before = h.received()
      firstBook = 0
      const t0 = performance.now()
      h.cross()
      yield* until(() => h.received() > before && firstBook !== 0)
      // Cycles after the first ten count: the first ones pay for the venue's connections and the code's warm-up.
      if (i >= 10) {
        reactions.push(arrivals.at(-1)! - t0)
        streams.push(firstBook - t0)
      }
      yield* until(() => {
        const parent = Effect.runSync(desk.get(order.id).pipe(Effect.orDie))
        return parent !== undefined && ["closed", "canceled", "rejected"].includes(parent.status)
      })
      h.restore()
      // A quarter of a second apart: the venue's write limit (Kalshi's Basic tier: ten orders a second) is not what
      // is measured.
      yield* Effect.sleep("250 millis")
    }
    yield* Fiber.interrupt(watcher)
    yield* Scope.close(scope, Exit.void)
    yield* Effect.promise(() => h.stop())
    return { reactions, streams }
  })

/** When each order reached the exchange (performance.now()). */
const arrivals: Array<number> = []

/**
 * Stamps each order request as the exchange takes it in (its body read, before the exchange checks its signature or
 * matches it): `log` is the exchange's list of requests, `isOrder` picks the placements.
 */
const stampArrivals = <A>(log: Array<A>, isOrder: (entry: A) => boolean) => {
  const push = log.push.bind(log)
  log.push = (...items: Array<A>) => {
    if (items.some(isOrder)) arrivals.push(performance.now())
    return push(...items)
  }
}

const kalshiHarness = async (): Promise<Harness> => {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })
  const fake = new FakeKalshi(publicKey, [
    {
      ticker: "KXBENCH-26",
      event: "KXBENCH",
      title: "Bench market",
      yes: [
        ["0.40", "10"],
        ["0.35", "100000"]
      ],
      no: [["0.55", "100000"]]
    }
  ])
  await fake.start()
  stampArrivals(fake.requests, (r) => r.method === "POST" && r.path.endsWith("/orders"))
  return {
    venue: "kalshi",
    marketId: "kalshi:KXBENCH-26",
    amount: "1",
    stopPrice: "0.36",
    env: {
      KALSHI_API_URL: fake.apiUrl,
      KALSHI_WS_URL: fake.wsUrl,
      KALSHI_API_KEY_ID: "bench",
      KALSHI_PRIVATE_KEY: privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    },
    received: () => arrivals.length,
    cross: () => fake.move("KXBENCH-26", "yes", "0.40", "-10"),
    restore: () => {
      fake.move("KXBENCH-26", "yes", "0.40", "10")
      fake.move("KXBENCH-26", "yes", "0.35", "1")
    },
    subscribed: () =>
      fake.connections.some((c) => c.subs.some((s) => s.channel === "orderbook_delta" && s.tickers.has("KXBENCH-26"))),
    stop: () => fake.stop()
  }
}

const polymarketHarness = async (): Promise<Harness> => {
  const key = `0x${"5d".repeat(32)}`
  const fake = await startFake(signerOf(key).address)
  // A deep bid under the stop for its child to sell into; the best bid above it.
  fake.move("BUY", "0.48", "100000")
  stampArrivals(fake.calls, (c) => c === "POST /order")
  return {
    venue: "polymarket",
    marketId: `polymarket:${CONDITION}`,
    amount: "5",
    stopPrice: "0.5",
    env: {
      POLYMARKET_CLOB_URL: fake.url,
      POLYMARKET_GAMMA_URL: fake.url,
      POLYMARKET_DATA_URL: fake.url,
      POLYMARKET_WS_URL: fake.wsUrl,
      POLYMARKET_PRIVATE_KEY: key
    },
    received: () => arrivals.length,
    cross: () => fake.move("BUY", "0.55", "0"),
    restore: () => {
      fake.move("BUY", "0.55", "80")
      fake.move("BUY", "0.48", "100000")
    },
    subscribed: () => fake.connections() > 0,
    stop: () => fake.close()
  }
}

export const venueFigures = async (): Promise<Array<Figure>> => {
  const figures: Array<Figure> = []
  for (const make of [kalshiHarness, polymarketHarness]) {
    arrivals.length = 0
    const h = await make()
    const { reactions, streams } = await Effect.runPromise(measure(h))
    for (const [name, q] of [
      ["p50", 0.5],
      ["p99", 0.99]
    ] as const) {
      const value = quantile(reactions, q) * 1000
      const baseline = quantile(streams, q) * 1000
      figures.push({
        name: `venue.reaction_${name}_us.${h.venue}`,
        value: Math.round(value),
        unit: "µs",
        baseline: Math.round(baseline),
        ratio: ratio(value, baseline),
        baseline_is: "the same change from the exchange to the adapter's event queue (the stream alone)",
        cycles: reactions.length
      })
    }
  }
  return figures
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  for (const f of await venueFigures()) console.log(JSON.stringify(f))
}
