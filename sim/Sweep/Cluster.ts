/**
 * Sweep jobs as an `@effect/cluster` entity. Each job is one persisted message to the `SweepJob` entity whose id is
 * the sweep's and the job's: the cluster stores the request and its reply, so a job whose reply is stored is answered
 * from storage and never run (or counted) twice, and a job a runner took but did not finish is delivered again.
 *
 * `crossbook sweep` runs by default on a cluster of one runner in this process (`SingleRunner`), its storage a
 * SQLite file in the output folder: running the same SPEC into the same folder again answers the finished jobs from
 * it and runs only the rest. The entity's handler hands each job to the runner's worker processes.
 */
import { ClusterSchema, Entity, RunnerAddress, SingleRunner } from "@effect/cluster"
import { NodeClusterSocket } from "@effect/platform-node"
import { Rpc } from "@effect/rpc"
import { PgClient } from "@effect/sql-pg"
import { SqliteClient } from "@effect/sql-sqlite-node"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import type { JobOutcome } from "./Job.ts"
import type { Job } from "./Spec.ts"
import type { Executor } from "./Sweep.ts"
import type { Pool } from "./Workers.ts"

/** A job as the cluster stores it: plain JSON. */
const JobMessage = Schema.Struct({
  id: Schema.String,
  strategy: Schema.String,
  params: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  tape: Schema.Unknown,
  seed: Schema.Int
})

/** The job entity: `Run` answers the job's line (the outcome as JSON text), stored as the message's reply. */
export const SweepJob = Entity.make("SweepJob", [
  Rpc.make("Run", {
    payload: { sweep: Schema.String, job: JobMessage },
    success: Schema.String,
    error: Schema.String,
    primaryKey: ({ job, sweep }) => `${sweep}/${job.id}`
  })
]).annotateRpcs(ClusterSchema.Persisted, true)

/** The worker processes of this runner, which the entity's handler runs jobs on. */
export class RunnerPool extends Context.Tag("crossbook/sweep/RunnerPool")<RunnerPool, Pool>() {}

/** The entity's handler: one job per entity, run on the runner's pool (as many at once as it has threads). */
export const SweepJobLive = SweepJob.toLayer(
  Effect.gen(function* () {
    const pool = yield* RunnerPool
    return {
      Run: (envelope) =>
        pool.run(envelope.payload.job as unknown as Job).pipe(
          Effect.map((outcome) => JSON.stringify(outcome)),
          Effect.mapError((error) => error.message)
        )
    }
  }),
  { concurrency: 1, maxIdleTime: "10 seconds" }
)

/**
 * A sweep's id: the hash of its jobs and of the files they read (the strategy modules and tape files, by content). The
 * same SPEC over the same files makes the same id, so its stored replies are found again; an edited strategy or tape,
 * or any change of a job, makes another sweep.
 */
export const sweepId = (jobs: ReadonlyArray<Job>): string => {
  const hash = createHash("sha256").update(JSON.stringify(jobs))
  const files = new Set(jobs.flatMap((j) => (j.tape.kind === "file" ? [j.strategy, j.tape.path] : [j.strategy])))
  for (const file of [...files].sort()) {
    hash.update(`\0${file}\0`)
    try {
      hash.update(readFileSync(file))
    } catch {
      // A file that cannot be read fails its jobs, which say why.
    }
  }
  return hash.digest("hex").slice(0, 16)
}

/** The executor that sends each job to the `SweepJob` entity `<sweep>/<job>` and waits for its reply. */
export const clusterExecutor = (sweep: string) =>
  Effect.map(
    SweepJob.client,
    (client): Executor =>
      (job) =>
        client(`${sweep}-${job.id}`)
          .Run({ sweep, job: job as unknown as typeof JobMessage.Type })
          .pipe(
            Effect.map((line) => JSON.parse(line) as JobOutcome),
            Effect.mapError((error) => new Error(typeof error === "string" ? error : String(error)))
          )
  )

/** The storage file of a local sweep, in its output folder. */
export const localStorageFile = (out: string) => join(out, "sweep-cluster.db")

/** A cluster of one runner in this process, its messages and replies in SQLite at `file`, running jobs on `pool`. */
export const localCluster = (file: string, pool: Pool) =>
  SweepJobLive.pipe(
    Layer.provideMerge(SingleRunner.layer({ runnerStorage: "memory" })),
    Layer.provide(SqliteClient.layer({ filename: file })),
    Layer.provide(Layer.succeed(RunnerPool, pool))
  )

/** How long a runner's hold on its shards lasts without renewal: a killed runner's jobs move on after about this. */
const SHARD_LOCK = { shardLockExpiration: "15 seconds", shardLockRefreshInterval: "4 seconds" } as const

/** The cluster's storage on a Postgres server (messages, replies, runners and shard locks all live there). */
const postgres = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 4 })

/**
 * A runner of a cluster on Postgres, listening at `host:port` for the other runners: it takes shards of the `SweepJob`
 * entity and runs their jobs on `pool`. Runners can join and leave at any time; a runner that stops without leaving
 * (killed) loses its shards when its lock expires, and the messages it had taken but not answered go to another.
 */
export const remoteRunner = (options: {
  readonly url: string
  readonly host: string
  readonly port: number
  readonly pool: Pool
}) =>
  SweepJobLive.pipe(
    Layer.provideMerge(
      NodeClusterSocket.layer({
        storage: "sql",
        shardingConfig: {
          ...SHARD_LOCK,
          runnerAddress: Option.some(RunnerAddress.make(options.host, options.port)),
          // Advisory locks belong to a Postgres session: a pooled client holds shard locks in a table instead.
          shardLockDisableAdvisory: true
        }
      })
    ),
    Layer.provide(postgres(options.url)),
    Layer.provide(Layer.succeed(RunnerPool, options.pool))
  )

/** A client of a cluster on Postgres that only sends jobs (runs none itself). */
export const remoteClient = (url: string) =>
  NodeClusterSocket.layer({
    clientOnly: true,
    storage: "sql",
    shardingConfig: { ...SHARD_LOCK, shardLockDisableAdvisory: true }
  }).pipe(Layer.provide(postgres(url)))
