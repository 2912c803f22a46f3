/**
 * `crossbook sweep`: every job of a SPEC run through an executor (the local worker pool by default), with progress on
 * stderr, results written to `sweep.jsonl` (one line per job, in job order) and `sweep.html`, and the best runs by
 * the SPEC's metric.
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import { mkdirSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import * as F from "../../src/Domain/Fixed.ts"
import { failureOf, isFailure, lineOf, type JobOutcome, type JobResult } from "./Job.ts"
import { renderSweep } from "./Report.ts"
import {
  decodeSpec,
  expandJobs,
  type Job,
  jobCount,
  MAX_JOBS,
  METRICS,
  type Metric,
  type SweepSpec,
  undeclared
} from "./Spec.ts"

/** A sweep that cannot start or finish, in one sentence. */
export class SweepError extends Error {}

/** Runs one job somewhere: a worker thread here, or a runner of a cluster. */
export type Executor = (job: Job) => Effect.Effect<JobOutcome, Error>

/** A metric's value as a number for ranking only (the lines keep the exact decimals); null sorts last. */
export const metricValue = (result: JobResult, metric: Metric): number | null => {
  const value = result.metrics[metric]
  if (value === null) return null
  return typeof value === "number" ? value : F.of(value)
}

/** The results best first by `metric` (ties by job id, so the order is the same every time). */
export const rank = (results: ReadonlyArray<JobResult>, metric: Metric): Array<JobResult> => {
  const sign = METRICS[metric] === "more" ? -1 : 1
  return [...results].sort((a, b) => {
    const x = metricValue(a, metric)
    const y = metricValue(b, metric)
    if (x === null || y === null) return x === y ? (a.job < b.job ? -1 : 1) : x === null ? 1 : -1
    return sign * (x - y) || (a.job < b.job ? -1 : 1)
  })
}

export interface Resolved {
  readonly spec: SweepSpec
  readonly jobs: ReadonlyArray<Job>
}

/**
 * The SPEC file read and checked, its strategy and tapes resolved against its folder. Ranges of recorded history are
 * fetched once through `historyTape` and written under `out/tapes/`, so every job reads a file.
 */
export const resolveSpec = (
  specFile: string,
  text: string,
  out: string,
  options: {
    readonly declaredParams: (strategy: string) => Promise<Readonly<Record<string, unknown>> | undefined>
    readonly historyTape: (marketId: string, from: string, to: string) => Effect.Effect<string, Error>
  }
): Effect.Effect<Resolved, SweepError> =>
  Effect.gen(function* () {
    const json = yield* Effect.try({
      try: () => JSON.parse(text) as unknown,
      catch: (e) => new SweepError(`${specFile} is not JSON (${e instanceof Error ? e.message : String(e)})`)
    })
    const decoded = decodeSpec(json)
    if (decoded._tag === "Left") return yield* Effect.fail(new SweepError(`${specFile}: ${decoded.left}`))
    const spec = decoded.right
    const count = jobCount(spec)
    if (count > MAX_JOBS)
      return yield* Effect.fail(new SweepError(`${specFile} makes ${count} jobs; a sweep runs at most ${MAX_JOBS}`))
    const base = dirname(resolve(specFile))
    const strategy = resolve(base, spec.strategy)
    const declared = yield* Effect.tryPromise({
      try: () => options.declaredParams(strategy),
      catch: (e) => new SweepError(e instanceof Error ? e.message : String(e))
    })
    const unknown = undeclared(spec, declared)
    if (unknown.length > 0) {
      return yield* Effect.fail(
        new SweepError(
          `${specFile}: the strategy ${spec.strategy} has no parameter ${unknown.join(", ")} (it has ${Object.keys(declared ?? {}).join(", ") || "none"})`
        )
      )
    }
    let tapes: Array<{ path: string; label: string }> | undefined
    if (spec.tapes !== undefined) {
      tapes = []
      for (const tape of spec.tapes) {
        if (typeof tape === "string") {
          tapes.push({ path: resolve(base, tape), label: tape })
          continue
        }
        const label = `${tape.market_id} ${tape.from}..${tape.to}`
        const fetched = yield* Effect.mapError(
          options.historyTape(tape.market_id, String(tape.from), String(tape.to)),
          (e) => new SweepError(`the history of ${label} could not be read: ${e.message}`)
        )
        mkdirSync(join(out, "tapes"), { recursive: true })
        const path = join(out, "tapes", `${tapes.length + 1}-${tape.market_id.replace(/[^A-Za-z0-9._-]/g, "_")}.tape`)
        writeFileSync(path, fetched)
        tapes.push({ path: resolve(path), label })
      }
    }
    return { spec, jobs: expandJobs(spec, strategy, tapes) }
  })

export interface SweepSummary {
  readonly jobs: number
  readonly failed: number
  readonly metric: Metric
  readonly best: ReadonlyArray<JobResult>
  readonly seconds: number
}

/**
 * Runs the jobs through `execute`, `concurrency` at a time, reporting progress through `progress`; writes
 * `sweep.jsonl` and `sweep.html` in `out`. A job whose executor failed (its thread died) is written as a failure.
 */
export const runSweep = (options: {
  readonly resolved: Resolved
  readonly out: string
  readonly execute: Executor
  readonly concurrency: number
  readonly progress?: (line: string) => void
}): Effect.Effect<SweepSummary> =>
  Effect.gen(function* () {
    const { jobs, spec } = options.resolved
    const started = yield* Clock.currentTimeMillis
    const done = yield* Ref.make(0)
    let shown = -1
    const outcomes = yield* Effect.forEach(
      jobs,
      (job) =>
        options.execute(job).pipe(
          Effect.catchAll((error) => Effect.succeed<JobOutcome>(failureOf(job, error.message))),
          Effect.tap(() =>
            Ref.updateAndGet(done, (n) => n + 1).pipe(
              Effect.zip(Clock.currentTimeMillis),
              Effect.tap(([n, now]) =>
                Effect.sync(() => {
                  const pct = Math.floor((n / jobs.length) * 100)
                  if (options.progress !== undefined && (pct > shown || n === jobs.length)) {
                    shown = pct
                    const seconds = (now - started) / 1000
                    const rate = seconds > 0 ? ` ${(n / seconds).toFixed(2)} jobs/s` : ""
                    options.progress(`sweep: ${n}/${jobs.length} jobs (${pct}%)${rate}`)
                  }
                })
              )
            )
          )
        ),
      { concurrency: Math.max(1, options.concurrency) }
    )
    mkdirSync(options.out, { recursive: true })
    writeFileSync(join(options.out, "sweep.jsonl"), outcomes.map((o) => lineOf(o) + "\n").join(""))
    const results = outcomes.filter((o): o is JobResult => !isFailure(o))
    const ranked = rank(results, spec.metric)
    writeFileSync(join(options.out, "sweep.html"), renderSweep({ spec, outcomes, ranked }))
    return {
      jobs: jobs.length,
      failed: outcomes.length - results.length,
      metric: spec.metric,
      best: ranked.slice(0, 5),
      seconds: ((yield* Clock.currentTimeMillis) - started) / 1000
    }
  })
