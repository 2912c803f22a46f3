/**
 * A pool of worker processes that run sweep jobs (one worker per core by default), each one job at a time with the
 * next already sent. Each worker is a Node process of its own with its own heap and garbage collector, so one
 * worker's collections take nothing from another's core. From the sources a worker loads TypeScript through tsx as
 * the command does; from the build it runs `dist/sweep-worker.js`. A worker that dies fails the job it ran with the
 * reason and is replaced; the job it held next runs on the new one.
 */
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import { type ChildProcess, fork } from "node:child_process"
import { existsSync } from "node:fs"
import { availableParallelism } from "node:os"
import { fileURLToPath } from "node:url"
import type { JobOutcome } from "./Job.ts"
import type { Job } from "./Spec.ts"

/** The number of workers when none is asked for: one per core. */
export const defaultWorkers = (): number => availableParallelism()

/**
 * The heap a worker may take (MB), so one job's memory is bounded: a job that outgrows it ends its worker, fails
 * alone with the reason, and the worker is replaced. A job streams its tape and keeps no event log, so it needs far
 * less.
 */
export const JOB_HEAP_MB = 256

/**
 * A worker's young generation, each of its two halves (MB): a backtest makes short-lived garbage at a high rate, and
 * a larger nursery collects it less often and promotes less of it.
 */
const SEMI_SPACE_MB = 32

/**
 * The V8 flags a worker process runs with, its old generation bounded to `heapMb` and started at half of it (a worker
 * holds little between jobs, and V8 would size its old generation from that and collect it twice as often as it
 * needs). When the pool's `workers` fill every core, each collects its garbage on its own thread: there is no idle
 * core for V8's helper threads, which would only take time from the other workers. A pool with a core to spare keeps
 * them, unless `helpers` says otherwise.
 */
export const workerFlags = (heapMb: number, workers = 1, helpers = workers < availableParallelism()): Array<string> => [
  `--max-old-space-size=${heapMb}`,
  `--initial-old-space-size=${Math.floor(heapMb / 2)}`,
  `--max-semi-space-size=${SEMI_SPACE_MB}`,
  ...(helpers ? [] : ["--single-threaded-gc"])
]

/**
 * How a worker process starts: `entry` when given (a built `sweep-worker.js`), else the built worker beside the
 * bundle, or the TypeScript source through tsx.
 */
const spawn = (heapMb: number, workers: number, helpers: boolean | undefined, entry?: string): ChildProcess => {
  const here = import.meta.url
  const options = {
    execArgv: workerFlags(heapMb, workers, helpers),
    serialization: "advanced" as const,
    stdio: ["ignore", "inherit", "pipe", "ipc"] as Array<"ignore" | "inherit" | "pipe" | "ipc">
  }
  if (entry !== undefined) return fork(entry, [], options)
  if (/\.ts$/.test(new URL(here).pathname)) {
    const runTs = fileURLToPath(new URL("../../bin/run-ts.js", here))
    return fork(runTs, [fileURLToPath(new URL("./Worker.ts", here))], options)
  }
  const built = ["./sweep-worker.js", "../sweep-worker.js"]
    .map((path) => new URL(path, here))
    .find((url) => existsSync(url))
  if (built === undefined) throw new Error("the sweep worker is not built: run `npm run build`")
  return fork(fileURLToPath(built), [], options)
}

/** What V8 prints when a heap outgrows its bound, just before the process ends (not passed on). */
const OUT_OF_MEMORY = /<--- Last few GCs --->|heap out of memory|Reached heap limit/

interface Task {
  readonly job: Job
  readonly done: (outcome: JobOutcome | Error) => void
}

interface Slot {
  worker: ChildProcess
  /** The jobs sent to the worker and not yet answered: the one it runs, then the one it starts next. */
  readonly sent: Array<Task>
}

/**
 * Jobs a worker holds at once: the one it runs and the next, so it goes on without waiting for this process, which
 * shares the cores with the workers and answers only when the scheduler gives it one.
 */
