/** Every core in the registry: G1 (statuses move only along legal transitions) and G2 (filled = Σ distinct fills <= amount). */
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import {
  type ChildSpec,
  type Command,
  type Input,
  type MarketView,
  type ParentSpec,
  wakes
} from "../../src/Engine/Core.ts"
import type { OrderType as OrderKind } from "../../src/Engine/Engine.ts"
import { type ComplexType, REGISTRY } from "../../src/Engine/Registry.ts"

const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 5000 } : { seed: 42, numRuns: 200 }
const TICK = F.of("0.01")
const T0 = 1_000_000

// ---- the parent lifecycle, as a model ----

type Status = "waiting" | "triggered" | "closed" | "canceled" | "rejected"
const TERMINAL: ReadonlySet<Status> = new Set(["closed", "canceled", "rejected"])

/**
 * What a command does to the parent's status: `Trigger` moves waiting → triggered (again: no change), `Finish` moves
 * waiting or triggered to its terminal status, `Place` keeps it. Answers null for a move the lifecycle does not allow:
 * nothing is placed, triggered or finished once the parent is closed, canceled or rejected.
 */
const transition = (status: Status, command: Command): Status | null => {
  switch (command._tag) {
    case "Trigger":
      return TERMINAL.has(status) ? null : "triggered"
    case "Finish":
      return TERMINAL.has(status) ? null : command.status
    case "Place":
      return TERMINAL.has(status) ? null : status
    case "Cancel":
    case "SetTimer":
    case "Emit":
      return status
  }
}

describe("the lifecycle model", () => {
  it("allows waiting → triggered → terminal and waiting → terminal, and nothing after a terminal status", () => {
    const finish = (status: "closed" | "canceled" | "rejected"): Command => ({ _tag: "Finish", status, detail: "" })
    const place: Command = {
      _tag: "Place",
      spec: {
        child: 1,
        side: "buy",
        price: TICK,
        amount: F.ONE,
        timeInForce: "gtc",
        postOnly: false,
        reduceOnly: false,
        role: "x"
      }
    }
    expect(transition("waiting", { _tag: "Trigger" })).toBe("triggered")
    expect(transition("triggered", { _tag: "Trigger" })).toBe("triggered")
    expect(transition("waiting", place)).toBe("waiting")
    expect(transition("waiting", finish("canceled"))).toBe("canceled")
    expect(transition("triggered", finish("closed"))).toBe("closed")
    for (const done of ["closed", "canceled", "rejected"] as const) {
      expect(transition(done, { _tag: "Trigger" })).toBeNull()
      expect(transition(done, place)).toBeNull()
      expect(transition(done, finish("closed"))).toBeNull()
      expect(transition(done, { _tag: "Cancel", child: 1 })).toBe(done)
    }
  })
})

// ---- a tiny deterministic venue that keeps feeding the core after it finishes ----

interface VenueChild {
  readonly spec: ChildSpec
  filled: F.Fixed
  done: boolean
  accepted: boolean
  cancelAsked: boolean
}

type Fill = Input & { readonly _tag: "ChildFill" }

type Act =
  | { readonly t: "market"; readonly bid: number | null; readonly ask: number | null; readonly last: number | null }
  | { readonly t: "fill"; readonly pick: number; readonly pct: number }
  | { readonly t: "dup"; readonly pick: number }
  | { readonly t: "accept"; readonly pick: number }
  | { readonly t: "cancelAck"; readonly pick: number }
  | { readonly t: "venueEnd"; readonly pick: number; readonly status: "canceled" | "expired" | "rejected" }
  | { readonly t: "late"; readonly pick: number }
  | { readonly t: "wait"; readonly ms: number }

type Check = (v: Venue, input: Input | null, commands: ReadonlyArray<Command>) => void

class Venue {
  now = T0
  state: unknown
  readonly children = new Map<number, VenueChild>()
  readonly timers = new Map<string, number>()
  readonly fills: Array<Fill> = []
  readonly log: Array<Command> = []
  private seq = 0

  constructor(
    readonly kind: OrderKind,
    readonly spec: ParentSpec,
    readonly params: unknown,
    seed: number,
    readonly check: Check
  ) {
    const first = kind.core.init(spec, params, seed)
    this.state = first.state
    this.execute(null, first.commands)
  }

