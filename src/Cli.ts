/** The command tree of `crossbook`. */
import { Args, Command, Options, ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Logger from "effect/Logger"
import * as Option from "effect/Option"
import { stripVTControlCharacters } from "node:util"
import { accessToken, serviceUrl } from "./Client.ts"
import { CliError, oneLine } from "./CliError.ts"
import { type CommandSpec, commandSpec, renderHelp, resolveCommand, unknownCommand } from "./CliHelp.ts"
import { HomeLocked, homeFolder } from "./Home.ts"
import { matchCommand } from "./Matching/Cli.ts"
import { dataCommand, recordCommand } from "./Data/Cli.ts"
import { Tapes } from "./Data/Tapes.ts"
import { historyCommand, keysCommand, loginCommand } from "./Hosted/Cli.ts"
import type * as Layer from "effect/Layer"
import { NAME, VERSION } from "./Version.ts"
import { BUILT_IN_VENUES, DEFAULT_VENUES, registrationsWith } from "./Venues/BuiltIn.ts"
import type { VenueRegistration } from "./Venues/Registration.ts"

export { CliError, oneLine } from "./CliError.ts"

/** The modules that build the server, loaded by the commands that run it (not by `--help` or the client commands). */
const stack = Effect.promise(() => import("./Stack.ts"))

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
const paperCash = Options.text("paper-cash").pipe(
  Options.withDescription(
    "Cash each paper account (<venue>:paper) starts with (default $CROSSBOOK_PAPER_CASH or 10000)"
  ),
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
const simVenueCount = Options.integer("sim-venues").pipe(
  Options.withDescription(
    "Run the embedded sim as this many venues, sim, sim2, …, listing some of the same propositions (default $CROSSBOOK_SIM_VENUES or 1)"
  ),
  Options.optional
)
const venueList = Options.text("venues").pipe(
  Options.withDescription(`Venues to serve, a comma list (default $CROSSBOOK_VENUES or ${DEFAULT_VENUES.join(",")})`),
  Options.optional
)

const json = Options.boolean("json").pipe(Options.withDescription("Print the answer as JSON"))

/** `crossbook serve`, serving `registrations` beside the built-in venues. */
const serveCommand = (registrations: ReadonlyArray<VenueRegistration>) =>
  Command.make(
    "serve",
    {
      host,
      port,
      db,
      control,
      envFile,
      simSeed,
      simCash,
      paperCash,
      simFaults,
      simVenues: simVenueCount,
      venues: venueList
    },
    (options) => Effect.flatMap(stack, (m) => m.serve(options, registrations))
  ).pipe(Command.withDescription("Run the trading server (embedded sim venue, SQLite under the home folder)"))

const tokenCreate = Command.make(
  "create",
  {
    control,
    name: Options.text("name").pipe(Options.withDescription("A label for the token"), Options.withDefault("owner")),
    json
  },
  (options) => Effect.flatMap(stack, (m) => m.tokenCreate(options))
).pipe(Command.withDescription("Create another owner token on a control database; the secret is shown once"))

const token = Command.make("token").pipe(
  Command.withDescription("Access tokens"),
  Command.withSubcommands([tokenCreate])
)

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
 * Calls a /trading route of the server at SERVICE_URL with the client's token and prints the answer on stdout as
 * `render` shows it (JSON by default); an error answer becomes one sentence on stderr (its code and message) and a
 * failure.
 */
const callServer = (
  method: string,
  path: string,
  body?: unknown,
  render: (answer: unknown) => string = (answer) => JSON.stringify(answer)
) =>
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
    if (response.ok) {
      let answer: unknown
      try {
        answer = JSON.parse(text)
      } catch {
        return yield* Console.log(text)
      }
      return yield* Console.log(render(answer))
    }
    let detail = text.slice(0, 200)
    try {
      const parsed = JSON.parse(text) as { error?: { code?: string; message?: string } }
      if (parsed.error?.code !== undefined) detail = `${parsed.error.code}: ${parsed.error.message ?? ""}`
    } catch {
      // not our error body: the start of the text says what it is
    }
    return yield* new CliError({ message: `${method} ${path} answered ${response.status} ${detail}`.trim() })
  })

/** An API time (ms since the epoch) as ISO 8601, the way a person reads it; anything else as it is. */
export const isoTime = (value: unknown): string =>
  typeof value === "number" && Number.isFinite(value)
    ? new Date(value).toISOString()
    : value == null
      ? ""
      : String(value)

/** Rows as a plain table: a header, then columns padded to their widest cell (the last left unpadded). */
export const textTable = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

const ORDER_COLUMNS = ["ID", "MARKET", "SIDE", "TYPE", "PRICE", "AMOUNT", "FILLED", "STATUS", "CREATED"] as const

/** Orders (API records) as a table, one a row. */
export const ordersTable = (orders: ReadonlyArray<Record<string, unknown>>): string =>
  orders.length === 0
    ? "no orders"
    : textTable(
        ORDER_COLUMNS,
        orders.map((o) => [
          String(o["id"] ?? ""),
          String(o["market_id"] ?? ""),
          String(o["side"] ?? ""),
          String(o["type"] ?? ""),
          String(o["price"] ?? "-"),
          String(o["amount"] ?? ""),
          String(o["filled"] ?? ""),
          String(o["status"] ?? ""),
          isoTime(o["created_at"])
        ])
      )

