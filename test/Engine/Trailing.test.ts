/** trailing_stop: how the level follows the reference, when it fires, what it sends, and invariants T1–T7. */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import type { ChildSpec, Command, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import type { TriggerSource } from "../../src/Engine/Stop.ts"
import * as Trailing from "../../src/Engine/Trailing.ts"

const RUNS = process.env.CROSSBOOK_LONG ? { numRuns: 5000 } : { seed: 42, numRuns: 200 }
const TICK = F.of("0.01")
const TOP = F.sub(F.ONE, TICK)

const parent = (over: Partial<ParentSpec> = {}): ParentSpec => ({
  id: "mo_1",
  side: "sell",
  amount: F.of("10"),
  price: null,
  stopPrice: null,
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  tick: TICK,
  lot: F.of("1"),
  createdAt: 0,
  ...over
})

const decode = Schema.decodeUnknownSync(Trailing.Params)
const typed = (spec: ParentSpec, wire: unknown): Trailing.Typed => {
  const checked = Trailing.validate(spec, decode(wire))
  if ("errors" in checked) throw new Error(`unexpected errors: ${JSON.stringify(checked.errors)}`)
  return checked.params
}
const errorsOf = (spec: ParentSpec, wire: unknown) => {
  const checked = Trailing.validate(spec, decode(wire))
  return "errors" in checked ? checked.errors : []
}

const px = (text: string | null): F.Fixed | null => (text === null ? null : F.of(text))
const bid = (text: string): Input => ({ _tag: "Market", ts: 1, view: { bestBid: px(text), bestAsk: null, last: null } })
const ask = (text: string): Input => ({ _tag: "Market", ts: 1, view: { bestBid: null, bestAsk: px(text), last: null } })

interface Trace {
  readonly before: ReadonlyArray<Trailing.State>
  readonly after: ReadonlyArray<Trailing.State>
  readonly commands: ReadonlyArray<ReadonlyArray<Command>>
  readonly state: Trailing.State
}

const run = (spec: ParentSpec, params: Trailing.Typed, inputs: ReadonlyArray<Input>): Trace => {
  const first = Trailing.core.init(spec, params, 3)
  expect(first.commands).toEqual([])
  let state = first.state
  const before: Array<Trailing.State> = []
  const after: Array<Trailing.State> = []
  const commands: Array<ReadonlyArray<Command>> = []
  for (const input of inputs) {
    before.push(state)
    const next = Trailing.core.step(spec, params, state, input)
    // The state must stay plain JSON.
    expect(JSON.parse(JSON.stringify(next.state))).toEqual(next.state)
    state = next.state
    after.push(state)
    commands.push(next.commands)
  }
  return { before, after, commands, state }
}

const places = (commands: ReadonlyArray<Command>): Array<ChildSpec> =>
  commands.flatMap((c) => (c._tag === "Place" ? [c.spec] : []))
const trailedLevels = (commands: ReadonlyArray<Command>): Array<string> =>
  commands.flatMap((c) => (c._tag === "Emit" && c.kind === "managed.trailed" ? [c.payload["level"] as string] : []))

describe("trailing_stop", () => {
  it("a sell trails the best bid by a distance and fires when the bid falls to the level", () => {
    const spec = parent()
    const t = run(spec, typed(spec, { trail: "0.05" }), [bid("0.5"), bid("0.55"), bid("0.52"), bid("0.51"), bid("0.5")])
    expect(t.commands[0]).toEqual([
      { _tag: "Emit", kind: "managed.trailed", payload: { level: "0.45", reference: "0.5" } }
    ])
    expect(trailedLevels(t.commands[1]!)).toEqual(["0.5"])
    expect(t.commands[2]).toEqual([])
    expect(t.commands[3]).toEqual([])
    expect(t.commands[4]).toEqual([
      { _tag: "Trigger" },
      { _tag: "Emit", kind: "managed.triggered", payload: { reference: "0.5", level: "0.5", source: "touch" } },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "sell",
          price: F.of("0.45"),
          amount: F.of("10"),
          timeInForce: "ioc",
          postOnly: false,
          reduceOnly: false,
          role: "stop"
        }
      }
    ])
    expect(Trailing.core.info(t.state)).toEqual({ level: "0.5", extreme: "0.55", fired: true, filled: "0" })
  })

  it("a buy trails the best ask by a percent, rounding the level up", () => {
    const spec = parent({ side: "buy" })
    const t = run(spec, typed(spec, { trail_percent: "0.1" }), [ask("0.5"), ask("0.4"), ask("0.43"), ask("0.44")])
    expect(trailedLevels(t.commands.flat())).toEqual(["0.55", "0.44"])
    expect(t.after[2]!.level).toBe(F.of("0.44"))
    expect(places(t.commands[3]!)).toMatchObject([{ side: "buy", price: F.of("0.49"), timeInForce: "ioc" }])
  })

  it("rounds a sell's percent level down: 0.57 × 0.9 = 0.513 → 0.51", () => {
    const spec = parent()
    const t = run(spec, typed(spec, { trail_percent: "0.1" }), [bid("0.57")])
    expect(trailedLevels(t.commands[0]!)).toEqual(["0.51"])
  })

  it("starts at stop_price and moves only when the trail asks for better", () => {
    const spec = parent({ stopPrice: F.of("0.4") })
    const t = run(spec, typed(spec, { trail: "0.05" }), [bid("0.42"), bid("0.5"), bid("0.45")])
    expect(Trailing.core.info(Trailing.core.init(spec, typed(spec, { trail: "0.05" }), 0).state)).toEqual({
      level: "0.4",
      extreme: null,
      fired: false,
      filled: "0"
    })
    expect(t.commands[0]).toEqual([])
    expect(t.after[0]).toMatchObject({ level: F.of("0.4"), extreme: F.of("0.42") })
    expect(trailedLevels(t.commands[1]!)).toEqual(["0.45"])
    expect(places(t.commands[2]!)).toHaveLength(1)
  })

  it("a stop_price already through the market fires on the first input", () => {
    const spec = parent({ stopPrice: F.of("0.4") })
    const t = run(spec, typed(spec, { trail: "0.05" }), [bid("0.35")])
    expect(t.commands[0]![1]).toEqual({
      _tag: "Emit",
      kind: "managed.triggered",
      payload: { reference: "0.35", level: "0.4", source: "touch" }
    })
    expect(places(t.commands[0]!)[0]!.price).toBe(F.of("0.35"))
  })

  it("checks the trigger against the level held before the input, before moving it", () => {
    const spec = parent({ side: "buy", stopPrice: F.of("0.6") })
    // 0.6 is at the level: it fires, though its candidate (0.65) would not have moved the level anyway.
    const t = run(spec, typed(spec, { trail: "0.05" }), [ask("0.5"), ask("0.56")])
    expect(trailedLevels(t.commands[0]!)).toEqual(["0.55"])
    expect(places(t.commands[1]!)).toHaveLength(1)
    expect(t.commands[1]![1]).toMatchObject({ payload: { level: "0.55", reference: "0.56" } })
  })

  it("watches the mid or the last trade when asked", () => {
    const spec = parent()
    const mid = run(spec, typed(spec, { trail: "0.02", trigger_source: "mid" }), [
      { _tag: "Market", ts: 1, view: { bestBid: F.of("0.5"), bestAsk: null, last: null } },
      { _tag: "Market", ts: 1, view: { bestBid: F.of("0.5"), bestAsk: F.of("0.51"), last: null } }
    ])
    expect(mid.commands[0]).toEqual([])
    expect(mid.commands[1]).toEqual([
      { _tag: "Emit", kind: "managed.trailed", payload: { level: "0.48", reference: "0.505" } }
    ])
    const last = run(spec, typed(spec, { trail: "0.02", trigger_source: "last" }), [
      { _tag: "Market", ts: 1, view: { bestBid: F.of("0.5"), bestAsk: F.of("0.51"), last: F.of("0.3") } }
    ])
    expect(trailedLevels(last.commands[0]!)).toEqual(["0.28"])
  })

  it("with a price it fires like a stop_limit", () => {
    const spec = parent({ price: F.of("0.42"), timeInForce: "gtd", reduceOnly: true })
    const t = run(spec, typed(spec, { trail: "0.05" }), [bid("0.5"), bid("0.45")])
    expect(places(t.commands[1]!)).toEqual([
      {
        child: 1,
        side: "sell",
        price: F.of("0.42"),
        amount: F.of("10"),
        timeInForce: "gtd",
        postOnly: false,
        reduceOnly: true,
        role: "stop"
      }
    ])
  })

  it("uses an explicit protection, or the level ∓ max_slippage rounded away from aggression", () => {
    const spec = parent()
    const explicit = run(spec, typed(spec, { trail: "0.05", protection: "0.3" }), [bid("0.5"), bid("0.45")])
    expect(places(explicit.commands[1]!)[0]!.price).toBe(F.of("0.3"))
    const slipped = run(spec, typed(spec, { trail: "0.05", max_slippage: "0.025" }), [bid("0.5"), bid("0.45")])
    expect(places(slipped.commands[1]!)[0]!.price).toBe(F.of("0.43"))
    const clamped = run(spec, typed(spec, { trail: "0.05" }), [bid("0.08"), bid("0.03")])
    expect(places(clamped.commands[1]!)[0]!.price).toBe(TICK)
  })

  it("follows its child: duplicate fills count once; full → closed, part → canceled, refused → rejected", () => {
    const spec = parent()
    const params = typed(spec, { trail: "0.05" })
    const fill = (fillId: string, amount: string): Input => ({
      _tag: "ChildFill",
      ts: 2,
      child: 1,
      fillId,
      price: F.of("0.45"),
      amount: F.of(amount)
    })
    const end = (status: "closed" | "canceled" | "rejected", filled: string, reason: string | null = null): Input => ({
      _tag: "ChildDone",
      ts: 3,
      child: 1,
      status,
      filled: F.of(filled),
      reason
    })
    const fire = [bid("0.5"), bid("0.45")]
    const full = run(spec, params, [...fire, fill("a", "7"), fill("a", "7"), fill("b", "3"), end("closed", "10")])
    expect(full.after[3]!.filled).toBe(F.of("7"))
    expect(full.commands[5]).toEqual([{ _tag: "Finish", status: "closed", detail: "filled" }])
    const part = run(spec, params, [...fire, fill("a", "7"), fill("a", "7"), end("canceled", "7")])
    expect(part.commands[4]).toEqual([
      { _tag: "Finish", status: "canceled", detail: "the stop's child ended with 7 of 10 filled" }
    ])
    const refused = run(spec, params, [...fire, end("rejected", "0", "market closed"), bid("0.3")])
    expect(refused.commands[2]).toEqual([{ _tag: "Finish", status: "rejected", detail: "market closed" }])
    expect(refused.commands[3]).toEqual([])
  })

  it("validates: exactly one of trail and trail_percent, each in range, prices on the grid", () => {
    const spec = parent()
    expect(errorsOf(spec, {})).toEqual([
      { field: "params.trail", message: "give exactly one of trail and trail_percent" }
    ])
    expect(errorsOf(spec, { trail: "0.05", trail_percent: "0.1" }).map((e) => e.field)).toEqual(["params.trail"])
    expect(errorsOf(spec, { trail: "0" }).map((e) => e.field)).toEqual(["params.trail"])
    expect(errorsOf(spec, { trail: "1" }).map((e) => e.field)).toEqual(["params.trail"])
    expect(errorsOf(spec, { trail_percent: "0" }).map((e) => e.field)).toEqual(["params.trail_percent"])
    expect(errorsOf(spec, { trail_percent: "1" }).map((e) => e.field)).toEqual(["params.trail_percent"])
    expect(errorsOf(spec, { trail: "0.05", protection: "0.305" })).toEqual([
      { field: "params.protection", message: "0.305 is off the tick grid of 0.01; nearest valid: 0.3 or 0.31" }
    ])
    expect(errorsOf(spec, { trail: "0.05", max_slippage: "0" }).map((e) => e.field)).toEqual(["params.max_slippage"])
    expect(errorsOf(parent({ price: F.of("0.4") }), { trail: "0.05", protection: "0.3" }).map((e) => e.field)).toEqual([
      "params.protection"
    ])
    expect(() => decode({ trail_percent: "0.25", unknown: true }), "an unknown key is refused").toThrow(/unknown/)
    expect(typed(spec, { trail_percent: "0.25", trigger_source: "last" })).toEqual({
      source: "last",
      trail: null,
      trailPercent: F.of("0.25"),
      start: null,
      limit: null,
      protection: null,
      slippage: F.of("0.05")
    })
  })
})

