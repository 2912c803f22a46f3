/** A tiny deterministic venue for core-level tests: keeps the children a core places and feeds back what the driver would. */
import fc from "fast-check"
import { expect } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import type { ChildSpec, Command, Core, Input, MarketView, ParentSpec } from "../../src/Engine/Core.ts"
export const RUNS = process.env["CROSSBOOK_LONG"] ? { numRuns: 5000 } : { seed: 42, numRuns: 200 }

export interface VenueChild {
  readonly spec: ChildSpec
  readonly placedAt: number
  filled: F.Fixed
  done: boolean
  accepted: boolean
  cancelAsked: boolean
}

export type Act =
  | { readonly t: "fill"; readonly pick: number; readonly pct: number }
  | { readonly t: "dup"; readonly pick: number }
  | { readonly t: "accept"; readonly pick: number }
  | { readonly t: "cancelAck"; readonly pick: number }
  | { readonly t: "venueEnd"; readonly pick: number }
  | { readonly t: "market"; readonly bid: number | null; readonly ask: number | null }
  | { readonly t: "wait"; readonly ms: number }

export type Fill = Input & { readonly _tag: "ChildFill" }
export type Check<S> = (venue: Venue<any, S>, input: Input | null, commands: ReadonlyArray<Command>) => void

export class Venue<P, S> {
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

export const actArb = (maxWaitMs: number): fc.Arbitrary<Act> =>
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
export const checkExposure = (venue: Venue<any, any>) => {
  expect(F.add(venue.filled(), venue.open()), "W2: Σ filled + Σ open <= Q").toBeLessThanOrEqual(venue.spec.amount)
}

/** G2: the core's filled is the sum of the distinct fills, and never above the amount. */
export const checkFills = <S>(venue: Venue<any, S>, info: (state: S) => Readonly<Record<string, unknown>>) => {
  expect(F.of(String(info(venue.state)["filled"])), "G2: filled = Σ distinct fills").toBe(venue.filled())
  expect(venue.filled(), "G2: filled <= amount").toBeLessThanOrEqual(venue.spec.amount)
}

export const baseSpec = (over: Partial<ParentSpec> = {}): ParentSpec => ({
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

export const ok = <T>(
  result: { readonly params: T } | { readonly errors: ReadonlyArray<{ field: string; message: string }> }
): T => {
  if ("errors" in result) throw new Error(JSON.stringify(result.errors))
  return result.params
}

export const fieldsOf = (
  result: { readonly params: unknown } | { readonly errors: ReadonlyArray<{ field: string }> }
) => ("errors" in result ? result.errors.map((e) => e.field) : [])
