/** Kalshi's WebSocket: the recorded transcript rebuilds its second snapshot, a lost delta is a gap, the socket reconnects. */
import { it as itEffect } from "@effect/vitest"
import { Effect, Queue } from "effect"
import { existsSync, readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { WebSocketServer, type WebSocket } from "ws"
import * as F from "../../../src/Domain/Fixed.ts"
import { LadderBook, ladderField } from "../../../src/Venues/Kalshi/Book.ts"
import { backoffMs, connect, type StreamOutput, StreamProtocol } from "../../../src/Venues/Kalshi/Stream.ts"
import { commandErrors } from "./Spec.ts"

const TRANSCRIPT = new URL("../../../../shared/fixtures/recorded/kalshi/ws_transcript.jsonl", import.meta.url)
const haveTranscript = existsSync(fileURLToPath(TRANSCRIPT))
const TICKER = "KXGOLDH-26SEP1713-T4387.99"

interface Line {
  readonly dir: "in" | "out"
  readonly msg: Record<string, unknown>
}
const transcript = (): Array<Line> =>
  readFileSync(TRANSCRIPT, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Line)
const incoming = (lines: ReadonlyArray<Line>) => lines.filter((l) => l.dir === "in").map((l) => l.msg)
const seqOf = (m: Record<string, unknown>) => m["seq"]

describe.skipIf(!haveTranscript)(
  haveTranscript
    ? "the recorded transcript"
    : "the recorded transcript — SKIPPED: ../shared/fixtures/recorded/kalshi is absent",
  () => {
    it("snapshot 1 plus deltas 2–137 is snapshot 138 exactly; no gap over the whole transcript", () => {
      // recorded with the venue's default NO-leg prices on the NO side: decoded in that form
      const p = new StreamProtocol([], true, { yesPrice: false })
      let deltas = 0
      let checked = false
      const all: Array<StreamOutput> = []
      for (const m of incoming(transcript())) {
        if (m["type"] === "orderbook_snapshot" && seqOf(m) === 138) {
          const stated = new LadderBook()
          const msg = m["msg"] as Record<string, unknown>
          stated.snapshot(ladderField(msg, "yes")!, ladderField(msg, "no")!, false)
          expect(deltas).toBe(136)
          expect(p.book(TICKER, 0)).toEqual(stated.book(0))
          expect(p.book(TICKER, 0)).toEqual({
            ts: 0,
            bids: [{ price: F.of("0.01"), size: F.of("471") }],
            asks: [
              { price: F.of("0.98"), size: F.of("2499") },
              { price: F.of("0.99"), size: F.of("100") }
            ]
          })
          checked = true
        }
        if (m["type"] === "orderbook_delta") deltas++
        const { outputs, commands } = p.receive(m, 0)
        all.push(...outputs)
        expect(commands).toEqual([])
      }
      expect(checked).toBe(true)
      expect(deltas).toBe(166)
      expect(all.filter((o) => o._tag === "Gap")).toEqual([])
      expect(all.filter((o) => o._tag === "Unreadable").map((o) => o._tag === "Unreadable" && o.type)).toEqual([
        "order_group_updates",
        "order_group_updates",
        "order_group_updates",
        "order_group_updates"
      ])
    })

    it("a dropped delta is a gap, answered by a get_snapshot command; the fresh snapshot heals the book", () => {
      const p = new StreamProtocol([TICKER], true, { yesPrice: false })
      p.open()
      const lines = incoming(transcript()).filter((m) => !(m["type"] === "orderbook_delta" && seqOf(m) === 50))
      const gaps: Array<StreamOutput> = []
      const sent: Array<unknown> = []
      let healed = false
      for (const m of lines) {
        const { outputs, commands } = p.receive(m, 0)
        gaps.push(...outputs.filter((o) => o._tag === "Gap"))
        sent.push(...commands)
        if (m["type"] === "orderbook_snapshot" && seqOf(m) === 138) healed = true
      }
      expect(gaps).toEqual([
        { _tag: "Gap", channel: "orderbook_delta", sid: 1, tickers: [TICKER], expected: 50, got: 51 }
      ])
      expect(sent).toEqual([
        { id: 8, cmd: "update_subscription", params: { sid: 1, market_tickers: [TICKER], action: "get_snapshot" } }
      ])
      expect(healed).toBe(true)
    })

    it("own fills and order changes come out as our records", () => {
      const p = new StreamProtocol([], true)
      const out = incoming(transcript()).flatMap((m) => p.receive(m, 0).outputs)
      const orders = out.flatMap((o) => (o._tag === "Order" ? [o.order] : []))
      expect(orders.map((o) => [o.status, F.format(o.filled), o.side, F.format(o.price)])).toEqual([
        ["open", "0", "buy", "0.02"],
        ["canceled", "0", "buy", "0.02"],
        ["closed", "1", "buy", "0.98"]
      ])
      expect(orders[2]).toMatchObject({ cost: F.of("0.98"), fee: F.of("0.0014"), averagePrice: F.of("0.98") })
      const fills = out.flatMap((o) => (o._tag === "Fill" ? [o.fill] : []))
      expect(fills).toEqual([
        {
          tradeId: "07226fe6-ff41-8baf-a5cd-a41147901306",
          venueOrderId: "01a0b002-3da0-7ce8-8782-b954237da341",
          clientOrderId: "ada17927-3ab7-4d68-82e6-52a917c9f4d9",
          nativeId: TICKER,
          side: "buy",
          price: F.of("0.98"),
          amount: F.ONE,
          fee: F.of("0.0014"),
          liquidity: "taker",
          ts: 1789659332660
        }
      ])
      expect(out.filter((o) => o._tag === "Trade")).toHaveLength(1)
      expect(out.filter((o) => o._tag === "Position")).toEqual([{ _tag: "Position", ticker: TICKER, contracts: F.ONE }])
    })
  }
)

describe("stream commands", () => {
  it("every command the protocol sends validates against the asyncapi document", () => {
    const p = new StreamProtocol(["A", "B"], true)
    const commands: Array<unknown> = [...p.open()]
    ;[1, 2, 3, 4].forEach((sid, i) =>
      p.receive(
        {
          type: "subscribed",
          id: i + 1,
          msg: { channel: ["orderbook_delta", "ticker", "trade", "market_lifecycle_v2"][i], sid }
        },
        0
      )
    )
    commands.push(...p.addMarkets(["C"]))
    p.receive(
      {
        type: "orderbook_snapshot",
        sid: 1,
        seq: 1,
        msg: { market_ticker: "A", yes_dollars_fp: [], no_dollars_fp: [] }
      },
      0
    )
    commands.push(
      ...p.receive(
        {
          type: "orderbook_delta",
          sid: 1,
          seq: 3,
          msg: { market_ticker: "A", price_dollars: "0.5", delta_fp: "1", side: "yes" }
        },
        0
      ).commands
    )
    expect(commands.map((c) => (c as { cmd: string }).cmd)).toEqual([
      "subscribe",
      "subscribe",
      "subscribe",
      "subscribe",
      "subscribe",
      "subscribe",
      "subscribe",
      "update_subscription",
      "update_subscription",
      "update_subscription",
      "update_subscription"
    ])
    const errors = commandErrors(commands)
    if (errors === undefined) return // the API descriptions are absent: nothing to check against
    expect(errors).toEqual([])
    // and the check can fail: a channel the document does not know
    expect(commandErrors([{ id: 1, cmd: "subscribe", params: { channels: ["orderbook"] } }])).not.toEqual([])
  })

  it("backoff doubles from the minimum up to the cap", () => {
    expect([0, 1, 2, 3, 10].map((n) => backoffMs(n, 250, 5000))).toEqual([250, 500, 1000, 2000, 5000])
  })
})

/** A loopback socket server that records what each connection sends and answers subscriptions. */
const serve = Effect.acquireRelease(
  Effect.async<{ wss: WebSocketServer; url: string }>((resume) => {
    const wss = new WebSocketServer({ host: "127.0.0.1", port: 0 })
    wss.on("listening", () =>
      resume(Effect.succeed({ wss, url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/trade-api/ws/v2` }))
    )
  }),
  ({ wss }) =>
    Effect.async<void>((resume) => {
      for (const c of wss.clients) c.terminate()
      wss.close(() => resume(Effect.void))
    })
)

const take = <A extends StreamOutput["_tag"]>(q: Queue.Dequeue<StreamOutput>, tag: A) =>
  Effect.gen(function* () {
    for (;;) {
      const o = yield* Queue.take(q)
      if (o._tag === tag) return o as Extract<StreamOutput, { _tag: A }>
    }
  })

describe("the connection", () => {
  itEffect.live(
    "subscribes with signed headers, pongs the venue's pings, and after a drop reconnects and subscribes again",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { wss, url } = yield* serve
          const connections: Array<{ headers: Record<string, unknown>; commands: Array<any>; socket: WebSocket }> = []
          const pongs: Array<string> = []
          let sid = 0
          wss.on("connection", (socket, req) => {
            const c = { headers: req.headers, commands: [] as Array<any>, socket }
            connections.push(c)
            socket.on("pong", (data) => pongs.push(String(data)))
            socket.on("message", (data) => {
              const cmd = JSON.parse(String(data))
              c.commands.push(cmd)
              if (cmd.cmd !== "subscribe") return
              const channel = cmd.params.channels[0]
              const s = ++sid
              socket.send(JSON.stringify({ type: "subscribed", id: cmd.id, msg: { channel, sid: s } }))
              if (channel === "orderbook_delta") {
                // a NO bid at 0.55 in the form the subscription asked for: YES-leg 0.45, or the NO leg's 0.55
                socket.send(
                  JSON.stringify({
                    type: "orderbook_snapshot",
                    sid: s,
                    seq: 1,
                    msg: {
                      market_ticker: "M",
                      yes_dollars_fp: [["0.4000", "3.00"]],
                      no_dollars_fp: [[cmd.params.use_yes_price === true ? "0.4500" : "0.5500", "2.00"]]
                    }
                  })
                )
                socket.ping("heartbeat")
              }
            })
          })
          let n = 0
          const handle = yield* connect({
            url,
            headers: Effect.sync(() => ({ "KALSHI-ACCESS-KEY": `k${++n}` })),
            tickers: ["M"],
            privateChannels: true,
            minBackoff: "20 millis"
          })
          expect(yield* take(handle.outputs, "Connected")).toEqual({ _tag: "Connected", attempt: 0 })
          const first = yield* take(handle.outputs, "Book")
          expect(first.book.bids).toEqual([{ price: F.of("0.4"), size: F.of("3") }])
          expect(first.book.asks).toEqual([{ price: F.of("0.45"), size: F.of("2") }])
          while (pongs.length === 0 || connections[0]!.commands.length < 7) yield* Effect.sleep("5 millis")
          expect(pongs).toEqual(["heartbeat"])
          expect(connections[0]!.headers["kalshi-access-key"]).toBe("k1")
          // the YES-leg flag is sent explicitly, never left to the venue's default
          expect(connections[0]!.commands[0].params.use_yes_price).toBe(true)
          const channels = (c: (typeof connections)[number]) => c.commands.map((x) => x.params.channels.join())
          expect(channels(connections[0]!)).toEqual([
            "orderbook_delta",
            "ticker",
            "trade",
            "market_lifecycle_v2",
            "fill",
            "user_orders",
            "market_positions"
          ])

          connections[0]!.socket.terminate()
          const down = yield* take(handle.outputs, "Disconnected")
          expect(down.retryInMs).toBe(20)
          expect(yield* take(handle.outputs, "Connected")).toEqual({ _tag: "Connected", attempt: 1 })
          yield* take(handle.outputs, "Book")
          while (connections.length < 2 || connections[1]!.commands.length < 7) yield* Effect.sleep("5 millis")
          // a new handshake (freshly signed), the same subscriptions again
          expect(connections[1]!.headers["kalshi-access-key"]).toBe("k2")
          expect(channels(connections[1]!)).toEqual(channels(connections[0]!))
          expect(commandErrors((yield* handle.sent) as Array<unknown>) ?? []).toEqual([])
        })
      ),
    20_000
  )
})
