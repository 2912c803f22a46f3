// The bucket order's decision core: its plan on fixed books, and its invariants under random books, fills and ends.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type MarketFees, quadraticFee } from "../../src/Domain/Fees.ts"
import * as F from "../../src/Domain/Fixed.ts"
import type { Side } from "../../src/Domain/Market.ts"
import {
  afterFees,
  bucketPrice,
  core,
  type Member,
  type Params,
  plan,
  type State,
  type Typed,
  validate
} from "../../src/Engine/Bucket.ts"
import type { Command, Input, MemberQuote, ParentSpec } from "../../src/Engine/Core.ts"

const T0 = 1_000_000
const SIM: MarketFees = { taker: F.of("0.07"), maker: F.ZERO, step: F.of("0.01") }
const SIM2: MarketFees = { taker: F.of("0.04"), maker: F.of("0.01"), step: F.of("0.01") }

const spec = (side: Side, amount: string, worst: string): ParentSpec => ({
  id: "mo_1",
  side,
  amount: F.of(amount),
  price: F.of(worst),
  stopPrice: null,
  timeInForce: "gtc",
  postOnly: false,
  reduceOnly: false,
  tick: F.of("0.01"),
  lot: F.ONE,
  createdAt: T0
})

const typed = (s: ParentSpec, members: ReadonlyArray<Member>, params: Params = {}): Typed => {
  const checked = validate(s, { ...params, members })
  if ("errors" in checked) throw new Error(JSON.stringify(checked.errors))
  return checked.params
}

const levels = (...pairs: ReadonlyArray<[string, number]>) =>
  pairs.map(([price, size]) => ({ price: F.of(price), size: F.fromInt(size) }))

const quote = (
  bids: ReturnType<typeof levels>,
  asks: ReturnType<typeof levels>,
  fees: MarketFees = SIM
): MemberQuote => ({ open: true, bids, asks, tick: F.of("0.01"), lot: F.ONE, fees })

const places = (commands: ReadonlyArray<Command>) =>
  commands.flatMap((c) =>
    c._tag === "Place" ? [[c.spec.member, c.spec.side, F.format(c.spec.price), F.format(c.spec.amount)]] : []
  )

