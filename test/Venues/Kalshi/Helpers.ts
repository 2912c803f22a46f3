/** The fake Kalshi exchange set up for a test: the account's key, a venue or a served server on the fake, and waits. */
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Layer, Option, Queue, type Scope } from "effect"
import { generateKeyPairSync } from "node:crypto"
import type { VenueEvent } from "../../../src/Services/VenueGateway.ts"
import { type KalshiConfig, makeKalshiVenue } from "../../../src/Venues/Kalshi/Venue.ts"
import { request } from "../../Http/TestServer.ts"
import { Owner, serveVenues } from "../ServeVenues.ts"
import { FakeKalshi, fakeKalshi, type FakeMarketSpec, tradingConfig } from "./Fake.ts"

const keys = generateKeyPairSync("rsa", { modulusLength: 2048 })
/** The account's key: the venue signs with it. */
export const privateKey = keys.privateKey
/** Its public half: the fake checks every signature with it. */
export const publicKey = keys.publicKey
/** The account's key as the settings take it. */
export const PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString()

export const MARKETS: ReadonlyArray<FakeMarketSpec> = [
  { ticker: "KXA-1", event: "KXA-26", title: "A", yes: [["0.20", "10"]], no: [["0.60", "10"]] },
  { ticker: "KXB-1", event: "KXB-26", title: "B", yes: [["0.30", "5"]], no: [["0.50", "5"]] }
]

/** A market with two levels on each side, as the server tests trade it (`kalshi:KXTEST-26-A`). */
export const TWO_LEVELS: FakeMarketSpec = {
  ticker: "KXTEST-26-A",
  event: "KXTEST-26",
  title: "Will the test pass?",
  yes: [
    ["0.40", "10"],
    ["0.38", "20"]
  ],
  no: [
    ["0.55", "5"],
    ["0.50", "30"]
  ]
}

/** Polls `read` until it answers something; dies after ~5 s. */
export const until = <A>(read: () => A | undefined | false, what: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < 500; i++) {
      const a = read()
      if (a !== undefined && a !== false) return a
      yield* Effect.sleep("10 millis")
    }
    return yield* Effect.dieMessage(`not reached in time: ${what}`)
  })

/** The next reported event that `pick` accepts (others are passed over); dies after ~5 s. */
export const next = <A>(
  events: Queue.Dequeue<VenueEvent>,
  pick: (e: VenueEvent) => A | undefined,
  what: string
): Effect.Effect<A> =>
  Effect.gen(function* () {
    for (;;) {
      const e = yield* Queue.take(events)
      const a = pick(e)
      if (a !== undefined) return a
    }
  }).pipe(
    Effect.timeout("5 seconds"),
    Effect.catchAll(() => Effect.dieMessage(`no event in time: ${what}`))
  )

/** Every event reported so far, without waiting. */
export const drain = (events: Queue.Dequeue<VenueEvent>) => Effect.map(Queue.takeAll(events), (c) => [...c])

export const noEvent = (events: Queue.Dequeue<VenueEvent>, pick: (e: VenueEvent) => boolean) =>
  Effect.map(Queue.poll(events), (o) => Option.isSome(o) && pick(o.value))

/** The fake exchange with these markets, started for the scope. */
export const exchange = (markets: ReadonlyArray<FakeMarketSpec>, tune: (fake: FakeKalshi) => void = () => {}) =>
  fakeKalshi(publicKey, markets, tune)

/** A venue trading on the fake with the account's key, its settings changed by `over`. */
export const venueOn = (x: FakeKalshi, over: Partial<KalshiConfig> = {}) =>
  makeKalshiVenue({ ...tradingConfig(x, PEM), ...over })

/**
 * A fake exchange and a venue trading on it, its event queue open, its socket subscribed to the account's channels.
 */
export const setup = (
  over: Partial<KalshiConfig> = {},
  tune: (fake: FakeKalshi) => void = () => {},
  markets: ReadonlyArray<FakeMarketSpec> = MARKETS
) =>
  Effect.gen(function* () {
    const x = yield* exchange(markets, tune)
    const venue = yield* venueOn(x, over)
    const events = yield* venue.subscribe
    yield* until(
      () => x.connections[0]?.subs.some((s) => s.channel === "user_orders"),
      "the account's channels subscribed"
    )
    return { x, venue, events }
  })

/** Runs a test body with a real HTTP client and a scope. */
export const live = <A, E>(body: Effect.Effect<A, E, Scope.Scope | HttpClient.HttpClient>) =>
  body.pipe(Effect.provide(NodeHttpClient.layer), Effect.scoped)

/** The fake exchange behind a served Kalshi. */
export class Exchange extends Context.Tag("test/FakeKalshi")<Exchange, FakeKalshi>() {}

/** The fake, started while the layer lasts: this one, or a fresh one with these markets each time it is built. */
export const exchangeLayer = (fake: FakeKalshi | ReadonlyArray<FakeMarketSpec>) =>
  Layer.scoped(
    Exchange,
    Effect.acquireRelease(
      Effect.promise(() => {
        const x = fake instanceof FakeKalshi ? fake : new FakeKalshi(publicKey, fake)
        return x.start().then(() => x)
      }),
      (x) => Effect.promise(() => x.stop())
    )
  )

/** The settings `serve` reads to take public data from the fake, without a key. */
export const publicEnv = (x: FakeKalshi, timeoutMs: number): Record<string, string> => ({
  KALSHI_API_URL: x.apiUrl,
  KALSHI_WS_URL: x.wsUrl,
  KALSHI_TIMEOUT_MS: String(timeoutMs)
})

/** The settings `serve` reads to trade on the fake with the account's key. */
export const tradingEnv = (x: FakeKalshi, timeoutMs: number): Record<string, string> => ({
  ...publicEnv(x, timeoutMs),
  KALSHI_API_KEY_ID: "key-1",
  KALSHI_PRIVATE_KEY: PEM
})

/** The server's layers from the venue list `sim,kalshi`, Kalshi's settings read from the fake (by `env`). */
export const servedKalshi = (options: {
  readonly env: (x: FakeKalshi) => Record<string, string>
  readonly sim: { readonly seed: number; readonly markets: number }
  readonly engineFile?: string | undefined
}) =>
  serveVenues({
    list: ["sim", "kalshi"],
    env: Effect.map(Exchange, options.env),
    sim: options.sim,
    engineFile: options.engineFile
  })

/** The server `serve` builds on the fake exchange: `servedKalshi` with the fake (`exchangeLayer`) beside it. */
export const serverOn = (
  fake: FakeKalshi | ReadonlyArray<FakeMarketSpec>,
  options: Parameters<typeof servedKalshi>[0]
) => servedKalshi(options).pipe(Layer.provideMerge(exchangeLayer(fake))) as Layer.Layer<Owner | Exchange | any>

/** Places an order for the Kalshi account on `marketId` through the server, as its owner. */
export const placeOn = (marketId: string) => (json: Record<string, unknown>) =>
  Effect.flatMap(Owner, (token) =>
    request("POST", "/trading/orders", { token, json: { account: "kalshi:default", market_id: marketId, ...json } })
  )
