/** A discrete-event clock: time moves only when the simulator says so, and sleepers wake in time order. */
import { Clock, Duration, Effect } from "effect"

interface Sleeper {
  readonly at: number
  readonly n: number
  readonly wake: () => void
}

export class DiscreteClock implements Clock.Clock {
  readonly [Clock.ClockTypeId]: Clock.ClockTypeId = Clock.ClockTypeId
  private now: number
  private sleepers: Array<Sleeper> = []
  private count = 0

  constructor(start: number) {
    this.now = start
  }

  unsafeCurrentTimeMillis(): number {
    return this.now
  }

  get currentTimeMillis(): Effect.Effect<number> {
    return Effect.sync(() => this.now)
  }

  unsafeCurrentTimeNanos(): bigint {
    return BigInt(this.now) * 1_000_000n
  }

  get currentTimeNanos(): Effect.Effect<bigint> {
    return Effect.sync(() => this.unsafeCurrentTimeNanos())
  }

  sleep(duration: Duration.Duration): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      const sleeper: Sleeper = {
        at: this.now + Duration.toMillis(duration),
        n: ++this.count,
        wake: () => resume(Effect.void)
      }
      this.sleepers.push(sleeper)
      return Effect.sync(() => {
        this.sleepers = this.sleepers.filter((s) => s !== sleeper)
      })
    })
  }

  /** Moves time forward to `t` at once when nobody sleeps until then; answers false (time unmoved) otherwise. */
  advanceQuietly(t: number): boolean {
    if (t <= this.now) return true
    for (const s of this.sleepers) if (s.at <= t) return false
    this.now = t
    return true
  }

  /** Moves time forward to `t` (never back) and wakes every sleeper due by then, earliest first. */
  setTime(t: number): Effect.Effect<void> {
    return Effect.sync(() => {
      if (t <= this.now) return
      this.now = t
      const due = this.sleepers.filter((s) => s.at <= t).sort((a, b) => a.at - b.at || a.n - b.n)
      if (due.length === 0) return
      this.sleepers = this.sleepers.filter((s) => s.at > t)
      for (const s of due) s.wake()
    })
  }
}
