/**
 * Sweeps: jobs per second on one worker process (the baseline) and on one per core, and what the cluster's bookkeeping
 * costs per job (each job a persisted message and reply in SQLite) against handing the same jobs to the pool directly.
 * Alone: `node bin/run-ts.js scripts/bench/sweep.ts`.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { availableParallelism, tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { clusterExecutor, localCluster, sweepId } from "../../sim/Sweep/Cluster.ts"
import { backtest } from "../../sim/Backtest.ts"
import { strategyFromModule } from "../../sim/Strategy.ts"
import { loadStrategyModule } from "../../sim/StrategyLoader.ts"
import { JobCache, type JobOutcome, tapeStream } from "../../sim/Sweep/Job.ts"
import { expandJobs, type SweepSpec } from "../../sim/Sweep/Spec.ts"
import type { Executor } from "../../sim/Sweep/Sweep.ts"
import { JOB_HEAP_MB, makePool, type Pool, workerFlags } from "../../sim/Sweep/Workers.ts"
import { builtCli, type Figure, ratio } from "./common.ts"

const STRATEGY = resolve(import.meta.dirname, "../../sim/examples/momentum-trailing.ts")

/** `count` small jobs: the momentum example over generated 10-minute tapes of two markets (at most 12 seeds). */
const jobs = (count: number) => {
  const grid = expandJobs(
    {
      strategy: STRATEGY,
      params: { trail: ["0.02", "0.03", "0.04", "0.05"] },
      seeds: Array.from({ length: Math.min(12, Math.ceil(count / 4)) }, (_, i) => i + 1),
      metric: "net",
      generate: { markets: 2, duration_s: 600 }
    } as unknown as SweepSpec,
    STRATEGY,
    undefined
  )
  // A longer list repeats the grid, each job under an id of its own.
  return Array.from({ length: count }, (_, i) => ({ ...grid[i % grid.length]!, id: `job-${i}` }))
}

/**
 * Jobs each worker runs before the clock starts. A worker's first jobs also compile the code they run (V8 optimizes a
 * function once it is hot, and the setup of each job is hot only after some dozens of them), so the figure is what a
 * sweep of a few hundred jobs spends most of its time at; the warm-up's own rate is reported beside it.
 */
const WARM_JOBS_PER_WORKER = 192

/** Seconds to run the jobs through `execute`, `inFlight` at a time. */
const run = (execute: Executor, list: ReturnType<typeof jobs>, inFlight: number, check = true) =>
  Effect.gen(function* () {
    const start = performance.now()
    const outcomes = yield* Effect.forEach(list, execute, { concurrency: inFlight })
    if (check && outcomes.some((o) => "error" in o)) throw new Error("a bench job failed")
    return (performance.now() - start) / 1000
  })

/**
 * Timed jobs each worker runs. A pool of any size runs as many per worker, so each worker is timed over the same
 * stretch of its life: a worker's jobs keep getting faster for some hundreds of jobs as V8 compiles more of them, and
 * one worker timed over twice the jobs of each of two would be timed further into that.
 */
const TIMED_JOBS_PER_WORKER = 128

/**
 * Jobs per second on a pool of `size` worker processes running `worker` (a built `sweep-worker.js`, else the sources
 * through tsx), once warm (`WARM_JOBS_PER_WORKER` each before the clock starts; then `TIMED_JOBS_PER_WORKER` each),
 * and over that warm-up from their start. `helpers` as `makePool` takes it.
 */
const throughput = (size: number, worker: string | undefined, helpers?: boolean) =>
  Effect.scoped(
    Effect.gen(function* () {
      const list = jobs(TIMED_JOBS_PER_WORKER * size)
      const pool = yield* makePool(size, JOB_HEAP_MB, helpers, worker)
      const warm = jobs(WARM_JOBS_PER_WORKER * size)
      // Twice as many jobs in flight as workers, as `crossbook sweep` keeps: each worker has its next job waiting.
      const cold = warm.length / (yield* run(pool.run, warm, size * 2))
      return { warm: list.length / (yield* run(pool.run, list, size * 2)), cold }
    })
  )

