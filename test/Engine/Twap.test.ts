import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Command, ParentSpec } from "../../src/Engine/Core.ts"
import {
  core,
  type Params,
  plannedSize,
  plannedUpTo,
  sliceAt,
  type State,
  type Typed,
  validate,
  windowEnd
} from "../../src/Engine/Twap.ts"

import { RUNS, type Check, Venue, actArb, checkExposure, checkFills, baseSpec, ok, fieldsOf } from "./FakeVenue.ts"
// ---- end of the tiny venue ----

const T0 = 1_000_000

const twap = (over: Partial<ParentSpec> = {}, params: Params = { window_s: 60, slices: 3 }) => {
  const spec = baseSpec(over)
  return { spec, params: ok(validate(spec, params)) }
}

const placed = (commands: ReadonlyArray<Command>) =>
  commands.flatMap((c) => (c._tag === "Place" ? [[c.spec.child, F.format(c.spec.amount), c.spec.timeInForce]] : []))

describe("twap", () => {
  it("validates window, slices, limit and post_only", () => {
    const spec = baseSpec()
    expect(fieldsOf(validate(spec, { window_s: 0, slices: 3 }))).toEqual(["params.window_s"])
    expect(fieldsOf(validate(spec, { window_s: 60, slices: 0 }))).toEqual(["params.slices"])
    expect(fieldsOf(validate(spec, { window_s: 60, slices: 11 }))).toEqual(["params.slices"])
    // Ten slices a second at most: 3 slices need 0.3 s.
    expect(fieldsOf(validate(spec, { window_s: 0.2, slices: 3 }))).toEqual(["params.slices"])
    expect(fieldsOf(validate(spec, { window_s: 0.3, slices: 3 }))).toEqual([])
    expect(fieldsOf(validate(baseSpec({ postOnly: true }), { window_s: 60, slices: 2, style: "taker" }))).toEqual([
      "post_only"
    ])
    expect(fieldsOf(validate(baseSpec({ price: null }), { window_s: 60, slices: 2 }))).toEqual(["params.limit"])
    expect(fieldsOf(validate(spec, { window_s: 60, slices: 2, limit: "0.405" }))).toEqual(["params.limit"])
    expect(validate(spec, { window_s: 60, slices: 3 })).toEqual({
      params: {
        windowMs: 60_000,
        slices: 3,
        style: "limit",
        limit: F.of("0.4"),
        finish: "complete"
      }
    })
    expect(ok(validate(spec, { window_s: 60, slices: 3, limit: "0.42" })).limit).toBe(F.of("0.42"))
  })

  it("sends slice 0 in init with the parent's time in force and post_only, and times the next", () => {
    const { spec, params } = twap({ postOnly: true, timeInForce: "gtd" })
    const first = core.init(spec, params, 1)
    expect(first.commands).toEqual([
      { _tag: "Trigger" },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.4"),
          amount: F.of("4"),
          timeInForce: "gtd",
          postOnly: true,
          reduceOnly: false,
          role: "slice"
        }
      },
      { _tag: "Emit", kind: "managed.slice", payload: { child: 1, slice: 1, of: 3, amount: "4", price: "0.4" } },
      { _tag: "SetTimer", timer: "slice:1", at: T0 + 20_000 }
    ])
    expect(core.info(first.state)).toEqual({ slices_sent: 1, planned: "4", live_children: [1], filled: "0" })
  })

  it("cancels the previous slice's rest and sends the next, sized to catch up, once that cancel has landed", () => {
    const { spec, params } = twap()
    const v = new Venue(core, spec, params, 1)
    v.now = T0 + 5000
    v.fill(v.children.get(1)!, F.of("1"))
    v.now = T0 + 20_000
    const at1 = v.feed({ _tag: "Timer", ts: v.now, timer: "slice:1" })
    // Child 1 may still fill its 3 until the cancel lands: nothing more goes out yet.
    expect(at1.filter((c) => c._tag === "Cancel")).toEqual([{ _tag: "Cancel", child: 1 }])
    expect(placed(at1)).toEqual([])
    v.now = T0 + 30_000
    v.end(v.children.get(1)!, "canceled")
    // planned 7, filled 1, nothing live: the slice is 6.
    expect(v.places().map((p) => [p.ts, p.spec.child, F.format(p.spec.amount)])).toEqual([
      [T0, 1, "4"],
      [T0 + 30_000, 2, "6"]
    ])
    v.now = T0 + 40_000
    const at2 = v.feed({ _tag: "Timer", ts: v.now, timer: "slice:2" })
    expect(at2.at(-1)).toEqual({ _tag: "SetTimer", timer: "end", at: T0 + 60_000 })
    v.now = T0 + 45_000
    v.fill(v.children.get(2)!, F.of("2"))
    v.end(v.children.get(2)!, "canceled")
    // planned 10, filled 3: the catch-up is 7.
    expect(placed(v.log.filter((e) => e.ts === T0 + 45_000).map((e) => e.command))).toEqual([[3, "7", "gtc"]])
    v.fill(v.children.get(3)!, F.of("2"))
    v.now = T0 + 60_000
    const end = v.feed({ _tag: "Timer", ts: v.now, timer: "end" })
    expect(end).toEqual([{ _tag: "Cancel", child: 3 }])
    const landed = v.feed({
      _tag: "ChildDone",
      ts: v.now,
      child: 3,
      status: "canceled",
      filled: F.of("2"),
      reason: null
    })
    v.children.get(3)!.done = true
    expect(placed(landed)).toEqual([[4, "5", "ioc"]])
    v.fill(v.children.get(4)!, F.of("3"))
    v.end(v.children.get(4)!, "expired")
    expect(v.finished).toEqual({
      _tag: "Finish",
      status: "canceled",
      detail: "the window ended; filled 8 of 10"
    })
  })

  it("catches up when nothing fills: 6 in 2 slices rests 6 after the second slice time", () => {
    const { spec, params } = twap({ amount: F.of("6") }, { window_s: 10, slices: 2 })
    const v = new Venue(core, spec, params, 1)
    v.act({ t: "wait", ms: 5000 })
    v.end(v.children.get(1)!, "canceled")
    expect(v.places().map((p) => [p.ts, F.format(p.spec.amount)])).toEqual([
      [T0, "3"],
      [T0 + 5000, "6"]
    ])
    expect(F.format(v.open())).toBe("6")
  })

  it("finish stop: a print after the second slice fills the whole catch-up", () => {
    const { spec, params } = twap({ amount: F.of("10") }, { window_s: 10, slices: 2, finish: "stop" })
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("1"))
    v.act({ t: "wait", ms: 5000 })
    v.end(v.children.get(1)!, "canceled")
    v.now = T0 + 7000
    // A print of 6 at the limit: the resting slice takes all it can (it holds planned 10 − filled 1 = 9).
    const resting = v.children.get(2)!
    v.fill(resting, F.min(F.of("6"), F.sub(resting.spec.amount, resting.filled)))
    v.act({ t: "wait", ms: 5000 })
    expect(v.finished).toEqual({
      _tag: "Finish",
      status: "canceled",
      detail: "the window ended (finish: stop); filled 7 of 10"
    })
  })

  it("taker style sends IOC slices and closes when everything fills", () => {
    const { spec, params } = twap({}, { window_s: 30, slices: 2, style: "taker", limit: "0.45" })
    const v = new Venue(core, spec, params, 1)
    expect(v.places().map((p) => [p.spec.timeInForce, p.spec.price, p.spec.postOnly])).toEqual([
      ["ioc", F.of("0.45"), false]
    ])
    v.fill(v.children.get(1)!, F.of("5"))
    v.act({ t: "wait", ms: 15_000 })
    expect(v.places().map((p) => [p.ts, F.format(p.spec.amount)])).toEqual([
      [T0, "5"],
      [T0 + 15_000, "5"]
    ])
    v.fill(v.children.get(2)!, F.of("5"))
    expect(v.finished?.status).toBe("closed")
  })

  it("finish stop gives up at the window end and sends nothing after it", () => {
    const { spec, params } = twap({}, { window_s: 10, slices: 2, finish: "stop" })
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("2"))
    v.act({ t: "wait", ms: 20_000 })
    expect(v.finished).toEqual({
      _tag: "Finish",
      status: "canceled",
      detail: "the window ended (finish: stop); filled 2 of 10"
    })
    expect(v.log.filter((e) => e.command._tag === "Finish").map((e) => e.ts)).toEqual([T0 + 10_000])
    expect(v.places().every((p) => p.ts < T0 + 10_000)).toBe(true)
  })

  it("ends rejected when a slice is refused, and ignores duplicate fills", () => {
    const { spec, params } = twap()
    const v = new Venue(core, spec, params, 1)
    v.fill(v.children.get(1)!, F.of("1"))
    v.feed({ ...v.fills[0]!, ts: v.now })
    expect(core.info(v.state)["filled"]).toBe("1")
    v.feed({ _tag: "ChildDone", ts: v.now, child: 1, status: "rejected", filled: F.ZERO, reason: "market halted" })
    expect(v.finished).toEqual({ _tag: "Finish", status: "rejected", detail: "market halted" })
  })

  it("W1: planned slice sizes add up to Q exactly, in lots, the remainder on the first slices", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("1", "0.5", "10", "0.01"),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 500 }),
        (lotText, lots, wanted) => {
          const lot = F.of(lotText)
          const spec = baseSpec({ amount: (lots * lot) as F.Fixed, lot })
          const slices = Math.min(wanted, lots)
          const params = ok(validate(spec, { window_s: 60, slices }))
          const planned = Array.from({ length: slices }, (_, i) => plannedSize(spec, params, i))
          expect(plannedUpTo(spec, params, slices)).toBe(spec.amount)
          for (let n = 0; n <= slices; n += Math.max(1, Math.floor(slices / 7))) {
            expect(plannedUpTo(spec, params, n)).toBe(planned.slice(0, n).reduce((a, b) => F.add(a, b), F.ZERO))
          }
          expect(planned.reduce((a, b) => F.add(a, b), F.ZERO)).toBe(spec.amount)
          for (let i = 0; i < planned.length; i++) {
            expect(F.isMultipleOf(planned[i]!, lot) && planned[i]! > 0).toBe(true)
            if (i > 0) expect(planned[i - 1]! - planned[i]!).toBeGreaterThanOrEqual(0)
          }
          expect(planned[0]! - planned.at(-1)!).toBeLessThanOrEqual(lot)
        }
      ),
      RUNS
    )
  })

  const scenario = fc
    .record({
      lots: fc.integer({ min: 1, max: 40 }),
      slices: fc.integer({ min: 1, max: 8 }),
      windowMs: fc.integer({ min: 800, max: 60_000 }), // at least 100 ms between up to 8 slices
      style: fc.constantFrom("limit" as const, "taker" as const),
      finish: fc.constantFrom("complete" as const, "stop" as const),
      side: fc.constantFrom("buy" as const, "sell" as const),
      postOnly: fc.boolean()
    })
    .chain((p) =>
      fc.record({
        p: fc.constant(p),
        acts: fc.array(actArb(Math.ceil((1.5 * p.windowMs) / p.slices)), { maxLength: 80 })
      })
    )
  type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

  const run = ({ p, acts }: Scenario, check: (spec: ParentSpec, params: Typed) => Check<State>) => {
    const spec = baseSpec({ side: p.side, amount: F.fromInt(p.lots), postOnly: p.postOnly && p.style === "limit" })
    const params = ok(
      validate(spec, {
        window_s: p.windowMs / 1000,
        slices: Math.min(p.slices, p.lots),
        style: p.style,
        finish: p.finish,
        limit: "0.45"
      })
    )
    const v = new Venue<Typed, State>(core, spec, params, 1, check(spec, params))
    for (const a of acts) v.act(a)
    v.drain()
    expect(v.finished, "a twap always ends once the venue answers").not.toBeNull()
    return v
  }

  it("W2: Σ filled + Σ open <= Q at every step", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        run(s, () => (venue) => checkExposure(venue))
      }),
      RUNS
    )
  })

  it("W3: slices fall on their times (or when the cancel they wait for lands) inside the window; nothing is sent after it with finish: stop", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        run(s, (spec, params) => {
          const times = Array.from({ length: params.slices }, (_, i) => sliceAt(spec, params, i))
          const end = windowEnd(spec, params)
          let next = 0
          let finals = 0
          return (venue, input, commands) => {
            const ts = input?.ts ?? spec.createdAt
            for (const c of commands) {
              if (c._tag !== "Place") continue
              if (ts < end) {
                expect(ts).toBeGreaterThanOrEqual(spec.createdAt)
                if (input?._tag === "ChildDone") {
                  // A catch-up that waited for the previous slice's cancel to land.
                  expect(next, "a catch-up follows a slice time").toBeGreaterThan(0)
                } else {
                  while (next < times.length && times[next]! < ts) next++
                  expect(times[next], "a slice is sent at its own time").toBe(ts)
                  next++
                }
                expect(c.spec.timeInForce).toBe(params.style === "taker" ? "ioc" : spec.timeInForce)
              } else {
                expect(params.finish, "nothing after the window with finish: stop").toBe("complete")
                expect(c.spec.timeInForce).toBe("ioc")
                expect(++finals, "one IOC at the window end").toBe(1)
              }
            }
            if (venue.finished !== null && params.finish === "stop" && venue.filled() < spec.amount) {
              expect(venue.log.find((e) => e.command._tag === "Finish")?.ts).toBe(end)
            }
          }
        })
      }),
      RUNS
    )
  })

  it("G2: filled is the sum of distinct fills, and <= amount", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        run(s, () => (venue) => checkFills(venue, core.info))
      }),
      RUNS
    )
  })
})

describe("twap state", () => {
  it("stays bounded by its live children however many slices it has sent", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 200, max: 1000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3 }), fc.boolean(), fc.boolean()), {
          minLength: 200,
          maxLength: 200
        }),
        (slices, rounds) => {
          const spec = baseSpec({ amount: F.fromInt(slices * 3) })
          const params = ok(validate(spec, { window_s: slices, slices, limit: "0.4" }))
          let largest = 0
          const v = new Venue<Typed, State>(core, spec, params, 1, (venue) => {
            largest = Math.max(largest, JSON.stringify(venue.state).length)
          })
          for (let i = 0; i < slices && v.finished === null; i++) {
            const [fills, dup, land] = rounds[i % rounds.length]!
            for (let f = 0; f < fills; f++) v.act({ t: "fill", pick: f, pct: 10 })
            if (dup) v.act({ t: "dup", pick: i })
            if (land) v.act({ t: "cancelAck", pick: 0 })
            v.act({ t: "wait", ms: 1000 })
          }
          expect(largest, "the state does not grow with the slices sent").toBeLessThan(1200)
        }
      ),
      { ...RUNS, numRuns: 10 }
    )
  })
})
