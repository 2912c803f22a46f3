/**
 * The crash test (`npm run test:crash`): `crossbook serve` on a temporary home and a free loopback port is killed with
 * SIGKILL at random points of a mixed order flow, and restarted, many times. After each kill it checks that nothing
 * was lost, doubled or left out of the journal; it exits 1 with what it found, 0 when all held.
 *
 * Seeded: `CRASH_SEED` (printed; random when unset) picks the flow and the kill points. Bounded: `CRASH_KILLS`
 * (default 40) kills, stopping early after `CRASH_BUDGET_S` seconds (default 900).
 */
import Database from "better-sqlite3"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SeededRandom } from "../src/Domain/Random.ts"
import { call, freePort, ownerToken, type Serve, startServe } from "./crash/serve.ts"

const seed = Number(process.env["CRASH_SEED"] ?? Math.floor(Math.random() * 2 ** 31))
const kills = Number(process.env["CRASH_KILLS"] ?? 40)
const budgetMs = Number(process.env["CRASH_BUDGET_S"] ?? 900) * 1000
const rng = new SeededRandom(seed)
const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(rng.nextFloat() * items.length)]!
const between = (lo: number, hi: number) => lo + Math.floor(rng.nextFloat() * (hi - lo + 1))
const cents = (c: number) => (Math.min(99, Math.max(1, c)) / 100).toFixed(2)

console.log(`crash test: seed ${seed}, ${kills} kills, budget ${budgetMs / 1000} s (repeat with CRASH_SEED=${seed})`)

const home = join(mkdtempSync(join(tmpdir(), "crossbook-crash-")), "home")
const engineFile = join(home, "engine.db")
const controlFile = join(home, "control.db")
const findings: Array<string> = []
/** Each finding once: a loss seen after one kill is seen again after every later one. */
const seen = new Set<string>()
const found = (what: string) => {
  const key = what.replace(/^after [^:]*: /, "")
  if (seen.has(key)) return
  seen.add(key)
  findings.push(what)
  console.log(`  FOUND: ${what}`)
}

type Body = Record<string, unknown>
/** Orders the server acknowledged (2xx), by client order id: the id it answered and the body sent. */
const acked = new Map<string, { readonly id: string; readonly body: Body }>()
/** Placements sent whose answer never came (the server died, or the client gave up): retried with the same id. */
const lost = new Map<string, Body>()
let counter = 0
const stats = { placed: 0, retried: 0, canceled: 0, lost: 0, retriedLost: 0 }

interface MarketView {
  readonly id: string
  readonly bid: number
  readonly ask: number
}

/** A body for one of the kinds of order a trader sends: plain limits and markets, and complex parents. */
const orderBody = (m: MarketView, round: number): Body => {
  const base = { market_id: m.id, client_order_id: `r${round}-${++counter}` }
  const side = rng.nextFloat() < 0.5 ? "buy" : "sell"
  const kind = pick([
    "rest",
    "rest",
    "rest",
    "cross",
    "market",
    "stop_market",
    "trailing_stop",
    "iceberg",
    "oco",
    "bracket",
    "twap",
    "peg",
    "smart_taker"
  ])
  const far = side === "buy" ? cents(m.bid - between(3, 20)) : cents(m.ask + between(3, 20))
  switch (kind) {
    case "rest":
      return { ...base, side, type: "limit", amount: String(between(1, 5)), price: far }
    case "cross":
      return {
        ...base,
        side,
        type: "limit",
        time_in_force: "ioc",
        amount: String(between(1, 3)),
        price: side === "buy" ? cents(m.ask + 1) : cents(m.bid - 1)
      }
    case "market":
      return { ...base, side, type: "market", amount: "1", price: side === "buy" ? "0.99" : "0.01" }
    case "stop_market":
      return {
        ...base,
        side,
        type: "stop_market",
        amount: "2",
        stop_price: side === "buy" ? cents(m.ask + between(1, 5)) : cents(m.bid - between(1, 5))
      }
    case "trailing_stop":
      return { ...base, side, type: "trailing_stop", amount: "2", params: { trail: "0.02" } }
    case "iceberg":
      return { ...base, side, type: "iceberg", amount: "6", price: far, params: { display: "2", reload_delay_s: 1 } }
    case "oco":
      return {
        ...base,
        side: "buy",
        type: "oco",
        amount: "2",
        params: {
          legs: [
            { side: "buy", type: "limit", price: cents(m.bid - 3) },
            { side: "sell", type: "limit", price: cents(m.ask + 3) }
          ]
        }
      }
    case "bracket":
      return {
        ...base,
        side: "buy",
        type: "bracket",
        amount: "2",
        params: {
          entry: { price: cents(m.ask) },
          take_profit: { price: cents(m.ask + 5) },
          stop_loss: { stop_price: cents(m.bid - 10) }
        }
      }
    case "twap":
      return {
        ...base,
        side,
        type: "twap",
        amount: "4",
        price: side === "buy" ? cents(m.ask + 2) : cents(m.bid - 2),
        params: { window_s: 4, slices: 4 }
      }
    case "peg":
      return { ...base, side, type: "peg", amount: "2", params: { reference: "near", min_stay_s: 1 } }
    default:
      return {
        ...base,
        side,
        type: "smart_taker",
        amount: "3",
        params: { clip: "1", interval_s: 1, max_slippage: "0.02", expires_s: 3 }
      }
  }
}

