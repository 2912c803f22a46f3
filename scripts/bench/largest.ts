/**
 * The largest parent the bounds allow: a twap of the most slices, timed per input late in its life against the same
 * twap early in its life. A ratio near 1 shows one input costs what the parent does now, not what it has done.
 */
import { performance } from "node:perf_hooks"
import * as F from "../../src/Domain/Fixed.ts"
import type { Input, ParentSpec } from "../../src/Engine/Core.ts"
import * as Twap from "../../src/Engine/Twap.ts"
import { type Figure, ratio } from "./common.ts"

const SLICES = 10_000
/** Slices timed at each end of the window. */
const SAMPLE = 1_000

/**
 * Drives a twap of `SLICES` slices of 3 over the longest window: at each slice time the rest of the previous slice is
 * pulled and its cancel lands, then the new slice fills partly and one fill is delivered twice. Answers the
 * microseconds per input spent in slices [from, to).
 */
const drive = (
  from: number,
  to: number
): { readonly us: number; readonly inputs: number; readonly stateBytes: number } => {
  const spec: ParentSpec = {
    id: "mo_bench",
    side: "buy",
    amount: F.fromInt(SLICES * 3),
    price: F.of("0.4"),
    stopPrice: null,
    timeInForce: "gtc",
    postOnly: false,
    reduceOnly: false,
    tick: F.of("0.01"),
    lot: F.of("1"),
    createdAt: 0
  }
  const checked = Twap.validate(spec, { window_s: 30 * 86_400, slices: SLICES })
  if ("errors" in checked) throw new Error(JSON.stringify(checked.errors))
  const params = checked.params
  const first = Twap.core.init(spec, params, 1)
  let state = first.state
  let ts = 0
  let fills = 0
  let spent = 0
  let inputs = 0
  const sizes = new Map<number, F.Fixed>()
  const filled = new Map<number, F.Fixed>()
  const live = new Set<number>()
  const feed = (input: Input, timed: boolean) => {
    const start = timed ? performance.now() : 0
    const step = Twap.core.step(spec, params, state, input)
    if (timed) {
      spent += performance.now() - start
      inputs += 1
    }
    state = step.state
    track(step.commands)
  }
  const track = (commands: ReadonlyArray<{ readonly _tag: string } & Record<string, any>>) => {
    for (const c of commands) {
      if (c._tag === "Place") {
        sizes.set(c.spec.child, c.spec.amount)
        filled.set(c.spec.child, F.ZERO)
        live.add(c.spec.child)
      }
    }
  }
  track(first.commands)
  for (let i = 1; i < to; i++) {
    const timed = i >= from
    // The live slice fills one lot, and that fill arrives twice.
    for (const child of live) {
      if (filled.get(child)! >= sizes.get(child)!) continue
      filled.set(child, F.add(filled.get(child)!, F.ONE))
      const fill: Input = { _tag: "ChildFill", ts, child, fillId: `f${++fills}`, price: F.of("0.4"), amount: F.ONE }
      feed(fill, timed)
      feed(fill, timed)
    }
    const pulled = [...live]
    ts = Twap.sliceAt(spec, params, i)
    feed({ _tag: "Timer", ts, timer: `slice:${i}` }, timed)
    for (const child of pulled) {
      live.delete(child)
      feed({ _tag: "ChildDone", ts, child, status: "canceled", filled: filled.get(child)!, reason: null }, timed)
    }
  }
  return { us: (spent * 1000) / inputs, inputs, stateBytes: JSON.stringify(state).length }
}

/** `engine.largest_twap_step_us`: best of a few runs, late slices against early ones. */
export const largestParentFigures = (): ReadonlyArray<Figure> => {
  let late = Number.POSITIVE_INFINITY
  let early = Number.POSITIVE_INFINITY
  let inputs = 0
  let stateBytes = 0
  drive(1, 1 + SAMPLE)
  for (let round = 0; round < 3; round++) {
    const e = drive(1, 1 + SAMPLE)
    const l = drive(SLICES - SAMPLE, SLICES)
    early = Math.min(early, e.us)
    late = Math.min(late, l.us)
    inputs = l.inputs
    stateBytes = l.stateBytes
  }
  return [
    {
      name: "engine.largest_twap_step_us",
      value: Number(late.toFixed(3)),
      unit: "µs",
      baseline: Number(early.toFixed(3)),
      ratio: ratio(late, early),
      target: "ratio ≈ 1: an input costs the same after 9,000 slices as after 1",
      slices: SLICES,
      inputs_timed: inputs,
      state_bytes_at_end: stateBytes
    }
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of largestParentFigures()) console.log(JSON.stringify(f))
}
