/** The journal: every event committed with what it tells of, then handed to live readers through bounded queues. */
import { Context, Effect, Layer, Queue } from "effect"
import { type Batch, type JournalEntry, type JournalEvent, OrderStore } from "../Services/OrderStore.ts"

/** A live reader: its queue, and whether it fell behind (its queue overflowed). */
export interface Reader {
  readonly queue: Queue.Queue<JournalEvent>
  readonly overflowed: () => boolean
}

export class Journal extends Context.Tag("crossbook/Journal")<
  Journal,
  {
    /**
     * Writes a batch (orders, parents' states, settings and their entries) in one transaction; live readers see its
     * events only once it is committed. Callers serialize, so seq order is publish order.
     */
    readonly commit: (batch: Batch) => Effect.Effect<ReadonlyArray<JournalEvent>>
    /** Appends entries that go with no stored change. */
    readonly append: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<ReadonlyArray<JournalEvent>>
    /** A live reader for as long as the scope lasts; once its queue is full it gets nothing more and is marked. */
    readonly reader: (capacity: number) => Effect.Effect<Reader, never, import("effect").Scope.Scope>
    readonly after: (seq: number, limit: number, kind?: string) => Effect.Effect<ReadonlyArray<JournalEvent>>
    readonly lastSeq: Effect.Effect<number>
  }
>() {
  static readonly layer = Layer.effect(
    Journal,
    Effect.gen(function* () {
      const store = yield* OrderStore
      const readers = new Set<{ queue: Queue.Queue<JournalEvent>; overflow: boolean }>()
      const commit = (batch: Batch) =>
        Effect.map(store.write(batch), (events) => {
          for (const reader of readers) {
            if (reader.overflow) continue
            for (const event of events) {
              if (!Queue.unsafeOffer(reader.queue, event)) {
                reader.overflow = true
                break
              }
            }
          }
          return events
        })
      return {
        commit,
        append: (entries) => commit({ entries }),
        reader: (capacity) =>
          Effect.acquireRelease(
            Effect.map(Queue.dropping<JournalEvent>(capacity), (queue) => {
              const entry = { queue, overflow: false }
              readers.add(entry)
              return entry
            }),
            (entry) => Effect.sync(() => readers.delete(entry)).pipe(Effect.zipRight(Queue.shutdown(entry.queue)))
          ).pipe(Effect.map((entry) => ({ queue: entry.queue, overflowed: () => entry.overflow }))),
        after: store.eventsAfter,
        lastSeq: store.lastSeq
      }
    })
  )
}
