/** The command tree of `crossbook`. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Clock, Console, Effect, Layer, Option } from "effect"
import { join } from "node:path"
import { accessToken, serviceUrl } from "./Client.ts"
import { openApiDocument } from "./Http/Api.ts"
import { listen } from "./Http/Server.ts"
import { ensureHome, homeFolder } from "./Home.ts"
import { controlDatabase, engineDatabase } from "./Persistence/Sql.ts"
import { isLoopback, readRegistry, registryFile, registryKey, writeRegistryEntry } from "./Registry.ts"
import { Auth } from "./Services/Auth.ts"
import { OrderStore } from "./Services/OrderStore.ts"
import { VenueGateway } from "./Services/VenueGateway.ts"
import { Desk } from "./Trading/Desk.ts"
import { Engine } from "./Engine/Engine.ts"
import { REGISTRY } from "./Engine/Registry.ts"
import { Journal } from "./Trading/Journal.ts"
import { FaultPlan, type FaultRule, makeSimVenue } from "./Venues/SimVenue.ts"
import * as F from "./Domain/Fixed.ts"
import { readFileSync } from "node:fs"
import { Schema } from "effect"
import { NAME, VERSION } from "./Version.ts"

const host = Options.text("host").pipe(
  Options.withDescription("Address to listen on; anything but loopback exposes market data without authentication"),
  Options.withDefault("127.0.0.1")
)
const port = Options.integer("port").pipe(Options.withDescription("Port to listen on"), Options.withDefault(8000))
const db = Options.file("db").pipe(
  Options.withDescription("Engine database (default <home>/engine.db)"),
  Options.optional
)
const control = Options.file("control").pipe(
  Options.withDescription("Control database (default <home>/control.db)"),
  Options.optional
)
const envFile = Options.file("env-file").pipe(
  Options.withDescription("A .env file with venue credentials to load"),
  Options.optional
)
const simCash = Options.text("sim-cash").pipe(
  Options.withDescription("Cash each sim account starts with (default $CROSSBOOK_SIM_CASH or 10000)"),
  Options.optional
)
const simFaults = Options.file("sim-faults").pipe(
  Options.withDescription("A JSON fault plan for the sim venue: [{op, nth, kind, retry_after_s?, reached?}]"),
  Options.optional
)
const simSeed = Options.integer("sim-seed").pipe(
  Options.withDescription("Seed of the embedded sim venue (default $CROSSBOOK_SIM_SEED or 1)"),
  Options.optional
)

/** The venues of this server: the embedded sim venue, always. */
export const venuesLayer = (config: {
  readonly seed: number
  readonly stepMs?: number
  readonly markets?: number
  readonly faults?: ReadonlyArray<FaultRule>
}) =>
  Layer.scoped(
    VenueGateway,
    Effect.map(
      makeSimVenue({
        seed: config.seed,
        stepMs: config.stepMs ?? 1000,
        markets: config.markets ?? 24,
        faults: config.faults ?? []
      }),
      (sim) => VenueGateway.fromVenues([sim])
    )
  )

/** What the engine runs on: venues, the store, auth, and the desk with its journal. */
export const deskServices = <E1, E2>(options: {
  readonly seed: number
  readonly faults?: ReadonlyArray<FaultRule>
  readonly startingCash?: string
  readonly store: Layer.Layer<OrderStore, E1>
  readonly auth: Layer.Layer<Auth, E2>
  /** Other venues in place of the embedded sim venue (a tape-fed one, in the simulator and its tests). */
  readonly venues?: Layer.Layer<VenueGateway>
}) => {
  const base = Layer.mergeAll(
    options.venues ??
      venuesLayer({ seed: options.seed, ...(options.faults === undefined ? {} : { faults: options.faults }) }),
    options.store,
    options.auth
  )
  const withJournal = Layer.provideMerge(Journal.layer, base)
  return Layer.provideMerge(Desk.layer({ startingCash: F.of(options.startingCash ?? "10000") }), withJournal)
}

/** Everything the server runs on: the desk's services and the engine that holds complex orders. */
export const serverServices = <E1, E2>(
  options: Parameters<typeof deskServices<E1, E2>>[0] & {
    readonly engineSeed?: number
    /** The simulator moves the clock and tells the engine when its timers are due. */
    readonly drivenEngine?: boolean
  }
) =>
  Layer.provideMerge(
    Engine.layer(REGISTRY, { seed: options.engineSeed ?? 0, driven: options.drivenEngine ?? false }),
    deskServices(options)
  )

