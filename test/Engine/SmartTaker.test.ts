import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, type Params, type State, type Typed, validate } from "../../src/Engine/SmartTaker.ts"

import { RUNS, type Check, Venue, actArb, checkExposure, checkFills, baseSpec, ok, fieldsOf } from "./FakeVenue.ts"
// ---- end of the tiny venue ----

const T0 = 1_000_000

const book = (bid: string | null, ask: string | null): MarketView => ({
  bestBid: bid === null ? null : F.of(bid),
  bestAsk: ask === null ? null : F.of(ask),
  last: null
})

const taker = (over: Partial<ParentSpec> = {}, params: Params = { limit: "0.45" }) => {
  const spec = baseSpec({ price: null, ...over })
  return { spec, params: ok(validate(spec, params)) }
}

const clips = (v: Venue<Typed, State>) => v.places().map((p) => [p.ts, F.format(p.spec.amount), F.format(p.spec.price)])

describe("smart_taker", () => {
  it("validates clip, bound, interval and expiry", () => {
    const spec = baseSpec({ price: null })
    expect(validate(spec, { limit: "0.45" })).toEqual({
      params: { clip: null, intervalMs: 1000, limit: F.of("0.45"), slippage: null, expiresMs: null }
    })
    expect(fieldsOf(validate(spec, { clip: "2" }))).toEqual(["params.limit"])
    expect(fieldsOf(validate(spec, { limit: "0.455" }))).toEqual(["params.limit"])
    expect(fieldsOf(validate(spec, { max_slippage: "1" }))).toEqual(["params.max_slippage"])
    // Ten clips a second at most.
    expect(fieldsOf(validate(spec, { limit: "0.45", interval_s: 0.05 }))).toEqual(["params.interval_s"])
    expect(fieldsOf(validate(spec, { limit: "0.45", interval_s: 0.1 }))).toEqual([])
    expect(fieldsOf(validate(spec, { limit: "0.4", clip: "1.5" }))).toEqual(["params.clip"])
    expect(fieldsOf(validate(spec, { limit: "0.4", interval_s: 0, expires_s: -1 }))).toEqual([
      "params.interval_s",
      "params.expires_s"
    ])
  })

  it("with a limit only, sends the first IOC clip in init and one every interval", () => {
    const { spec, params } = taker({ reduceOnly: true }, { limit: "0.45", clip: "4", interval_s: 2, expires_s: 30 })
    const first = core.init(spec, params, 1)
    expect(first.commands).toEqual([
      { _tag: "SetTimer", timer: "expire", at: T0 + 30_000 },
      { _tag: "Trigger" },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.45"),
          amount: F.of("4"),
          timeInForce: "ioc",
          postOnly: false,
          reduceOnly: true,
          role: "clip"
        }
      },
      { _tag: "Emit", kind: "managed.slice", payload: { child: 1, clip: 1, amount: "4", price: "0.45" } },
      { _tag: "SetTimer", timer: "clip:2:1002000", at: T0 + 2000 }
    ])
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("3"))
    v.act({ t: "venueEnd", pick: 0 })
    v.act({ t: "wait", ms: 2000 })
    v.act({ t: "venueEnd", pick: 0 })
    v.act({ t: "wait", ms: 2000 })
    expect(clips(v)).toEqual([
      [T0, "4", "0.45"],
      [T0 + 2000, "4", "0.45"],
      [T0 + 4000, "4", "0.45"]
    ])
    expect(core.info(v.state)).toEqual({
      bound: "0.45",
      clips: 3,
      live_child: 3,
      next_clip_at: T0 + 6000,
      filled: "3"
    })
    v.fill(v.children.get(3)!, F.of("4"))
    v.act({ t: "wait", ms: 2000 })
    expect(clips(v).at(-1)).toEqual([T0 + 6000, "3", "0.45"])
    v.fill(v.children.get(4)!, F.of("3"))
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "filled 10" })
  })

  it("takes the bound from the touch at start ± max_slippage, the tighter with a limit, rounded passively", () => {
    const boundFor = (over: Partial<ParentSpec>, params: Params, view: MarketView) => {
      const t = taker(over, params)
      const v = new Venue(core, t.spec, t.params, 1)
      expect(v.places()).toEqual([])
      v.market(view)
      v.market(book("0.1", "0.2"))
      return v.places().map((p) => F.format(p.spec.price))
    }
    expect(boundFor({}, { max_slippage: "0.025" }, book("0.40", "0.42"))).toEqual(["0.44"])
    expect(boundFor({ side: "sell" }, { max_slippage: "0.025" }, book("0.40", "0.42"))).toEqual(["0.38"])
    expect(boundFor({}, { max_slippage: "0.05", limit: "0.45" }, book("0.40", "0.42"))).toEqual(["0.45"])
    expect(boundFor({}, { max_slippage: "0.02", limit: "0.45" }, book("0.40", "0.42"))).toEqual(["0.44"])
    expect(boundFor({ side: "sell" }, { max_slippage: "0.05", limit: "0.38" }, book("0.40", "0.42"))).toEqual(["0.38"])
    expect(boundFor({ side: "sell" }, { max_slippage: "0.5" }, book("0.40", "0.42"))).toEqual(["0.01"])
    expect(boundFor({}, { max_slippage: "0.5" }, book("0.40", "0.72"))).toEqual(["0.99"])
    expect(boundFor({}, { max_slippage: "0.01" }, book("0.40", null))).toEqual(["0.21"])
  })

  it("holds a clip that falls due while the previous one is live until that one ends", () => {
    const { spec, params } = taker({}, { limit: "0.45", clip: "2" })
    const v = new Venue(core, spec, params, 1)
    v.act({ t: "wait", ms: 1500 })
    expect(v.places().length).toBe(1)
    v.act({ t: "venueEnd", pick: 0 })
    expect(clips(v)).toEqual([
      [T0, "2", "0.45"],
      [T0 + 1500, "2", "0.45"]
    ])
    expect(v.timers.get("clip:3:1002500")).toBe(T0 + 2500)
  })

  it("gives up after expires_s with what it got, and sends nothing after", () => {
    const { spec, params } = taker({}, { limit: "0.45", clip: "2", expires_s: 2.5 })
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("2"))
    v.act({ t: "wait", ms: 1000 })
    v.act({ t: "venueEnd", pick: 0 })
    v.act({ t: "wait", ms: 1000 })
    v.act({ t: "wait", ms: 10_000 })
    expect(clips(v).map(([ts]) => ts)).toEqual([T0, T0 + 1000, T0 + 2000])
    expect(v.finished).toEqual({ _tag: "Finish", status: "canceled", detail: "expires_s passed; filled 2 of 10" })
    expect(v.log.find((e) => e.command._tag === "Finish")?.ts).toBe(T0 + 2500)
  })

  it("ends rejected when a clip is refused, and ignores duplicate fills", () => {
    const { spec, params } = taker()
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("1"))
    v.feed({ ...v.fills[0]!, ts: v.now })
    expect(core.info(v.state)["filled"]).toBe("1")
    v.feed({ _tag: "ChildDone", ts: v.now, child: 1, status: "rejected", filled: F.of("1"), reason: "no balance" })
    expect(v.finished).toEqual({ _tag: "Finish", status: "rejected", detail: "no balance" })
  })

  const scenario = fc
    .record({
      lots: fc.integer({ min: 1, max: 30 }),
      clip: fc.option(fc.integer({ min: 1, max: 30 })),
      interval: fc.integer({ min: 100, max: 3000 }),
      limit: fc.option(fc.integer({ min: 5, max: 95 })),
      slippage: fc.option(fc.integer({ min: 0, max: 10 })),
      expires: fc.option(fc.integer({ min: 1, max: 20_000 })),
      side: fc.constantFrom("buy" as const, "sell" as const),
      acts: fc.array(actArb(3000), { maxLength: 80 })
    })
    .filter((p) => p.limit !== null || p.slippage !== null)
  type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

  const run = (p: Scenario, check: (spec: ParentSpec, params: Typed) => Check<State>) => {
    const spec = baseSpec({ side: p.side, amount: F.fromInt(p.lots), price: null })
    const ticks = (n: number) => F.format(F.mul(spec.tick, F.fromInt(n)))
    const params = ok(
      validate(spec, {
        interval_s: p.interval / 1000,
        ...(p.clip === null ? {} : { clip: String(p.clip) }),
        ...(p.limit === null ? {} : { limit: ticks(p.limit) }),
        ...(p.slippage === null ? {} : { max_slippage: ticks(p.slippage) }),
        ...(p.expires === null ? {} : { expires_s: p.expires / 1000 })
      })
    )
    const v = new Venue<Typed, State>(core, spec, params, 1, check(spec, params))
    for (const a of p.acts) v.act(a)
    v.drain()
    if (params.expiresMs !== null) expect(v.finished, "a smart_taker ends by expires_s").not.toBeNull()
    return v
  }

  it("S1: each clip <= clip, every clip price within the bound, one clip in flight, nothing after expires_s", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        let touch: F.Fixed | null = null
        let last: number | null = null
        run(p, (spec, params) => (venue, input, commands) => {
          const buy = spec.side === "buy"
          if (input?._tag === "Market" && touch === null) touch = buy ? input.view.bestAsk : input.view.bestBid
          const ts = input?.ts ?? spec.createdAt
          expect(venue.live().length, "one clip in flight").toBeLessThanOrEqual(1)
          for (const c of commands) {
            if (c._tag !== "Place") continue
            const price = c.spec.price
            expect(c.spec.amount, "clip size").toBeLessThanOrEqual(params.clip ?? spec.amount)
            expect(c.spec.timeInForce).toBe("ioc")
            expect(F.isMultipleOf(price, spec.tick) && price >= spec.tick && price <= F.sub(F.ONE, spec.tick)).toBe(
              true
            )
            if (params.limit !== null)
              expect(buy ? price <= params.limit : price >= params.limit, "within limit").toBe(true)
            if (params.slippage !== null) {
              expect(touch, "a slippage bound needs the touch at start").not.toBeNull()
              const edge = buy ? F.add(touch!, params.slippage) : F.sub(touch!, params.slippage)
              const clamped = buy ? F.min(edge, F.sub(F.ONE, spec.tick)) : F.max(edge, spec.tick)
              expect(buy ? price <= clamped : price >= clamped, "within touch ± slippage").toBe(true)
            }
            if (params.expiresMs !== null) {
              expect(ts, "nothing after expires_s").toBeLessThan(spec.createdAt + params.expiresMs)
            }
            if (last !== null)
              expect(ts - last, "clips at least interval_s apart").toBeGreaterThanOrEqual(params.intervalMs)
            last = ts
          }
        })
      }),
      RUNS
    )
  })

  it("W2: Σ filled + Σ open <= Q at every step", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        run(p, () => (venue) => checkExposure(venue))
      }),
      RUNS
    )
  })

  it("G2: filled is the sum of distinct fills, and <= amount", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        run(p, () => (venue) => checkFills(venue, core.info))
      }),
      RUNS
    )
  })
})