const asOrders = (answer: unknown): ReadonlyArray<Record<string, unknown>> => {
  const data = (answer as { data?: unknown }).data
  return Array.isArray(data) ? (data as Array<Record<string, unknown>>) : [answer as Record<string, unknown>]
}

/** The account an order command concerns (`sim:paper`, say); the server's own account when not given. */
const orderAccount = Options.text("account").pipe(
  Options.withDescription("<venue>:<name>, e.g. sim:paper (default: the server's only account that is not paper)"),
  Options.optional
)

const ordersList = Command.make(
  "list",
  {
    status: Options.text("status").pipe(
      Options.withDescription("Comma list of statuses, or all (default: the live ones)"),
      Options.optional
    ),
    market: Options.text("market").pipe(Options.withDescription("Only this market id"), Options.optional),
    account: orderAccount,
    limit: Options.integer("limit").pipe(
      Options.withDescription("At most this many, 1 to 1000"),
      Options.withDefault(100)
    ),
    json
  },
  (o) => {
    const query = new URLSearchParams({ limit: String(o.limit) })
    if (Option.isSome(o.account)) query.set("account", o.account.value)
    if (Option.isSome(o.status)) query.set("status", o.status.value)
    if (Option.isSome(o.market)) query.set("market_id", o.market.value)
    return callServer("GET", `/trading/orders?${query}`, undefined, (answer) =>
      o.json ? JSON.stringify(answer) : ordersTable(asOrders(answer))
    )
  }
).pipe(Command.withDescription("List orders, newest first"))

const ordersPlace = Command.make(
  "place",
  {
    market: Options.text("market").pipe(Options.withDescription("<venue>:<native_id>")),
    side: Options.choice("side", ["buy", "sell"]).pipe(Options.withDescription("buy is YES, sell is NO")),
    amount: Options.text("amount").pipe(Options.withDescription("Contracts, a multiple of the market's lot")),
    price: Options.text("price").pipe(Options.withDescription("Limit price, or a market order's protection")),
    type: Options.choice("type", ["limit", "market"]).pipe(
      Options.withDescription("Order type"),
      Options.withDefault("limit" as const)
    ),
    tif: Options.choice("tif", ["gtc", "gtd", "ioc", "fok"]).pipe(
      Options.withDescription("Time in force (default gtc; a market order ioc)"),
      Options.optional
    ),
    clientOrderId: Options.text("client-order-id").pipe(
      Options.withDescription("Your id for the order: a retry with it places it once"),
      Options.optional
    ),
    account: orderAccount,
    json
  },
  (o) =>
    callServer(
      "POST",
      "/trading/orders",
      {
        ...(Option.isSome(o.account) ? { account: o.account.value } : {}),
        market_id: o.market,
        side: o.side,
        amount: o.amount,
        price: o.price,
        type: o.type,
        ...(Option.isSome(o.tif) ? { time_in_force: o.tif.value } : {}),
        ...(Option.isSome(o.clientOrderId) ? { client_order_id: o.clientOrderId.value } : {})
      },
      (answer) => (o.json ? JSON.stringify(answer) : ordersTable(asOrders(answer)))
    )
).pipe(Command.withDescription("Place a plain order"))

const ordersCancel = Command.make(
  "cancel",
  { id: Args.text({ name: "ID" }).pipe(Args.withDescription("The order's id")), account: orderAccount, json },
  (o) =>
    callServer(
      "DELETE",
      `/trading/orders/${encodeURIComponent(o.id)}${Option.isSome(o.account) ? `?account=${encodeURIComponent(o.account.value)}` : ""}`,
      undefined,
      (answer) => (o.json ? JSON.stringify(answer) : ordersTable(asOrders(answer)))
    )
).pipe(Command.withDescription("Cancel an order"))

const orders = Command.make("orders").pipe(
  Command.withDescription("Orders on the server at SERVICE_URL"),
  Command.withSubcommands([ordersList, ordersPlace, ordersCancel])
)

const me = Command.make("me", {}, () =>
  callServer("GET", "/trading/me", undefined, (answer) => JSON.stringify(answer, null, 2))
).pipe(Command.withDescription("Who the access token speaks for, and its permissions per account"))

const openapi = Command.make(
  "openapi",
  { out: Options.file("out").pipe(Options.withDescription("Write to this file instead of stdout"), Options.optional) },
  (options) => Effect.flatMap(stack, (m) => m.openapi(options))
).pipe(Command.withDescription("Print the OpenAPI document the server publishes"))

/** `crossbook doctor`, checking `registrations` beside the built-in venues. */
const doctorCommand = (registrations: ReadonlyArray<VenueRegistration>) =>
  Command.make(
    "doctor",
    {
      db,
      control,
      json: Options.boolean("json").pipe(Options.withDescription("One JSON document on stdout"))
    },
    (options) => Effect.flatMap(stack, (m) => m.doctorCommand(options, registrations))
  ).pipe(
    Command.withDescription(
      "Check the home, its lock and databases (modes, integrity), and each venue: reachable, credentials present, clock skew"
    )
  )