/** Sends a placement; a 2xx is acknowledged, no answer is lost (to retry), a refusal is the flow's own business. */
const place = async (url: string, token: string, body: Body, giveUpMs?: number) => {
  const coid = body["client_order_id"] as string
  try {
    const answer = await call(url, "POST", "/trading/orders", {
      token,
      json: body,
      ...(giveUpMs === undefined ? {} : { timeoutMs: giveUpMs })
    })
    if (answer.status === 200 || answer.status === 201) {
      const before = acked.get(coid)
      if (before !== undefined && before.id !== answer.body.id) {
        found(`a retry of ${coid} answered order ${answer.body.id}, but ${before.id} was placed first`)
      }
      acked.set(coid, { id: answer.body.id, body })
      lost.delete(coid)
      return "acked" as const
    }
    if (answer.status >= 500 && answer.status !== 502 && answer.status !== 504) {
      found(`placing ${coid} answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`)
    }
    lost.delete(coid)
    return "refused" as const
  } catch {
    if (!acked.has(coid)) {
      lost.set(coid, body)
      stats.lost++
    }
    return "lost" as const
  }
}

/** One worker of the flow: places, retries, cancels until the server is gone. */
const worker = async (serve: Serve, token: string, markets: ReadonlyArray<MarketView>, round: number) => {
  let failures = 0
  while (failures < 3) {
    const roll = rng.nextFloat()
    try {
      if (roll < 0.7) {
        const result = await place(serve.url, token, orderBody(pick(markets), round))
        if (result === "acked") stats.placed++
        failures = result === "lost" ? failures + 1 : 0
      } else if (roll < 0.8 && acked.size > 0) {
        // The client did not see the answer and sends the same request again.
        const [coid, { body }] = pick([...acked.entries()])
        stats.retried++
        const before = acked.get(coid)!.id
        const answer = await call(serve.url, "POST", "/trading/orders", { token, json: body })
        if (answer.status !== 200 || answer.body.id !== before) {
          found(`the retry of ${coid} answered ${answer.status} ${answer.body?.id ?? ""}, not 200 with ${before}`)
        }
      } else if (roll < 0.9 && acked.size > 0) {
        const { id } = pick([...acked.values()])
        await call(serve.url, "DELETE", `/trading/orders/${id}`, { token })
        stats.canceled++
      } else {
        // A client that gives up on its answer after a few milliseconds: the order may or may not be placed.
        await place(serve.url, token, orderBody(pick(markets), round), between(1, 15))
      }
    } catch {
      failures++
    }
  }
}

/**
 * The databases as the crash left them: integrity, journal without gaps, every acknowledged order once, journaled. An
 * order written `pending` ahead of its venue call has no event until the venue answers; a kill may leave it so, and
 * the next start settles it with the venue: after a start, none is left.
 */