// Properties. Prices on a 0.01 grid in [0.01, 0.99]; a null reference is an empty view.

const priceArb = fc.integer({ min: 1, max: 99 }).map((k) => (k * 10_000) as F.Fixed)
const sideArb = fc.constantFrom<Side>("buy", "sell")
const sourceArb = fc.constantFrom<TriggerSource>("touch", "mid", "last")
const refsArb = fc.array(fc.option(priceArb, { freq: 8 }), { minLength: 1, maxLength: 40 })
const trailArb = fc.oneof(
  fc.integer({ min: 1, max: 30 }).map((k) => ({ trail: (k * 10_000) as F.Fixed, pct: null })),
  fc.integer({ min: 1, max: 499_999 }).map((p) => ({ trail: null, pct: p as F.Fixed }))
)
const distanceArb = fc.integer({ min: 1, max: 30 }).map((k) => ({ trail: (k * 10_000) as F.Fixed, pct: null }))

const caseArb = (trail: typeof trailArb, withStart: boolean) =>
  fc.record({
    side: sideArb,
    source: sourceArb,
    trail,
    start: withStart ? fc.option(priceArb, { freq: 2 }) : fc.constant(null),
    refs: refsArb
  })
type Case = ReturnType<typeof caseArb> extends fc.Arbitrary<infer A> ? A : never

