// The sim exchange: determinism, stepping, book sanity, own orders through the API, fees, events and expiry.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import type { Side } from "../../../src/Domain/Market.ts"
import {
  FINISHED_KEPT,
  type SimEvent,
  SimExchange,
  type SimOrderRequest,
  type SimOrderResult,
  takerFee
} from "../../../src/Venues/Sim/Exchange.ts"

const START = Date.UTC(2026, 11, 1, 14, 0, 0)
const TICK = F.of("0.01")

const make = (seed = 11, stepMs = 1000) => new SimExchange({ seed, startMs: START, stepMs })
const openIds = (ex: SimExchange) =>
  ex
    .markets()
    .filter((m) => m.status === "open")
    .map((m) => m.nativeId)
const state = (ex: SimExchange) =>
  JSON.stringify(
    ex.markets().map((m) => ({
      m,
      fv: ex.fairValue(m.nativeId),
      book: ex.book(m.nativeId),
      trades: ex.trades(m.nativeId)
    }))
  )
const accepted = (r: SimOrderResult) => {
  if (r._tag !== "Accepted") throw new Error(`refused: ${r.code} ${r.reason}`)
  return r
}

/** Everything wrong with the books: crossed, off the grid, outside [0.01, 0.99], unsorted, empty levels. */
const bookProblems = (ex: SimExchange): Array<string> => {
  const out: Array<string> = []
  for (const m of ex.markets()) {
    const book = ex.book(m.nativeId)
    const bid = book.bids[0]
    const ask = book.asks[0]
    if (bid !== undefined && ask !== undefined && bid.price >= ask.price) out.push(`${m.nativeId} crossed`)
    for (const [levels, dir] of [
      [book.bids, -1],
      [book.asks, 1]
    ] as const) {
      levels.forEach((l, i) => {
        const where = `${m.nativeId} ${F.format(l.price)}`
        if (!F.isMultipleOf(l.price, m.tick)) out.push(`${where} off tick`)
        if (l.price < F.of("0.01") || l.price > F.of("0.99")) out.push(`${where} out of range`)
        if (l.size <= 0 || !F.isMultipleOf(l.size, m.lot)) out.push(`${where} bad size ${l.size}`)
        if (i > 0 && Math.sign(l.price - levels[i - 1]!.price) !== dir) out.push(`${where} out of order`)
      })
    }
  }
  return out
}
const expectSaneBooks = (ex: SimExchange) => expect(bookProblems(ex)).toEqual([])

describe("takerFee", () => {
  it("is 0.07 × contracts × p × (1 − p), rounded up to the cent", () => {
    const fee = (price: string, amount: number) => F.format(takerFee(F.of(price), F.fromInt(amount)))
    expect(fee("0.5", 10)).toBe("0.18")
    expect(fee("0.5", 1)).toBe("0.02")
    expect(fee("0.35", 100)).toBe("1.6")
    expect(fee("0.5", 100)).toBe("1.75")
    expect(fee("0.01", 1)).toBe("0.01")
    expect(fee("0.99", 1000)).toBe("0.7")
    expect(fee("0.2", 25)).toBe("0.28")
  })
})

