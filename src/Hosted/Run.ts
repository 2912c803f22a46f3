/** What `crossbook login`, `crossbook keys …` and `crossbook history …` do, loaded when one of them runs. */
import { NodeHttpClient } from "@effect/platform-node"
import { Console, Data, Effect, Option, Redacted } from "effect"
import { Prompt } from "@effect/cli"
import { writeFileSync } from "node:fs"
import { ensureHome, homeFolder, privateFiles } from "../Home.ts"
import { Tapes } from "../Data/Tapes.ts"
import { HistoryClient, type HistoryError } from "../Services/HistoryClient.ts"
import { apiKey, apiKeyFile, dataUrl, readHosted, writeApiKey, writeHosted } from "../Services/HostedConfig.ts"

/** A failure the user can act on: one sentence on stderr, exit status 1. */
export class HostedError extends Data.TaggedError("HostedError")<{ readonly message: string }> {}

/** One call to the data host with a bearer secret; its error body becomes a sentence. */
const hostCall = (url: string, method: string, path: string, bearer: string | undefined, body?: unknown) =>
  Effect.gen(function* () {
    const response = yield* Effect.tryPromise({
      try: (signal) =>
        fetch(`${url}${path}`, {
          method,
          signal: AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
          headers: {
            ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
            ...(body === undefined ? {} : { "content-type": "application/json" })
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }),
      catch: (error) => {
        let cause: unknown = error
        while (cause instanceof Error && cause.cause !== undefined) cause = cause.cause
        const code = (cause as { code?: string } | undefined)?.code ?? String(cause)
        return new HostedError({
          message: `cannot reach the data host at ${url} (${code}): check the URL, or start it with \`crossbook data serve\``
        })
      }
    })
    const text = yield* Effect.promise(() => response.text())
    let parsed: any = undefined
    try {
      parsed = JSON.parse(text)
    } catch {
      // said below
    }
    if (response.ok && parsed !== undefined) return parsed as Record<string, any>
    const error = parsed?.error
    if (error?.code !== undefined) {
      return yield* new HostedError({
        message: `${method} ${path} answered ${response.status} ${error.code}: ${error.message}`
      })
    }
    return yield* new HostedError({
      message:
        response.status === 404
          ? `no data service at ${url}: ${path} answered 404 without the service's error body`
          : `${method} ${path} answered ${response.status} ${text.slice(0, 120)}`.trim()
    })
  })

const home = () => {
  privateFiles()
  return ensureHome(homeFolder())
}

/** The saved session, or a sentence saying how to get one. */
const session = Effect.suspend(() => {
  const saved = readHosted(home())
  return saved === undefined
    ? Effect.fail(new HostedError({ message: "not logged in: run `crossbook login --url <data_url>` first" }))
    : Effect.succeed(saved)
})

/** A time as ms since the epoch, or an ISO 8601 date. */
export const parseTime = (text: string, what: string): Effect.Effect<number, HostedError> => {
  const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text)
  return Number.isSafeInteger(ms) && ms >= 0
    ? Effect.succeed(ms)
    : Effect.fail(new HostedError({ message: `${what} '${text}' is neither ms since the epoch nor an ISO 8601 date` }))
}

/** The client from the settings; a missing key is said before any call. */
const historyClient = <A, R>(use: (client: HistoryClient["Type"]) => Effect.Effect<A, HistoryError | HostedError, R>) =>
  Effect.gen(function* () {
    const folder = home()
    const key = apiKey(folder)
    if (key === undefined) {
      return yield* new HostedError({
        message:
          "no API key: run `crossbook login --url <data_url>`, then `crossbook keys create`; or set SERVICE_API_KEY"
      })
    }
    // The client lives as long as the command's use of it: its connections close after.
    return yield* Effect.flatMap(HistoryClient, use).pipe(
      Effect.provide(HistoryClient.layer({ url: dataUrl(folder), apiKey: key })),
      Effect.provide(NodeHttpClient.layerUndici)
    )
  }).pipe(Effect.mapError((e) => (e._tag === "HistoryError" ? new HostedError({ message: e.message }) : e)))

