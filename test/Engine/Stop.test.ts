/** stop_market and stop_limit: trigger sources, the child they send, how they follow it, and the stop invariants. */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import type { ChildSpec, Command, Core, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import * as Stop from "../../src/Engine/Stop.ts"

const RUNS = process.env.CROSSBOOK_LONG ? { numRuns: 5000 } : { seed: 42, numRuns: 200 }
const TICK = F.of("0.01")
const ONE_TICK_BELOW_ONE = F.sub(F.ONE, TICK)

const parent = (over: Partial<ParentSpec> = {}): ParentSpec => ({
  id: "mo_1",
  side: "sell",
  amount: F.of("10"),
  price: null,
  stopPrice: F.of("0.4"),
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  tick: TICK,
  lot: F.of("1"),
  createdAt: 0,
  ...over
})

const px = (text: string | null): F.Fixed | null => (text === null ? null : F.of(text))
const market = (bid: string | null, ask: string | null, last: string | null = null): Input => ({
  _tag: "Market",
  ts: 1,
  view: { bestBid: px(bid), bestAsk: px(ask), last: px(last) }
})
const fill = (fillId: string, amount: string): Input => ({
  _tag: "ChildFill",
  ts: 2,
  child: 1,
  fillId,
  price: F.of("0.35"),
  amount: F.of(amount)
})
const done = (
  status: "closed" | "canceled" | "expired" | "rejected",
  filled: string,
  reason: string | null = null
): Input => ({
  _tag: "ChildDone",
  ts: 3,
  child: 1,
  status,
  filled: F.of(filled),
  reason
})

const typed = <T>(checked: { readonly params: T } | { readonly errors: ReadonlyArray<unknown> }): T => {
  if ("errors" in checked) throw new Error(`unexpected errors: ${JSON.stringify(checked.errors)}`)
  return checked.params
}
const errorsOf = (
  checked: { readonly params: unknown } | { readonly errors: ReadonlyArray<{ field: string; message: string }> }
) => ("errors" in checked ? checked.errors : [])

const decode = Schema.decodeUnknownSync(Stop.Params)

/** Runs a core over inputs; answers the state and commands after each step. */
const run = <P, S>(core: Core<P, S>, spec: ParentSpec, params: P, inputs: ReadonlyArray<Input>) => {
  const first = core.init(spec, params, 7)
  let state = first.state
  const steps: Array<{ readonly state: S; readonly commands: ReadonlyArray<Command> }> = []
  for (const input of inputs) {
    const next = core.step(spec, params, state, input)
    state = next.state
    steps.push(next)
  }
  return { init: first, state, steps, commands: steps.flatMap((s) => s.commands) }
}

const places = (commands: ReadonlyArray<Command>): Array<ChildSpec> =>
  commands.flatMap((c) => (c._tag === "Place" ? [c.spec] : []))

const stopMarket = (spec: ParentSpec, wire: unknown = {}) => typed(Stop.validateStopMarket(spec, decode(wire)))
const stopLimit = (spec: ParentSpec, wire: unknown = {}) => typed(Stop.validateStopLimit(spec, decode(wire)))

describe("stop_market", () => {
  it("starts waiting: no commands from init, info shows the levels", () => {
    const spec = parent()
    const params = stopMarket(spec)
    const first = Stop.stopMarket.init(spec, params, 1)
    expect(first.commands).toEqual([])
    expect(Stop.stopMarket.info(first.state)).toEqual({
      stop_price: "0.4",
      protection: "0.35",
      fired: false,
      filled: "0"
    })
  })

  it("a sell fires on touch when the best bid reaches the stop, then sends an IOC at stop − 0.05", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [market("0.41", "0.39"), market("0.4", "0.45")])
    expect(r.steps[0]!.commands).toEqual([])
    expect(r.steps[1]!.commands).toEqual([
      { _tag: "Trigger" },
      { _tag: "Emit", kind: "managed.triggered", payload: { reference: "0.4", level: "0.4", source: "touch" } },
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "sell",
          price: F.of("0.35"),
          amount: F.of("10"),
          timeInForce: "ioc",
          postOnly: false,
          reduceOnly: false,
          role: "stop"
        }
      }
    ])
    expect(Stop.stopMarket.info(r.state)).toMatchObject({ fired: true })
  })

  it("a buy watches the best ask, fires at ask >= stop, and protects at stop + 0.05", () => {
    const spec = parent({ side: "buy", reduceOnly: true })
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [market("0.45", "0.39"), market("0.3", "0.4")])
    expect(r.steps[0]!.commands).toEqual([])
    const [child] = places(r.steps[1]!.commands)
    expect(child).toMatchObject({
      side: "buy",
      price: F.of("0.45"),
      timeInForce: "ioc",
      reduceOnly: true,
      postOnly: false
    })
  })

  it("mid: no trigger while a side is empty, then (bid + ask) / 2", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec, { trigger_source: "mid" }), [
      market("0.2", null),
      market(null, "0.3"),
      market("0.38", "0.43"),
      market("0.37", "0.43")
    ])
    expect(r.steps.slice(0, 3).every((s) => s.commands.length === 0)).toBe(true)
    expect(r.steps[3]!.commands[1]).toEqual({
      _tag: "Emit",
      kind: "managed.triggered",
      payload: { reference: "0.4", level: "0.4", source: "mid" }
    })
  })

  it("last: watches the last trade, not the book", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec, { trigger_source: "last" }), [
      market("0.1", "0.2", null),
      market("0.1", "0.2", "0.41"),
      market("0.5", "0.6", "0.39")
    ])
    expect(r.steps[0]!.commands).toEqual([])
    expect(r.steps[1]!.commands).toEqual([])
    expect(places(r.steps[2]!.commands)).toHaveLength(1)
  })

  it("a stop already through the market fires on the first input", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [market("0.2", "0.25")])
    expect(places(r.commands)).toHaveLength(1)
    expect(r.commands[1]).toMatchObject({ payload: { reference: "0.2", level: "0.4" } })
  })

  it("uses an explicit protection price", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec, { protection: "0.3" }), [market("0.4", "0.41")])
    expect(places(r.commands)[0]!.price).toBe(F.of("0.3"))
    expect(Stop.stopMarket.info(r.state)).toMatchObject({ protection: "0.3" })
  })

  it("rounds the protection away from aggression and clamps it to [tick, 1 − tick]", () => {
    const price = (side: Side, stop: string, slip: string) => {
      const spec = parent({ side, stopPrice: F.of(stop) })
      return F.format(stopMarket(spec, { max_slippage: slip }).limit)
    }
    expect(price("sell", "0.4", "0.025")).toBe("0.38")
    expect(price("buy", "0.4", "0.025")).toBe("0.42")
    expect(price("sell", "0.03", "0.05")).toBe("0.01")
    expect(price("buy", "0.97", "0.05")).toBe("0.99")
    expect(price("sell", "0.4", "0.000001")).toBe("0.4")
    expect(price("buy", "0.4", "0.000001")).toBe("0.4")
  })

  it("ends closed when the child fills in full", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [
      market("0.4", "0.41"),
      { _tag: "ChildAccepted", ts: 2, child: 1 },
      fill("f1", "6"),
      fill("f2", "4"),
      done("closed", "10")
    ])
    expect(r.steps[4]!.commands).toEqual([{ _tag: "Finish", status: "closed", detail: "filled" }])
    expect(Stop.stopMarket.info(r.state)).toMatchObject({ filled: "10", fired: true })
  })

  it("ends canceled when the IOC fills in part", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [
      market("0.4", "0.41"),
      fill("f1", "4"),
      done("canceled", "4")
    ])
    expect(r.steps[2]!.commands).toEqual([
      { _tag: "Finish", status: "canceled", detail: "the stop's child ended with 4 of 10 filled" }
    ])
  })

  it("ends rejected with the venue's reason when the child is refused", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [
      market("0.4", "0.41"),
      done("rejected", "0", "insufficient funds")
    ])
    expect(r.steps[1]!.commands).toEqual([{ _tag: "Finish", status: "rejected", detail: "insufficient funds" }])
  })

  it("counts a fill delivered twice once", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [
      market("0.4", "0.41"),
      fill("f1", "4"),
      fill("f1", "4"),
      fill("f2", "1")
    ])
    expect(r.state.filled).toBe(F.of("5"))
    expect(r.state.seen).toEqual(["f1", "f2"])
  })

  it("sends nothing more after firing, and nothing at all after finishing", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [
      market("0.4", "0.41"),
      market("0.3", "0.31"),
      market("0.2", "0.21"),
      { _tag: "ChildDone", ts: 3, child: 2, status: "closed", filled: F.of("10"), reason: null },
      done("canceled", "0"),
      fill("late", "3"),
      done("closed", "10"),
      market("0.1", "0.11")
    ])
    expect(places(r.commands)).toHaveLength(1)
    expect(r.steps.slice(1, 4).every((s) => s.commands.length === 0)).toBe(true)
    expect(r.steps[4]!.commands).toHaveLength(1)
    expect(r.steps.slice(5).every((s) => s.commands.length === 0)).toBe(true)
    expect(r.state.filled).toBe(F.ZERO)
  })

  it("ignores child updates before it fires", () => {
    const spec = parent()
    const r = run(Stop.stopMarket, spec, stopMarket(spec), [fill("f1", "4"), done("closed", "10")])
    expect(r.commands).toEqual([])
    expect(r.state).toEqual(r.init.state)
  })

  it("uses the last trade the caller remembers when the view has none", () => {
    const view: MarketView = { bestBid: null, bestAsk: null, last: null }
    expect(Stop.triggerReference("last", "sell", view)).toBeNull()
    expect(Stop.triggerReference("last", "sell", view, F.of("0.3"))).toBe(F.of("0.3"))
    expect(Stop.triggerReference("last", "sell", { ...view, last: F.of("0.4") }, F.of("0.3"))).toBe(F.of("0.4"))
    expect(Stop.fires("sell", F.of("0.4"), F.of("0.4"))).toBe(true)
    expect(Stop.fires("sell", F.of("0.41"), F.of("0.4"))).toBe(false)
    expect(Stop.fires("buy", F.of("0.4"), F.of("0.4"))).toBe(true)
    expect(Stop.fires("buy", F.of("0.39"), F.of("0.4"))).toBe(false)
  })

  it("validates against the parent", () => {
    const check = (over: Partial<ParentSpec>, wire: unknown) =>
      errorsOf(Stop.validateStopMarket(parent(over), decode(wire)))
    expect(check({ stopPrice: null }, {})).toEqual([
      { field: "stop_price", message: "a stop_market needs a stop_price" }
    ])
    expect(check({}, { protection: "0.305" })).toEqual([
      { field: "params.protection", message: "0.305 is off the tick grid of 0.01; nearest valid: 0.3 or 0.31" }
    ])
    expect(check({}, { protection: "1" }).map((e) => e.field)).toEqual(["params.protection"])
    expect(check({}, { protection: "0" }).map((e) => e.field)).toEqual(["params.protection"])
    expect(check({}, { max_slippage: "0" }).map((e) => e.field)).toEqual(["params.max_slippage"])
    expect(check({ price: F.of("0.3") }, {}).map((e) => e.field)).toEqual(["price"])
    expect(check({ stopPrice: F.of("0.405") }, {})).toEqual([
      { field: "stop_price", message: "0.405 is off the tick grid of 0.01; nearest valid: 0.4 or 0.41" }
    ])
    expect(check({}, { trigger_source: "mid", max_slippage: "0.1" })).toEqual([])
    expect(() => decode({ trigger_source: "mid", whatever: 3 }), "an unknown key is refused").toThrow(/whatever/)
    expect(stopMarket(parent(), { trigger_source: "mid", max_slippage: "0.1" })).toEqual({
      source: "mid",
      stop: F.of("0.4"),
      limit: F.of("0.3"),
      ioc: true,
      protection: F.of("0.3")
    })
    expect(() => decode({ trigger_source: "bid" })).toThrow()
    expect(() => decode({ protection: "0.1234567" })).toThrow()
  })
})

