/** iceberg: shows one slice of `display` at a time and reloads the next after a seeded delay once it fills. */
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
import { SeededRandom } from "../Domain/Random.ts"
import {
  changedFrom,
  type Command,
  copyFrom,
  type Core,
  type Input,
  lazily,
  nearFor,
  type ParentSpec,
  passivePrice,
  type Watch
} from "./Core.ts"

/** Wire params of an iceberg. */
export const Params = strict(
  Schema.Struct({
    display: Decimal,
    reload_delay_s: Schema.optional(Seconds(MAX_DELAY_S, false).annotations({ default: 0 })),
    jitter_s: Schema.optional(Seconds(MAX_DELAY_S, false).annotations({ default: 0 })),
    follow: Schema.optional(Schema.Boolean.annotations({ default: false }))
  }),
  "IcebergParams"
)
export type Params = typeof Params.Type

/** Checked iceberg params; `price` is the parent's price, the worst a slice may rest at. */
export interface Typed {
  readonly display: F.Fixed
  readonly price: F.Fixed
  readonly reloadDelayMs: number
  readonly jitterMs: number
  readonly follow: boolean
}

/** The iceberg's whole state, plain JSON. */
export interface State {
  nextChild: number
  filled: F.Fixed
  kids: Array<Kid>
  live: number | null
  reloadTimer: string | null
  reloadAt: number | null
  reloads: number
  /** With `follow`: the own-side touch last seen (null when that side was empty or none was seen yet). */
  near: F.Fixed | null
  rng: [number, number, number, number]
  started: boolean
  finished: boolean
}

const msOf = (field: string, seconds: number | undefined, errors: Array<FieldError>): number => {
  if (seconds === undefined) return 0
  const ms = Math.round(seconds * 1000)
  if (!Number.isFinite(seconds) || seconds < 0 || Math.abs(seconds * 1000 - ms) > 1e-6) {
    errors.push({ field, message: "must be a non-negative number of seconds with at most millisecond precision" })
    return 0
  }
  return ms
}

/** Checks the params against the parent: a price is required, display is a positive multiple of the lot, at most the amount. */
export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const display = F.parse(params.display)
  if (display === undefined || display <= 0 || !F.isMultipleOf(display, spec.lot)) {
    errors.push({ field: "params.display", message: `must be a positive multiple of the lot ${F.format(spec.lot)}` })
  } else if (display > spec.amount) {
    errors.push({ field: "params.display", message: `must not exceed the amount ${F.format(spec.amount)}` })
  }
  if (spec.price === null) errors.push({ field: "price", message: "an iceberg needs a price" })
  if (spec.timeInForce === "ioc" || spec.timeInForce === "fok") {
    errors.push({ field: "time_in_force", message: "an iceberg's slices rest; ioc and fok are not allowed" })
  }
  const reloadDelayMs = msOf("params.reload_delay_s", params.reload_delay_s, errors)
  const jitterMs = msOf("params.jitter_s", params.jitter_s, errors)
  if (errors.length > 0 || display === undefined || spec.price === null) return { errors }
  return { params: { display, price: spec.price, reloadDelayMs, jitterMs, follow: params.follow ?? false } }
}

/** What may still be sent: the amount less what is filled and what live or ended children may still fill. */
const room = (spec: ParentSpec, state: State): F.Fixed =>
  F.roundTo(
    state.kids.reduce((left, k) => F.sub(left, openOf(k)), F.sub(spec.amount, state.filled)),
    spec.lot,
    "down"
  )

/** A slice's price: the fixed price, or with `follow` the own-side touch but never past the price. */
const slicePrice = (spec: ParentSpec, params: Typed, near: F.Fixed | null): F.Fixed => {
  if (!params.follow || near === null) return params.price
  const bounded = spec.side === "buy" ? F.min(near, params.price) : F.max(near, params.price)
  return passivePrice(spec.side, bounded, spec.tick)
}

