/**
 * A sweep worker, a thread or a process of its own: runs the jobs its pool sends one at a time, in the order they
 * came, and answers each one's line. The pool sends the next job before this one ends, so the worker starts it at
 * once rather than after its answer has gone to the pool and a job has come back. Each worker runs the unchanged
 * simulator; nothing is shared between workers but the messages.
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
  const queued: Array<Job> = []
  let running = false
  /** The next job, once the one before it has answered. */
  const runNext = (): void => {
    const job = queued.shift()
    running = job !== undefined
    if (job === undefined) return
    void Effect.runPromise(runJob(job, cache))
      .then(
        (outcome) => answer({ job: job.id, line: lineOf(outcome) }),
        (error: unknown) => answer({ job: job.id, error: error instanceof Error ? error.message : String(error) })
      )
      .then(runNext)
  }
  const take = (job: Job) => {
    queued.push(job)
    if (!running) runNext()
  }
  if (parentPort !== null) parentPort.on("message", take)
  else {
    process.on("message", take)
    // The pool went away: nothing is left to answer.
    process.on("disconnect", () => process.exit(0))
  }
}
