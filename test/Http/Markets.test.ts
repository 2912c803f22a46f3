import { assert, describe, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, TestClock } from "effect"
import * as fc from "fast-check"
import WebSocket from "ws"
import * as F from "../../src/Domain/Fixed.ts"
import type { BookLevel } from "../../src/Domain/Market.ts"
import { MarketsQueueCapacity } from "../../src/Http/Markets.ts"
import { sideChanges } from "../../src/Services/MarketChanges.ts"
import { OwnerToken, rawExchange, request, testServer } from "./TestServer.ts"

interface Level {
  readonly price: string
  readonly size: string
}

interface Frame {
  readonly seq: number
  readonly ts: number
  readonly type: "snapshot" | "change" | "trade"
  readonly market_id: string
  readonly bids?: ReadonlyArray<Level>
  readonly asks?: ReadonlyArray<Level>
  readonly id?: string
  readonly price?: string
  readonly amount?: string
  readonly taker_side?: string
}

const baseUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `ws://127.0.0.1:${address.port}`
})

/** A client of the stream: every frame it received, and how the socket closed. */
interface Client {
  readonly socket: WebSocket
  readonly frames: Array<Frame>
  code: number | null
}

const open = (url: string) =>
  Effect.async<Client, Error>((resume) => {
    const socket = new WebSocket(url)
    const client: Client = { socket, frames: [], code: null }
    socket.on("message", (data) => client.frames.push(JSON.parse(String(data))))
    socket.on("close", (code) => (client.code = code))
    socket.once("open", () => resume(Effect.succeed(client)))
    socket.once("unexpected-response", (_, res) => resume(Effect.fail(new Error(`refused: ${res.statusCode}`))))
    socket.once("error", (e) => resume(Effect.fail(e)))
  })