const SENT_PER_WORKER = 2

export interface Pool {
  readonly size: number
  /** Runs a job on the worker with the fewest sent, once one has room; fails only when its worker died running it. */
  readonly run: (job: Job) => Effect.Effect<JobOutcome, Error>
}

/**
 * A pool of `size` worker processes, each job's heap bounded to `heapMb`, ended with its scope. `helpers` decides
 * whether V8 may collect a worker's garbage on threads of its own (by default when the pool leaves a core free).
 * `entry`: the path of a built `sweep-worker.js` the workers run, wherever this module runs from (the benchmark runs
 * from the sources and measures the workers as the command ships them).
 */
export const makePool = (
  size: number,
  heapMb = JOB_HEAP_MB,
  helpers?: boolean,
  entry?: string
): Effect.Effect<Pool, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const waiting: Array<Task> = []
      const slots: Array<Slot> = []
      let closed = false

      const send = (slot: Slot, task: Task) => {
        slot.sent.push(task)
        slot.worker.send(task.job)
      }
      /** Jobs that wait go to workers with room, the least loaded first. */
      const dispatch = () => {
        for (let load = 0; load < SENT_PER_WORKER; load++) {
          for (const slot of slots) {
            if (waiting.length === 0) return
            if (slot.sent.length === load) send(slot, waiting.shift()!)
          }
        }
      }

      const start = (slot: Slot) => {
        const worker = spawn(heapMb, size, helpers, entry)
        slot.worker = worker
        // The worker's errors go on to this process's; the last of them tells a heap that ran out from a crash.
        let said = ""
        worker.stderr?.on("data", (chunk: Buffer) => {
          said = (said + chunk.toString()).slice(-4096)
          if (!closed && !OUT_OF_MEMORY.test(said)) process.stderr.write(chunk)
        })
        worker.on("message", (message: { job: string; line?: string; error?: string }) => {
          const task = slot.sent[0]
          if (task === undefined || task.job.id !== message.job) return
          slot.sent.shift()
          dispatch()
          task.done(
            message.line !== undefined
              ? (JSON.parse(message.line) as JobOutcome)
              : new Error(message.error ?? "the worker answered nothing")
          )
        })
        const died = (reason: string) => {
          if (slot.worker !== worker) return
          // The job it ran fails, alone: those it held after it never started, and go first to the next worker.
          const [task, ...after] = slot.sent.splice(0)
          if (closed) for (const held of after) held.done(new Error(`the pool closed before ${held.job.id} ran`))
          else waiting.unshift(...after)
          task?.done(new Error(`the worker running ${task.job.id} stopped (${reason})`))
          if (!closed) {
            start(slot)
            dispatch()
          }
        }
        worker.on("error", (error) => died(error.message))
        worker.on("close", (code, signal) =>
          died(
            OUT_OF_MEMORY.test(said)
              ? `it reached its memory limit of ${heapMb} MB`
              : signal !== null
                ? `signal ${signal}`
                : `exit code ${code}`
          )
        )
      }

      for (let i = 0; i < size; i++) {
        const slot: Slot = { worker: undefined as unknown as ChildProcess, sent: [] }
        start(slot)
        slots.push(slot)
      }

      const pool: Pool = {
        size,
        run: (job) =>
          Effect.async<JobOutcome, Error>((resume) => {
            const done = (outcome: JobOutcome | Error) =>
              resume(outcome instanceof Error ? Effect.fail(outcome) : Effect.succeed(outcome))
            waiting.push({ job, done })
            dispatch()
          })
      }
      const close = () => {
        closed = true
        return Promise.all(
          slots.map(
            ({ worker }) =>
              new Promise<void>((ended) => {
                if (worker.exitCode !== null || worker.signalCode !== null) return ended()
                worker.once("close", () => ended())
                worker.kill()
              })
          )
        )
      }
      return { pool, close }
    }),
    (made) => Effect.promise(() => made.close())
  ).pipe(Effect.map((made) => made.pool))