describe("stop_limit", () => {
  it("sends a limit at the parent's price with its time in force", () => {
    const spec = parent({ side: "buy", price: F.of("0.47"), timeInForce: "gtd", reduceOnly: true })
    const params = stopLimit(spec)
    const r = run(Stop.stopLimit, spec, params, [market("0.3", "0.39"), market("0.3", "0.41")])
    expect(r.steps[0]!.commands).toEqual([])
    expect(places(r.commands)).toEqual([
      {
        child: 1,
        side: "buy",
        price: F.of("0.47"),
        amount: F.of("10"),
        timeInForce: "gtd",
        postOnly: false,
        reduceOnly: true,
        role: "stop"
      }
    ])
    expect(Stop.stopLimit.info(r.state)).toEqual({ stop_price: "0.4", protection: null, fired: true, filled: "0" })
  })

  it("ends canceled when its child expires part filled", () => {
    const spec = parent({ price: F.of("0.38") })
    const r = run(Stop.stopLimit, spec, stopLimit(spec), [
      market("0.39", "0.4"),
      fill("a", "2.5"),
      done("expired", "2.5")
    ])
    expect(r.steps[2]!.commands).toEqual([
      { _tag: "Finish", status: "canceled", detail: "the stop's child ended with 2.5 of 10 filled" }
    ])
  })

  it("validates against the parent", () => {
    const check = (over: Partial<ParentSpec>, wire: unknown) =>
      errorsOf(Stop.validateStopLimit(parent(over), decode(wire)))
    expect(check({}, {})).toEqual([{ field: "price", message: "a stop_limit needs a price" }])
    expect(check({ price: null, stopPrice: null }, {}).map((e) => e.field)).toEqual(["stop_price", "price"])
    expect(check({ price: F.of("0.3") }, { protection: "0.3", max_slippage: "0.1" }).map((e) => e.field)).toEqual([
      "params.protection",
      "params.max_slippage"
    ])
    expect(check({ price: F.of("0.3") }, { trigger_source: "last" })).toEqual([])
  })
})