/** Auth on a control database file; its SQL client stays private to it. */
export const authLayer = (controlFile: string) => Auth.layerSql.pipe(Layer.provide(controlDatabase(controlFile)))

/**
 * Makes sure the owner can reach a new server. On a new control database the owner and its token are created. On
 * loopback the token goes to the registry (a fresh owner token when the registry holds no valid one for this
 * address); elsewhere a new token is printed once, with a warning, and nothing is written.
 */
export const bootstrapAccess = (options: {
  readonly home: string
  readonly host: string
  readonly port: number
  readonly controlFile: string
  readonly dbFile: string
  /** Where the console lines go. */
  readonly say?: (line: string) => Effect.Effect<void>
}) =>
  Effect.gen(function* () {
    const say = options.say ?? ((line: string) => Console.log(line))
    const auth = yield* Auth
    const created = yield* auth.bootstrapOwner
    const now = yield* Clock.currentTimeMillis
    if (!isLoopback(options.host)) {
      yield* say(
        `WARNING: listening on ${options.host}, not loopback: market data is served without authentication. ` +
          "Put a TLS proxy with its own authentication in front of this server."
      )
      if (created !== undefined) {
        yield* say(`Owner access token (shown once, store it now): ${created.token}`)
      } else {
        yield* say("Owner already exists; create another token with `crossbook token create --control FILE`.")
      }
      return
    }
    const key = registryKey(options.host, options.port)
    const previous = readRegistry(options.home)[key]
    let token = created?.token
    if (token === undefined && previous !== undefined && (yield* auth.isValid(previous.access_token))) {
      token = previous.access_token
    }
    if (token === undefined) {
      token = (yield* auth.createOwnerToken(`registry ${key}`, { method: "BOOTSTRAP", path: "serve" })).token
    }
    writeRegistryEntry(options.home, key, {
      access_token: token,
      control: options.controlFile,
      db: options.dbFile,
      pid: process.pid,
      started_at: now
    })
    yield* say(`Owner access token is in ${registryFile(options.home)} under "${key}"; clients read it there.`)
  })

const serve = Command.make("serve", { host, port, db, control, envFile, simSeed, simCash, simFaults }, (options) =>
  Effect.gen(function* () {
    if (Option.isSome(options.envFile)) process.loadEnvFile(options.envFile.value)
    const home = ensureHome(homeFolder())
    const dbFile = Option.getOrElse(options.db, () => join(home, "engine.db"))
    const controlFile = Option.getOrElse(options.control, () => join(home, "control.db"))
    const seed = Option.getOrElse(options.simSeed, () => Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1))
    yield* Console.log(`${NAME} ${VERSION}: home ${home}, engine database ${dbFile}, control database ${controlFile}`)
    const faults = Option.isSome(options.simFaults)
      ? Schema.decodeUnknownSync(FaultPlan)(JSON.parse(readFileSync(options.simFaults.value, "utf8")))
      : []
    const services = serverServices({
      seed,
      faults,
      startingCash: Option.getOrElse(options.simCash, () => process.env["CROSSBOOK_SIM_CASH"] ?? "10000"),
      store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(dbFile))),
      auth: authLayer(controlFile)
    })
    return yield* Effect.gen(function* () {
      yield* bootstrapAccess({ home, host: options.host, port: options.port, controlFile, dbFile })
      return yield* Layer.launch(listen({ host: options.host, port: options.port }))
    }).pipe(Effect.provide(services))
  })
).pipe(Command.withDescription("Run the trading server (embedded sim venue, SQLite under the home folder)"))

const tokenCreate = Command.make(
  "create",
  {
    control,
    name: Options.text("name").pipe(Options.withDescription("A label for the token"), Options.withDefault("owner"))
  },
  (options) =>
    Effect.gen(function* () {
      const controlFile = Option.getOrElse(options.control, () => join(ensureHome(homeFolder()), "control.db"))
      const issued = yield* Effect.flatMap(Auth, (auth) =>
        auth.createOwnerToken(options.name, { method: "CLI", path: "token create" })
      ).pipe(Effect.provide(authLayer(controlFile)))
      yield* Console.log(`Owner token ${issued.record.id} on ${controlFile} (shown once):`)
      yield* Console.log(issued.token)
    })
).pipe(Command.withDescription("Create another owner token on a control database; the secret is shown once"))

