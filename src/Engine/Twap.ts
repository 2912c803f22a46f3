/** twap: splits the amount into slices sent at even times across a window, catching up on what earlier slices missed. */
import {
  Decimal,
  MAX_WINDOW_S,
  markDone,
  type Kid as BaseKid,
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
import { type Command, copyFrom, type Core, type Input, type ParentSpec } from "./Core.ts"

/**
 * The shortest time between two slices: one parent never asks for more than ten placements (and their cancels) a
 * second, which keeps the server answering while the largest twap the bounds allow works.
 */
export const MIN_SLICE_SPACING_MS = 100

/** The most slices a twap may ask for (and never more than the amount has lots). */
export const MAX_SLICES = 10_000

/** Wire params of a twap. */
export const Params = strict(
  Schema.Struct({
    window_s: Seconds(MAX_WINDOW_S, true),
    slices: Schema.Int.pipe(Schema.between(1, MAX_SLICES)).annotations({
      description: `Number of child orders, 1 to ${MAX_SLICES} and at most the amount's lots`
    }),
    style: Schema.optional(Schema.Literal("limit", "taker").annotations({ default: "limit" })),
    limit: Schema.optional(Decimal),
    finish: Schema.optional(Schema.Literal("complete", "stop").annotations({ default: "complete" }))
  }),
  "TwapParams"
)
export type Params = typeof Params.Type

/** Checked twap params. Slice sizes are computed when needed ({@link plannedSize}), never kept as a list. */
export interface Typed {
  readonly windowMs: number
  readonly slices: number
  readonly style: "limit" | "taker"
  readonly limit: F.Fixed
  readonly finish: "complete" | "stop"
}

interface Kid extends BaseKid {
  canceling: boolean
}

/** The twap's whole state, plain JSON. */
export interface State {
  nextChild: number
  filled: F.Fixed
  kids: Array<Kid>
  /** Index of the next slice to send; `slices` once all are sent. */
  next: number
  /** Planned size of the slices sent so far. */
  planned: F.Fixed
  /** The current slice waits for the rest of the previous one to be pulled before it goes out at its full size. */
  waiting: boolean
  /** The window ended with `finish: complete`; the last IOC waits for the canceled slices to land. */
  ending: boolean
  finalChild: number | null
  started: boolean
  finished: boolean
}

/** Time of slice `i`: `t0 + ⌊i × window / slices⌋` in ms. */
export const sliceAt = (spec: ParentSpec, params: Typed, i: number): number =>
  spec.createdAt + Math.floor((i * params.windowMs) / params.slices)

/** Planned size of slice `i`: `Q` split exactly in lots, the remainder on the first slices (engine.md, W1). */
export const plannedSize = (spec: ParentSpec, params: Typed, i: number): F.Fixed => {
  const lots = Math.round(spec.amount / spec.lot)
  const base = Math.floor(lots / params.slices)
  return ((base + (i < lots - base * params.slices ? 1 : 0)) * spec.lot) as F.Fixed
}

/** Planned size of slices 0..n−1 together. */
export const plannedUpTo = (spec: ParentSpec, params: Typed, n: number): F.Fixed => {
  const lots = Math.round(spec.amount / spec.lot)
  const base = Math.floor(lots / params.slices)
  return ((n * base + Math.min(n, lots - base * params.slices)) * spec.lot) as F.Fixed
}

/** Time the window ends. */
export const windowEnd = (spec: ParentSpec, params: Typed): number => spec.createdAt + params.windowMs

/** Checks the params: a positive window, at least one lot per slice, a limit on the grid, post_only only with style limit. */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const windowMs = Math.round(params.window_s * 1000)
  if (!Number.isFinite(params.window_s) || windowMs <= 0 || Math.abs(params.window_s * 1000 - windowMs) > 1e-6) {
    errors.push({
      field: "params.window_s",
      message: "must be a positive number of seconds with at most millisecond precision"
    })
  }
  const lots = Math.round(spec.amount / spec.lot)
  if (params.slices < 1) errors.push({ field: "params.slices", message: "must be at least 1" })
  else if (params.slices > lots) {
    errors.push({
      field: "params.slices",
      message: `must be at most ${lots}, so that each slice gets at least one lot`
    })
  } else if (windowMs > 0 && windowMs < params.slices * MIN_SLICE_SPACING_MS) {
    errors.push({
      field: "params.slices",
      message: `must leave at least ${MIN_SLICE_SPACING_MS} ms between slices: at most ${Math.floor(windowMs / MIN_SLICE_SPACING_MS)} over this window`
    })
  }
  const style = params.style ?? "limit"
  if (spec.postOnly && style === "taker") {
    errors.push({ field: "post_only", message: "post_only is valid only with style limit" })
  }
  let limit: F.Fixed | null = spec.price
  if (params.limit !== undefined) {
    limit = gridPrice(spec.tick, errors, "params.limit", params.limit) ?? limit
  } else if (limit === null) {
    errors.push({ field: "params.limit", message: "a twap needs params.limit or price" })
  }
  if (errors.length > 0 || limit === null) return { errors }
  return {
    params: {
      windowMs,
      slices: params.slices,
      style,
      limit,
      finish: params.finish ?? "complete"
    }
  }
}

