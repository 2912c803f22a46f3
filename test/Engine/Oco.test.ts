/** oco: two legs; a fill on one shrinks the other by the same fraction, a full fill cancels it. Invariants O1–O5. */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import type { ChildSpec, Command, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, Params, type State, type Typed, validate } from "../../src/Engine/Oco.ts"
import { baseSpec as venueSpec, fieldsOf, ok, RUNS } from "./FakeVenue.ts"

const TICK = F.of("0.01")

const baseSpec = (over: Partial<ParentSpec> = {}): ParentSpec => venueSpec({ price: null, ...over })

const decode = Schema.decodeUnknownSync(Params)

const oco = (legs: ReadonlyArray<Record<string, unknown>>, over: Partial<ParentSpec> = {}) => {
  const spec = baseSpec(over)
  return { spec, params: ok(validate(spec, decode({ legs }))) }
}

const book = (bid: string | null, ask: string | null, last: string | null = null): MarketView => ({
  bestBid: bid === null ? null : F.of(bid),
  bestAsk: ask === null ? null : F.of(ask),
  last: last === null ? null : F.of(last)
})

const places = (commands: ReadonlyArray<Command>): Array<ChildSpec> =>
  commands.flatMap((c) => (c._tag === "Place" ? [c.spec] : []))

const isOverfill = (c: Command) => c._tag === "Emit" && c.kind === "managed.overfill"

/** Which leg a child belongs to, from its role (`leg1`, `leg1_stop`, `leg2`, `leg2_stop`). */
const legOfRole = (role: string): 0 | 1 => (role.startsWith("leg1") ? 0 : 1)

/** Whether f0/a0 + f1/a1 > 1, computed exactly (no rounding). */
const exceedsOne = (f0: F.Fixed, a0: F.Fixed, f1: F.Fixed, a1: F.Fixed): boolean =>
  BigInt(f0) * BigInt(a1) + BigInt(f1) * BigInt(a0) > BigInt(a0) * BigInt(a1)

// ---- a tiny deterministic venue: keeps the children the core places and feeds back what the driver would ----

interface VenueChild {
  readonly spec: ChildSpec
  readonly leg: 0 | 1
  filled: F.Fixed
  done: boolean
  accepted: boolean
  cancelAsked: boolean
}

type Fill = Input & { readonly _tag: "ChildFill" }
type Finish = Command & { readonly _tag: "Finish" }
/** What fed the step: a fresh fill, a fill delivered again, a late ack or fill for a done child, or anything else. */
type Origin = "init" | "fresh" | "dup" | "late" | "lateFill" | "other"

/** Called after each step, before the venue carries out its commands (so the venue still shows the world before them). */
type Check = (
  v: Venue,
  input: Input | null,
  before: State | null,
  after: State,
  commands: ReadonlyArray<Command>
) => void

type Act =
  | { readonly t: "market"; readonly bid: number | null; readonly ask: number | null; readonly last: number | null }
  | { readonly t: "fill"; readonly pick: number; readonly pct: number }
  | { readonly t: "cancelAck"; readonly pick: number }
  | { readonly t: "iocEnd"; readonly pick: number }
  | { readonly t: "accept"; readonly pick: number }
  | { readonly t: "dup"; readonly pick: number }
  /** For a child that is done: its ack again, one of its fills again, or a fill the venue never made (`fresh`). */
  | { readonly t: "late"; readonly pick: number; readonly what: "ack" | "again" | "fresh" }

class Venue {
  now: number
  state: State
  origin: Origin = "init"
  finished: Finish | null = null
  /** Fills that reached a child after the engine asked to cancel it (a venue double fill). */
  doubleFills = 0
  readonly children = new Map<number, VenueChild>()
  readonly fills: Array<Fill> = []
  readonly log: Array<Command> = []
  private seq = 0

  constructor(
    readonly spec: ParentSpec,
    readonly params: Typed,
    readonly check: Check = () => {}
  ) {
    this.now = spec.createdAt
    const first = core.init(spec, params, 1)
    this.state = first.state
    this.check(this, null, null, first.state, first.commands)
    this.execute(first.commands)
  }

