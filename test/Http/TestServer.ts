/** A test server on a random loopback port with the sim venue (fixed seed) and an in-memory store. */
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { authLayer, serverServices } from "../../src/Cli.ts"
import { HttpServeLive } from "../../src/Http/Server.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import type { FaultRule } from "../../src/Venues/SimVenue.ts"

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
}

export const testServices = (files: TestOptions = {}) =>
  serverServices({
    seed: TEST_SEED,
    ...(files.faults === undefined ? {} : { faults: files.faults }),
    ...(files.startingCash === undefined ? {} : { startingCash: files.startingCash }),
    store:
      files.engine === undefined
        ? OrderStore.layerMemory
        : OrderStore.layerSql.pipe(Layer.provide(engineDatabase(files.engine))),
    auth: authLayer(files.control ?? ":memory:")
  })

export const testServer = (files: TestOptions = {}) =>
  HttpServeLive.pipe(
    Layer.provideMerge(ownerLive(files.owner)),
    Layer.provideMerge(testServices(files)),
    Layer.provideMerge(NodeHttpServer.layerTest)
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