/** A view whose reference for (source, side) is `p`; for `mid` a half-tick above it where the book allows. */
const viewFor = (source: TriggerSource, side: Side, p: F.Fixed | null): MarketView => {
  const empty: MarketView = { bestBid: null, bestAsk: null, last: null }
  if (p === null) return empty
  if (source === "last") return { ...empty, last: p }
  if (source === "mid") return { ...empty, bestBid: p, bestAsk: p < TOP ? ((p + TICK) as F.Fixed) : p }
  return side === "buy" ? { ...empty, bestAsk: p } : { ...empty, bestBid: p }
}
/** The reference a view gives, computed here in integers. */
const refOf = (source: TriggerSource, p: F.Fixed | null): number | null => {
  if (p === null) return null
  return source === "mid" && p < TOP ? p + TICK / 2 : p
}

const setUp = (c: Case, over: Partial<ParentSpec> = {}, extra: Record<string, string> = {}) => {
  const spec = parent({ side: c.side, stopPrice: c.start, ...over })
  const wire: Record<string, string> = { trigger_source: c.source, ...extra }
  if (c.trail.trail !== null) wire["trail"] = F.format(c.trail.trail)
  else wire["trail_percent"] = F.format(c.trail.pct!)
  return { spec, params: typed(spec, wire) }
}
const marketsOf = (c: Case) => c.refs.map((p): Input => ({ _tag: "Market", ts: 1, view: viewFor(c.source, c.side, p) }))