  feed(input: Input, origin: Origin = "other"): ReadonlyArray<Command> {
    const before = this.state
    const step = core.step(this.spec, this.params, before, input)
    expect(JSON.parse(JSON.stringify(step.state)), "the state is plain JSON").toEqual(step.state)
    this.state = step.state
    this.origin = origin
    this.check(this, input, before, step.state, step.commands)
    this.execute(step.commands)
    return step.commands
  }

  private execute(commands: ReadonlyArray<Command>) {
    for (const command of commands) {
      this.log.push(command)
      switch (command._tag) {
        case "Place":
          expect(this.finished, "no child after Finish").toBeNull()
          expect(this.children.has(command.spec.child), "child numbers are fresh").toBe(false)
          this.children.set(command.spec.child, {
            spec: command.spec,
            leg: legOfRole(command.spec.role),
            filled: F.ZERO,
            done: false,
            accepted: false,
            cancelAsked: false
          })
          break
        case "Cancel": {
          const child = this.children.get(command.child)
          expect(child, "a cancel names a child the core placed").toBeDefined()
          if (child !== undefined && !child.done) child.cancelAsked = true
          break
        }
        case "Finish":
          expect(this.finished, "a parent finishes once").toBeNull()
          this.finished = command
          for (const child of this.live()) child.cancelAsked = true
          break
        case "SetTimer":
        case "Emit":
        case "Trigger":
          break
      }
    }
  }

  live(leg?: 0 | 1): Array<VenueChild> {
    return [...this.children.values()].filter((c) => !c.done && (leg === undefined || c.leg === leg))
  }

  amountOf(leg: 0 | 1): F.Fixed {
    return this.params.legs[leg].amount
  }

  /** Σ of the distinct fills of a leg's children. */
  legFilled(leg: 0 | 1): F.Fixed {
    return [...this.children.values()].filter((c) => c.leg === leg).reduce((s, c) => F.add(s, c.filled), F.ZERO)
  }

  /** What a leg's live children may still fill. */
  inFlight(leg: 0 | 1): F.Fixed {
    return this.live(leg).reduce((s, c) => F.add(s, F.sub(c.spec.amount, c.filled)), F.ZERO)
  }

  /** §3 / O2: what leg `k` may still take, `A_k × (1 − f_o/A_o) − f_k` rounded down to the lot, exactly. */
  target(k: 0 | 1): F.Fixed {
    const o = (1 - k) as 0 | 1
    const left = F.max(F.ZERO, F.sub(this.amountOf(o), this.legFilled(o)))
    const exact = Number((BigInt(this.amountOf(k)) * BigInt(left)) / BigInt(this.amountOf(o))) as F.Fixed
    return F.sub(F.roundTo(exact, this.spec.lot, "down"), this.legFilled(k))
  }

  triggered(): boolean {
    return this.log.some((c) => c._tag === "Trigger")
  }

  end(child: VenueChild, status: "closed" | "canceled" | "expired") {
    child.done = true
    // After Finish the driver marks its children done without feeding the core.
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
    if (child.cancelAsked) this.doubleFills += 1
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
    this.feed(fill, "fresh")
    if (child.filled >= child.spec.amount && !child.done) this.end(child, "closed")
  }

