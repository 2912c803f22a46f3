/** bracket: an entry, then a take-profit and a stop-loss kept sized to what is held. Invariants B1–B3. */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import type { TimeInForce } from "../../src/Domain/Order.ts"
import type { ChildSpec, Command, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
import { core, counts, Params, type State, type Typed, validate } from "../../src/Engine/Bracket.ts"
import { baseSpec as venueSpec, fieldsOf, ok, RUNS } from "./FakeVenue.ts"

const TICK = F.of("0.01")

const baseSpec = (over: Partial<ParentSpec> = {}): ParentSpec => venueSpec({ price: null, ...over })

const decode = Schema.decodeUnknownSync(Params)

const bracket = (wire: Record<string, unknown>, over: Partial<ParentSpec> = {}) => {
  const spec = baseSpec(over)
  return { spec, params: ok(validate(spec, decode(wire))) }
}

/** A long bracket: enter at 0.5, take profit at 0.6, stop out at 0.4 (a stop_market protected at 0.35). */
const LONG = {
  entry: { price: "0.5" },
  take_profit: { price: "0.6" },
  stop_loss: { stop_price: "0.4" }
}

const book = (bid: string | null, ask: string | null, last: string | null = null): MarketView => ({
  bestBid: bid === null ? null : F.of(bid),
  bestAsk: ask === null ? null : F.of(ask),
  last: last === null ? null : F.of(last)
})

const places = (commands: ReadonlyArray<Command>): Array<ChildSpec> =>
  commands.flatMap((c) => (c._tag === "Place" ? [c.spec] : []))

type Role = "entry" | "take_profit" | "stop_loss"

// ---- a tiny deterministic venue: keeps the children the core places and feeds back what the driver would ----

interface VenueChild {
  readonly spec: ChildSpec
  readonly role: Role
  filled: F.Fixed
  done: boolean
  accepted: boolean
  cancelAsked: boolean
}

type Fill = Input & { readonly _tag: "ChildFill" }
type Finish = Command & { readonly _tag: "Finish" }
type Origin = "init" | "fresh" | "dup" | "late" | "other"

/** Called after each step once the venue has carried out its commands. */
type Check = (v: Venue, input: Input | null, before: State | null, commands: ReadonlyArray<Command>) => void

type Act =
  | { readonly t: "market"; readonly bid: number | null; readonly ask: number | null; readonly last: number | null }
  | { readonly t: "fill"; readonly pick: number; readonly pct: number }
  | { readonly t: "cancelAck"; readonly pick: number }
  | { readonly t: "iocEnd"; readonly pick: number }
  | { readonly t: "entryEnd"; readonly status: "canceled" | "expired" }
  | { readonly t: "accept"; readonly pick: number }
  | { readonly t: "dup"; readonly pick: number }
  | { readonly t: "late"; readonly pick: number; readonly fill: boolean }

class Venue {
  now: number
  state: State
  origin: Origin = "init"
  finished: Finish | null = null
  readonly children = new Map<number, VenueChild>()
  readonly fills: Array<Fill> = []
  readonly log: Array<Command> = []
  /** Every input fed to the core and the commands it answered, in order. */
  readonly steps: Array<{ readonly input: Input; readonly commands: ReadonlyArray<Command> }> = []
  private seq = 0

  constructor(
    readonly spec: ParentSpec,
    readonly params: Typed,
    readonly check: Check = () => {}
  ) {
    this.now = spec.createdAt
    const first = core.init(spec, params, 1)
    this.state = first.state
    this.execute(first.commands)
    this.check(this, null, null, first.commands)
  }

  feed(input: Input, origin: Origin = "other"): ReadonlyArray<Command> {
    const before = this.state
    const step = core.step(this.spec, this.params, before, input)
    expect(JSON.parse(JSON.stringify(step.state)), "the state is plain JSON").toEqual(step.state)
    this.state = step.state
    this.origin = origin
    this.steps.push({ input, commands: step.commands })
    this.execute(step.commands)
    this.check(this, input, before, step.commands)
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
            role: command.spec.role as Role,
            filled: F.ZERO,
            done: false,
            accepted: false,
            cancelAsked: false
          })
          break
        case "Cancel": {
          const child = this.children.get(command.child)
          expect(child, "a cancel names a child of this bracket").toBeDefined()
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

  live(role?: Role): Array<VenueChild> {
    return [...this.children.values()].filter((c) => !c.done && (role === undefined || c.role === role))
  }

  filledOf(...roles: ReadonlyArray<Role>): F.Fixed {
    return [...this.children.values()]
      .filter((c) => roles.includes(c.role))
      .reduce((s, c) => F.add(s, c.filled), F.ZERO)
  }

  /** What the live children of a role may still fill. */
  openOf(role: Role): F.Fixed {
    return this.live(role).reduce((s, c) => F.add(s, F.sub(c.spec.amount, c.filled)), F.ZERO)
  }

  /** B1: what the exits must cover, `f(entry) − f(exits)` (with no entry, `Q − f(exits)`). */
  held(): F.Fixed {
    const covered = this.params.entryPrice === null ? this.spec.amount : this.filledOf("entry")
    return F.sub(covered, this.filledOf("take_profit", "stop_loss"))
  }

  triggered(): boolean {
    return this.log.some((c) => c._tag === "Trigger")
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
    this.feed(fill, "fresh")
    if (child.filled >= child.spec.amount && !child.done) this.end(child, "closed")
  }

  market(view: MarketView) {
    if (this.finished === null) this.feed({ _tag: "Market", ts: this.now, view })
  }

  act(a: Act) {
    this.now += 1
    const pick = <A>(items: ReadonlyArray<A>, n: number): A | undefined => items[n % Math.max(1, items.length)]
    switch (a.t) {
      case "market": {
        const at = (n: number | null) => (n === null ? null : F.mul(TICK, F.fromInt(n)))
        this.market({ bestBid: at(a.bid), bestAsk: at(a.ask), last: at(a.last) })
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
      case "entryEnd": {
        const [entry] = this.live("entry")
        if (entry !== undefined) this.end(entry, a.status)
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
        if (a.fill && again !== undefined) this.feed({ ...again, ts: this.now }, "late")
        else this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child }, "late")
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

const pctArb = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 30 }), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 100 }), weight: 1 }
)

