import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { OwnerToken, request, testServer } from "../Http/TestServer.ts"
import {
  cancel,
  cents,
  children,
  events,
  LIVE,
  market,
  parent,
  place,
  price,
  run,
  settle,
  sumFilled
} from "./Support.ts"

const withServer = <A, E>(effect: Effect.Effect<A, E, any>) => effect.pipe(Effect.provide(testServer()))

/** Every parent answers as accepted, and its amounts are the sums of its children (G2). */
const assertSums = (p: any, kids: ReadonlyArray<any>, roles?: ReadonlyArray<string>) => {
  assert.strictEqual(Number(p.filled), sumFilled(kids, roles))
  assert.isAtMost(Number(p.filled), Number(p.amount))
  assert.strictEqual(Number(p.remaining), Number(p.amount) - Number(p.filled))
  for (const c of kids) assert.strictEqual(c.parent_id, p.id)
}

describe("stop_market and stop_limit", () => {
  it.effect("a sell stop at the bid fires on the first input (touch) with one IOC child at the protection price", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "sell",
          type: "stop_market",
          amount: "3",
          stop_price: price(m.bid)
        })
        assert.strictEqual(res.status, 201, res.text)
        assert.strictEqual(res.body.status, "waiting")
        assert.strictEqual(res.body.held_by, "engine")
        assert.isNull(res.body.parent_id)
        yield* run(2)
        const kids = yield* children(res.body.id)
        assert.strictEqual(kids.length, 1)
        assert.strictEqual(kids[0].time_in_force, "ioc")
        assert.strictEqual(kids[0].side, "sell")
        assert.strictEqual(kids[0].price, price(m.bid - 5))
        const p = yield* parent(res.body.id)
        assert.include(["closed", "canceled"], p.status)
        assertSums(p, kids)
        assert.strictEqual((yield* events(res.body.id, "managed.triggered")).length, 1)
        assert.strictEqual((yield* events(res.body.id, "managed.done")).length, 1)
      })
    )
  )

  it.effect("a stop that fires sends its child first: the journal tells the child, then the triggered record", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "sell",
          type: "stop_limit",
          amount: "2",
          stop_price: price(m.bid),
          price: "0.01"
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* run(2)
        const kinds = (yield* events(res.body.id)).map((e) =>
          e.kind === "order.updated" && e.key === res.body.id ? `parent:${(e.payload as any).status}` : e.kind
        )
        const child = kinds.indexOf("managed.child")
        const triggered = kinds.indexOf("managed.triggered")
        assert.isAtLeast(child, 0, kinds.join(" "))
        assert.isAbove(triggered, child, kinds.join(" "))
        // The triggered record and its event are one write, one after the other in the journal.
        assert.strictEqual(kinds[triggered - 1], "parent:triggered", kinds.join(" "))
        assert.strictEqual(kinds.filter((k) => k === "managed.triggered").length, 1)
      })
    )
  )

  it.effect("a buy stop on mid fires when the mid reaches it; a stop_limit on last rests its child at price", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market(1)
        const mid = Math.floor((m.bid + m.ask) / 2)
        const buy = yield* place({
          market_id: m.id,
          side: "buy",
          type: "stop_market",
          amount: "2",
          stop_price: price(mid),
          params: { trigger_source: "mid", protection: price(m.ask + 2) }
        })
        assert.strictEqual(buy.status, 201, buy.text)
        const m2 = yield* market(2)
        const limit = yield* place({
          market_id: m2.id,
          side: "sell",
          type: "stop_limit",
          amount: "2",
          stop_price: price(99),
          price: price(m2.ask + 10),
          params: { trigger_source: "last" }
        })
        assert.strictEqual(limit.status, 201, limit.text)
        yield* run(3)
        const buyKids = yield* children(buy.body.id)
        assert.strictEqual(buyKids.length, 1)
        assert.strictEqual(buyKids[0].price, price(m.ask + 2))
        const limitKids = yield* children(limit.body.id)
        assert.strictEqual(limitKids.length, 1, "a sell stop far above the last trade fires at once")
        assert.strictEqual(limitKids[0].price, price(m2.ask + 10))
        assert.strictEqual(limitKids[0].time_in_force, "gtc")
        assert.strictEqual((yield* parent(limit.body.id)).status, "triggered")
      })
    )
  )

  it.effect("a stop away from the market waits and sends nothing", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "sell",
          type: "stop_market",
          amount: "3",
          stop_price: "0.02"
        })
        yield* run(5)
        assert.strictEqual((yield* parent(res.body.id)).status, "waiting")
        assert.strictEqual((yield* children(res.body.id)).length, 0)
      })
    )
  )
})

