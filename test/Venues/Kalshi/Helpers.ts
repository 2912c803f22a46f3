/** A Kalshi venue wired to a fake exchange for one test, and waits on what it reports. */
import type { HttpClient } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Option, Queue, type Scope } from "effect"
import type { KeyObject } from "node:crypto"
import type { VenueEvent } from "../../../src/Services/VenueGateway.ts"
import { type KalshiConfig, makeKalshiVenue } from "../../../src/Venues/Kalshi/Venue.ts"
import { type FakeKalshi, fakeKalshi, type FakeMarketSpec, tradingConfig } from "./Fake.ts"

export const MARKETS: ReadonlyArray<FakeMarketSpec> = [
  { ticker: "KXA-1", event: "KXA-26", title: "A", yes: [["0.20", "10"]], no: [["0.60", "10"]] },
  { ticker: "KXB-1", event: "KXB-26", title: "B", yes: [["0.30", "5"]], no: [["0.50", "5"]] }
]

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

/**
 * A fake exchange and a venue trading on it, its event queue open, its socket subscribed to the account's channels.
 */
export const setup = (
  publicKey: KeyObject,
  pem: string,
  over: Partial<KalshiConfig> = {},
  tune: (fake: FakeKalshi) => void = () => {},
  markets: ReadonlyArray<FakeMarketSpec> = MARKETS
) =>
  Effect.gen(function* () {
    const x = yield* fakeKalshi(publicKey, markets, tune)
    const venue = yield* makeKalshiVenue({ ...tradingConfig(x, pem), ...over })
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
