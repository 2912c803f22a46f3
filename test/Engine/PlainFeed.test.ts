/**
 * A market view handed to a driven engine at a known time feeds the parents it wakes in plain code, at once: a stop
 * it fires is placed before the work answered runs, with what the child's fill did to the parent, and the journal is
 * the same as when the work runs as an Effect.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { DiscreteClock } from "../../sim/DiscreteClock.ts"
import { generateTape } from "../../sim/Generator.ts"
import { drivenOverTape } from "../../sim/Replay.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { asMarketId } from "../../src/Domain/Ids.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"

/** A driven engine over a tape venue at the tape's first moment; `plain`: views are handed with the clock's time. */
const fire = (plain: boolean) =>
  Effect.gen(function* () {
    const { header, events } = generateTape({ seed: 3, markets: 2, durationS: 5 })
    const t0 = events[0]!.ts
    const clock = new DiscreteClock(t0)
    const { venue, context, engine } = yield* drivenOverTape(
      { header, events },
      { clock, store: OrderStore.layerMemory, startingCash: "1000" }
    )
    const store = Context.get(context, OrderStore)
    const market = asMarketId(header.markets[0]!.id)!
    const view = venue.view(market)!
    const stop = F.sub(view.bestBid!, F.of("0.01"))
    const created = yield* engine
      .create(
        {
          account: "sim:default",
          market_id: market,
          side: "sell",
          type: "stop_market",
          amount: "1",
          stop_price: F.format(stop),
          params: {}
        },
        "test"
      )
      .pipe(Effect.withClock(clock))
    let placed = 0
    const placeNow = venue.now!.placeOrder
    ;(venue.now as { placeOrder: typeof placeNow }).placeOrder = (r, at) => {
      placed += 1
      return placeNow(r, at)
    }
    // A view that does not reach the stop wakes nobody.
    assert.isNull(engine.marketView(market, { ...view, bestBid: F.add(stop, F.of("0.01")) }, t0))
    const work = engine.marketView(
      market,
      { ...view, bestBid: stop },
      plain ? clock.unsafeCurrentTimeMillis() : undefined
    )
    assert.isNotNull(work)
    const placedBeforeWork = placed
    const doneBeforeWork = (yield* store.eventsAfter(0, 10_000)).some((e) => e.kind === "managed.done")
    yield* work!.pipe(Effect.withClock(clock))
    // What the child's fill did to its parent: fed in plain code by the view at a known time; here, for the work that
    // ran as an Effect, by whoever drives the engine next (or the engine's own fiber).
    const children = engine.childrenNow(clock.unsafeCurrentTimeMillis())
    if (children !== null) yield* children.pipe(Effect.withClock(clock))
    for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
    const journal = yield* store.eventsAfter(0, 10_000)
    return {
      placedBeforeWork,
      doneBeforeWork,
      placed,
      parent: created.order.id,
      log: journal.map((e) => JSON.stringify({ ts: e.ts, kind: e.kind, key: e.key, payload: e.payload }))
    }
  }).pipe(Effect.scoped)

describe("a driven engine fed a view at a known time", () => {
  it.effect("places the child of a stop it fires at once, in plain code, and writes what the Effect path writes", () =>
    Effect.gen(function* () {
      const plain = yield* fire(true)
      const viaEffect = yield* fire(false)
      assert.strictEqual(plain.placedBeforeWork, 1, "the child is placed before the work answered runs")
      assert.strictEqual(viaEffect.placedBeforeWork, 0, "without the time the work places it")
      assert.isTrue(plain.doneBeforeWork, "the child's fill ends the parent in the same plain run")
      assert.isFalse(viaEffect.doneBeforeWork)
      assert.strictEqual(plain.placed, 1)
      assert.strictEqual(viaEffect.placed, 1)
      assert.isTrue(plain.log.some((line) => line.includes('"managed.child"')))
      assert.deepStrictEqual(plain.log, viaEffect.log)
    })
  )
})