/** Milliseconds per job of the cluster's bookkeeping: trivial jobs through the local cluster, against calling them directly. */
const bookkeeping = (count: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "crossbook-bench-sweep-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      const answer = (id: string): JobOutcome => ({ job: id, params: {}, seed: 1, tape: "none", error: "trivial" })
      const trivial: Pool = { size: 1, run: (job) => Effect.succeed(answer(job.id)) }
      const list = jobs(count)
      const direct = yield* run(trivial.run, list, 32, false)
      const cluster = yield* Layer.build(localCluster(join(dir, "cluster.db"), trivial))
      const execute = yield* clusterExecutor(sweepId(list)).pipe(Effect.provide(cluster))
      yield* run(
        execute,
        list.slice(0, 20).map((j) => ({ ...j, id: `warm-${j.id}` })),
        32,
        false
      )
      const clustered = yield* run(execute, list, 32, false)
      return { perJob: (clustered * 1000) / count, direct: (direct * 1000) / count }
    })
  )

/**
 * What the machine itself gives: an allocating loop (as a backtest allocates) in one process against one per core, in
 * work per second, each process started as a pool of as many sweep workers starts its own (the same V8 flags: with
 * every core busy, garbage is collected on each process's own thread).
 */
const machineScaling = async (processes: number): Promise<number> => {
  const code = `let a = []; let s = 0
process.on("message", (n) => { for (let i = 0; i < n; i++) { a.push({ i, s: String(i) }); if (a.length > 1000) a = []; s += i % 7 }
  process.send(s) })`
  const ask = (child: ChildProcess, n: number) => new Promise((done) => (child.once("message", done), child.send(n)))
  const once = async (k: number) => {
    const children = Array.from({ length: k }, () =>
      spawn(process.execPath, [...workerFlags(JOB_HEAP_MB, k), "-e", code], {
        stdio: ["ignore", "inherit", "inherit", "ipc"]
      })
    )
    await Promise.all(children.map((c) => ask(c, 1)))
    const start = performance.now()
    await Promise.all(children.map((c) => ask(c, 2e7)))
    const seconds = (performance.now() - start) / 1000
    await Promise.all(children.map((c) => new Promise((ended) => (c.once("exit", ended), c.kill()))))
    return k / seconds
  }
  await once(1)
  const one = Math.max(await once(1), await once(1))
  const all = Math.max(await once(processes), await once(processes))
  return all / one
}

/**
 * The most the heap and the buffers outside it held over one job (collected and read at every percent of its events)
 * once its worker holds the tape and the strategy, in MB: the job's own memory, on a generated tape of two markets
 * over `durationS`.
 */
const jobHeapMb = async (durationS: number) => {
  const gc = (globalThis as { gc?: () => void }).gc
  const job = { ...jobs(1)[0]!, tape: { kind: "generated" as const, markets: 2, durationS } }
  const cache = new JobCache()
  tapeStream(job, cache)
  const module = await loadStrategyModule(job.strategy)
  const run = async (sample: () => void) => {
    const loaded = strategyFromModule(module, job.params)
    if ("error" in loaded) throw new Error(loaded.error)
    await Effect.runPromise(
      backtest({ tape: tapeStream(job, cache), strategy: loaded.strategy, seed: job.seed, onProgress: sample })
    )
  }
  // The heap and the buffers outside it (the event log's, a stream's): what the job holds wherever it sits.
  const held = () => {
    const m = process.memoryUsage()
    return m.heapUsed + m.arrayBuffers
  }
  await run(() => {})
  gc?.()
  const before = held()
  let peak = before
  await run(() => {
    gc?.()
    peak = Math.max(peak, held())
  })
  return { mb: (peak - before) / 1e6, keptMb: cache.keptBytes / 1e6, keptEvents: cache.decodedEvents }
}