const range = (o: { readonly from: Option.Option<string>; readonly to: Option.Option<string> }) =>
  Option.isNone(o.from) || Option.isNone(o.to)
    ? Effect.fail(new HostedError({ message: "give --from and --to (or --at)" }))
    : Effect.all([parseTime(o.from.value, "--from"), parseTime(o.to.value, "--to")])

const levelsText = (levels: ReadonlyArray<{ readonly price: string; readonly size: string }>) =>
  levels.map((l) => `${l.price}x${l.size}`).join(" ") || "-"

/** `crossbook login`: a session from a one-time code, saved in hosted.json. */
export const runLogin = (o: { readonly url: string; readonly code: Option.Option<string> }) =>
  Effect.gen(function* () {
    const url = o.url.replace(/\/+$/, "")
    const code = Option.isSome(o.code)
      ? o.code.value
      : Redacted.value(yield* Prompt.password({ message: "One-time code" }))
    const answer = yield* hostCall(url, "POST", "/v1/login", undefined, { code: code.trim() })
    writeHosted(home(), { url, session: String(answer["session"]) })
    yield* Console.log(`logged in to ${url} as ${answer["user"]}; next: \`crossbook keys create\``)
  })

/** `crossbook keys create`: a new key, printed once and saved for the clients. */
export const runKeysCreate = (o: { readonly name: string; readonly json: boolean }) =>
  Effect.gen(function* () {
    const saved = yield* session
    const answer = yield* hostCall(saved.url, "POST", "/v1/keys", saved.session, { name: o.name })
    writeApiKey(home(), String(answer["key"]))
    if (o.json) return yield* Console.log(JSON.stringify(answer))
    yield* Console.log(
      `API key ${answer["record"]["id"]} (shown once; saved in ${apiKeyFile(home())} for the clients):`
    )
    yield* Console.log(String(answer["key"]))
  })

/** `crossbook keys list`: the user's keys, without secrets. */
export const runKeysList = (o: { readonly json: boolean }) =>
  Effect.gen(function* () {
    const saved = yield* session
    const answer = yield* hostCall(saved.url, "GET", "/v1/keys", saved.session)
    if (o.json) return yield* Console.log(JSON.stringify(answer))
    for (const k of answer["data"] as Array<Record<string, unknown>>) {
      yield* Console.log(`${k["id"]}  ${k["prefix"]}  ${k["name"]}  ${k["revoked_at"] === null ? "active" : "revoked"}`)
    }
  })

/** `crossbook keys revoke ID`. */
export const runKeysRevoke = (o: { readonly json: boolean; readonly id: string }) =>
  Effect.gen(function* () {
    const saved = yield* session
    const answer = yield* hostCall(saved.url, "DELETE", `/v1/keys/${encodeURIComponent(o.id)}`, saved.session)
    if (o.json) return yield* Console.log(JSON.stringify(answer))
    yield* Console.log(`revoked ${answer["id"]}`)
  })

interface RangeOptions {
  readonly from: Option.Option<string>
  readonly to: Option.Option<string>
  readonly json: boolean
  readonly id: string
}

/** A time of the data host (ms since the epoch) as a person reads it: ISO 8601, UTC; `--json` keeps the ms. */
export const iso = (ms: number): string => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms))

