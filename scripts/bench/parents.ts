/**
 * Reaction time (a book update that fires a stop → the child's placement call), heap per live parent, and the time
 * to restore waiting parents from SQLite at start.
 */
import Database from "better-sqlite3"
import { Context, Effect, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance, PerformanceObserver } from "node:perf_hooks"
import { DiscreteClock } from "../../sim/DiscreteClock.ts"
import { drivenOverTape } from "../../sim/Replay.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { Engine } from "../../src/Engine/Engine.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import type { Desk } from "../../src/Trading/Desk.ts"
import { submitOrder } from "../../src/Orders.ts"
import { benchTape, mixedParents, type Tape } from "./engine.ts"
import { type Figure, ratio } from "./common.ts"
import { asMarketId } from "../../src/Domain/Ids.ts"

const gc = (globalThis as { gc?: () => void }).gc

/** Parents placed before the heap is first read. */
const WARM_UP = 2_000

/** A driven engine over a tape venue with the tape's first moment applied, built in `scope`. */
const services = (tape: Tape, store: Layer.Layer<OrderStore>, scope: Scope.Scope, clock: DiscreteClock) =>
  Scope.extend(drivenOverTape(tape, { clock, store, startingCash: "1000000000" }), scope)

const place = (context: Context.Context<Desk | Engine>, tape: Tape, count: number, markets?: ReadonlyArray<string>) =>
  Effect.forEach(
    mixedParents(tape, count, 0, markets),
    // A refusal fails the bench: a figure of fewer parents than it names would say nothing.
    (item) => Effect.orDie(submitOrder(item.order, "sim:default", "bench").pipe(Effect.provide(context))),
    { discard: true }
  )

/** SQLite on a file in a fresh directory, as `serve` keeps it. */
const sqlStore = (dir: string) =>
  OrderStore.layerSql.pipe(Layer.provide(engineDatabase(join(dir, "engine.db"))), Layer.orDie)

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/**
 * Trials before the timed ones: a warm engine's reaction is what a server that has run a while gives. The first
 * thousands compile the path; then V8 drops code it optimized while every sum was a small integer, once sums the
 * trials build (the cash their sales bring in) pass 2^30 millionths at about trial 2,000, and optimizes it again some
 * 1,500 trials later. Until then the median is 30–50% higher and the tail twice as long.
 */
export const WARM_TRIALS = 4_000

/**
 * Reaction: with `background` parents live on other markets, a stop one tick under the bid; a view whose bid reaches
 * it goes to the driver, and the time to the tape venue's placement call is taken, over `trials` after `warm` untimed
 * ones. Baseline: the same view through the driver with no stop to fire (what the lookup alone costs). `cold`: the
 * figures of the first `trials` (less their first tenth), as this bench took them before it warmed up.
 */
