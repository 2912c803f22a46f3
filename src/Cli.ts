/** The command tree of `crossbook`. */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import { FileSystem, HttpServer } from "@effect/platform"
import { NodeContext, NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Cause, Clock, Console, Data, Effect, Exit, Layer, Logger, Option } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { accessToken, serviceUrl } from "./Client.ts"
import { doctor } from "./Doctor.ts"
import { openApiDocument } from "./Http/Api.ts"
import { HttpServeLive } from "./Http/Server.ts"
import { acquireHome, ensureHome, HomeLocked, homeFolder, privateFiles, tightenModes } from "./Home.ts"
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
import { matchCommand } from "./Matching/Cli.ts"
import { dataCommand, recordCommand } from "./Data/Cli.ts"
import { Tapes } from "./Data/Tapes.ts"
import { historyCommand, keysCommand, loginCommand } from "./Hosted/Cli.ts"
import { parseVenueList, venuesLayerFromList } from "./Venues/Venues.ts"
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
export const deskServices = <E1, E2, E3 = never>(options: {
  readonly seed: number
  readonly faults?: ReadonlyArray<FaultRule>
  readonly startingCash?: string
  readonly store: Layer.Layer<OrderStore, E1>
  readonly auth: Layer.Layer<Auth, E2>
  /** Other venues in place of the embedded sim venue alone (`serve`'s list, a tape-fed one in the simulator). */
  readonly venues?: Layer.Layer<VenueGateway, E3>
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
export const serverServices = <E1, E2, E3 = never>(
  options: Parameters<typeof deskServices<E1, E2, E3>>[0] & {
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

/** A failure of a command that the user can act on: printed as one sentence on stderr, exit status 1. */
export class CliError extends Data.TaggedError("CliError")<{ readonly message: string }> {}

/**
 * A Node HTTP server that holds the requests (and WebSocket upgrades) arriving before the API is attached and hands
 * them to it once it is: `serve` binds its port before it reads or writes a database, so a port in use stops it with
 * nothing written, and clients that connect while it restores its state wait instead of being refused.
 */
export const holdingServer = () => {
  const server = createServer()
  const requests: Array<[IncomingMessage, ServerResponse]> = []
  const upgrades: Array<[IncomingMessage, Duplex, Buffer]> = []
  const holdRequest = (request: IncomingMessage, response: ServerResponse) => void requests.push([request, response])
  const holdUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer) =>
    void upgrades.push([request, socket, head])
  server.on("request", holdRequest)
  server.on("upgrade", holdUpgrade)
  server.on("newListener", (event: string | symbol, listener: (...args: Array<any>) => void) => {
    if (event === "request" && listener !== holdRequest) {
      server.off("request", holdRequest)
      const held = requests.splice(0)
      setImmediate(() => held.forEach(([request, response]) => listener(request, response)))
    } else if (event === "upgrade" && listener !== holdUpgrade) {
      server.off("upgrade", holdUpgrade)
      const held = upgrades.splice(0)
      setImmediate(() => held.forEach(([request, socket, head]) => listener(request, socket, head)))
    }
  })
  return server
}

/** The port as a layer, bound first; a refusal to bind becomes a sentence that says what to do. */
const boundPort = (host: string, port: number) =>
  NodeHttpServer.layer(holdingServer, { host, port }).pipe(
    Layer.catchAll((error) => {
      const code = (error.cause as { code?: string } | undefined)?.code
      const why =
        code === "EADDRINUSE"
          ? `port ${port} on ${host} is in use: stop what listens there, or pick another --port`
          : code === "EACCES"
            ? `may not listen on port ${port} of ${host} (EACCES): pick a port above 1023`
            : code === "EADDRNOTAVAIL"
              ? `${host} is not an address of this machine: pick another --host`
              : `cannot listen on ${host}:${port} (${code ?? String(error.cause)})`
      return Layer.fail(new CliError({ message: why }))
    })
  )

const readFaultPlan = (file: string) =>
  Effect.try({
    try: () => Schema.decodeUnknownSync(FaultPlan)(JSON.parse(readFileSync(file, "utf8"))),
    catch: (error) =>
      new CliError({
        message: `the fault plan ${file} is not valid (${oneLine(error)}): it is a JSON array of {op, nth, kind}`
      })
  })

const venueList = Options.text("venues").pipe(
  Options.withDescription("Venues to serve, a comma list (default $CROSSBOOK_VENUES or sim,kalshi,polymarket)"),
  Options.optional
)

const serve = Command.make(
  "serve",
  { host, port, db, control, envFile, simSeed, simCash, simFaults, venues: venueList },
  (options) =>
    Effect.gen(function* () {
      if (Option.isSome(options.envFile)) {
        const file = options.envFile.value
        yield* Effect.try({
          try: () => process.loadEnvFile(file),
          catch: (error) => new CliError({ message: `cannot load the env file ${file} (${oneLine(error)})` })
        })
      }
      const faults = Option.isSome(options.simFaults) ? yield* readFaultPlan(options.simFaults.value) : []
      privateFiles()
      const home = ensureHome(homeFolder())
      // The home is this process's before anything in it is read or written; the port is bound before the databases
      // are opened, so a second server, or a port in use, leaves the home as it found it.
      yield* acquireHome(home, "serve")
      const dbFile = Option.getOrElse(options.db, () => join(home, "engine.db"))
      const controlFile = Option.getOrElse(options.control, () => join(home, "control.db"))
      const seed = Option.getOrElse(options.simSeed, () => Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1))
      const venues = venuesLayerFromList({
        list: parseVenueList(Option.getOrUndefined(options.venues) ?? process.env["CROSSBOOK_VENUES"]),
        env: process.env,
        sim: makeSimVenue({ seed, stepMs: 1000, markets: 24, faults })
      }).pipe(Layer.mapError((message) => new CliError({ message })))
      const services = serverServices({
        seed,
        faults,
        venues,
        startingCash: Option.getOrElse(options.simCash, () => process.env["CROSSBOOK_SIM_CASH"] ?? "10000"),
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(dbFile))),
        auth: authLayer(controlFile)
      })
      const started = Layer.effectDiscard(
        bootstrapAccess({ home, host: options.host, port: options.port, controlFile, dbFile })
      )
      const afterBind = Layer.provideMerge(
        started,
        Layer.provideMerge(
          services,
          Layer.effectDiscard(
            Effect.gen(function* () {
              // Files an older version left readable by others are tightened before SQLite opens them (its -wal and
              // -shm files take the database's mode).
              tightenModes(home, [dbFile, controlFile])
              yield* Console.log(
                `${NAME} ${VERSION}: home ${home}, engine database ${dbFile}, control database ${controlFile}`
              )
            })
          ).pipe(Layer.provideMerge(boundPort(options.host, options.port)))
        )
      )
      return yield* Layer.launch(HttpServeLive.pipe(HttpServer.withLogAddress, Layer.provide(afterBind)))
    }).pipe(Effect.scoped)
).pipe(Command.withDescription("Run the trading server (embedded sim venue, SQLite under the home folder)"))