describe("bucket core", () => {
  it("checks its params: a worst price inside (0, 1), min_amount inside the amount, a round at most ten a second", () => {
    const s = spec("buy", "10", "0.6")
    expect("params" in validate(s, {})).toBe(true)
    expect(validate({ ...s, price: null }, {})).toEqual({ errors: [expect.objectContaining({ field: "price" })] })
    expect(validate(s, { min_amount: "11" })).toEqual({
      errors: [expect.objectContaining({ field: "params.min_amount" })]
    })
    expect(validate(s, { interval_s: 0.05 })).toEqual({
      errors: [expect.objectContaining({ field: "params.interval_s" })]
    })
  })

  it("takes the cheapest levels after fees across members; a flipped member sells its YES at 1 − bucket price", () => {
    const s = spec("buy", "10", "0.6")
    const members = [
      { market_id: "sim:A", flip: false },
      { market_id: "sim2:a-no", flip: true }
    ]
    const p = typed(s, members)
    // sim asks 0.50 (fee 0.02 a contract at 0.07) → 0.52; sim2's bid 0.50 is bucket 0.50 (fee 0.01 at 0.04) → 0.51.
    const quotes = [
      quote(levels(["0.48", 5]), levels(["0.5", 4], ["0.55", 10])),
      quote(levels(["0.5", 3], ["0.45", 10]), levels(["0.52", 5]), SIM2)
    ]
    expect(afterFees("buy", F.of("0.5"), false, quotes[0]!)).toBe(F.of("0.52"))
    expect(afterFees("buy", F.of("0.5"), true, quotes[1]!)).toBe(F.of("0.51"))
    const { legs } = plan(s, p, quotes, [true, true], F.of("10"))
    // 3 on sim2 at 0.50 (0.51), 4 on sim at 0.50 (0.52), then sim2 at 0.45 (0.56) before sim at 0.55 (0.57).
    expect(legs.map((l) => [l.member, F.format(l.price), F.format(l.amount)])).toEqual([
      [0, "0.5", "4"],
      [1, "0.45", "6"]
    ])
    const first = core.step(s, p, core.init(s, p, 0).state, { _tag: "Quotes", ts: T0, quotes })
    expect(places(first.commands)).toEqual([
      [0, "buy", "0.5", "4"],
      [1, "sell", "0.45", "6"]
    ])
    expect(first.commands).toContainEqual({ _tag: "Trigger" })
  })

  it("stops on its worst price, on empty books, below min_amount, after max_rounds and at max_age_s", () => {
    const members = [
      { market_id: "sim:A", flip: false },
      { market_id: "sim2:B", flip: false }
    ]
    const stopOf = (s: ParentSpec, p: Typed, quotes: ReadonlyArray<MemberQuote>, ts = T0) => {
      const step = core.step(s, p, core.init(s, p, 0).state, { _tag: "Quotes", ts, quotes })
      const finish = step.commands.find((c) => c._tag === "Finish")
      return finish?._tag === "Finish" ? finish.detail : null
    }
    const s = spec("buy", "5", "0.5")
    const p = typed(s, members)
    const dear = quote(levels(["0.5", 5]), levels(["0.55", 5]))
    const empty = quote([], [])
    expect(stopOf(s, p, [dear, dear])).toBe("stopped: worst_price")
    expect(stopOf(s, p, [empty, empty])).toBe("stopped: liquidity")
    expect(stopOf(s, p, [dear, dear], T0 + 300_000)).toBe("stopped: max_age")
    // a sell of 5 with min_amount 5 on books that can hold only 1 more after 4 filled
    const sell = spec("sell", "5", "0.3")
    const sp = typed(sell, members, { min_amount: "2", max_rounds: 1 })
    const cheap = quote(levels(["0.45", 1]), levels(["0.5", 5]))
    expect(stopOf(sell, sp, [cheap, cheap])).toBeNull()
    const once = core.step(sell, sp, core.init(sell, sp, 0).state, { _tag: "Quotes", ts: T0, quotes: [cheap, cheap] })
    // both legs done, nothing filled: the one round allowed is spent
    let state = once.state
    for (const c of once.commands) {
      if (c._tag !== "Place") continue
      state = core.step(sell, sp, state, {
        _tag: "ChildDone",
        ts: T0,
        child: c.spec.child,
        status: "canceled",
        filled: F.ZERO,
        reason: null
      }).state
    }
    const next = core.step(sell, sp, state, { _tag: "Quotes", ts: T0 + 1000, quotes: [cheap, cheap] })
    expect(next.commands).toContainEqual(expect.objectContaining({ _tag: "Finish", detail: "stopped: max_rounds" }))
  })

  it("pulls a leg only after it stayed min_stay_s, and plans the rest again once it is done", () => {
    const s = spec("buy", "20", "0.7")
    const p = typed(
      s,
      [
        { market_id: "sim:A", flip: false },
        { market_id: "sim2:B", flip: false }
      ],
      { min_stay_s: 5 }
    )
    const q = quote(levels(["0.4", 5]), levels(["0.5", 5]))
    const first = core.step(s, p, core.init(s, p, 0).state, { _tag: "Quotes", ts: T0, quotes: [q, q] })
    expect(places(first.commands)).toEqual([
      [0, "buy", "0.5", "10"],
      [1, "buy", "0.5", "10"]
    ])
    const early = core.step(s, p, first.state, { _tag: "Quotes", ts: T0 + 4000, quotes: [q, q] })
    expect(early.commands.filter((c) => c._tag === "Cancel")).toEqual([])
    const late = core.step(s, p, early.state, { _tag: "Quotes", ts: T0 + 5000, quotes: [q, q] })
    expect(late.commands.filter((c) => c._tag === "Cancel")).toEqual([
      { _tag: "Cancel", child: 1 },
      { _tag: "Cancel", child: 2 }
    ])
    expect(places(late.commands)).toEqual([])
  })
})