const verify = (when: string, started: boolean) => {
  for (const file of [engineFile, controlFile]) {
    const db = new Database(file, { readonly: true, fileMustExist: true })
    const result = db.pragma("integrity_check", { simple: true })
    db.close()
    if (result !== "ok") found(`${when}: integrity_check of ${file}: ${String(result)}`)
  }
  const db = new Database(engineFile, { readonly: true, fileMustExist: true })
  try {
    const seqs = (db.prepare("SELECT seq FROM journal ORDER BY seq").pluck().all() as Array<number>) ?? []
    seqs.forEach((seq, i) => {
      if (seq !== i + 1) found(`${when}: journal seq ${seq} at position ${i + 1} (a gap or a start past 1)`)
    })
    const byCoid = db.prepare("SELECT id FROM orders WHERE client_order_id = ?").pluck()
    for (const [coid, { id }] of acked) {
      const ids = byCoid.all(coid) as Array<string>
      if (ids.length !== 1 || ids[0] !== id) {
        found(`${when}: acknowledged order ${id} (${coid}) is stored as [${ids.join(", ")}]`)
      }
    }
    const orders = db.prepare("SELECT id, status FROM orders").all() as Array<{ id: string; status: string }>
    const lastEvent = db.prepare(
      "SELECT kind, payload FROM journal WHERE key = ? AND kind LIKE 'order.%' ORDER BY seq DESC LIMIT 1"
    )
    for (const order of orders) {
      const event = lastEvent.get(order.id) as { kind: string; payload: string } | undefined
      if (event === undefined) {
        if (order.status !== "pending" || started) {
          found(`${when}: order ${order.id} (${order.status}) has no order event in the journal`)
        }
        continue
      }
      const journaled = (JSON.parse(event.payload) as { status?: string }).status
      if (journaled !== order.status) {
        found(
          `${when}: order ${order.id} is ${order.status} but its last journal event (${event.kind}) says ${journaled}`
        )
      }
    }
    // An order the venue never took is removed in the same write as its `order.rejected` (a refusal, or a pending
    // order its venue does not have at the next start): that event is all the journal may say of an order not stored.
    const keys = new Set(
      db
        .prepare("SELECT DISTINCT key FROM journal WHERE kind LIKE 'order.%' AND kind <> 'order.rejected'")
        .pluck()
        .all()
    )
    const ids = new Set(orders.map((o) => o.id))
    for (const key of keys) if (!ids.has(key as string)) found(`${when}: journal speaks of order ${key}, not stored`)
    return { orders: orders.length, journal: seqs.length }
  } finally {
    db.close()
  }
}

/** After a restart: the lost placements are sent again with the same client order id; each must exist once. */
const retryLost = async (serve: Serve, token: string) => {
  for (const [coid, body] of [...lost]) {
    stats.retriedLost++
    const result = await place(serve.url, token, body)
    if (result === "lost") found(`the retry of ${coid} after the restart had no answer`)
  }
}

const started = Date.now()
const port = await freePort()
let markets: ReadonlyArray<MarketView> = []
let round = 0
try {
  for (; round < kills && Date.now() - started < budgetMs; round++) {
    const serve = await startServe({ home, port })
    const token = ownerToken(home, port)
    if (round === 0) {
      const page = (await call(serve.url, "GET", "/venues/sim/markets?limit=8")).body.data as Array<any>
      markets = page
        .filter((m) => m.best_bid !== null && m.best_ask !== null)
        .map((m) => ({
          id: m.id,
          bid: Math.round(Number(m.best_bid) * 100),
          ask: Math.round(Number(m.best_ask) * 100)
        }))
    }
    await retryLost(serve, token)
    const killAfter = between(200, 2500)
    let killed = false
    const timer = setTimeout(() => {
      killed = true
      serve.child.kill("SIGKILL")
    }, killAfter)
    await Promise.all([1, 2, 3, 4].map(() => worker(serve, token, markets, round)))
    const ended = await serve.ended
    clearTimeout(timer)
    if (!killed) found(`round ${round}: the server ended by itself (code ${ended.code}): ${ended.stderr.slice(0, 300)}`)
    const { orders, journal } = verify(`after kill ${round + 1}`, false)
    console.log(
      `kill ${round + 1} after ${killAfter} ms: ${orders} orders, ${journal} journal events, ${lost.size} answers lost`
    )
  }
  // A last start: the lost placements once more, then a clean stop and the same checks.
  const serve = await startServe({ home, port })
  await retryLost(serve, ownerToken(home, port))
  serve.child.kill("SIGTERM")
  await serve.ended
  verify("after the last clean stop", true)
} finally {
  console.log(
    `crash test: seed ${seed}, ${round} kills in ${Math.round((Date.now() - started) / 1000)} s; ` +
      `${stats.placed} placed, ${stats.retried} retried, ${stats.canceled} cancels, ${stats.lost} answers lost ` +
      `(${stats.retriedLost} sent again after a restart)`
  )
}
if (findings.length > 0) {
  console.log(`crash test FAILED with ${findings.length} finding(s) (seed ${seed}); the home is kept at ${home}`)
  process.exit(1)
}
rmSync(join(home, ".."), { recursive: true, force: true })
console.log("crash test passed")