const openAll = (state: State): F.Fixed => state.kids.reduce((sum, k) => F.add(sum, openOf(k)), F.ZERO)
const liveKids = (state: State): ReadonlyArray<Kid> => state.kids.filter((k) => !k.done)

const place = (
  spec: ParentSpec,
  params: Typed,
  state: State,
  amount: F.Fixed,
  ioc: boolean,
  slice: number,
  commands: Array<Command>
) => {
  const child = state.nextChild++
  state.kids.push({ ...newKid(child, amount), canceling: false })
  if (!state.started) {
    state.started = true
    commands.push({ _tag: "Trigger" })
  }
  commands.push({
    _tag: "Place",
    spec: {
      child,
      side: spec.side,
      price: params.limit,
      amount,
      timeInForce: ioc ? "ioc" : spec.timeInForce,
      postOnly: !ioc && spec.postOnly,
      reduceOnly: spec.reduceOnly,
      role: "slice"
    }
  })
  commands.push({
    _tag: "Emit",
    kind: "managed.slice",
    payload: { child, slice: slice + 1, of: params.slices, amount: F.format(amount), price: F.format(params.limit) }
  })
}

/** Pulls the unfilled rest of every live child not already being pulled. */
const cancelLive = (state: State, commands: Array<Command>) => {
  for (const k of liveKids(state)) {
    if (!k.canceling && k.filled < k.size) {
      k.canceling = true
      commands.push({ _tag: "Cancel", child: k.child })
    }
  }
}

/** Sends the current slice for `planned so far − filled − open`, which is the whole catch-up once nothing is live. */
const placeSlice = (spec: ParentSpec, params: Typed, state: State, commands: Array<Command>) => {
  state.waiting = false
  const target = F.sub(F.sub(state.planned, state.filled), openAll(state))
  const amount = F.roundTo(target, spec.lot, "down")
  if (amount > 0) place(spec, params, state, amount, params.style === "taker", state.next - 1, commands)
}

/**
 * Slice `i`: the previous slice's rest is pulled and the new child is sized to `planned so far − filled`, so the
 * schedule catches up. While a pulled rest may still fill, the new child waits for its cancel to land (as a peg waits
 * to re-peg), so what is filled and open never exceeds the plan (W2).
 */
const sendSlice = (spec: ParentSpec, params: Typed, state: State, i: number, commands: Array<Command>) => {
  cancelLive(state, commands)
  state.planned = plannedUpTo(spec, params, i + 1)
  state.next = i + 1
  if (liveKids(state).length === 0) placeSlice(spec, params, state, commands)
  else state.waiting = true
  commands.push(
    state.next < params.slices
      ? { _tag: "SetTimer", timer: `slice:${state.next}`, at: sliceAt(spec, params, state.next) }
      : { _tag: "SetTimer", timer: "end", at: windowEnd(spec, params) }
  )
}

