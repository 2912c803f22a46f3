/**
 * The server: `POST /trading/orders` (a plain limit on the sim venue) under autocannon at 50 connections over
 * loopback, against a bare `node:http` server answering a similar JSON body, and against the same route on a minimal
 * `HttpApi` server (`minimal-server.ts`: the HTTP stack alone), all in child processes; and `/health` while the
 * largest twap the bounds allow works.
 */
import autocannon from "autocannon"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { type Figure, ratio } from "./common.ts"

const CONNECTIONS = 50
const SECONDS = 10

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address !== null ? resolve(address.port) : reject()))
    })
  })

/**
 * Waits until `url` answers 2xx (`init`: the request, a GET by default); a server that answers but refuses is an
 * error at once, one that has not started yet is asked again.
 */
export const waitFor = async (url: string, child: ChildProcess, init?: RequestInit) => {
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`)
    const response = await fetch(url, init).catch(() => undefined)
    if (response?.ok === true) return
    if (response !== undefined && response.status < 500) {
      throw new Error(`${url} answered ${response.status}: ${await response.text()}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no answer from ${url}`)
}

interface Load {
  readonly perS: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
}

export const load = async (
  url: string,
  headers: Record<string, string>,
  body: string,
  seconds: number
): Promise<Load> => {
  const result = await autocannon({
    url,
    method: "POST",
    connections: CONNECTIONS,
    duration: seconds,
    headers: { "content-type": "application/json", ...headers },
    body
  })
  return {
    perS: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }
}

/** A bare node:http server that reads the JSON body and answers an order-like JSON body with 201. */
const BARE = `
const http = require("node:http")
let n = 0
http.createServer((req, res) => {
  let body = ""
  req.on("data", (c) => (body += c))
  req.on("end", () => {
    const input = JSON.parse(body)
    n += 1
    const now = Date.now()
    const order = { id: "ord_" + String(n).padStart(6, "0"), client_order_id: "ord_" + n, venue: "sim",
      account: { venue: "sim", name: "default", subaccount: null }, market_id: input.market_id, side: input.side,
      type: input.type, time_in_force: "gtc", status: "open", held_by: "venue", price: input.price, stop_price: null,
      amount: input.amount, filled: "0", remaining: input.amount, cost: "0", fee: "0", average_price: null,
      last_fill_price: null, last_fill_amount: null, post_only: false, reduce_only: false, expires_at: null,
      created_at: now, updated_at: now, parent_id: null, queue_priority_preserved: null, book: "", trader: "",
      tags: {}, info: {}, venue_order_id: "sim-" + n }
    const text = JSON.stringify(order)
    res.writeHead(201, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    res.end(text)
  })
}).listen(Number(process.argv[1]), "127.0.0.1")
`

/** Latencies of `GET /health` polled one after another for `seconds`, in ms: p50, p99, max and how many polls. */
const pollHealth = async (url: string, seconds: number) => {
  const took: Array<number> = []
  const until = performance.now() + seconds * 1000
  while (performance.now() < until) {
    const start = performance.now()
    await (await fetch(url)).arrayBuffer()
    took.push(performance.now() - start)
  }
  took.sort((a, b) => a - b)
  const at = (q: number) => Number(took[Math.min(took.length - 1, Math.floor(q * took.length))]!.toFixed(2))
  return { p50: at(0.5), p99: at(0.99), max: Number(took[took.length - 1]!.toFixed(2)), polls: took.length }
}

/**
 * `/health` while the largest parent the bounds allow works: a twap of 10,000 slices (the most `slices` takes) at the
 * shortest spacing (100 ms), each slice a resting limit placed and later pulled, polled for 20 s, against the same
 * polls on the idle server.
 */
const healthUnderLargestParent = async (
  base: string,
  auth: Record<string, string>,
  market: string
): Promise<Figure> => {
  const idle = await pollHealth(`${base}/health`, 3)
  const twap = await fetch(`${base}/trading/orders`, {
    method: "POST",
    headers: { "content-type": "application/json", ...auth },
    body: JSON.stringify({
      market_id: market,
      side: "buy",
      type: "twap",
      amount: "10000",
      price: "0.01",
      params: { window_s: 1000, slices: 10_000 }
    })
  })
  if (twap.status !== 201) throw new Error(`the twap was refused with ${twap.status}: ${await twap.text()}`)
  const { id } = (await twap.json()) as { id: string }
  const busy = await pollHealth(`${base}/health`, 20)
  const parent = (await (await fetch(`${base}/trading/orders/${id}`, { headers: auth })).json()) as {
    info: { children: ReadonlyArray<string> }
  }
  await fetch(`${base}/trading/orders/${id}`, { method: "DELETE", headers: auth })
  return {
    name: "server.health_p99_ms_largest_twap",
    value: busy.p99,
    unit: "ms",
    baseline: idle.p99,
    ratio: ratio(busy.p99, Math.max(idle.p99, 0.001)),
    target: "< 100 ms",
    p50_ms: busy.p50,
    max_ms: busy.max,
    polls: busy.polls,
    children_sent: parent.info.children.length
  }
}

export const serverFigures = async (): Promise<ReadonlyArray<Figure>> => {
  const home = mkdtempSync(join(tmpdir(), "crossbook-bench-home-"))
  const children: Array<ChildProcess> = []
  // Also when this process ends before the finally below runs.
  const killAll = () => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGTERM")
  }
  process.once("exit", killAll)
  try {
    const port = await freePort()
    const server = spawn(process.execPath, ["bin/crossbook.js", "serve", "--port", String(port)], {
      env: { ...process.env, CROSSBOOK_HOME: home },
      stdio: ["ignore", "ignore", "inherit"]
    })
    children.push(server)
    const base = `http://127.0.0.1:${port}`
    await waitFor(`${base}/health`, server)
    const registry = JSON.parse(readFileSync(join(home, "servers.json"), "utf8")) as Record<
      string,
      { access_token: string }
    >
    const token = registry[`127.0.0.1:${port}`]!.access_token
    const markets = (await (await fetch(`${base}/venues/sim/markets?status=open`)).json()) as {
      data: Array<{ id: string }>
    }
    const market = markets.data[0]!.id
    // A buy at the lowest price rests without crossing; collateral for a whole run stays far inside the cash.
    const body = JSON.stringify({ market_id: market, side: "buy", type: "limit", amount: "1", price: "0.01" })
    const auth = { authorization: `Bearer ${token}` }
    const probe = await fetch(`${base}/trading/orders`, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body
    })
    if (probe.status !== 201) throw new Error(`POST /trading/orders answered ${probe.status}: ${await probe.text()}`)
    const health = await healthUnderLargestParent(base, auth, market)

    const barePort = await freePort()
    const bare = spawn(process.execPath, ["-e", BARE, String(barePort)], { stdio: ["ignore", "ignore", "inherit"] })
    children.push(bare)
    const bareUrl = `http://127.0.0.1:${barePort}/trading/orders`
    for (let i = 0; i < 50; i++) {
      try {
        await fetch(bareUrl, { method: "POST", body })
        break
      } catch {
        await new Promise((r) => setTimeout(r, 100))
      }
    }

    const minimalPort = await freePort()
    const minimal = spawn(
      process.execPath,
      ["bin/run-ts.js", "scripts/bench/minimal-server.ts", String(minimalPort), token],
      { stdio: ["ignore", "ignore", "inherit"] }
    )
    children.push(minimal)
    const minimalUrl = `http://127.0.0.1:${minimalPort}/trading/orders`
    // It has no /health: the order route itself is asked.
    await waitFor(minimalUrl, minimal, {
      method: "POST",
      headers: { "content-type": "application/json", ...auth },
      body
    })

    // Warm-ups, then the runs: the bare server first, so no run follows another's warm-up.
    await load(bareUrl, {}, body, 2)
    const baseline = await load(bareUrl, {}, body, SECONDS)
    await load(minimalUrl, auth, body, 2)
    const stack = await load(minimalUrl, auth, body, SECONDS)
    minimal.kill("SIGTERM")
    await load(`${base}/trading/orders`, auth, body, 3)
    const run = await load(`${base}/trading/orders`, auth, body, SECONDS)
    if (run.non2xx + run.errors > 0) {
      process.stderr.write(`bench: the server answered ${run.non2xx} non-2xx and ${run.errors} errors/timeouts\n`)
    }
    return [
      health,
      {
        name: "server.orders_per_s",
        value: run.perS,
        unit: "orders/s",
        baseline: baseline.perS,
        ratio: ratio(run.perS, baseline.perS),
        target: ">= 5000 orders/s and >= 0.25 of the bare server",
        connections: CONNECTIONS,
        seconds: SECONDS,
        p50_ms: run.p50,
        p99_ms: run.p99,
        non_2xx: run.non2xx,
        errors: run.non2xx + run.errors,
        baseline_errors: baseline.non2xx + baseline.errors,
        http_stack_orders_per_s: stack.perS,
        ratio_to_http_stack: ratio(run.perS, stack.perS)
      },
      {
        name: "server.http_stack_orders_per_s",
        value: stack.perS,
        unit: "orders/s",
        baseline: baseline.perS,
        ratio: ratio(stack.perS, baseline.perS),
        connections: CONNECTIONS,
        seconds: SECONDS,
        p50_ms: stack.p50,
        p99_ms: stack.p99,
        errors: stack.non2xx + stack.errors
      },
      {
        name: "server.latency_p50_ms",
        value: run.p50,
        unit: "ms",
        baseline: baseline.p50,
        ratio: ratio(run.p50, Math.max(baseline.p50, 0.001))
      },
      {
        name: "server.latency_p99_ms",
        value: run.p99,
        unit: "ms",
        baseline: baseline.p99,
        ratio: ratio(run.p99, Math.max(baseline.p99, 0.001))
      }
    ]
  } finally {
    killAll()
    process.removeListener("exit", killAll)
    await new Promise((r) => setTimeout(r, 300))
    rmSync(home, { recursive: true, force: true })
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await serverFigures()) console.log(JSON.stringify(f))
}