  /** Feeds every input, before and after Finish: a core must itself refuse to act once it has finished. */
  feed(input: Input) {
    const step = this.kind.core.step(this.spec, this.params, this.state, input)
    this.state = step.state
    this.execute(input, step.commands)
  }

  private execute(input: Input | null, commands: ReadonlyArray<Command>) {
    for (const command of commands) {
      this.log.push(command)
      if (command._tag === "Place" && !this.children.has(command.spec.child)) {
        this.children.set(command.spec.child, {
          spec: command.spec,
          filled: F.ZERO,
          done: false,
          accepted: false,
          cancelAsked: false
        })
      } else if (command._tag === "Cancel") {
        const child = this.children.get(command.child)
        if (child !== undefined && !child.done) child.cancelAsked = true
      } else if (command._tag === "SetTimer") {
        this.timers.set(command.timer, command.at)
      } else if (command._tag === "Finish") {
        for (const child of this.live()) child.cancelAsked = true
      }
    }
    this.check(this, input, commands)
  }

  live(): Array<VenueChild> {
    return [...this.children.values()].filter((c) => !c.done)
  }

  /** Σ of every distinct fill the venue made. */
  filled(): F.Fixed {
    return [...this.children.values()].reduce((sum, c) => F.add(sum, c.filled), F.ZERO)
  }

  end(child: VenueChild, status: "closed" | "canceled" | "expired" | "rejected") {
    child.done = true
    const reason = status === "rejected" ? "refused by the venue" : null
    this.feed({ _tag: "ChildDone", ts: this.now, child: child.spec.child, status, filled: child.filled, reason })
  }

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
      case "market": {
        const at = (n: number | null) => (n === null ? null : F.mul(TICK, F.fromInt(n)))
        this.feed({ _tag: "Market", ts: this.now, view: { bestBid: at(a.bid), bestAsk: at(a.ask), last: at(a.last) } })
        break
      }
      case "fill": {
        const child = pick(this.live(), a.pick)
        if (child === undefined) break
        const lots = Math.round(F.sub(child.spec.amount, child.filled) / this.spec.lot)
        if (lots <= 0) break
        const amount = F.mul(F.fromInt(Math.max(1, Math.floor((lots * a.pct) / 100))), this.spec.lot)
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
        this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child })
        break
      }
      case "cancelAck": {
        const child = pick(
          this.live().filter((c) => c.cancelAsked || c.spec.timeInForce === "ioc"),
          a.pick
        )
        if (child !== undefined) this.end(child, child.cancelAsked ? "canceled" : "expired")
        break
      }
      case "venueEnd": {
        const child = pick(this.live(), a.pick)
        if (child !== undefined) this.end(child, a.status)
        break
      }
      case "late": {
        const child = pick(
          [...this.children.values()].filter((c) => c.done),
          a.pick
        )
        if (child !== undefined) this.feed({ _tag: "ChildAccepted", ts: this.now, child: child.spec.child })
        break
      }
      case "wait": {
        const until = this.now + a.ms
        while (this.fireNext(until));
        this.now = until
        break
      }
    }
  }
}

// ---- a parent of each type, generated ----

const price = (n: number) => F.format(F.mul(TICK, F.fromInt(n)))
const px = (n: number) => F.mul(TICK, F.fromInt(n))
const sideArb = fc.constantFrom<Side>("buy", "sell")
const tickArb = fc.integer({ min: 1, max: 99 })
const sourceArb = fc.constantFrom("touch", "mid", "last")

interface Setup {
  readonly over: Partial<ParentSpec>
  readonly wire: Readonly<Record<string, unknown>>
}

const ocoLegArb = fc
  .record({
    side: sideArb,
    type: fc.constantFrom("limit", "stop_market", "stop_limit"),
    price: tickArb,
    stop: tickArb,
    source: sourceArb
  })
  .map((l) => ({
    side: l.side,
    type: l.type,
    ...(l.type === "stop_market" ? {} : { price: price(l.price) }),
    ...(l.type === "limit" ? {} : { stop_price: price(l.stop), trigger_source: l.source })
  }))

