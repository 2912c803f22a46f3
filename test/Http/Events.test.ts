import { assert, describe, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect, Fiber, Layer } from "effect"
import WebSocket from "ws"
import { EventsQueueCapacity } from "../../src/Http/Events.ts"
import { OwnerToken, rawExchange, request, testServer } from "./TestServer.ts"

interface Frame {
  readonly seq: number
  readonly kind: string
  readonly payload: any
}

const baseUrl = Effect.map(HttpServer.HttpServer, (server) => {
  const address = server.address as HttpServer.TcpAddress
  return `ws://127.0.0.1:${address.port}`
})

/** Opens a socket and collects frames until `until` holds or it closes; answers the frames and the close code. */
const listen = (url: string, headers: Record<string, string>, until: (frames: ReadonlyArray<Frame>) => boolean) =>
  Effect.async<{ frames: Array<Frame>; code: number | null; socket: WebSocket }>((resume) => {
    const frames: Array<Frame> = []
    const socket = new WebSocket(url, { headers })
    let done = false
    const finish = (code: number | null) => {
      if (done) return
      done = true
      resume(Effect.succeed({ frames, code, socket }))
    }
    socket.on("message", (data) => {
      frames.push(JSON.parse(String(data)))
      if (until(frames)) finish(null)
    })
    socket.on("close", (code) => finish(code))
    socket.on("error", () => finish(-1))
  })

const placeSome = (token: string, n: number) =>
  Effect.gen(function* () {
    const m = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0]
    for (let i = 0; i < n; i++) {
      const res = yield* request("POST", "/trading/orders", {
        token,
        json: { market_id: m.id, side: "buy", type: "limit", amount: "1", price: "0.01" }
      })
      assert.strictEqual(res.status, 201, res.text)
    }
  })

const assertIncreasing = (frames: ReadonlyArray<Frame>) => {
  for (let i = 1; i < frames.length; i++) assert.isAbove(frames[i]!.seq, frames[i - 1]!.seq)
}

