/**
 * What `crossbook` runs on: the venues, the desk, the engine and the server, built for the commands that need them.
 * The command line loads this module only when such a command runs, so `--help` and the client commands start
 * without it.
 */
import { FileSystem, HttpServer } from "@effect/platform"
import { NodeHttpClient, NodeHttpServer } from "@effect/platform-node"
import { Clock, Console, Effect, Exit, Layer, Option, Schema } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { Duplex } from "node:stream"
import { dirname, join, resolve } from "node:path"
import { existsSync, readFileSync, statSync } from "node:fs"
import { CliError, oneLine } from "./CliError.ts"
import { doctor } from "./Doctor.ts"
import { openApiDocument } from "./Http/Api.ts"
import { HttpServeLive } from "./Http/Server.ts"
import { acquireHome, ensureHome, forgetNewHome, homeFolder, isNewHome, privateFiles, tightenModes } from "./Home.ts"
import { authLayer, serverServices } from "./Assembly.ts"
import { engineDatabase } from "./Persistence/Sql.ts"
import { isLoopback, readRegistry, registryFile, registryKey, writeRegistryEntry } from "./Registry.ts"
import { Auth } from "./Services/Auth.ts"
import { OrderStore } from "./Services/OrderStore.ts"
import { tracingLayer } from "./Telemetry/Tracing.ts"
import { FaultPlan } from "./Venues/SimVenue.ts"
import { localMatchingLayer } from "./Matching/Local.ts"
import { MatchingClient, serviceApiKey } from "./Services/MatchingClient.ts"
import type { VenueRegistration } from "./Venues/Registration.ts"
import { parseVenueList, registrationsWith, servedVenuesLayer, simVenueCountFrom } from "./Venues/Venues.ts"
import * as F from "./Domain/Fixed.ts"
import { NAME, VERSION } from "./Version.ts"

/**
 * The server's matcher: the hosted one at `SERVICE_MATCHING_URL` when set (key from `SERVICE_API_KEY`, else the
 * saved one), else the local matcher over the served venues' catalogs, loaded in the background.
 */
export const matchingLayer = (env: Readonly<Record<string, string | undefined>>, home: string) => {
  const url = env["SERVICE_MATCHING_URL"]
  return url !== undefined && url !== ""
    ? MatchingClient.layerHosted({ url, apiKey: serviceApiKey(env, home) }).pipe(Layer.provide(NodeHttpClient.layer))
    : localMatchingLayer()
}

/** The dashboard's address as a browser opens it (an IPv6 address in brackets). */
export const dashboardUrl = (host: string, port: number): string =>
  `http://${host.includes(":") ? `[${host}]` : host}:${port}/ui/`

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
    const dashboard = `Dashboard: ${dashboardUrl(options.host, options.port)} (sign in with the owner's access token)`
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
      yield* say(dashboard)
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
    yield* say(dashboard)
  })

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

/**
 * A database named on the command line: its folder must exist (SQLite creates the file, not the folders) and the
 * path, if it exists, must be a file. Anything else is a usage error naming the flag.
 */
const databaseFile = (flag: string, file: string): string | CliError => {
  const folder = dirname(resolve(file))
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    return new CliError({ message: `${flag} ${file}: the folder ${folder} does not exist`, exitCode: 2 })
  }
  if (existsSync(file) && !statSync(file).isFile()) {
    return new CliError({ message: `${flag} ${file}: not a file`, exitCode: 2 })
  }
  return file
}

/** What `serve` is given on its command line. */
export interface ServeOptions {
  readonly host: string
  readonly port: number
  readonly db: Option.Option<string>
  readonly control: Option.Option<string>
  readonly envFile: Option.Option<string>
  readonly simSeed: Option.Option<number>
  readonly simCash: Option.Option<string>
  readonly paperCash: Option.Option<string>
  readonly simFaults: Option.Option<string>
  readonly simVenues: Option.Option<number>
  readonly venues: Option.Option<string>
}

/**
 * `crossbook serve`: binds the port, takes the home, opens the databases, and serves until stopped. `registrations`
 * are venues served beside the built-in ones (an entry point of its own passes them).
 */
