/** Sweeps: the SPEC, its jobs, the worker processes (each job's line equal to the same backtest run alone), the command. */
import { Effect } from "effect"
import * as fc from "fast-check"
import Database from "better-sqlite3"
import { execFile, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"
import { backtest } from "../../sim/Backtest.ts"
import { generateTape } from "../../sim/Generator.ts"
import { importTape } from "../../sim/History.ts"
import { formatTape, parseTape, type TapeEvent } from "../../sim/Tape.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { keyOn, startHost } from "../Data/Support.ts"
import { declaredParams, strategyOf, type StrategyExport } from "../../sim/Strategy.ts"
import { loadStrategyModule } from "../../sim/StrategyLoader.ts"
import { generatedTape, isFailure, JobCache, type JobResult, lineOf, runJob, tapeStream } from "../../sim/Sweep/Job.ts"
import { decodeSpec, expandJobs, grid, jobCount, type SweepSpec } from "../../sim/Sweep/Spec.ts"
import { rank, resolveSpec, runSweep } from "../../sim/Sweep/Sweep.ts"
import { makePool } from "../../sim/Sweep/Workers.ts"
import { localStorageFile, sweepId } from "../../sim/Sweep/Cluster.ts"

const ROOT = resolve(import.meta.dirname, "..", "..")
const BRACKET = join(ROOT, "sim/examples/bracket-maker.ts")
const MOMENTUM = join(ROOT, "sim/examples/momentum-trailing.ts")
const CRASHY = join(ROOT, "fixtures/strategies/crashy.ts")
const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-sweep-"))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** `crossbook sweep ARGS` from the sources; answers its output once it has exited 0. */
const sweepCommand = (args: ReadonlyArray<string>, env?: NodeJS.ProcessEnv) =>
  promisify(execFile)(process.execPath, ["bin/run-ts.js", "sim/main.ts", "sweep", ...args], {
    cwd: ROOT,
    timeout: 120_000,
    ...(env === undefined ? {} : { env: { ...process.env, ...env } })
  })

/** A SPEC written to `spec.json` in a fresh folder; answers the folder, the file and the output folder beside it. */
const writeSpec = (spec: unknown) => {
  const dir = tempDir()
  const specFile = join(dir, "spec.json")
  writeFileSync(specFile, JSON.stringify(spec))
  return { dir, specFile, out: join(dir, "out") }
}

/** How many job messages and replies the local cluster stored in a sweep's folder. */
const storedMessages = (out: string) => {
  const db = new Database(localStorageFile(out), { readonly: true })
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    return { messages: count("cluster_messages"), replies: count("cluster_replies") }
  } finally {
    db.close()
  }
}

const resolveOptions = {
  declaredParams: (strategy: string) => loadStrategyModule(strategy).then(declaredParams),
  historyTape: () => Effect.fail(new Error("no history host in this test"))
}

describe("the sweep's SPEC", () => {
  it("names every problem with its path", () => {
    const left = (json: unknown) => {
      const decoded = decodeSpec(json)
      expect(decoded._tag).toBe("Left")
      return decoded._tag === "Left" ? decoded.left : ""
    }
    expect(left({ strategy: "s.ts" })).toMatch(/seeds/)
    expect(left({ strategy: "s.ts", seeds: [] })).toMatch(/seeds/)
    expect(left({ strategy: "s.ts", seeds: [1], params: { trail: [] } })).toMatch(/params\.trail/)
    expect(left({ strategy: "s.ts", seeds: [1.5] })).toMatch(/seeds\.0/)
    expect(left({ strategy: "s.ts", seeds: [1], metric: "luck" })).toMatch(/metric/)
    expect(left({ strategy: "s.ts", seeds: [1], sedes: [2] })).toMatch(/sedes/)
  })

  it("makes every combination once, in a fixed order with stable ids", () => {
    const spec = decodeSpec({
      strategy: "s.ts",
      params: { b: [1, 2, 3], a: ["x", "y"] },
      tapes: ["one.tape", "two.tape"],
      seeds: [7, 8]
    })
    if (spec._tag === "Left") throw new Error(spec.left)
    const jobs = expandJobs(spec.right, "/s.ts", [
      { path: "/one.tape", label: "one.tape" },
      { path: "/two.tape", label: "two.tape" }
    ])
    expect(jobs.length).toBe(jobCount(spec.right))
    expect(jobs.length).toBe(2 * 3 * 2 * 2)
    const keys = jobs.map((j) => JSON.stringify([j.tape, j.params, j.seed]))
    expect(new Set(keys).size).toBe(jobs.length)
    expect(jobs[0]).toMatchObject({ id: "job-0001", params: { a: "x", b: 1 }, seed: 7 })
    expect(jobs[1]).toMatchObject({ id: "job-0002", params: { a: "x", b: 1 }, seed: 8 })
    expect(jobs[2]!.params).toEqual({ a: "x", b: 2 })
    expect(expandJobs(spec.right, "/s.ts", undefined)[0]!.tape).toEqual({
      kind: "generated",
      markets: 2,
      durationS: 1800
    })
  })

  it("grid: the product of the value lists, every name set in each combination", () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string({ minLength: 1, maxLength: 3 }),
          fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
          { maxKeys: 4 }
        ),
        (params) => {
          const combos = grid(params)
          expect(combos.length).toBe(Object.values(params).reduce((n, v) => n * v.length, 1))
          for (const c of combos) expect(Object.keys(c).sort()).toEqual(Object.keys(params).sort())
        }
      )
    )
  })

  it("refuses a parameter the strategy does not declare, naming the ones it has", async () => {
    const dir = tempDir()
    const file = join(dir, "spec.json")
    const text = JSON.stringify({ strategy: BRACKET, params: { take_tick: [1] }, seeds: [1] })
    const result = await Effect.runPromise(Effect.either(resolveSpec(file, text, dir, resolveOptions)))
    expect(result._tag).toBe("Left")
    if (result._tag === "Left") {
      expect(result.left.message).toContain("no parameter take_tick")
      expect(result.left.message).toContain("take_ticks")
    }
  })
})