  act(a: Act) {
    this.now += 1
    const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined => items[n % Math.max(1, items.length)]
    switch (a.t) {
      case "market": {
        if (this.finished !== null) break
        const at = (n: number | null) => (n === null ? null : F.mul(TICK, F.fromInt(n)))
        this.feed({ _tag: "Market", ts: this.now, view: { bestBid: at(a.bid), bestAsk: at(a.ask), last: at(a.last) } })
        break
      }
      case "fill": {
        const child = pick(this.live(), a.pick)
        if (child === undefined) break
        const lots = Math.round(F.sub(child.spec.amount, child.filled) / this.spec.lot)
        if (lots > 0) this.fill(child, F.mul(F.fromInt(Math.max(1, Math.floor((lots * a.pct) / 100))), this.spec.lot))
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
      case "iocEnd": {
        const child = pick(
          this.live().filter((c) => c.spec.timeInForce === "ioc"),
          a.pick
        )
        if (child !== undefined) this.end(child, "expired")
        break
      }
      case "accept": {
        const child = pick(
          this.live().filter((c) => !c.accepted),
          a.pick
        )
        if (child === undefined) break
        child.accepted = true
        this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child })
        break
      }
      case "dup": {
        const fill = pick(this.fills, a.pick)
        if (fill !== undefined) this.feed({ ...fill, ts: this.now }, "dup")
        break
      }
      case "late": {
        const child = pick(
          [...this.children.values()].filter((c) => c.done),
          a.pick
        )
        if (child === undefined) break
        const own = this.fills.filter((f) => f.child === child.spec.child)
        const again = own[a.pick % Math.max(1, own.length)]
        if (a.what === "again" && again !== undefined) this.feed({ ...again, ts: this.now }, "late")
        else if (a.what === "fresh") {
          const fill: Fill = {
            _tag: "ChildFill",
            ts: this.now,
            child: child.spec.child,
            fillId: `late${++this.seq}`,
            price: child.spec.price,
            amount: this.spec.lot
          }
          this.feed(fill, "lateFill")
        } else this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child }, "late")
        break
      }
    }
  }

  /** Lets the venue answer everything the engine asked: cancels land, IOCs end. */
  drain() {
    for (let i = 0; i < 100; i++) {
      const asked = this.live().find((c) => c.cancelAsked)
      const ioc = this.live().find((c) => c.spec.timeInForce === "ioc")
      if (asked !== undefined) this.end(asked, "canceled")
      else if (ioc !== undefined) this.end(ioc, "expired")
      else return
    }
  }
}

// ---- generated scenarios ----

const sideArb = fc.constantFrom<Side>("buy", "sell")

const legArb = fc.record({
  side: sideArb,
  type: fc.constantFrom("limit", "limit", "stop_market", "stop_limit"),
  price: fc.integer({ min: 1, max: 99 }),
  stop: fc.integer({ min: 1, max: 99 }),
  lots: fc.option(fc.integer({ min: 1, max: 25 }), { freq: 2 }),
  source: fc.constantFrom("touch", "mid", "last")
})
type LegCase = typeof legArb extends fc.Arbitrary<infer A> ? A : never

/** Mostly small partial fills, sometimes the whole rest. */
const pctArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 30 }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 1 }
)

const actArb = (weights: { readonly dup: number; readonly late: number }): fc.Arbitrary<Act> =>
  fc.oneof(
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: 98 }),
          fc.integer({ min: 1, max: 5 }),
          fc.integer({ min: 1, max: 99 }),
          fc.nat(9)
        )
        .map(([bid, spread, last, gap]): Act => ({
          t: "market",
          bid: gap === 0 ? null : bid,
          ask: gap === 1 ? null : Math.min(99, bid + spread),
          last: gap === 2 ? null : last
        })),
      weight: 2
    },
    {
      arbitrary: fc.record({ t: fc.constant("fill" as const), pick: fc.nat(), pct: pctArb }),
      weight: 6
    },
    { arbitrary: fc.record({ t: fc.constant("cancelAck" as const), pick: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ t: fc.constant("iocEnd" as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ t: fc.constant("accept" as const), pick: fc.nat() }), weight: 1 },
    { arbitrary: fc.record({ t: fc.constant("dup" as const), pick: fc.nat() }), weight: weights.dup },
    {
      arbitrary: fc.record({
        t: fc.constant("late" as const),
        pick: fc.nat(),
        what: fc.constantFrom<"ack" | "again" | "fresh">("ack", "again", "fresh")
      }),
      weight: weights.late
    }
  )

