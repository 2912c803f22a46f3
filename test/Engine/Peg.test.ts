import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, type Params, pegPrice, type State, type Typed, validate } from "../../src/Engine/Peg.ts"

import { RUNS, type Check, Venue, actArb, checkExposure, checkFills, baseSpec, ok, fieldsOf } from "./FakeVenue.ts"
// ---- end of the tiny venue ----

const book = (bid: string | null, ask: string | null): MarketView => ({
  bestBid: bid === null ? null : F.of(bid),
  bestAsk: ask === null ? null : F.of(ask),
  last: null
})

const peg = (over: Partial<ParentSpec> = {}, params: Params = {}) => {
  const spec = baseSpec({ price: null, ...over })
  return { spec, params: ok(validate(spec, params)) }
}

describe("peg", () => {
  it("validates offset, stay, level cap, bounds and time in force", () => {
    const spec = baseSpec({ price: null })
    expect(validate(spec, {})).toEqual({
      params: { reference: "near", offset: F.ZERO, minStayMs: 0, levelCap: null, bound: null }
    })
    expect(fieldsOf(validate(spec, { min_price: "0.3" }))).toEqual(["params.min_price"])
    expect(fieldsOf(validate(baseSpec({ side: "sell" }), { max_price: "0.3" }))).toEqual(["params.max_price"])
    expect(fieldsOf(validate(spec, { max_price: "0.305" }))).toEqual(["params.max_price"])
    expect(fieldsOf(validate(spec, { level_cap: -1, min_stay_s: -2 }))).toEqual([
      "params.min_stay_s",
      "params.level_cap"
    ])
    expect(fieldsOf(validate(baseSpec({ timeInForce: "fok" }), {}))).toEqual(["time_in_force"])
    expect(ok(validate(baseSpec({ price: F.of("0.4") }), { max_price: "0.45" })).bound).toBe(F.of("0.4"))
    expect(ok(validate(baseSpec({ side: "sell", price: F.of("0.4") }), { min_price: "0.45" })).bound).toBe(F.of("0.45"))
  })

  it("prices at the reference plus the offset, rounded passively, bounded, capped and behind the far side", () => {
    const at = (over: Partial<ParentSpec>, params: Params, view: MarketView, anchor: string | null = null) => {
      const p = peg(over, params)
      return F.formatOrNull(pegPrice(p.spec, p.params, anchor === null ? null : F.of(anchor), view))
    }
    const b = book("0.40", "0.45")
    expect(at({}, {}, b)).toBe("0.4")
    expect(at({}, { offset: "0.02" }, b)).toBe("0.42")
    expect(at({ side: "sell" }, { offset: "0.02" }, b)).toBe("0.43")
    expect(at({}, { reference: "far" }, b)).toBe("0.45")
    expect(at({}, { reference: "mid" }, b)).toBe("0.42")
    expect(at({ side: "sell" }, { reference: "mid" }, b)).toBe("0.43")
    expect(at({}, { reference: "mid", offset: "0.005" }, b)).toBe("0.43")
    expect(at({}, { offset: "0.1", max_price: "0.43" }, b)).toBe("0.43")
    expect(at({ side: "sell" }, { offset: "0.1", min_price: "0.42" }, b)).toBe("0.42")
    expect(at({ postOnly: true }, { offset: "0.1" }, b)).toBe("0.44")
    expect(at({ postOnly: true, side: "sell" }, { reference: "far" }, b)).toBe("0.41")
    expect(at({}, { level_cap: 2 }, book("0.50", "0.55"), "0.40")).toBe("0.42")
    expect(at({}, { level_cap: 2 }, book("0.30", "0.55"), "0.40")).toBeNull()
    expect(at({ postOnly: true }, {}, book("0.40", "0.40"))).toBe("0.39")
    expect(at({ postOnly: true }, {}, book(null, "0.01"))).toBeNull()
    expect(at({}, {}, book(null, "0.45"))).toBeNull()
    expect(at({}, { reference: "mid" }, book("0.40", null))).toBeNull()
  })

  it("places the first child on the first market view with a reference", () => {
    const { spec, params } = peg({ reduceOnly: true }, { offset: "0.01", min_stay_s: 2 })
    expect(core.init(spec, params, 1).commands).toEqual([])
    const v = new Venue(core, spec, params, 1)
    v.market(book(null, "0.5"))
    expect(v.places()).toEqual([])
    v.now += 10
    const step = v.feed({ _tag: "Market", ts: v.now, view: book("0.4", "0.5") })
    expect(step).toEqual([
      { _tag: "Trigger" },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.41"),
          amount: F.of("10"),
          timeInForce: "gtc",
          postOnly: false,
          reduceOnly: true,
          role: "peg"
        }
      },
      { _tag: "Emit", kind: "managed.peg", payload: { child: 1, price: "0.41", amount: "10", reason: "peg" } },
      { _tag: "SetTimer", timer: "stay:1", at: v.now + 2000 }
    ])
    expect(core.info(v.state)).toEqual({ anchor: "0.41", price: "0.41", live_child: 1, repegs: 0, filled: "0" })
  })

  it("re-pegs after min_stay_s: cancel, wait for the ack, then place what is left at the latest price", () => {
    const { spec, params } = peg({}, { min_stay_s: 5 })
    const v = new Venue(core, spec, params, 1)
    v.market(book("0.40", "0.45"))
    v.fill(v.children.get(1)!, F.of("3"))
    v.act({ t: "wait", ms: 1000 })
    v.market(book("0.42", "0.45"))
    expect(v.log.some((e) => e.command._tag === "Cancel")).toBe(false)
    v.act({ t: "wait", ms: 4000 })
    expect(v.log.filter((e) => e.command._tag === "Cancel")).toEqual([
      { ts: 1_005_000, command: { _tag: "Cancel", child: 1 } }
    ])
    v.market(book("0.43", "0.45"))
    expect(v.places().length).toBe(1)
    v.act({ t: "cancelAck", pick: 0 })
    const last = v.places().at(-1)!
    expect([last.spec.child, F.format(last.spec.price), F.format(last.spec.amount)]).toEqual([2, "0.43", "7"])
    expect(v.log.at(-1)?.command).toEqual({ _tag: "SetTimer", timer: "stay:2", at: v.now + 5000 })
    expect(core.info(v.state)).toEqual({ anchor: "0.4", price: "0.43", live_child: 2, repegs: 1, filled: "3" })
    v.fill(v.children.get(2)!, F.of("7"))
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "filled 10" })
  })

  it("replaces a child the venue expired, and ends rejected on a refusal", () => {
    const { spec, params } = peg({ side: "sell" })
    const v = new Venue(core, spec, params, 1)
    v.market(book("0.40", "0.45"))
    v.act({ t: "venueEnd", pick: 1 })
    expect(v.places().map((p) => [p.spec.child, F.format(p.spec.price)])).toEqual([
      [1, "0.45"],
      [2, "0.45"]
    ])
    v.feed({
      _tag: "ChildDone",
      ts: v.now,
      child: 2,
      status: "rejected",
      filled: F.ZERO,
      reason: "post only would take"
    })
    expect(v.finished).toEqual({ _tag: "Finish", status: "rejected", detail: "post only would take" })
  })

  const scenario = fc.record({
    lots: fc.integer({ min: 1, max: 30 }),
    reference: fc.constantFrom("near" as const, "far" as const, "mid" as const),
    offset: fc.integer({ min: 0, max: 3 }),
    stay: fc.integer({ min: 0, max: 3000 }),
    cap: fc.option(fc.integer({ min: 0, max: 6 })),
    bound: fc.option(fc.integer({ min: 20, max: 80 })),
    postOnly: fc.boolean(),
    side: fc.constantFrom("buy" as const, "sell" as const),
    acts: fc.array(actArb(2000), { maxLength: 80 })
  })
  type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

  const run = (p: Scenario, check: (spec: ParentSpec, params: Typed) => Check<State>) => {
    const spec = baseSpec({ side: p.side, amount: F.fromInt(p.lots), price: null, postOnly: p.postOnly })
    const bound =
      p.bound === null
        ? {}
        : { [p.side === "buy" ? "max_price" : "min_price"]: F.format(F.mul(spec.tick, F.fromInt(p.bound))) }
    const params = ok(
      validate(spec, {
        reference: p.reference,
        offset: F.format(F.mul(spec.tick, F.fromInt(p.offset))),
        min_stay_s: p.stay / 1000,
        ...(p.cap === null ? {} : { level_cap: p.cap }),
        ...bound
      })
    )
    const v = new Venue<Typed, State>(core, spec, params, 1, check(spec, params))
    for (const a of p.acts) v.act(a)
    v.drain()
    return v
  }

  it("P1: the peg price stays inside its bounds, never crosses with post_only, re-pegs no sooner than min_stay_s", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        let first: F.Fixed | null = null
        run(p, (spec, params) => (venue, input, commands) => {
          const ts = input?.ts ?? spec.createdAt
          for (const c of commands) {
            if (c._tag === "Cancel") {
              const child = venue.children.get(c.child)!
              expect(ts - child.placedAt, "re-peg no sooner than min_stay_s").toBeGreaterThanOrEqual(params.minStayMs)
            }
            if (c._tag !== "Place") continue
            const price = c.spec.price
            first ??= price
            expect(F.isMultipleOf(price, spec.tick) && price >= spec.tick && price <= F.sub(F.ONE, spec.tick)).toBe(
              true
            )
            if (params.bound !== null) {
              expect(spec.side === "buy" ? price <= params.bound : price >= params.bound, "inside the bound").toBe(true)
            }
            if (params.levelCap !== null) {
              expect(Math.abs(F.sub(price, first)), "within level_cap ticks").toBeLessThanOrEqual(
                F.mul(spec.tick, F.fromInt(params.levelCap))
              )
            }
            const far = spec.side === "buy" ? venue.view?.bestAsk : venue.view?.bestBid
            if (spec.postOnly && far != null) {
              expect(spec.side === "buy" ? price < far : price > far, "post_only never crosses").toBe(true)
            }
          }
        })
      }),
      RUNS
    )
  })

  it("P2: cancel-replace never lets Σ live + Σ filled exceed Q", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        run(p, () => (venue) => {
          checkExposure(venue)
          expect(venue.live().length, "one live child").toBeLessThanOrEqual(1)
        })
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
