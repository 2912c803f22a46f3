/**
 * Which markets the engine needs streamed: those with a live parent. A venue that streams books on request (its
 * optional `watch`) is asked to while the first parent of a market lives, and let go once the last one has ended.
 */
import { type Context, Effect, ExecutionStrategy, Exit, Queue, Schedule, Scope } from "effect"
import type { VenueGateway } from "../Services/VenueGateway.ts"
import { marketsOf, type Runtime } from "./Runtime.ts"
import * as Id from "../Domain/Ids.ts"

/**
 * What the map holds of a live parent known by its summary alone, until its first use reads its state whole: the same
 * one for every such parent of one type on one market.
 */
export class Summarized {
  constructor(
    readonly type: string,
    readonly marketId: string
  ) {}
}

type Held = Runtime | Summarized

const marketsOfHeld = (held: Held): ReadonlyArray<string> =>
  held instanceof Summarized ? [held.marketId] : marketsOf(held)

/**
 * The live parents by id, counting them per market and telling when a market gains its first or loses its last. A
 * parent restored from its summary is read whole the first time it is asked for (`get`, or any walk over the values),
 * through the reader given to `holdSummarized`; `working` walks without reading any.
 */
export class ParentsByMarket extends Map<string, Runtime> {
  private readonly perMarket = new Map<string, number>()
  private listener: ((marketId: string, watched: boolean) => void) | undefined
  private read: ((id: string) => Runtime) | undefined
  /** How many are held by their summary alone. */
  private summarized = 0

  /** From now on `listener` hears each market's first parent coming and last parent going. */
  listen(listener: (marketId: string, watched: boolean) => void): void {
    this.listener = listener
  }

  /** Whether a market has a live parent now. */
  watched(marketId: string): boolean {
    return this.perMarket.has(marketId)
  }

  /** Markets that have a live parent now. */
  markets(): ReadonlyArray<string> {
    return [...this.perMarket.keys()]
  }

  /**
   * Holds a live parent not held yet (of `held`'s type, on its one market) without its state; `read` gives the parent
   * whole when first asked for (the same for every parent held so).
   */
  holdSummarized(id: string, held: Summarized, read: (id: string) => Runtime): void {
    this.read = read
    const size = super.size
    super.set(id, held as unknown as Runtime)
    if (super.size === size) throw new Error(`the parent ${id} is held already`)
    this.summarized += 1
    this.add(held.marketId)
  }

  /** How many parents are held by their summary alone (not yet read whole). */
  get summarizedCount(): number {
    return this.summarized
  }

  /** The live parents' ids and types, none of them read whole. */
  *working(): IterableIterator<readonly [id: string, type: string]> {
    for (const [id, held] of super.entries() as IterableIterator<[string, Held]>) {
      if (held instanceof Summarized || !held.done) yield [id, held.type]
    }
  }

  override get(id: string): Runtime | undefined {
    const held = super.get(id) as Held | undefined
    return held instanceof Summarized ? this.whole(id) : held
  }

  private whole(id: string): Runtime {
    const rt = this.read!(id)
    // The same markets: the counts stand.
    super.set(id, rt)
    this.summarized -= 1
    return rt
  }

  /** Every parent read whole first: a walk over them sees each as it is. */
  private wholeAll(): void {
    if (this.summarized === 0) return
    for (const [id, held] of super.entries() as IterableIterator<[string, Held]>) {
      if (held instanceof Summarized) this.whole(id)
    }
  }

  override values(): MapIterator<Runtime> {
    this.wholeAll()
    return super.values()
  }

  override entries(): MapIterator<[string, Runtime]> {
    this.wholeAll()
    return super.entries()
  }

  override [Symbol.iterator](): MapIterator<[string, Runtime]> {
    return this.entries()
  }

  override forEach(callback: (value: Runtime, key: string, map: Map<string, Runtime>) => void, thisArg?: unknown) {
    this.wholeAll()
    super.forEach(callback, thisArg)
  }

  override set(id: string, rt: Runtime): this {
    const before = super.get(id) as Held | undefined
    if (before !== undefined) {
      if (before instanceof Summarized) this.summarized -= 1
      for (const marketId of marketsOfHeld(before)) this.drop(marketId)
    }
    super.set(id, rt)
    // the base constructor calls set before the fields exist
    if (this.perMarket === undefined) return this
    const members = rt.members ?? undefined
    if (members === undefined) this.add(rt.marketId)
    else for (const member of members) this.add(member.marketId)
    return this
  }

  override delete(id: string): boolean {
    const before = super.get(id) as Held | undefined
    if (before === undefined) return false
    super.delete(id)
    if (before instanceof Summarized) this.summarized -= 1
    for (const marketId of marketsOfHeld(before)) this.drop(marketId)
    return true
  }

  override clear(): void {
    for (const id of [...this.keys()]) this.delete(id)
  }

  private add(marketId: string): void {
    const n = this.perMarket.get(marketId) ?? 0
    this.perMarket.set(marketId, n + 1)
    if (n === 0) this.listener?.(marketId, true)
  }

  private drop(marketId: string): void {
    const n = this.perMarket.get(marketId) ?? 0
    if (n <= 1) {
      this.perMarket.delete(marketId)
      if (n === 1) this.listener?.(marketId, false)
    } else this.perMarket.set(marketId, n - 1)
  }
}

/**
 * Keeps each venue's `watch` open for the markets with live parents, for as long as the calling scope lasts. A
 * watch that fails (the venue unreachable) is tried again with backoff until it holds or the market is let go.
 */
export const watchLiveMarkets = (
  parents: ParentsByMarket,
  gateway: Context.Tag.Service<typeof VenueGateway>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const changes = yield* Queue.unbounded<{ readonly marketId: string; readonly watched: boolean }>()
    const open = new Map<string, Scope.CloseableScope>()
    const outer = yield* Effect.scope
    parents.listen((marketId, watched) => Queue.unsafeOffer(changes, { marketId, watched }))
    for (const marketId of parents.markets()) Queue.unsafeOffer(changes, { marketId, watched: true })

    const start = (marketId: string) =>
      Effect.gen(function* () {
        const parts = Id.parseMarketId(marketId)
        const venue = parts === undefined ? undefined : gateway.venue(parts.venue)
        if (parts === undefined || venue?.watch === undefined || open.has(marketId)) return
        const watch = venue.watch
        const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
        open.set(marketId, scope)
        yield* watch([parts.native]).pipe(
          Effect.tapError((e) => Effect.logWarning(`cannot stream ${marketId} yet: ${e.reason}`)),
          Effect.retry(Schedule.exponential("500 millis").pipe(Schedule.union(Schedule.spaced("30 seconds")))),
          Scope.extend(scope),
          Effect.forkIn(scope)
        )
      })
    const stop = (marketId: string) =>
      Effect.gen(function* () {
        const scope = open.get(marketId)
        if (scope === undefined) return
        open.delete(marketId)
        yield* Scope.close(scope, Exit.void)
      })

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(Queue.take(changes), ({ marketId, watched }) => (watched ? start(marketId) : stop(marketId)))
      )
    )
  })
