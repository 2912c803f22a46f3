import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, type State, type Typed, validate } from "../../src/Engine/Iceberg.ts"

import { RUNS, type Check, Venue, actArb, checkExposure, checkFills, baseSpec, ok, fieldsOf } from "./FakeVenue.ts"
// ---- end of the tiny venue ----

const book = (bid: string | null, ask: string | null): MarketView => ({
  bestBid: bid === null ? null : F.of(bid),
  bestAsk: ask === null ? null : F.of(ask),
  last: null
})

const iceberg = (over: Partial<ParentSpec> = {}, params: Parameters<typeof validate>[1] = { display: "3" }) => {
  const spec = baseSpec(over)
  return { spec, params: ok(validate(spec, params)) }
}

describe("iceberg", () => {
  it("validates display, price, delays and time in force", () => {
    const spec = baseSpec()
    expect(fieldsOf(validate(spec, { display: "2.5" }))).toEqual(["params.display"])
    expect(fieldsOf(validate(spec, { display: "0" }))).toEqual(["params.display"])
    expect(fieldsOf(validate(spec, { display: "11" }))).toEqual(["params.display"])
    expect(fieldsOf(validate(baseSpec({ price: null }), { display: "2" }))).toEqual(["price"])
    expect(fieldsOf(validate(baseSpec({ timeInForce: "ioc" }), { display: "2" }))).toEqual(["time_in_force"])
    expect(fieldsOf(validate(spec, { display: "2", reload_delay_s: -1, jitter_s: 0.0005 }))).toEqual([
      "params.reload_delay_s",
      "params.jitter_s"
    ])
    expect(validate(spec, { display: "10", reload_delay_s: 1.5, jitter_s: 2, follow: true })).toEqual({
      params: { display: F.of("10"), price: F.of("0.4"), reloadDelayMs: 1500, jitterMs: 2000, follow: true }
    })
  })

  it("shows the first slice in init, passing post_only and reduce_only, and emits managed.slice", () => {
    const { spec, params } = iceberg({ postOnly: true, reduceOnly: true })
    const first = core.init(spec, params, 7)
    expect(first.commands).toEqual([
      { _tag: "Trigger" },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.4"),
          amount: F.of("3"),
          timeInForce: "gtc",
          postOnly: true,
          reduceOnly: true,
          role: "slice"
        }
      },
      { _tag: "Emit", kind: "managed.slice", payload: { child: 1, amount: "3", price: "0.4" } }
    ])
    expect(core.info(first.state)).toEqual({ filled: "0", live_child: 1, visible: "3", next_reload_at: null })
  })

  it("reloads after delay + seeded jitter once a slice fills, and closes when the amount is filled", () => {
    const { spec, params } = iceberg({}, { display: "4", reload_delay_s: 2, jitter_s: 1 })
    const v = new Venue(core, spec, params, 99)
    v.now += 500
    v.fill(v.children.get(1)!, F.of("1"))
    expect(v.timers.size).toBe(0)
    v.fill(v.children.get(1)!, F.of("3"))
    expect([...v.timers.keys()]).toEqual(["reload:1"])
    const at = v.timers.get("reload:1")!
    expect(at).toBeGreaterThanOrEqual(v.now + 2000)
    expect(at).toBeLessThanOrEqual(v.now + 3000)
    expect(core.info(v.state)).toEqual({ filled: "4", live_child: null, visible: null, next_reload_at: at })
    v.act({ t: "wait", ms: 5000 })
    expect(v.places().map((p) => [p.ts, p.spec.child, F.format(p.spec.amount)])).toEqual([
      [1_000_000, 1, "4"],
      [at, 2, "4"]
    ])
    v.fill(v.children.get(2)!, F.of("4"))
    v.act({ t: "wait", ms: 5000 })
    expect(v.places().at(-1)?.spec.amount).toBe(F.of("2"))
    v.fill(v.children.get(3)!, F.of("2"))
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "filled 10" })
    expect(v.timers.size).toBe(0)
  })

  it("draws the same jitter for the same seed", () => {
    const { spec, params } = iceberg({}, { display: "1", jitter_s: 10 })
    const times = (seed: number) => {
      const v = new Venue(core, spec, params, seed)
      for (let i = 1; i <= 5; i++) {
        v.fill(v.children.get(i)!, F.of("1"))
        v.act({ t: "wait", ms: 10_000 })
      }
      return v.places().map((p) => p.ts)
    }
    expect(times(5)).toEqual(times(5))
    expect(times(5)).not.toEqual(times(6))
  })

  it("replaces a slice the venue canceled at once, sized to what is left", () => {
    const { spec, params } = iceberg({}, { display: "3", reload_delay_s: 60 })
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("1"))
    v.end(v.children.get(1)!, "expired")
    expect(v.places().map((p) => [p.spec.child, F.format(p.spec.amount)])).toEqual([
      [1, "3"],
      [2, "3"]
    ])
    expect(v.timers.size).toBe(0)
  })

  it("follows the own-side touch but never past the price", () => {
    const { spec, params } = iceberg({}, { display: "2", follow: true })
    expect(core.init(spec, params, 1).commands).toEqual([])
    const v = new Venue(core, spec, params, 1)
    v.market(book("0.35", "0.37"))
    expect(v.places()[0]?.spec.price).toBe(F.of("0.35"))
    v.market(book("0.45", "0.47"))
    v.fill(v.children.get(1)!, F.of("2"))
    v.act({ t: "wait", ms: 0 })
    expect(v.places()[1]?.spec.price).toBe(F.of("0.4"))
    const sell = iceberg({ side: "sell" }, { display: "2", follow: true })
    const s = new Venue(core, sell.spec, sell.params, 1)
    s.market(book(null, "0.38"))
    expect(s.places()[0]?.spec.price).toBe(F.of("0.4"))
    const t = new Venue(core, sell.spec, sell.params, 1)
    t.market(book("0.4", "0.44"))
    expect(t.places()[0]?.spec.price).toBe(F.of("0.44"))
  })

  it("ignores a fill delivered twice and ends rejected when a slice is refused", () => {
    const { spec, params } = iceberg()
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("1"))
    v.feed({ ...v.fills[0]!, ts: v.now })
    expect(core.info(v.state)["filled"]).toBe("1")
    const done = v.feed({
      _tag: "ChildDone",
      ts: v.now,
      child: 1,
      status: "rejected",
      filled: F.of("1"),
      reason: "insufficient balance"
    })
    expect(done).toEqual([{ _tag: "Finish", status: "rejected", detail: "insufficient balance" }])
  })

  const scenario = fc.record({
    lots: fc.integer({ min: 1, max: 40 }),
    display: fc.integer({ min: 1, max: 40 }),
    delay: fc.integer({ min: 0, max: 3000 }),
    jitter: fc.integer({ min: 0, max: 3000 }),
    follow: fc.boolean(),
    side: fc.constantFrom("buy" as const, "sell" as const),
    seed: fc.integer(),
    acts: fc.array(actArb(4000), { maxLength: 80 })
  })
  type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

  /** Runs a generated scenario to the end, then lets the venue answer everything. */
  const run = (p: Scenario, check: (params: Typed) => Check<State>) => {
    const spec = baseSpec({ side: p.side, amount: F.fromInt(p.lots), price: F.of("0.5") })
    const params = ok(
      validate(spec, {
        display: String(Math.min(p.display, p.lots)),
        reload_delay_s: p.delay / 1000,
        jitter_s: p.jitter / 1000,
        follow: p.follow
      })
    )
    const v = new Venue<Typed, State>(core, spec, params, p.seed, check(params))
    for (const a of p.acts) v.act(a)
    v.act({ t: "market", bid: 40, ask: 45 })
    v.drain()
    return v
  }

  it("I1: at most one live slice, visible <= display, reloads inside [fill + delay, fill + delay + jitter]", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        let fullAt: number | null = null
        const full = new Set<number>()
        const v = run(p, (params) => (venue, input, commands) => {
          expect(venue.live().length, "at most one live slice").toBeLessThanOrEqual(1)
          for (const c of commands) {
            if (c._tag !== "Place") continue
            expect(c.spec.amount, "visible <= display").toBeLessThanOrEqual(params.display)
            expect(p.side === "buy" ? c.spec.price <= params.price : c.spec.price >= params.price).toBe(true)
            if (fullAt !== null) {
              expect(input?._tag).toBe("Timer")
              expect(input!.ts, "reload >= fill + delay").toBeGreaterThanOrEqual(fullAt + params.reloadDelayMs)
              expect(input!.ts, "reload <= fill + delay + jitter").toBeLessThanOrEqual(
                fullAt + params.reloadDelayMs + params.jitterMs
              )
            }
            fullAt = null
          }
          if (input?._tag === "ChildFill") {
            const child = venue.children.get(input.child)!
            if (child.filled >= child.spec.amount && !full.has(input.child)) {
              full.add(input.child)
              fullAt = input.ts
            }
          }
        })
        if (v.finished === null) expect(v.live().length, "a slice shows until the amount is done").toBe(1)
        else expect(v.finished.status).toBe("closed")
      }),
      RUNS
    )
  })

  it("G3: the same inputs and seed give the same commands", () => {
    fc.assert(
      fc.property(scenario, (p) => {
        expect(run(p, () => () => {}).log).toEqual(run(p, () => () => {}).log)
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

describe("iceberg state", () => {
  it("stays bounded by its live slice however many slices it has reloaded", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 100, max: 400 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.boolean(), fc.boolean()), {
          minLength: 50,
          maxLength: 50
        }),
        (slices, rounds) => {
          const spec = baseSpec({ amount: F.fromInt(slices * 3) })
          const params = ok(validate(spec, { display: "3", reload_delay_s: 1, jitter_s: 1 }))
          let largest = 0
          const v = new Venue<Typed, State>(core, spec, params, 7, (venue) => {
            largest = Math.max(largest, JSON.stringify(venue.state).length)
          })
          for (let i = 0; i < slices && v.finished === null; i++) {
            const [fills, dup, venueEnd] = rounds[i % rounds.length]!
            for (let f = 0; f < fills; f++) v.act({ t: "fill", pick: 0, pct: f === fills - 1 ? 100 : 30 })
            if (dup) v.act({ t: "dup", pick: i })
            if (venueEnd) v.act({ t: "venueEnd", pick: 0 })
            v.act({ t: "wait", ms: 2000 })
          }
          expect(v.places().length).toBeGreaterThanOrEqual(slices / 2)
          expect(largest, "the state does not grow with the slices sent").toBeLessThan(800)
        }
      ),
      { ...RUNS, numRuns: 5 }
    )
  })
})