export const reaction = (background: number, trials: number, onDisk = false, warm = WARM_TRIALS) =>
  Effect.gen(function* () {
    // The stops fire on a market of their own; the background parents live on the other 100.
    const tape = benchTape(101, 5)
    const scope = yield* Scope.make()
    const clock = new DiscreteClock(tape.events[0]?.ts ?? 0)
    const dir = mkdtempSync(join(tmpdir(), "crossbook-bench-"))
    yield* Scope.addFinalizer(
      scope,
      Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
    const store = onDisk ? sqlStore(dir) : OrderStore.layerMemory
    const { venue, context, engine } = yield* services(tape, store, scope, clock)
    const others = tape.header.markets.slice(1).map((m) => m.id)
    yield* place(context, tape, background, others)
    // The garbage of placing the background parents is collected first, as a server that started a while ago has
    // collected its start's: a major collection it would start in the middle of the trials marks in steps that fall
    // into the samples (the GC observer sees only the final pause). What the trials make is theirs and stays in.
    gc?.()
    let placedAt = 0
    const placeOrder = venue.placeOrder
    ;(venue as { placeOrder: typeof placeOrder }).placeOrder = (r) => {
      if (placedAt === 0) placedAt = performance.now()
      return placeOrder(r)
    }
    // The desk places on a tape venue in plain code when it can (the memory store): that call is stamped the same way.
    const now = venue.now!
    const placeNow = now.placeOrder
    ;(now as { placeOrder: typeof placeNow }).placeOrder = (r, at) => {
      if (placedAt === 0) placedAt = performance.now()
      return placeNow(r, at)
    }
    const market = asMarketId(tape.header.markets[0]!.id)!
    const tick = F.of("0.01")
    const samples: Array<number> = []
    /** Each sample's window, to tell afterwards which of them a garbage collection fell into. */
    const windows: Array<readonly [number, number]> = []
    const idle: Array<number> = []
    const collections: Array<readonly [number, number]> = []
    const observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) collections.push([e.startTime, e.startTime + e.duration])
    })
    observer.observe({ entryTypes: ["gc"] })
    /** The index in `samples` of the first timed trial's. */
    let timedFrom = 0
    /** The number of samples of the first `trials` trials. */
    let coldEnd = 0
    for (let i = 0; i < warm + trials; i++) {
      if (i === warm) timedFrom = samples.length
      if (i === trials) coldEnd = samples.length
      const view = venue.view(market)!
      const bid = view.bestBid ?? F.of("0.5")
      const stop = F.sub(bid, tick)
      yield* engine.create(
        {
          account: "sim:default",
          market_id: market,
          side: "sell",
          type: "stop_market",
          amount: "1",
          stop_price: F.format(stop),
          params: {}
        },
        "bench"
      )
      // A view that wakes nobody: the cost of looking.
      const quiet = { ...view, bestBid: bid }
      let start = performance.now()
      const none = engine.marketView(market, quiet, clock.unsafeCurrentTimeMillis())
      idle.push(performance.now() - start)
      if (none !== null) yield* none
      // The view comes to a fiber that has just resumed, as a live engine's does (it waits on its venues' queues):
      // run straight on from the loop's own work, the runtime's turn every 2,048 operations would fall into some
      // samples at a fixed period and time the event loop's turn instead of the reaction.
      yield* Effect.yieldNow()
      placedAt = 0
      start = performance.now()
      const work = engine.marketView(market, { ...view, bestBid: stop }, clock.unsafeCurrentTimeMillis())
      if (work !== null) yield* work
      if (placedAt > 0) {
        samples.push(placedAt - start)
        windows.push([start, placedAt])
      }
    }
    yield* Scope.close(scope, Effect.void as never)
    // Entries reach the observer after the turn that made them.
    yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    for (const e of observer.takeRecords()) collections.push([e.startTime, e.startTime + e.duration])
    observer.disconnect()
    const from = warm > 0 ? timedFrom : Math.floor(samples.length / 10)
    const sorted = samples.slice(from).sort((a, b) => a - b)
    const idleSorted = idle.slice(warm > 0 ? warm : trials / 10).sort((a, b) => a - b)
    const cold = warm >= trials ? samples.slice(Math.floor(coldEnd / 10), coldEnd).sort((a, b) => a - b) : sorted
    // The samples no collection fell into: what the tail is without garbage collection.
    const overlaps = ([start, end]: readonly [number, number]) =>
      collections.some(([gcStart, gcEnd]) => gcStart < end && gcEnd > start)
    const clean = samples
      .slice(from)
      .filter((_, i) => !overlaps(windows[from + i]!))
      .sort((a, b) => a - b)
    return {
      fired: sorted.length,
      p50: percentile(sorted, 0.5) * 1000,
      p99: percentile(sorted, 0.99) * 1000,
      coldP50: percentile(cold, 0.5) * 1000,
      coldP99: percentile(cold, 0.99) * 1000,
      idleP50: percentile(idleSorted, 0.5) * 1000,
      withGc: sorted.length - clean.length,
      p99WithoutGc: percentile(clean, 0.99) * 1000
    }
  })

/**
 * The machine's own tail at a given median: plain code (no Effect, no engine) that looks records up in a map of
 * 10,000 and allocates new ones, sized so its median is `medianUs`, timed `samples` times with other work between.
 * Its p99 is what any code with that median gets on this machine (scheduling, caches, the young generation's
 * collections), the floor under the reaction's p99.
 */
