/**
 * One job of a sweep: the backtest `crossbook backtest` runs, over the job's tape with the job's seed and parameters,
 * answered as one line of `sweep.jsonl`. Whether it runs in a worker thread or here, the same job gives the same line.
 */
import * as Effect from "effect/Effect"
import { readFileSync, statSync } from "node:fs"
import { arrowTapeBytes, isArrowTape } from "../ArrowTape.ts"
import { backtest, type BacktestReport } from "../Backtest.ts"
import { generateTape } from "../Generator.ts"
import { strategyFromModule } from "../Strategy.ts"
import { loadStrategyModule } from "../StrategyLoader.ts"
import { formatTape } from "../Tape.ts"
import { streamNdjsonFile, streamTapeBytes, streamTapeFile, type TapeStream } from "../TapeStream.ts"
import type { Job } from "./Spec.ts"

/** A generated tape from the seed (`backtest` without `--tape` makes 2 markets over 30 minutes). */
export const generatedTape = (seed: number, markets: number, durationS: number): string => {
  const g = generateTape({ seed, markets, durationS })
  return formatTape(g.header, g.events)
}

/** At most this many points of each run's equity curve are kept (evenly spaced, the last always kept). */
export const EQUITY_POINTS = 300

/** A job's line in `sweep.jsonl`. Decimals are strings, as in the backtest report. */
export interface JobResult {
  readonly job: string
  readonly params: Readonly<Record<string, unknown>>
  readonly seed: number
  readonly tape: string
  readonly strategy: string
  readonly metrics: {
    readonly net: string | null
    readonly realized: string
    readonly unrealized: string | null
    readonly fees: string
    readonly final_equity: string
    readonly max_drawdown: string
    readonly orders: number
    readonly fills: number
    readonly refused: number
    readonly time_in_market: number
  }
  readonly events_sha256: string
  readonly equity: ReadonlyArray<readonly [number, string]>
}

/** A job that could not run: its strategy did not load, its tape did not parse. */
export interface JobFailure {
  readonly job: string
  readonly params: Readonly<Record<string, unknown>>
  readonly seed: number
  readonly tape: string
  readonly error: string
}

export type JobOutcome = JobResult | JobFailure

export const isFailure = (outcome: JobOutcome): outcome is JobFailure => "error" in outcome

const thin = <A>(points: ReadonlyArray<A>, most: number): ReadonlyArray<A> => {
  if (points.length <= most) return points
  const step = (points.length - 1) / (most - 1)
  return Array.from({ length: most }, (_, i) => points[Math.round(i * step)]!)
}

/** The job's line from its backtest report. */
export const resultOf = (job: Job, report: BacktestReport): JobResult => ({
  job: job.id,
  params: job.params,
  seed: job.seed,
  tape: tapeLabel(job),
  strategy: report.strategy,
  metrics: {
    net: report.pnl.net,
    realized: report.pnl.realized,
    unrealized: report.pnl.unrealized,
    fees: report.pnl.fees,
    final_equity: report.final_equity,
    max_drawdown: report.max_drawdown,
    orders: report.orders,
    fills: report.fills.length,
    refused: report.refused.length,
    time_in_market: report.exposure.time_in_market
  },
  events_sha256: report.events_sha256,
  equity: thin(report.equity, EQUITY_POINTS)
})

export const tapeLabel = (job: Job): string =>
  job.tape.kind === "file"
    ? job.tape.label
    : `generated(seed ${job.seed}, ${job.tape.markets} markets, ${job.tape.durationS} s)`

/** A tape file larger than this is read from disk by every job instead of kept (bytes). */
export const KEEP_TAPE_BYTES = 64 * 1024 * 1024
/** What the kept tapes of one worker may take together (bytes). */
export const KEPT_TAPES_BYTES = 256 * 1024 * 1024

/**
 * What a worker keeps between jobs: loaded strategy modules, and tapes read or generated as Arrow IPC bytes (outside
 * the heap, decoded a batch at a time by each job), so a grid over one tape reads and converts it once. Nothing a run
 * changes is kept: each job makes a fresh strategy from its module and streams its tape.
 */
