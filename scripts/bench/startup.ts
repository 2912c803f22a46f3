/**
 * Start-up of the shipped command line (bin/crossbook.js on dist/, built first from the current sources):
 * `crossbook --help` against starting Node itself, and `crossbook serve` from spawn to its first `/health` answer
 * against a bare `node:http` server's. Each is the median of several runs in child processes; the TypeScript path
 * (the sources through tsx, as every start ran before the build) is printed beside for comparison.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { builtCli, type Figure, ratio } from "./common.ts"

const ROOT = join(import.meta.dirname, "../..")
const RUNS = 9

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[sorted.length >> 1]!
}

/** Milliseconds from spawn to exit of `node <args>`, median of `runs`. */
const startToExit = (args: ReadonlyArray<string>, runs = RUNS): number => {
  const times: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    const ended = spawnSync(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] })
    times.push(performance.now() - start)
    if (ended.status !== 0) throw new Error(`node ${args.join(" ")} exited ${ended.status}: ${ended.stderr}`)
  }
  return median(times)
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/** Milliseconds from spawning `node <args(port)>` to the first 200 from `/health` on that port. */
const startToHealth = async (args: (port: number) => ReadonlyArray<string>, env: NodeJS.ProcessEnv) => {
  const port = await freePort()
  const start = performance.now()
  const child = spawn(process.execPath, args(port), { cwd: ROOT, env, stdio: ["ignore", "ignore", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before answering: ${stderr}`)
      if (performance.now() - start > 60_000) throw new Error(`no answer within 60 s: ${stderr}`)
      try {
        const response = await fetch(`http://127.0.0.1:${port}/health`)
        if (response.status === 200) return performance.now() - start
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 5))
    }
  } finally {
    child.kill("SIGKILL")
    await new Promise((r) => child.once("close", r))
  }
}

const BARE = `require("node:http").createServer((q, s) => s.end('{"status":"ok"}')).listen(Number(process.argv[1]), "127.0.0.1")`

export const startupFigures = async (): Promise<ReadonlyArray<Figure>> => {
  await builtCli()
  const bin = join(ROOT, "bin/crossbook.js")
  const sources = [join(ROOT, "bin/run-ts.js"), join(ROOT, "sim/main.ts")]

  const node = startToExit(["-e", "0"])
  const help = startToExit([bin, "--help"])
  const helpTsx = startToExit([...sources, "--help"], 3)

  // Each serve starts on a new home (the first start: databases created, the owner made), the sim venue only, so
  // no network is involved.
  const serveOn = async (command: ReadonlyArray<string>) => {
    const home = mkdtempSync(join(tmpdir(), "crossbook-bench-start-"))
    try {
      return await startToHealth((port) => [...command, "serve", "--port", String(port)], {
        ...process.env,
        CROSSBOOK_HOME: home,
        CROSSBOOK_VENUES: "sim"
      })
    } finally {
      rmSync(home, { recursive: true, force: true })
    }
  }
  const bareTimes: Array<number> = []
  const serveTimes: Array<number> = []
  for (let i = 0; i < 5; i++) {
    bareTimes.push(await startToHealth((port) => ["-e", BARE, String(port)], process.env))
    serveTimes.push(await serveOn([bin]))
  }
  const serveTsx = await serveOn(sources)
  const bare = median(bareTimes)
  const serve = median(serveTimes)
  const round = (ms: number) => Number(ms.toFixed(1))
  return [
    {
      name: "cli.help_ms",
      value: round(help),
      unit: "ms",
      baseline: round(node),
      ratio: ratio(help, node),
      target: "< 300 ms",
      baseline_is: "node -e 0",
      sources_through_tsx_ms: round(helpTsx)
    },
    {
      name: "serve.ready_ms",
      value: round(serve),
      unit: "ms",
      baseline: round(bare),
      ratio: ratio(serve, bare),
      target: "< 1000 ms",
      baseline_is: "a bare node:http server",
      sources_through_tsx_ms: round(serveTsx)
    }
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await startupFigures()) console.log(JSON.stringify(f))
}