// ---- invariants under random books, fills and ends ----

const feesArb = fc.record({
  taker: fc.constantFrom("0", "0.04", "0.07", "0.1").map(F.of),
  maker: fc.constantFrom("0", "0.01").map(F.of),
  step: fc.constantFrom("0.01", "0.0001").map(F.of)
})

const ladderArb = fc.array(fc.tuple(fc.integer({ min: 1, max: 99 }), fc.integer({ min: 1, max: 20 })), {
  maxLength: 5
})

const quoteArb = (fees: MarketFees) =>
  fc
    .record({ open: fc.boolean().map((b) => b || true), bids: ladderArb, asks: ladderArb })
    .map(({ open, bids, asks }): MemberQuote => ({
      open,
      // bids best (highest) first, asks best (lowest) first, each price once
      bids: [...new Map(bids.map(([c, n]) => [c, n])).entries()]
        .sort((a, b) => b[0] - a[0])
        .map(([c, n]) => ({ price: (c * 10_000) as F.Fixed, size: F.fromInt(n) })),
      asks: [...new Map(asks.map(([c, n]) => [c, n])).entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([c, n]) => ({ price: (c * 10_000) as F.Fixed, size: F.fromInt(n) })),
      tick: F.of("0.01"),
      lot: F.ONE,
      fees
    }))

type Act =
  | { readonly _tag: "Round"; readonly books: ReadonlyArray<number> }
  | {
      readonly _tag: "Fill"
      readonly pick: number
      readonly share: number
      readonly better: number
      readonly maker: boolean
    }
  | { readonly _tag: "Repeat"; readonly pick: number }
  | { readonly _tag: "End"; readonly pick: number }
  | { readonly _tag: "Wait"; readonly ms: number }

const actArb: fc.Arbitrary<Act> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      _tag: fc.constant("Round" as const),
      books: fc.array(fc.nat(), { minLength: 3, maxLength: 3 })
    })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("Fill" as const),
      pick: fc.nat(),
      share: fc.double({ min: 0.05, max: 1, noNaN: true }),
      better: fc.integer({ min: 0, max: 3 }),
      maker: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Repeat" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("End" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Wait" as const), ms: fc.integer({ min: 0, max: 8000 }) }) }
)

const scenarioArb = fc
  .record({
    side: fc.constantFrom<Side>("buy", "sell"),
    amount: fc.integer({ min: 1, max: 60 }),
    worst: fc.integer({ min: 20, max: 80 }),
    flips: fc.array(fc.boolean(), { minLength: 2, maxLength: 3 }),
    fees: fc.array(feesArb, { minLength: 3, maxLength: 3 }),
    minStay: fc.integer({ min: 0, max: 5 }),
    minAmount: fc.integer({ min: 1, max: 3 }),
    acts: fc.array(actArb, { minLength: 10, maxLength: 80 })
  })
  .chain((s) =>
    fc
      .tuple(...s.fees.map((f) => fc.array(quoteArb(f), { minLength: 4, maxLength: 4 })))
      .map((books) => ({ ...s, books }))
  )

interface LiveLeg {
  readonly child: number
  readonly member: number
  readonly side: Side
  readonly price: F.Fixed
  readonly amount: F.Fixed
  filled: F.Fixed
  fills: Array<string>
}