describe("trailing_stop", () => {
  it.effect("the level ratchets one way, then fires once with one child", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "sell",
          type: "trailing_stop",
          amount: "2",
          params: { trail: "0.02" }
        })
        assert.strictEqual(res.status, 201, res.text)
        let fired = false
        for (let i = 0; i < 120 && !fired; i++) {
          yield* run(5)
          fired = (yield* children(res.body.id)).length > 0
        }
        const trailed = (yield* events(res.body.id, "managed.trailed")).map((e) => cents((e.payload as any).level))
        for (let i = 1; i < trailed.length; i++) assert.isAtLeast(trailed[i]!, trailed[i - 1]!)
        assert.isTrue(fired, "the trailing stop fired within ten minutes of simulated market")
        yield* run(2)
        assert.strictEqual((yield* children(res.body.id)).length, 1)
        const p = yield* parent(res.body.id)
        assert.isString(p.info.level)
        assert.strictEqual((yield* events(res.body.id, "managed.triggered")).length, 1)
      })
    )
  )
  it.effect("a client reading the parent sees the level it trailed to last, by id and in the list", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "sell",
          type: "trailing_stop",
          amount: "2",
          params: { trail: "0.04" }
        })
        assert.strictEqual(res.status, 201, res.text)
        assert.isNull(res.body.info.level, "no level before the first look at the market")
        let checked = 0
        for (let i = 0; i < 60; i++) {
          yield* run(3)
          const trailed = yield* events(res.body.id, "managed.trailed")
          if (trailed.length === 0) continue
          const p = yield* parent(res.body.id)
          if (p.info.fired === true) break
          const last = (trailed[trailed.length - 1]!.payload as any).level
          assert.strictEqual(p.info.level, last, "GET /trading/orders/{id} shows the current level")
          const token = yield* OwnerToken
          const listed = (yield* request("GET", "/trading/orders", { token })).body.data.find(
            (o: any) => o.id === res.body.id
          )
          assert.strictEqual(listed.info.level, last, "GET /trading/orders shows the current level")
          checked = trailed.length
        }
        assert.isAtLeast(checked, 2, "the level trailed more than once before it was checked")
      })
    )
  )
})

describe("iceberg", () => {
  it.effect("shows one slice at a time and reloads after the delay plus a seeded jitter", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "iceberg",
          amount: "6",
          price: price(m.ask + 3),
          params: { display: "2", reload_delay_s: 2, jitter_s: 1 }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* run(15)
        const kids = yield* children(res.body.id)
        assert.isAtLeast(kids.length, 2)
        for (const k of kids) assert.isAtMost(Number(k.amount), 2)
        for (let i = 1; i < kids.length; i++) {
          const previousDone = kids[i - 1].updated_at
          const gap = kids[i].created_at - previousDone
          assert.isAtLeast(gap, 2000, `reload ${i} after the delay`)
          assert.isAtMost(gap, 3000, `reload ${i} within delay + jitter`)
          assert.notInclude(LIVE, kids[i - 1].status, "one live slice at a time")
        }
        assertSums(yield* parent(res.body.id), kids)
      })
    )
  )
})

describe("oco", () => {
  it.effect("a partial fill on one leg resizes the other; a full fill cancels it", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const askSize = Number(m.book.asks[0].size)
        const amount = askSize * 2
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "oco",
          amount: String(amount),
          params: {
            legs: [
              { side: "buy", type: "limit", price: price(m.ask) },
              { side: "sell", type: "limit", price: price(Math.min(99, m.ask + 5)) }
            ]
          }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* settle
        const kids = yield* children(res.body.id)
        const buyFilled = sumFilled(kids.filter((k) => k.side === "buy"))
        assert.strictEqual(buyFilled, askSize, "the buy leg took the best ask level")
        const liveSell = kids.filter((k) => k.side === "sell" && LIVE.includes(k.status))
        assert.strictEqual(liveSell.length, 1)
        assert.strictEqual(Number(liveSell[0].amount), amount - askSize, "resized by the same fraction")
        // Fill the buy leg completely: the sell leg is cancelled in the same step.
        const full = yield* place({
          market_id: m.id,
          side: "buy",
          type: "oco",
          amount: "1",
          params: {
            legs: [
              { side: "buy", type: "limit", price: price(Math.min(98, m.ask + 3)) },
              { side: "sell", type: "limit", price: price(Math.min(99, m.ask + 6)) }
            ]
          }
        })
        yield* run(1)
        const fullKids = yield* children(full.body.id)
        assert.isTrue(fullKids.every((k) => !LIVE.includes(k.status)))
        assert.strictEqual((yield* parent(full.body.id)).status, "closed")
      })
    )
  )
})

