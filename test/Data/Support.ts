/** A data host on an ephemeral loopback port over a store in a fresh folder, for tests that speak real HTTP. */
import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Keys } from "../../src/Data/Keys.ts"
import { Tapes } from "../../src/Data/Tapes.ts"
import { DataHost, dataHostApp } from "../../src/Data/Server.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { makeNodeServer } from "../../src/Http/Server.ts"

export const tempFolder = (): string => mkdtempSync(join(tmpdir(), "crossbook-data-"))

export interface RunningHost {
  readonly url: string
  readonly store: DataStore
  readonly close: () => Promise<void>
}

export const startHost = async (
  store: DataStore = new DataStore(join(tempFolder(), "data.db")),
  options: { readonly maxRangeMs?: number; readonly tapes?: Layer.Layer<Tapes> } = {}
): Promise<RunningHost> => {
  const scope = Effect.runSync(Scope.make())
  const app = dataHostApp().pipe(
    Layer.provideMerge(NodeHttpServer.layer(makeNodeServer, { host: "127.0.0.1", port: 0 })),
    Layer.provide(DataHost.layer(store, options)),
    Layer.provide(options.tapes ?? Layer.empty)
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  const address = Context.get(context, HttpServer.HttpServer).address as HttpServer.TcpAddress
  return {
    url: `http://127.0.0.1:${address.port}`,
    store,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** An API key made the way a user makes one: an invite, a login, a key (straight on the store). */
export const keyOn = (store: DataStore, user = "tester"): string => {
  const keys = new Keys(store)
  const { code } = keys.invite(user, 1_000)
  const login = keys.login(code, 2_000)!
  return keys.createKey(keys.session(login.session, 3_000)!, "test", 3_000).key
}

export const call = async (
  url: string,
  method: string,
  path: string,
  options: { readonly bearer?: string; readonly body?: unknown } = {}
): Promise<{ readonly status: number; readonly body: any }> => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(options.bearer === undefined ? {} : { authorization: `Bearer ${options.bearer}` }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // left as text
  }
  return { status: response.status, body }
}
