/** The journal: every event committed with what it tells of, then handed to live readers through bounded queues. */
import { Context, Deferred, Effect, Exit, FiberRef, Layer, Queue } from "effect"
import { performance } from "node:perf_hooks"
import { type Batch, type JournalEntry, type JournalEvent, OrderStore } from "../Services/OrderStore.ts"
import { currentTracing, tally, Telemetry, traced } from "../Telemetry/Telemetry.ts"

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
    /**
     * Queues a batch without waiting for it: it commits with the next write (in the order queued) or at `flushed`.
     * A caller that queues answers its client only after `flushed`.
     */
    readonly enqueue: (batch: Batch) => Effect.Effect<void>
    /** Waits until every batch queued so far is committed (a write that failed fails this too). */
    readonly flushed: Effect.Effect<void>
    /**
     * The same for a caller that knows another queuing caller comes after it (`last: false`): that one's write, or
     * its own wait, commits this batch too, so this one waits without writing.
     */
    readonly flushedBy: (last: boolean) => Effect.Effect<void>
    /** Whether a fill of this id is queued or being written (not yet in the store, soon there). */
    readonly holdsFill: (id: string) => boolean
    /**
     * Writes a batch at once, as `commit` would, when nothing is queued or being written, the store can write
     * synchronously and no span is exported; `undefined` (nothing written) otherwise, and `commit` is the way.
     */
    readonly commitNow: (batch: Batch) => ReadonlyArray<JournalEvent> | undefined
    /** Whether `commitNow` would write now as far as the journal goes (the store may still decline). */
    readonly readyNow: () => boolean
    /** Appends entries that go with no stored change. */
    readonly append: (entries: ReadonlyArray<JournalEntry>) => Effect.Effect<ReadonlyArray<JournalEvent>>
    /** A live reader for as long as the scope lasts; once its queue is full it gets nothing more and is marked. */
    readonly reader: (capacity: number) => Effect.Effect<Reader, never, import("effect").Scope.Scope>
    readonly after: (seq: number, limit: number, kind?: string) => Effect.Effect<ReadonlyArray<JournalEvent>>
    readonly lastSeq: Effect.Effect<number>
  }