export const sweepFigures = async (): Promise<Array<Figure>> => {
  const cores = availableParallelism()
  // One worker and one per core in turn, each the best of two, with the machine's own scaling measured between: a
  // change of load on a shared machine falls on both sides of the ratio rather than on one.
  let one = { warm: 0, cold: 0 }
  let all = { warm: 0, cold: 0 }
  // One worker as each worker of a full pool runs: its garbage collected on its own thread, with no core to spare.
  let alone = { warm: 0, cold: 0 }
  let machine = 0
  const best = (a: typeof one, b: typeof one) => ({ warm: Math.max(a.warm, b.warm), cold: Math.max(a.cold, b.cold) })
  // The workers as the command ships them: built from the current sources (`crossbook sweep` runs dist/).
  const worker = join(await builtCli(), "sweep-worker.js")
  for (let round = 0; round < 2; round++) {
    one = best(one, await Effect.runPromise(throughput(1, worker)))
    machine = Math.max(machine, await machineScaling(cores))
    all = best(all, await Effect.runPromise(throughput(cores, worker)))
    alone = best(alone, await Effect.runPromise(throughput(1, worker, false)))
  }
  // The same full pool running the sources through tsx, as a sweep started from them (`npm run dev`) does.
  const sources = await Effect.runPromise(throughput(cores, undefined))
  const cost = await Effect.runPromise(bookkeeping(400))
  const short = await jobHeapMb(600)
  const long = await jobHeapMb(4 * 3600)
  return [
    {
      name: "sweep.jobs_per_s",
      value: Number(all.warm.toFixed(3)),
      unit: "jobs/s",
      baseline: Number(one.warm.toFixed(3)),
      ratio: ratio(all.warm, one.warm),
      target: `ratio ≥ ${(0.8 * cores).toFixed(1)} (0.8 × ${cores} cores)`,
      workers: cores,
      jobs: TIMED_JOBS_PER_WORKER * cores,
      timed_jobs_per_worker: TIMED_JOBS_PER_WORKER,
      warm_up_jobs_per_worker: WARM_JOBS_PER_WORKER,
      // The same pools over their warm-up, from their start.
      warm_up_jobs_per_s: Number(all.cold.toFixed(3)),
      warm_up_baseline: Number(one.cold.toFixed(3)),
      machine_alloc_scaling: Number(machine.toFixed(3)),
      of_machine: ratio(all.warm / one.warm, machine),
      of_machine_target: ">= 0.9 of machine_alloc_scaling",
      // The baseline's worker has the second core for V8's collector threads; a worker of the full pool has not.
      one_worker_own_thread_gc: Number(alone.warm.toFixed(3)),
      ratio_to_own_thread_gc: ratio(all.warm, alone.warm),
      worker: "built (dist/sweep-worker.js)",
      // One run, not the best of two: how much slower the workers are when they run the sources through tsx.
      from_sources_jobs_per_s: Number(sources.warm.toFixed(3)),
      built_to_sources: ratio(all.warm, sources.warm)
    },
    {
      name: "sweep.job_heap_mb",
      value: Number(long.mb.toFixed(1)),
      unit: "MB",
      baseline: 64,
      ratio: ratio(long.mb, 64),
      target: "<= 64 MB whatever the tape's length",
      tape: "generated, 2 markets, 4 hours",
      kept_tape_mb: Number(long.keptMb.toFixed(1)),
      ten_minute_tape_mb: Number(short.mb.toFixed(1)),
      // The 10-minute tape is short enough for its worker to keep its events decoded; the 4-hour one is streamed.
      ten_minute_tape_kept_events: short.keptEvents,
      long_tape_kept_events: long.keptEvents,
      note: "live heap and buffers outside it over one job once its worker holds the strategy and the tape (as Arrow bytes, outside the heap; a short tape's events decoded)"
    },
    {
      name: "sweep.cluster_ms_per_job",
      value: Number(cost.perJob.toFixed(3)),
      unit: "ms",
      baseline: Number(cost.direct.toFixed(4)),
      ratio: ratio(cost.perJob, Math.max(cost.direct, 1e-6)),
      note: "trivial jobs through the in-process cluster (persisted message + reply in SQLite) vs called directly"
    }
  ]
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const f of await sweepFigures()) console.log(JSON.stringify(f))
}
