/** stop_market and stop_limit: wait for the market to reach the stop, then send one child for the whole amount. */
import { Decimal, strict } from "./Children.ts"
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"
import { priceProblem } from "../Domain/OrderRequest.ts"
import { gridPrice, slippage } from "./Grid.ts"
import {
  type Command,
  type Core,
  type Input,
  type MarketView,
  type ParentSpec,
  type Reference,
  type Step,
  type Watch,
  atOrAbove,
  atOrBelow,
  midOf,
  passivePrice
} from "./Core.ts"

/** Where a stop reads its reference price (engine.md §2). */
export type TriggerSource = "touch" | "mid" | "last"

/** Wire params of stop_market and stop_limit; unknown keys are refused. */
export const Params = strict(
  Schema.Struct({
    trigger_source: Schema.optional(Schema.Literal("touch", "mid", "last").annotations({ default: "touch" })),
    protection: Schema.optional(Decimal),
    max_slippage: Schema.optional(Decimal.annotations({ default: "0.05" }))
  }),
  "StopParams"
)
export type Params = typeof Params.Type

/** Parsed stop params. `limit` is the child's price, already on the grid and clamped. */
export interface Typed {
  readonly source: TriggerSource
  readonly stop: F.Fixed
  /** stop_market: the protection price; stop_limit: the parent's `price`. */
  readonly limit: F.Fixed
  /** stop_market sends an IOC; stop_limit keeps the parent's time in force. */
  readonly ioc: boolean
  /** The protection price of a stop_market (equal to `limit`); null for a stop_limit. */
  readonly protection: F.Fixed | null
}

/** What a stop follows once it has fired: its one child (number 1). */
export interface ChildTrack {
  readonly fired: boolean
  readonly filled: F.Fixed
  /** Fill ids already counted, so a fill delivered twice counts once. */
  readonly seen: ReadonlyArray<string>
  readonly finished: boolean
}

/** A stop's state: its fixed levels (for `info`) and its child. */
export interface State extends ChildTrack {
  readonly stop: F.Fixed
  readonly protection: F.Fixed | null
}

/** The child number a stop sends. */
export const STOP_CHILD = 1

/**
 * The reference a stop compares with its level, or null when there is none yet.
 * `touch`: a sell watches the best bid, a buy the best ask; `mid`: null unless both sides are quoted;
 * `last`: the view's last trade, else `last` (a last trade the caller remembers).
 */
export const triggerReference = (
  source: TriggerSource,
  side: Side,
  view: MarketView,
  last: F.Fixed | null = null
): F.Fixed | null => {
  switch (source) {
    case "touch":
      return side === "buy" ? view.bestAsk : view.bestBid
    case "mid":
      return midOf(view)
    case "last":
      return view.last ?? last
  }
}

/** Which number of a view a stop on `side` watches (the same as {@link triggerReference} reads). */
export const referenceFor = (source: TriggerSource, side: Side): Reference =>
  source === "touch" ? (side === "buy" ? "ask" : "bid") : source

/** The band a waiting stop sleeps in: it wakes where it fires (a sell at `ref <= level`, a buy at `ref >= level`). */
export const stopBand = (source: TriggerSource, side: Side, level: F.Fixed) =>
  side === "buy" ? atOrAbove(referenceFor(source, side), level) : atOrBelow(referenceFor(source, side), level)

/** Whether a stop on `side` at `level` fires on reference `ref`: a sell at `ref <= level`, a buy at `ref >= level`. */
export const fires = (side: Side, ref: F.Fixed, level: F.Fixed): boolean =>
  side === "buy" ? ref >= level : ref <= level

/**
 * The protection price of a stop_market at `level`: `protection` if given, else `level − slippage` for a sell and
 * `level + slippage` for a buy; rounded onto the grid away from aggression and clamped to [tick, 1 − tick].
 */
export const protectionPrice = (
  side: Side,
  level: F.Fixed,
  protection: F.Fixed | null,
  slippage: F.Fixed,
  tick: F.Fixed
): F.Fixed => passivePrice(side, protection ?? (side === "buy" ? F.add(level, slippage) : F.sub(level, slippage)), tick)

/** Refuses `protection` and `max_slippage` on a stop whose child is a limit at `price` (they would do nothing). */
export const refuseProtection = (params: Params, what: string, errors: Array<FieldError>) => {
  if (params.protection !== undefined) {
    errors.push({
      field: "params.protection",
      message: `${what} sends a limit at price; protection is for stop_market`
    })
  }
  if (params.max_slippage !== undefined) {
    errors.push({
      field: "params.max_slippage",
      message: `${what} sends a limit at price; max_slippage is for stop_market`
    })
  }
}

const checkStop = (spec: ParentSpec, type: string, errors: Array<FieldError>): F.Fixed | null => {
  if (spec.stopPrice === null) {
    errors.push({ field: "stop_price", message: `a ${type} needs a stop_price` })
    return null
  }
  const problem = priceProblem(spec.stopPrice, spec.tick)
  if (problem !== null) errors.push({ field: "stop_price", message: problem })
  return problem === null ? spec.stopPrice : null
}

type Validated = { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> }

