/**
 * bucket: a market order on a proposition listed on several venues, filled wherever it is cheapest. Each round reads
 * every member's book, ranks their levels by price in bucket terms after the worst fee a contract can pay there (a
 * flipped member trades its opposite side at 1 − p), and sends one leg per member: what its levels inside the worst
 * price hold, cheapest first across members, plus a share of what no book shows yet, resting at the deepest level
 * taken. A leg rests at least `min_stay_s`; then it is pulled and the rest planned again. The order stops once
 * filled, or on its worst price, on no liquidity, below `min_amount`, after `max_rounds` or `max_age_s`.
 */
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import { worstFeePerContract } from "../Domain/Fees.ts"
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"
import {
  Decimal,
  type Kid,
  markDone,
  MAX_DELAY_S,
  newKid,
  openOf,
  prune,
  recordFill,
  Seconds,
  strict
} from "./Children.ts"
import { type Command, copyFrom, type Core, type Input, type MemberQuote, type ParentSpec } from "./Core.ts"

/** Wire params of a bucket order (all optional). */
export const Params = strict(
  Schema.Struct({
    min_stay_s: Schema.optional(Seconds(3600, false)),
    interval_s: Schema.optional(Seconds(60, true)),
    min_amount: Schema.optional(Decimal),
    max_rounds: Schema.optional(Schema.Int.pipe(Schema.between(1, 10_000))),
    max_age_s: Schema.optional(Seconds(MAX_DELAY_S, true))
  }),
  "BucketParams"
)
export type Params = typeof Params.Type

/** A member as the core needs it: where its market is and whether its YES is the bucket's NO. */
export interface Member {
  readonly market_id: string
  readonly flip: boolean
}

/** Checked params, with the members the driver hands in. */
export interface Typed {
  readonly members: ReadonlyArray<Member>
  readonly minStayMs: number
  readonly intervalMs: number
  readonly minAmount: F.Fixed
  readonly maxRounds: number
  readonly maxAgeMs: number
}

export const DEFAULTS = { min_stay_s: 2, interval_s: 1, max_rounds: 50, max_age_s: 300 } as const
/** The shortest time between two looks at the books: one parent never reads more than ten rounds a second. */
export const MIN_INTERVAL_MS = 100

export type StopReason = "filled" | "worst_price" | "liquidity" | "min_amount" | "max_rounds" | "max_age"

interface Leg extends Kid {
  readonly member: number
  readonly side: Side
  /** The leg's limit in the member's YES prices. */
  readonly price: F.Fixed
  readonly placedAt: number
  pulling: boolean
}

interface MemberSums {
  readonly market_id: string
  readonly flip: boolean
  filled: F.Fixed
  /** Σ price × amount in the member's YES prices. */
  cost: F.Fixed
  fee: F.Fixed
}

/** The bucket order's whole state, plain JSON. */
export interface State {
  readonly side: Side
  nextChild: number
  filled: F.Fixed
  kids: Array<Leg>
  rounds: number
  sums: Array<MemberSums>
  stop: StopReason | null
  finished: boolean
}

const opposite = (side: Side): Side => (side === "buy" ? "sell" : "buy")

/** The side a member trades for a bucket order of `side`. */
export const memberSide = (side: Side, flip: boolean): Side => (flip ? opposite(side) : side)

/** A member's YES price in bucket terms. */
export const bucketPrice = (price: F.Fixed, flip: boolean): F.Fixed => (flip ? F.sub(F.ONE, price) : price)

/**
 * What a contract filled at member price `price` costs (a buy) or yields (a sell) in bucket terms, after the most it
 * can pay in fees there.
 */
export const afterFees = (side: Side, price: F.Fixed, flip: boolean, quote: MemberQuote): F.Fixed => {
  const fee = worstFeePerContract(quote.fees, price, quote.lot)
  const p = bucketPrice(price, flip)
  return side === "buy" ? F.add(p, fee) : F.sub(p, fee)
}

/** Whether `adjusted` is inside the worst price `worst` for a bucket order of `side`. */
export const inside = (side: Side, adjusted: F.Fixed, worst: F.Fixed): boolean =>
  side === "buy" ? adjusted <= worst : adjusted >= worst

export const validate = (
  spec: ParentSpec,
  params: Params & { readonly members?: ReadonlyArray<Member> }
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  if (spec.price === null || spec.price <= 0 || spec.price >= F.ONE) {
    errors.push({
      field: "price",
      message: "a bucket order needs its worst price in bucket terms, above 0 and below 1"
    })
  }
  const minAmount = params.min_amount === undefined ? spec.lot : F.of(params.min_amount)
  if (minAmount <= 0 || minAmount > spec.amount) {
    errors.push({ field: "params.min_amount", message: "must be above 0 and at most the amount" })
  }
  const intervalMs = Math.round((params.interval_s ?? DEFAULTS.interval_s) * 1000)
  if (intervalMs < MIN_INTERVAL_MS) {
    errors.push({ field: "params.interval_s", message: `must be at least ${MIN_INTERVAL_MS / 1000}` })
  }
  if (errors.length > 0) return { errors }
  return {
    params: {
      members: params.members ?? [],
      minStayMs: Math.round((params.min_stay_s ?? DEFAULTS.min_stay_s) * 1000),
      intervalMs,
      minAmount,
      maxRounds: params.max_rounds ?? DEFAULTS.max_rounds,
      maxAgeMs: Math.round((params.max_age_s ?? DEFAULTS.max_age_s) * 1000)
    }
  }
}

