/**
 * A sweep's SPEC: a strategy module, a grid of its parameters, tapes and seeds. Every combination is one job; jobs
 * are numbered in one fixed order (tapes, then the grid with its names sorted, then seeds), so the same SPEC always
 * gives the same jobs with the same ids.
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** A tape: a file (relative to the SPEC's folder), or a market's recorded range read through the history client. */
export const TapeRef = Schema.Union(
  Schema.String,
  Schema.Struct({
    market_id: Schema.String,
    from: Schema.Union(Schema.String, Schema.Number),
    to: Schema.Union(Schema.String, Schema.Number)
  })
)
export type TapeRef = typeof TapeRef.Type

/** The report fields a sweep ranks runs by, and whether more is better. */
export const METRICS = {
  net: "more",
  realized: "more",
  final_equity: "more",
  fees: "less",
  max_drawdown: "less",
  orders: "more",
  fills: "more",
  time_in_market: "more"
} as const
export type Metric = keyof typeof METRICS

export const SweepSpec = Schema.Struct({
  strategy: Schema.String.pipe(Schema.minLength(1)),
  params: Schema.optionalWith(
    Schema.Record({ key: Schema.String, value: Schema.Array(Schema.Unknown).pipe(Schema.minItems(1)) }),
    { default: () => ({}) }
  ),
  tapes: Schema.optional(Schema.Array(TapeRef).pipe(Schema.minItems(1))),
  seeds: Schema.Array(Schema.Int).pipe(Schema.minItems(1)),
  /** Without tapes, the tape each seed generates: 2 markets over 30 minutes unless said, as `backtest` does. */
  generate: Schema.optional(
    Schema.Struct({
      markets: Schema.optional(Schema.Int.pipe(Schema.between(1, 100))),
      duration_s: Schema.optional(Schema.Int.pipe(Schema.between(10, 7 * 86_400)))
    })
  ),
  metric: Schema.optionalWith(Schema.Literal(...(Object.keys(METRICS) as Array<Metric>)), { default: () => "net" })
}).annotations({ title: "SweepSpec" })
export type SweepSpec = typeof SweepSpec.Type

/** At most this many jobs in one sweep: a grid past it is almost always a typo. */
export const MAX_JOBS = 100_000

/** A tape a job runs over: a file, or one generated from the job's seed as `backtest` does without `--tape`. */
export type JobTape =
  | { readonly kind: "file"; readonly path: string; readonly label: string }
  | { readonly kind: "generated"; readonly markets: number; readonly durationS: number }

/** The tape `backtest` generates from its seed when it is given none. */
export const BACKTEST_GENERATED = { markets: 2, durationS: 1800 } as const

/** One backtest of the sweep. */
export interface Job {
  readonly id: string
  readonly strategy: string
  readonly params: Readonly<Record<string, unknown>>
  readonly tape: JobTape
  readonly seed: number
}

/** The SPEC decoded, or every problem in one sentence. */
export const decodeSpec = (json: unknown): Either.Either<SweepSpec, string> =>
  Either.mapLeft(Schema.decodeUnknownEither(SweepSpec, { errors: "all", onExcessProperty: "error" })(json), (error) =>
    ParseResult.ArrayFormatter.formatErrorSync(error)
      .map((issue) => `${issue.path.length === 0 ? "the spec" : issue.path.join(".")}: ${issue.message}`)
      .join("; ")
  )

/** Every combination of the grid's values, names in sorted order, each combination in the order the values are listed. */
export const grid = (params: Readonly<Record<string, ReadonlyArray<unknown>>>): Array<Record<string, unknown>> => {
  let combos: Array<Record<string, unknown>> = [{}]
  for (const name of Object.keys(params).sort()) {
    const next: Array<Record<string, unknown>> = []
    for (const combo of combos) for (const value of params[name]!) next.push({ ...combo, [name]: value })
    combos = next
  }
  return combos
}

/** How many jobs a SPEC makes. */
export const jobCount = (spec: SweepSpec): number =>
  Object.values(spec.params).reduce((n, values) => n * values.length, 1) * (spec.tapes?.length ?? 1) * spec.seeds.length

/**
 * The jobs of a SPEC whose strategy and tapes are resolved: `tapes` are the files (in the SPEC's order, `label` is
 * what the results call each), or undefined to generate one per seed.
 */
export const expandJobs = (
  spec: SweepSpec,
  strategy: string,
  tapes: ReadonlyArray<{ readonly path: string; readonly label: string }> | undefined
): Array<Job> => {
  const combos = grid(spec.params)
  const jobTapes: ReadonlyArray<JobTape> =
    tapes === undefined
      ? [
          {
            kind: "generated",
            markets: spec.generate?.markets ?? BACKTEST_GENERATED.markets,
            durationS: spec.generate?.duration_s ?? BACKTEST_GENERATED.durationS
          }
        ]
      : tapes.map((t) => ({ kind: "file", ...t }))
  const total = combos.length * jobTapes.length * spec.seeds.length
  const width = Math.max(4, String(total).length)
  const jobs: Array<Job> = []
  for (const tape of jobTapes)
    for (const params of combos)
      for (const seed of spec.seeds)
        jobs.push({ id: `job-${String(jobs.length + 1).padStart(width, "0")}`, strategy, params, tape, seed })
  return jobs
}

/** The names the grid sets that the module does not declare (empty when it declares none). */
export const undeclared = (
  spec: SweepSpec,
  declared: Readonly<Record<string, unknown>> | undefined
): ReadonlyArray<string> =>
  declared === undefined ? [] : Object.keys(spec.params).filter((name) => !Object.hasOwn(declared, name))