/** For each type, parents that pass its validation (`lots` is the parent amount in lots). */
const SETUPS: { readonly [K in ComplexType]: (lots: number) => fc.Arbitrary<Setup> } = {
  stop_market: () =>
    fc
      .record({ side: sideArb, stop: tickArb, source: sourceArb })
      .map((c) => ({ over: { side: c.side, stopPrice: px(c.stop) }, wire: { trigger_source: c.source } })),
  stop_limit: () =>
    fc.record({ side: sideArb, stop: tickArb, limit: tickArb, source: sourceArb }).map((c) => ({
      over: { side: c.side, stopPrice: px(c.stop), price: px(c.limit) },
      wire: { trigger_source: c.source }
    })),
  trailing_stop: () =>
    fc
      .record({
        side: sideArb,
        trail: fc.integer({ min: 1, max: 30 }),
        percent: fc.boolean(),
        start: fc.option(tickArb),
        limit: fc.option(tickArb),
        source: sourceArb
      })
      .map((c) => ({
        over: {
          side: c.side,
          stopPrice: c.start === null ? null : px(c.start),
          price: c.limit === null ? null : px(c.limit)
        },
        wire: {
          ...(c.percent ? { trail_percent: price(c.trail) } : { trail: price(c.trail) }),
          trigger_source: c.source
        }
      })),
  iceberg: (lots) =>
    fc
      .record({
        side: sideArb,
        price: tickArb,
        display: fc.integer({ min: 1, max: lots }),
        delay: fc.integer({ min: 0, max: 3 }),
        jitter: fc.integer({ min: 0, max: 2 }),
        follow: fc.boolean()
      })
      .map((c) => ({
        over: { side: c.side, price: px(c.price) },
        wire: { display: String(c.display), reload_delay_s: c.delay, jitter_s: c.jitter, follow: c.follow }
      })),
  oco: () =>
    fc
      .record({ side: sideArb, legs: fc.tuple(ocoLegArb, ocoLegArb) })
      .map((c) => ({ over: { side: c.side }, wire: { legs: c.legs } })),
  bracket: () =>
    fc
      .record({
        side: sideArb,
        entry: fc.option(tickArb, { freq: 4 }),
        levels: fc.uniqueArray(tickArb, { minLength: 2, maxLength: 2 }),
        stopLimit: fc.option(tickArb),
        source: sourceArb
      })
      .map((c) => {
        const [lo, hi] = [Math.min(...c.levels), Math.max(...c.levels)]
        return {
          over: { side: c.side },
          wire: {
            ...(c.entry === null ? {} : { entry: { price: price(c.entry) } }),
            take_profit: { price: price(c.side === "buy" ? hi : lo) },
            stop_loss: {
              stop_price: price(c.side === "buy" ? lo : hi),
              trigger_source: c.source,
              ...(c.stopLimit === null ? {} : { price: price(c.stopLimit) })
            }
          }
        }
      }),
  twap: (lots) =>
    fc
      .record({
        side: sideArb,
        price: tickArb,
        window: fc.integer({ min: 1, max: 30 }),
        slices: fc.integer({ min: 1, max: Math.min(lots, 6) }),
        style: fc.constantFrom("limit", "taker"),
        finish: fc.constantFrom("complete", "stop")
      })
      .map((c) => ({
        over: { side: c.side, price: px(c.price) },
        wire: { window_s: c.window, slices: c.slices, style: c.style, finish: c.finish }
      })),
  peg: () =>
    fc
      .record({
        side: sideArb,
        reference: fc.constantFrom("near", "far", "mid"),
        offset: fc.integer({ min: 0, max: 2 }),
        stay: fc.integer({ min: 0, max: 3 }),
        cap: fc.option(fc.integer({ min: 0, max: 5 })),
        bound: fc.option(tickArb)
      })
      .map((c) => ({
        over: { side: c.side },
        wire: {
          reference: c.reference,
          offset: price(c.offset),
          min_stay_s: c.stay,
          ...(c.cap === null ? {} : { level_cap: c.cap }),
          ...(c.bound === null ? {} : { [c.side === "buy" ? "max_price" : "min_price"]: price(c.bound) })
        }
      })),
  smart_taker: (lots) =>
    fc
      .record({
        side: sideArb,
        clip: fc.option(fc.integer({ min: 1, max: lots })),
        interval: fc.integer({ min: 1, max: 3 }),
        limit: fc.option(tickArb),
        slippage: fc.integer({ min: 1, max: 10 }),
        expires: fc.option(fc.integer({ min: 1, max: 20 }))
      })
      .map((c) => ({
        over: { side: c.side },
        wire: {
          ...(c.clip === null ? {} : { clip: String(c.clip) }),
          interval_s: c.interval,
          ...(c.limit === null ? { max_slippage: price(c.slippage) } : { limit: price(c.limit) }),
          ...(c.expires === null ? {} : { expires_s: c.expires })
        }
      }))
}

