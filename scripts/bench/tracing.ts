/**
 * The cost of tracing: `POST /trading/orders` under autocannon on a server exporting its spans over OTLP/HTTP to a
 * collector in this process, against the same server with no endpoint set (tracing off), the two loaded in turn.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Figure, ratio } from "./common.ts"
import { freePort, load, waitFor } from "./server.ts"

const SECONDS = 5
const ROUNDS = 3

/** A collector that takes every OTLP/HTTP export and answers 200, counting requests and bytes. */
const startCollector = () =>
  new Promise<{ url: string; exports: () => number; bytes: () => number; close: () => void }>((resolve) => {
    let exports = 0
    let bytes = 0
    const server = createServer((req, res) => {
      req.on("data", (c: Buffer) => (bytes += c.length))
      req.on("end", () => {
        exports++
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end()
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        exports: () => exports,
        bytes: () => bytes,
        close: () => server.close()
      })
    )
  })

/** A `crossbook serve` on a new home with `env` added; answers its base URL, token and an open sim market. */
const startServer = async (env: Record<string, string>, children: Array<ChildProcess>, homes: Array<string>) => {
  const home = mkdtempSync(join(tmpdir(), "crossbook-bench-trace-"))
  homes.push(home)
  const port = await freePort()
  const base: Record<string, string | undefined> = { ...process.env }
  for (const k of Object.keys(base)) if (k.startsWith("OTEL_")) delete base[k]
  const server = spawn(process.execPath, ["bin/crossbook.js", "serve", "--port", String(port), "--venues", "sim"], {
    env: { ...base, CROSSBOOK_HOME: home, ...env },
    stdio: ["ignore", "ignore", "inherit"]
  })
  children.push(server)
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/health`, server)
  const registry = JSON.parse(readFileSync(join(home, "servers.json"), "utf8")) as Record<
    string,
    { access_token: string }
  >
  const token = registry[`127.0.0.1:${port}`]!.access_token
  const markets = (await (await fetch(`${url}/venues/sim/markets?status=open`)).json()) as {
    data: Array<{ id: string }>
  }
  return { url, auth: { authorization: `Bearer ${token}` }, market: markets.data[0]!.id }
}

export const tracingFigures = async (): Promise<ReadonlyArray<Figure>> => {
  const children: Array<ChildProcess> = []
  const homes: Array<string> = []
  const killAll = () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
  }
  process.once("exit", killAll)
  const collector = await startCollector()
  try {
    const off = await startServer({}, children, homes)
    const on = await startServer(
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: "1000" },
      children,
      homes
    )
    const body = (market: string) =>
      JSON.stringify({ market_id: market, side: "buy", type: "limit", amount: "1", price: "0.01" })
    const run = (s: typeof off, seconds: number) => load(`${s.url}/trading/orders`, s.auth, body(s.market), seconds)
    await run(off, 2)
    await run(on, 2)
    // Turn about, so a busy moment of a shared machine falls on both; the best round of each counts. The pause lets
    // the traced server send what it holds before the other one runs.
    const offRuns: Array<Awaited<ReturnType<typeof run>>> = []
    const onRuns: Array<Awaited<ReturnType<typeof run>>> = []
    for (let round = 0; round < ROUNDS; round++) {
      offRuns.push(await run(off, SECONDS))
      await new Promise((r) => setTimeout(r, 1500))
      onRuns.push(await run(on, SECONDS))
      await new Promise((r) => setTimeout(r, 1500))
    }
    const best = (runs: typeof offRuns) => runs.reduce((a, b) => (b.perS > a.perS ? b : a))
    const offBest = best(offRuns)
    const onBest = best(onRuns)
    return [
      {
        name: "server.orders_per_s_traced",
        value: onBest.perS,
        unit: "orders/s",
        baseline: offBest.perS,
        ratio: ratio(onBest.perS, offBest.perS),
        target: ">= 0.8 of the server untraced",
        rounds: ROUNDS,
        seconds: SECONDS,
        p50_ms: onBest.p50,
        p99_ms: onBest.p99,
        baseline_p50_ms: offBest.p50,
        baseline_p99_ms: offBest.p99,
        errors: onRuns.reduce((n, r) => n + r.non2xx + r.errors, 0),
        baseline_errors: offRuns.reduce((n, r) => n + r.non2xx + r.errors, 0),
        otlp_exports: collector.exports(),
        otlp_kb: Math.round(collector.bytes() / 1024)
      }
    ]
  } finally {
    killAll()
    process.removeListener("exit", killAll)
    collector.close()
    await new Promise((r) => setTimeout(r, 300))
    for (const home of homes) rmSync(home, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await tracingFigures()) console.log(JSON.stringify(f))
}