describe("a sweep's id", () => {
  it("changes when a strategy or tape file is edited, so stored replies of the old files are not reused", () => {
    const dir = tempDir()
    const strategy = join(dir, "s.ts")
    const tape = join(dir, "t.tape")
    writeFileSync(strategy, "export default () => ({ onBook: () => {} })\n")
    writeFileSync(tape, "one\n")
    const jobs = () =>
      expandJobs({ strategy, params: {}, seeds: [1], metric: "net" } as unknown as SweepSpec, strategy, [
        { path: tape, label: "t.tape" }
      ])
    const first = sweepId(jobs())
    expect(sweepId(jobs())).toBe(first)
    writeFileSync(strategy, "export default () => ({ onTrade: () => {} })\n")
    const second = sweepId(jobs())
    expect(second).not.toBe(first)
    writeFileSync(tape, "two\n")
    expect(sweepId(jobs())).not.toBe(second)
  })
})

describe("ranking", () => {
  it("puts the best first by the metric's direction, every run once", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 20 }), (values) => {
        const results = values.map(
          (v, i) =>
            ({
              job: `job-${String(i).padStart(4, "0")}`,
              metrics: { net: (v / 100).toFixed(2), max_drawdown: (Math.abs(v) / 100).toFixed(2) }
            }) as unknown as JobResult
        )
        const byNet = rank(results, "net").map((r) => Number(r.metrics.net))
        const byDrawdown = rank(results, "max_drawdown").map((r) => Number(r.metrics.max_drawdown))
        expect(byNet).toEqual([...byNet].sort((a, b) => b - a))
        expect(byDrawdown).toEqual([...byDrawdown].sort((a, b) => a - b))
        expect(rank(results, "net").length).toBe(results.length)
      })
    )
  })
})

