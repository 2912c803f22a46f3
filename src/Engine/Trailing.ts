/** trailing_stop: a stop whose level follows the best reference one way and never back, then fires like a stop. */
import { Decimal, strict } from "./Children.ts"
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { Side } from "../Domain/Market.ts"
import { type Command, type Core, type ParentSpec, type Watch, changedFrom, passivePrice } from "./Core.ts"
import {
  type ChildTrack,
  type TriggerSource,
  fireCommands,
  fires,
  followChild,
  protectionPrice,
  referenceFor,
  refuseProtection,
  triggerReference
} from "./Stop.ts"
import { priceProblem } from "../Domain/OrderRequest.ts"
import { gridPrice, slippage as slippageOf } from "./Grid.ts"

/** Wire params of trailing_stop; unknown keys are refused. */
export const Params = strict(
  Schema.Struct({
    trail: Schema.optional(Decimal),
    trail_percent: Schema.optional(Decimal),
    trigger_source: Schema.optional(Schema.Literal("touch", "mid", "last").annotations({ default: "touch" })),
    protection: Schema.optional(Decimal),
    max_slippage: Schema.optional(Decimal)
  }),
  "TrailingStopParams"
)
export type Params = typeof Params.Type

/** Parsed trailing_stop params; exactly one of `trail` and `trailPercent` is set. */
export interface Typed {
  readonly source: TriggerSource
  /** Distance in price kept behind the extreme. */
  readonly trail: F.Fixed | null
  /** The same as a fraction of the reference, in (0, 1). */
  readonly trailPercent: F.Fixed | null
  /** The starting level (the parent's `stop_price`), or null to start from the first reference. */
  readonly start: F.Fixed | null
  /** The child's limit when the parent has a `price` (it fires like a stop_limit); null fires like a stop_market. */
  readonly limit: F.Fixed | null
  /** stop_market behaviour: the fixed protection price, else the level ∓ `slippage` at firing. */
  readonly protection: F.Fixed | null
  readonly slippage: F.Fixed
}

/** The level, the running extreme of the reference (highest for a sell, lowest for a buy), and the child. */
export interface State extends ChildTrack {
  readonly level: F.Fixed | null
  readonly extreme: F.Fixed | null
}

/** Checks trailing_stop params against the parent: exactly one of trail and trail_percent, prices on the grid. */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  let trail: F.Fixed | null = null
  let trailPercent: F.Fixed | null = null
  if ((params.trail === undefined) === (params.trail_percent === undefined)) {
    errors.push({ field: "params.trail", message: "give exactly one of trail and trail_percent" })
  } else if (params.trail !== undefined) {
    const value = F.parse(params.trail)
    if (value === undefined || value <= 0 || value >= F.ONE) {
      errors.push({ field: "params.trail", message: `'${params.trail}' must be a price distance above 0 and below 1` })
    } else trail = value
  } else if (params.trail_percent !== undefined) {
    const value = F.parse(params.trail_percent)
    if (value === undefined || value <= 0 || value >= F.ONE) {
      errors.push({
        field: "params.trail_percent",
        message: `'${params.trail_percent}' must be a fraction above 0 and below 1`
      })
    } else trailPercent = value
  }
  if (spec.stopPrice !== null) {
    const problem = priceProblem(spec.stopPrice, spec.tick)
    if (problem !== null) errors.push({ field: "stop_price", message: problem })
  }
  let protection: F.Fixed | null = null
  let slippage: F.Fixed | null = null
  if (spec.price !== null) {
    const problem = priceProblem(spec.price, spec.tick)
    if (problem !== null) errors.push({ field: "price", message: problem })
    refuseProtection(params, "a trailing_stop with a price", errors)
  } else {
    protection = gridPrice(spec.tick, errors, "params.protection", params.protection)
    slippage = slippageOf(errors, "params.max_slippage", params.max_slippage)
  }
  if (errors.length > 0) return { errors }
  return {
    params: {
      source: params.trigger_source ?? "touch",
      trail,
      trailPercent,
      start: spec.stopPrice,
      limit: spec.price === null ? null : passivePrice(spec.side, spec.price, spec.tick),
      protection,
      slippage: slippage ?? F.ZERO
    }
  }
}

/** The level a reference asks for: a sell `ref − trail` (or `ref × (1 − pct)`) rounded down to the tick; a buy `ref + trail` (or `ref × (1 + pct)`) rounded up. */
export const candidateLevel = (side: Side, ref: F.Fixed, params: Typed, tick: F.Fixed): F.Fixed => {
  if (side === "sell") {
    const raw =
      params.trail !== null ? F.sub(ref, params.trail) : F.mul(ref, F.sub(F.ONE, params.trailPercent ?? F.ZERO), "down")
    return F.roundTo(raw, tick, "down")
  }
  const raw =
    params.trail !== null ? F.add(ref, params.trail) : F.mul(ref, F.add(F.ONE, params.trailPercent ?? F.ZERO), "up")
  return F.roundTo(raw, tick, "up")
}

/** Whether `a` is a better level (or extreme) than `b`: higher for a sell, lower for a buy. */
const better = (side: Side, a: F.Fixed, b: F.Fixed): boolean => (side === "sell" ? a > b : a < b)

/** trailing_stop's decision core. */
export const core: Core<Typed, State> = {
  init: (_spec, params) => ({
    state: { level: params.start, extreme: null, fired: false, filled: F.ZERO, seen: [], finished: false },
    commands: []
  }),
  step: (spec, params, state, input) => {
    if (state.finished) return { state, commands: [] }
    if (state.fired) return followChild(spec, state, input) ?? { state, commands: [] }
    if (input._tag !== "Market") return { state, commands: [] }
    const ref = triggerReference(params.source, spec.side, input.view)
    if (ref === null) return { state, commands: [] }
    const extreme = state.extreme === null || better(spec.side, ref, state.extreme) ? ref : state.extreme
    if (state.level !== null && fires(spec.side, ref, state.level)) {
      const price =
        params.limit ?? protectionPrice(spec.side, state.level, params.protection, params.slippage, spec.tick)
      return {
        state: { ...state, extreme, fired: true },
        commands: fireCommands(
          spec,
          { reference: ref, level: state.level, source: params.source },
          { price, ioc: params.limit === null }
        )
      }
    }
    const candidate = candidateLevel(spec.side, ref, params, spec.tick)
    if (state.level !== null && !better(spec.side, candidate, state.level)) {
      return { state: { ...state, extreme }, commands: [] }
    }
    const trailed: Command = {
      _tag: "Emit",
      kind: "managed.trailed",
      payload: { level: F.format(candidate), reference: F.format(ref) }
    }
    return { state: { ...state, extreme, level: candidate }, commands: [trailed] }
  },
  /** Asleep while the reference is no better than the extreme and has not reached the level. */
  watch: (spec, params, state): Watch => {
    if (state.fired || state.finished) return []
    const ref = referenceFor(params.source, spec.side)
    if (state.extreme === null) return [changedFrom(ref, null)]
    const level = state.level ?? (spec.side === "sell" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY)
    return spec.side === "sell"
      ? [{ ref, low: level, high: state.extreme + 1, missing: false }]
      : [{ ref, low: state.extreme - 1, high: level, missing: false }]
  },
  info: (state) => ({
    level: F.formatOrNull(state.level),
    extreme: F.formatOrNull(state.extreme),
    fired: state.fired,
    filled: F.format(state.filled)
  })
}