export const serve = (options: ServeOptions, registrations: ReadonlyArray<VenueRegistration> = []) =>
  Effect.gen(function* () {
    if (Option.isSome(options.envFile)) {
      const file = options.envFile.value
      yield* Effect.try({
        try: () => process.loadEnvFile(file),
        catch: (error) => new CliError({ message: `cannot load the env file ${file} (${oneLine(error)})` })
      })
    }
    const faults = Option.isSome(options.simFaults) ? yield* readFaultPlan(options.simFaults.value) : []
    const paperCashText = Option.getOrElse(options.paperCash, () => process.env["CROSSBOOK_PAPER_CASH"] ?? "10000")
    const paperCash = F.parse(paperCashText.trim())
    if (paperCash === undefined || paperCash < 0) {
      return yield* Effect.fail(
        new CliError({ message: `--paper-cash must be a decimal of at most six places, not '${paperCashText}'` })
      )
    }
    privateFiles()
    for (const [flag, file] of [
      ["--db", options.db],
      ["--control", options.control]
    ] as const) {
      const checked = Option.isSome(file) ? databaseFile(flag, file.value) : undefined
      if (checked instanceof CliError) return yield* checked
    }
    const wasNew = isNewHome(homeFolder())
    const home = ensureHome(homeFolder())
    // A start that fails before it opens a database leaves a new home as it found it.
    if (wasNew)
      yield* Effect.addFinalizer((exit) =>
        Exit.isFailure(exit) ? Effect.sync(() => forgetNewHome(home)) : Effect.void
      )
    // The home is this process's before anything in it is read or written; the port is bound before the databases
    // are opened, so a second server, or a port in use, leaves the home as it found it.
    yield* acquireHome(home, "serve")
    const dbFile = Option.getOrElse(options.db, () => join(home, "engine.db"))
    const controlFile = Option.getOrElse(options.control, () => join(home, "control.db"))
    const seed = Option.getOrElse(options.simSeed, () => Number(process.env["CROSSBOOK_SIM_SEED"] ?? 1))
    const simCount = yield* simVenueCountFrom(
      Option.getOrUndefined(options.simVenues),
      process.env["CROSSBOOK_SIM_VENUES"]
    ).pipe(Effect.mapError((message) => new CliError({ message })))
    const venues = servedVenuesLayer({
      list: parseVenueList(
        Option.getOrUndefined(options.venues) ?? process.env["CROSSBOOK_VENUES"],
        registrationsWith(registrations)
      ),
      env: process.env,
      seed,
      simVenues: simCount,
      faults,
      registrations
    }).pipe(Layer.mapError((message) => new CliError({ message })))
    const services = Layer.provideMerge(
      matchingLayer(process.env, home),
      serverServices({
        seed,
        faults,
        venues,
        startingCash: Option.getOrElse(options.simCash, () => process.env["CROSSBOOK_SIM_CASH"] ?? "10000"),
        paperCash,
        gatherCommits: true,
        store: OrderStore.layerSql.pipe(Layer.provide(engineDatabase(dbFile))),
        auth: authLayer(controlFile)
      })
    )
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
    return yield* Layer.launch(
      HttpServeLive.pipe(HttpServer.withLogAddress, Layer.provide(afterBind), Layer.provide(tracingLayer(process.env)))
    )
  }).pipe(Effect.scoped)

/** `crossbook token create`: another owner token on a control database, its secret printed once. */
export const tokenCreate = (options: {
  readonly control: Option.Option<string>
  readonly name: string
  readonly json?: boolean
}) =>
  Effect.gen(function* () {
    // No home lock: this only inserts a token row, in one SQLite transaction, which is safe beside a running server
    // (and the way to give it another owner token); the server reads tokens from the database on each request.
    privateFiles()
    if (Option.isSome(options.control)) {
      const checked = databaseFile("--control", options.control.value)
      if (checked instanceof CliError) return yield* checked
    }
    const controlFile = Option.getOrElse(options.control, () => join(ensureHome(homeFolder()), "control.db"))
    const issued = yield* Effect.flatMap(Auth, (auth) =>
      auth.createOwnerToken(options.name, { method: "CLI", path: "token create" })
    ).pipe(Effect.provide(authLayer(controlFile)))
    if (options.json === true) {
      return yield* Console.log(JSON.stringify({ id: issued.record.id, control: controlFile, token: issued.token }))
    }
    yield* Console.log(`Owner token ${issued.record.id} on ${controlFile} (shown once):`)
    yield* Console.log(issued.token)
  })

/** `crossbook openapi`: the document the server publishes, on stdout or into a file. */
export const openapi = ({ out }: { readonly out: Option.Option<string> }) =>
  Effect.gen(function* () {
    const text = JSON.stringify(openApiDocument(), null, 2) + "\n"
    if (Option.isNone(out)) return yield* Console.log(text.trimEnd())
    const fs = yield* FileSystem.FileSystem
    yield* fs.writeFileString(out.value, text)
  })

/** `crossbook doctor`: checks of the home, its databases and each venue (`registrations` too), printed or as JSON. */
export const doctorCommand = (
  o: {
    readonly db: Option.Option<string>
    readonly control: Option.Option<string>
    readonly json: boolean
  },
  registrations: ReadonlyArray<VenueRegistration> = []
) =>
  Effect.gen(function* () {
    privateFiles()
    const home = homeFolder()
    const report = yield* doctor({
      home,
      dbFile: Option.getOrElse(o.db, () => join(home, "engine.db")),
      controlFile: Option.getOrElse(o.control, () => join(home, "control.db")),
      venues: registrationsWith(registrations)
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