describe("a worker's kept tapes", () => {
  it("keep one tape per seed of a grid, however many seeds, while they fit: a second pass makes none again", () => {
    const cache = new JobCache()
    const seeds = Array.from({ length: 12 }, (_, i) => i + 1)
    const job = (seed: number) => ({
      id: `job-${seed}`,
      strategy: MOMENTUM,
      params: {},
      seed,
      tape: { kind: "generated" as const, markets: 1, durationS: 5 }
    })
    for (const seed of seeds) tapeStream(job(seed), cache)
    const first = new Map(cache.tapes)
    expect(first.size).toBe(seeds.length)
    // Jobs go through the seeds in turn: each is read from what was kept, the very bytes made the first time.
    for (const seed of seeds) tapeStream(job(seed), cache)
    expect(cache.tapes.size).toBe(seeds.length)
    for (const [key, bytes] of cache.tapes) expect(first.get(key)).toBe(bytes)
  })

  const momentum = (seed: number, durationS: number, trail = "0.03") => ({
    id: `job-${seed}-${durationS}-${trail}`,
    strategy: MOMENTUM,
    params: { trail },
    seed,
    tape: { kind: "generated" as const, markets: 2, durationS }
  })

  it("keep a short tape's events decoded and frozen, not a long one's; a job answers the same line either way", async () => {
    const cache = new JobCache({ keepEvents: 5_000, keptEvents: 20_000 })
    // Nothing kept decoded: every job streams its tape from the Arrow bytes, a batch at a time.
    const streaming = new JobCache({ keepEvents: 0, keptEvents: 0 })
    const short = momentum(3, 240)
    const long = momentum(4, 1800)
    expect(generateTape({ seed: 3, markets: 2, durationS: 240 }).events.length).toBeLessThan(5_000)
    expect(generateTape({ seed: 4, markets: 2, durationS: 1800 }).events.length).toBeGreaterThan(5_000)
    for (const job of [short, long, { ...short, params: { trail: "0.05" } }, short, long]) {
      const line = lineOf(await Effect.runPromise(runJob(job, cache)))
      expect(line).not.toContain('"error"')
      expect(line).toBe(lineOf(await Effect.runPromise(runJob(job, streaming))))
    }
    expect([...cache.decoded.keys()]).toEqual(["seed:3:2:240"])
    expect([...cache.long]).toEqual(["seed:4:2:1800"])
    expect(streaming.decoded.size).toBe(0)
    const kept = tapeStream(short, cache).events as ReadonlyArray<TapeEvent>
    expect(kept).toBe(cache.decoded.get("seed:3:2:240")!.events)
    expect(kept.every((e) => Object.isFrozen(e))).toBe(true)
    expect(() => {
      ;(kept[0] as { ts: number }).ts = 0
    }).toThrow(TypeError)
  }, 60_000)

  it("hold no more decoded events than their bound, the least recently used going first", () => {
    const cache = new JobCache({ keepEvents: 1_000, keptEvents: 1_500 })
    const job = (seed: number) => ({
      ...momentum(seed, 60),
      tape: { kind: "generated" as const, markets: 1, durationS: 60 }
    })
    const sizes = new Map(
      [1, 2, 3, 4, 5].map((seed) => [seed, generateTape({ seed, markets: 1, durationS: 60 }).events.length])
    )
    for (const seed of [1, 2, 3, 1, 4, 5]) {
      expect(tapeStream(job(seed), cache).events).toHaveLength(sizes.get(seed)!)
      expect(cache.decodedEvents).toBeLessThanOrEqual(1_500)
    }
    // Seeds 1–4 fit together; 5 needs room: 2 and 3 go, not 1, used again after them.
    expect([1, 2, 3, 4].reduce((n, seed) => n + sizes.get(seed)!, 0)).toBeLessThanOrEqual(1_500)
    expect([...cache.decoded.keys()].map((k) => Number(k.split(":")[1]))).toEqual([1, 4, 5])
  })
})

