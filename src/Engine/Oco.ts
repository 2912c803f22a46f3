/** oco: two legs (limits rest, stops wait); a fill on one shrinks the other by the same fraction, a full fill cancels it. */
import { Decimal, strict } from "./Children.ts"
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { gridPrice, slippage as slippageOf } from "./Grid.ts"
import type { Side } from "../Domain/Market.ts"
import type { TimeInForce } from "../Domain/Order.ts"
import {
  type Command,
  copyFrom,
  type Core,
  type MarketView,
  type ParentSpec,
  passivePrice,
  type Watch
} from "./Core.ts"
import { fires, stopBand, triggerReference } from "./Stop.ts"

/** One oco leg on the wire; unknown keys are refused. */
export const Leg = strict(
  Schema.Struct({
    side: Schema.Literal("buy", "sell"),
    type: Schema.Literal("limit", "stop_market", "stop_limit"),
    price: Schema.optional(Decimal),
    market_id: Schema.optional(Schema.String),
    amount: Schema.optional(Decimal),
    stop_price: Schema.optional(Decimal),
    reduce_only: Schema.optional(Schema.Boolean),
    post_only: Schema.optional(Schema.Boolean),
    trigger_source: Schema.optional(Schema.Literal("touch", "mid", "last")),
    protection: Schema.optional(Decimal),
    max_slippage: Schema.optional(Decimal)
  }),
  "OcoLeg"
)

/** Wire params of an oco: exactly two legs (checked with the parent, so the count is named in the message). */
export const Params = strict(Schema.Struct({ legs: Schema.Array(Leg) }), "OcoParams")
export type Params = typeof Params.Type

/** A leg as the core keeps it. A stop leg's `price` is its child's limit: the protection, or the stop_limit price. */
export interface LegSpec {
  readonly side: Side
  readonly kind: "limit" | "stop"
  readonly amount: F.Fixed
  readonly price: F.Fixed
  readonly stopPrice: F.Fixed | null
  readonly source: "touch" | "mid" | "last"
  readonly ioc: boolean
  /** A resting leg's time in force: the parent's. */
  readonly timeInForce: TimeInForce
  readonly reduceOnly: boolean
  readonly postOnly: boolean
}

export interface Typed {
  readonly legs: readonly [LegSpec, LegSpec]
}

interface LegState {
  filled: F.Fixed
  /** The leg's live child, if any. */
  child: number | null
  fired: boolean
  /** Its live child was pulled to be sent again at a smaller size. */
  resizing: boolean
  /** A stop that fired waits for the other leg's cancel to land before it sends. */
  waiting: boolean
  /** The leg will send nothing more. */
  done: boolean
  /** Fill ids seen on the live child; a fill of an ended child no longer counts, so only these need remembering. */
  seen: Array<string>
}

export interface State {
  readonly legs: [LegState, LegState]
  nextChild: number
  overfill: boolean
  finished: boolean
}

/** Parses the legs; a leg takes the parent's market and amount where it gives none. */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  if (params.legs.length !== 2) {
    return { errors: [{ field: "params.legs", message: `oco takes exactly two legs, not ${params.legs.length}` }] }
  }
  const onGrid = (field: string, text: string | undefined) => gridPrice(spec.tick, errors, field, text)
  const legs = params.legs.map((leg, i): LegSpec | undefined => {
    const at = `params.legs.${i}`
    if (leg.market_id !== undefined) {
      errors.push({ field: `${at}.market_id`, message: "legs trade the parent's market in this version" })
    }
    const amount = leg.amount === undefined ? spec.amount : F.parse(leg.amount)
    if (amount === undefined || amount <= 0 || !F.isMultipleOf(amount, spec.lot)) {
      errors.push({ field: `${at}.amount`, message: `must be a positive multiple of the lot ${F.format(spec.lot)}` })
    }
    if (leg.post_only === true && leg.type !== "limit") {
      errors.push({ field: `${at}.post_only`, message: "post_only only on a leg that rests (limit)" })
    }
    const reduceOnly = leg.reduce_only ?? spec.reduceOnly
    if (leg.type === "limit") {
      const price = onGrid(`${at}.price`, leg.price)
      if (leg.price === undefined) errors.push({ field: `${at}.price`, message: "a limit leg needs a price" })
      if (price === null || amount === undefined) return undefined
      return {
        side: leg.side,
        kind: "limit",
        amount,
        price,
        stopPrice: null,
        source: "touch",
        ioc: false,
        timeInForce: spec.timeInForce,
        reduceOnly,
        postOnly: leg.post_only ?? false
      }
    }
    const stop = onGrid(`${at}.stop_price`, leg.stop_price)
    if (leg.stop_price === undefined)
      errors.push({ field: `${at}.stop_price`, message: "a stop leg needs a stop_price" })
    let price: F.Fixed | null = null
    if (leg.type === "stop_limit") {
      price = onGrid(`${at}.price`, leg.price)
      if (leg.price === undefined) errors.push({ field: `${at}.price`, message: "a stop_limit leg needs a price" })
    } else if (stop !== null) {
      const slip = slippageOf(errors, `${at}.max_slippage`, leg.max_slippage)
      const protection = leg.protection === undefined ? undefined : onGrid(`${at}.protection`, leg.protection)
      price =
        protection ??
        (slip === null
          ? null
          : passivePrice(leg.side, leg.side === "buy" ? F.add(stop, slip) : F.sub(stop, slip), spec.tick))
    }
    if (stop === null || price === null || amount === undefined) return undefined
    return {
      side: leg.side,
      kind: "stop",
      amount,
      price,
      stopPrice: stop,
      source: leg.trigger_source ?? "touch",
      ioc: leg.type === "stop_market",
      timeInForce: spec.timeInForce,
      reduceOnly,
      postOnly: false
    }
  })
  if (errors.length > 0 || legs[0] === undefined || legs[1] === undefined) return { errors }
  return { params: { legs: [legs[0], legs[1]] } }
}