/** What a member's levels offer inside the worst price, in bucket-price order across members. */
interface Offer {
  readonly member: number
  readonly price: F.Fixed
  readonly adjusted: F.Fixed
  readonly size: F.Fixed
}

/**
 * The legs of one round: the levels of the members free to trade, inside the worst price, best first after fees
 * (ties to the lower member), taken until `capacity` is used; what is left of `capacity` is shared among the members
 * that had a level inside. One leg per member, at the deepest level taken there. `seen` tells a round that sends
 * nothing why: no level at all (`none`), or none inside the worst price (`outside`).
 */
export const plan = (
  spec: ParentSpec,
  params: Typed,
  quotes: ReadonlyArray<MemberQuote>,
  free: ReadonlyArray<boolean>,
  capacity: F.Fixed
): {
  readonly legs: ReadonlyArray<{ readonly member: number; readonly price: F.Fixed; readonly amount: F.Fixed }>
  readonly seen: "none" | "outside" | "inside"
} => {
  const offers: Array<Offer> = []
  let seenAny = false
  for (const [i, member] of params.members.entries()) {
    const quote = quotes[i]
    if (quote === undefined || !quote.open || free[i] !== true) continue
    const side = memberSide(spec.side, member.flip)
    const levels = side === "buy" ? quote.asks : quote.bids
    for (const level of levels) {
      if (level.size <= 0) continue
      seenAny = true
      const adjusted = afterFees(spec.side, level.price, member.flip, quote)
      if (!inside(spec.side, adjusted, spec.price!)) break
      offers.push({ member: i, price: level.price, adjusted, size: level.size })
    }
  }
  offers.sort((a, b) =>
    a.adjusted === b.adjusted
      ? a.member - b.member
      : spec.side === "buy"
        ? a.adjusted - b.adjusted
        : b.adjusted - a.adjusted
  )
  const byMember = new Map<number, { price: F.Fixed; amount: F.Fixed }>()
  let left = capacity
  for (const offer of offers) {
    if (left <= 0) break
    const take = F.min(left, offer.size)
    const leg = byMember.get(offer.member)
    if (leg === undefined) byMember.set(offer.member, { price: offer.price, amount: take })
    else {
      leg.amount = F.add(leg.amount, take)
      leg.price = offer.price
    }
    left = F.sub(left, take)
  }
  // What the books do not show yet rests on every member that had a level inside, shared out in whole lots (the
  // odd lots to the cheapest), at the deepest level taken there: each leg waits its stay, then the rest is planned
  // again wherever it is cheapest by then.
  const resting = [...new Set(offers.map((o) => o.member))].reverse()
  if (left > 0 && resting.length > 0) {
    for (const [k, member] of resting.entries()) {
      const lot = quotes[member]!.lot
      const share =
        k === resting.length - 1 ? left : F.roundTo(F.div(left, F.fromInt(resting.length - k), "down"), lot, "down")
      const leg = byMember.get(member)!
      leg.amount = F.add(leg.amount, share)
      left = F.sub(left, share)
    }
  }
  const legs = [...byMember.entries()]
    .sort(([a], [b]) => a - b)
    .map(([member, leg]) => {
      const lot = quotes[member]!.lot
      return { member, price: leg.price, amount: F.roundTo(leg.amount, lot, "down") }
    })
    .filter((leg) => leg.amount > 0 && leg.amount >= params.minAmount)
  return { legs, seen: offers.length > 0 ? "inside" : seenAny ? "outside" : "none" }
}

const live = (state: State) => state.kids.filter((k) => !k.done)

/** Amount the live legs may still fill. */
const outstanding = (state: State) => live(state).reduce((sum, k) => F.add(sum, openOf(k)), F.ZERO)

const finish = (state: State, reason: StopReason, spec: ParentSpec, commands: Array<Command>) => {
  if (state.finished) return
  state.stop = reason
  state.finished = true
  commands.push({
    _tag: "Finish",
    status: state.filled >= spec.amount ? "closed" : "canceled",
    detail: `stopped: ${reason}`
  })
}