const tokenCreate = Command.make(
  "create",
  {
    control,
    name: Options.text("name").pipe(Options.withDescription("A label for the token"), Options.withDefault("owner"))
  },
  (options) =>
    Effect.gen(function* () {
      // No home lock: this only inserts a token row, in one SQLite transaction, which is safe beside a running server
      // (and the way to give it another owner token); the server reads tokens from the database on each request.
      privateFiles()
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

/** The first line of an error's message, without a stack. */
export const oneLine = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split("\n")[0] ?? "").trim()
}

/** Why a fetch did not reach the server, in words: the innermost cause's code (ECONNREFUSED, ENOTFOUND, …). */
const unreachable = (url: string, error: unknown): CliError => {
  let cause: unknown = error
  while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause
  const code = (cause as { code?: string } | undefined)?.code ?? oneLine(cause)
  return new CliError({
    message: `cannot reach the server at ${url} (${code}): start it with \`crossbook serve\`, or set SERVICE_URL`
  })
}

/**
 * Calls a /trading route of the server at SERVICE_URL with the client's token and prints the JSON answer on stdout;
 * an error answer becomes one sentence on stderr (its code and message) and a failure.
 */
const callServer = (method: string, path: string, body?: unknown) =>
  Effect.gen(function* () {
    const url = serviceUrl()
    const tokenValue = accessToken(homeFolder(), url)
    if (tokenValue === undefined) {
      return yield* new CliError({
        message: `no access token for ${url}: set SERVICE_ACCESS_TOKEN, or start a loopback server so the registry has one`
      })
    }
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(`${url}${path}`, {
          method,
          signal,
          headers: {
            authorization: `Bearer ${tokenValue}`,
            ...(body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }),
      catch: (error) => unreachable(url, error)
    })
    const text = yield* Effect.tryPromise({ try: () => response.text(), catch: (error) => unreachable(url, error) })
    if (response.ok) return yield* Console.log(text)
    let detail = text.slice(0, 200)
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } }
      if (parsed.error?.code !== undefined) detail = `${parsed.error.code}: ${parsed.error.message ?? ""}`
    } catch {
      // not our error body: the start of the text says what it is
    }
    return yield* new CliError({ message: `${method} ${path} answered ${response.status} ${detail}`.trim() })
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