const finish = (state: State, commands: Array<Command>, status: "closed" | "canceled" | "rejected", detail: string) => {
  state.finished = true
  commands.push({ _tag: "Finish", status, detail })
}

const giveUp = (spec: ParentSpec, state: State, commands: Array<Command>, why: string) =>
  state.filled >= spec.amount
    ? finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
    : finish(state, commands, "canceled", `${why}; filled ${F.format(state.filled)} of ${F.format(spec.amount)}`)

/** The last IOC for what is left, once nothing else is live. */
const sendFinal = (spec: ParentSpec, params: Typed, state: State, commands: Array<Command>) => {
  state.ending = false
  state.waiting = false
  const amount = F.roundTo(F.sub(F.sub(spec.amount, state.filled), openAll(state)), spec.lot, "down")
  if (amount <= 0) {
    giveUp(spec, state, commands, "the window ended")
    return
  }
  state.finalChild = state.nextChild
  place(spec, params, state, amount, true, params.slices, commands)
}

const onInput = (spec: ParentSpec, params: Typed, state: State, input: Input, commands: Array<Command>) => {
  switch (input._tag) {
    case "Timer":
      if (input.timer === `slice:${state.next}` && state.next < params.slices) {
        sendSlice(spec, params, state, state.next, commands)
      } else if (input.timer === "end" && state.next >= params.slices && state.finalChild === null && !state.ending) {
        state.waiting = false
        if (params.finish === "stop") {
          giveUp(spec, state, commands, "the window ended (finish: stop)")
          return
        }
        cancelLive(state, commands)
        state.ending = true
        if (liveKids(state).length === 0) sendFinal(spec, params, state, commands)
      }
      return
    case "ChildFill":
      if (state.filled >= spec.amount) finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
      prune(state)
      return
    case "ChildDone": {
      if (input.status === "rejected") {
        finish(state, commands, "rejected", input.reason ?? `slice ${input.child} was refused`)
        return
      }
      markDone(state, input)
      prune(state)
      if (state.ending && liveKids(state).length === 0) sendFinal(spec, params, state, commands)
      else if (input.child === state.finalChild) giveUp(spec, state, commands, "the window ended")
      else if (state.waiting && liveKids(state).length === 0 && input.ts < windowEnd(spec, params)) {
        placeSlice(spec, params, state, commands)
      }
      return
    }
    case "Market":
    case "ChildAccepted":
      return
  }
}

/**
 * The twap core. Slice 0 goes out in `init`, the others on timers. `finish: stop` ends the parent at the window end
 * (the driver pulls the live slice); `finish: complete` pulls it, waits for the cancel to land, then sends one IOC for
 * what is left and ends `canceled` if that IOC leaves something unfilled.
 */
export const core: Core<Typed, State> = {
  init: (spec, params) => {
    const state: State = {
      nextChild: 1,
      filled: F.ZERO,
      kids: [],
      next: 0,
      planned: F.ZERO,
      waiting: false,
      ending: false,
      finalChild: null,
      started: false,
      finished: false
    }
    const commands: Array<Command> = []
    sendSlice(spec, params, state, 0, commands)
    return { state, commands }
  },
  step: (spec, params, prev, input) => {
    const state: State = copyFrom({ ...prev })
    const commands: Array<Command> = []
    if (input._tag === "ChildFill" && !recordFill(state, input)) return { state, commands }
    if (state.finished) return { state, commands }
    onInput(spec, params, state, input, commands)
    return { state, commands }
  },
  /** A twap runs on its timers; market data never changes it. */
  watch: () => [],
  info: (state) => ({
    slices_sent: state.next,
    planned: F.format(state.planned),
    live_children: state.kids.filter((k) => !k.done).map((k) => k.child),
    filled: F.format(state.filled)
  })
}
