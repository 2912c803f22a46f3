/**
 * A pool of worker threads that run sweep jobs, one job per worker at a time (one worker per core by default). From
 * the sources each thread loads TypeScript through tsx as the command does; from the build it loads
 * `dist/sweep-worker.js`. A thread that dies fails its job with the reason and is replaced.
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import { existsSync } from "node:fs"
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import type { JobOutcome } from "./Job.ts"
import type { Job } from "./Spec.ts"

/** The number of workers when none is asked for: one per core. */
export const defaultWorkers = (): number => availableParallelism()

/**
 * The heap a worker may take (MB), so one job's memory is bounded: a job that outgrows it ends its thread, fails alone
 * with the reason, and the thread is replaced. A job streams its tape and keeps no event log, so it needs far less.
 */
export const JOB_HEAP_MB = 256

/**
 * A worker's young generation: a backtest makes short-lived garbage at a high rate, and a larger nursery collects it
 * less often and promotes less of it, so two workers leave each other more of the machine (`sweep.jobs_per_s`, two
 * workers against one: 1.22 → 1.39 on 2 cores).
 */
const YOUNG_MB = 96

/** How a worker thread starts: the built worker beside the bundle, or the TypeScript source through tsx. */
const spawn = (heapMb: number): Worker => {
  const here = import.meta.url
  const resourceLimits = { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: YOUNG_MB }
  if (/\.ts$/.test(new URL(here).pathname)) {
    const source = new URL("./Worker.ts", here).href
    return new Worker(
      `import("tsx/esm/api").then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}) })`,
      { eval: true, resourceLimits }
    )
  }
  const built = ["./sweep-worker.js", "../sweep-worker.js"]
    .map((path) => new URL(path, here))
    .find((url) => existsSync(url))
  if (built === undefined) throw new Error("the sweep worker is not built: run `npm run build`")
  return new Worker(built, { resourceLimits })
}

interface Slot {
  worker: Worker
  busy: { readonly job: Job; readonly done: (outcome: JobOutcome | Error) => void } | undefined
}

export interface Pool {
  readonly size: number
  /** Runs a job on the next free worker; fails only when its thread died. */
  readonly run: (job: Job) => Effect.Effect<JobOutcome, Error>
}

/** A pool of `size` threads, each job's heap bounded to `heapMb`, ended with its scope. */
export const makePool = (size: number, heapMb = JOB_HEAP_MB): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const waiting: Array<{ readonly job: Job; readonly done: (outcome: JobOutcome | Error) => void }> = []
      const slots: Array<Slot> = []
      let closed = false

      const next = (slot: Slot) => {
        const task = waiting.shift()
        slot.busy = task
        if (task !== undefined) slot.worker.postMessage(task.job)
      }

      const start = (slot: Slot) => {
        const worker = spawn(heapMb)
        slot.worker = worker
        worker.on("message", (message: { job: string; line?: string; error?: string }) => {
          const task = slot.busy
          if (task === undefined || task.job.id !== message.job) return
          task.done(
            message.line !== undefined
              ? (JSON.parse(message.line) as JobOutcome)
              : new Error(message.error ?? "the worker answered nothing")
          )
          next(slot)
        })
        const died = (reason: string) => {
          if (slot.worker !== worker) return
          const task = slot.busy
          slot.busy = undefined
          task?.done(new Error(`the worker running ${task.job.id} stopped (${reason})`))
          if (!closed) {
            start(slot)
            next(slot)
          }
        }
        worker.on("error", (error) => died(error.message))
        worker.on("exit", (code) => died(`exit code ${code}`))
      }

      for (let i = 0; i < size; i++) {
        const slot: Slot = { worker: undefined as unknown as Worker, busy: undefined }
        start(slot)
        slots.push(slot)
      }

      const pool: Pool = {
        size,
        run: (job) =>
          Effect.async<JobOutcome, Error>((resume) => {
            const done = (outcome: JobOutcome | Error) =>
              resume(outcome instanceof Error ? Effect.fail(outcome) : Effect.succeed(outcome))
            const free = slots.find((s) => s.busy === undefined)
            if (free === undefined) waiting.push({ job, done })
            else {
              free.busy = { job, done }
              free.worker.postMessage(job)
            }
          })
      }
      return { pool, close: () => ((closed = true), Promise.all(slots.map((s) => s.worker.terminate()))) }
    }),
    (made) => Effect.promise(() => made.close())
  ).pipe(Effect.map((made) => made.pool))