export class JobCache {
  readonly modules = new Map<string, Promise<Record<string, unknown>>>()
  readonly tapes = new Map<string, Uint8Array>()
  /** Bytes the kept tapes take. */
  get keptBytes(): number {
    let n = 0
    for (const t of this.tapes.values()) n += t.byteLength
    return n
  }
}

/** The job's tape as a stream: from the kept bytes, else read (and kept when small enough), else from its file. */
export const tapeStream = (job: Job, cache: JobCache): TapeStream => {
  const key =
    job.tape.kind === "file" ? `file:${job.tape.path}` : `seed:${job.seed}:${job.tape.markets}:${job.tape.durationS}`
  const kept = cache.tapes.get(key)
  if (kept !== undefined) {
    // The most recently used go last, so the least recently used go first when room is needed.
    cache.tapes.delete(key)
    cache.tapes.set(key, kept)
    return streamTapeBytes(kept)
  }
  let bytes: Uint8Array
  if (job.tape.kind === "file") {
    const path = job.tape.path
    if (statSync(path).size > KEEP_TAPE_BYTES) return streamTapeFile(path)
    const raw = readFileSync(path)
    if (isArrowTape(raw)) bytes = raw
    else {
      const stream = streamNdjsonFile(path)
      bytes = arrowTapeBytes(stream.header, stream.events)
    }
  } else {
    const g = generateTape({ seed: job.seed, markets: job.tape.markets, durationS: job.tape.durationS })
    bytes = arrowTapeBytes(g.header, g.events)
  }
  // A grid over generated tapes keeps one per seed, as many as fit: jobs go through the seeds in turn (see `Spec.ts`),
  // so a bound on their number below the seeds' would read or generate every job's tape again.
  let bytesKept = cache.keptBytes
  while (cache.tapes.size > 0 && bytesKept + bytes.byteLength > KEPT_TAPES_BYTES) {
    const oldest = cache.tapes.keys().next().value!
    bytesKept -= cache.tapes.get(oldest)!.byteLength
    cache.tapes.delete(oldest)
  }
  cache.tapes.set(key, bytes)
  return streamTapeBytes(bytes)
}

const message = (error: unknown) =>
  ((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").trim()

/** The line of a job that could not run, saying why. */
export const failureOf = (job: Job, error: string): JobFailure => ({
  job: job.id,
  params: job.params,
  seed: job.seed,
  tape: tapeLabel(job),
  error
})

/** Runs one job; a job that cannot run answers its failure (the sweep goes on with the others). */
export const runJob = (job: Job, cache: JobCache = new JobCache()): Effect.Effect<JobOutcome> =>
  Effect.gen(function* () {
    const failure = (error: string) => failureOf(job, error)
    let loading = cache.modules.get(job.strategy)
    if (loading === undefined) {
      loading = loadStrategyModule(job.strategy)
      cache.modules.set(job.strategy, loading)
    }
    const module = yield* Effect.either(Effect.tryPromise(() => loading))
    if (module._tag === "Left") return failure(message(module.left.error))
    const loaded = strategyFromModule(module.right, job.params)
    if ("error" in loaded) return failure(`the strategy ${job.strategy} is not usable: ${loaded.error}`)
    const tape = yield* Effect.either(Effect.try(() => tapeStream(job, cache)))
    if (tape._tag === "Left") return failure(`cannot read the tape ${tapeLabel(job)} (${message(tape.left.error)})`)
    const report = yield* Effect.either(
      Effect.catchAllDefect(backtest({ tape: tape.right, strategy: loaded.strategy, seed: job.seed }), (defect) =>
        Effect.fail(defect)
      )
    )
    if (report._tag === "Left") return failure(message(report.left))
    return resultOf(job, report.right)
  })

/** A job's line as it is written: the same job gives the same bytes. */
export const lineOf = (outcome: JobOutcome): string => JSON.stringify(outcome)
