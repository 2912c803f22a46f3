/** bracket: an entry, then a take-profit and a stop-loss kept sized to what the entry filled and the exits have not. */
import { Decimal, strict } from "./Children.ts"
import { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import { gridPrice, slippage as slippageOf } from "./Grid.ts"
import type { Side } from "../Domain/Market.ts"
import { type Command, copyFrom, type Core, type ParentSpec, passivePrice, type Watch } from "./Core.ts"
import { fires, stopBand, triggerReference } from "./Stop.ts"

/** Wire params of a bracket; unknown keys are refused here and in each nested object. */
export const Params = strict(
  Schema.Struct({
    entry: Schema.optional(strict(Schema.Struct({ type: Schema.optional(Schema.Literal("limit")), price: Decimal }))),
    take_profit: strict(Schema.Struct({ price: Decimal })),
    stop_loss: strict(
      Schema.Struct({
        stop_price: Decimal,
        price: Schema.optional(Decimal),
        trigger_source: Schema.optional(Schema.Literal("touch", "mid", "last")),
        protection: Schema.optional(Decimal),
        max_slippage: Schema.optional(Decimal)
      })
    )
  }),
  "BracketParams"
)
export type Params = typeof Params.Type

export interface Typed {
  readonly entryPrice: F.Fixed | null
  readonly exitSide: Side
  readonly takeProfit: F.Fixed
  readonly stop: F.Fixed
  /** The stop-loss child's limit: `stop_loss.price` (stop_limit), else the protection (stop_market, IOC). */
  readonly stopChildPrice: F.Fixed
  readonly stopIoc: boolean
  readonly source: "touch" | "mid" | "last"
}

/** A child the bracket still hears from: live, or ended with fills it reported still to come (then `final` is set). */
interface Child {
  readonly child: number
  readonly role: "entry" | "take_profit" | "stop_loss"
  filled: F.Fixed
  live: boolean
  final: F.Fixed | null
  /** Fill ids seen on this child, forgotten with it. */
  seen: Array<string>
}

export interface State {
  children: Array<Child>
  nextChild: number
  entryFilled: F.Fixed
  entryDone: boolean
  exitsFilled: F.Fixed
  stopFired: boolean
  /** The stop-loss fired and waits for the take-profits (and the entry) to be pulled before it sends. */
  stopWaiting: boolean
  /** The stop-loss child was sent. */
  stopSent: boolean
  finished: boolean
}

export const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Typed } | { readonly errors: ReadonlyArray<FieldError> } => {
  const errors: Array<FieldError> = []
  const price = (field: string, text: string | undefined) => gridPrice(spec.tick, errors, field, text)
  const exitSide: Side = spec.side === "buy" ? "sell" : "buy"
  const entryPrice = price("params.entry.price", params.entry?.price)
  const takeProfit = price("params.take_profit.price", params.take_profit.price)
  const stop = price("params.stop_loss.stop_price", params.stop_loss.stop_price)
  const limit = price("params.stop_loss.price", params.stop_loss.price)
  const protection = price("params.stop_loss.protection", params.stop_loss.protection)
  const slippage = slippageOf(errors, "params.stop_loss.max_slippage", params.stop_loss.max_slippage)
  if (takeProfit !== null && stop !== null) {
    // A long (buy) bracket takes profit above and stops out below; a short one the other way round.
    const right = spec.side === "buy" ? takeProfit > stop : takeProfit < stop
    if (!right) {
      errors.push({
        field: "params.take_profit.price",
        message: `the take-profit must sit ${spec.side === "buy" ? "above" : "below"} the stop-loss for a ${spec.side} bracket`
      })
    }
  }
  if (errors.length > 0 || takeProfit === null || stop === null) return { errors }
  const stopChildPrice =
    limit ??
    protection ??
    passivePrice(exitSide, exitSide === "buy" ? F.add(stop, slippage!) : F.sub(stop, slippage!), spec.tick)
  return {
    params: {
      entryPrice,
      exitSide,
      takeProfit,
      stop,
      stopChildPrice,
      stopIoc: limit === null,
      source: params.stop_loss.trigger_source ?? "touch"
    }
  }
}

const place = (
  spec: ParentSpec,
  state: State,
  role: Child["role"],
  side: Side,
  price: F.Fixed,
  amount: F.Fixed,
  ioc: boolean,
  commands: Array<Command>
) => {
  const child = state.nextChild++
  state.children.push({ child, role, filled: F.ZERO, live: true, final: null, seen: [] })
  if (role === "stop_loss") state.stopSent = true
  commands.push({
    _tag: "Place",
    spec: {
      child,
      side,
      price,
      amount,
      timeInForce: ioc ? "ioc" : role === "entry" ? spec.timeInForce : "gtc",
      postOnly: false,
      reduceOnly: role === "entry" ? spec.reduceOnly : true,
      role
    }
  })
}

/** The amount the exits protect: what the entry filled, or the whole amount without an entry. */
const protectedAmount = (spec: ParentSpec, params: Typed, state: State): F.Fixed =>
  params.entryPrice === null ? spec.amount : state.entryFilled