const doctorCommand = Command.make(
  "doctor",
  {
    db,
    control,
    json: Options.boolean("json").pipe(Options.withDescription("One JSON document on stdout"))
  },
  (o) =>
    Effect.gen(function* () {
      privateFiles()
      const home = homeFolder()
      const report = yield* doctor({
        home,
        dbFile: Option.getOrElse(o.db, () => join(home, "engine.db")),
        controlFile: Option.getOrElse(o.control, () => join(home, "control.db"))
      })
      if (o.json) yield* Console.log(JSON.stringify(report, null, 2))
      else {
        for (const check of report.checks) {
          yield* Console.log(`${check.status.padEnd(5)} ${check.name.padEnd(16)} ${check.detail}`)
        }
      }
      const failed = report.checks.filter((c) => c.status === "fail")
      if (failed.length > 0) {
        return yield* new CliError({
          message: `${failed.length} check${failed.length === 1 ? "" : "s"} failed: ${failed.map((c) => c.name).join(", ")}`
        })
      }
    })
).pipe(
  Command.withDescription(
    "Check the home, its lock and databases (modes, integrity), and each venue: reachable, credentials present, clock skew"
  )
)

/** The command tree, with the commands that live outside `src/` (simulation, backtests) added by the entry point. */
export const makeCli = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(extra: Extra) =>
  Command.run(
    Command.make(NAME).pipe(
      Command.withDescription("Self-hosted trading server for prediction markets"),
      Command.withSubcommands([
        serve,
        token,
        me,
        orders,
        openapi,
        doctorCommand,
        matchCommand,
        dataCommand,
        recordCommand,
        loginCommand,
        keysCommand,
        historyCommand,
        ...extra
      ])
    ),
    { name: NAME, version: VERSION }
  )

/** Colour only for a terminal, and never when `NO_COLOR` is set (https://no-color.org). */
export const colourFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean =>
  stream.isTTY === true && (env["NO_COLOR"] ?? "") === "" && env["TERM"] !== "dumb"

/** Strips terminal escapes from everything written to a stream that must stay plain (a pipe, a file, NO_COLOR). */
const plainStream = (stream: NodeJS.WriteStream): void => {
  const write = stream.write.bind(stream) as (...args: Array<unknown>) => boolean
  stream.write = ((chunk: unknown, ...rest: Array<unknown>) =>
    write(typeof chunk === "string" ? stripVTControlCharacters(chunk) : chunk, ...rest)) as typeof stream.write
}

/**
 * How a failed command ends: one sentence on stderr and exit status 1; a usage error (already explained by the
 * parser, on stderr) 2; a bug 70 with its trace only when `CROSSBOOK_DEBUG` is set.
 */
const reportFailure = (cause: Cause.Cause<unknown>): Effect.Effect<number> =>
  Effect.sync(() => {
    if (Cause.isInterruptedOnly(cause)) return 0
    const failure = Cause.failureOption(cause)
    if (Option.isSome(failure)) {
      const error = failure.value
      if (ValidationError.isValidationError(error)) return 2
      const text =
        error instanceof CliError || error instanceof HomeLocked
          ? error.message
          : error instanceof Error
            ? oneLine(error)
            : typeof error === "object" && error !== null && "message" in error
              ? String((error as { message: unknown }).message)
              : String(error)
      process.stderr.write(`${NAME}: ${text}\n`)
      return 1
    }
    const defect = Cause.squash(cause)
    process.stderr.write(
      `${NAME}: internal error: ${oneLine(defect)}` +
        (process.env["CROSSBOOK_DEBUG"] ? `\n${Cause.pretty(cause)}\n` : " (set CROSSBOOK_DEBUG=1 for the trace)\n")
    )
    return 70
  })

/** Runs the command line on Node: plain output where colour does not belong, errors as sentences, exit statuses. */
export const runCli = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(
  extra: Extra,
  argv: ReadonlyArray<string> = process.argv,
  /** How the data host's commands read and write tapes: the simulator's format, given by the entry point that has it. */
  tapes: Layer.Layer<Tapes> = Tapes.unavailable
): void => {
  const colour = colourFor(process.stdout)
  if (!colour) plainStream(process.stdout)
  if (!colourFor(process.stderr)) plainStream(process.stderr)
  const program = makeCli(extra)(argv).pipe(
    Effect.as(0),
    Effect.catchAllCause(reportFailure),
    Effect.provide(tapes),
    Effect.provide(NodeContext.layer),
    Effect.provide(Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ colors: colour })))
  ) as Effect.Effect<number>
  NodeRuntime.runMain(program, {
    disableErrorReporting: true,
    disablePrettyLogger: true,
    // Stopped by a signal (SIGINT, SIGTERM) after a clean shutdown: a normal end.
    teardown: (exit, onExit) =>
      onExit(Exit.isSuccess(exit) ? (exit.value as number) : Cause.isInterruptedOnly(exit.cause) ? 0 : 70)
  })
}