// Properties over generated reference sequences. A reference of null is a view with nothing in it.

const priceArb = fc.integer({ min: 1, max: 99 }).map((k) => (k * 10_000) as F.Fixed)
const sideArb = fc.constantFrom<Side>("buy", "sell")
const sourceArb = fc.constantFrom<Stop.TriggerSource>("touch", "mid", "last")
const viewArb: fc.Arbitrary<MarketView> = fc.record({
  bestBid: fc.option(priceArb, { freq: 6 }),
  bestAsk: fc.option(priceArb, { freq: 6 }),
  last: fc.option(priceArb, { freq: 6 })
})
const viewsArb = fc.array(viewArb, { minLength: 1, maxLength: 30 })

/** The reference, computed here independently of the module under test. */
const referenceOf = (source: Stop.TriggerSource, side: Side, view: MarketView): number | null => {
  if (source === "last") return view.last
  if (source === "touch") return side === "buy" ? view.bestAsk : view.bestBid
  return view.bestBid === null || view.bestAsk === null ? null : (view.bestBid + view.bestAsk) / 2
}
const through = (side: Side, ref: number, level: number) => (side === "sell" ? ref <= level : ref >= level)
const marketOf = (view: MarketView): Input => ({ _tag: "Market", ts: 1, view })
const mirrorPrice = (x: F.Fixed | null): F.Fixed | null => (x === null ? null : F.sub(F.ONE, x))
const mirrorView = (v: MarketView): MarketView => ({
  bestBid: mirrorPrice(v.bestAsk),
  bestAsk: mirrorPrice(v.bestBid),
  last: mirrorPrice(v.last)
})

