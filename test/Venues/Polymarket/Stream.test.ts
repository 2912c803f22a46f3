/** The market channel against the recorded transcript, the user channel's messages, and a socket that drops. */
import { Effect, Queue } from "effect"
import { existsSync, readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { WebSocketServer } from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import {
  MarketBooks,
  marketSubscription,
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