describe("SimExchange determinism", () => {
  it("the same seed gives the same markets, books, trades and events; another seed differs", () => {
    const a = make(11)
    const b = make(11)
    expect(state(a)).toBe(state(b))
    const ea = a.advanceTo(START + 120_000)
    const eb = b.advanceTo(START + 120_000)
    expect(ea.length).toBeGreaterThan(0)
    expect(JSON.stringify(ea)).toBe(JSON.stringify(eb))
    expect(state(a)).toBe(state(b))
    const c = make(12)
    c.advanceTo(START + 120_000)
    expect(state(c)).not.toBe(state(a))
  })

  it("advancing in one call or in many increments gives the same events and state, own orders included", () => {
    const setup = () => {
      const ex = make(5)
      const [m1, m2] = openIds(ex)
      const at = (id: string, side: Side) => ex.book(id)[side === "buy" ? "bids" : "asks"][0]!.price
      accepted(ex.placeOrder({ marketId: m1!, side: "buy", price: at(m1!, "buy"), amount: F.fromInt(20) }, START))
      accepted(ex.placeOrder({ marketId: m2!, side: "sell", price: at(m2!, "sell"), amount: F.fromInt(20) }, START))
      const gtd = { tif: "gtd", expiresAt: START + 7_500 } as const
      accepted(ex.placeOrder({ marketId: m2!, side: "buy", price: TICK, amount: F.ONE, ...gtd }, START))
      return ex
    }
    const one = setup()
    const many = setup()
    const end = START + 90_000
    const all = one.advanceTo(end)
    const parts: Array<SimEvent> = []
    for (let t = START; t <= end; t += 377) parts.push(...many.advanceTo(t))
    parts.push(...many.advanceTo(end))
    expect(JSON.stringify(parts)).toBe(JSON.stringify(all))
    expect(state(many)).toBe(state(one))
    expect(JSON.stringify(many.openOrders())).toBe(JSON.stringify(one.openOrders()))
    expect(all.some((e) => e._tag === "OrderUpdate" && e.order.status === "expired")).toBe(true)
  })

  it("orders ids come from a counter after the exchange's start, so a later start never repeats one", () => {
    const ex = make()
    const id = openIds(ex)[0]!
    const ids = [1, 2, 3].map(
      (i) => accepted(ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.fromInt(i) }, START)).order.id
    )
    const run = START.toString(36)
    expect(ids).toEqual([`sim-${run}-000001`, `sim-${run}-000002`, `sim-${run}-000003`])
    const later = new SimExchange({ seed: 11, startMs: START + 1000, stepMs: 1000 })
    expect(
      accepted(later.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE }, START + 1000)).order.id
    ).not.toBe(ids[0])
  })
})

describe("SimExchange stepping", () => {
  it("keeps every book uncrossed, on the grid and within [0.01, 0.99] after every step", () => {
    const ex = make(3)
    for (let k = 1; k <= 400; k++) {
      ex.advanceTo(START + k * 1000)
      expectSaneBooks(ex)
    }
  })

  it("moves only open markets, prints trades newest first, emits at most one BookChanged per market per step", () => {
    const ex = make(9)
    const frozen = ex.markets().filter((m) => m.status !== "open")
    const before = frozen.map((m) => JSON.stringify(ex.book(m.nativeId)))
    for (let k = 1; k <= 60; k++) {
      const events = ex.advanceTo(START + k * 1000)
      const changed = events.filter((e) => e._tag === "BookChanged").map((e) => e.marketId)
      expect(new Set(changed).size).toBe(changed.length)
      for (const e of events)
        if (e._tag !== "OrderUpdate") expect(frozen.map((m) => m.nativeId)).not.toContain(e.marketId)
    }
    expect(frozen.map((m) => JSON.stringify(ex.book(m.nativeId)))).toEqual(before)
    const settled = frozen.find((m) => m.status === "settled")!
    expect(ex.book(settled.nativeId).bids).toEqual([])
    const id = openIds(ex)[0]!
    const trades = ex.trades(id)
    expect(trades.length).toBeGreaterThan(0)
    for (let i = 1; i < trades.length; i++) expect(trades[i]!.ts).toBeLessThanOrEqual(trades[i - 1]!.ts)
    const since = START + 30_000
    expect(ex.trades(id, { sinceMs: since })).toEqual(trades.filter((t) => t.ts >= since))
  })

  it("the walk stays within [0.02, 0.98] and does not sit still", () => {
    const ex = make(4, 60_000)
    const id = openIds(ex)[0]!
    const seen = new Set<number>()
    for (let k = 1; k <= 2000; k++) {
      ex.advanceTo(START + k * 60_000)
      const fv = ex.fairValue(id)
      expect(fv).toBeGreaterThanOrEqual(F.of("0.02"))
      expect(fv).toBeLessThanOrEqual(F.of("0.98"))
      seen.add(fv)
    }
    expect(seen.size).toBeGreaterThan(5)
  })

  it("closes markets at their close time and cancels their own orders", () => {
    const ex = make(2, 3_600_000)
    const id = openIds(ex)[0]!
    const placed = accepted(ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE }, START)).order
    const close = ex.market(id)!.closeTime
    const events = ex.advanceTo(close + 3_600_000)
    expect(ex.market(id)!.status).toBe("closed")
    expect(ex.order(placed.id)!.status).toBe("canceled")
    expect(events.some((e) => e._tag === "OrderUpdate" && e.order.id === placed.id)).toBe(true)
    const refused = ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE }, close + 3_600_000)
    expect(refused._tag === "Refused" && refused.code).toBe("market_closed")
  })
})

