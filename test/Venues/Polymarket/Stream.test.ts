/** The market channel against the recorded transcript, the user channel's messages, and a socket that drops. */
import { Effect, Queue } from "effect"
import fc from "fast-check"
import { existsSync, readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { WebSocketServer } from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import {
  MarketBooks,
  marketSubscription,
  type OwnOrder,
  OwnFills,
  type UserTradeMessage,
  parseMarketFrame,
  parseUserFrame,
  runChannel,
  statedBest
} from "../../../src/Venues/Polymarket/Stream.ts"

const TRANSCRIPT = new URL(
  "../../../../shared/fixtures/recorded/polymarket/ws_market_transcript.jsonl",
  import.meta.url
)
const haveShared = existsSync(fileURLToPath(TRANSCRIPT))

/** The incoming frames of the transcript, each as the text the socket would have carried. */
const incomingFrames = (): Array<string> =>
  readFileSync(TRANSCRIPT, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as { dir: string; msg: unknown })
    .filter((l) => l.dir === "in")
    .map((l) => (typeof l.msg === "string" ? l.msg : JSON.stringify(l.msg)))

describe.skipIf(!haveShared)(
  haveShared ? "recorded market channel" : "recorded market channel — SKIPPED: ../shared/fixtures is absent",
  () => {
    it("every frame parses: 10 books, 121 price changes, 2 last trades, PONGs ignored", () => {
      const counts: Record<string, number> = {}
      for (const frame of incomingFrames()) {
        const { messages, bad } = parseMarketFrame(frame)
        expect(bad).toEqual([])
        for (const m of messages) counts[m.event_type] = (counts[m.event_type] ?? 0) + 1
      }
      expect(counts).toEqual({ book: 10, price_change: 121, last_trade_price: 2 })
    })

    it("after each of the 242 price changes the token's book shows the venue's own best bid and ask", () => {
      // The venue states the best prices as of its whole update, which it may split into several messages with
      // one timestamp: a stated best is compared once the market's next update (another timestamp) begins.
      const books = new MarketBooks()
      const pending = new Map<string, { ts: string; checks: Array<() => void> }>()
      let checked = 0
      const flush = (market: string) => {
        for (const check of pending.get(market)?.checks ?? []) check()
        pending.delete(market)
      }
      for (const frame of incomingFrames()) {
        for (const m of parseMarketFrame(frame).messages) {
          const key = m.market
          if (m.event_type === "price_change" && pending.get(key)?.ts !== String(m.timestamp)) flush(key)
          if (m.event_type === "book") flush(key)
          books.apply(m)
          if (m.event_type !== "price_change") continue
          const entry = pending.get(key) ?? { ts: String(m.timestamp), checks: [] }
          pending.set(key, entry)
          for (const e of m.price_changes) {
            entry.checks.push(() => {
              const b = books.book(e.asset_id)!
              expect([b.bestBid(), b.bestAsk()]).toEqual([statedBest(e.best_bid), statedBest(e.best_ask)])
              checked++
            })
          }
        }
      }
      for (const market of [...pending.keys()]) flush(market)
      expect(checked).toBe(242)
    })

    it("a condition's two tokens stay mirror images: one YES book is the source of truth", () => {
      const books = new MarketBooks()
      const pairs = new Map<string, Set<string>>()
      for (const frame of incomingFrames()) {
        for (const m of parseMarketFrame(frame).messages) {
          books.apply(m)
          if (m.event_type !== "price_change") continue
          const set = pairs.get(m.market) ?? new Set<string>()
          for (const e of m.price_changes) set.add(e.asset_id)
          pairs.set(m.market, set)
          const [a, b] = [...set].map((id) => books.book(id)!.toBook())
          if (a === undefined || b === undefined) continue
          expect(a.bids.map((l) => [F.ONE - l.price, l.size])).toEqual(b.asks.map((l) => [l.price, l.size]))
        }
      }
      expect(pairs.size).toBe(3)
    })
  }
)

describe("market channel messages", () => {
  it("a tick size change and a change for an unknown token", () => {
    const books = new MarketBooks()
    const { messages } = parseMarketFrame(
      JSON.stringify({
        event_type: "tick_size_change",
        market: "0xc",
        asset_id: "1",
        old_tick_size: "0.01",
        new_tick_size: "0.001",
        timestamp: "5"
      })
    )
    expect(books.apply(messages[0]!)).toEqual([{ _tag: "Tick", assetId: "1", tick: F.of("0.001"), ts: 5 }])
    const change = parseMarketFrame(
      JSON.stringify([
        {
          event_type: "price_change",
          market: "0xc",
          timestamp: "6",
          price_changes: [{ asset_id: "9", price: "0.5", size: "10", side: "BUY" }]
        }
      ])
    ).messages
    expect(books.apply(change[0]!)).toEqual([])
    expect(parseMarketFrame("{oops").bad).toHaveLength(1)
  })

  it("user channel: an order update and a trade matched against two makers", () => {
    const { messages, bad } = parseUserFrame(
      JSON.stringify([
        {
          event_type: "order",
          id: "0xo",
          market: "0xc",
          asset_id: "1",
          side: "BUY",
          price: "0.5",
          original_size: "10",
          size_matched: "4",
          type: "UPDATE"
        },
        {
          event_type: "trade",
          id: "t1",
          market: "0xc",
          asset_id: "1",
          side: "BUY",
          price: "0.5",
          size: "4",
          status: "MATCHED",
          taker_order_id: "0xo",
          maker_orders: [
            { order_id: "0xm1", asset_id: "2", matched_amount: "1.5", price: "0.5" },
            { order_id: "0xm2", asset_id: "1", matched_amount: "2.5", price: "0.5" }
          ],
          trader_side: "TAKER"
        }
      ])
    )
    expect(bad).toEqual([])
    expect(messages.map((m) => m.event_type)).toEqual(["order", "trade"])
    const trade = messages[1]!
    expect(trade.event_type === "trade" && trade.maker_orders.map((m) => m.matched_amount)).toEqual([
      F.of("1.5"),
      F.of("2.5")
    ])
  })
})

describe("the channel socket", () => {
  it("subscribes, PINGs, and after a dropped socket reconnects and resubscribes, resyncing from a fresh book", async () => {
    const server = new WebSocketServer({ host: "127.0.0.1", port: 0 })
    await new Promise<void>((r) => server.once("listening", () => r()))
    const port = (server.address() as AddressInfo).port
    const received: Array<string> = []
    let connections = 0
    server.on("connection", (socket) => {
      connections++
      const n = connections
      socket.on("message", (data) => {
        const text = data.toString()
        received.push(`${n}:${text === "PING" ? "PING" : JSON.parse(text).type}`)
        if (text === "PING") return socket.send("PONG")
        socket.send(
          JSON.stringify([
            {
              event_type: "book",
              market: "0xc",
              asset_id: "1",
              timestamp: String(n),
              bids: [{ price: n === 1 ? "0.4" : "0.45", size: "10" }],
              asks: [{ price: "0.6", size: "5" }]
            }
          ])
        )
        // the first connection is cut right after its snapshot and one change
        if (n === 1) {
          socket.send(
            JSON.stringify({
              event_type: "price_change",
              market: "0xc",
              timestamp: "2",
              price_changes: [{ asset_id: "1", price: "0.41", size: "3", side: "BUY" }]
            })
          )
          setTimeout(() => socket.terminate(), 50)
        }
      })
    })
    const books = new MarketBooks()
    const program = Effect.gen(function* () {
      const seen = yield* Queue.unbounded<string>()
      yield* runChannel(
        `ws://127.0.0.1:${port}`,
        {
          onOpen: () => {
            books.clear()
            return marketSubscription(["1"])
          },
          onFrame: (text) => {
            for (const m of parseMarketFrame(text).messages) {
              books.apply(m)
              Queue.unsafeOffer(seen, `${m.event_type}:${books.book("1")?.bestBid()}`)
            }
          },
          onClose: () => Queue.unsafeOffer(seen, "closed")
        },
        { pingEvery: "30 millis", backoffFirst: "20 millis", backoffMax: "100 millis" }
      )
      const events: Array<string> = []
      while (!events.includes(`book:${F.of("0.45")}`)) events.push(yield* Queue.take(seen))
      return events
    }).pipe(Effect.scoped, Effect.timeout("5 seconds"))
    const events = await Effect.runPromise(program)
    server.close()
    expect(events).toEqual([`book:${F.of("0.4")}`, `price_change:${F.of("0.41")}`, "closed", `book:${F.of("0.45")}`])
    expect(received[0]).toBe("1:market")
    expect(received.some((r) => r.startsWith("2:market"))).toBe(true)
    expect(received.filter((r) => r.startsWith("1:PING")).length).toBeGreaterThanOrEqual(1)
  })
})

describe("own fills from the user channel", () => {
  const own = new Map<string, OwnOrder>([
    ["0xbuy", { clientOrderId: "b", nativeId: "0xc", side: "buy", onNoToken: false }],
    ["0xno", { clientOrderId: "n", nativeId: "0xc", side: "sell", onNoToken: true }]
  ])
  const trade = (id: string, status: string, o: Partial<UserTradeMessage> = {}): UserTradeMessage => ({
    event_type: "trade",
    id,
    market: "0xc",
    asset_id: "1",
    side: "BUY",
    price: F.of("0.4"),
    size: F.of("5"),
    status,
    taker_order_id: "0xbuy",
    maker_orders: [{ order_id: "0xother", asset_id: "2", matched_amount: F.of("5"), price: F.of("0.6") }],
    matchtime: "1800000000",
    ...o
  })

  it("matched counts the fill; mined and confirmed do not count it again; a maker leg on NO is a YES price", () => {
    const fills = new OwnFills((id) => own.get(id))
    const first = fills.apply(trade("t1", "MATCHED"))
    expect(first).toHaveLength(1)
    expect(first[0]).toMatchObject({
      _tag: "Fill",
      fill: { tradeId: "t1:0xbuy", liquidity: "taker", ts: 1800000000000 }
    })
    expect(fills.apply(trade("t1", "MINED"))).toEqual([])
    expect(fills.apply(trade("t1", "CONFIRMED"))).toEqual([])
    const maker = fills.apply(
      trade("t2", "MATCHED", {
        taker_order_id: "0xsomeone",
        maker_orders: [{ order_id: "0xno", asset_id: "2", matched_amount: F.of("3"), price: F.of("0.3") }]
      })
    )
    expect(maker.map((c) => [c._tag, F.format(c.fill.price), F.format(c.fill.amount), c.fill.liquidity])).toEqual([
      ["Fill", "0.7", "3", "maker"]
    ])
  })

  it("a failed trade reverses the fill it counted, once; a trade first seen failed counts nothing", () => {
    const fills = new OwnFills((id) => own.get(id))
    fills.apply(trade("t1", "MATCHED"))
    fills.apply(trade("t1", "RETRYING"))
    expect(fills.apply(trade("t1", "FAILED")).map((c) => c._tag)).toEqual(["Reversed"])
    expect(fills.apply(trade("t1", "FAILED"))).toEqual([])
    expect(fills.apply(trade("t1", "CONFIRMED"))).toEqual([])
    expect(fills.apply(trade("t9", "FAILED"))).toEqual([])
  })

  it("whatever order the statuses arrive in, the net counted size is that of the trades that did not fail", () => {
    const statuses = ["MATCHED", "MINED", "CONFIRMED", "RETRYING", "FAILED"]
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 4 }), fc.constantFrom(...statuses)), { maxLength: 40 }),
        (updates) => {
          const fills = new OwnFills((id) => own.get(id))
          let net = 0
          for (const [i, status] of updates) {
            for (const c of fills.apply(trade(`t${i}`, status, { size: F.fromInt(i + 1) }))) {
              net += c._tag === "Fill" ? c.fill.amount : -c.fill.amount
            }
          }
          const failedFirstOrLater = new Set(updates.filter(([, s]) => s === "FAILED").map(([i]) => i))
          const counted = new Set(updates.filter(([i]) => !failedFirstOrLater.has(i)).map(([i]) => i))
          expect(net).toBe([...counted].reduce((a, i) => a + F.fromInt(i + 1), 0))
        }
      )
    )
  })
})