/** `crossbook history book`: the book at a time, or its segments over a range. */
export const runHistoryBook = (
  o: RangeOptions & { readonly at: Option.Option<string>; readonly depth: Option.Option<number> }
) =>
  historyClient((client) =>
    Effect.gen(function* () {
      if (Option.isSome(o.at)) {
        const asOf = yield* parseTime(o.at.value, "--at")
        const depth = Option.getOrUndefined(o.depth)
        const answer = yield* client.bookAt({
          market_id: o.id,
          as_of_ms: asOf,
          ...(depth === undefined ? {} : { depth })
        })
        if (o.json) return yield* Console.log(JSON.stringify(answer))
        if (answer.book === null) return yield* Console.log(`no book at ${iso(asOf)}: ${answer.absence_reason}`)
        yield* Console.log(`bids ${levelsText(answer.book.bids)}`)
        return yield* Console.log(`asks ${levelsText(answer.book.asks)}`)
      }
      const [start, end] = yield* range(o)
      const segments: Array<any> = []
      let metadata: unknown
      let cursor: string | undefined
      do {
        const page = yield* client.bookRange({
          market_id: o.id,
          start_ms: start,
          end_ms: end,
          ...(cursor === undefined ? {} : { cursor })
        })
        metadata ??= page.metadata
        segments.push(...page.segments)
        cursor = page.next_cursor ?? undefined
      } while (cursor !== undefined)
      if (o.json) {
        return yield* Console.log(JSON.stringify({ metadata, market_id: o.id, segments, next_cursor: null }))
      }
      for (const s of segments) {
        yield* Console.log(
          s.kind === "data"
            ? `data   ${iso(s.start_ms)}..${iso(s.end_ms)}  ${s.changes.length} changes`
            : `absent ${iso(s.start_ms)}..${iso(s.end_ms)}  ${s.reason}`
        )
      }
    })
  )

/** `crossbook history trades`: recorded trades over a range, with what the recording covers. */
export const runHistoryTrades = (o: RangeOptions) =>
  historyClient((client) =>
    Effect.gen(function* () {
      const [start, end] = yield* range(o)
      const trades: Array<any> = []
      let first: any
      let cursor: string | undefined
      do {
        const page = yield* client.tradesRange({
          market_id: o.id,
          start_ms: start,
          end_ms: end,
          ...(cursor === undefined ? {} : { cursor })
        })
        first ??= page
        trades.push(...page.trades)
        cursor = page.next_cursor ?? undefined
      } while (cursor !== undefined)
      if (o.json) return yield* Console.log(JSON.stringify({ ...first, trades, next_cursor: null }))
      for (const t of trades) yield* Console.log(`${iso(t.ts)}  ${t.taker_side.padEnd(4)}  ${t.amount} @ ${t.price}`)
      for (const c of first.coverage)
        if (c.kind === "absent") yield* Console.log(`absent ${iso(c.start_ms)}..${iso(c.end_ms)}  ${c.reason}`)
    })
  )

/** `crossbook history tape`: a market's recorded history written as a tape. */
export const runHistoryTape = (
  o: RangeOptions & { readonly out: string; readonly format?: Option.Option<"ndjson" | "arrow"> }
) =>
  historyClient((client) =>
    Effect.gen(function* () {
      const [start, end] = yield* range(o)
      const tapes = yield* Tapes
      const tape = yield* tapes
        .tapeFromHistory(client, o.id, start, end)
        .pipe(Effect.catchTag("TapesUnavailable", (error) => new HostedError({ message: error.message })))
      const format = Option.getOrElse(o.format ?? Option.none(), () =>
        /\.(arrow|feather|ipc)$/i.test(o.out) ? "arrow" : "ndjson"
      )
      if (format === "arrow") {
        const bytes = yield* tapes
          .arrowOf(tape.text)
          .pipe(Effect.mapError((error) => new HostedError({ message: error.message })))
        writeFileSync(o.out, bytes)
      } else writeFileSync(o.out, tape.text)
      if (o.json)
        return yield* Console.log(JSON.stringify({ market_id: o.id, out: o.out, events: tape.events, format }))
      yield* Console.log(`wrote ${tape.events} events of ${o.id} to ${o.out}`)
    })
  )

/** A market's recorded range as tape text, read through the history client (a sweep's `{market_id, from, to}` tape). */
export const historyTapeText = (marketId: string, from: string, to: string) =>
  historyClient((client) =>
    Effect.gen(function* () {
      const start = yield* parseTime(from, "from")
      const end = yield* parseTime(to, "to")
      const tapes = yield* Tapes
      const tape = yield* tapes
        .tapeFromHistory(client, marketId, start, end)
        .pipe(Effect.catchTag("TapesUnavailable", (error) => new HostedError({ message: error.message })))
      return tape.text
    })
  )