const scenarioArb = (weights = { dup: 1, late: 1 }) =>
  fc.record({
    lots: fc.integer({ min: 1, max: 25 }),
    lot: fc.constantFrom("1", "0.5"),
    legs: fc.tuple(legArb, legArb),
    acts: fc.array(actArb(weights), { maxLength: 80, size: "medium" })
  })
type Scenario = typeof scenarioArb extends (...args: Array<any>) => fc.Arbitrary<infer A> ? A : never

const wireLeg = (leg: LegCase, lot: F.Fixed): Record<string, unknown> => ({
  side: leg.side,
  type: leg.type,
  ...(leg.type === "stop_market" ? {} : { price: F.format(F.mul(TICK, F.fromInt(leg.price))) }),
  ...(leg.type === "limit"
    ? {}
    : { stop_price: F.format(F.mul(TICK, F.fromInt(leg.stop))), trigger_source: leg.source }),
  ...(leg.lots === null ? {} : { amount: F.format(F.mul(lot, F.fromInt(leg.lots))) })
})

/** Runs a scenario with `check` after every step, lets the venue answer what is left, and answers the venue. */
const run = (s: Scenario, check: Check): Venue => {
  const lot = F.of(s.lot)
  const { spec, params } = oco(
    s.legs.map((leg) => wireLeg(leg, lot)),
    { amount: F.mul(lot, F.fromInt(s.lots)), lot }
  )
  const v = new Venue(spec, params, check)
  for (const a of s.acts) v.act(a)
  v.drain()
  return v
}