/** Waits (on the real clock: the test clock is the server's) until `ready` holds of the client. */
const until = (client: Client, ready: () => boolean, what: string) =>
  Effect.async<void, Error>((resume) => {
    const check = () => {
      if (!ready()) return false
      clearInterval(poll)
      clearTimeout(timer)
      resume(Effect.void)
      return true
    }
    const poll = setInterval(check, 5)
    const timer = setTimeout(() => {
      clearInterval(poll)
      resume(Effect.fail(new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(client.frames)}`)))
    }, 5000)
    check()
    return Effect.sync(() => {
      clearInterval(poll)
      clearTimeout(timer)
    })
  })

/** The book a client keeps: the snapshot, then each change applied (size "0" removes the level). */
const rebuild = (frames: ReadonlyArray<Frame>, marketId: string) => {
  let bids = new Map<string, string>()
  let asks = new Map<string, string>()
  for (const f of frames) {
    if (f.market_id !== marketId) continue
    if (f.type === "snapshot") {
      bids = new Map(f.bids!.map((l) => [l.price, l.size]))
      asks = new Map(f.asks!.map((l) => [l.price, l.size]))
    } else if (f.type === "change") {
      for (const [side, levels] of [
        [bids, f.bids!],
        [asks, f.asks!]
      ] as const) {
        for (const l of levels) {
          if (l.size === "0") side.delete(l.price)
          else side.set(l.price, l.size)
        }
      }
    }
  }
  const sorted = (side: Map<string, string>, descending: boolean) =>
    [...side]
      .map(([price, size]) => ({ price, size }))
      .sort((a, b) => (F.of(a.price) - F.of(b.price)) * (descending ? -1 : 1))
  return { bids: sorted(bids, true), asks: sorted(asks, false) }
}

const restBook = (marketId: string, depth: number) =>
  Effect.map(request("GET", `/venues/sim/markets/${marketId}/book?depth=${depth}`), (res) => {
    assert.strictEqual(res.status, 200, res.text)
    return res.body as { ts: number; bids: Array<Level>; asks: Array<Level> }
  })

const restTrades = (marketId: string) =>
  Effect.map(request("GET", `/venues/sim/markets/${marketId}/trades?limit=1000`), (res) => res.body.data as Array<any>)

const marketIds = (n: number) =>
  Effect.map(request("GET", `/venues/sim/markets?limit=${n}`), (res) => res.body.data.map((m: any) => m.id as string))

const assertSeqFromOne = (frames: ReadonlyArray<Frame>) =>
  assert.deepStrictEqual(
    frames.map((f) => f.seq),
    frames.map((_, i) => i + 1)
  )

describe("market stream", () => {
  it.effect("answers without a token with one snapshot per market, equal to the REST book at its depth", () =>
    Effect.gen(function* () {
      const url = yield* baseUrl
      const [a, b] = yield* marketIds(2)
      const client = yield* open(`${url}/ws/markets?ids=${a},${b},${a}&depth=3`)
      yield* until(client, () => client.frames.length >= 2, "two snapshots")
      assertSeqFromOne(client.frames)
      for (const [i, id] of [a!, b!].entries()) {
        const frame = client.frames[i]!
        const rest = yield* restBook(id, 3)
        assert.strictEqual(frame.type, "snapshot")
        assert.strictEqual(frame.market_id, id)
        assert.deepStrictEqual(
          { ts: frame.ts, bids: frame.bids, asks: frame.asks },
          {
            ts: rest.ts,
            bids: rest.bids,
            asks: rest.asks
          }
        )
        assert.lengthOf(frame.bids!, 3)
      }
      client.socket.close()
      // Without depth, the REST default of 10 levels.
      const full = yield* open(`${url}/ws/markets?ids=${a}`)
      yield* until(full, () => full.frames.length >= 1, "a snapshot")
      const rest = yield* restBook(a!, 10)
      assert.deepStrictEqual([full.frames[0]!.bids, full.frames[0]!.asks], [rest.bids, rest.asks])
      full.socket.close()
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("a client rebuilds the venue's book and its trades from the snapshot and what follows", () =>
    Effect.gen(function* () {
      const url = yield* baseUrl
      const token = yield* OwnerToken
      const [a, b] = yield* marketIds(2)
      const ids = [a!, b!]
      const before = new Map<string, Set<string>>()
      for (const id of ids) before.set(id, new Set((yield* restTrades(id)).map((t) => t.id)))
      const client = yield* open(`${url}/ws/markets?ids=${ids.join(",")}&depth=4`)
      yield* until(client, () => client.frames.length >= 2, "two snapshots")
      for (let round = 0; round < 4; round++) {
        yield* TestClock.adjust("3 seconds")
        if (round === 1) {
          // Our own order takes liquidity: a trade, and the book's best asks change.
          const res = yield* request("POST", "/trading/orders", {
            token,
            json: { market_id: a, side: "buy", type: "market", amount: "40", price: "0.99" }
          })
          assert.strictEqual(res.status, 201, res.text)
        }
        for (const id of ids) {
          const rest = yield* restBook(id, 4)
          const trades = (yield* restTrades(id)).filter((t) => !before.get(id)!.has(t.id)).reverse()
          const streamed = () => client.frames.filter((f) => f.type === "trade" && f.market_id === id)
          yield* until(
            client,
            () => {
              const book = rebuild(client.frames, id)
              return (
                JSON.stringify(book) === JSON.stringify({ bids: rest.bids, asks: rest.asks }) &&
                streamed().length >= trades.length
              )
            },
            `round ${round}: the book of ${id} as REST has it`
          )
          // The same trades; within one millisecond REST orders them by id, the stream as the venue printed them.
          const shape = (t: any) =>
            JSON.stringify({ id: t.id, ts: t.ts, price: t.price, amount: t.amount, taker_side: t.taker_side })
          assert.deepStrictEqual(streamed().map(shape).sort(), trades.map(shape).sort())
          const times = streamed().map((t) => t.ts)
          assert.deepStrictEqual(
            times,
            [...times].sort((x, y) => x - y)
          )
        }
      }
      const kinds = new Set(client.frames.map((f) => f.type))
      assert.isTrue(kinds.has("change") && kinds.has("trade"), [...kinds].join(","))
      assertSeqFromOne(client.frames)
      client.socket.close()
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("bad ids and parameters are refused before the upgrade with the error body", () =>
    Effect.gen(function* () {
      const [a] = yield* marketIds(1)
      const upgrade = (query: string) =>
        rawExchange([
          [
            `GET /ws/markets${query} HTTP/1.1`,
            "Host: 127.0.0.1",
            "Connection: Upgrade",
            "Upgrade: websocket",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            "Sec-WebSocket-Version: 13",
            "",
            ""
          ].join("\r\n")
        ])
      const tooMany = Array.from({ length: 101 }, (_, i) => `sim:m${i}`).join(",")
      const cases: ReadonlyArray<[string, number, string, string | undefined]> = [
        ["", 400, "validation_error", "ids"],
        ["?ids=", 400, "validation_error", "ids"],
        [`?ids=${a!.slice(4)}`, 400, "validation_error", "ids"],
        [`?ids=${tooMany}`, 400, "validation_error", "ids"],
        [`?ids=${a}&depth=0`, 400, "validation_error", "depth"],
        [`?ids=${a},nope:x`, 400, "unknown_venue", undefined],
        [`?ids=${a},sim:NO-SUCH-MARKET`, 404, "market_not_found", undefined]
      ]
      for (const [query, status, code, field] of cases) {
        const res = yield* upgrade(query)
        assert.strictEqual(res.status, status, `${query}: ${res.head}`)
        assert.strictEqual(res.body?.error?.code, code, res.text)
        assert.isFalse(res.body.error.details.retryable)
        assert.property(res.body.error.details, "venue")
        if (field !== undefined) assert.strictEqual(res.body.error.details.errors[0].field, field)
      }
      // A plain GET learns what is wrong with its ids first, then that the route is a WebSocket.
      const missing = yield* request("GET", `/ws/markets?ids=sim:NO-SUCH-MARKET`)
      assert.strictEqual(missing.status, 404, missing.text)
      assert.strictEqual(missing.body.error.code, "market_not_found")
      const plain = yield* request("GET", `/ws/markets?ids=${a}`)
      assert.strictEqual(plain.status, 400, plain.text)
      assert.strictEqual(plain.body.error.details.errors[0].field, "upgrade")
      const good = yield* upgrade(`?ids=${a}`)
      assert.strictEqual(good.status, 101, good.head)
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("a reader that falls behind is closed with 4408 and reconnects to a fresh snapshot", () =>
    Effect.gen(function* () {
      const url = yield* baseUrl
      const ids = yield* marketIds(24)
      const client = yield* open(`${url}/ws/markets?ids=${ids.join(",")}`)
      yield* until(client, () => client.frames.length >= ids.length, "the snapshots")
      // One step of the clock moves every market at once: more changes than a queue of 2 holds.
      yield* TestClock.adjust("1 second")
      yield* until(client, () => client.code !== null, "the close")
      assert.strictEqual(client.code, 4408)
      const again = yield* open(`${url}/ws/markets?ids=${ids[0]}`)
      yield* until(again, () => again.frames.length >= 1, "a snapshot")
      const rest = yield* restBook(ids[0]!, 10)
      assert.deepStrictEqual([again.frames[0]!.bids, again.frames[0]!.asks], [rest.bids, rest.asks])
      again.socket.close()
    }).pipe(Effect.provide(testServer()), Effect.provide(Layer.succeed(MarketsQueueCapacity, 2)))
  )
})

describe("book changes", () => {
  const side = (descending: boolean) =>
    fc
      .uniqueArray(fc.integer({ min: 1, max: 99 }), { maxLength: 12 })
      .chain((ticks) =>
        fc.tuple(fc.constant(ticks), fc.array(fc.integer({ min: 1, max: 500 }), { minLength: 12, maxLength: 12 }))
      )
      .map(([ticks, sizes]): ReadonlyArray<BookLevel> =>
        [...ticks]
          .sort((x, y) => (descending ? y - x : x - y))
          .map((t, i) => ({ price: (t * 10_000) as F.Fixed, size: F.fromInt(sizes[i]!) }))
      )

  it("applying the changes to the old view gives the new view exactly", () =>
    fc.assert(
      fc.property(
        fc.boolean().chain((d) => fc.tuple(side(d), side(d), fc.constant(d))),
        ([before, after, descending]) => {
          const book = new Map(before.map((l) => [F.format(l.price), F.format(l.size)]))
          for (const l of sideChanges(before, after)) {
            if (l.size === "0") book.delete(l.price)
            else book.set(l.price, l.size)
          }
          const rebuilt = [...book]
            .sort((x, y) => (F.of(x[0]) - F.of(y[0])) * (descending ? -1 : 1))
            .map(([price, size]) => ({ price, size }))
          assert.deepStrictEqual(
            rebuilt,
            after.map((l) => ({ price: F.format(l.price), size: F.format(l.size) }))
          )
          // Only what moved is sent: a level the same in both views is never listed.
          const old = new Map(before.map((l) => [F.format(l.price), F.format(l.size)]))
          for (const l of sideChanges(before, after)) assert.notStrictEqual(old.get(l.price) ?? "0", l.size)
        }
      )
    ))
})
