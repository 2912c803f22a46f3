/** peg: rests one child at a book reference plus an offset and re-pegs it (cancel, ack, replace) as the reference moves. */
import {
  Decimal,
  MAX_DELAY_S,
  markDone,
  type Kid,
  newKid,
  openOf,
  prune,
  recordFill,
  Seconds,
  strict
} from "./Children.ts"
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { gridPrice } from "./Grid.ts"
import {
  changedFrom,
  type Command,
  copyFrom,
  type Core,
  type Input,
  type MarketView,
  midOf,
  nearFor,
  type ParentSpec,
  passivePrice,
  touchFor,
  type Watch
} from "./Core.ts"

/** Wire params of a peg. */
/** The widest level cap: a million ticks spans the whole price range at the finest tick, so more means no cap. */
export const MAX_LEVEL_CAP = 1_000_000

/** Wire params of a peg. */
export const Params = strict(
  Schema.Struct({
    reference: Schema.optional(Schema.Literal("near", "far", "mid").annotations({ default: "near" })),
    offset: Schema.optional(Decimal.annotations({ default: "0" })),
    min_stay_s: Schema.optional(Seconds(MAX_DELAY_S, false).annotations({ default: 0 })),
    level_cap: Schema.optional(Schema.Int.pipe(Schema.between(0, MAX_LEVEL_CAP))),
    min_price: Schema.optional(Decimal),
    max_price: Schema.optional(Decimal)
  }),
  "PegParams"
)
export type Params = typeof Params.Type

/** Checked peg params; `bound` is the worst price the peg may rest at (a buy's highest, a sell's lowest), if any. */
export interface Typed {
  readonly reference: "near" | "far" | "mid"
  readonly offset: F.Fixed
  readonly minStayMs: number
  readonly levelCap: number | null
  readonly bound: F.Fixed | null
}

/** The peg's whole state, plain JSON. */
export interface State {
  nextChild: number
  filled: F.Fixed
  kids: Array<Kid>
  live: number | null
  /** The live child's price. */
  price: F.Fixed | null
  placedAt: number | null
  /** The live child is being pulled to re-peg; its replacement waits for the cancel's ack. */
  canceling: boolean
  /** The first peg price; `level_cap` counts ticks from it. */
  anchor: F.Fixed | null
  view: MarketView | null
  repegs: number
  finished: boolean
}

/**
 * Checks the params. The bound is `max_price` for a buy and `min_price` for a sell; the parent's `price`, when given,
 * bounds the peg too (the tighter of the two wins). Children rest, so `ioc`/`fok` are refused.
 */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const price = (field: string, text: string | undefined) => gridPrice(spec.tick, errors, field, text)
  const offset = params.offset === undefined ? F.ZERO : F.parse(params.offset)
  if (offset === undefined || offset >= F.ONE)
    errors.push({ field: "params.offset", message: "must be a decimal below 1" })
  const minStayMs = params.min_stay_s === undefined ? 0 : Math.round(params.min_stay_s * 1000)
  if (
    params.min_stay_s !== undefined &&
    (!Number.isFinite(params.min_stay_s) || minStayMs < 0 || Math.abs(params.min_stay_s * 1000 - minStayMs) > 1e-6)
  ) {
    errors.push({
      field: "params.min_stay_s",
      message: "must be a non-negative number of seconds with at most millisecond precision"
    })
  }
  if (params.level_cap !== undefined && params.level_cap < 0) {
    errors.push({ field: "params.level_cap", message: "must be zero or more" })
  }
  const own = spec.side === "buy" ? "max_price" : "min_price"
  const other = spec.side === "buy" ? "min_price" : "max_price"
  if (params[other] !== undefined) {
    errors.push({ field: `params.${other}`, message: `a ${spec.side} peg is bounded by ${own}, not ${other}` })
  }
  const given = price(`params.${own}`, params[own])
  const bounds = [given, spec.price].filter((b): b is F.Fixed => b !== null)
  const bound = bounds.length === 0 ? null : bounds.reduce(spec.side === "buy" ? F.min : F.max)
  if (spec.timeInForce === "ioc" || spec.timeInForce === "fok") {
    errors.push({ field: "time_in_force", message: "a peg's child rests; ioc and fok are not allowed" })
  }
  if (errors.length > 0 || offset === undefined) return { errors }
  return {
    params: { reference: params.reference ?? "near", offset, minStayMs, levelCap: params.level_cap ?? null, bound }
  }
}

/**
 * The price a child should rest at for `view`: the reference plus the offset toward the other side, rounded away from
 * aggression onto the grid, inside the bound and the level cap, and with post_only one tick behind the far side.
 * Null when the reference is missing or no price meets every rule.
 */
