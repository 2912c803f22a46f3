/**
 * The changes of engine children the desk stored, in the order they happened, for the engine to take. Whoever drives
 * the engine in plain code takes them at once (`takeAll`); the engine's fiber waits on `ready` for any left.
 */
import { Effect } from "effect"
import type { Fill } from "./Ledger.ts"
import type { Order } from "../Domain/Order.ts"

/** A change of an engine parent's child, for the engine: the order as it is now, and the fill that changed it. */
export interface ChildUpdate {
  readonly order: Order
  readonly fill: Fill | undefined
}

const NONE: ReadonlyArray<ChildUpdate> = Object.freeze([])

export class ChildUpdates {
  private pending: Array<ChildUpdate> = []
  /** Open while some change waits. */
  private readonly latch = Effect.unsafeMakeLatch(false)

  /** Waits until some change is waiting (at once when one is). */
  readonly ready: Effect.Effect<void> = this.latch.await

  /** Changes waiting. */
  get size(): number {
    return this.pending.length
  }

  offer(update: ChildUpdate): void {
    this.pending.push(update)
    if (this.pending.length === 1) this.latch.unsafeOpen()
  }

  offerAll(updates: ReadonlyArray<ChildUpdate>): void {
    for (const update of updates) this.offer(update)
  }

  /** Every change waiting, oldest first; none wait after. */
  takeAll(): ReadonlyArray<ChildUpdate> {
    if (this.pending.length === 0) return NONE
    const taken = this.pending
    this.pending = []
    this.latch.unsafeClose()
    return taken
  }
}