const stopCaseArb = fc.record({
  side: sideArb,
  source: sourceArb,
  stop: priceArb,
  limit: fc.option(priceArb, { freq: 3 }),
  protection: fc.option(priceArb, { freq: 4 }),
  slippage: fc.integer({ min: 1, max: 600_000 }),
  views: viewsArb
})
type StopCase = typeof stopCaseArb extends fc.Arbitrary<infer A> ? A : never

const setUp = (c: StopCase) => {
  const spec = parent({ side: c.side, stopPrice: c.stop, price: c.limit })
  const wire: Record<string, string> = { trigger_source: c.source }
  if (c.limit === null) {
    wire["max_slippage"] = F.format(c.slippage as F.Fixed)
    if (c.protection !== null) wire["protection"] = F.format(c.protection)
  }
  const params = c.limit === null ? stopMarket(spec, wire) : stopLimit(spec, wire)
  return { spec, params, core: c.limit === null ? Stop.stopMarket : Stop.stopLimit }
}

describe("stop invariants", () => {
  it("T4: a stop fires on the first reference at or through its level, never earlier", () => {
    fc.assert(
      fc.property(stopCaseArb, (c) => {
        const { spec, params, core } = setUp(c)
        const r = run(core, spec, params, c.views.map(marketOf))
        const refs = c.views.map((v) => referenceOf(c.source, c.side, v))
        const expected = refs.findIndex((ref) => ref !== null && through(c.side, ref, c.stop))
        const actual = r.steps.findIndex((s) => s.commands.some((cmd) => cmd._tag === "Trigger"))
        expect(actual).toBe(expected)
        if (expected >= 0) {
          expect(r.steps[expected]!.commands[1]).toEqual({
            _tag: "Emit",
            kind: "managed.triggered",
            payload: { reference: F.format(refs[expected]! as F.Fixed), level: F.format(c.stop), source: c.source }
          })
        }
      }),
      RUNS
    )
  })

  it("T5: a stop sends exactly one child, even with every input delivered twice", () => {
    fc.assert(
      fc.property(stopCaseArb, fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 8 }), (c, fills) => {
        const { spec, params, core } = setUp(c)
        const inputs: Array<Input> = [...c.views.map(marketOf), ...c.views.map(marketOf)]
        inputs.push(...fills.map((n, i): Input => ({ ...fill(`f${n}`, "1"), ts: 10 + i })))
        const twice = inputs.flatMap((input) => [input, input])
        const r = run(core, spec, params, twice)
        const fired = c.views.some((v) => {
          const ref = referenceOf(c.source, c.side, v)
          return ref !== null && through(c.side, ref, c.stop)
        })
        expect(places(r.commands)).toHaveLength(fired ? 1 : 0)
        expect(r.commands.filter((cmd) => cmd._tag === "Trigger")).toHaveLength(fired ? 1 : 0)
        for (let i = 1; i < r.steps.length; i += 2) expect(r.steps[i]!.commands).toEqual([])
        expect(r.state.filled).toBe(fired ? F.fromInt(new Set(fills).size) : F.ZERO)
      }),
      RUNS
    )
  })

  it("T6: every price a stop sends is on the grid, in [tick, 1 − tick], rounded away from aggression", () => {
    fc.assert(
      fc.property(stopCaseArb, (c) => {
        const { spec, params, core } = setUp(c)
        const r = run(core, spec, params, [
          ...c.views.map(marketOf),
          marketOf({ bestBid: TICK, bestAsk: ONE_TICK_BELOW_ONE, last: TICK })
        ])
        for (const child of places(r.commands)) {
          expect(F.isMultipleOf(child.price, TICK)).toBe(true)
          expect(child.price).toBeGreaterThanOrEqual(TICK)
          expect(child.price).toBeLessThanOrEqual(ONE_TICK_BELOW_ONE)
          expect(child.amount).toBe(spec.amount)
          const raw = c.limit ?? c.protection ?? (c.side === "sell" ? c.stop - c.slippage : c.stop + c.slippage)
          if (raw >= TICK && raw <= ONE_TICK_BELOW_ONE) {
            if (c.side === "sell") expect(child.price - raw).toBeGreaterThanOrEqual(0)
            else expect(raw - child.price).toBeGreaterThanOrEqual(0)
            expect(Math.abs(child.price - raw)).toBeLessThan(TICK)
          } else {
            expect(child.price).toBe(raw < TICK ? TICK : ONE_TICK_BELOW_ONE)
          }
        }
      }),
      RUNS
    )
  })

  it("T7: a sell stop on p equals a buy stop on 1 − p", () => {
    fc.assert(
      fc.property(stopCaseArb, (c) => {
        const sell = setUp({ ...c, side: "sell" })
        const buy = setUp({
          ...c,
          side: "buy",
          stop: mirrorPrice(c.stop)!,
          limit: mirrorPrice(c.limit),
          protection: mirrorPrice(c.protection)
        })
        const a = run(sell.core, sell.spec, sell.params, c.views.map(marketOf))
        const b = run(
          buy.core,
          buy.spec,
          buy.params,
          c.views.map((v) => marketOf(mirrorView(v)))
        )
        expect(a.steps.map((s) => s.commands.length)).toEqual(b.steps.map((s) => s.commands.length))
        expect(places(a.commands).map((p) => F.sub(F.ONE, p.price))).toEqual(places(b.commands).map((p) => p.price))
      }),
      RUNS
    )
  })
})
