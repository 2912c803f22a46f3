import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect, Either } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { importTape } from "../../sim/History.ts"
import { HistoryClient, type HistoryClientOptions, type HistoryError } from "../../src/Services/HistoryClient.ts"
import { keyOn, type RunningHost, startHost } from "../Data/Support.ts"

const M = "sim:GEN-001"
const TAPE =
  `{"type":"header","version":1,"source":"generated","markets":[{"id":"${M}","title":"T","tick":"0.01","lot":"1"}]}\n` +
  `{"type":"snapshot","ts":1000,"market":"${M}","bids":[["0.4","10"]],"asks":[["0.45","5"]]}\n`

/** Runs `use` with a client on these options; answers the failure, or the success, as an Either. */
const withClient = <A>(
  options: HistoryClientOptions,
  use: (client: HistoryClient["Type"]) => Effect.Effect<A, HistoryError>
): Promise<Either.Either<A, HistoryError>> =>
  Effect.runPromise(
    Effect.flatMap(HistoryClient, use).pipe(
      Effect.either,
      Effect.provide(HistoryClient.layer(options)),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  )

/** A plain HTTP server answering as `answer` says, and noting when each request arrived. */
const rawServer = async (answer: (n: number, request: IncomingMessage, response: ServerResponse) => void) => {
  const arrivals: Array<number> = []
  const server: Server = createServer((request, response) => {
    arrivals.push(performance.now())
    request.resume()
    answer(arrivals.length, request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

const MARKETS = JSON.stringify({ data: [], next_cursor: null, count: 0 })
const errorBody = (code: string, retryable: boolean) =>
  JSON.stringify({ error: { code, message: "m", details: { venue: null, retryable } } })

let host: RunningHost
let key: string
beforeAll(async () => {
  host = await startHost(undefined, { maxRangeMs: 10_000 })
  importTape(host.store, TAPE)
  key = keyOn(host.store)
})
afterAll(() => host.close())

describe("HistoryClient against the data host", () => {
  it("reads the book, and tells a market the host does not hold (404 with its body) as not_found", async () => {
    const book = await withClient({ url: host.url, apiKey: key }, (c) => c.bookAt({ market_id: M, as_of_ms: 1000 }))
    expect(Either.getOrThrow(book).book?.bids).toEqual([{ price: "0.4", size: "10" }])
    const missing = await withClient({ url: host.url, apiKey: key }, (c) =>
      c.bookAt({ market_id: "sim:ELSEWHERE", as_of_ms: 1 })
    )
    expect(Either.isLeft(missing) && missing.left.kind).toBe("not_found")
  })

  it("passes the 401's hint and the 413 on without retrying them", async () => {
    const denied = await withClient({ url: host.url, apiKey: "cbk_nope" }, (c) =>
      c.bookAt({ market_id: M, as_of_ms: 1 })
    )
    const left = Either.isLeft(denied) ? denied.left : undefined
    expect(left).toMatchObject({ kind: "http", status: 401, code: "unauthorized", retryable: false })
    expect(left?.message).toContain("crossbook keys create")
    const large = await withClient({ url: host.url, apiKey: key }, (c) =>
      c.tradesRange({ market_id: M, start_ms: 0, end_ms: 20_000 })
    )
    expect(Either.isLeft(large) && large.left).toMatchObject({ status: 413, code: "result_too_large" })
  })

  it("checks ids and times before any call", async () => {
    // Nothing listens at this URL: a request would fail as unreachable, not as an invalid request.
    const options = { url: "http://127.0.0.1:9", apiKey: key, retries: 0 }
    for (const request of [
      { market_id: "GEN-001", start_ms: 0, end_ms: 1 },
      { market_id: "sim:GEN 1", start_ms: 0, end_ms: 1 },
      { market_id: M, start_ms: 5, end_ms: 1 },
      { market_id: M, start_ms: -1, end_ms: 1 }
    ]) {
      const result = await withClient(options, (c) => c.bookRange(request))
      expect(Either.isLeft(result) && result.left.kind).toBe("invalid_request")
    }
  })
})

describe("HistoryClient against other servers", () => {
  it("says there is no data service when a 404 comes without the service's error body", async () => {
    const other = await rawServer((_n, _q, response) =>
      response.writeHead(404, { "content-type": "text/html" }).end("<h1>Not Found</h1>")
    )
    const result = await withClient({ url: other.url, apiKey: key }, (c) => c.bookAt({ market_id: M, as_of_ms: 1 }))
    await other.close()
    const left = Either.isLeft(result) ? result.left : undefined
    expect(left?.kind).toBe("no_service")
    expect(left?.message).toContain(`no data service at ${other.url}`)
  })

  it("retries what may succeed on a second try (503), and not a refusal (400)", async () => {
    const flaky = await rawServer((n, _q, response) =>
      n <= 2
        ? response.writeHead(503, { "content-type": "application/json" }).end(errorBody("venue_error", true))
        : response.writeHead(200, { "content-type": "application/json" }).end(MARKETS)
    )
    const ok = await withClient({ url: flaky.url, apiKey: key, perSecond: 1000 }, (c) => c.markets)
    await flaky.close()
    expect(Either.isRight(ok)).toBe(true)
    expect(flaky.arrivals.length).toBe(3)

    const refusing = await rawServer((_n, _q, response) =>
      response.writeHead(400, { "content-type": "application/json" }).end(errorBody("validation_error", false))
    )
    const refused = await withClient({ url: refusing.url, apiKey: key, perSecond: 1000 }, (c) => c.markets)
    await refusing.close()
    expect(Either.isLeft(refused) && refused.left.code).toBe("validation_error")
    expect(refusing.arrivals.length).toBe(1)
  })

  it("gives up on a host that does not answer in time", async () => {
    const silent = await rawServer(() => undefined)
    const result = await withClient({ url: silent.url, apiKey: key, timeoutMs: 200, retries: 0 }, (c) => c.markets)
    await silent.close()
    expect(Either.isLeft(result) && result.left.kind).toBe("timeout")
  })

  it("paces requests: at 10 a second, eleven requests sent at once take a second to leave", async () => {
    const counting = await rawServer((_n, _q, response) =>
      response.writeHead(200, { "content-type": "application/json" }).end(MARKETS)
    )
    const result = await withClient({ url: counting.url, apiKey: key, perSecond: 10 }, (c) =>
      Effect.all(
        Array.from({ length: 11 }, () => c.markets),
        { concurrency: "unbounded" }
      )
    )
    await counting.close()
    expect(Either.isRight(result)).toBe(true)
    const arrivals = [...counting.arrivals].sort((a, b) => a - b)
    expect(arrivals.length).toBe(11)
    // The first request also opens the connection, so the spacing is read from the second on: nine steps of 100 ms,
    // less what the network's jitter may take off one arrival. A lower bound only: a busy machine makes it longer.
    expect(arrivals[10]! - arrivals[1]!).toBeGreaterThanOrEqual(900 - 40)
  })
})
