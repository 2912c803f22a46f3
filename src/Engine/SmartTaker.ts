/** smart_taker: takes liquidity in IOC clips every interval, inside a price bound, until filled or expired. */
import {
  Decimal,
  MAX_DELAY_S,
  MAX_WINDOW_S,
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
  type ParentSpec,
  passivePrice,
  touchFor,
  type Watch
} from "./Core.ts"

/** Wire params of a smart_taker. */
export const Params = strict(
  Schema.Struct({
    clip: Schema.optional(Decimal),
    interval_s: Schema.optional(Seconds(MAX_DELAY_S, true)),
    limit: Schema.optional(Decimal),
    max_slippage: Schema.optional(Decimal),
    expires_s: Schema.optional(Seconds(MAX_WINDOW_S, true))
  }),
  "SmartTakerParams"
)
export type Params = typeof Params.Type

/** Checked smart_taker params; `clip` null means the whole amount, `expiresMs` null means no give-up time. */
export interface Typed {
  readonly clip: F.Fixed | null
  readonly intervalMs: number
  readonly limit: F.Fixed | null
  readonly slippage: F.Fixed | null
  readonly expiresMs: number | null
}

/** The smart_taker's whole state, plain JSON. */
export interface State {
  nextChild: number
  filled: F.Fixed
  kids: Array<Kid>
  /** Worst price of every clip; null until the first view when it comes from `max_slippage`. */
  bound: F.Fixed | null
  live: number | null
  clips: number
  /** A clip fell due while the previous one was still live; it goes when that one is done. */
  due: boolean
  clipTimer: string | null
  nextClipAt: number | null
  expiresAt: number | null
  finished: boolean
}

/** The shortest time between two clips: one parent never sends more than ten IOCs a second. */
export const MIN_INTERVAL_MS = 100

const msOf = (field: string, seconds: number | undefined, fallback: number, errors: Array<FieldError>): number => {
  if (seconds === undefined) return fallback
  const ms = Math.round(seconds * 1000)
  if (!Number.isFinite(seconds) || ms <= 0 || Math.abs(seconds * 1000 - ms) > 1e-6) {
    errors.push({ field, message: "must be a positive number of seconds with at most millisecond precision" })
    return fallback
  }
  return ms
}

/** Checks the params: one of `limit` and `max_slippage` is required, the clip is a positive multiple of the lot. */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  let clip: F.Fixed | null = null
  if (params.clip !== undefined) {
    const value = F.parse(params.clip)
    if (value === undefined || value <= 0 || !F.isMultipleOf(value, spec.lot)) {
      errors.push({ field: "params.clip", message: `must be a positive multiple of the lot ${F.format(spec.lot)}` })
    } else clip = value
  }
  const limit = gridPrice(spec.tick, errors, "params.limit", params.limit)
  let slippage: F.Fixed | null = null
  if (params.max_slippage !== undefined) {
    const value = F.parse(params.max_slippage)
    if (value === undefined || value >= F.ONE) {
      errors.push({ field: "params.max_slippage", message: "must be a decimal below 1" })
    } else slippage = value
  }
  if (params.limit === undefined && params.max_slippage === undefined) {
    errors.push({ field: "params.limit", message: "a smart_taker needs params.limit or params.max_slippage" })
  }
  const intervalMs = msOf("params.interval_s", params.interval_s, 1000, errors)
  if (intervalMs < MIN_INTERVAL_MS) {
    errors.push({ field: "params.interval_s", message: `must be at least ${MIN_INTERVAL_MS / 1000} s` })
  }
  const expiresMs = params.expires_s === undefined ? null : msOf("params.expires_s", params.expires_s, 0, errors)
  if (errors.length > 0) return { errors }
  return { params: { clip, intervalMs, limit, slippage, expiresMs } }
}

/** The bound for a touch seen at start: touch ± slippage, the tighter with `limit`, rounded away from aggression. */
export const boundOf = (spec: ParentSpec, params: Typed, touch: F.Fixed | null): F.Fixed | null => {
  const buy = spec.side === "buy"
  let bound = params.limit === null ? null : passivePrice(spec.side, params.limit, spec.tick)
  if (params.slippage !== null) {
    if (touch === null) return null
    const fromTouch = passivePrice(
      spec.side,
      buy ? F.add(touch, params.slippage) : F.sub(touch, params.slippage),
      spec.tick
    )
    bound = bound === null ? fromTouch : buy ? F.min(bound, fromTouch) : F.max(bound, fromTouch)
  }
  return bound
}

const finish = (state: State, commands: Array<Command>, status: "closed" | "canceled" | "rejected", detail: string) => {
  state.finished = true
  state.clipTimer = null
  state.nextClipAt = null
  commands.push({ _tag: "Finish", status, detail })
}