describe("SimExchange own orders", () => {
  it("a crossing buy takes the best ask at its price, as taker, with the taker fee", () => {
    const ex = make()
    const id = openIds(ex)[0]!
    const ask = ex.book(id).asks[0]!
    const amount = F.min(ask.size, F.fromInt(10))
    const r = accepted(
      ex.placeOrder({ marketId: id, side: "buy", price: ask.price, amount, clientOrderId: "c-1" }, START)
    )
    const fills = r.events.flatMap((e) => (e._tag === "Fill" ? [e.fill] : []))
    expect(fills).toHaveLength(1)
    expect(fills[0]).toMatchObject({ price: ask.price, amount, side: "buy", liquidity: "taker", clientOrderId: "c-1" })
    expect(fills[0]!.fee).toBe(takerFee(ask.price, amount))
    const trade = r.events.find((e) => e._tag === "Trade")
    expect(trade?._tag === "Trade" && trade.trade.id).toBe(fills[0]!.tradeId)
    expect(trade?._tag === "Trade" && trade.trade.takerSide).toBe("buy")
    expect(r.order).toMatchObject({ status: "closed", filled: amount, remaining: 0, avgPrice: ask.price })
    expect(r.order.cost).toBe(F.mul(ask.price, amount))
    expect(r.order.fee).toBe(takerFee(ask.price, amount))
    expect(r.events.filter((e) => e._tag === "BookChanged")).toHaveLength(1)
    expect(ex.orderByClientId("c-1")?.id).toBe(r.order.id)
  })

  it("a resting bid joins behind the displayed size and is filled as maker, fee free, only after it", () => {
    const ex = make(21)
    const id = openIds(ex)[2]!
    const bid = ex.book(id).bids[0]!
    const r = accepted(ex.placeOrder({ marketId: id, side: "buy", price: bid.price, amount: F.fromInt(5) }, START))
    expect(ex.queueAhead(r.order.id)).toBe(bid.size)
    expect(ex.book(id).bids[0]!.size).toBe(F.add(bid.size, F.fromInt(5)))
    let t = START
    let filled: Array<SimEvent> = []
    while (filled.length === 0 && t < START + 3_600_000) {
      t += 1000
      const events = ex.advanceTo(t)
      filled = events.filter((e) => e._tag === "Fill" && e.fill.orderId === r.order.id)
    }
    expect(filled.length).toBeGreaterThan(0)
    const first = filled[0]!
    expect(first._tag === "Fill" && first.fill.liquidity).toBe("maker")
    expect(first._tag === "Fill" && first.fill.fee).toBe(0)
    expect(first._tag === "Fill" && first.fill.price).toBe(bid.price)
  })

  it("when the value moves through a resting order, the re-laid maker quotes fill it at its own price", () => {
    const ex = make(8)
    for (const id of openIds(ex).slice(0, 8)) {
      const { bids, asks } = ex.book(id)
      accepted(ex.placeOrder({ marketId: id, side: "buy", price: bids[0]!.price, amount: F.fromInt(3000) }, START))
      accepted(ex.placeOrder({ marketId: id, side: "sell", price: asks[0]!.price, amount: F.fromInt(3000) }, START))
    }
    let reached = 0
    for (let k = 1; k <= 300; k++) {
      const before = ex.openOrders()
      const events = ex.advanceTo(START + k * 1000)
      expectSaneBooks(ex)
      for (const o of before) {
        const fv = ex.fairValue(o.marketId)
        const through = o.side === "buy" ? o.price >= fv + 2 * TICK : o.price <= fv - 2 * TICK
        if (!through) continue
        reached++
        const fills = events.flatMap((e) => (e._tag === "Fill" && e.fill.orderId === o.id ? [e.fill] : []))
        expect(fills.length).toBeGreaterThan(0)
        for (const f of fills) expect(f).toMatchObject({ price: o.price, liquidity: "maker", fee: 0 })
      }
    }
    expect(reached).toBeGreaterThan(0)
  })

  it("IOC cancels the rest, FOK is all or nothing, post-only refuses to cross", () => {
    const ex = make()
    const id = openIds(ex)[1]!
    const book = ex.book(id)
    const ask = book.asks[0]!
    const ioc = accepted(
      ex.placeOrder({ marketId: id, side: "buy", price: ask.price, amount: F.add(ask.size, F.ONE), tif: "ioc" }, START)
    )
    expect(ioc.order).toMatchObject({ status: "canceled", filled: ask.size, remaining: F.ONE })
    const next = ex.book(id).asks[0]!
    const fok = ex.placeOrder(
      {
        marketId: id,
        side: "buy",
        price: next.price,
        amount: F.add(next.size, F.ONE),
        tif: "fok",
        clientOrderId: "fk"
      },
      START
    )
    expect(fok).toMatchObject({ _tag: "Refused", code: "order_rejected", reason: "fok_not_filled" })
    expect(ex.orderByClientId("fk")?.status).toBe("rejected")
    expect(ex.book(id).asks[0]).toEqual(next)
    const post = ex.placeOrder(
      { marketId: id, side: "sell", price: ex.book(id).bids[0]!.price, amount: F.ONE, postOnly: true },
      START
    )
    expect(post).toMatchObject({ _tag: "Refused", code: "order_rejected", reason: "post_only_would_cross" })
  })

  it("answers for every open order and the last finished ones; older finished ones are let go", () => {
    const ex = make()
    const id = openIds(ex)[2]!
    const low = ex.book(id).bids.at(-1)!.price
    const resting = accepted(
      ex.placeOrder({ marketId: id, side: "buy", price: low, amount: F.ONE, clientOrderId: "rest" }, START)
    )
    // Buys far under the ask that cancel at once (ioc): each finishes as it is placed.
    const n = 3 * FINISHED_KEPT
    const ids: Array<string> = []
    for (let i = 0; i < n; i++) {
      const r = accepted(
        ex.placeOrder(
          { marketId: id, side: "buy", price: low, amount: F.ONE, tif: "ioc", clientOrderId: `c${i}` },
          START
        )
      )
      expect(r.order.status).toBe("canceled")
      ids.push(r.order.id)
    }
    expect(ex.order(resting.order.id)?.status).toBe("open")
    expect(ex.openOrders().map((o) => o.id)).toEqual([resting.order.id])
    expect(ex.orderByClientId("rest")?.id).toBe(resting.order.id)
    // The last to finish are answered for, by id and client id, and their client ids are still refused.
    const last = ids.slice(-FINISHED_KEPT)
    expect(last.every((o) => ex.order(o)?.status === "canceled")).toBe(true)
    expect(ex.orderByClientId(`c${n - 1}`)?.id).toBe(ids[n - 1])
    expect(
      ex.placeOrder({ marketId: id, side: "buy", price: low, amount: F.ONE, clientOrderId: `c${n - 1}` }, START)
    ).toMatchObject({ _tag: "Refused", reason: "duplicate_client_order_id" })
    // The first are let go: what is known stays bounded however long the exchange runs.
    expect(ex.order(ids[0]!)).toBeUndefined()
    expect(ex.orderByClientId("c0")).toBeUndefined()
    expect(ids.filter((o) => ex.order(o) !== undefined).length).toBeLessThanOrEqual(2 * FINISHED_KEPT)
  })

  it("cancel and amend report the rule they followed", () => {
    const ex = make()
    const id = openIds(ex)[0]!
    const price = ex.book(id).bids[0]!.price
    const a = accepted(ex.placeOrder({ marketId: id, side: "buy", price, amount: F.fromInt(10) }, START)).order
    const b = accepted(ex.placeOrder({ marketId: id, side: "buy", price, amount: F.fromInt(10) }, START)).order
    const ahead = ex.queueAhead(a.id)!
    const smaller = accepted(ex.amendOrder(a.id, { amount: F.fromInt(4) }, START))
    expect(smaller.order).toMatchObject({ amount: F.fromInt(4), queuePriorityPreserved: true })
    expect(ex.queueAhead(a.id)).toBe(ahead)
    const bigger = accepted(ex.amendOrder(a.id, { amount: F.fromInt(6) }, START))
    expect(bigger.order.queuePriorityPreserved).toBe(false)
    expect(ex.queueAhead(a.id)).toBe(F.add(ahead, F.fromInt(10)))
    expect(ex.amendOrder(a.id, { price: F.of("0.123") }, START)).toMatchObject({ _tag: "Refused", code: "invalid" })
    const canceled = accepted(ex.cancelOrder(b.id, START))
    expect(canceled.order.status).toBe("canceled")
    expect(canceled.events.map((e) => e._tag)).toEqual(["OrderUpdate", "BookChanged"])
    expect(ex.cancelOrder(b.id, START)).toMatchObject({ _tag: "Refused", code: "order_rejected" })
    expect(ex.cancelOrder("sim-999999", START)).toMatchObject({ _tag: "Refused", code: "not_found" })
    expect(ex.openOrders().map((o) => o.id)).toEqual([a.id])
  })

  it("an order expiring at a step's time expires before that step runs", () => {
    const ex = make()
    const id = openIds(ex).find((m) => ex.fairValue(m) > F.of("0.2"))!
    const gtd = { tif: "gtd", expiresAt: START + 3_000 } as const
    const r = accepted(ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE, ...gtd }, START))
    const events = ex.advanceTo(START + 3_000)
    const expired = events.findIndex((e) => e._tag === "OrderUpdate" && e.order.id === r.order.id)
    const step = events.findIndex((e) => e._tag === "BookChanged" && e.ts === START + 3_000)
    expect(expired).toBeGreaterThanOrEqual(0)
    expect(step).toBeGreaterThanOrEqual(0)
    expect(expired).toBeLessThan(step)
  })

  it("expires gtd orders at their time, wherever the calls fall", () => {
    const ex = make()
    const id = openIds(ex).find((m) => ex.fairValue(m) > F.of("0.2"))!
    const gtd = (expiresAt: number) =>
      accepted(
        ex.placeOrder({ marketId: id, side: "buy", price: TICK, amount: F.ONE, tif: "gtd", expiresAt }, START + 100)
      ).order.id
    const first = gtd(START + 2_500)
    const second = gtd(START + 3_200)
    const updates = (events: ReadonlyArray<SimEvent>) =>
      events.flatMap((e) => (e._tag === "OrderUpdate" ? [e.order] : []))
    expect(updates(ex.advanceTo(START + 2_499))).toEqual([])
    expect(updates(ex.advanceTo(START + 2_500))).toMatchObject([
      { id: first, status: "expired", updatedAt: START + 2_500 }
    ])
    expect(ex.openOrders().map((o) => o.id)).toEqual([second])
    expect(updates(ex.advanceTo(START + 10_000))).toMatchObject([
      { id: second, status: "expired", updatedAt: START + 3_200 }
    ])
    expect(ex.order(first)?.status).toBe("expired")
    expect(ex.openOrders()).toEqual([])
  })

  it("refuses what it cannot take", () => {
    const ex = make()
    const open = openIds(ex)[0]!
    const closed = ex.markets().find((m) => m.status === "closed")!.nativeId
    const base: SimOrderRequest = { marketId: open, side: "buy", price: TICK, amount: F.ONE }
    const code = (r: SimOrderResult) => (r._tag === "Refused" ? `${r.code}:${r.reason}` : "accepted")
    expect(code(ex.placeOrder({ ...base, marketId: closed }, START))).toBe("market_closed:market_closed")
    expect(code(ex.placeOrder({ ...base, marketId: "NOPE" }, START))).toBe("not_found:market_not_found")
    expect(code(ex.placeOrder({ ...base, price: F.of("0.015") }, START))).toBe("invalid:price_off_tick")
    expect(code(ex.placeOrder({ ...base, price: F.ONE }, START))).toBe("invalid:price_out_of_range")
    expect(code(ex.placeOrder({ ...base, amount: F.of("1.5") }, START))).toBe("invalid:amount_not_lot_multiple")
    expect(code(ex.placeOrder({ ...base, tif: "gtd" }, START))).toBe("invalid:gtd_requires_expires_at")
    expect(code(ex.placeOrder({ ...base, tif: "gtd", expiresAt: START }, START))).toBe(
      "invalid:expires_at_not_in_future"
    )
    expect(code(ex.placeOrder({ ...base, tif: "ioc", postOnly: true }, START))).toBe(
      "invalid:post_only_requires_gtc_or_gtd"
    )
    expect(code(ex.placeOrder({ ...base, clientOrderId: "dup" }, START))).toBe("accepted")
    expect(code(ex.placeOrder({ ...base, clientOrderId: "dup" }, START))).toBe("invalid:duplicate_client_order_id")
  })
})