const newLeg = (): LegState => ({
  filled: F.ZERO,
  child: null,
  fired: false,
  resizing: false,
  waiting: false,
  done: false,
  seen: []
})

/**
 * What leg `i` may still fill so that the two legs' fill fractions add up to at most 1 (O1, O2, O4):
 * `A_i × (1 − f_o / A_o)`, computed exactly and rounded down to the lot, less what leg `i` filled.
 */
const allowance = (legs: Typed["legs"], state: State, i: 0 | 1, lot: F.Fixed): F.Fixed => {
  const o = (1 - i) as 0 | 1
  const leftOther = F.max(F.ZERO, F.sub(legs[o].amount, state.legs[o].filled))
  const exact = Number((BigInt(legs[i].amount) * BigInt(leftOther)) / BigInt(legs[o].amount)) as F.Fixed
  const room = F.roundTo(exact, lot, "down")
  return F.max(F.ZERO, F.sub(room, state.legs[i].filled))
}

/** Whether the two legs' fill fractions add up to more than 1, compared exactly (no rounding). */
const overfilled = (legs: Typed["legs"], state: State): boolean =>
  BigInt(state.legs[0].filled) * BigInt(legs[1].amount) + BigInt(state.legs[1].filled) * BigInt(legs[0].amount) >
  BigInt(legs[0].amount) * BigInt(legs[1].amount)

const place = (legs: Typed["legs"], state: State, i: 0 | 1, amount: F.Fixed, commands: Array<Command>) => {
  const leg = legs[i]
  const child = state.nextChild++
  state.legs[i].child = child
  state.legs[i].seen = []
  commands.push({
    _tag: "Place",
    spec: {
      child,
      side: leg.side,
      price: leg.price,
      amount,
      timeInForce: leg.ioc ? "ioc" : leg.timeInForce,
      postOnly: leg.postOnly,
      reduceOnly: leg.reduceOnly,
      role: leg.kind === "limit" ? `leg${i + 1}` : `leg${i + 1}_stop`
    }
  })
}

/** Sends leg `i` what it may still fill, or ends it when nothing is left. */
const send = (legs: Typed["legs"], state: State, i: 0 | 1, lot: F.Fixed, commands: Array<Command>) => {
  const size = allowance(legs, state, i, lot)
  if (size > 0) place(legs, state, i, size, commands)
  else state.legs[i].done = true
}

const legOf = (state: State, child: number): 0 | 1 | undefined =>
  state.legs[0].child === child ? 0 : state.legs[1].child === child ? 1 : undefined

/** The other leg stops: a live child is pulled, an unfired stop is dropped. */
const stopOther = (state: State, o: 0 | 1, commands: Array<Command>) => {
  const other = state.legs[o]
  other.done = true
  other.resizing = false
  if (other.child !== null) commands.push({ _tag: "Cancel", child: other.child })
}