describe("bracket", () => {
  it.effect("the exits grow with the entry's fills and always add up to what is held", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const askSize = Number(m.book.asks[0].size)
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "bracket",
          amount: String(askSize + 5),
          params: {
            entry: { price: price(m.ask) },
            take_profit: { price: price(Math.min(99, m.ask + 5)) },
            stop_loss: { stop_price: price(Math.max(1, m.bid - 30)) }
          }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* settle
        const check = Effect.gen(function* () {
          const kids = yield* children(res.body.id)
          const entry = sumFilled(kids, ["entry"])
          const exitsFilled = sumFilled(kids, ["take_profit", "stop_loss"])
          const exitsLive = kids
            .filter((k) => k.info.role === "take_profit" && LIVE.includes(k.status))
            .reduce((s, k) => s + Number(k.remaining), 0)
          assert.strictEqual(exitsLive, entry - exitsFilled, "B1")
          return entry
        })
        assert.strictEqual(yield* check, askSize)
        for (let i = 0; i < 10; i++) {
          yield* run(3)
          yield* check
        }
        const p = yield* parent(res.body.id)
        assert.strictEqual(Number(p.filled), sumFilled(yield* children(res.body.id), ["entry"]))
      })
    )
  )

  it.effect("an entry that ends unfilled ends the bracket with no exit ever sent", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "bracket",
          amount: "3",
          time_in_force: "ioc",
          params: {
            entry: { price: price(m.bid - 10) },
            take_profit: { price: "0.99" },
            stop_loss: { stop_price: "0.01" }
          }
        })
        yield* run(2)
        const kids = yield* children(res.body.id)
        assert.deepStrictEqual(
          kids.map((k) => k.info.role),
          ["entry"]
        )
        assert.strictEqual((yield* parent(res.body.id)).status, "canceled")
      })
    )
  )
})

describe("twap", () => {
  it.effect("taker style: IOC slices on schedule; the sizes add up to the amount", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "twap",
          amount: "10",
          price: price(m.ask + 5),
          params: { window_s: 40, slices: 4, style: "taker" }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* run(45)
        const kids = yield* children(res.body.id)
        const t0 = res.body.created_at
        const times = kids.map((k) => k.created_at - t0)
        assert.deepStrictEqual(times.slice(0, 4), [0, 10_000, 20_000, 30_000])
        assert.isTrue(kids.every((k) => k.time_in_force === "ioc"))
        assert.deepStrictEqual(
          kids.slice(0, 4).map((k) => k.amount),
          ["3", "3", "2", "2"]
        )
        assertSums(yield* parent(res.body.id), kids)
      })
    )
  )

  it.effect("finish stop: what is left is cancelled at the window's end and nothing is sent after it", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "twap",
          amount: "9",
          price: price(Math.max(1, m.bid - 20)),
          params: { window_s: 30, slices: 3, finish: "stop" }
        })
        yield* run(60)
        const kids = yield* children(res.body.id)
        assert.isTrue(kids.every((k) => k.created_at <= res.body.created_at + 30_000))
        assert.isTrue(kids.every((k) => !LIVE.includes(k.status)))
        const p = yield* parent(res.body.id)
        assert.strictEqual(p.status, Number(p.filled) === 9 ? "closed" : "canceled")
      })
    )
  )

  it.effect("finish complete: one IOC at the limit for what is left at the window's end", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "twap",
          amount: "9",
          price: price(Math.max(1, m.bid - 20)),
          params: { window_s: 30, slices: 3 }
        })
        yield* run(35)
        const kids = yield* children(res.body.id)
        const last = kids[kids.length - 1]
        assert.strictEqual(last.time_in_force, "ioc")
        assert.strictEqual(last.created_at, res.body.created_at + 30_000)
        assert.isTrue(kids.every((k) => !LIVE.includes(k.status)))
      })
    )
  )
})

describe("peg", () => {
  it.effect("rests at the near touch and re-pegs only after min_stay_s, within level_cap", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "peg",
          amount: "4",
          post_only: true,
          params: { reference: "near", min_stay_s: 3, level_cap: 5 }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* run(90)
        const kids = yield* children(res.body.id)
        assert.isAtLeast(kids.length, 1)
        const first = cents(kids[0].price)
        for (let i = 0; i < kids.length; i++) {
          assert.isAtMost(Math.abs(cents(kids[i].price) - first), 5, "level_cap")
          if (i > 0) assert.isAtLeast(kids[i].created_at - kids[i - 1].created_at, 3000, "min_stay_s")
          if (i < kids.length - 1) assert.notInclude(LIVE, kids[i].status)
        }
        assert.isTrue(kids.every((k) => k.post_only))
        assertSums(yield* parent(res.body.id), kids)
      })
    )
  )
})

