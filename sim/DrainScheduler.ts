/**
 * The simulator's scheduler: one queue for every fiber of a run, drained in microtask rounds (never a timer), that
 * knows how much work is waiting. A run settles by yielding until nothing else is queued, so an input that caused
 * no work costs one yield and one that caused a chain of fiber hand-offs runs it to the end.
 */
import { Effect, FiberRef, type Scheduler } from "effect"
import type { RuntimeFiber } from "effect/Fiber"

export class DrainScheduler implements Scheduler.Scheduler {
  private queue: Array<Scheduler.Task> = []
  private round: Array<Scheduler.Task> = []
  private next = 0
  private draining = false

  /** Tasks waiting to run: the rest of this round and the next. */
  get pending(): number {
    return this.round.length - this.next + this.queue.length
  }

  shouldYield(fiber: RuntimeFiber<unknown, unknown>): number | false {
    return fiber.currentOpCount > fiber.getFiberRef(FiberRef.currentMaxOpsBeforeYield)
      ? fiber.getFiberRef(FiberRef.currentSchedulingPriority)
      : false
  }

  scheduleTask(task: Scheduler.Task): void {
    this.queue.push(task)
    if (!this.draining) {
      this.draining = true
      queueMicrotask(this.drain)
    }
  }

  /** Runs the tasks queued when the round began; what they queue runs in the next round. */
  private readonly drain = () => {
    this.round = this.queue
    this.queue = []
    for (this.next = 0; this.next < this.round.length;) this.round[this.next++]!()
    this.round = []
    this.next = 0
    if (this.queue.length > 0) queueMicrotask(this.drain)
    else this.draining = false
  }

  /** Yields until no other task is queued (at most `limit` times): what the last input started has run. */
  settle(limit = 100_000): Effect.Effect<void> {
    const loop = (left: number): Effect.Effect<void> =>
      Effect.flatMap(Effect.yieldNow(), () => (this.pending > 0 && left > 0 ? loop(left - 1) : Effect.void))
    return Effect.suspend(() => loop(limit))
  }
}