const marketArb: fc.Arbitrary<Act> = fc
  .tuple(fc.integer({ min: 1, max: 98 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 99 }), fc.nat(9))
  .map(([bid, spread, last, gap]) => ({
    t: "market",
    bid: gap === 0 ? null : bid,
    ask: gap === 1 ? null : Math.min(99, bid + spread),
    last: gap === 2 ? null : last
  }))

const childActArb: fc.Arbitrary<Act> = fc.oneof(
  { arbitrary: fc.record({ t: fc.constant("fill" as const), pick: fc.nat(), pct: pctArb }), weight: 6 },
  { arbitrary: fc.record({ t: fc.constant("cancelAck" as const), pick: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ t: fc.constant("iocEnd" as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({
      t: fc.constant("entryEnd" as const),
      status: fc.constantFrom<"canceled" | "expired">("canceled", "expired")
    }),
    weight: 1
  },
  { arbitrary: fc.record({ t: fc.constant("accept" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("dup" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("late" as const), pick: fc.nat(), fill: fc.boolean() }), weight: 1 }
)

const actArb: fc.Arbitrary<Act> = fc.oneof({ arbitrary: marketArb, weight: 2 }, { arbitrary: childActArb, weight: 14 })

/** A bracket: the take-profit on the far side of the stop-loss, as validation requires. */
const configArb = fc
  .record({
    side: fc.constantFrom<Side>("buy", "sell"),
    lots: fc.integer({ min: 1, max: 25 }),
    lot: fc.constantFrom("1", "0.5"),
    tif: fc.constantFrom<TimeInForce>("gtc", "gtc", "ioc"),
    entry: fc.option(fc.integer({ min: 1, max: 99 }), { freq: 4 }),
    levels: fc.uniqueArray(fc.integer({ min: 1, max: 99 }), { minLength: 2, maxLength: 2 }),
    stopLimit: fc.option(fc.integer({ min: 1, max: 99 }), { freq: 2 }),
    source: fc.constantFrom("touch", "mid", "last")
  })
  .map((c) => {
    const [lo, hi] = [Math.min(...c.levels), Math.max(...c.levels)]
    const price = (n: number) => F.format(F.mul(TICK, F.fromInt(n)))
    const wire = {
      ...(c.entry === null ? {} : { entry: { price: price(c.entry) } }),
      take_profit: { price: price(c.side === "buy" ? hi : lo) },
      stop_loss: {
        stop_price: price(c.side === "buy" ? lo : hi),
        trigger_source: c.source,
        ...(c.stopLimit === null ? {} : { price: price(c.stopLimit) })
      }
    }
    const lot = F.of(c.lot)
    return bracket(wire, { side: c.side, amount: F.mul(lot, F.fromInt(c.lots)), lot, timeInForce: c.tif })
  })

const scenarioArb = fc.record({
  config: configArb,
  acts: fc.array(actArb, { maxLength: 80, size: "medium" })
})
type Scenario = typeof scenarioArb extends fc.Arbitrary<infer A> ? A : never

const run = (s: Scenario, check: Check): Venue => {
  const v = new Venue(s.config.spec, s.config.params, check)
  for (const a of s.acts) v.act(a)
  v.drain()
  return v
}

describe("bracket", () => {
  it("validates the levels against the side", () => {
    const check = (over: Partial<ParentSpec>, wire: unknown) => fieldsOf(validate(baseSpec(over), decode(wire)))
    expect(check({}, LONG)).toEqual([])
    expect(check({ side: "sell" }, LONG)).toEqual(["params.take_profit.price"])
    expect(check({}, { take_profit: { price: "0.605" }, stop_loss: { stop_price: "0.4", max_slippage: "0" } })).toEqual(
      ["params.take_profit.price", "params.stop_loss.max_slippage"]
    )
    expect(ok(validate(baseSpec(), decode({ ...LONG, stop_loss: { stop_price: "0.4", price: "0.38" } })))).toEqual({
      entryPrice: F.of("0.5"),
      exitSide: "sell",
      takeProfit: F.of("0.6"),
      stop: F.of("0.4"),
      stopChildPrice: F.of("0.38"),
      stopIoc: false,
      source: "touch"
    })
  })

  it("sends only the entry at first; without an entry, a take-profit for the whole amount", () => {
    const { spec, params } = bracket(LONG, { reduceOnly: true, timeInForce: "gtd" })
    expect(core.init(spec, params, 1).commands).toEqual([
      {
        _tag: "Place",
        spec: {
          child: 1,
          side: "buy",
          price: F.of("0.5"),
          amount: F.of("10"),
          timeInForce: "gtd",
          postOnly: false,
          reduceOnly: true,
          role: "entry"
        }
      }
    ])
    const bare = bracket({ take_profit: LONG.take_profit, stop_loss: LONG.stop_loss })
    expect(places(core.init(bare.spec, bare.params, 1).commands)).toEqual([
      {
        child: 1,
        side: "sell",
        price: F.of("0.6"),
        amount: F.of("10"),
        timeInForce: "gtc",
        postOnly: false,
        reduceOnly: true,
        role: "take_profit"
      }
    ])
    expect(counts("entry", params)).toBe(true)
    expect(counts("take_profit", params)).toBe(false)
    expect(counts("take_profit", bare.params)).toBe(true)
  })

  it("B1 example: each entry fill gets its take-profit; the exits add up to what is held", () => {
    const { spec, params } = bracket(LONG)
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("3"))
    v.fill(v.children.get(1)!, F.of("2"))
    expect(places(v.log).map((p) => [p.child, p.role, F.format(p.amount)])).toEqual([
      [1, "entry", "10"],
      [2, "take_profit", "3"],
      [3, "take_profit", "2"]
    ])
    v.fill(v.children.get(2)!, F.of("1"))
    expect(v.openOf("take_profit")).toBe(F.of("4"))
    expect(core.info(v.state)).toEqual({
      entry_filled: "5",
      exits_filled: "1",
      stop_fired: false,
      live_children: [
        { child: 1, role: "entry" },
        { child: 2, role: "take_profit" },
        { child: 3, role: "take_profit" }
      ]
    })
  })

  it("B1 example: the stop-loss pulls the entry and take-profits, then covers what is held once they are out", () => {
    const { spec, params } = bracket(LONG)
    const v = new Venue(spec, params)
    v.market(book("0.3", "0.32"))
    expect(v.triggered(), "nothing is held yet, so the stop waits").toBe(false)
    v.fill(v.children.get(1)!, F.of("4"))
    v.fill(v.children.get(2)!, F.of("1"))
    const fired = v.feed({ _tag: "Market", ts: 5, view: book("0.4", "0.42") })
    expect(fired).toEqual([
      { _tag: "Trigger" },
      {
        _tag: "Emit",
        kind: "managed.triggered",
        payload: { leg: "stop_loss", reference: "0.4", level: "0.4", source: "touch" }
      },
      { _tag: "Cancel", child: 1 },
      { _tag: "Cancel", child: 2 }
    ])
    // Fills that land while the pulls are in flight: the entry adds to what is held, the take-profit takes from it.
    v.fill(v.children.get(1)!, F.of("2"))
    v.fill(v.children.get(2)!, F.of("1"))
    v.end(v.children.get(1)!, "canceled")
    expect(v.live("stop_loss")).toEqual([])
    v.end(v.children.get(2)!, "canceled")
    expect(places(v.log).at(-1)).toEqual({
      child: 3,
      side: "sell",
      price: F.of("0.35"),
      amount: F.of("4"),
      timeInForce: "ioc",
      postOnly: false,
      reduceOnly: true,
      role: "stop_loss"
    })
    v.fill(v.children.get(3)!, F.of("3"))
    v.end(v.children.get(3)!, "expired")
    expect(v.finished).toEqual({ _tag: "Finish", status: "canceled", detail: "the stop-loss ended with 1 still held" })
  })

  it("a short bracket exits with buys and stops out when the ask reaches the stop; a stop_limit rests", () => {
    const { spec, params } = bracket(
      { take_profit: { price: "0.3" }, stop_loss: { stop_price: "0.6", price: "0.62" } },
      { side: "sell", amount: F.of("5") }
    )
    const v = new Venue(spec, params)
    expect(v.children.get(1)?.spec).toMatchObject({ side: "buy", price: F.of("0.3"), role: "take_profit" })
    v.fill(v.children.get(1)!, F.of("2"))
    v.market(book("0.58", "0.59"))
    expect(v.triggered()).toBe(false)
    v.market(book("0.58", "0.6"))
    v.end(v.children.get(1)!, "canceled")
    expect(v.children.get(2)?.spec).toMatchObject({
      side: "buy",
      price: F.of("0.62"),
      amount: F.of("3"),
      timeInForce: "gtc",
      role: "stop_loss"
    })
    v.fill(v.children.get(2)!, F.of("3"))
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "stopped out" })
  })

  it("B2 example: an entry that ends unfilled ends the bracket with no exit ever sent", () => {
    const { spec, params } = bracket(LONG, { timeInForce: "ioc" })
    const v = new Venue(spec, params)
    v.market(book("0.1", "0.12"))
    v.end(v.children.get(1)!, "expired")
    expect(places(v.log).map((p) => p.role)).toEqual(["entry"])
    expect(v.finished).toEqual({
      _tag: "Finish",
      status: "canceled",
      detail: "the entry ended unfilled; no exit was sent"
    })
  })

  it("an entry canceled after a partial fill leaves the exits sized to the filled part", () => {
    const { spec, params } = bracket(LONG)
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("3"))
    v.end(v.children.get(1)!, "canceled")
    expect(v.finished).toBeNull()
    expect(v.openOf("take_profit")).toBe(F.of("3"))
    v.fill(v.children.get(2)!, F.of("3"))
    expect(v.finished).toEqual({ _tag: "Finish", status: "closed", detail: "profit taken" })
  })

  it("ends rejected with the venue's reason when a child is refused, and does nothing more", () => {
    const { spec, params } = bracket(LONG)
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("3"))
    const commands = v.feed({
      _tag: "ChildDone",
      ts: 3,
      child: 2,
      status: "rejected",
      filled: F.ZERO,
      reason: "reduce_only would increase the position"
    })
    expect(commands).toEqual([
      { _tag: "Finish", status: "rejected", detail: "reduce_only would increase the position" }
    ])
    v.fill(v.children.get(1)!, F.of("3"))
    expect(v.steps.at(-1)?.commands).toEqual([])
  })

  it("a fill seen twice and a late ack change nothing", () => {
    const { spec, params } = bracket(LONG)
    const v = new Venue(spec, params)
    v.fill(v.children.get(1)!, F.of("3"))
    const before = v.state
    expect(v.feed({ ...v.fills[0]!, ts: 9 })).toEqual([])
    expect(v.state).toEqual(before)
    v.end(v.children.get(1)!, "canceled")
    const ended = v.state
    expect(v.feed({ _tag: "ChildAccepted", ts: 10, child: 1 })).toEqual([])
    expect(v.feed({ ...v.fills[0]!, ts: 10 })).toEqual([])
    expect(v.state).toEqual(ended)
    expect(places(v.log).map((p) => p.role)).toEqual(["entry", "take_profit"])
  })

  it("B1: while the stop waits the live take-profits add up to f(entry) − f(exits); the stop-loss covers exactly that", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const v = run(s, (v, _input, _before, commands) => {
          expect(core.info(v.state), "the core counts each distinct fill once").toMatchObject({
            entry_filled: F.format(v.filledOf("entry")),
            exits_filled: F.format(v.filledOf("take_profit", "stop_loss"))
          })
          if (!v.triggered()) {
            expect(
              places(v.log).filter((p) => p.role === "stop_loss"),
              "no stop-loss before the stop fires"
            ).toEqual([])
            if (v.finished === null) {
              expect(F.format(v.openOf("take_profit")), "B1: Σ live take-profit = f(entry) − f(exits)").toBe(
                F.format(v.held())
              )
            }
            return
          }
          for (const p of places(commands)) {
            expect(p.role, "after the stop fires only the stop-loss is sent").toBe("stop_loss")
            expect(F.format(p.amount), "B1: the stop-loss is sized f(entry) − f(exits)").toBe(F.format(v.held()))
            expect(
              v.live().filter((c) => c.role !== "stop_loss"),
              "the stop-loss goes once the others are out"
            ).toEqual([])
          }
        })
        if (v.finished !== null) return
        // Once every cancel has landed and every IOC ended, what still rests covers exactly what is held.
        const exits = v.triggered() ? v.openOf("stop_loss") : v.openOf("take_profit")
        expect(F.format(exits), "B1 at rest").toBe(F.format(v.held()))
        if (v.held() <= 0)
          expect(v.live("entry"), "nothing held and not finished: the entry still works").toHaveLength(1)
      }),
      RUNS
    )
  })

  it("B2: an entry that ends unfilled means no exit was ever sent, and the bracket ends canceled", () => {
    fc.assert(
      fc.property(scenarioArb, (s) => {
        const hasEntry = s.config.params.entryPrice !== null
        const v = run(s, (v, _input, _before, commands) => {
          if (hasEntry && v.filledOf("entry") === 0) {
            expect(
              places(commands).filter((p) => p.role !== "entry"),
              "B2: no exit before the entry fills"
            ).toEqual([])
          }
        })
        const entry = v.children.get(1)!
        if (hasEntry && entry.done && entry.filled === 0) {
          expect(places(v.log).map((p) => p.role)).toEqual(["entry"])
          expect(v.finished).toEqual({
            _tag: "Finish",
            status: "canceled",
            detail: "the entry ended unfilled; no exit was sent"
          })
        }
      }),
      RUNS
    )
  })

  it("B3: two brackets on one market never resize each other", () => {
    const twoArb = fc.record({
      configs: fc.tuple(configArb, configArb),
      acts: fc.array(
        fc.oneof(
          { arbitrary: marketArb.map((act) => ({ who: null, act })), weight: 2 },
          { arbitrary: fc.record({ who: fc.constantFrom(0, 1), act: childActArb }), weight: 14 }
        ),
        { maxLength: 100, size: "medium" }
      )
    })
    fc.assert(
      fc.property(twoArb, ({ configs, acts }) => {
        const both = configs.map((c) => new Venue(c.spec, c.params))
        for (const { who, act } of acts) {
          // Market data reaches both; a child event only the bracket that owns the child.
          if (who === null) for (const v of both) v.act(act)
          else both[who]!.act(act)
        }
        for (const v of both) v.drain()
        // Each bracket, fed only its own inputs, answers exactly what it answered beside the other.
        both.forEach((v, i) => {
          const { spec, params } = configs[i]!
          let state = core.init(spec, params, 1).state
          const alone = v.steps.map(({ input }) => {
            const step = core.step(spec, params, state, input)
            state = step.state
            return step.commands
          })
          expect(alone).toEqual(v.steps.map((s) => s.commands))
          expect(state).toEqual(v.state)
        })
        // And the commands of one never name a child of the other that it did not place itself.
        for (const v of both) {
          const own = new Set(places(v.log).map((p) => p.child))
          for (const c of v.log) if (c._tag === "Cancel") expect(own.has(c.child)).toBe(true)
        }
      }),
      RUNS
    )
  })
})

describe("bracket state", () => {
  it("forgets children that ended: 300 entry fills, each profit taken, end with a small state", () => {
    const { spec, params } = bracket(LONG, { amount: F.fromInt(300) })
    const v = new Venue(spec, params)
    let largest = 0
    for (let i = 0; i < 300; i++) {
      v.fill(v.children.get(1)!, F.ONE)
      // The take-profit for that fill fills, and its fill is delivered twice.
      const tp = [...v.children.values()].find((c) => c.spec.role === "take_profit" && !c.done)!
      v.fill(tp, F.ONE)
      v.feed({ ...v.fills.at(-1)!, ts: v.now })
      if (i < 299)
        largest = Math.max(largest, JSON.stringify(v.state.children.filter((c) => c.role !== "entry")).length)
    }
    expect(core.info(v.state)["exits_filled"]).toBe("300")
    expect(v.finished?.status).toBe("closed")
    expect(largest, "ended take-profits are not kept").toBeLessThan(200)
    expect(v.state.children, "nothing is kept once every child ended").toEqual([])
  })
})
