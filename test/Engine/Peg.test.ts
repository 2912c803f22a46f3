import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { ChildSpec, Command, Core, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, type Params, pegPrice, type State, type Typed, validate } from "../../src/Engine/Peg.ts"

// ---- a tiny deterministic venue: keeps the children a core places and feeds back what the driver would ----

const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 5000 } : { seed: 42, numRuns: 200 }

interface VenueChild {
  readonly spec: ChildSpec
  readonly placedAt: number
  filled: F.Fixed
  done: boolean
  accepted: boolean
  cancelAsked: boolean
}

type Act =
  | { readonly t: "fill"; readonly pick: number; readonly pct: number }
  | { readonly t: "dup"; readonly pick: number }
  | { readonly t: "accept"; readonly pick: number }
  | { readonly t: "cancelAck"; readonly pick: number }
  | { readonly t: "venueEnd"; readonly pick: number }
  | { readonly t: "market"; readonly bid: number | null; readonly ask: number | null }
  | { readonly t: "wait"; readonly ms: number }

type Fill = Input & { readonly _tag: "ChildFill" }
type Check<S> = (venue: Venue<any, S>, input: Input | null, commands: ReadonlyArray<Command>) => void

class Venue<P, S> {
  now: number
  state: S
  view: MarketView | null = null
  finished: (Command & { readonly _tag: "Finish" }) | null = null
  readonly children = new Map<number, VenueChild>()
  readonly timers = new Map<string, number>()
  readonly fills: Array<Fill> = []
  readonly log: Array<{ readonly ts: number; readonly command: Command }> = []
  private seq = 0

  constructor(
    readonly core: Core<P, S>,
    readonly spec: ParentSpec,
    readonly params: P,
    seed: number,
    readonly check: Check<S> = () => {}
  ) {
    this.now = spec.createdAt
    const first = core.init(spec, params, seed)
    this.state = first.state
    this.execute(null, first.commands)
  }

  feed(input: Input): ReadonlyArray<Command> {
    if (this.finished !== null && input._tag !== "ChildFill") return []
    const step = this.core.step(this.spec, this.params, this.state, input)
    expect(JSON.parse(JSON.stringify(step.state))).toEqual(step.state)
    this.state = step.state
    this.execute(input, step.commands)
    return step.commands
  }

  private execute(input: Input | null, commands: ReadonlyArray<Command>) {
    const ts = input?.ts ?? this.spec.createdAt
    for (const command of commands) {
      this.log.push({ ts, command })
      switch (command._tag) {
        case "Place":
          expect(this.finished, "no child after Finish").toBeNull()
          expect(this.children.has(command.spec.child), "child numbers are fresh").toBe(false)
          this.children.set(command.spec.child, {
            spec: command.spec,
            placedAt: ts,
            filled: F.ZERO,
            done: false,
            accepted: false,
            cancelAsked: false
          })
          break
        case "Cancel": {
          const child = this.children.get(command.child)
          if (child !== undefined && !child.done) child.cancelAsked = true
          break
        }
        case "SetTimer":
          if (this.finished === null) this.timers.set(command.timer, command.at)
          break
        case "Finish":
          expect(this.finished, "G1: a parent finishes once").toBeNull()
          this.finished = command
          this.timers.clear()
          for (const child of this.live()) child.cancelAsked = true
          break
        case "Emit":
        case "Trigger":
          break
      }
    }
    this.check(this, input, commands)
  }

  live(): Array<VenueChild> {
    return [...this.children.values()].filter((c) => !c.done)
  }

  /** Σ of every distinct fill. */
  filled(): F.Fixed {
    return [...this.children.values()].reduce((sum, c) => F.add(sum, c.filled), F.ZERO)
  }

  /** Σ of what live children may still fill. */
  open(): F.Fixed {
    return this.live().reduce((sum, c) => F.add(sum, F.sub(c.spec.amount, c.filled)), F.ZERO)
  }

  places(): Array<{ readonly ts: number; readonly spec: ChildSpec }> {
    return this.log.flatMap((e) => (e.command._tag === "Place" ? [{ ts: e.ts, spec: e.command.spec }] : []))
  }

  end(child: VenueChild, status: "closed" | "canceled" | "expired") {
    child.done = true
    if (this.finished === null) {
      this.feed({
        _tag: "ChildDone",
        ts: this.now,
        child: child.spec.child,
        status,
        filled: child.filled,
        reason: null
      })
    }
  }

  fill(child: VenueChild, amount: F.Fixed) {
    child.filled = F.add(child.filled, amount)
    const fill: Fill = {
      _tag: "ChildFill",
      ts: this.now,
      child: child.spec.child,
      fillId: `x${++this.seq}`,
      price: child.spec.price,
      amount
    }
    this.fills.push(fill)
    this.feed(fill)
    if (child.filled >= child.spec.amount && !child.done) this.end(child, "closed")
  }

  market(view: MarketView) {
    this.view = view
    this.feed({ _tag: "Market", ts: this.now, view })
  }

