/** The journal: every event appended with the next seq, then handed to live readers through bounded queues. */
import { Context, Effect, Layer, Queue } from "effect"
import { type JournalEntry, type JournalEvent, OrderStore } from "../Services/OrderStore.ts"

/** A live reader: its queue, and whether it fell behind (its queue overflowed). */
export interface Reader {
  readonly queue: Queue.Queue<JournalEvent>
  readonly overflowed: () => boolean
}

export class Journal extends Context.Tag("crossbook/Journal")<
  Journal,
  {
    /** Appends in order; callers serialize (the desk appends under its lock), so seq order is publish order. */
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
      return {
        append: (entries) =>
          Effect.map(store.append(entries), (events) => {
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
          }),
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