describe("jobs on worker processes", () => {
  const spec = (strategy: string, params: Record<string, ReadonlyArray<unknown>>, seeds: Array<number>) =>
    ({ strategy, params, seeds, metric: "net", generate: { markets: 2, duration_s: 240 } }) as unknown as SweepSpec

  it("answer each job's line byte for byte as the same backtest run alone", async () => {
    const jobs = [
      ...expandJobs(spec(BRACKET, { take_ticks: [1, 3] }, [5, 6]), BRACKET, undefined),
      ...expandJobs(spec(MOMENTUM, { trail: ["0.02"] }, [5]), MOMENTUM, undefined)
    ].map((j, i) => ({ ...j, id: `job-${i + 1}` }))
    for (const job of jobs) expect(job.tape).toEqual({ kind: "generated", markets: 2, durationS: 240 })
    const pooled = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(makePool(2), (pool) => Effect.forEach(jobs, pool.run, { concurrency: 2 })))
    )
    for (const [i, job] of jobs.entries()) {
      const alone = await Effect.runPromise(runJob(job))
      expect(isFailure(alone)).toBe(false)
      expect(lineOf(pooled[i]!)).toBe(lineOf(alone))
      // …and the same as `backtest` itself over the same tape, seed and parameters.
      const module = (await loadStrategyModule(job.strategy)) as { default: StrategyExport }
      const report = await Effect.runPromise(
        backtest({
          tape: generatedTape(job.seed, 2, 240),
          strategy: strategyOf(module.default, job.params),
          seed: job.seed
        })
      )
      expect((pooled[i] as JobResult).events_sha256).toBe(report.events_sha256)
      expect((pooled[i] as JobResult).metrics.final_equity).toBe(report.final_equity)
    }
    // The parameter reached the strategy: different take-profits make different runs.
    expect((pooled[0] as JobResult).events_sha256).not.toBe((pooled[2] as JobResult).events_sha256)
  }, 120_000)

  it("a job whose worker dies fails alone; the sweep goes on and writes every line", async () => {
    const out = tempDir()
    const jobs = expandJobs(spec(CRASHY, { crash: [false, true] }, [1, 2]), CRASHY, undefined)
    const summary = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(makePool(2), (pool) =>
          runSweep({
            resolved: { spec: spec(CRASHY, { crash: [false, true] }, [1, 2]), jobs },
            out,
            execute: pool.run,
            concurrency: 2
          })
        )
      )
    )
    expect(summary).toMatchObject({ jobs: 4, failed: 2 })
    const lines = readFileSync(join(out, "sweep.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(lines.map((l) => l.job)).toEqual(jobs.map((j) => j.id))
    for (const line of lines) {
      if (line.params.crash) expect(line.error).toMatch(/stopped \(exit code 3\)/)
      else expect(line.metrics.orders).toBe(1)
    }
  }, 120_000)

  it("a worker holds its next job: when the one it runs ends the worker, only that job fails and the next runs on its replacement", async () => {
    // One worker, three jobs in flight: the first two go to it at once, the third waits in the pool.
    const [crash, ...rest] = expandJobs(spec(CRASHY, { crash: [true, false] }, [1, 2]), CRASHY, undefined).filter(
      (j, i) => i === 0 || j.params["crash"] === false
    )
    const jobs = [crash!, ...rest]
    expect(jobs.map((j) => j.params["crash"])).toEqual([true, false, false])
    const outcomes = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(makePool(1), (pool) =>
          Effect.forEach(jobs, (job) => Effect.either(pool.run(job)), { concurrency: 3 })
        )
      )
    )
    expect(outcomes[0]!._tag).toBe("Left")
    if (outcomes[0]!._tag === "Left") expect(outcomes[0]!.left.message).toMatch(/stopped \(exit code 3\)/)
    for (const [i, outcome] of outcomes.slice(1).entries()) {
      expect(outcome._tag).toBe("Right")
      if (outcome._tag === "Right") {
        expect(isFailure(outcome.right)).toBe(false)
        expect((outcome.right as JobResult).job).toBe(jobs[i + 1]!.id)
        expect((outcome.right as JobResult).metrics.orders).toBe(1)
      }
    }
  }, 120_000)

  it("a job that outgrows its heap bound fails alone with the reason; the next job runs on a new worker", async () => {
    const jobs = expandJobs(spec(CRASHY, { hog: [true, false] }, [1]), CRASHY, undefined)
    const outcomes = await Effect.runPromise(
      Effect.scoped(
        Effect.flatMap(makePool(1, 128), (pool) =>
          Effect.forEach(jobs, (job) => Effect.either(pool.run(job)), { concurrency: 1 })
        )
      )
    )
    expect(outcomes[0]!._tag).toBe("Left")
    if (outcomes[0]!._tag === "Left") expect(outcomes[0]!.left.message).toMatch(/stopped \(.*memory limit/)
    expect(outcomes[1]!._tag).toBe("Right")
    if (outcomes[1]!._tag === "Right") expect(isFailure(outcomes[1]!.right)).toBe(false)
  }, 120_000)
})

