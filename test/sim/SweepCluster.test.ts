/**
 * A sweep on a cluster of three runner processes sharing a real Postgres server (PGlite over the wire protocol), one
 * runner killed while it runs a job: the sweep finishes, every job is done and stored exactly once, and each line
 * equals the same job run alone.
 */
import { Effect } from "effect"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { lineOf, runJob } from "../../sim/Sweep/Job.ts"
import { resolveSpec } from "../../sim/Sweep/Sweep.ts"
import { startPostgres } from "./PgServer.ts"

const ROOT = resolve(import.meta.dirname, "..", "..")
const STRATEGY = join(ROOT, "sim/examples/momentum-trailing.ts")

const freePort = () =>
  new Promise<number>((done, fail) => {
    const server = createServer()
    server.once("error", fail)
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port
      server.close(() => done(port))
    })
  })

interface Runner {
  readonly child: ChildProcess
  log: string
}

const children: Array<ChildProcess> = []
const dirs: Array<string> = []
afterAll(() => {
  for (const c of children) if (c.exitCode === null) c.kill("SIGKILL")
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const startRunner = async (url: string): Promise<Runner> => {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    ["bin/run-ts.js", "sim/main.ts", "runner", "--storage", url, "--port", String(port), "--workers", "1"],
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] }
  )
  children.push(child)
  const runner: Runner = { child, log: "" }
  await new Promise<void>((done, fail) => {
    child.stderr!.on("data", (chunk: Buffer) => {
      runner.log += chunk.toString()
      if (runner.log.includes("runner: listening")) done()
    })
    child.once("exit", (code) => fail(new Error(`a runner exited ${code} before it listened: ${runner.log}`)))
  })
  return runner
}

/** Jobs a runner started and did not finish. */
const running = (runner: Runner) => {
  const started = [...runner.log.matchAll(/runner: (job-\d+) started/g)].map((m) => m[1]!)
  const done = new Set([...runner.log.matchAll(/runner: (job-\d+) done/g)].map((m) => m[1]!))
  return started.filter((j) => !done.has(j))
}

describe("a sweep on a cluster of runners", () => {
  it("finishes every job exactly once when a runner is killed mid-job", async () => {
    const pg = await startPostgres(await freePort())
    try {
      const runners = [await startRunner(pg.url), await startRunner(pg.url), await startRunner(pg.url)]
      const dir = mkdtempSync(join(tmpdir(), "crossbook-sweep-cluster-"))
      dirs.push(dir)
      const specFile = join(dir, "spec.json")
      writeFileSync(
        specFile,
        JSON.stringify({
          strategy: STRATEGY,
          params: { trail: ["0.02", "0.03", "0.04"] },
          seeds: [1, 2, 3, 4],
          generate: { markets: 2, duration_s: 600 }
        })
      )
      const out = join(dir, "out")
      const sweep = promisify(execFile)(
        process.execPath,
        ["bin/run-ts.js", "sim/main.ts", "sweep", "--cluster", pg.url, "--out", out, "--json", specFile],
        { cwd: ROOT, timeout: 240_000 }
      )
      // The first runner seen working on a job is killed there, with no chance to finish or hand anything back.
      let killed: { runner: Runner; jobs: Array<string> } | undefined
      while (killed === undefined) {
        const victim = runners.find((r) => running(r).length > 0)
        if (victim !== undefined) {
          killed = { runner: victim, jobs: running(victim) }
          victim.child.kill("SIGKILL")
        } else await new Promise((next) => setImmediate(next))
      }
      const { stdout } = await sweep
      expect(JSON.parse(stdout)).toMatchObject({ jobs: 12, failed: 0 })
      const lines = readFileSync(join(out, "sweep.jsonl"), "utf8").trim().split("\n")
      expect(lines).toHaveLength(12)
      // What the killed runner held was run again by another.
      const survivors = runners.filter((r) => r !== killed!.runner)
      for (const job of killed.jobs) expect(survivors.some((r) => r.log.includes(`runner: ${job} done`))).toBe(true)
      // Stored once each: one message and one reply per job.
      const counts = await pg.query(
        "SELECT (SELECT count(*) FROM cluster_messages) AS messages, (SELECT count(*) FROM cluster_replies) AS replies"
      )
      expect(counts).toEqual({ messages: 12, replies: 12 })
      const { jobs } = await Effect.runPromise(
        resolveSpec(specFile, readFileSync(specFile, "utf8"), out, {
          declaredParams: async () => undefined,
          historyTape: () => Effect.fail(new Error("none"))
        })
      )
      for (const [i, job] of jobs.entries()) expect(lines[i]).toBe(lineOf(await Effect.runPromise(runJob(job))))
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill("SIGTERM")
      await pg.stop()
    }
  }, 300_000)
})
