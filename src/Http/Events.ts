/** The events socket `GET /trading/ws/events`: journal replay from `since`, then live frames, each with its seq. */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, Socket } from "@effect/platform"
import { Context, Effect, Either, Fiber, Queue, Stream } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { allows, Auth } from "../Services/Auth.ts"
import type { JournalEvent } from "../Services/OrderStore.ts"
import { defaultAccount, VenueGateway } from "../Services/VenueGateway.ts"
import { Telemetry } from "../Telemetry/Telemetry.ts"
import { Journal } from "../Trading/Journal.ts"
import { respond } from "./Errors.ts"
import { requestToken } from "./Security.ts"

/** How many live events may wait for a slow reader before its socket is closed with 4408. */
export class EventsQueueCapacity extends Context.Reference<EventsQueueCapacity>()("crossbook/EventsQueueCapacity", {
  defaultValue: () => 1000
}) {}

export const CLOSE_UNAUTHORIZED = 4401
export const CLOSE_FORBIDDEN = 4403
export const CLOSE_TOO_SLOW = 4408

/** `kinds=order,fill.new`: a prefix matches itself and every dotted kind below it. */
export const kindMatcher = (kinds: ReadonlyArray<string>) => (kind: string) =>
  kinds.length === 0 || kinds.some((k) => kind === k || kind.startsWith(`${k}.`))

const frame = (e: JournalEvent) =>
  JSON.stringify({ seq: e.seq, ts: e.ts, kind: e.kind, key: e.key, payload: e.payload })

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/

/**
 * What the WebSocket library would refuse with a plain-text answer, refused here first with the error body: a request
 * that is not an upgrade, or an upgrade with a bad key, version or subprotocol list.
 */
export const badHandshake = (
  method: string,
  headers: Readonly<Record<string, string | undefined>>
): ApiError | undefined => {
  const refuse = (field: string, message: string) =>
    ApiError.validation([{ field, message }], `this route is a WebSocket: ${message}`)
  if (method !== "GET") return refuse("method", "open it with GET and an upgrade to websocket")
  if (headers["upgrade"]?.trim().toLowerCase() !== "websocket") {
    return refuse("upgrade", "send 'Upgrade: websocket' and 'Connection: Upgrade'")
  }
  if (!/^[+/0-9A-Za-z]{22}==$/.test(headers["sec-websocket-key"] ?? "")) {
    return refuse("sec-websocket-key", "Sec-WebSocket-Key must be 16 random bytes in base64")
  }
  const version = headers["sec-websocket-version"]?.trim()
  if (version !== "13" && version !== "8") return refuse("sec-websocket-version", "Sec-WebSocket-Version must be 13")
  const protocols = headers["sec-websocket-protocol"]
  if (protocols !== undefined) {
    const names = protocols.split(",").map((p) => p.trim())
    if (names.some((p) => !TOKEN.test(p)) || new Set(names).size !== names.length) {
      return refuse("sec-websocket-protocol", "Sec-WebSocket-Protocol must be a comma list of distinct tokens")
    }
  }
  return undefined
}

export const EventsRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const journal = yield* Journal
    const gateway = yield* VenueGateway
    const capacity = yield* EventsQueueCapacity
    const metrics = yield* Telemetry
    yield* router.get(
      "/trading/ws/events",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const handshake = badHandshake(request.method, request.headers)
        if (handshake !== undefined) return respond(handshake)
        const url = new URL(request.url, "http://localhost")
        const sinceText = url.searchParams.get("since") ?? "0"
        if (!/^\d+$/.test(sinceText)) {
          return respond(ApiError.field("since", "must be a whole number, the last seq you saw"))
        }
        const matches = kindMatcher(
          (url.searchParams.get("kinds") ?? "")
            .split(",")
            .map((k) => k.trim())
            .filter((k) => k.length > 0)
        )
        const key = url.searchParams.get("key")
        const token = key !== null && key !== "" ? key : requestToken(request.headers)
        const principal = yield* Effect.either(
          typeof token === "string" ? auth.authenticate(token) : Effect.fail(token)
        )
        const socket = yield* request.upgrade
        const write = yield* socket.writer
        // Running the reading side opens the socket; it ends when the client goes away.
        const reading = yield* Effect.fork(socket.runRaw(() => Effect.void))
        if (Either.isLeft(principal)) {
          yield* write(new Socket.CloseEvent(CLOSE_UNAUTHORIZED, principal.left.message))
          yield* Fiber.join(reading).pipe(Effect.ignore)
          return HttpServerResponse.empty()
        }
        const account = defaultAccount(gateway.accounts)
        if (!allows(principal.right, "view", account)) {
          yield* write(new Socket.CloseEvent(CLOSE_FORBIDDEN, `this token lacks the 'view' permission on '${account}'`))
          yield* Fiber.join(reading).pipe(Effect.ignore)
          return HttpServerResponse.empty()
        }
        // Subscribe first, then replay: nothing appended in between is missed, and seqs already sent are skipped.
        const reader = yield* journal.reader(capacity)
        yield* Effect.acquireRelease(
          Effect.sync(() => metrics.eventsClients.inc()),
          () => Effect.sync(() => metrics.eventsClients.inc([], -1))
        )
        let last = Number(sinceText)
        const stream = Effect.gen(function* () {
          for (;;) {
            const batch = yield* journal.after(last, 500)
            if (batch.length === 0) break
            for (const event of batch) if (matches(event.kind)) yield* write(frame(event))
            last = batch[batch.length - 1]!.seq
          }
          for (;;) {
            const event = yield* Queue.take(reader.queue)
            if (reader.overflowed()) {
              yield* write(new Socket.CloseEvent(CLOSE_TOO_SLOW, `fell behind; reconnect with since=${last}`))
              return yield* Fiber.join(reading).pipe(Effect.ignore)
            }
            if (event.seq <= last) continue
            if (matches(event.kind)) yield* write(frame(event))
            last = event.seq
          }
        })
        // A token revoked, or its user's `view` on the account removed, closes the socket as a bad token would.
        const secret = token as string
        const revoked = auth.changes.pipe(
          Stream.mapEffect(() => Effect.either(auth.authenticate(secret))),
          Stream.filter((p) => Either.isLeft(p) || !allows(p.right, "view", account)),
          Stream.runHead,
          Effect.zipRight(
            write(new Socket.CloseEvent(CLOSE_UNAUTHORIZED, "the token was revoked or lost 'view' on the account"))
          ),
          Effect.zipRight(Fiber.join(reading))
        )
        yield* Effect.raceFirst(Effect.raceFirst(stream, Fiber.join(reading)), revoked).pipe(Effect.ignore)
        yield* Fiber.interrupt(reading)
        return HttpServerResponse.empty()
      }).pipe(Effect.scoped)
    )
  })
)