describe("smart_taker", () => {
  it.effect("takes clips every interval inside the bound until filled or expires_s", () =>
    withServer(
      Effect.gen(function* () {
        const m = yield* market()
        const res = yield* place({
          market_id: m.id,
          side: "buy",
          type: "smart_taker",
          amount: "400",
          params: { clip: "2", interval_s: 1, max_slippage: "0.01", expires_s: 5 }
        })
        assert.strictEqual(res.status, 201, res.text)
        yield* run(10)
        const kids = yield* children(res.body.id)
        assert.isAtLeast(kids.length, 2)
        for (const k of kids) {
          assert.isAtMost(Number(k.amount), 2)
          assert.strictEqual(k.time_in_force, "ioc")
          assert.isAtMost(cents(k.price), m.ask + 1)
          assert.isAtMost(k.created_at, res.body.created_at + 5000)
        }
        const p = yield* parent(res.body.id)
        assert.strictEqual(p.status, "canceled")
        assertSums(p, kids)
      })
    )
  )
})

/** A parent of each type that is still working after it starts: its children rest or it waits. */
const WORKING = (m: { id: string; bid: number; ask: number }): Record<string, Record<string, unknown>> => ({
  stop_market: { side: "sell", stop_price: "0.01" },
  stop_limit: { side: "sell", stop_price: "0.01", price: "0.01" },
  trailing_stop: { side: "sell", params: { trail: "0.3" } },
  iceberg: { side: "buy", price: price(Math.max(1, m.bid - 10)), params: { display: "2" } },
  oco: {
    side: "buy",
    params: {
      legs: [
        { side: "buy", type: "limit", price: price(Math.max(1, m.bid - 10)) },
        { side: "sell", type: "limit", price: price(Math.min(99, m.ask + 10)) }
      ]
    }
  },
  bracket: {
    side: "buy",
    params: {
      entry: { price: price(Math.max(1, m.bid - 10)) },
      take_profit: { price: "0.99" },
      stop_loss: { stop_price: "0.01" }
    }
  },
  twap: { side: "buy", price: price(Math.max(1, m.bid - 10)), params: { window_s: 600, slices: 2 } },
  peg: { side: "buy", params: { reference: "near", offset: "0", max_price: price(Math.max(1, m.bid - 10)) } },
  smart_taker: { side: "buy", params: { limit: price(Math.max(1, m.bid - 10)), interval_s: 1, expires_s: 600 } }
})

describe("cancel and expiry of every type", () => {
  for (const type of [
    "stop_market",
    "stop_limit",
    "trailing_stop",
    "iceberg",
    "oco",
    "bracket",
    "twap",
    "peg",
    "smart_taker"
  ]) {
    it.effect(`${type}: cancel pulls every child and nothing is placed afterwards`, () =>
      withServer(
        Effect.gen(function* () {
          const m = yield* market()
          const res = yield* place({ market_id: m.id, type, amount: "4", ...WORKING(m)[type] })
          assert.strictEqual(res.status, 201, res.text)
          yield* run(3)
          const done = yield* cancel(res.body.id)
          assert.strictEqual(done.status, 200, done.text)
          yield* run(3)
          const count = (yield* children(res.body.id)).length
          yield* run(20)
          const kids = yield* children(res.body.id)
          assert.strictEqual(kids.length, count, "no child after the cancel")
          assert.isTrue(kids.every((k) => !LIVE.includes(k.status)))
          assert.strictEqual((yield* parent(res.body.id)).status, "canceled")
        })
      )
    )

    it.effect(`${type}: expires_at ends the parent expired with no live child`, () =>
      withServer(
        Effect.gen(function* () {
          const m = yield* market()
          const res = yield* place({ market_id: m.id, type, amount: "4", expires_at: 5000, ...WORKING(m)[type] })
          assert.strictEqual(res.status, 201, res.text)
          yield* run(8)
          const kids = yield* children(res.body.id)
          assert.isTrue(kids.every((k) => !LIVE.includes(k.status)))
          assert.strictEqual((yield* parent(res.body.id)).status, "expired")
          yield* run(10)
          assert.strictEqual((yield* children(res.body.id)).length, kids.length)
        })
      )
    )
  }
})