/** Checks a stop_market against its parent: `stop_price` required, no `price`, `protection` on the grid, `max_slippage` positive. */
export const validateStopMarket = (spec: ParentSpec, params: Params): Validated => {
  const errors: Array<FieldError> = []
  const stop = checkStop(spec, "stop_market", errors)
  if (spec.price !== null) {
    errors.push({ field: "price", message: "a stop_market takes no price; use params.protection, or a stop_limit" })
  }
  const protection = gridPrice(spec.tick, errors, "params.protection", params.protection)
  const slip = slippage(errors, "params.max_slippage", params.max_slippage)
  if (errors.length > 0 || stop === null || slip === null) return { errors }
  const limit = protectionPrice(spec.side, stop, protection, slip, spec.tick)
  return { params: { source: params.trigger_source ?? "touch", stop, limit, ioc: true, protection: limit } }
}

/** Checks a stop_limit against its parent: `stop_price` and `price` required; `protection`/`max_slippage` refused. */
export const validateStopLimit = (spec: ParentSpec, params: Params): Validated => {
  const errors: Array<FieldError> = []
  const stop = checkStop(spec, "stop_limit", errors)
  if (spec.price === null) errors.push({ field: "price", message: "a stop_limit needs a price" })
  else {
    const problem = priceProblem(spec.price, spec.tick)
    if (problem !== null) errors.push({ field: "price", message: problem })
  }
  refuseProtection(params, "a stop_limit", errors)
  if (errors.length > 0 || stop === null || spec.price === null) return { errors }
  const limit = passivePrice(spec.side, spec.price, spec.tick)
  return { params: { source: params.trigger_source ?? "touch", stop, limit, ioc: false, protection: null } }
}

/**
 * The commands of a stop that fires: `Trigger`, `managed.triggered`, then its one child for the whole amount.
 * `child.price` must already be on the grid and clamped ({@link protectionPrice} or `passivePrice`).
 */
export const fireCommands = (
  spec: ParentSpec,
  trigger: { readonly reference: F.Fixed; readonly level: F.Fixed; readonly source: TriggerSource },
  child: { readonly price: F.Fixed; readonly ioc: boolean }
): ReadonlyArray<Command> => [
  { _tag: "Trigger" },
  {
    _tag: "Emit",
    kind: "managed.triggered",
    payload: { reference: F.format(trigger.reference), level: F.format(trigger.level), source: trigger.source }
  },
  {
    _tag: "Place",
    spec: {
      child: STOP_CHILD,
      side: spec.side,
      price: child.price,
      amount: spec.amount,
      timeInForce: child.ioc ? "ioc" : spec.timeInForce,
      postOnly: false,
      reduceOnly: spec.reduceOnly,
      role: "stop"
    }
  }
]

/**
 * Follows a fired stop's child: fills add up once per fill id; its end finishes the parent (`closed` when all
 * filled, `rejected` with the venue's reason, else `canceled`). Answers null for inputs it does not handle.
 */
export const followChild = <S extends ChildTrack>(spec: ParentSpec, state: S, input: Input): Step<S> | null => {
  if (!state.fired || state.finished) return null
  if (input._tag === "ChildFill" && input.child === STOP_CHILD) {
    if (state.seen.includes(input.fillId)) return { state, commands: [] }
    return {
      state: { ...state, filled: F.add(state.filled, input.amount), seen: [...state.seen, input.fillId] },
      commands: []
    }
  }
  if (input._tag === "ChildDone" && input.child === STOP_CHILD) {
    const filled = F.max(state.filled, input.filled)
    const done: S = { ...state, filled, finished: true }
    if (input.status === "rejected") {
      return {
        state: done,
        commands: [{ _tag: "Finish", status: "rejected", detail: input.reason ?? "the stop's child was refused" }]
      }
    }
    if (filled >= spec.amount)
      return { state: done, commands: [{ _tag: "Finish", status: "closed", detail: "filled" }] }
    const detail = `the stop's child ended with ${F.format(filled)} of ${F.format(spec.amount)} filled`
    return { state: done, commands: [{ _tag: "Finish", status: "canceled", detail }] }
  }
  return null
}

const stopCore: Core<Typed, State> = {
  init: (_spec, params) => ({
    state: {
      stop: params.stop,
      protection: params.protection,
      fired: false,
      filled: F.ZERO,
      seen: [],
      finished: false
    },
    commands: []
  }),
  step: (spec, params, state, input) => {
    if (state.finished) return { state, commands: [] }
    if (state.fired) return followChild(spec, state, input) ?? { state, commands: [] }
    if (input._tag !== "Market") return { state, commands: [] }
    const ref = triggerReference(params.source, spec.side, input.view)
    if (ref === null || !fires(spec.side, ref, params.stop)) return { state, commands: [] }
    return {
      state: { ...state, fired: true },
      commands: fireCommands(
        spec,
        { reference: ref, level: params.stop, source: params.source },
        { price: params.limit, ioc: params.ioc }
      )
    }
  },
  watch: (spec, params, state): Watch =>
    state.finished || state.fired ? [] : [stopBand(params.source, spec.side, params.stop)],
  info: (state) => ({
    stop_price: F.format(state.stop),
    protection: F.formatOrNull(state.protection),
    fired: state.fired,
    filled: F.format(state.filled)
  })
}

/** stop_market: fires once, then an IOC limit at the protection price for the whole amount. Params: {@link validateStopMarket}. */
export const stopMarket: Core<Typed, State> = stopCore

/** stop_limit: fires once, then a limit at the parent's price with its time in force. Params: {@link validateStopLimit}. */
export const stopLimit: Core<Typed, State> = stopCore