describe("SimExchange property", () => {
  type Cmd =
    | {
        readonly k: "place"
        readonly m: number
        readonly side: Side
        readonly off: number
        readonly amount: number
        readonly tif: number
      }
    | { readonly k: "cancel"; readonly pick: number }
    | { readonly k: "amend"; readonly pick: number; readonly off: number; readonly amount: number }
    | { readonly k: "wait"; readonly ms: number }

  const cmd: fc.Arbitrary<Cmd> = fc.oneof(
    fc.record({
      k: fc.constant("place" as const),
      m: fc.integer({ min: 0, max: 3 }),
      side: fc.constantFrom<Side>("buy", "sell"),
      off: fc.integer({ min: -4, max: 4 }),
      amount: fc.integer({ min: 1, max: 300 }),
      tif: fc.integer({ min: 0, max: 4 })
    }),
    fc.record({ k: fc.constant("cancel" as const), pick: fc.nat() }),
    fc.record({
      k: fc.constant("amend" as const),
      pick: fc.nat(),
      off: fc.integer({ min: -3, max: 3 }),
      amount: fc.integer({ min: 1, max: 300 })
    }),
    fc.record({ k: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 8_000 }) })
  )
  const TIFS = ["gtc", "gtc", "ioc", "fok", "gtd"] as const

  const run = (cmds: ReadonlyArray<Cmd>, check: boolean) => {
    const ex = make(77)
    const ids = openIds(ex).slice(0, 4)
    const log: Array<unknown> = []
    const filled = new Map<string, number>()
    const placed: Array<string> = []
    let t = START
    const take = (r: SimOrderResult | ReadonlyArray<SimEvent>) => {
      const events = "_tag" in r ? r.events : r
      for (const e of events)
        if (e._tag === "Fill") filled.set(e.fill.orderId, (filled.get(e.fill.orderId) ?? 0) + e.fill.amount)
      log.push(r)
    }
    for (const c of cmds) {
      if (c.k === "wait") {
        t += c.ms
        take(ex.advanceTo(t))
      } else if (c.k === "place") {
        const id = ids[c.m]!
        const fv = ex.fairValue(id)
        const price = Math.min(99, Math.max(1, Math.round(fv / TICK) + (c.side === "buy" ? c.off : -c.off))) * TICK
        const tif = TIFS[c.tif]!
        const r = ex.placeOrder(
          {
            marketId: id,
            side: c.side,
            price: price as F.Fixed,
            amount: F.fromInt(c.amount),
            tif,
            postOnly: c.tif === 1,
            expiresAt: tif === "gtd" ? t + 3_000 : null
          },
          t
        )
        if (r._tag === "Accepted" || r.order !== undefined)
          placed.push(r._tag === "Accepted" ? r.order.id : r.order!.id)
        take(r)
      } else if (placed.length > 0) {
        const target = placed[c.pick % placed.length]!
        if (c.k === "cancel") take(ex.cancelOrder(target, t))
        else {
          const o = ex.order(target)!
          const price = Math.min(99, Math.max(1, Math.round(o.price / TICK) + c.off)) * TICK
          take(ex.amendOrder(target, { price: price as F.Fixed, amount: F.fromInt(c.amount) }, t))
        }
      }
      if (!check) continue
      expectSaneBooks(ex)
      for (const id of placed) {
        const o = ex.order(id)!
        expect(o.filled).toBe(filled.get(id) ?? 0)
        expect(F.add(o.filled, o.remaining)).toBe(o.amount)
        expect(o.filled).toBeLessThanOrEqual(o.amount)
        expect(o.status === "closed").toBe(o.remaining === 0 && o.status !== "rejected")
      }
      const open = ex.openOrders()
      expect(open.every((o) => o.remaining > 0)).toBe(true)
      for (const o of open) {
        const levels = ex.book(o.marketId)[o.side === "buy" ? "bids" : "asks"]
        const level = levels.find((l) => l.price === o.price)!
        const own = open.filter((x) => x.marketId === o.marketId && x.side === o.side && x.price === o.price)
        expect(level.size).toBeGreaterThanOrEqual(own.reduce((s, x) => s + x.remaining, 0))
      }
    }
    return JSON.stringify(log)
  }

  it("books stay sane, fills add up to what orders report, and replays are identical", () => {
    fc.assert(
      fc.property(fc.array(cmd, { maxLength: 40 }), (cmds) => {
        expect(run(cmds, true)).toBe(run(cmds, false))
      }),
      { numRuns: 60 }
    )
  })
})
