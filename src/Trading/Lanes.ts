/**
 * Lanes: the work of one venue account runs in the order it was admitted, one call at a time, and never waits for
 * another account's. Each lane is a queue with a fiber of its own; admitting work is synchronous, so the order of
 * admission (under the desk's lock) is the order the venue sees.
 */
import { Deferred, Effect, type Exit, Queue, type Scope } from "effect"

interface Task {
  readonly run: Effect.Effect<void>
}

export interface Lanes {
  /**
   * Queues `work` at the end of `key`'s lane now, and answers a way to wait for its outcome. The work runs whether
   * or not anyone waits.
   */
  readonly admit: <A, E>(key: string, work: Effect.Effect<A, E>) => Effect.Effect<Effect.Effect<A, E>>
  /** How many tasks wait or run in each lane. */
  readonly depths: () => Record<string, number>
}

export const makeLanes = (scope: Scope.Scope): Lanes => {
  const lanes = new Map<string, { readonly queue: Queue.Queue<Task>; depth: number }>()
  const laneOf = (key: string) =>
    Effect.suspend(() => {
      const known = lanes.get(key)
      if (known !== undefined) return Effect.succeed(known)
      const queue = Effect.runSync(Queue.unbounded<Task>())
      const lane = { queue, depth: 0 }
      lanes.set(key, lane)
      // Made interruptible: a lane opened inside an uninterruptible placement would otherwise outlive its scope.
      const worker = Effect.interruptible(Effect.forever(Effect.flatMap(Queue.take(queue), (task) => task.run)))
      return Effect.as(Effect.forkIn(worker, scope), lane)
    })
  return {
    admit: <A, E>(key: string, work: Effect.Effect<A, E>) =>
      Effect.flatMap(Effect.zip(laneOf(key), Effect.option(Effect.currentParentSpan)), ([lane, parent]) =>
        Effect.suspend(() => {
          // The work runs in the lane's fiber, under the caller's span: a trace follows a request into its lane.
          const traced = parent._tag === "Some" ? Effect.withParentSpan(work, parent.value) : work
          const done = Effect.runSync(Deferred.make<A, E>())
          lane.depth++
          const run = Effect.uninterruptible(
            Effect.flatMap(Effect.exit(traced), (exit: Exit.Exit<A, E>) =>
              Effect.zipRight(
                Effect.sync(() => {
                  lane.depth--
                }),
                Deferred.done(done, exit)
              )
            )
          )
          Queue.unsafeOffer(lane.queue, { run })
          return Effect.succeed(Deferred.await(done))
        })
      ),
    depths: () => Object.fromEntries([...lanes].map(([k, l]) => [k, l.depth]))
  }
}