const placeSlice = (spec: ParentSpec, params: Typed, state: State, commands: Array<Command>) => {
  const amount = F.min(params.display, room(spec, state))
  if (amount <= 0) return
  const child = state.nextChild++
  const price = slicePrice(spec, params, state.near)
  state.kids.push(newKid(child, amount))
  state.live = child
  if (!state.started) {
    state.started = true
    commands.push({ _tag: "Trigger" })
  }
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
      role: "slice"
    }
  })
  commands.push({
    _tag: "Emit",
    kind: "managed.slice",
    payload: { child, amount: F.format(amount), price: F.format(price) }
  })
}

/** The live slice is done after a full fill: the next one waits `reload_delay_s + U(0, jitter_s)`. */
const scheduleReload = (params: Typed, state: State, ts: number, commands: Array<Command>) => {
  const rng = SeededRandom.restore(state.rng)
  const at = ts + params.reloadDelayMs + rng.int(0, params.jitterMs)
  state.rng = rng.snapshot()
  state.reloads += 1
  state.reloadTimer = `reload:${state.reloads}`
  state.reloadAt = at
  commands.push({ _tag: "SetTimer", timer: state.reloadTimer, at })
}

const finish = (state: State, commands: Array<Command>, status: "closed" | "rejected", detail: string) => {
  state.finished = true
  state.reloadTimer = null
  state.reloadAt = null
  commands.push({ _tag: "Finish", status, detail })
}

const onInput = (spec: ParentSpec, params: Typed, state: State, input: Input, commands: Array<Command>) => {
  switch (input._tag) {
    case "Market":
      if (params.follow) state.near = nearFor(spec.side, input.view)
      if (!state.started) placeSlice(spec, params, state, commands)
      return
    case "Timer":
      if (input.timer !== state.reloadTimer) return
      state.reloadTimer = null
      state.reloadAt = null
      placeSlice(spec, params, state, commands)
      return
    case "ChildFill": {
      const kid = state.kids.find((k) => k.child === input.child)
      if (state.filled >= spec.amount) {
        finish(state, commands, "closed", `filled ${F.format(state.filled)}`)
      } else if (kid !== undefined && input.child === state.live && kid.filled >= kid.size) {
        kid.done = true
        kid.final = kid.filled
        state.live = null
        scheduleReload(params, state, input.ts, commands)
      }
      prune(state)
      return
    }
    case "ChildDone": {
      if (input.status === "rejected") {
        finish(state, commands, "rejected", input.reason ?? `slice ${input.child} was refused`)
        return
      }
      markDone(state, input)
      if (input.child === state.live) {
        state.live = null
        // A slice the venue filled is reloaded after the delay; one it canceled or expired is replaced at once.
        if (input.status === "closed") scheduleReload(params, state, input.ts, commands)
        else placeSlice(spec, params, state, commands)
      }
      prune(state)
      return
    }
    case "ChildAccepted":
      return
  }
}

/**
 * The iceberg core. Without `follow` the first slice goes out in `init`; with it, on the first market view.
 * A slice canceled or expired by the venue with something left is replaced at once, without the reload delay.
 */
export const core: Core<Typed, State> = {
  init: (spec, params, seed) => {
    const state: State = {
      nextChild: 1,
      filled: F.ZERO,
      kids: [],
      live: null,
      reloadTimer: null,
      reloadAt: null,
      reloads: 0,
      near: null,
      rng: new SeededRandom(seed).snapshot(),
      started: false,
      finished: false
    }
    const commands: Array<Command> = []
    if (!params.follow) placeSlice(spec, params, state, commands)
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
  /**
   * Without `follow` market data never matters once the first slice is out. With it, only the own-side touch, and
   * only as of the next slice: the driver may hand it the latest view just before the iceberg's next other input.
   */
  watch: (spec, params, state): Watch => {
    if (state.finished) return []
    if (!state.started) return "all"
    return params.follow ? [lazily(changedFrom(spec.side === "buy" ? "bid" : "ask", state.near))] : []
  },
  info: (state) => ({
    filled: F.format(state.filled),
    live_child: state.live,
    visible: F.formatOrNull(state.kids.find((k) => k.child === state.live)?.size),
    next_reload_at: state.reloadAt
  })
}