/** A stop leg that fires pulls the resting leg first; its child goes out once that cancel has landed. */
const fireIfTouched = (
  legs: Typed["legs"],
  state: State,
  i: 0 | 1,
  view: MarketView,
  lot: F.Fixed,
  commands: Array<Command>
) => {
  const spec = legs[i]
  const leg = state.legs[i]
  if (spec.kind !== "stop" || leg.fired || leg.done || spec.stopPrice === null) return
  const ref = triggerReference(spec.source, spec.side, view)
  if (ref === null || !fires(spec.side, ref, spec.stopPrice)) return
  leg.fired = true
  commands.push({ _tag: "Trigger" })
  commands.push({
    _tag: "Emit",
    kind: "managed.triggered",
    payload: { leg: i + 1, reference: F.format(ref), level: F.format(spec.stopPrice), source: spec.source }
  })
  const o = (1 - i) as 0 | 1
  const pending = state.legs[o].child !== null
  stopOther(state, o, commands)
  if (pending) leg.waiting = true
  else send(legs, state, i, lot, commands)
}

export const core: Core<Typed, State> = {
  init: (_spec, params) => {
    const state: State = { legs: [newLeg(), newLeg()], nextChild: 1, overfill: false, finished: false }
    const commands: Array<Command> = []
    for (const i of [0, 1] as const) {
      if (params.legs[i].kind === "limit") place(params.legs, state, i, params.legs[i].amount, commands)
    }
    return { state, commands }
  },
  /** Only a stop leg that has not fired watches the market: it wakes where it fires. */
  watch: (_spec, params, state): Watch => {
    if (state.finished) return []
    const bands = []
    for (const i of [0, 1] as const) {
      const spec = params.legs[i]
      const leg = state.legs[i]
      if (spec.kind === "stop" && !leg.fired && !leg.done && spec.stopPrice !== null) {
        bands.push(stopBand(spec.source, spec.side, spec.stopPrice))
      }
    }
    return bands
  },
  step: (spec, params, prev, input) => {
    const state: State = copyFrom({ ...prev })
    const commands: Array<Command> = []
    if (state.finished) return { state, commands }
    const legs = params.legs
    switch (input._tag) {
      case "Market":
        for (const i of [0, 1] as const) fireIfTouched(legs, state, i, input.view, spec.lot, commands)
        break
      case "ChildFill": {
        const i = legOf(state, input.child)
        if (i === undefined || state.legs[i].seen.includes(input.fillId)) break
        state.legs[i].seen.push(input.fillId)
        const o = (1 - i) as 0 | 1
        state.legs[i].filled = F.add(state.legs[i].filled, input.amount)
        if (overfilled(legs, state) && !state.overfill) {
          state.overfill = true
          commands.push({
            _tag: "Emit",
            kind: "managed.overfill",
            payload: { leg1_filled: F.format(state.legs[0].filled), leg2_filled: F.format(state.legs[1].filled) }
          })
        }
        const other = state.legs[o]
        if (state.legs[i].filled >= legs[i].amount) {
          state.legs[i].done = true
          stopOther(state, o, commands)
        } else if (other.child !== null && !other.done && !other.resizing && legs[o].kind === "limit") {
          other.resizing = true
          commands.push({ _tag: "Cancel", child: other.child })
        }
        break
      }
      case "ChildDone": {
        const i = legOf(state, input.child)
        if (i === undefined) break
        const leg = state.legs[i]
        leg.child = null
        leg.seen = []
        if (input.status === "rejected") {
          state.finished = true
          commands.push({ _tag: "Finish", status: "rejected", detail: input.reason ?? `leg ${i + 1} was refused` })
          return { state, commands }
        }
        if (leg.resizing && !leg.done) {
          leg.resizing = false
          send(legs, state, i, spec.lot, commands)
        } else if (!leg.waiting) {
          leg.done = true
        }
        const o = (1 - i) as 0 | 1
        if (state.legs[o].waiting) {
          state.legs[o].waiting = false
          send(legs, state, o, spec.lot, commands)
        }
        break
      }
      case "ChildAccepted":
      case "Timer":
        break
    }
    if (state.legs.every((l) => l.done && l.child === null && !l.waiting)) {
      state.finished = true
      const full = [0, 1].find((i) => state.legs[i]!.filled >= legs[i as 0 | 1].amount)
      commands.push(
        full === undefined
          ? { _tag: "Finish", status: "canceled", detail: "both legs ended without a full fill" }
          : { _tag: "Finish", status: "closed", detail: `leg ${full + 1} filled` }
      )
    }
    return { state, commands }
  },
  info: (state) => ({
    legs: state.legs.map((l) => ({ filled: F.format(l.filled), fired: l.fired, live_child: l.child, done: l.done })),
    overfill: state.overfill
  })
}
