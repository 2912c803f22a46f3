/** A test server on a random loopback port with the sim venue (fixed seed) and an in-memory store. */
import { HttpClient, HttpClientRequest, type HttpClientResponse, HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { connect } from "node:net"
import * as F from "../../src/Domain/Fixed.ts"
import { authLayer, serverServices, venuesLayer } from "../../src/Assembly.ts"
import { HttpServeLive, makeNodeServer } from "../../src/Http/Server.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import type { FaultRule } from "../../src/Venues/SimVenue.ts"
import type { MatchingClient } from "../../src/Services/MatchingClient.ts"
import type { OrderType } from "../../src/Engine/OrderType.ts"

export const TEST_SEED = 7

/** The owner's token on the test server's fresh control database. */
export class OwnerToken extends Context.Tag("test/OwnerToken")<OwnerToken, string>() {}

/** The owner's token: created on a fresh control database, or the one given for a database used before. */
const ownerLive = (given: string | undefined) =>
  Layer.effect(
    OwnerToken,
    Effect.flatMap(Auth, (auth) => auth.bootstrapOwner).pipe(
      Effect.flatMap((created) =>
        created !== undefined
          ? Effect.succeed(created.token)
          : given !== undefined
            ? Effect.succeed(given)
            : Effect.dieMessage("the owner exists already: pass its token")
      )
    )
  )

/** The seams of a test server: the sim venue, an in-memory store, a control database of its own. */
export interface TestOptions {
  readonly control?: string
  readonly engine?: string
  readonly faults?: ReadonlyArray<FaultRule>
  readonly startingCash?: string
  /** The owner's token on a control database used before. */
  readonly owner?: string
  /** How often the sim venue's markets move (default 1000 ms). */
  readonly simStepMs?: number
  /** How many embedded sim venues (`sim`, `sim2`, …); default 1. */
  readonly simVenues?: number
  /** The server's matcher, in place of the local matcher over its venues. */
  readonly matching?: Layer.Layer<MatchingClient>
  /** Whether each sim venue has its paper account, and the cash it starts with. */
  readonly paper?: { readonly cash: string }
  /** The complex order types the engine holds (default the built-in ones). */
  readonly orderTypes?: ReadonlyArray<OrderType>
}

export const testServices = (files: TestOptions = {}) =>
  serverServices({
    seed: TEST_SEED,
    ...(files.faults === undefined ? {} : { faults: files.faults }),
    ...(files.startingCash === undefined ? {} : { startingCash: files.startingCash }),
    ...(files.simVenues === undefined ? {} : { simVenues: files.simVenues }),
    ...(files.paper === undefined ? {} : { paperCash: F.of(files.paper.cash) }),
    ...(files.orderTypes === undefined ? {} : { orderTypes: files.orderTypes }),
    ...(files.simStepMs === undefined && files.paper === undefined
      ? {}
      : {
          venues: venuesLayer({
            seed: TEST_SEED,
            ...(files.simStepMs === undefined ? {} : { stepMs: files.simStepMs }),
            faults: files.faults ?? [],
            ...(files.simVenues === undefined ? {} : { simVenues: files.simVenues }),
            paper: files.paper !== undefined
          })
        }),
    store:
      files.engine === undefined
        ? OrderStore.layerMemory
        : OrderStore.layerSql.pipe(Layer.provide(engineDatabase(files.engine))),
    auth: authLayer(files.control ?? ":memory:")
  })

/** Node's server as `serve` makes it (header limit, parser refusals in the error body), on a random port, with a client. */
export const NodeTestServer = HttpServer.layerTestClient.pipe(
  Layer.provide(NodeHttpClient.layerWithoutAgent),
  Layer.provide(NodeHttpClient.makeAgentLayer({ keepAlive: false })),
  Layer.provideMerge(NodeHttpServer.layer(makeNodeServer, { port: 0 }))
)

export const testServer = (files: TestOptions = {}) =>
  HttpServeLive.pipe(
    Layer.provideMerge(ownerLive(files.owner)),
    Layer.provideMerge(
      files.matching === undefined ? testServices(files) : Layer.provideMerge(files.matching, testServices(files))
    ),
    Layer.provideMerge(NodeTestServer)
  )

export const TestServerLive = testServer()

export interface RawResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: any
  readonly text: string
}