describe("oco", () => {
  it("validates the legs", () => {
    const spec = baseSpec()
    const check = (legs: ReadonlyArray<Record<string, unknown>>) => fieldsOf(validate(spec, decode({ legs })))
    expect(check([{ side: "buy", type: "limit", price: "0.4" }])).toEqual(["params.legs"])
    expect(
      check([
        { side: "buy", type: "limit" },
        { side: "sell", type: "stop_market" }
      ])
    ).toEqual(["params.legs.0.price", "params.legs.1.stop_price"])
    expect(
      check([
        { side: "buy", type: "limit", price: "0.405", amount: "2.5" },
        { side: "sell", type: "stop_market", stop_price: "0.3", post_only: true, market_id: "sim:x" }
      ])
    ).toEqual(["params.legs.0.amount", "params.legs.0.price", "params.legs.1.market_id", "params.legs.1.post_only"])
    expect(
      check([
        { side: "buy", type: "limit", price: "0.4" },
        { side: "sell", type: "stop_limit", stop_price: "0.3" }
      ])
    ).toEqual(["params.legs.1.price"])
  })

  it("rests limit legs at once, holds stop legs, and passes reduce_only and post_only", () => {
    const { spec, params } = oco(
      [
        { side: "buy", type: "limit", price: "0.4", post_only: true },
        { side: "sell", type: "stop_market", stop_price: "0.3", amount: "4", reduce_only: false }
      ],
      { reduceOnly: true }
    )
    const first = core.init(spec, params, 1)
    expect(first.commands).toEqual([
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.4"),
          amount: F.of("10"),
          timeInForce: "gtc",
          postOnly: true,
          reduceOnly: true,
          role: "leg1"
        }
      }
    ])
    expect(params.legs[1]).toMatchObject({ kind: "stop", price: F.of("0.25"), amount: F.of("4"), reduceOnly: false })
  })

  it("O2 example: 1 of 3 filled on one leg leaves 2 of 3 on the other", () => {
    const { spec, params } = oco(
      [
        { side: "buy", type: "limit", price: "0.4" },
        { side: "sell", type: "limit", price: "0.6" }
      ],
      { amount: F.of("3") }
    )
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("1"))
    expect(v.log.at(-1)).toEqual({ _tag: "Cancel", child: 2 })
    v.end(v.children.get(2)!, "canceled")
    expect(places(v.log).map((p) => [p.child, p.role, F.format(p.amount)])).toEqual([
      [1, "leg1", "3"],
      [2, "leg2", "3"],
      [3, "leg2", "2"]
    ])
  })

  it("O2 example: legs of different sizes shrink by the same fraction, rounded down to the lot", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4", amount: "10" },
      { side: "sell", type: "limit", price: "0.6", amount: "7" }
    ])
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("5"))
    v.end(v.children.get(2)!, "canceled")
    expect(v.children.get(3)?.spec.amount).toBe(F.of("3"))
    v.fill(v.children.get(3)!, F.of("1"))
    expect(v.log.at(-1)).toEqual({ _tag: "Cancel", child: 1 })
    v.end(v.children.get(1)!, "canceled")
    // 10 × (1 − 1/7) = 8.57…, less the 5 filled: 3.
    expect(v.children.get(4)?.spec).toMatchObject({ role: "leg1", amount: F.of("3") })
  })

  it("O3 example: a full fill cancels the other leg in the same step and closes once the cancel lands", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4" },
      { side: "sell", type: "limit", price: "0.6" }
    ])
    const v = new Venue(spec, params)
    const commands = v.feed({
      _tag: "ChildFill",
      ts: 2,
      child: 2,
      fillId: "a",
      price: F.of("0.6"),
      amount: F.of("10")
    })
    expect(commands).toEqual([{ _tag: "Cancel", child: 1 }])
    v.children.get(2)!.filled = F.of("10")
    v.end(v.children.get(2)!, "closed")
    expect(v.finished).toBeNull()
    v.end(v.children.get(1)!, "canceled")
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "leg 2 filled" })
  })

  it("O4 example: a stop leg pulls the resting leg first and sends only what is not filled", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4" },
      { side: "sell", type: "stop_market", stop_price: "0.3", trigger_source: "touch" }
    ])
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("4"))
    v.act({ t: "market", bid: 31, ask: 33, last: null })
    expect(v.triggered()).toBe(false)
    const fired = v.feed({ _tag: "Market", ts: 3, view: book("0.3", "0.32") })
    expect(fired).toEqual([
      { _tag: "Trigger" },
      {
        _tag: "Emit",
        kind: "managed.triggered",
        payload: { leg: 2, reference: "0.3", level: "0.3", source: "touch" }
      },
      { _tag: "Cancel", child: 1 }
    ])
    v.fill(v.children.get(1)!, F.of("1"))
    v.end(v.children.get(1)!, "canceled")
    expect(places(v.log).at(-1)).toEqual({
      child: 2,
      side: "sell",
      price: F.of("0.25"),
      amount: F.of("5"),
      timeInForce: "ioc",
      postOnly: false,
      reduceOnly: false,
      role: "leg2_stop"
    })
    v.fill(v.children.get(2)!, F.of("2"))
    v.end(v.children.get(2)!, "expired")
    expect(v.finished).toEqual({ _tag: "Finish", status: "canceled", detail: "both legs ended without a full fill" })
  })

  it("O1 example: a venue double fill is reported once as managed.overfill", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4" },
      { side: "sell", type: "limit", price: "0.6" }
    ])
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("6"))
    v.fill(v.children.get(2)!, F.of("5"))
    expect(v.log.filter(isOverfill)).toEqual([
      { _tag: "Emit", kind: "managed.overfill", payload: { leg1_filled: "6", leg2_filled: "5" } }
    ])
    v.fill(v.children.get(2)!, F.of("1"))
    expect(v.log.filter(isOverfill)).toHaveLength(1)
    expect(core.info(v.state)).toMatchObject({ overfill: true })
  })

  it("O1 example: an overfill of less than a millionth of the fractions is still reported", () => {
    // 1/3 + 666667/1000000 = 1.00000033…; each fraction rounded down to six places adds up to exactly 1.
    const { spec, params } = oco(
      [
        { side: "buy", type: "limit", price: "0.4", amount: "3" },
        { side: "sell", type: "limit", price: "0.6", amount: "1000000" }
      ],
      { amount: F.of("1000000") }
    )
    const v = new Venue(spec, params)
    v.fill(v.children.get(2)!, F.of("666667"))
    expect(v.log.at(-1)).toEqual({ _tag: "Cancel", child: 1 })
    v.fill(v.children.get(1)!, F.of("1"))
    expect(v.log.filter(isOverfill)).toEqual([
      { _tag: "Emit", kind: "managed.overfill", payload: { leg1_filled: "1", leg2_filled: "666667" } }
    ])
  })

  it("O5 example: a fill seen twice and a late ack change nothing", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4" },
      { side: "sell", type: "limit", price: "0.6" }
    ])
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("2"))
    const before = v.state
    expect(v.feed({ ...v.fills[0]!, ts: 5 })).toEqual([])
    expect(v.state).toEqual(before)
    v.end(v.children.get(2)!, "canceled")
    const resized = v.state
    expect(v.feed({ _tag: "ChildAccepted", ts: 6, child: 2 })).toEqual([])
    expect(
      v.feed({ _tag: "ChildFill", ts: 6, child: 2, fillId: "late", price: F.of("0.6"), amount: F.of("1") })
    ).toEqual([])
    expect(v.state).toEqual(resized)
    expect(places(v.log)).toHaveLength(3)
  })

  it("ends rejected with the venue's reason when a leg is refused", () => {
    const { spec, params } = oco([
      { side: "buy", type: "limit", price: "0.4" },
      { side: "sell", type: "limit", price: "0.6" }
    ])
    const v = new Venue(spec, params)
    const commands = v.feed({
      _tag: "ChildDone",
      ts: 2,
      child: 2,
      status: "rejected",
      filled: F.ZERO,
      reason: "insufficient balance"
    })
    expect(commands).toEqual([{ _tag: "Finish", status: "rejected", detail: "insufficient balance" }])
    expect(v.feed({ _tag: "Market", ts: 3, view: book("0.1", "0.9") })).toEqual([])
  })

  it("O1: f(A)/A_A + f(B)/A_B <= 1 unless the venue double-filled, and then exactly one managed.overfill", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        run(s, (v, _input, _before, after, commands) => {
          const [a0, a1] = [v.amountOf(0), v.amountOf(1)]
          const [f0, f1] = [v.legFilled(0), v.legFilled(1)]
          const over = exceedsOne(f0, a0, f1, a1)
          if (v.doubleFills === 0) expect(over, "O1: fractions <= 1 without a double fill").toBe(false)
          const reported = [...v.log, ...commands].filter(isOverfill)
          expect(reported.length, "O1: an overfill is reported exactly once").toBe(over ? 1 : 0)
          for (const c of commands.filter(isOverfill)) {
            expect(c).toMatchObject({ payload: { leg1_filled: F.format(f0), leg2_filled: F.format(f1) } })
          }
          const info = core.info(after) as { legs: ReadonlyArray<{ filled: string }> }
          expect(
            info.legs.map((l) => l.filled),
            "the core counts each distinct fill once"
          ).toEqual([F.format(f0), F.format(f1)])
        })
      }),
      RUNS
    )
  })

  it("O2: after a fill the other leg is pulled, then sent again sized A_o × (1 − f/A) − f_o (lot), or it ends", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const v = run(s, (v, input, _before, _after, commands) => {
          if (input?._tag === "ChildFill" && v.origin === "fresh") {
            const o = (1 - v.children.get(input.child)!.leg) as 0 | 1
            for (const c of v.live(o).filter((c) => !c.cancelAsked)) {
              expect(commands, "O2: a fill pulls the other leg's live child").toContainEqual({
                _tag: "Cancel",
                child: c.spec.child
              })
            }
          }
          for (const p of places(commands)) {
            const k = legOfRole(p.role)
            expect(v.live(k), "O2: the old child is gone before the new one is sent").toEqual([])
            expect(F.format(p.amount), "O2: sized A_o × (1 − f/A) − f_o, rounded down to the lot").toBe(
              F.format(v.target(k))
            )
            expect(p.amount).toBeGreaterThan(0)
          }
        })
        if (v.finished !== null) return
        // Once every cancel has landed, each leg works exactly its target, or it has ended.
        for (const k of [0, 1] as const) {
          const live = v.live(k)
          expect(live.length).toBeLessThanOrEqual(1)
          const [child] = live
          if (child !== undefined) {
            expect(F.format(F.sub(child.spec.amount, child.filled))).toBe(F.format(v.target(k)))
          } else if (v.params.legs[k].kind === "limit") {
            const o = (1 - k) as 0 | 1
            const ended = v.target(k) <= 0 || v.triggered() || v.legFilled(o) >= v.amountOf(o)
            expect(ended, "O2: a limit leg is pulled for good only when it may take nothing more").toBe(true)
          }
        }
      }),
      RUNS
    )
  })

  it("O3: a leg fully filled cancels the other in the same step; nothing is sent for it, or at all after Finish", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        const full = [false, false]
        let finishedBefore = false
        const v = run(s, (v, _input, _before, _after, commands) => {
          if (finishedBefore) {
            expect(
              commands.filter((c) => c._tag === "Place" || c._tag === "Trigger" || c._tag === "Finish"),
              "O3: nothing after Finish"
            ).toEqual([])
          }
          for (const k of [0, 1] as const) {
            const o = (1 - k) as 0 | 1
            if (full[k]) {
              expect(
                places(commands).filter((p) => legOfRole(p.role) === o),
                "O3: nothing more for the other leg"
              ).toEqual([])
              expect(
                commands.filter((c) => c._tag === "Trigger"),
                "O3: the other leg never fires"
              ).toEqual([])
            } else if (v.legFilled(k) >= v.amountOf(k)) {
              full[k] = true
              for (const c of v.live(o).filter((c) => !c.cancelAsked)) {
                expect(commands, "O3: the other leg is cancelled in the same step").toContainEqual({
                  _tag: "Cancel",
                  child: c.spec.child
                })
              }
            }
          }
          if (commands.some((c) => c._tag === "Finish")) finishedBefore = true
        })
        // A finished oco stays quiet whatever the market does, even where one of its stops would have fired.
        if (v.finished !== null) {
          for (const view of [book("0.01", "0.02", "0.01"), book("0.98", "0.99", "0.99"), book("0.5", "0.51", "0.5")]) {
            v.feed({ _tag: "Market", ts: v.now, view })
          }
        }
      }),
      RUNS
    )
  })

  it("O4: a fired stop leg's child <= what the other leg leaves, less its fills and what it has in flight", () => {
    fc.assert(
      fc.property(scenarioArb(), (s) => {
        run(s, (v, _input, _before, _after, commands) => {
          for (const p of places(commands).filter((p) => p.role.endsWith("_stop"))) {
            const k = legOfRole(p.role)
            const o = (1 - k) as 0 | 1
            const [ak, ao] = [BigInt(v.amountOf(k)), BigInt(v.amountOf(o))]
            // amount <= A_k × (1 − (f_o + in-flight_o) / A_o) − f_k; with equal legs: Q − f_o − in-flight_o − f_k.
            const room = ak * (ao - BigInt(v.legFilled(o)) - BigInt(v.inFlight(o))) - BigInt(v.legFilled(k)) * ao
            expect(BigInt(p.amount) * ao <= room, "O4: the stop child fits what is not filled or in flight").toBe(true)
          }
        })
      }),
      RUNS
    )
  })

  it("O5: a fill seen again changes nothing; a late ack or fill for a done child revives nothing", () => {
    fc.assert(
      fc.property(scenarioArb({ dup: 4, late: 4 }), (s) => {
        run(s, (v, _input, before, after, commands) => {
          if (v.origin === "lateFill") {
            expect(
              commands.filter((c) => c._tag !== "Emit"),
              "O5: a fill for a done child places, cancels, triggers and finishes nothing"
            ).toEqual([])
            return
          }
          if (v.origin !== "dup" && v.origin !== "late") return
          expect(commands, "O5: no command for a replayed fill or a late ack").toEqual([])
          expect(after, "O5: the state does not change").toEqual(before)
        })
      }),
      RUNS
    )
  })
})
