/**
 * A sweep worker thread: takes one job at a time from its pool and answers its line. Each worker runs the unchanged
 * simulator; nothing is shared between threads but the messages.
 */
import * as Effect from "effect/Effect"
import { parentPort } from "node:worker_threads"
import { JobCache, lineOf, runJob } from "./Job.ts"
import type { Job } from "./Spec.ts"

const port = parentPort
if (port !== null) {
  const cache = new JobCache()
  port.on("message", (job: Job) => {
    Effect.runPromise(runJob(job, cache)).then(
      (outcome) => port.postMessage({ job: job.id, line: lineOf(outcome) }),
      (error: unknown) =>
        port.postMessage({ job: job.id, error: error instanceof Error ? error.message : String(error) })
    )
  })
}