const tickN = BigInt(TICK)
const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b))
/** The level the trail asks for at reference x (micro units), in exact integer arithmetic. */
const expectedCandidate = (side: Side, x: number, trail: { trail: number | null; pct: number | null }): number => {
  // Scale 1e-12: x × (1e6 ∓ pct), or (x ∓ trail) × 1e6.
  const scaled =
    trail.trail !== null
      ? BigInt(side === "sell" ? x - trail.trail : x + trail.trail) * 1_000_000n
      : BigInt(x) * (side === "sell" ? 1_000_000n - BigInt(trail.pct!) : 1_000_000n + BigInt(trail.pct!))
  const unit = tickN * 1_000_000n
  const k = side === "sell" ? floorDiv(scaled, unit) : -floorDiv(-scaled, unit)
  return Number(k * tickN)
}
const betterOf = (side: Side, a: number, b: number) => (side === "sell" ? Math.max(a, b) : Math.min(a, b))

describe("trailing_stop invariants", () => {
  it("T1: the level never moves back", () => {
    fc.assert(
      fc.property(caseArb(trailArb, true), (c) => {
        const { spec, params } = setUp(c)
        const t = run(spec, params, marketsOf(c))
        const levels = t.after.map((s) => s.level)
        for (let i = 0; i < levels.length; i++) {
          const prev = t.before[i]!.level
          const next = levels[i]!
          if (prev === null) continue
          expect(next).not.toBeNull()
          if (c.side === "sell") expect(next).toBeGreaterThanOrEqual(prev)
          else expect(next).toBeLessThanOrEqual(prev)
        }
        const emitted = trailedLevels(t.commands.flat()).map((l) => F.of(l))
        for (let i = 1; i < emitted.length; i++) {
          if (c.side === "sell") expect(emitted[i]).toBeGreaterThan(emitted[i - 1]!)
          else expect(emitted[i]).toBeLessThan(emitted[i - 1]!)
        }
      }),
      RUNS
    )
  })

  it("T2: the level is a function of the running extreme of the reference", () => {
    fc.assert(
      fc.property(caseArb(trailArb, true), (c) => {
        const { spec, params } = setUp(c)
        const t = run(spec, params, marketsOf(c))
        let extreme: number | null = null
        for (let i = 0; i < c.refs.length; i++) {
          if (t.before[i]!.fired) break
          const ref = refOf(c.source, c.refs[i]!)
          if (ref !== null) extreme = extreme === null ? ref : betterOf(c.side, extreme, ref)
          expect(t.after[i]!.extreme).toBe(extreme)
          if (t.after[i]!.fired) break
          const trailed = extreme === null ? null : expectedCandidate(c.side, extreme, c.trail)
          const level = c.start === null ? trailed : trailed === null ? c.start : betterOf(c.side, c.start, trailed)
          expect(t.after[i]!.level).toBe(level)
        }
      }),
      RUNS
    )
  })

  it("T3: the level sits within one tick of extreme ∓ trail (or the fraction), on the safe side", () => {
    fc.assert(
      fc.property(caseArb(trailArb, false), (c) => {
        const { spec, params } = setUp(c)
        const t = run(spec, params, marketsOf(c))
        for (const s of t.after) {
          if (s.extreme === null || s.level === null) continue
          // Compare at 1e-12 so the fraction is exact: level × 1e6 against extreme × (1e6 ∓ pct).
          const level = BigInt(s.level) * 1_000_000n
          const tick = tickN * 1_000_000n
          const sign = c.side === "sell" ? -1n : 1n
          const target =
            c.trail.trail !== null
              ? (BigInt(s.extreme) + sign * BigInt(c.trail.trail)) * 1_000_000n
              : BigInt(s.extreme) * (1_000_000n + sign * BigInt(c.trail.pct!))
          if (c.side === "sell") {
            expect(level <= target).toBe(true)
            expect(level > target - tick).toBe(true)
          } else {
            expect(level >= target).toBe(true)
            expect(level < target + tick).toBe(true)
          }
        }
      }),
      RUNS
    )
  })

  it("T4: it fires on the first reference at or through the level held before that input, never earlier", () => {
    fc.assert(
      fc.property(caseArb(trailArb, true), (c) => {
        const { spec, params } = setUp(c)
        const t = run(spec, params, marketsOf(c))
        let firedAt = -1
        for (let i = 0; i < c.refs.length; i++) {
          const held = t.before[i]!.level
          const ref = refOf(c.source, c.refs[i]!)
          const through =
            !t.before[i]!.fired && held !== null && ref !== null && (c.side === "sell" ? ref <= held : ref >= held)
          const triggered = t.commands[i]!.some((cmd) => cmd._tag === "Trigger")
          expect(triggered).toBe(through)
          if (through) {
            if (firedAt < 0) firedAt = i
            expect(t.commands[i]![1]).toEqual({
              _tag: "Emit",
              kind: "managed.triggered",
              payload: { reference: F.format(ref as F.Fixed), level: F.format(held), source: c.source }
            })
          }
          expect(t.after[i]!.fired).toBe(firedAt >= 0)
        }
      }),
      RUNS
    )
  })

  it("T5: exactly one child, even when the condition holds on many inputs or an input is delivered twice", () => {
    fc.assert(
      fc.property(caseArb(trailArb, true), fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 10 }), (c, fills) => {
        const { spec, params } = setUp(c)
        // After the sequence, a fall to the floor and a rise to the ceiling: both through any level on the grid.
        const extremes = [TICK, TOP].map((p): Input => ({
          _tag: "Market",
          ts: 1,
          view: { bestBid: p, bestAsk: p, last: p }
        }))
        const fillInputs = fills.map((n, i): Input => ({
          _tag: "ChildFill",
          ts: 5 + i,
          child: 1,
          fillId: `f${n}`,
          price: TICK,
          amount: F.fromInt(1)
        }))
        const inputs = [...marketsOf(c), ...extremes, ...marketsOf(c), ...extremes, ...fillInputs]
        const t = run(
          spec,
          params,
          inputs.flatMap((input) => [input, input])
        )
        const all = t.commands.flat()
        // A level the grid cannot reach (e.g. a sell's below 0) never fires; every other one fires on the extremes.
        const reachable = t.state.level !== null && t.state.level >= TICK && t.state.level <= TOP
        expect(t.state.fired || !reachable).toBe(true)
        const n = t.state.fired ? 1 : 0
        expect(places(all)).toHaveLength(n)
        expect(all.filter((cmd) => cmd._tag === "Trigger")).toHaveLength(n)
        for (const p of places(all)) expect(p).toMatchObject({ child: 1, amount: spec.amount })
        for (let i = 1; i < t.commands.length; i += 2) expect(t.commands[i]).toEqual([])
        expect(t.state.filled).toBe(t.state.fired ? F.fromInt(new Set(fills).size) : F.ZERO)
      }),
      RUNS
    )
  })

  it("T6: every emitted price is on the tick grid and in [tick, 1 − tick]", () => {
    const childArb = fc.record({
      price: fc.option(priceArb, { freq: 3 }),
      protection: fc.option(priceArb, { freq: 3 }),
      slippage: fc.integer({ min: 1, max: 600_000 })
    })
    fc.assert(
      fc.property(caseArb(trailArb, true), childArb, (c, child) => {
        const extra: Record<string, string> =
          child.price !== null ? {} : { max_slippage: F.format(child.slippage as F.Fixed) }
        if (child.price === null && child.protection !== null) extra["protection"] = F.format(child.protection)
        const { spec, params } = setUp(c, { price: child.price }, extra)
        const end: Input = {
          _tag: "Market",
          ts: 1,
          view: { bestBid: TICK, bestAsk: TOP, last: c.side === "sell" ? TICK : TOP }
        }
        const t = run(spec, params, [...marketsOf(c), end, end])
        const all = t.commands.flat()
        for (const level of trailedLevels(all)) expect(F.isMultipleOf(F.of(level), TICK)).toBe(true)
        for (const p of places(all)) {
          expect(F.isMultipleOf(p.price, TICK)).toBe(true)
          expect(p.price).toBeGreaterThanOrEqual(TICK)
          expect(p.price).toBeLessThanOrEqual(TOP)
          const fired = t.after.find((s) => s.fired)!
          const level = t.before[t.after.indexOf(fired)]!.level!
          const raw =
            child.price ?? child.protection ?? (c.side === "sell" ? level - child.slippage : level + child.slippage)
          if (raw < TICK) expect(p.price).toBe(TICK)
          else if (raw > TOP) expect(p.price).toBe(TOP)
          else if (c.side === "sell") expect(p.price >= raw && p.price < raw + TICK).toBe(true)
          else expect(p.price <= raw && p.price > raw - TICK).toBe(true)
        }
      }),
      RUNS
    )
  })

  it("T7: a sell trailing stop on p equals a buy trailing stop on 1 − p, levels mapped by 1 − x", () => {
    fc.assert(
      fc.property(caseArb(distanceArb, true), fc.integer({ min: 1, max: 200_000 }), (c, slippage) => {
        const mirror = (x: F.Fixed | null) => (x === null ? null : F.sub(F.ONE, x))
        const sellCase = { ...c, side: "sell" as const }
        const buyCase = { ...c, side: "buy" as const, start: mirror(c.start), refs: c.refs.map(mirror) }
        const extra = { max_slippage: F.format(slippage as F.Fixed) }
        const sell = setUp(sellCase, {}, extra)
        const buy = setUp(buyCase, {}, extra)
        // The buy's book is the sell's seen from the NO side: bid and ask swap and map by 1 − x.
        const mirrorView = (v: MarketView): MarketView => ({
          bestBid: mirror(v.bestAsk),
          bestAsk: mirror(v.bestBid),
          last: mirror(v.last)
        })
        const views = sellCase.refs.map((p) => viewFor(c.source, "sell", p))
        const a = run(
          sell.spec,
          sell.params,
          views.map((view): Input => ({ _tag: "Market", ts: 1, view }))
        )
        const b = run(
          buy.spec,
          buy.params,
          views.map((view): Input => ({ _tag: "Market", ts: 1, view: mirrorView(view) }))
        )
        expect(b.after.map((s) => mirror(s.level))).toEqual(a.after.map((s) => s.level))
        expect(b.after.map((s) => mirror(s.extreme))).toEqual(a.after.map((s) => s.extreme))
        expect(b.after.map((s) => s.fired)).toEqual(a.after.map((s) => s.fired))
        const mirrorText = (x: string) => F.format(F.sub(F.ONE, F.of(x)))
        expect(trailedLevels(b.commands.flat()).map(mirrorText)).toEqual(trailedLevels(a.commands.flat()))
        const [pa] = places(a.commands.flat())
        const [pb] = places(b.commands.flat())
        expect(pb === undefined ? undefined : { ...pb, side: "sell", price: F.sub(F.ONE, pb.price) }).toEqual(pa)
      }),
      RUNS
    )
  })
})