const token = Command.make("token").pipe(
  Command.withDescription("Access tokens"),
  Command.withSubcommands([tokenCreate])
)

/** Calls a /trading route of the server at SERVICE_URL with the client's token and prints the JSON answer. */
const callServer = (method: string, path: string, body?: unknown) =>
  Effect.gen(function* () {
    const url = serviceUrl()
    const tokenValue = accessToken(homeFolder(), url)
    if (tokenValue === undefined) {
      return yield* Effect.fail(
        new Error(`no access token: set SERVICE_ACCESS_TOKEN, or start a loopback server so the registry has one`)
      )
    }
    const response = yield* Effect.tryPromise(() =>
      fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tokenValue}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    const text = yield* Effect.tryPromise(() => response.text())
    yield* Console.log(text)
    if (!response.ok) return yield* Effect.fail(new Error(`${method} ${path} answered ${response.status}`))
  })

const ordersList = Command.make(
  "list",
  {
    status: Options.text("status").pipe(Options.withDescription("Comma list of statuses"), Options.optional),
    market: Options.text("market").pipe(Options.withDescription("Only this market id"), Options.optional),
    limit: Options.integer("limit").pipe(Options.withDefault(100))
  },
  (o) => {
    const query = new URLSearchParams({ limit: String(o.limit) })
    if (Option.isSome(o.status)) query.set("status", o.status.value)
    if (Option.isSome(o.market)) query.set("market_id", o.market.value)
    return callServer("GET", `/trading/orders?${query}`)
  }
).pipe(Command.withDescription("List orders, newest first"))

const ordersPlace = Command.make(
  "place",
  {
    market: Options.text("market").pipe(Options.withDescription("<venue>:<native_id>")),
    side: Options.choice("side", ["buy", "sell"]),
    amount: Options.text("amount"),
    price: Options.text("price").pipe(Options.withDescription("Limit price, or a market order's protection")),
    type: Options.choice("type", ["limit", "market"]).pipe(Options.withDefault("limit" as const)),
    tif: Options.choice("tif", ["gtc", "gtd", "ioc", "fok"]).pipe(Options.optional),
    clientOrderId: Options.text("client-order-id").pipe(Options.optional)
  },
  (o) =>
    callServer("POST", "/trading/orders", {
      market_id: o.market,
      side: o.side,
      amount: o.amount,
      price: o.price,
      type: o.type,
      ...(Option.isSome(o.tif) ? { time_in_force: o.tif.value } : {}),
      ...(Option.isSome(o.clientOrderId) ? { client_order_id: o.clientOrderId.value } : {})
    })
).pipe(Command.withDescription("Place a plain order"))

const ordersCancel = Command.make("cancel", { id: Args.text({ name: "ID" }) }, ({ id }) =>
  callServer("DELETE", `/trading/orders/${encodeURIComponent(id)}`)
).pipe(Command.withDescription("Cancel an order"))

const orders = Command.make("orders").pipe(
  Command.withDescription("Orders on the server at SERVICE_URL"),
  Command.withSubcommands([ordersList, ordersPlace, ordersCancel])
)

const me = Command.make("me", {}, () => callServer("GET", "/trading/me")).pipe(
  Command.withDescription("Who the access token speaks for, and its permissions per account")
)

const openapi = Command.make(
  "openapi",
  { out: Options.file("out").pipe(Options.withDescription("Write to this file instead of stdout"), Options.optional) },
  ({ out }) =>
    Effect.gen(function* () {
      const text = JSON.stringify(openApiDocument(), null, 2) + "\n"
      if (Option.isNone(out)) return yield* Console.log(text.trimEnd())
      const fs = yield* FileSystem.FileSystem
      yield* fs.writeFileString(out.value, text)
    })
).pipe(Command.withDescription("Print the OpenAPI document the server publishes"))

/** The command tree, with the commands that live outside `src/` (simulation, backtests) added by the entry point. */
export const makeCli = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(extra: Extra) =>
  Command.run(
    Command.make(NAME).pipe(
      Command.withDescription("Self-hosted trading server for prediction markets"),
      Command.withSubcommands([serve, token, me, orders, openapi, ...extra])
    ),
    { name: NAME, version: VERSION }
  )