describe("bucket core invariants", () => {
  it("never more than the amount in fills and open legs; no leg nor fill outside the worst price after fees; nothing sent after the end", () => {
    fc.assert(
      fc.property(scenarioArb, (sc) => {
        const s = spec(sc.side, String(sc.amount), F.format((sc.worst * 10_000) as F.Fixed))
        const members = sc.flips.map((flip, i) => ({ market_id: `v${i}:M`, flip }))
        if (sc.minAmount > sc.amount) return
        const p = typed(s, members, { min_stay_s: sc.minStay, min_amount: String(sc.minAmount) })
        let state: State = core.init(s, p, 0).state
        let ts = T0
        let quotes: ReadonlyArray<MemberQuote> = members.map((_, i) => sc.books[i]![0]!)
        const live: Array<LiveLeg> = []
        const fillIds = new Set<string>()
        let filled = F.ZERO
        let finished = false
        let nextFill = 0

        const apply = (input: Input) => {
          const step = core.step(s, p, state, input)
          state = step.state
          for (const c of step.commands) {
            if (c._tag === "Place") {
              expect(finished, "a leg after the end").toBe(false)
              const member = c.spec.member!
              // inside the worst price after the most a contract can pay in fees there
              const adjusted = afterFees(s.side, c.spec.price, members[member]!.flip, quotes[member]!)
              if (s.side === "buy") expect(adjusted).toBeLessThanOrEqual(s.price!)
              else expect(adjusted).toBeGreaterThanOrEqual(s.price!)
              live.push({
                child: c.spec.child,
                member,
                side: c.spec.side,
                price: c.spec.price,
                amount: c.spec.amount,
                filled: F.ZERO,
                fills: []
              })
            }
            if (c._tag === "Finish") finished = true
          }
          const open = live.reduce((sum, l) => sum + (l.amount - l.filled), 0)
          expect(filled + open, "fills and open legs").toBeLessThanOrEqual(s.amount)
          expect(state.filled).toBe(filled)
        }

        for (const act of sc.acts) {
          switch (act._tag) {
            case "Wait":
              ts += act.ms
              break
            case "Round":
              quotes = members.map((_, i) => sc.books[i]![act.books[i]! % 4]!)
              if (!finished) apply({ _tag: "Quotes", ts, quotes })
              break
            case "Fill": {
              const leg = live[act.pick % Math.max(1, live.length)]
              if (leg === undefined || leg.filled >= leg.amount) break
              const amount = F.max(F.ONE, F.roundTo(((leg.amount - leg.filled) * act.share) as F.Fixed, F.ONE, "down"))
              const tick = F.of("0.01")
              const step = (act.better * tick) as F.Fixed
              const price =
                leg.side === "buy"
                  ? F.max(tick, F.sub(leg.price, step))
                  : F.min(F.sub(F.ONE, tick), F.add(leg.price, step))
              const fees = quotes[leg.member]!.fees
              const fee = quadraticFee(act.maker ? fees.maker : fees.taker, price, amount, fees.step)
              // a fill at the leg's price or better, after its own fee, is inside the worst price in bucket terms
              const inBucket = bucketPrice(price, members[leg.member]!.flip)
              const perContract = F.div(fee, amount, "up")
              if (s.side === "buy") expect(F.add(inBucket, perContract)).toBeLessThanOrEqual(s.price!)
              else expect(F.sub(inBucket, perContract)).toBeGreaterThanOrEqual(s.price!)
              const id = `f${nextFill++}`
              leg.fills.push(id)
              leg.filled = F.add(leg.filled, amount)
              fillIds.add(id)
              filled = F.add(filled, amount)
              apply({ _tag: "ChildFill", ts, child: leg.child, fillId: id, price, amount, fee })
              break
            }
            case "Repeat": {
              const leg = live[act.pick % Math.max(1, live.length)]
              const id = leg?.fills[0]
              if (leg === undefined || id === undefined) break
              apply({ _tag: "ChildFill", ts, child: leg.child, fillId: id, price: leg.price, amount: F.ONE })
              break
            }
            case "End": {
              const at = act.pick % Math.max(1, live.length)
              const leg = live[at]
              if (leg === undefined) break
              live.splice(at, 1)
              apply({ _tag: "ChildDone", ts, child: leg.child, status: "canceled", filled: leg.filled, reason: null })
              break
            }
          }
        }
        // the per-venue sums add up to the whole
        const sums = (core.info(state)["venues"] as Array<{ filled: string }>).reduce((t, v) => t + F.of(v.filled), 0)
        expect(sums).toBe(filled)
      }),
      { numRuns: 300 }
    )
  })
})