describe("events socket", () => {
  it.effect("replays from since with a kinds filter, then streams live frames, with no gap across a reconnect", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const url = yield* baseUrl
      yield* placeSome(token, 3)
      yield* request("PUT", "/trading/fair-values", { token, json: { values: {} } })
      const auth = { authorization: `Bearer ${token}` }
      // Replay: three order.accepted, and nothing of another kind.
      const first = yield* listen(`${url}/trading/ws/events?since=0&kinds=order`, auth, (f) => f.length >= 3)
      assert.deepStrictEqual(
        first.frames.map((f) => f.kind),
        ["order.accepted", "order.accepted", "order.accepted"]
      )
      assertIncreasing(first.frames)
      // Live: the socket is still open; a new order arrives as the next frame.
      const live = Effect.async<Frame>((resume) => {
        first.socket.once("message", (data) => resume(Effect.succeed(JSON.parse(String(data)))))
      })
      const [frame] = yield* Effect.all([live, placeSome(token, 1)], { concurrency: 2 })
      assert.strictEqual(frame.kind, "order.accepted")
      assert.isAbove(frame.seq, first.frames[2]!.seq)
      first.socket.close()
      // Reconnect from the last seq seen: what came since arrives, and nothing before it.
      yield* placeSome(token, 2)
      const again = yield* listen(`${url}/trading/ws/events?since=${frame.seq}&kinds=order`, auth, (f) => f.length >= 2)
      assert.isAbove(again.frames[0]!.seq, frame.seq)
      assertIncreasing(again.frames)
      assert.strictEqual(again.frames.length, 2)
      again.socket.close()
      // Without a filter every kind comes, each seq once, from 1 with no gap.
      const all = yield* listen(`${url}/trading/ws/events?key=${token}`, {}, (f) => f.length >= 7)
      assert.deepStrictEqual(
        all.frames.map((f) => f.seq),
        [1, 2, 3, 4, 5, 6, 7]
      )
      all.socket.close()
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("a request that is not a good upgrade answers the error body, never the library's plain text", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const plain = yield* request("GET", "/trading/ws/events", { token })
      assert.strictEqual(plain.status, 400, plain.text)
      assert.strictEqual(plain.body.error.code, "validation_error")
      assert.strictEqual(plain.body.error.details.errors[0].field, "upgrade")
      const upgrade = (method: string, headers: ReadonlyArray<string>) =>
        rawExchange([
          [
            `${method} /trading/ws/events HTTP/1.1`,
            "Host: 127.0.0.1",
            "Connection: Upgrade",
            "Upgrade: websocket",
            `Authorization: Bearer ${token}`,
            ...headers,
            "",
            ""
          ].join("\r\n")
        ])
      const key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
      const cases: ReadonlyArray<[string, ReadonlyArray<string>, string]> = [
        ["GET", ["Sec-WebSocket-Version: 13"], "sec-websocket-key"],
        ["GET", ["Sec-WebSocket-Key: short", "Sec-WebSocket-Version: 13"], "sec-websocket-key"],
        ["GET", [key], "sec-websocket-version"],
        ["GET", [key, "Sec-WebSocket-Version: 99"], "sec-websocket-version"],
        ["GET", [key, "Sec-WebSocket-Version: 13", "Sec-WebSocket-Protocol: a b,,"], "sec-websocket-protocol"]
      ]
      for (const [method, headers, field] of cases) {
        const res = yield* upgrade(method, headers)
        assert.strictEqual(res.status, 400, `${method} ${headers.join(" ")}: ${res.head}`)
        assert.strictEqual(res.body?.error?.code, "validation_error", res.text)
        assert.strictEqual(res.body.error.details.errors[0].field, field)
        assert.isFalse(res.body.error.details.retryable)
      }
      const post = yield* upgrade("POST", [key, "Sec-WebSocket-Version: 13"])
      assert.strictEqual(post.status, 404, post.head)
      assert.strictEqual(post.body?.error?.code, "not_found", post.text)
      // A good handshake still upgrades.
      const good = yield* upgrade("GET", [key, "Sec-WebSocket-Version: 13"])
      assert.strictEqual(good.status, 101, good.head)
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("revoking the token, or removing the view grant it relied on, closes its open sockets with 4401", () =>
    Effect.gen(function* () {
      const owner = yield* OwnerToken
      const url = yield* baseUrl
      const tokenOf = (user: string) =>
        Effect.gen(function* () {
          const grant = { user, account: "sim:default", permission: "view" }
          assert.strictEqual((yield* request("POST", "/trading/grants", { token: owner, json: grant })).status, 201)
          const key = yield* request("POST", "/trading/keys", { token: owner, json: { user } })
          return { id: key.body.id as string, token: key.body.token as string }
        })
      const alice = yield* tokenOf("ws-alice")
      const bob = yield* tokenOf("ws-bob")
      const carol = yield* tokenOf("ws-carol")
      yield* placeSome(owner, 1)
      // Each socket has seen the replayed frame, so it is open and streaming when the change comes.
      const open = (token: string, how: "header" | "key") =>
        Effect.gen(function* () {
          const first = yield* listen(
            how === "key" ? `${url}/trading/ws/events?key=${token}` : `${url}/trading/ws/events`,
            how === "key" ? {} : { authorization: `Bearer ${token}` },
            (f) => f.length >= 1
          )
          assert.strictEqual(first.frames[0]!.kind, "order.accepted")
          return first.socket
        })
      const closed = (socket: WebSocket) =>
        Effect.async<number>((resume) => {
          socket.once("close", (code) => resume(Effect.succeed(code)))
        })
      const aliceSocket = yield* open(alice.token, "header")
      const aliceKeySocket = yield* open(alice.token, "key")
      const bobSocket = yield* open(bob.token, "header")
      const carolSocket = yield* open(carol.token, "header")
      const aliceClosed = yield* Effect.fork(
        Effect.all([closed(aliceSocket), closed(aliceKeySocket)], { concurrency: "unbounded" })
      )
      // An unrelated change keeps every socket open: the next live frame still reaches Carol.
      yield* request("POST", "/trading/grants", {
        token: owner,
        json: { user: "ws-carol", account: "sim:default", permission: "trade" }
      })
      const next = Effect.async<Frame>((resume) => {
        carolSocket.once("message", (data) => resume(Effect.succeed(JSON.parse(String(data)))))
      })
      const [frame] = yield* Effect.all([next, placeSome(owner, 1)], { concurrency: 2 })
      assert.strictEqual(frame.kind, "order.accepted")
      const revoke = yield* request("DELETE", `/trading/keys/${alice.id}`, { token: owner })
      assert.strictEqual(revoke.status, 200)
      assert.deepStrictEqual(yield* Fiber.join(aliceClosed), [4401, 4401])
      const bobClosed = yield* Effect.fork(closed(bobSocket))
      const removed = yield* request("DELETE", "/trading/grants?user=ws-bob&account=sim:default&permission=view", {
        token: owner
      })
      assert.strictEqual(removed.status, 200, removed.text)
      assert.strictEqual(yield* Fiber.join(bobClosed), 4401)
      assert.strictEqual(carolSocket.readyState, WebSocket.OPEN)
      carolSocket.close()
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("a bad token is accepted, then closed with 4401", () =>
    Effect.gen(function* () {
      const url = yield* baseUrl
      const none = yield* listen(`${url}/trading/ws/events`, {}, () => false)
      assert.strictEqual(none.code, 4401)
      const wrong = yield* listen(`${url}/trading/ws/events`, { authorization: "Bearer cb_nope" }, () => false)
      assert.strictEqual(wrong.code, 4401)
    }).pipe(Effect.provide(testServer()))
  )

  it.effect("a reader that falls behind is closed with 4408 and resumes from its last seq without a gap", () =>
    Effect.gen(function* () {
      const token = yield* OwnerToken
      const url = yield* baseUrl
      const auth = { authorization: `Bearer ${token}` }
      yield* placeSome(token, 20)
      const opened = yield* listen(`${url}/trading/ws/events?since=20`, auth, () => false).pipe(Effect.fork)
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      // Cancel-all writes twenty events in one go: more than a queue of 2 holds.
      const canceled = yield* request("DELETE", "/trading/orders", { token })
      assert.strictEqual(canceled.body.canceled, 20)
      const exit = yield* opened.await
      assert.strictEqual(exit._tag, "Success")
      const result = exit._tag === "Success" ? exit.value : undefined
      assert.strictEqual(result!.code, 4408)
      const seen = result!.frames
      const lastSeq = seen.length === 0 ? 20 : seen[seen.length - 1]!.seq
      const rest = yield* listen(`${url}/trading/ws/events?since=${lastSeq}`, auth, (f) => f.length >= 40 - lastSeq)
      assert.deepStrictEqual(
        [...seen, ...rest.frames].map((f) => f.seq),
        Array.from({ length: 20 }, (_, i) => i + 21)
      )
      rest.socket.close()
    }).pipe(Effect.provide(testServer()), Effect.provide(Layer.succeed(EventsQueueCapacity, 2)))
  )
})
