import { assert, describe, it } from "@effect/vitest"
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer, Schema } from "effect"
import { readFileSync } from "node:fs"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { HttpServeLive } from "../../src/Http/Server.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { convertKalshi } from "../../sim/convert/Kalshi.ts"
import { replay, Scenario, type Wiring } from "../../sim/Replay.ts"
import { formatTape } from "../../sim/Tape.ts"

const tapeText = (() => {
  const c = convertKalshi(
    readFileSync(new URL("../../fixtures/tapes/kalshi_ws_excerpt.jsonl", import.meta.url), "utf8")
  )
  return formatTape(c.header, c.events)
})()

const market = tapeText.split("\n")[0]!.match(/"id":"([^"]+)"/)![1]!

const orders = Schema.decodeUnknownSync(Scenario)([
  { at_ms: 0, order: { market_id: market, side: "buy", type: "limit", amount: "2", price: "0.5" } },
  { at_ms: 200, order: { market_id: market, side: "sell", type: "stop_market", amount: "1", stop_price: "0.99" } },
  {
    at_ms: 400,
    order: { market_id: market, side: "buy", type: "peg", amount: "3", params: { reference: "near", min_stay_s: 1 } }
  },
  {
    at_ms: 600,
    order: {
      market_id: market,
      side: "buy",
      type: "twap",
      amount: "2",
      price: "0.9",
      params: { window_s: 4, slices: 2 }
    }
  }
])

/** The engine's decisions in a log: what it placed and cancelled, and its parents' ends, without who asked. */
const commands = (log: string) =>
  log
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
    .filter((e) => e.kind.startsWith("managed.") || (e.kind === "order.accepted" && e.payload.parent_id !== null))
    .map((e) => {
      const payload = { ...e.payload }
      delete payload.by
      if (payload.info !== undefined) payload.info = { ...payload.info, placed_by: undefined }
      return { ts: e.ts, kind: e.kind, key: e.key, payload }
    })

/** What `crossbook serve` runs: the SQLite store, the control database, the HTTP server; orders come over HTTP. */
const serveWiring: Wiring = (venues, seed, startingCash) =>
  HttpServeLive.pipe(
    Layer.provideMerge(
      serverServices({
        seed,
        engineSeed: seed,
        drivenEngine: true,
        startingCash,
        venues,
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(":memory:"))),
        auth: authLayer(":memory:")
      })
    ),
    Layer.provideMerge(NodeHttpServer.layerTest),
    Layer.orDie
  ) as any

describe("G5: live/sim parity", () => {
  it.live("one recorded stream through the serve wiring and through the simulator yields the same commands", () =>
    Effect.gen(function* () {
      const sim = yield* replay({ tape: tapeText, orders, seed: 2 })
      let token: string | undefined
      const served = yield* replay({
        tape: tapeText,
        orders,
        seed: 2,
        wiring: serveWiring,
        submit: (order, run) =>
          Effect.gen(function* () {
            const context = run.context as Context.Context<any>
            if (token === undefined) {
              const created = yield* Effect.orDie(Context.get(context, Auth).bootstrapOwner)
              token = created!.token
            }
            const client = Context.get(context, HttpClient.HttpClient) as HttpClient.HttpClient
            const request = yield* HttpClientRequest.bodyJson(
              HttpClientRequest.bearerToken(HttpClientRequest.post("/trading/orders"), token),
              order
            ).pipe(Effect.orDie)
            const response = yield* client.execute(request).pipe(Effect.scoped, Effect.orDie)
            if (response.status !== 201) {
              return yield* Effect.fail({ code: String(response.status), message: "refused over HTTP" })
            }
          })
      })
      assert.deepStrictEqual(served.summary.orders.refused, [])
      const simCommands = commands(sim.log)
      assert.isAbove(simCommands.filter((c) => c.kind === "managed.child").length, 1)
      assert.deepStrictEqual(commands(served.log), simCommands)
    })
  )
})