const actArb: fc.Arbitrary<Act> = fc.oneof(
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 98 }), fc.integer({ min: 1, max: 5 }), tickArb, fc.nat(9))
      .map(([bid, spread, last, gap]): Act => ({
        t: "market",
        bid: gap === 0 ? null : bid,
        ask: gap === 1 ? null : Math.min(99, bid + spread),
        last: gap === 2 ? null : last
      })),
    weight: 3
  },
  {
    arbitrary: fc.record({
      t: fc.constant("fill" as const),
      pick: fc.nat(),
      pct: fc.oneof(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 100 }))
    }),
    weight: 5
  },
  { arbitrary: fc.record({ t: fc.constant("dup" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("accept" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("cancelAck" as const), pick: fc.nat() }), weight: 3 },
  {
    arbitrary: fc.record({
      t: fc.constant("venueEnd" as const),
      pick: fc.nat(),
      status: fc.constantFrom<"canceled" | "expired" | "rejected">("canceled", "expired", "rejected")
    }),
    weight: 1
  },
  { arbitrary: fc.record({ t: fc.constant("late" as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ t: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 5000 }) }), weight: 3 }
)

const scenarioArb = (type: ComplexType) =>
  fc.integer({ min: 1, max: 20 }).chain((lots) =>
    fc.record({
      lots: fc.constant(lots),
      setup: SETUPS[type](lots),
      seed: fc.integer(),
      acts: fc.array(actArb, { maxLength: 80, size: "medium" })
    })
  )
type Scenario = typeof scenarioArb extends (type: ComplexType) => fc.Arbitrary<infer A> ? A : never

const TYPES = Object.keys(REGISTRY) as Array<ComplexType>

/** The parent of a scenario, its params decoded with the type's schema and checked by its `validate`. */
const setUp = (type: ComplexType, s: Scenario) => {
  const kind = REGISTRY[type]
  const spec: ParentSpec = {
    id: "mo_1",
    side: "buy",
    amount: F.fromInt(s.lots),
    price: null,
    stopPrice: null,
    timeInForce: "gtc",
    postOnly: false,
    reduceOnly: false,
    tick: TICK,
    lot: F.ONE,
    createdAt: T0,
    ...s.setup.over
  }
  const checked = kind.validate(spec, Schema.decodeUnknownSync(kind.params)(s.setup.wire))
  if ("errors" in checked) throw new Error(`${type}: ${JSON.stringify(checked.errors)} for ${JSON.stringify(s.setup)}`)
  return { kind, spec, params: checked.params }
}

/** Runs a type's parent over a scenario; the venue keeps feeding inputs after the core finishes. */
const run = (type: ComplexType, s: Scenario, check: Check): Venue => {
  const { kind, spec, params } = setUp(type, s)
  const v = new Venue(kind, spec, params, s.seed, check)
  for (const a of s.acts) v.act(a)
  // Then everything the venue still owes: cancels land, IOCs end, timers fire; and the market moves once more.
  for (let i = 0; i < 200; i++) {
    const owed = v.live().find((c) => c.cancelAsked || c.spec.timeInForce === "ioc")
    if (owed !== undefined) v.end(owed, owed.cancelAsked ? "canceled" : "expired")
    else if (!v.fireNext(Number.POSITIVE_INFINITY)) break
  }
  v.act({ t: "market", bid: 1, ask: 99, last: 50 })
  v.act({ t: "market", bid: 98, ask: 99, last: 99 })
  return v
}

/** Whether a type's info shows a `filled`. */
const showsFilled = (type: ComplexType): boolean => {
  const [sample] = fc.sample(scenarioArb(type), { seed: 1, numRuns: 1 })
  const { kind, spec, params } = setUp(type, sample!)
  return "filled" in kind.core.info(kind.core.init(spec, params, 1).state)
}

