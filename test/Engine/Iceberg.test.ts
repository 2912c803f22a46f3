import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { ChildSpec, Command, Core, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, type State, type Typed, validate } from "../../src/Engine/Iceberg.ts"

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
