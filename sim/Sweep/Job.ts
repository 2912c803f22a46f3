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
import { formatTape, type TapeEvent, type TapeHeader } from "../Tape.ts"
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

/** A tape of at most this many events is kept decoded by its worker (about 110 bytes of heap an event). */
export const KEEP_EVENTS = 50_000
/** Events the decoded tapes of one worker may hold together (about 22 MB). */
export const KEPT_EVENTS = 200_000

/**
 * What a worker keeps between jobs: loaded strategy modules; tapes read or generated, as Arrow IPC bytes (outside the
 * heap), so a grid over one tape reads and converts it once; and the events of the short ones, decoded once and
 * frozen, so the jobs over a short tape do not decode it again each time (a long one is decoded a batch at a time by
 * each job, in bounded memory). Nothing a run changes is kept: each job makes a fresh strategy from its module, and
 * what it reads of a kept tape cannot be changed.
 */
export class JobCache {
  readonly modules = new Map<string, Promise<Record<string, unknown>>>()
  readonly tapes = new Map<string, Uint8Array>()
  /** The short tapes' events, by the same keys as `tapes`, the most recently used last. */
  readonly decoded = new Map<string, { readonly header: TapeHeader; readonly events: ReadonlyArray<TapeEvent> }>()
  /** Keys of tapes found too long to keep decoded. */
  readonly long = new Set<string>()
  constructor(
    readonly limits: { readonly keepEvents: number; readonly keptEvents: number } = {
      keepEvents: KEEP_EVENTS,
      keptEvents: KEPT_EVENTS
    }
  ) {}
  /** Bytes the kept tapes take. */
  get keptBytes(): number {
    let n = 0
    for (const t of this.tapes.values()) n += t.byteLength
    return n
  }
  /** Events the decoded tapes hold. */
  get decodedEvents(): number {
    let n = 0
    for (const t of this.decoded.values()) n += t.events.length
    return n
  }
}

/** A tape's events held in memory, as a stream. */
const listed = (header: TapeHeader, events: ReadonlyArray<TapeEvent>): TapeStream => ({
  header,
  events,
  total: events.length,
  progress: () => 1
})

/** An event that cannot be changed, nor the levels of a snapshot. */
const frozen = (e: TapeEvent): TapeEvent => {
  if (e.type === "snapshot") {
    for (const level of e.bids) Object.freeze(level)
    for (const level of e.asks) Object.freeze(level)
    Object.freeze(e.bids)
    Object.freeze(e.asks)
  }
  return Object.freeze(e)
}

/**
 * The job's tape as a stream: a short tape's events from those kept (decoded and kept the first time); a long one's
 * from the kept bytes, else read (and kept when small enough), else from its file.
 */
export const tapeStream = (job: Job, cache: JobCache): TapeStream => {
  const key =
    job.tape.kind === "file" ? `file:${job.tape.path}` : `seed:${job.seed}:${job.tape.markets}:${job.tape.durationS}`
  const decoded = cache.decoded.get(key)
  if (decoded !== undefined) {
    cache.decoded.delete(key)
    cache.decoded.set(key, decoded)
    return listed(decoded.header, decoded.events)
  }
  const stream = encodedStream(job, key, cache)
  if (cache.long.has(key)) return stream
  const { keepEvents, keptEvents } = cache.limits
  const events: Array<TapeEvent> = []
  for (const e of stream.events) {
    if (events.length === keepEvents) {
      // Too long to keep: the job streams it from the start, as every later job over it will.
      cache.long.add(key)
      return encodedStream(job, key, cache)
    }
    events.push(frozen(e))
  }
  if (events.length <= keptEvents) {
    let held = cache.decodedEvents
    while (cache.decoded.size > 0 && held + events.length > keptEvents) {
      const oldest = cache.decoded.keys().next().value!
      held -= cache.decoded.get(oldest)!.events.length
      cache.decoded.delete(oldest)
    }
    cache.decoded.set(key, { header: stream.header, events })
  }
  return listed(stream.header, events)
}

/** The job's tape as it is kept: from the kept bytes, else read (and kept when small enough), else from its file. */
const encodedStream = (job: Job, key: string, cache: JobCache): TapeStream => {
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
