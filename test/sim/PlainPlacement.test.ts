import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Schema, type Scope } from "effect"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { generateTape } from "../../sim/Generator.ts"
import { replay, type RunContext, Scenario, simWiring, type Wiring } from "../../sim/Replay.ts"
import { TapeBook } from "../../sim/TapeBook.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { ApiError } from "../../src/Domain/Errors.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import * as Id from "../../src/Domain/Ids.ts"
import type { Order } from "../../src/Domain/Order.ts"
import { DEFAULT_RULES } from "../../src/Trading/Risk.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import type { TapeVenue } from "../../sim/TapeVenue.ts"
import { Engine } from "../../src/Engine/Engine.ts"

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tapes/${name}`, import.meta.url), "utf8")

/** The same services, with the tape venues' plain-code answers taken away: every placement goes through Effects. */
const throughEffects: Wiring = (venues, seed, startingCash) =>
  simWiring(
    Layer.effect(
      VenueGateway,
      Effect.map(VenueGateway, (gateway) =>
        VenueGateway.fromVenues(
          gateway.venues.map((venue) => {
            const { now: _now, ...rest } = venue
            return rest
          })
        )
      )
    ).pipe(Layer.provide(venues)),
    seed,
    startingCash
  )

const cents = (c: number) => F.format(F.mul(F.of("0.01"), F.fromInt(Math.min(98, Math.max(2, c)))))

/** What of an order is drawn: its time, market, type, side, distance from the touch in cents and amount. */
const Drawn = fc.record({
  at_ms: fc.integer({ min: 0, max: 90_000 }),
  market: fc.nat({ max: 1 }),
  kind: fc.integer({ min: 0, max: 7 }),
  buy: fc.boolean(),
  away: fc.integer({ min: -3, max: 12 }),
  amount: fc.integer({ min: 1, max: 6 })
})

type DrawnOrder = typeof Drawn extends fc.Arbitrary<infer A> ? A : never

/**
 * A scenario that takes every path the property counts, whatever the draws: a twap selling behind the touch (its
 * unfilled slices cancelled at each next slice time), an oco resting behind with its stop above (children), an iceberg
 * at the touch (fills) and a twap of fewer lots than slices (refused).
 */
const EVERY_PATH: Array<DrawnOrder> = [
  { at_ms: 0, market: 1, kind: 5, buy: false, away: -3, amount: 3 },
  { at_ms: 0, market: 0, kind: 4, buy: true, away: 2, amount: 3 },
  { at_ms: 0, market: 0, kind: 3, buy: true, away: 0, amount: 4 },
  { at_ms: 0, market: 1, kind: 5, buy: true, away: 0, amount: 2 }
]

/** An order of the drawn type, priced from its market's touch `bid`/`ask` in cents (some too far, some refused). */
const orderOf = (d: DrawnOrder, market: string, bid: number, ask: number) => {
  const side = d.buy ? "buy" : "sell"
  const through = d.buy ? cents(ask + d.away) : cents(bid - d.away)
  const behind = d.buy ? cents(bid - Math.abs(d.away)) : cents(ask + Math.abs(d.away))
  const base = { market_id: market, side, amount: String(d.amount) }
  switch (d.kind) {
    case 0:
      return { ...base, type: "stop_market", stop_price: through }
    case 1:
      return { ...base, type: "stop_limit", stop_price: through, price: through }
    case 2:
      return { ...base, type: "trailing_stop", params: { trail: cents(Math.abs(d.away) + 1) } }
    case 3:
      return { ...base, type: "iceberg", price: behind, params: { display: "1" } }
    case 4:
      return {
        ...base,
        type: "oco",
        params: {
          legs: [
            { type: "limit", price: behind, side },
            { type: "stop_market", stop_price: through, side }
          ]
        }
      }
    case 5:
      return { ...base, type: "twap", price: through, params: { window_s: 60, slices: 3, style: "limit" } }
    case 6:
      return { ...base, type: "peg", params: { reference: "near", offset: "0.01" } }
    default:
      return { ...base, type: "limit", price: through }
  }
}

/** A short replay of one generated market; `f` runs at its end, at the tape's last time. */
const atTheEnd = (
  f: (run: RunContext, market: Id.MarketId, now: number) => Effect.Effect<void, unknown, Scope.Scope>
) =>
  Effect.gen(function* () {
    const { header, events } = generateTape({ seed: 5, markets: 1, durationS: 10 })
    const market = header.markets[0]!.id as Id.MarketId
    const now = events[events.length - 1]!.ts
    yield* replay({
      tape: { header, events },
      hooks: { end: (run) => f(run, market, now).pipe(Effect.scoped, Effect.orDie) }
    })
  })

describe("placing on a tape venue in plain code", () => {
  it.live("gives the demo scenario's event log byte for byte as placing through Effects", () =>
    Effect.gen(function* () {
      const tape = fixture("demo.jsonl")
      const orders = Schema.decodeUnknownSync(Scenario)(JSON.parse(fixture("demo-orders.json")))
      const plain = yield* replay({ tape, orders, seed: 3 })
      const effects = yield* replay({ tape, orders, seed: 3, wiring: throughEffects })
      assert.isAbove(plain.summary.fills, 0)
      assert.strictEqual(plain.log, effects.log)
      assert.deepStrictEqual(plain.summary, effects.summary)
    })
  )

  it.live(
    "property: any scenario of engine and plain orders gives the same log either way, refusals included",
    () => {
      const seen = { children: 0, fills: 0, refused: 0, canceled: 0 }
      return Effect.promise(() =>
        fc
          .assert(
            fc.asyncProperty(
              fc.integer({ min: 1, max: 10_000 }),
              fc.array(Drawn, { minLength: 1, maxLength: 12 }),
              async (seed, drawn) => {
                const { header, events } = generateTape({ seed, markets: 2, durationS: 120 })
                const books = new Map(header.markets.map((m) => [m.id, new TapeBook()]))
                for (const e of events) {
                  if (e.ts > events[0]!.ts) break
                  books.get(e.market)?.apply(e)
                }
                const orders = drawn.map((d) => {
                  const market = header.markets[d.market]!.id
                  const book = books.get(market)!
                  const bid = Math.round((book.bestBid() ?? F.of("0.45")) / 10_000)
                  const ask = Math.round((book.bestAsk() ?? F.of("0.55")) / 10_000)
                  return { at_ms: d.at_ms, order: orderOf(d, market, bid, ask) }
                })
                const scenario = Schema.decodeUnknownSync(Scenario)(orders)
                const tape = { header, events }
                const plain = await Effect.runPromise(replay({ tape, orders: scenario, seed }))
                const effects = await Effect.runPromise(
                  replay({ tape, orders: scenario, seed, wiring: throughEffects })
                )
                assert.strictEqual(plain.log, effects.log)
                assert.deepStrictEqual(plain.summary, effects.summary)
                seen.children += (plain.log.match(/"kind":"managed\.child"/g) ?? []).length
                seen.fills += plain.summary.fills
                seen.refused += (plain.log.match(/"kind":"order\.rejected"/g) ?? []).length
                seen.refused += plain.summary.orders.refused.length
                seen.canceled += (plain.log.match(/"kind":"order\.canceled"/g) ?? []).length
              }
            ),
            // Drawn runs need not take every path (cancels are rare in them); the example always does.
            { numRuns: 10, examples: [[7, EVERY_PATH]] }
          )
          .then(() => {
            // The runs placed children, filled some, had some refused and pulled some: each path was taken.
            assert.isAbove(seen.children, 5)
            assert.isAbove(seen.fills, 0)
            assert.isAbove(seen.refused, 0)
            assert.isAbove(seen.canceled, 0)
          })
      )
    },
    120_000
  )

  it.live(
    "hands what the tape venue reported to the desk in plain code, and never publishes a plain answer twice",
    () =>
      atTheEnd((run, market, now) =>
        Effect.gen(function* () {
          const desk = Context.get(run.context, Desk)
          const engine = Context.get(run.context, Engine)
          const venue = Context.get(run.context, VenueGateway).handles[0] as TapeVenue
          // The desk is the venue's one subscriber: a plain answer comes with the order, not on the stream too.
          assert.strictEqual(venue.subscribers(), 1)
          const queue = yield* venue.subscribe
          assert.strictEqual(venue.subscribers(), 2)
          const bid = venue.view(market)!.bestBid!
          const placed = desk.placeNow(
            {
              account: "sim:default",
              market_id: market,
              side: "buy",
              type: "limit",
              amount: "2",
              price: F.format(bid)
            },
            "test",
            now
          ) as { order: Order }
          assert.strictEqual(placed.order.status, "open")
          assert.isTrue(yield* queue.isEmpty)
          // A print at its price reaches it in its queue: the fill goes to the desk in plain code.
          const reported = venue.applyNow({
            type: "trade",
            ts: now,
            market,
            price: F.format(bid),
            amount: "1000000",
            taker_side: "sell"
          })
          assert.isAbove(reported.length, 0)
          assert.isTrue(desk.applyNow(venue, reported))
          const filled = (yield* desk.get(placed.order.id))!
          assert.strictEqual(filled.filled, F.of("2"))
          assert.strictEqual(filled.status, "closed")
          // Applied again (as a subscription would hear it), it changes nothing.
          assert.isTrue(desk.applyNow(venue, reported))
          assert.strictEqual((yield* desk.fills({ orderId: placed.order.id })).length, 1)
          // A settlement is applied through Effects: nothing is done here.
          assert.isFalse(
            desk.applyNow(venue, [{ _tag: "Settled", nativeId: Id.nativeOf(market), payout: F.ONE, ts: now }])
          )
          // Nothing of the order's was left for the engine, which holds none of it.
          assert.isNull(engine.childrenNow(now))
        })
      )
  )

  it.live("pulls a child in plain code: the venue's answer applied with it, published nowhere else", () =>
    atTheEnd((run, market, now) =>
      Effect.gen(function* () {
        const desk = Context.get(run.context, Desk)
        const venue = Context.get(run.context, VenueGateway).handles[0] as TapeVenue
        const queue = yield* venue.subscribe
        const order = { account: "sim:default", market_id: market, side: "buy" as const, type: "limit" as const }
        const placed = desk.placeNow({ ...order, amount: "3", price: "0.02" }, "test", now) as { order: Order }
        const canceled = desk.cancelChildNow(placed.order.id, now)
        assert.isFalse(canceled === undefined || canceled instanceof ApiError)
        assert.strictEqual((canceled as Order).status, "canceled")
        assert.strictEqual((yield* desk.get(placed.order.id))!.status, "canceled")
        assert.isTrue(yield* queue.isEmpty)
        // Pulled again, it answers the order as it is; an order the desk does not hold is left to Effects.
        assert.strictEqual((desk.cancelChildNow(placed.order.id, now) as Order).status, "canceled")
        assert.isUndefined(desk.cancelChildNow("o_999999", now))
        // The journal holds its cancel once.
        const events = yield* Context.get(run.context, OrderStore).eventsAfter(0, 1_000_000, "order.canceled")
        assert.strictEqual(events.filter((e) => e.key === placed.order.id).length, 1)
      })
    )
  )

  it.live("answers at once with the lock free and no rule that reads the market; else leaves it to Effects", () =>
    atTheEnd((run, market, now) =>
      Effect.gen(function* () {
        const order = {
          account: "sim:default",
          market_id: market,
          side: "buy" as const,
          type: "limit" as const,
          amount: "1",
          price: "0.02"
        }
        const desk = Context.get(run.context, Desk)
        const placed = desk.placeNow(order, "test", now)
        assert.isFalse(placed === undefined || placed instanceof ApiError)
        assert.strictEqual((placed as { order: { status: string } }).order.status, "open")
        // The same client id and body answer the order placed, a different body is refused.
        const first = desk.placeNow({ ...order, client_order_id: "c-1" }, "test", now)
        const again = desk.placeNow({ ...order, client_order_id: "c-1" }, "test", now)
        assert.deepStrictEqual(again, { order: (first as { order: Order }).order, created: false })
        const other = desk.placeNow({ ...order, client_order_id: "c-1", amount: "2" }, "test", now)
        assert.instanceOf(other, ApiError)
        assert.strictEqual((other as ApiError).code, "validation_error")
        // A price collar reads the market's book: the placement is left to Effects, with nothing done.
        yield* desk.setRisk({ ...DEFAULT_RULES, price_collar: "0.95" }, "test")
        assert.isUndefined(desk.placeNow({ ...order, client_order_id: "c-2" }, "test", now))
        const placed2 = yield* desk.place({ ...order, client_order_id: "c-2" }, "test")
        assert.isTrue(placed2.created)
      })
    )
  )
})