const read = (response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(response.text, (text): RawResponse => {
    let body: unknown = undefined
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    return { status: response.status, headers: response.headers, body, text }
  })

/** One request, answered as status, headers and the parsed body, whatever the status. */
export const request = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: { readonly json?: unknown; readonly rawBody?: string; readonly token?: string } = {}
) =>
  Effect.gen(function* () {
    const client = yield* HttpClient.HttpClient
    let req = HttpClientRequest.make(method)(path)
    if (options.token !== undefined) req = HttpClientRequest.bearerToken(req, options.token)
    if (options.rawBody !== undefined) req = HttpClientRequest.bodyText(req, options.rawBody, "application/json")
    else if (options.json !== undefined) req = yield* HttpClientRequest.bodyJson(req, options.json)
    return yield* Effect.flatMap(client.execute(req), read)
  }).pipe(Effect.scoped)

export const get = (path: string) => request("GET", path)

/** `POST /trading/orders` with the owner's token on the first sim market: a buy of 10 unless `body` says otherwise. */
export const placeOnSim = (body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    const market = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0].id
    return yield* request("POST", "/trading/orders", {
      token,
      json: { market_id: market, side: "buy", amount: "10", ...body }
    })
  })

/** The port the test server listens on. */
export const serverPort = Effect.map(HttpServer.HttpServer, (server) => (server.address as HttpServer.TcpAddress).port)

export interface RawExchange {
  readonly status: number
  readonly head: string
  readonly body: any
  readonly text: string
  /** Whether the server answered before the whole request was sent. */
  readonly early: boolean
}

/**
 * Writes bytes straight to a socket (a request no HTTP client would send) and reads the one answer. `parts` are
 * written in turn while the server has not answered; the answer is read up to its Content-Length or the close.
 */
export const rawExchange = (
  parts: ReadonlyArray<string | Buffer>,
  options: { readonly timeoutMs?: number; readonly head?: boolean } = {}
) =>
  Effect.flatMap(serverPort, (port) =>
    Effect.async<RawExchange, Error>((resume) => {
      const socket = connect({ host: "127.0.0.1", port })
      let received = Buffer.alloc(0)
      let sent = 0
      let done = false
      const finish = (result: RawExchange | Error) => {
        if (done) return
        done = true
        clearTimeout(timer)
        socket.destroy()
        resume(result instanceof Error ? Effect.fail(result) : Effect.succeed(result))
      }
      const parse = (final: boolean) => {
        const text = received.toString("utf8")
        const end = text.indexOf("\r\n\r\n")
        if (end < 0)
          return final ? finish(new Error(`no complete answer: ${JSON.stringify(text.slice(0, 200))}`)) : undefined
        const head = text.slice(0, end)
        const length = /\r\ncontent-length:\s*(\d+)/i.exec(head)
        const bodyText = text.slice(end + 4)
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0)
        const bodyless = (status >= 100 && status < 200) || options.head === true
        if (!final && !bodyless && (length === null || Buffer.byteLength(bodyText) < Number(length[1])))
          return undefined
        let body: unknown = undefined
        try {
          body = JSON.parse(bodyText)
        } catch {
          body = undefined
        }
        finish({
          status,
          head,
          body,
          text: bodyText,
          early: sent < parts.length
        })
      }
      const timer = setTimeout(() => parse(true), options.timeoutMs ?? 5000)
      socket.on("data", (chunk) => {
        received = Buffer.concat([received, chunk])
        parse(false)
      })
      socket.on("close", () => parse(true))
      socket.on("error", () => parse(true))
      const writeNext = () => {
        while (!done && sent < parts.length) {
          const ok = socket.write(parts[sent++]!)
          if (!ok) return void socket.once("drain", writeNext)
        }
      }
      socket.on("connect", writeNext)
      return Effect.sync(() => socket.destroy())
    })
  )