  /** Fires the earliest timer due at or before `until`; false when none is. */
  fireNext(until: number): boolean {
    let next: [string, number] | undefined
    for (const entry of this.timers) if (entry[1] <= until && (next === undefined || entry[1] < next[1])) next = entry
    if (next === undefined) return false
    this.timers.delete(next[0])
    this.now = Math.max(this.now, next[1])
    this.feed({ _tag: "Timer", ts: next[1], timer: next[0] })
    return true
  }

  act(a: Act) {
    const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined => items[n % Math.max(1, items.length)]
    switch (a.t) {
      case "fill": {
        const child = pick(this.live(), a.pick)
        if (child === undefined) break
        const lots = Math.round(F.sub(child.spec.amount, child.filled) / this.spec.lot)
        if (lots > 0) this.fill(child, F.mul(F.fromInt(Math.max(1, Math.floor((lots * a.pct) / 100))), this.spec.lot))
        break
      }
      case "dup": {
        const fill = pick(this.fills, a.pick)
        if (fill !== undefined) this.feed({ ...fill, ts: this.now })
        break
      }
      case "accept": {
        const child = pick(
          this.live().filter((c) => !c.accepted),
          a.pick
        )
        if (child === undefined) break
        child.accepted = true
        if (this.finished === null) this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child })
        break
      }
      case "cancelAck": {
        const child = pick(
          this.live().filter((c) => c.cancelAsked),
          a.pick
        )
        if (child !== undefined) this.end(child, "canceled")
        break
      }
      case "venueEnd": {
        const child = pick(this.live(), a.pick)
        if (child !== undefined) this.end(child, a.pick % 2 === 0 ? "canceled" : "expired")
        break
      }
      case "market":
        if (this.finished === null) {
          const tick = this.spec.tick
          const at = (n: number | null) => (n === null ? null : F.mul(tick, F.fromInt(n)))
          this.market({ bestBid: at(a.bid), bestAsk: at(a.ask), last: null })
        }
        break
      case "wait": {
        const until = this.now + a.ms
        while (this.fireNext(until));
        this.now = until
        break
      }
    }
    while (this.fireNext(this.now));
  }

  /** Lets the venue answer everything: cancels land, IOCs end, timers fire, until nothing is left to happen. */
  drain(steps = 1000) {
    for (let i = 0; i < steps; i++) {
      const asked = this.live().find((c) => c.cancelAsked)
      const ioc = this.live().find((c) => c.spec.timeInForce === "ioc")
      if (asked !== undefined) this.end(asked, "canceled")
      else if (ioc !== undefined) this.end(ioc, "expired")
      else if (!this.fireNext(Number.POSITIVE_INFINITY)) return
    }
  }
}

const actArb = (maxWaitMs: number): fc.Arbitrary<Act> =>
  fc.oneof(
    {
      arbitrary: fc.record({ t: fc.constant("fill" as const), pick: fc.nat(), pct: fc.integer({ min: 1, max: 100 }) }),
      weight: 5
    },
    { arbitrary: fc.record({ t: fc.constant("dup" as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ t: fc.constant("accept" as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ t: fc.constant("cancelAck" as const), pick: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ t: fc.constant("venueEnd" as const), pick: fc.nat() }), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.integer({ min: 1, max: 97 }), fc.integer({ min: 1, max: 4 }), fc.nat(9))
        .map(([bid, spread, gap]): Act => ({
          t: "market",
          bid: gap === 0 ? null : bid,
          ask: gap === 1 ? null : Math.min(99, bid + spread)
        })),
      weight: 3
    },
    { arbitrary: fc.record({ t: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: maxWaitMs }) }), weight: 4 }
  )

/** W2: Σ filled + Σ open never exceeds Q. */
const checkExposure = (venue: Venue<any, any>) => {
  expect(F.add(venue.filled(), venue.open()), "W2: Σ filled + Σ open <= Q").toBeLessThanOrEqual(venue.spec.amount)
}

/** G2: the core's filled is the sum of the distinct fills, and never above the amount. */
const checkFills = <S>(venue: Venue<any, S>, info: (state: S) => Readonly<Record<string, unknown>>) => {
  expect(F.of(String(info(venue.state)["filled"])), "G2: filled = Σ distinct fills").toBe(venue.filled())
  expect(venue.filled(), "G2: filled <= amount").toBeLessThanOrEqual(venue.spec.amount)
}

const baseSpec = (over: Partial<ParentSpec> = {}): ParentSpec => ({
  id: "mo_1",
  side: "buy",
  amount: F.of("10"),
  price: F.of("0.4"),
  stopPrice: null,
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  tick: F.of("0.01"),
  lot: F.of("1"),
  createdAt: 1_000_000,
  ...over
})

const ok = <T>(
  result: { readonly params: T } | { readonly errors: ReadonlyArray<{ field: string; message: string }> }
): T => {
  if ("errors" in result) throw new Error(JSON.stringify(result.errors))
  return result.params
}

const fieldsOf = (result: { readonly params: unknown } | { readonly errors: ReadonlyArray<{ field: string }> }) =>
  "errors" in result ? result.errors.map((e) => e.field) : []

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