>() {
  /** Writes go out as soon as asked: the simulator's and the tests' journal. */
  static readonly layer = Journal.layerWith({ gather: false })

  /**
   * `gather` (the server): a placement's last writes wait for the end of the event loop's turn, so the requests read
   * in the same turn commit together (the next placement's write ahead takes them, or the first to resume).
   */
  static layerWith(options: { readonly gather: boolean }) {
    return Layer.effect(
      Journal,
      Effect.gen(function* () {
        const store = yield* OrderStore
        const metrics = yield* Telemetry
        const readers = new Set<{ queue: Queue.Queue<JournalEvent>; overflow: boolean }>()
        const publish = (events: ReadonlyArray<JournalEvent>) => {
          tally(metrics, events)
          for (const reader of readers) {
            if (reader.overflow) continue
            for (const event of events) {
              if (!Queue.unsafeOffer(reader.queue, event)) {
                reader.overflow = true
                break
              }
            }
          }
        }
        /**
         * Group commit: batches queued while a write is under way wait for it, then the next write takes all of them
         * in one transaction (merged into one batch, in queue order), and each waiter is answered once that commits.
         * Whoever finds no write under way leads: it writes until the queue is empty.
         */
        type Waiting = { readonly batch: Batch; readonly done: Deferred.Deferred<ReadonlyArray<JournalEvent>> }
        let queued: Array<Waiting> = []
        let last: Waiting | undefined
        let writing = false
        /** A batch written at once where the store can, timed; undefined when it cannot. A write that fails throws. */
        const storedNow = (batch: Batch): ReadonlyArray<JournalEvent> | undefined => {
          const started = performance.now()
          const events = store.writeNow(batch)
          if (events === undefined) return undefined
          metrics.journalCommit.observe([], (performance.now() - started) / 1000)
          return events
        }
        /** The same as an exit (a failure as the defect `write` dies of), for a group whose waiters are answered. */
        const writtenNow = (batch: Batch): Exit.Exit<ReadonlyArray<JournalEvent>> | undefined => {
          try {
            const events = storedNow(batch)
            return events === undefined ? undefined : Exit.succeed(events)
          } catch (e) {
            return Exit.die(e)
          }
        }
        /** A batch with no waiter written at once where the store can, and published; undefined when it cannot. */
        const publishedNow = (batch: Batch): ReadonlyArray<JournalEvent> | undefined => {
          const events = storedNow(batch)
          if (events !== undefined) publish(events)
          return events
        }
        /** The store's asynchronous write, timed. */
        const written = (batch: Batch) =>
          Effect.suspend(() => {
            const started = performance.now()
            return Effect.exit(store.write(batch)).pipe(
              Effect.tap(() => metrics.journalCommit.observe([], (performance.now() - started) / 1000))
            )
          })
        const writeGroup = Effect.fnUntraced(function* (group: ReadonlyArray<Waiting>) {
          const batch = group.length === 1 ? group[0]!.batch : merge(group)
          const exit = writtenNow(batch) ?? (yield* written(batch))
          for (const w of group) countFills(w.batch, -1)
          // Everything queued is answered with this group: a later wait has nothing to wait for (nor this failure).
          if (last !== undefined && group.includes(last)) last = undefined
          if (Exit.isFailure(exit)) {
            for (const w of group) yield* Deferred.failCause(w.done, exit.cause)
            return
          }
          publish(exit.value)
          let at = 0
          for (const w of group) {
            const n = w.batch.entries?.length ?? 0
            yield* Deferred.succeed(w.done, exit.value.slice(at, at + n))
            at += n
          }
        })
        // The check for more work and the hand-over (`writing = false`) happen in one step, so a batch queued at any
        // point is either taken by the running leader or finds no leader and leads.
        const loop: Effect.Effect<void> = Effect.suspend(() => {
          if (queued.length === 0) {
            writing = false
            return Effect.void
          }
          const all = queued
          queued = []
          return Effect.zipRight(Effect.forEach(groups(all), writeGroup, { discard: true }), loop)
        })
        const lead = Effect.suspend(() => {
          if (writing) return Effect.void
          writing = true
          return loop.pipe(
            Effect.onError(() => Effect.sync(() => void (writing = false))),
            Effect.uninterruptible
          )
        })
        /** Fills of batches queued or under way, so a second report of one is known before it is committed. */
        const fillsAhead = new Map<string, number>()
        const countFills = (batch: Batch, by: 1 | -1) => {
          for (const { fill } of batch.fills ?? []) {
            const n = (fillsAhead.get(fill.id) ?? 0) + by
            if (n <= 0) fillsAhead.delete(fill.id)
            else fillsAhead.set(fill.id, n)
          }
        }
        const push = (batch: Batch) =>
          Effect.map(Deferred.make<ReadonlyArray<JournalEvent>>(), (done) => {
            countFills(batch, 1)
            const waiting = { batch, done }
            queued.push(waiting)
            last = waiting
            return waiting
          })
        const queue = (batch: Batch) =>
          Effect.flatMap(push(batch), (waiting) => Effect.zipRight(lead, Deferred.await(waiting.done)))
        /**
         * With no write under way and nothing queued, a batch is a group of one: it is written at once, with no
         * waiter to answer (synchronously when the store can). Batches queued while it writes are written after it by
         * the same leader, as in `lead`.
         */
        const commit = (batch: Batch) =>
          Effect.suspend(() => {
            if (writing || queued.length > 0) return queue(batch)
            // A store that can write synchronously does it here: nothing can queue meanwhile (a write that fails
            // dies, as it would below).
            const now = publishedNow(batch)
            if (now !== undefined) return Effect.succeed(now)
            writing = true
            countFills(batch, 1)
            return written(batch).pipe(
              Effect.flatMap((exit) => {
                countFills(batch, -1)
                if (Exit.isSuccess(exit)) publish(exit.value)
                return Effect.zipRight(loop, exit)
              }),
              Effect.onError(() => Effect.sync(() => void (writing = false))),
              Effect.uninterruptible
            )
          })
        const flushed = (leaving: boolean) =>
          Effect.suspend(() => {
            const target = last
            if (target === undefined) return Effect.void
            // While another caller that queues is still to come, its write takes this batch along; else this one leads
            // (gathering: once the requests of this turn of the event loop have queued theirs).
            const leads = !leaving ? Effect.void : options.gather ? Effect.zipRight(endOfTurn, lead) : lead
            return Effect.zipRight(leads, Effect.asVoid(Deferred.await(target.done)))
          })
        /**
         * Not gathering, a batch queued behind nothing is written at once where the store can: no later write could
         * take it along, and the caller's wait then has nothing left to wait for.
         */
        const enqueueNow = (batch: Batch) =>
          Effect.suspend(() =>
            !writing && queued.length === 0 && publishedNow(batch) !== undefined
              ? Effect.void
              : Effect.asVoid(push(batch))
          )
        // Decided once: with no span exported the commit is not wrapped at all.
        const commitTraced = traced("journal.commit")
        const tracing = yield* FiberRef.get(currentTracing)
        const readyNow = () => !tracing && !writing && queued.length === 0
        /** `commit` in plain code where it needs no wait; a write that fails throws, as `commit` dies. */
        const commitNow = (batch: Batch): ReadonlyArray<JournalEvent> | undefined =>
          readyNow() ? publishedNow(batch) : undefined
        return {
          commit: tracing ? (batch) => commitTraced(commit(batch)) : commit,
          commitNow,
          readyNow,
          enqueue: options.gather ? (batch) => Effect.asVoid(push(batch)) : enqueueNow,
          flushed: flushed(true),
          flushedBy: flushed,
          holdsFill: (id) => fillsAhead.has(id),
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
}

/** Resumes after the I/O callbacks of the event loop's current turn (`setImmediate`). */
const endOfTurn = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

type Queued = { readonly batch: Batch }

/**
 * Consecutive runs of queued batches that can share one write. A batch that removes an order an earlier batch of
 * the run stores starts a new run (a write removes before it stores).
 */
const groups = <W extends Queued>(all: ReadonlyArray<W>): Array<Array<W>> => {
  const out: Array<Array<W>> = []
  let run: Array<W> = []
  let stored = new Set<string>()
  for (const w of all) {
    const removes = w.batch.removeOrders ?? []
    if (run.length > 0 && removes.some((id) => stored.has(id))) {
      out.push(run)
      run = []
      stored = new Set()
    }
    run.push(w)
    for (const o of w.batch.orders ?? []) stored.add(o.id)
  }
  if (run.length > 0) out.push(run)
  return out
}

/** Batches as one: each list in queue order, a fill's entry index moved past the entries before its batch. */
const merge = (group: ReadonlyArray<Queued>): Batch => {
  const orders: Array<NonNullable<Batch["orders"]>[number]> = []
  const removeOrders: Array<string> = []
  const fills: Array<NonNullable<Batch["fills"]>[number]> = []
  const positions: Array<NonNullable<Batch["positions"]>[number]> = []
  const balances: Array<NonNullable<Batch["balances"]>[number]> = []
  const parents: Array<NonNullable<Batch["parents"]>[number]> = []
  const settings: Array<NonNullable<Batch["settings"]>[number]> = []
  const buckets: Array<NonNullable<Batch["buckets"]>[number]> = []
  const entries: Array<JournalEntry> = []
  for (const { batch } of group) {
    const offset = entries.length
    orders.push(...(batch.orders ?? []))
    removeOrders.push(...(batch.removeOrders ?? []))
    for (const f of batch.fills ?? []) fills.push({ fill: f.fill, entry: f.entry < 0 ? f.entry : f.entry + offset })
    positions.push(...(batch.positions ?? []))
    balances.push(...(batch.balances ?? []))
    parents.push(...(batch.parents ?? []))
    settings.push(...(batch.settings ?? []))
    buckets.push(...(batch.buckets ?? []))
    entries.push(...(batch.entries ?? []))
  }
  return { orders, removeOrders, fills, positions, balances, parents, settings, buckets, entries }
}