export const plainTail = (medianUs: number, samples: number) => {
  const table = new Map<string, { readonly id: string; readonly n: number }>()
  for (let i = 0; i < 10_000; i++) table.set(`o_${i}`, { id: `o_${i}`, n: i })
  let sink = 0
  const work = (size: number) => {
    const made: Array<{ readonly id: string; readonly n: number }> = []
    for (let i = 0; i < size; i++) {
      const hit = table.get(`o_${(i * 7919 + sink) % 10_000}`)!
      made.push({ id: hit.id, n: hit.n + i })
    }
    sink = (sink + made.length) % 10_000
  }
  const timed = (size: number) => {
    const start = performance.now()
    work(size)
    return (performance.now() - start) * 1000
  }
  const run = (size: number, n: number) => {
    const xs: Array<number> = []
    for (let i = 0; i < n; i++) {
      xs.push(timed(size))
      work(size)
    }
    return xs.sort((a, b) => a - b)
  }
  let size = 64
  for (let round = 0; round < 10; round++) {
    size = Math.max(1, Math.round((size * medianUs) / percentile(run(size, 201), 0.5)))
  }
  const xs = run(size, samples)
  return { p50: percentile(xs, 0.5), p99: percentile(xs, 0.99) }
}

/**
 * Heap after placing `count` mixed parents, less the heap before, per parent still live: the engine's parents, the
 * desk's records of them and their children, on the SQLite store `serve` uses (the journal lives on disk).
 */
export const heapPerParent = (count: number) =>
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "crossbook-bench-"))
    try {
      const tape = benchTape(100, 5)
      const scope = yield* Scope.make()
      const clock = new DiscreteClock(tape.events[0]?.ts ?? 0)
      const { context, engine } = yield* services(tape, sqlStore(dir), scope, clock)
      // A first round of parents compiles the code every later one runs and fills the bounded caches (the finished
      // orders kept at hand): what the heap gains after it is what each further parent costs.
      yield* place(context, tape, WARM_UP)
      for (let i = 0; i < 1000; i++) yield* Effect.yieldNow()
      const liveBefore = yield* engine.liveCount
      gc?.()
      const before = process.memoryUsage().heapUsed
      yield* place(context, tape, count)
      // What the placements started (venue answers, child updates) runs before the heap is read.
      for (let i = 0; i < 1000; i++) yield* Effect.yieldNow()
      gc?.()
      const after = process.memoryUsage().heapUsed
      const live = (yield* engine.liveCount) - liveBefore
      yield* Scope.close(scope, Effect.void as never)
      return { live, bytesPerParent: (after - before) / live }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

/**
 * What any start that holds the parents in memory must do at least: the same live parents' states read raw from the
 * same file (one SELECT on a connection of its own) and each parsed and kept. Answers seconds.
 */
const rawRead = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    gc?.()
    const start = performance.now()
    const kept: Array<unknown> = []
    for (const row of db.prepare("SELECT state FROM parents WHERE live = 1 ORDER BY id").raw(true).all()) {
      kept.push(JSON.parse((row as [string])[0]))
    }
    const seconds = (performance.now() - start) / 1000
    if (kept.length === 0) throw new Error("no live parents to read")
    return seconds
  } finally {
    db.close()
  }
}

/**
 * Places `count` waiting stops on a SQLite store, then times building the desk and engine again on that file (best
 * of `rounds`), each after the raw read of the same rows (`rawRead`, best of as many).
 */