const round = (spec: ParentSpec, params: Typed, state: State, ts: number, quotes: ReadonlyArray<MemberQuote>) => {
  const commands: Array<Command> = []
  if (ts - spec.createdAt >= params.maxAgeMs) {
    finish(state, "max_age", spec, commands)
    return commands
  }
  // Legs that rested their stay are pulled; the rest is planned again once they are done.
  for (const leg of live(state)) {
    if (!leg.pulling && ts - leg.placedAt >= params.minStayMs) {
      leg.pulling = true
      commands.push({ _tag: "Cancel", child: leg.child })
    }
  }
  const remaining = F.sub(spec.amount, state.filled)
  const capacity = F.sub(remaining, outstanding(state))
  const working = live(state).length > 0
  if (!working && remaining < params.minAmount) {
    finish(state, "min_amount", spec, commands)
    return commands
  }
  if (capacity >= params.minAmount) {
    if (state.rounds >= params.maxRounds) {
      if (!working) finish(state, "max_rounds", spec, commands)
    } else {
      const busy = new Set(live(state).map((k) => k.member))
      const free = params.members.map((_, i) => !busy.has(i))
      const planned = plan(spec, params, quotes, free, capacity)
      if (planned.legs.length > 0) {
        // Working: the record reads `triggered` from its first legs on.
        if (state.rounds === 0) commands.push({ _tag: "Trigger" })
        state.rounds += 1
        for (const leg of planned.legs) {
          const child = state.nextChild++
          const side = memberSide(spec.side, params.members[leg.member]!.flip)
          state.kids.push({
            ...newKid(child, leg.amount),
            member: leg.member,
            side,
            price: leg.price,
            placedAt: ts,
            pulling: false
          })
          commands.push({
            _tag: "Place",
            spec: {
              child,
              member: leg.member,
              side,
              price: leg.price,
              amount: leg.amount,
              timeInForce: "gtc",
              postOnly: false,
              reduceOnly: false,
              role: "leg"
            }
          })
        }
      } else if (!working) {
        finish(state, planned.seen === "none" ? "liquidity" : "worst_price", spec, commands)
        return commands
      }
    }
  }
  if (!state.finished) commands.push({ _tag: "SetTimer", timer: "round", at: ts + params.intervalMs })
  return commands
}

const onInput = (spec: ParentSpec, params: Typed, state: State, input: Input): Array<Command> => {
  switch (input._tag) {
    case "Quotes":
      return round(spec, params, state, input.ts, input.quotes)
    case "ChildFill": {
      const leg = state.kids.find((k) => k.child === input.child)
      if (leg !== undefined) {
        const sums = state.sums[leg.member]!
        sums.filled = F.add(sums.filled, input.amount)
        sums.cost = F.add(sums.cost, F.mul(input.price, input.amount))
        sums.fee = F.add(sums.fee, input.fee ?? F.ZERO)
      }
      const commands: Array<Command> = []
      if (state.filled >= spec.amount) finish(state, "filled", spec, commands)
      return commands
    }
    case "ChildDone": {
      markDone(state, input)
      prune(state)
      const commands: Array<Command> = []
      if (state.filled >= spec.amount) finish(state, "filled", spec, commands)
      // A leg that ended leaves room: the next look at the books comes now.
      else if (live(state).length === 0) commands.push({ _tag: "SetTimer", timer: "round", at: input.ts })
      return commands
    }
    case "Timer":
      if (input.timer === "age") {
        const commands: Array<Command> = []
        finish(state, "max_age", spec, commands)
        return commands
      }
      return []
    default:
      return []
  }
}

export const core: Core<Typed, State> = {
  init: (spec, params) => ({
    state: {
      side: spec.side,
      nextChild: 1,
      filled: F.ZERO,
      kids: [],
      rounds: 0,
      sums: params.members.map((m) => ({
        market_id: m.market_id,
        flip: m.flip,
        filled: F.ZERO,
        cost: F.ZERO,
        fee: F.ZERO
      })),
      stop: null,
      finished: false
    },
    commands: [{ _tag: "SetTimer", timer: "age", at: spec.createdAt + params.maxAgeMs }]
  }),
  step: (spec, params, prev, input) => {
    const state: State = copyFrom({ ...prev })
    if (input._tag === "ChildFill" && !recordFill(state, input)) return { state, commands: [] }
    if (!state.finished) return { state, commands: onInput(spec, params, state, input) }
    // After the end the sums still keep up with the legs being pulled: their late fills and their ends.
    if (input._tag === "ChildFill") onInput(spec, params, state, input)
    if (input._tag === "ChildDone") {
      markDone(state, input)
      prune(state)
    }
    return { state, commands: [] }
  },
  // Market views never reach it: each round reads every member's books itself (the `Quotes` input).
  watch: () => [],
  info: (state) => ({
    rounds: state.rounds,
    stop_reason: state.stop,
    legs: live(state).map((k) => ({
      child: k.child,
      member: k.member,
      side: k.side,
      price: F.format(k.price),
      amount: F.format(k.size),
      filled: F.format(k.filled)
    })),
    venues: state.sums.map((s, member) => {
      const average = s.filled === 0 ? null : F.div(s.cost, s.filled)
      return {
        member,
        market_id: s.market_id,
        flip: s.flip,
        side: memberSide(state.side, s.flip),
        filled: F.format(s.filled),
        average_price: F.formatOrNull(average),
        average_bucket_price: average === null ? null : F.format(bucketPrice(average, s.flip)),
        fee: F.format(s.fee)
      }
    })
  })
}
