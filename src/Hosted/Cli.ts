/** `crossbook login`, `crossbook keys create|list|revoke` and `crossbook history book|trades|tape`: the data host's clients. */
import { Args, Command, Options } from "@effect/cli"
import * as Effect from "effect/Effect"

// The HTTP clients and the saved settings load when one of these commands runs, not with the command tree.
const run = Effect.promise(() => import("./Run.ts"))

const json = Options.boolean("json").pipe(Options.withDescription("One JSON document on stdout: the API's answer"))

export const loginCommand = Command.make(
  "login",
  {
    url: Options.text("url").pipe(Options.withDescription("The data host, e.g. http://127.0.0.1:8100")),
    code: Options.text("code").pipe(
      Options.withDescription("The one-time code from `crossbook data invite` (asked for when absent)"),
      Options.optional
    )
  },
  (o) => Effect.flatMap(run, (m) => m.runLogin(o))
).pipe(Command.withDescription("Sign in to a data host with a one-time code; saves the session in <home>/hosted.json"))

const keysCreate = Command.make(
  "create",
  {
    name: Options.text("name").pipe(Options.withDescription("A label for the key"), Options.withDefault("default")),
    json
  },
  (o) => Effect.flatMap(run, (m) => m.runKeysCreate(o))
).pipe(Command.withDescription("Create an API key with the saved session, print it once and save it for the clients"))

const keysList = Command.make("list", { json }, (o) => Effect.flatMap(run, (m) => m.runKeysList(o))).pipe(
  Command.withDescription("List your API keys on the data host (no secrets)")
)

const keysRevoke = Command.make("revoke", { json, id: Args.text({ name: "ID" }) }, (o) =>
  Effect.flatMap(run, (m) => m.runKeysRevoke(o))
).pipe(Command.withDescription("Revoke one of your API keys"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("API keys of the hosted services"),
  Command.withSubcommands([keysCreate, keysList, keysRevoke])
)

const at = Options.text("at").pipe(Options.withDescription("A time: ms since the epoch or ISO 8601"), Options.optional)
const from = Options.text("from").pipe(Options.withDescription("Start of the range (ms or ISO 8601)"), Options.optional)
const to = Options.text("to").pipe(Options.withDescription("End of the range (ms or ISO 8601)"), Options.optional)
const id = Args.text({ name: "ID" }).pipe(Args.withDescription("<venue>:<native_id>"))

const historyBook = Command.make(
  "book",
  {
    at,
    from,
    to,
    depth: Options.integer("depth").pipe(Options.withDescription("Levels per side (with --at)"), Options.optional),
    json,
    id
  },
  (o) => Effect.flatMap(run, (m) => m.runHistoryBook(o))
).pipe(Command.withDescription("The recorded book of a market at a time (--at), or its changes over a range"))

const historyTrades = Command.make("trades", { from, to, json, id }, (o) =>
  Effect.flatMap(run, (m) => m.runHistoryTrades(o))
).pipe(Command.withDescription("Recorded trades of a market over a range, with what the recording covers"))

const historyTape = Command.make(
  "tape",
  {
    from,
    to,
    out: Options.file("out").pipe(Options.withDescription("The tape file to write")),
    format: Options.choice("format", ["ndjson", "arrow"]).pipe(
      Options.withDescription(
        "The tape's format (default: arrow for a file named .arrow, .feather or .ipc, else ndjson)"
      ),
      Options.optional
    ),
    json,
    id
  },
  (o) => Effect.flatMap(run, (m) => m.runHistoryTape(o))
).pipe(
  Command.withDescription("Write a market's recorded history as a tape (sim/TAPES.md) for `sim replay` and `backtest`")
)

export const historyCommand = Command.make("history").pipe(
  Command.withDescription("Recorded books and trades from the data host (SERVICE_DATA_URL, SERVICE_API_KEY)"),
  Command.withSubcommands([historyBook, historyTrades, historyTape])
)