/**
 * The command tree, with the commands that live outside `src/` (simulation, backtests) added by the entry point, and
 * the venues it registers beside the built-in ones (served by `serve`, checked by `doctor`).
 */
export const rootCommand = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(
  extra: Extra,
  registrations: ReadonlyArray<VenueRegistration> = []
) =>
  Command.make(NAME).pipe(
    Command.withDescription("Self-hosted trading server for prediction markets"),
    Command.withSubcommands([
      serveCommand(registrations),
      token,
      me,
      orders,
      openapi,
      doctorCommand(registrations),
      matchCommand,
      dataCommand,
      recordCommand,
      loginCommand,
      keysCommand,
      historyCommand,
      ...extra
    ])
  )

/** The command line's runner over the command tree. */
export const makeCli = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(
  extra: Extra,
  registrations: ReadonlyArray<VenueRegistration> = []
) => Command.run(rootCommand(extra, registrations), { name: NAME, version: VERSION })

/**
 * Colour only for a terminal, never when `NO_COLOR` is set (https://no-color.org), and always when `FORCE_COLOR` is
 * (not `0`). `bin/crossbook.js` decides the same way for the help pages it answers itself.
 */
export const colourFor = (stream: { readonly isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean => {
  if ((env["NO_COLOR"] ?? "") !== "") return false
  const force = env["FORCE_COLOR"] ?? ""
  if (force !== "" && force !== "0") return true
  return stream.isTTY === true && env["TERM"] !== "dumb"
}

/** Strips terminal escapes from everything written to a stream that must stay plain (a pipe, a file, NO_COLOR). */
const plainStream = (stream: NodeJS.WriteStream): void => {
  const write = stream.write.bind(stream) as (...args: Array<unknown>) => boolean
  stream.write = ((chunk: unknown, ...rest: Array<unknown>) =>
    write(typeof chunk === "string" ? stripVTControlCharacters(chunk) : chunk, ...rest)) as typeof stream.write
}

/**
 * How a failed command ends (docs/cli.md): one sentence on stderr and exit status 1; a usage error (explained by the
 * parser on stderr, or a path on the command line that cannot be used) 2; a bug 70 with its trace only when
 * `CROSSBOOK_DEBUG` is set.
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
      return error instanceof CliError ? (error.exitCode ?? 1) : 1
    }
    const defect = Cause.squash(cause)
    process.stderr.write(
      `${NAME}: internal error: ${oneLine(defect)}` +
        (process.env["CROSSBOOK_DEBUG"] ? `\n${Cause.pretty(cause)}\n` : " (set CROSSBOOK_DEBUG=1 for the trace)\n")
    )
    return 70
  })

/**
 * What the command line answers before the parser runs: a help page (`--help`, or a group named without one of its
 * commands) on stdout, exit 0; a word that is none of a group's commands on stderr with the nearest names, exit 2.
 * Undefined when the command should run.
 */
export const answerWithoutRunning = (
  root: CommandSpec,
  args: ReadonlyArray<string>,
  colour: boolean,
  venues: ReadonlyArray<VenueRegistration> = BUILT_IN_VENUES
): number | undefined => {
  const end = args.indexOf("--")
  const own = end < 0 ? args : args.slice(0, end)
  const unknown = unknownCommand(root, own)
  if (unknown !== undefined) {
    process.stderr.write(unknown)
    return 2
  }
  const words = own.filter((a) => !a.startsWith("-"))
  const { spec } = resolveCommand(root, words)
  const wantsHelp = own.includes("--help") || own.includes("-h")
  const bareGroup =
    spec.commands.length > 0 &&
    spec.flags.length === 0 &&
    spec.args.length === 0 &&
    own.every((a) => !a.startsWith("-"))
  if (!wantsHelp && !bareGroup) return undefined
  // A word past the command's own (an argument) does not change which page is shown.
  process.stdout.write(renderHelp(root, spec, colour, venues))
  return 0
}

/** Runs the command line on Node: plain output where colour does not belong, errors as sentences, exit statuses. */
export const runCli = <const Extra extends ReadonlyArray<Command.Command<any, any, any, any>>>(
  extra: Extra,
  argv: ReadonlyArray<string> = process.argv,
  /** How the data host's commands read and write tapes: the simulator's format, given by the entry point that has it. */
  tapes: Layer.Layer<Tapes> = Tapes.unavailable,
  /** Venues served (and checked, and listed in help) beside the built-in ones. */
  registrations: ReadonlyArray<VenueRegistration> = []
): void => {
  const colour = colourFor(process.stdout)
  if (!colour) plainStream(process.stdout)
  if (!colourFor(process.stderr)) plainStream(process.stderr)
  const early = answerWithoutRunning(
    commandSpec(rootCommand(extra, registrations)),
    argv.slice(2),
    colour,
    registrationsWith(registrations)
  )
  if (early !== undefined) {
    process.exitCode = early
    return
  }
  const program = makeCli(
    extra,
    registrations
  )(argv).pipe(
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
