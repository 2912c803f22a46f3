/**
 * The driver's steps in plain code as far as they can go. A step runs at a time `now` and answers what is left of it:
 * `undefined` when it finished in plain code (every write made at once, every placement answered in process), else
 * an Effect that does the rest (a write that must wait, a venue that answers over the network). The same code thus
 * serves the simulator, where a woken parent's placement runs with no fiber, and a live server, where it waits.
 */
import { Clock, Effect } from "effect"

/** What a step left to run: nothing, or an Effect. */
export type Rest = Effect.Effect<void> | undefined

/** A step that runs at a time. */
export type At = (now: number) => Rest

/** An Effect that runs a step at the clock's time: its plain part, then what it left. */
export const atNow = (step: At): Effect.Effect<void> =>
  Effect.flatMap(Clock.currentTimeMillis, (now) => step(now) ?? Effect.void)

/**
 * `next` after what a step left: at once at `now` when it left nothing, else once the rest ran, at the clock's time
 * then (a network answer takes time). (Not named `then`: a module exporting `then` is taken for a promise when it is
 * imported dynamically.)
 */
export const andThen = (left: Rest, now: number, next: At): Rest =>
  left === undefined ? next(now) : Effect.flatMap(left, () => atNow(next))

/** `step` for each item in order, each after what the one before it left. */
export const each = <A>(items: ReadonlyArray<A>, now: number, step: (item: A, now: number) => Rest, from = 0): Rest => {
  for (let i = from; i < items.length; i++) {
    const left = step(items[i]!, now)
    if (left !== undefined) {
      return i + 1 === items.length ? left : Effect.flatMap(left, () => atNow((t) => each(items, t, step, i + 1)))
    }
  }
  return undefined
}
