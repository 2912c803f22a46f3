/** A lock for one holder at a time, taken in the order asked: the desk's and the engine's. */
import { Effect } from "effect"

/** A caller waiting for the lock: `granted` once a release handed it the lock. */
interface Waiter {
  granted: boolean
  readonly resume: (effect: Effect.Effect<void>) => void
}

/**
 * Runs effects one at a time, each after those that asked before it (a release hands the lock straight to the next
 * waiter, so no later caller takes it first). A free lock is taken with no asynchronous step: a semaphore of one
 * permit takes about twice the Effect operations, and every placement, cancel, applied venue event and engine input
 * goes through one. A caller interrupted while it waits leaves the line; one interrupted just as it was handed the
 * lock passes it on.
 */
export const makeLock = () => {
  let held = false
  const waiting: Array<Waiter> = []
  let head = 0

  const releaseNow = () => {
    const next = waiting[head]
    if (next === undefined) {
      held = false
      return
    }
    waiting[head++] = undefined as never
    if (head > 64 && head * 2 > waiting.length) {
      waiting.splice(0, head)
      head = 0
    }
    next.granted = true
    next.resume(Effect.void)
  }
  const release = Effect.sync(releaseNow)

  const wait = Effect.async<void>((resume) => {
    const waiter: Waiter = { granted: false, resume }
    waiting.push(waiter)
    return Effect.sync(() => {
      if (waiter.granted) return releaseNow()
      const at = waiting.indexOf(waiter, head)
      if (at >= 0) waiting.splice(at, 1)
    })
  })

  return <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (held) return Effect.zipRight(restore(wait), Effect.ensuring(restore(self), release))
        held = true
        return Effect.ensuring(restore(self), release)
      })
    )
}