export const restore = (count: number, keep?: string, rounds = 2) =>
  Effect.gen(function* () {
    const dir = keep ?? mkdtempSync(join(tmpdir(), "crossbook-bench-"))
    try {
      const tape = benchTape(100, 5)
      const clock = new DiscreteClock(tape.events[0]?.ts ?? 0)
      const first = yield* Scope.make()
      const { context } = yield* services(tape, sqlStore(dir), first, clock)
      const markets = tape.header.markets.map((m) => asMarketId(m.id)!)
      const engine = Context.get(context, Engine)
      for (let k = yield* engine.liveCount; k < count; k++) {
        yield* engine.create(
          {
            account: "sim:default",
            market_id: markets[k % markets.length]!,
            side: k % 2 === 0 ? "sell" : "buy",
            type: "stop_market",
            amount: "1",
            stop_price: k % 2 === 0 ? "0.01" : "0.99",
            params: {}
          },
          "bench"
        )
      }
      yield* Scope.close(first, Effect.void as never)
      let seconds = Number.POSITIVE_INFINITY
      let baseline = Number.POSITIVE_INFINITY
      let live = 0
      for (let round = 0; round < rounds; round++) {
        baseline = Math.min(baseline, rawRead(join(dir, "engine.db")))
        gc?.()
        const again = yield* Scope.make()
        const start = performance.now()
        const started = yield* services(tape, sqlStore(dir), again, clock)
        seconds = Math.min(seconds, (performance.now() - start) / 1000)
        live = yield* started.engine.liveCount
        yield* Scope.close(again, Effect.void as never)
      }
      return { live, seconds, baseline }
    } finally {
      if (keep === undefined) rmSync(dir, { recursive: true, force: true })
    }
  })

export const parentFigures = async (): Promise<ReadonlyArray<Figure>> => {
  // Restore first: a start is timed best in a process that has not yet piled up garbage of its own.
  const restored = await Effect.runPromise(restore(100_000))
  const heap = await Effect.runPromise(heapPerParent(10_000))
  const r = await Effect.runPromise(reaction(10_000, 2_000))
  const disk = await Effect.runPromise(reaction(10_000, 2_000, true))
  const floor = plainTail(r.p50, 1_800)
  return [
    {
      name: "engine.reaction_p99_us",
      value: Number(r.p99.toFixed(1)),
      unit: "µs",
      baseline: Number(r.idleP50.toFixed(2)),
      ratio: ratio(r.p99, r.idleP50),
      target: "p99 < 50 µs",
      p50_us: Number(r.p50.toFixed(1)),
      store: "memory (the simulator's)",
      sqlite_p50_us: Number(disk.p50.toFixed(1)),
      sqlite_p99_us: Number(disk.p99.toFixed(1)),
      // The samples a garbage collection fell into, and the p99 of the others.
      samples_with_gc: r.withGc,
      p99_without_gc_us: Number(r.p99WithoutGc.toFixed(1)),
      sqlite_samples_with_gc: disk.withGc,
      sqlite_p99_without_gc_us: Number(disk.p99WithoutGc.toFixed(1)),
      // Plain code with the same median, timed as often: the p99 this machine gives any code at that median.
      plain_code_p50_us: Number(floor.p50.toFixed(1)),
      plain_code_p99_us: Number(floor.p99.toFixed(1)),
      fired: r.fired,
      // Timed after as many untimed trials (WARM_TRIALS): the same figures over the first trials, before the engine
      // was warm, as this bench took them until it warmed up first.
      warm_up_trials: WARM_TRIALS,
      cold_p50_us: Number(r.coldP50.toFixed(1)),
      cold_p99_us: Number(r.coldP99.toFixed(1)),
      background_parents: 10_000
    },
    {
      name: "engine.heap_per_parent_bytes",
      value: Math.round(heap.bytesPerParent),
      unit: "bytes",
      baseline: 2048,
      ratio: ratio(heap.bytesPerParent, 2048),
      target: "<= 2048 bytes",
      live: heap.live,
      gc: gc !== undefined
    },
    {
      name: "engine.restore_100k_s",
      value: Number(restored.seconds.toFixed(3)),
      unit: "s",
      // Against the same live parents' states read raw from the same file and parsed, in this process.
      baseline: Number(restored.baseline.toFixed(3)),
      ratio: ratio(restored.seconds, restored.baseline),
      target: "< 1 s",
      live: restored.live
    }
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await parentFigures()) console.log(JSON.stringify(f))
}