export const core: Core<Typed, State> = {
  init: (spec, params) => {
    const state: State = {
      children: [],
      nextChild: 1,
      entryFilled: F.ZERO,
      entryDone: params.entryPrice === null,
      exitsFilled: F.ZERO,
      stopFired: false,
      stopWaiting: false,
      stopSent: false,
      finished: false
    }
    const commands: Array<Command> = []
    if (params.entryPrice !== null) {
      place(spec, state, "entry", spec.side, params.entryPrice, spec.amount, false, commands)
    } else {
      place(spec, state, "take_profit", params.exitSide, params.takeProfit, spec.amount, false, commands)
    }
    return { state, commands }
  },
  /** The stop-loss watches the market while something it protects is open and it has not fired. */
  watch: (spec, params, state): Watch =>
    state.finished || state.stopFired || F.sub(protectedAmount(spec, params, state), state.exitsFilled) <= 0
      ? []
      : [stopBand(params.source, params.exitSide, params.stop)],
  step: (spec, params, prev, input) => {
    const state: State = copyFrom({ ...prev })
    const commands: Array<Command> = []
    if (state.finished) return { state, commands }
    const live = (role?: Child["role"]) =>
      state.children.filter((c) => c.live && (role === undefined || c.role === role))
    switch (input._tag) {
      case "Market": {
        const open = F.sub(protectedAmount(spec, params, state), state.exitsFilled)
        if (state.stopFired || open <= 0) break
        const ref = triggerReference(params.source, params.exitSide, input.view)
        if (ref === null || !fires(params.exitSide, ref, params.stop)) break
        state.stopFired = true
        commands.push({ _tag: "Trigger" })
        commands.push({
          _tag: "Emit",
          kind: "managed.triggered",
          payload: { leg: "stop_loss", reference: F.format(ref), level: F.format(params.stop), source: params.source }
        })
        // The take-profits and a working entry are pulled first; the stop-loss sends what is left once they are out.
        for (const c of live()) commands.push({ _tag: "Cancel", child: c.child })
        if (live().length > 0) state.stopWaiting = true
        else place(spec, state, "stop_loss", params.exitSide, params.stopChildPrice, open, params.stopIoc, commands)
        break
      }
      case "ChildFill": {
        const child = state.children.find((c) => c.child === input.child)
        if (child === undefined || child.seen.includes(input.fillId)) break
        child.seen.push(input.fillId)
        child.filled = F.add(child.filled, input.amount)
        if (child.role === "entry") {
          state.entryFilled = F.add(state.entryFilled, input.amount)
          // Each entry fill gets its own take-profit, so the exits always add up to what is held (B1).
          if (!state.stopFired) {
            place(spec, state, "take_profit", params.exitSide, params.takeProfit, input.amount, false, commands)
          }
        } else {
          state.exitsFilled = F.add(state.exitsFilled, input.amount)
        }
        break
      }
      case "ChildDone": {
        const child = state.children.find((c) => c.child === input.child)
        if (child === undefined) break
        child.live = false
        child.final = F.max(child.filled, input.filled)
        if (input.status === "rejected") {
          state.finished = true
          commands.push({ _tag: "Finish", status: "rejected", detail: input.reason ?? `the ${child.role} was refused` })
          return { state, commands }
        }
        if (child.role === "entry") state.entryDone = true
        if (state.stopWaiting && live().length === 0) {
          state.stopWaiting = false
          const open = F.sub(protectedAmount(spec, params, state), state.exitsFilled)
          if (open > 0)
            place(spec, state, "stop_loss", params.exitSide, params.stopChildPrice, open, params.stopIoc, commands)
        }
        break
      }
      case "ChildAccepted":
      case "Timer":
        break
    }
    // A child that ended with every fill it reported counted is forgotten: the state follows the live children only.
    state.children = state.children.filter((c) => c.live || c.final === null || c.filled < c.final)
    const held = F.sub(protectedAmount(spec, params, state), state.exitsFilled)
    if (live().length === 0 && !state.stopWaiting && state.entryDone) {
      if (params.entryPrice !== null && state.entryFilled === 0) {
        state.finished = true
        commands.push({ _tag: "Finish", status: "canceled", detail: "the entry ended unfilled; no exit was sent" })
      } else if (held <= 0) {
        state.finished = true
        commands.push({ _tag: "Finish", status: "closed", detail: state.stopFired ? "stopped out" : "profit taken" })
      } else if (state.stopFired && state.stopSent) {
        state.finished = true
        commands.push({
          _tag: "Finish",
          status: "canceled",
          detail: `the stop-loss ended with ${F.format(held)} still held`
        })
      }
    }
    return { state, commands }
  },
  info: (state) => ({
    entry_filled: F.format(state.entryFilled),
    exits_filled: F.format(state.exitsFilled),
    stop_fired: state.stopFired,
    live_children: state.children.filter((c) => c.live).map((c) => ({ child: c.child, role: c.role }))
  })
}

/** A bracket's filled is what the entry filled (or, with no entry, what the exits closed). */
export const counts = (role: string, params: Typed): boolean =>
  params.entryPrice === null ? role !== "entry" : role === "entry"