const expire = (spec: ParentSpec, state: State, commands: Array<Command>) =>
  state.filled >= spec.amount
    ? finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
    : finish(
        state,
        commands,
        "canceled",
        `expires_s passed; filled ${F.format(state.filled)} of ${F.format(spec.amount)}`
      )

/** Sends the next clip now, or marks it due when the previous one is still live. */
const sendClip = (spec: ParentSpec, params: Typed, state: State, ts: number, commands: Array<Command>) => {
  if (state.bound === null) return
  if (state.expiresAt !== null && ts >= state.expiresAt) {
    expire(spec, state, commands)
    return
  }
  if (state.live !== null) {
    state.due = true
    return
  }
  state.due = false
  const left = state.kids.reduce((sum, k) => F.sub(sum, openOf(k)), F.sub(spec.amount, state.filled))
  const amount = F.roundTo(F.min(params.clip ?? spec.amount, left), spec.lot, "down")
  if (amount > 0) {
    const child = state.nextChild++
    state.kids.push(newKid(child, amount))
    state.live = child
    state.clips += 1
    if (state.clips === 1) commands.push({ _tag: "Trigger" })
    commands.push({
      _tag: "Place",
      spec: {
        child,
        side: spec.side,
        price: state.bound,
        amount,
        timeInForce: "ioc",
        postOnly: false,
        reduceOnly: spec.reduceOnly,
        role: "clip"
      }
    })
    commands.push({
      _tag: "Emit",
      kind: "managed.slice",
      payload: { child, clip: state.clips, amount: F.format(amount), price: F.format(state.bound) }
    })
  }
  const at = ts + params.intervalMs
  if (state.expiresAt === null || at < state.expiresAt) {
    state.clipTimer = `clip:${state.nextChild}:${at}`
    state.nextClipAt = at
    commands.push({ _tag: "SetTimer", timer: state.clipTimer, at })
  } else {
    state.clipTimer = null
    state.nextClipAt = null
  }
}

const onInput = (spec: ParentSpec, params: Typed, state: State, input: Input, commands: Array<Command>) => {
  // Market data does not end it: the `expire` timer does, at the same moment, after that moment's market data.
  if (
    state.expiresAt !== null &&
    input.ts >= state.expiresAt &&
    input._tag !== "ChildFill" &&
    input._tag !== "Market"
  ) {
    expire(spec, state, commands)
    return
  }
  switch (input._tag) {
    case "Market":
      if (state.bound === null) {
        state.bound = boundOf(spec, params, touchFor(spec.side, input.view))
        sendClip(spec, params, state, input.ts, commands)
      }
      return
    case "Timer":
      if (input.timer === state.clipTimer) {
        state.clipTimer = null
        state.nextClipAt = null
        sendClip(spec, params, state, input.ts, commands)
      }
      return
    case "ChildFill":
      if (state.filled >= spec.amount) finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
      prune(state)
      return
    case "ChildDone": {
      if (input.status === "rejected") {
        finish(state, commands, "rejected", input.reason ?? `clip ${input.child} was refused`)
        return
      }
      markDone(state, input)
      prune(state)
      if (input.child === state.live) {
        state.live = null
        if (state.due) sendClip(spec, params, state, input.ts, commands)
      }
      return
    }
    case "ChildAccepted":
      return
  }
}

/**
 * The smart_taker core. With `limit` alone the first clip goes out in `init`; with `max_slippage` on the first market
 * view that shows the touch. Each clip sets the timer for the next one `interval_s` later; one due while the previous
 * clip is live waits for that clip's end. At `expires_s` after the parent was created it ends `canceled` (or `closed`).
 */
export const core: Core<Typed, State> = {
  init: (spec, params) => {
    const state: State = {
      nextChild: 1,
      filled: F.ZERO,
      kids: [],
      bound: params.slippage === null ? boundOf(spec, params, null) : null,
      live: null,
      clips: 0,
      due: false,
      clipTimer: null,
      nextClipAt: null,
      expiresAt: params.expiresMs === null ? null : spec.createdAt + params.expiresMs,
      finished: false
    }
    const commands: Array<Command> = []
    if (state.expiresAt !== null) commands.push({ _tag: "SetTimer", timer: "expire", at: state.expiresAt })
    sendClip(spec, params, state, spec.createdAt, commands)
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
  /** Only the first view that shows the touch matters (it sets the bound of a `max_slippage` taker). */
  watch: (spec, _params, state): Watch =>
    state.finished || state.bound !== null ? [] : [changedFrom(spec.side === "buy" ? "ask" : "bid", null)],
  info: (state) => ({
    bound: F.formatOrNull(state.bound),
    clips: state.clips,
    live_child: state.live,
    next_clip_at: state.nextClipAt,
    filled: F.format(state.filled)
  })
}
