import { assert, describe, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import fc from "fast-check"
import { existsSync, readFileSync } from "node:fs"
import { convertKalshi } from "../../sim/convert/Kalshi.ts"
import { convertPolymarket } from "../../sim/convert/Polymarket.ts"
import { generateTape } from "../../sim/Generator.ts"
import { replay, Scenario } from "../../sim/Replay.ts"
import { formatTape, parseTape } from "../../sim/Tape.ts"

const LONG = process.env["CROSSBOOK_LONG"] !== undefined
const RUNS = LONG ? { numRuns: 60 } : { seed: 42, numRuns: 6 }

const recorded = (path: string) => new URL(`../../../shared/fixtures/recorded/${path}`, import.meta.url)
const excerpt = (name: string) => new URL(`../../fixtures/tapes/${name}`, import.meta.url)
const read = (url: URL) => readFileSync(url, "utf8")

const tapes: Array<[string, string]> = [
  [
    "generated",
    (() => {
      const g = generateTape({ seed: 21, markets: 1, durationS: 90 })
      return formatTape(g.header, g.events)
    })()
  ],
  [
    "kalshi",
    (() => {
      const c = convertKalshi(
        read(
          existsSync(recorded("kalshi/ws_transcript.jsonl"))
            ? recorded("kalshi/ws_transcript.jsonl")
            : excerpt("kalshi_ws_excerpt.jsonl")
        )
      )
      return formatTape(c.header, c.events)
    })()
  ],
  [
    "polymarket",
    (() => {
      const c = convertPolymarket(
        read(
          existsSync(recorded("polymarket/ws_market_transcript.jsonl"))
            ? recorded("polymarket/ws_market_transcript.jsonl")
            : excerpt("polymarket_ws_excerpt.jsonl")
        )
      )
      return formatTape(c.header, c.events)
    })()
  ]
]

const TERMINAL = new Set(["closed", "canceled", "rejected", "expired"])
const RANK: Record<string, number> = {
  waiting: 0,
  triggered: 1,
  pending_cancel: 2,
  closed: 3,
  canceled: 3,
  rejected: 3,
  expired: 3
}
const cents = (p: string) => Math.round(Number(p) * 100)

/** Orders of every type, priced from the tape's first quoted book, at generated times and sizes. */
const scenarioArb = (tape: string) => {
  const { header, events } = parseTape(tape)
  const snap = events.find((e) => e.type === "snapshot" && e.bids.length > 0 && e.asks.length > 0)
  if (snap === undefined || snap.type !== "snapshot") throw new Error("no quoted book on the tape")
  const market = snap.market
  const lot = Number(header.markets.find((m) => m.id === market)!.lot)
  const bid = cents(snap.bids[0]![0])
  const ask = cents(snap.asks[0]![0])
  const span = events[events.length - 1]!.ts - events[0]!.ts
  const p = (c: number) => String(Math.min(99, Math.max(1, c)) / 100)
  const order = fc.record({
    type: fc.constantFrom(
      "limit",
      "stop_market",
      "stop_limit",
      "trailing_stop",
      "iceberg",
      "oco",
      "bracket",
      "twap",
      "peg",
      "smart_taker"
    ),
    side: fc.constantFrom("buy" as const, "sell" as const),
    lots: fc.integer({ min: 2, max: 12 }),
    shift: fc.integer({ min: -3, max: 3 }),
    at: fc.integer({ min: 0, max: Math.max(0, span - 1) }),
    expires: fc.option(fc.integer({ min: 500, max: 20_000 }), { nil: undefined })
  })
  return fc.array(order, { minLength: 1, maxLength: 6 }).map((list) =>
    Schema.decodeUnknownSync(Scenario)(
      list.map((o) => {
        const amount = String(o.lots * lot)
        const near = o.side === "buy" ? bid + o.shift : ask + o.shift
        const far = o.side === "buy" ? ask + 1 : bid - 1
        const base = {
          market_id: market,
          side: o.side,
          amount,
          ...(o.expires === undefined ? {} : { expires_at: events[0]!.ts + o.at + o.expires })
        }
        const params: Record<string, unknown> = {
          limit: { ...base, type: "limit", price: p(near) },
          stop_market: { ...base, type: "stop_market", stop_price: p(near) },
          stop_limit: { ...base, type: "stop_limit", stop_price: p(near), price: p(far) },
          trailing_stop: { ...base, type: "trailing_stop", params: { trail: "0.01" } },
          iceberg: {
            ...base,
            type: "iceberg",
            price: p(near),
            params: { display: String(lot * 2), reload_delay_s: 1, jitter_s: 1 }
          },
          oco: {
            ...base,
            type: "oco",
            params: {
              legs: [
                { side: o.side, type: "limit", price: p(near) },
                { side: o.side === "buy" ? "sell" : "buy", type: "limit", price: p(far + (o.side === "buy" ? 3 : -3)) }
              ]
            }
          },
          bracket: {
            ...base,
            type: "bracket",
            params: {
              entry: { price: p(near) },
              take_profit: { price: p(o.side === "buy" ? near + 3 : near - 3) },
              stop_loss: { stop_price: p(o.side === "buy" ? near - 3 : near + 3) }
            }
          },
          twap: {
            ...base,
            type: "twap",
            price: p(far),
            params: { window_s: 4, slices: 2, style: o.shift > 0 ? "taker" : "limit" }
          },
          peg: { ...base, type: "peg", params: { reference: "near", min_stay_s: 1 } },
          smart_taker: {
            ...base,
            type: "smart_taker",
            params: { clip: String(lot), interval_s: 1, limit: p(far), expires_s: 3 }
          }
        }
        return { at_ms: o.at, order: params[o.type] }
      })
    )
  )
}

/** Checks the invariants every run must keep, from the event log alone. */
const checkLog = (log: string) => {
  const events =
    log.trim() === ""
      ? []
      : log
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
  const parents = new Map<string, { status: string; amount: number; type: string; endedAt: number | null }>()
  const children = new Map<
    string,
    { parent: string; status: string; filled: number; remaining: number; role: string }
  >()
  const fills = new Set<string>()
  for (const e of events) {
    if (e.kind === "fill.new") {
      assert.isFalse(fills.has(e.payload.id), `fill ${e.payload.id} delivered once`)
      fills.add(e.payload.id)
    }
    if (!e.kind.startsWith("order.") || e.kind === "order.rejected") continue
    const o = e.payload
    if (o.held_by === "engine") {
      const before = parents.get(o.id)
      if (before !== undefined) {
        // G1: only forward, and a terminal status never changes.
        assert.isAtLeast(RANK[o.status]!, RANK[before.status]!, `${o.id}: ${before.status} → ${o.status}`)
        if (TERMINAL.has(before.status))
          assert.strictEqual(o.status, before.status, `${o.id} changed after ${before.status}`)
      }
      parents.set(o.id, {
        status: o.status,
        amount: Number(o.amount),
        type: o.type,
        endedAt: before?.endedAt ?? (TERMINAL.has(o.status) || o.status === "pending_cancel" ? e.seq : null)
      })
      // G2: filled is the sum of counted children and never over the amount.
      const counted = [...children.values()].filter(
        (c) => c.parent === o.id && (o.type !== "bracket" || c.role === "entry" || !o.info.params?.entry)
      )
      assert.strictEqual(
        Number(o.filled),
        counted.reduce((s, c) => s + c.filled, 0),
        `${o.id} filled = Σ children`
      )
      assert.isAtMost(Number(o.filled), Number(o.amount))
    } else if (o.parent_id !== null) {
      const parent = parents.get(o.parent_id)
      if (!children.has(o.id)) {
        // No child after its parent stopped.
        assert.isDefined(parent)
        assert.isNull(parent!.endedAt, `${o.id} placed after ${o.parent_id} stopped`)
      }
      children.set(o.id, {
        parent: o.parent_id,
        status: o.status,
        filled: Number(o.filled),
        remaining: Number(o.remaining),
        role: o.info.role
      })
      // W2 / P2: what is filled plus what is working never exceeds the parent's amount (oco and bracket have their own).
      if (parent !== undefined && !["oco", "bracket"].includes(parent.type)) {
        let committed = 0
        for (const c of children.values()) {
          if (c.parent !== o.parent_id) continue
          committed += c.filled + (TERMINAL.has(c.status) ? 0 : c.remaining)
        }
        assert.isAtMost(committed, parent.amount, `${o.parent_id}: filled + working ≤ amount`)
      }
    }
  }
  return { parents: parents.size, children: children.size }
}

describe("invariants over recorded and generated tapes", () => {
  for (const [name, tape] of tapes) {
    it.live(`G1, G2, W2, P2 and one delivery per fill hold for generated scenarios on the ${name} tape`, () =>
      Effect.gen(function* () {
        const seen = { parents: 0, children: 0, refused: 0 }
        yield* Effect.promise(() =>
          fc.assert(
            fc.asyncProperty(scenarioArb(tape), async (orders) => {
              const { log, summary } = await Effect.runPromise(replay({ tape, orders, seed: 1 }))
              const counts = checkLog(log)
              seen.parents += counts.parents
              seen.children += counts.children
              seen.refused += summary.orders.refused.length
            }),
            RUNS
          )
        )
        // The scenarios really exercised the engine: parents were accepted and placed children.
        assert.isAbove(seen.parents, 0)
        assert.isAbove(seen.children, 0)
      })
    )
  }
})
