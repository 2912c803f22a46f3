/**
 * A server with the sim venue and a second sim venue (`sim2`) that answers as a remote venue can: slowly, never, with
 * a 5xx after or without placing. What it does with each next placement is scripted by the test.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import { HttpServeLive } from "../../src/Http/Server.ts"
import { Auth } from "../../src/Services/Auth.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { type Venue, VenueError, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { authLayer, serverServices } from "../../src/Assembly.ts"
import { makeSimVenues } from "../../src/Venues/SimVenue.ts"
import { request } from "../Http/TestServer.ts"

/**
 * What the remote venue does with a placement: answer (`ok`), never answer and never place (`hang`), place and never
 * answer (`hang_placed`), place and answer 500 (`fail_placed`), answer 500 without placing (`fail`), refuse (`refuse`),
 * answer 429 (`rate_limited`), or answer 503 to a request that certainly placed nothing (`down`).
 */
export type Answer = "ok" | "hang" | "hang_placed" | "fail_placed" | "fail" | "refuse" | "rate_limited" | "down"

export class Script extends Context.Tag("test/RemoteScript")<
  Script,
  {
    /** What the next placements do, in order (then `ok`). */
    readonly next: Array<Answer>
    /** Placement requests that reached the venue (placed or not), by client id. */
    readonly seen: Array<string>
    /** Whether look-ups by client id fail (the venue cannot tell). */
    lookupsFail: boolean
  }
>() {}

export class Owner extends Context.Tag("test/RemoteOwner")<Owner, string>() {}

const unavailable = (reason: string) => new VenueError({ venue: "sim2", kind: "unavailable", reason })

/** The remote venue: `sim2` with its placements scripted. */
const remoteOf = (sim2: Venue, script: Context.Tag.Service<Script>): Venue => ({
  ...sim2,
  remote: true,
  placeOrder: (request) =>
    Effect.suspend(() => {
      const answer = script.next.shift() ?? "ok"
      script.seen.push(request.clientOrderId)
      switch (answer) {
        case "ok":
          return sim2.placeOrder(request)
        case "hang":
          return Effect.never
        case "hang_placed":
          return Effect.zipRight(sim2.placeOrder(request), Effect.never)
        case "fail_placed":
          return Effect.zipRight(sim2.placeOrder(request), Effect.fail(unavailable("HTTP 500 after placing")))
        case "fail":
          return Effect.fail(unavailable("HTTP 500"))
        case "refuse":
          return Effect.fail(new VenueError({ venue: "sim2", kind: "rejected", reason: "refused by script" }))
        case "rate_limited":
          return Effect.fail(
            new VenueError({
              venue: "sim2",
              kind: "rate_limited",
              reason: "HTTP 429 too many requests",
              retryAfterS: 1
            })
          )
        case "down":
          return Effect.fail(
            new VenueError({ venue: "sim2", kind: "unavailable", reason: "HTTP 503 exchange closed", sent: false })
          )
      }
    }),
  orderByClientId: (clientOrderId, request) =>
    script.lookupsFail ? Effect.fail(unavailable("look-up failed")) : sim2.orderByClientId(clientOrderId, request)
})

/** A script with nothing scripted yet. */
export const newScript = (): Context.Tag.Service<Script> => ({ next: [], seen: [], lookupsFail: false })

/** The venues `sim` and the scripted `sim2`. */
export const remoteVenues = (script: Context.Tag.Service<Script>) =>
  Layer.scoped(
    VenueGateway,
    Effect.map(makeSimVenues({ seed: 7, stepMs: 1000, markets: 12, count: 2 }), ([sim, sim2]) =>
      VenueGateway.fromVenues([sim!, remoteOf(sim2!, script)])
    )
  )

/** Short bounds, so that lost answers settle quickly. */
export const remoteBounds = (placementTimeoutMs = 400) => ({
  placementTimeoutMs,
  outcome: { absentAfterMs: 300, firstLookMs: 100, maxBackoffMs: 200 },
  reconcileEveryMs: 60_000
})

/** The server's layers over `sim` and the scripted `sim2`, with short bounds so lost answers settle quickly. */
export const remoteServer = (options: { readonly placementTimeoutMs?: number } = {}) => {
  const script = newScript()
  const services = serverServices({
    seed: 7,
    store: OrderStore.layerMemory,
    auth: authLayer(":memory:"),
    venues: remoteVenues(script),
    remote: remoteBounds(options.placementTimeoutMs)
  })
  const owner = Layer.effect(
    Owner,
    Effect.flatMap(Auth, (auth) => auth.bootstrapOwner).pipe(Effect.map((c) => c!.token))
  )
  return HttpServeLive.pipe(
    Layer.provideMerge(owner),
    Layer.provideMerge(Layer.succeed(Script, script)),
    Layer.provideMerge(services),
    Layer.provideMerge(NodeHttpServer.layerTest)
  )
}

/** A request with the owner's token. */
export const authed = (method: "GET" | "POST" | "DELETE", path: string, json?: unknown) =>
  Effect.flatMap(Owner, (token) => request(method, path, { token, ...(json === undefined ? {} : { json }) }))

/** Polls until `check` holds; fails the test after about 8 s (20 ms a try). */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, check: (a: A) => boolean, tries = 400) =>
  Effect.gen(function* () {
    let last: A | undefined
    for (let i = 0; i < tries; i++) {
      last = yield* read
      if (check(last)) return last
      yield* Effect.sleep("20 millis")
    }
    return yield* Effect.dieMessage(`condition not reached in time; last: ${JSON.stringify(last)}`)
  })

/** A quoted market of a venue and a price that rests (below the best bid) and one that crosses (the best ask). */
export const quoted = (venue: string) =>
  Effect.gen(function* () {
    const list = yield* request("GET", `/venues/${venue}/markets?limit=50`)
    const m = list.body.data.find((x: any) => x.best_bid !== null && x.best_ask !== null && Number(x.best_bid) > 0.05)
    return { id: m.id as string, rest: (Number(m.best_bid) - 0.03).toFixed(2), cross: String(m.best_ask) }
  })
