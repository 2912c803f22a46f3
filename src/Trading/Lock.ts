/** A lock for one holder at a time, taken in the order asked: the desk's and the engine's. */
import { Effect } from "effect"

/** A caller waiting for the lock: `granted` once a release handed it the lock, `resume` once it is suspended. */
interface Waiter {
  granted: boolean
  resume: ((effect: Effect.Effect<void>) => void) | undefined
}

/**
 * Runs effects one at a time, each after those that asked before it (a release hands the lock straight to the next
 * waiter, so no later caller takes it first). A free lock is taken with no asynchronous step: a semaphore of one
 * permit takes about twice the Effect operations, and every placement, cancel, applied venue event and engine input
 * goes through one. A waiting caller's release is in place before it waits: interrupted while it waits it leaves the
 * line, and interrupted once the lock was handed to it (before it ran) it passes the lock on.
 */
export const makeLock = () => {
  let held = false
  const waiting: Array<Waiter | undefined> = []
  let head = 0

  const releaseNow = () => {
    const next = waiting[head]
    if (next === undefined) {
      held = false
      return
    }
    waiting[head++] = undefined
    if (head > 64 && head * 2 > waiting.length) {
      waiting.splice(0, head)
      head = 0
    }
    next.granted = true
    next.resume?.(Effect.void)
  }
  const release = Effect.sync(releaseNow)

  const waitFor = (waiter: Waiter) =>
    Effect.async<void>((resume) => {
      if (waiter.granted) resume(Effect.void)
      else waiter.resume = resume
    })
  /** What a caller that waited does at its end, however it ends: release the lock it holds, or leave the line. */
  const leave = (waiter: Waiter) =>
    Effect.sync(() => {
      if (waiter.granted) return releaseNow()
      const at = waiting.indexOf(waiter, head)
      if (at >= 0) waiting.splice(at, 1)
    })

  const lock = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (!held) {
          held = true
          return Effect.ensuring(restore(self), release)
        }
        const waiter: Waiter = { granted: false, resume: undefined }
        waiting.push(waiter)
        return Effect.ensuring(Effect.zipRight(restore(waitFor(waiter)), restore(self)), leave(waiter))
      })
    )
  /**
   * Runs plain code under the lock at once when it is free, and answers what it answered; `undefined` (nothing run)
   * when the lock is held. Nothing can take the lock while the code runs, so it is released as it returns or throws.
   */
  const now = <A>(f: () => A): A | undefined => {
    if (held) return undefined
    held = true
    try {
      return f()
    } finally {
      releaseNow()
    }
  }
  /**
   * Runs plain code under the lock at once when it is free, as `now`; what it leaves to run (an Effect) keeps the lock
   * until it ends, so the caller must run it. Answers that Effect (a finished one when nothing was left), or
   * `undefined` (nothing run) when the lock is held.
   */
  const hold = (f: () => Effect.Effect<void> | undefined): Effect.Effect<void> | undefined => {
    if (held) return undefined
    held = true
    let left: Effect.Effect<void> | undefined
    try {
      left = f()
    } catch (e) {
      releaseNow()
      throw e
    }
    if (left === undefined) {
      releaseNow()
      return Effect.void
    }
    return Effect.ensuring(left, release)
  }
  return Object.assign(lock, { now, hold })
}

/** The lock: an effect wrapped runs holding it; `now` and `hold` run plain code holding it when it is free. */
export type Lock = ReturnType<typeof makeLock>