export const pegPrice = (spec: ParentSpec, params: Typed, anchor: F.Fixed | null, view: MarketView): F.Fixed | null => {
  const buy = spec.side === "buy"
  const ref =
    params.reference === "near"
      ? nearFor(spec.side, view)
      : params.reference === "far"
        ? touchFor(spec.side, view)
        : midOf(view)
  if (ref === null) return null
  let price = passivePrice(spec.side, buy ? F.add(ref, params.offset) : F.sub(ref, params.offset), spec.tick)
  if (params.bound !== null) price = buy ? F.min(price, params.bound) : F.max(price, params.bound)
  let lo = spec.tick
  let hi = F.sub(F.ONE, spec.tick)
  if (anchor !== null && params.levelCap !== null) {
    const reach = F.mul(spec.tick, F.fromInt(params.levelCap))
    lo = F.max(lo, F.sub(anchor, reach))
    hi = F.min(hi, F.add(anchor, reach))
  }
  const far = touchFor(spec.side, view)
  if (spec.postOnly && far !== null) {
    if (buy) hi = F.min(hi, F.sub(far, spec.tick))
    else lo = F.max(lo, F.add(far, spec.tick))
  }
  price = buy ? F.min(price, hi) : F.max(price, lo)
  if (price < lo || price > hi) return null
  return price
}

/** Places a child for what is left at the current peg price, if the book gives one. */
const tryPlace = (spec: ParentSpec, params: Typed, state: State, ts: number, commands: Array<Command>) => {
  if (state.view === null) return
  const left = state.kids.reduce((sum, k) => F.sub(sum, openOf(k)), F.sub(spec.amount, state.filled))
  const amount = F.roundTo(left, spec.lot, "down")
  if (amount <= 0) return
  const price = pegPrice(spec, params, state.anchor, state.view)
  if (price === null) return
  const child = state.nextChild++
  const first = state.anchor === null
  if (first) {
    state.anchor = price
    commands.push({ _tag: "Trigger" })
  } else state.repegs += 1
  state.kids.push(newKid(child, amount))
  state.live = child
  state.price = price
  state.placedAt = ts
  commands.push({
    _tag: "Place",
    spec: {
      child,
      side: spec.side,
      price,
      amount,
      timeInForce: spec.timeInForce,
      postOnly: spec.postOnly,
      reduceOnly: spec.reduceOnly,
      role: "peg"
    }
  })
  commands.push({
    _tag: "Emit",
    kind: "managed.peg",
    payload: { child, price: F.format(price), amount: F.format(amount), reason: first ? "peg" : "repeg" }
  })
  if (params.minStayMs > 0) commands.push({ _tag: "SetTimer", timer: `stay:${child}`, at: ts + params.minStayMs })
}

/** Pulls the live child when the peg price moved and it has rested `min_stay_s`. */
const maybeRepeg = (spec: ParentSpec, params: Typed, state: State, ts: number, commands: Array<Command>) => {
  if (state.live === null || state.canceling || state.view === null || state.placedAt === null) return
  if (ts < state.placedAt + params.minStayMs) return
  const price = pegPrice(spec, params, state.anchor, state.view)
  if (price === null || price === state.price) return
  state.canceling = true
  commands.push({ _tag: "Cancel", child: state.live })
}

const finish = (state: State, commands: Array<Command>, status: "closed" | "rejected", detail: string) => {
  state.finished = true
  commands.push({ _tag: "Finish", status, detail })
}

const onInput = (spec: ParentSpec, params: Typed, state: State, input: Input, commands: Array<Command>) => {
  switch (input._tag) {
    case "Market":
      // The peg price reads the bid and the ask only; the last trade is not kept, so it does not wake the parent.
      state.view = { bestBid: input.view.bestBid, bestAsk: input.view.bestAsk, last: null }
      if (state.live === null) tryPlace(spec, params, state, input.ts, commands)
      else maybeRepeg(spec, params, state, input.ts, commands)
      return
    case "Timer":
      if (input.timer === `stay:${state.live}`) maybeRepeg(spec, params, state, input.ts, commands)
      return
    case "ChildFill":
      if (state.filled >= spec.amount) finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
      prune(state)
      return
    case "ChildDone": {
      if (input.status === "rejected") {
        finish(state, commands, "rejected", input.reason ?? `child ${input.child} was refused`)
        return
      }
      markDone(state, input)
      prune(state)
      if (input.child === state.live) {
        state.live = null
        state.price = null
        state.placedAt = null
        state.canceling = false
        tryPlace(spec, params, state, input.ts, commands)
      }
      return
    }
    case "ChildAccepted":
      return
  }
}

/**
 * The peg core. The first child goes out on the first market view that gives a price; a re-peg happens when the peg
 * price (not only the raw reference) differs from the child's. A child the venue cancels or expires is replaced at
 * the current peg price, as a re-peg.
 */
export const core: Core<Typed, State> = {
  init: () => ({
    state: {
      nextChild: 1,
      filled: F.ZERO,
      kids: [],
      live: null,
      price: null,
      placedAt: null,
      canceling: false,
      anchor: null,
      view: null,
      repegs: 0,
      finished: false
    },
    commands: []
  }),
  watch: (_spec, _params, state): Watch => {
    if (state.finished) return []
    if (state.view === null) return "all"
    return [changedFrom("bid", state.view.bestBid), changedFrom("ask", state.view.bestAsk)]
  },
  step: (spec, params, prev, input) => {
    const state: State = copyFrom({ ...prev })
    const commands: Array<Command> = []
    if (input._tag === "ChildFill" && !recordFill(state, input)) return { state, commands }
    if (state.finished) return { state, commands }
    onInput(spec, params, state, input, commands)
    return { state, commands }
  },
  info: (state) => ({
    anchor: F.formatOrNull(state.anchor),
    price: F.formatOrNull(state.price),
    live_child: state.live,
    repegs: state.repegs,
    filled: F.format(state.filled)
  })
}
