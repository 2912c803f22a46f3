/** The trading server as `serve` builds it over a venue list (the sim, and venues pointed at fakes), for e2e tests. */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { HttpServeLive } from "../../src/Http/Server.ts"
import { request } from "../Http/TestServer.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { makeSimVenue } from "../../src/Venues/SimVenue.ts"
import { venuesLayerFromList } from "../../src/Venues/Venues.ts"

/** The owner's access token on the server under test. */
export class Owner extends Context.Tag("test/VenueOwner")<Owner, string>() {}

/**
 * The server's layers: venues from `list` with the settings `env` reads (from a fake, say), the sim seeded as given,
 * orders in memory or in `engineFile`, auth in memory, and the owner bootstrapped.
 */
export const serveVenues = <R>(options: {
  readonly list: ReadonlyArray<string>
  readonly env: Effect.Effect<Record<string, string>, never, R>
  readonly sim: { readonly seed: number; readonly markets: number }
  readonly engineFile?: string | undefined
  /** How often the desk reads remote venues' records back (default a minute). */
  readonly reconcileEveryMs?: number | undefined
}) => {
  const venues = Layer.unwrapScoped(
    Effect.map(options.env, (env) =>
      venuesLayerFromList({
        list: options.list,
        env,
        sim: makeSimVenue({ seed: options.sim.seed, stepMs: 1000, markets: options.sim.markets })
      }).pipe(Layer.orDie)
    )
  )
  return serveOn(venues as Layer.Layer<any>, options)
}

/** The server's layers over the given venues: orders in memory or in `engineFile`, auth in memory, an owner. */
export const serveOn = (
  venues: Layer.Layer<any>,
  options: { readonly engineFile?: string | undefined; readonly reconcileEveryMs?: number | undefined } = {}
) => {
  const services = serverServices({
    seed: 7,
    store:
      options.engineFile === undefined
        ? OrderStore.layerMemory
        : OrderStore.layerSql.pipe(Layer.provide(engineDatabase(options.engineFile))),
    auth: authLayer(":memory:"),
    venues,
    ...(options.reconcileEveryMs === undefined ? {} : { remote: { reconcileEveryMs: options.reconcileEveryMs } })
  })
  const owner = Layer.effect(
    Owner,
    Effect.flatMap(Auth, (auth) => auth.bootstrapOwner).pipe(Effect.map((c) => c!.token))
  )
  return HttpServeLive.pipe(
    Layer.provideMerge(owner),
    Layer.provideMerge(services),
    Layer.provideMerge(NodeHttpServer.layerTest)
  ) as Layer.Layer<Owner | any>
}

/** A request with the owner's token. */
export const authed = (method: "GET" | "POST", path: string, json?: unknown) =>
  Effect.flatMap(Owner, (token) => request(method, path, { token, ...(json === undefined ? {} : { json }) }))

/** Polls until `check` holds (the streams are asynchronous); fails the test after ~6 s. */
export const eventually = <A>(read: Effect.Effect<A, any, any>, check: (a: A) => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 300; i++) {
      const a = yield* read
      if (check(a)) return a
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage("condition not reached in time")
  })