describe("crossbook sweep", () => {
  it("runs a SPEC through the command: progress on stderr, the lines, the page and the best runs", async () => {
    const { specFile, out } = writeSpec({
      strategy: BRACKET,
      params: { stop_ticks: [3, 6] },
      seeds: [1, 2],
      generate: { markets: 1, duration_s: 180 },
      metric: "max_drawdown"
    })
    const { stdout, stderr } = await sweepCommand(["--out", out, "--workers", "2", "--json", specFile])
    expect(stderr).toContain("sweep: 4 jobs on 2 worker processes")
    expect(stderr).toContain("sweep: 4/4 jobs (100%)")
    const summary = JSON.parse(stdout)
    expect(summary).toMatchObject({ jobs: 4, failed: 0, metric: "max_drawdown" })
    const lines = readFileSync(join(out, "sweep.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(lines).toHaveLength(4)
    const drawdowns = summary.best.map((r: JobResult) => Number(r.metrics.max_drawdown))
    expect(drawdowns).toEqual([...drawdowns].sort((a: number, b: number) => a - b))
    expect(Math.min(...lines.map((l) => Number(l.metrics.max_drawdown)))).toBe(drawdowns[0])
    const html = readFileSync(join(out, "sweep.html"), "utf8")
    expect(html).not.toMatch(/(src|href)=["']?https?:/)
    for (const line of lines) expect(html).toContain(`data-job="${line.job}"`)
    // Each job was one message to the cluster, its reply stored; the same SPEC again is answered from storage.
    expect(storedMessages(out)).toEqual({ messages: 4, replies: 4 })
    const first = readFileSync(join(out, "sweep.jsonl"), "utf8")
    await sweepCommand(["--out", out, specFile])
    expect(readFileSync(join(out, "sweep.jsonl"), "utf8")).toBe(first)
    expect(storedMessages(out)).toEqual({ messages: 4, replies: 4 })
  }, 150_000)

  it("a sweep killed mid-way, run again, runs only what was not done and counts every job once", async () => {
    const { specFile, out } = writeSpec({
      strategy: MOMENTUM,
      params: { trail: ["0.02", "0.03", "0.04"] },
      seeds: [1, 2],
      generate: { markets: 1, duration_s: 240 }
    })
    const args = ["--out", out, "--workers", "2", specFile]
    // Killed (no chance to clean up) once at least one job's reply is stored and before the last.
    const child = spawn(process.execPath, ["bin/run-ts.js", "sim/main.ts", "sweep", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    await new Promise<void>((done) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString()
        if (/sweep: [1-4]\/6 jobs/.test(stderr) && child.exitCode === null) child.kill("SIGKILL")
      })
      child.on("exit", () => done())
    })
    expect(existsSync(join(out, "sweep.jsonl"))).toBe(false)
    const before = storedMessages(out)
    expect(before.replies).toBeGreaterThanOrEqual(1)
    expect(before.replies).toBeLessThan(6)
    await sweepCommand(args)
    expect(storedMessages(out)).toEqual({ messages: 6, replies: 6 })
    const lines = readFileSync(join(out, "sweep.jsonl"), "utf8").trim().split("\n")
    expect(lines).toHaveLength(6)
    const { jobs } = await Effect.runPromise(resolveSpec(specFile, readFileSync(specFile, "utf8"), out, resolveOptions))
    for (const [i, job] of jobs.entries()) expect(lines[i]).toBe(lineOf(await Effect.runPromise(runJob(job))))
  }, 200_000)

  it("reads a {market_id, from, to} tape once through the history client and runs every job over it", async () => {
    const dir = tempDir()
    const store = new DataStore(join(dir, "data.db"))
    const generated = generateTape({ seed: 11, markets: 1, durationS: 300 })
    importTape(store, formatTape(generated.header, generated.events))
    const host = await startHost(store)
    try {
      const market = generated.header.markets[0]!.id
      const from = generated.events[0]!.ts
      const to = generated.events[generated.events.length - 1]!.ts
      const specFile = join(dir, "spec.json")
      writeFileSync(
        specFile,
        JSON.stringify({
          strategy: BRACKET,
          params: { take_ticks: [1, 2] },
          seeds: [3],
          tapes: [{ market_id: market, from, to }]
        })
      )
      const out = join(dir, "out")
      await sweepCommand(["--out", out, specFile], {
        CROSSBOOK_HOME: join(dir, "home"),
        SERVICE_DATA_URL: host.url,
        SERVICE_API_KEY: keyOn(store)
      })
      const tapes = readdirSync(join(out, "tapes"))
      expect(tapes).toHaveLength(1)
      const tape = readFileSync(join(out, "tapes", tapes[0]!), "utf8")
      expect(parseTape(tape).events.length).toBeGreaterThan(100)
      const lines = readFileSync(join(out, "sweep.jsonl"), "utf8").trim().split("\n")
      expect(lines).toHaveLength(2)
      for (const [i, take] of [1, 2].entries()) {
        const job = {
          id: `job-000${i + 1}`,
          strategy: BRACKET,
          params: { take_ticks: take },
          seed: 3,
          tape: { kind: "file" as const, path: join(out, "tapes", tapes[0]!), label: `${market} ${from}..${to}` }
        }
        expect(lines[i]).toBe(lineOf(await Effect.runPromise(runJob(job))))
        expect(JSON.parse(lines[i]!).tape).toBe(`${market} ${from}..${to}`)
      }
    } finally {
      await host.close()
    }
  }, 150_000)
})
