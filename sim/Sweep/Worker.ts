/**
 * A sweep worker, a thread or a process of its own: takes one job at a time from its pool and answers its line. Each
 * worker runs the unchanged simulator; nothing is shared between workers but the messages.
 */
import * as Effect from "effect/Effect"
import { parentPort } from "node:worker_threads"
import { JobCache, lineOf, runJob } from "./Job.ts"
import type { Job } from "./Spec.ts"

type Answer = { readonly job: string; readonly line?: string; readonly error?: string }

const answer: ((message: Answer) => void) | undefined =
  parentPort !== null
    ? (message) => parentPort!.postMessage(message)
    : process.send !== undefined
      ? (message) => void process.send!(message)
      : undefined

if (answer !== undefined) {
  const cache = new JobCache()
  const take = (job: Job) =>
    Effect.runPromise(runJob(job, cache)).then(
      (outcome) => answer({ job: job.id, line: lineOf(outcome) }),
      (error: unknown) => answer({ job: job.id, error: error instanceof Error ? error.message : String(error) })
    )
  if (parentPort !== null) parentPort.on("message", take)
  else {
    process.on("message", take)
    // The pool went away: nothing is left to answer.
    process.on("disconnect", () => process.exit(0))
  }
}