describe("every engine type", () => {
  it("the registry holds every complex type", () => {
    expect([...TYPES].sort()).toEqual(
      ["bracket", "iceberg", "oco", "peg", "smart_taker", "stop_limit", "stop_market", "trailing_stop", "twap"].sort()
    )
  })

  for (const type of TYPES) {
    it(`G1 ${type}: statuses move only along legal transitions; nothing is placed, triggered or finished after Finish`, () => {
      fc.assert(
        fc.property(scenarioArb(type), (s) => {
          let status: Status = "waiting"
          run(type, s, (_v, input, commands) => {
            for (const command of commands) {
              const next = transition(status, command)
              expect(
                next,
                `G1: ${command._tag} while ${status} (on ${input?._tag ?? "init"}): ${JSON.stringify(command)}`
              ).not.toBeNull()
              status = next ?? status
            }
          })
        }),
        RUNS
      )
    })
  }

  const withFilled = TYPES.filter(showsFilled)

  it("G2 covers every type whose info shows filled (oco and bracket count their fills in their own tests)", () => {
    expect([...withFilled].sort()).toEqual([
      "iceberg",
      "peg",
      "smart_taker",
      "stop_limit",
      "stop_market",
      "trailing_stop",
      "twap"
    ])
  })

  for (const type of withFilled) {
    it(`G2 ${type}: info.filled is the sum of the distinct fills fed, and never above the amount`, () => {
      fc.assert(
        fc.property(scenarioArb(type), (s) => {
          run(type, s, (v) => {
            const filled = F.of(String(v.kind.core.info(v.state)["filled"]))
            expect(F.format(filled), "G2: filled = Σ distinct fills").toBe(F.format(v.filled()))
            expect(filled, "G2: filled <= amount").toBeLessThanOrEqual(v.spec.amount)
          })
        }),
        RUNS
      )
    })
  }

  /** A few views to probe with after each input, drawn from the scenario's seed. */
  const probes = (seed: number, n: number): Array<MarketView> => {
    let x = seed >>> 0 || 1
    const next = (m: number) => {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0
      return (x >>> 8) % m
    }
    const at = (k: number) => F.mul(TICK, F.fromInt(k))
    return Array.from({ length: n }, () => {
      const bid = 1 + next(97)
      const gap = next(10)
      return {
        bestBid: gap === 0 ? null : at(bid),
        bestAsk: gap === 1 ? null : at(Math.min(99, bid + 1 + next(4))),
        last: gap === 2 ? null : at(1 + next(99))
      }
    })
  }

  for (const type of TYPES) {
    it(`watch ${type}: a view outside every band the core watches leaves its state as it is and sends nothing`, () => {
      const watch = REGISTRY[type].core.watch
      expect(watch, `${type} declares what it watches`).toBeDefined()
      let asleep = 0
      let lazyChecked = 0
      fc.assert(
        fc.property(scenarioArb(type), (s) => {
          let round = 0
          run(type, s, (v) => {
            const bands = watch!(v.spec, v.params, v.state)
            if (bands === "all") return
            const eager = bands.filter((b) => b.lazy !== true)
            const views = probes(s.seed + ++round, 4)
            // A lazy band: a view there sends nothing, and the next view overrides it (only the last one matters).
            for (const [first, second] of [
              [views[0]!, views[1]!],
              [views[2]!, views[3]!]
            ] as const) {
              if (eager.some((b) => wakes(b, first) || wakes(b, second))) continue
              const seen = v.kind.core.step(v.spec, v.params, v.state, { _tag: "Market", ts: v.now, view: first })
              expect(seen.commands, `${type} acted on a view in a lazy band`).toEqual([])
              const both = v.kind.core.step(v.spec, v.params, seen.state, { _tag: "Market", ts: v.now, view: second })
              const last = v.kind.core.step(v.spec, v.params, v.state, { _tag: "Market", ts: v.now, view: second })
              expect(both, `${type}: a lazy view was not overridden by the next`).toEqual(last)
              if (bands.some((b) => b.lazy === true)) lazyChecked += 1
            }
            for (const view of views) {
              if (bands.some((band) => wakes(band, view))) continue
              asleep += 1
              const step = v.kind.core.step(v.spec, v.params, v.state, { _tag: "Market", ts: v.now, view })
              expect(
                step.commands,
                `${type} asleep in ${JSON.stringify(bands)} acted on ${JSON.stringify(view)}`
              ).toEqual([])
              expect(step.state, `${type} asleep changed its state on ${JSON.stringify(view)}`).toEqual(v.state)
            }
          })
        }),
        RUNS
      )
      // The check must have had something to check.
      expect(asleep).toBeGreaterThan(100)
      if (type === "iceberg") expect(lazyChecked).toBeGreaterThan(100)
    })
  }
})
