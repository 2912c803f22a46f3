/**
 * The public market stream `GET /ws/markets?ids=<id,…>`: a snapshot of each book, then its changes and trades, each
 * frame with a per-connection seq. No token: it carries only what the market-data routes serve.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse, Socket } from "@effect/platform"
import { Context, Effect, Fiber, Queue } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import * as F from "../Domain/Fixed.ts"
import type { BookLevel } from "../Domain/Market.ts"
import { followBooks, newTrades, sideChanges, type WireLevel, wireLevel } from "../Services/MarketChanges.ts"
import { type Venue, type VenueError, VenueGateway } from "../Services/VenueGateway.ts"
import { fromVenueError, respond } from "./Errors.ts"
import { badHandshake, CLOSE_TOO_SLOW } from "./Events.ts"
import * as Id from "../Domain/Ids.ts"

/** How many book changes may wait for a slow reader before its socket is closed with 4408. */
export class MarketsQueueCapacity extends Context.Reference<MarketsQueueCapacity>()("crossbook/MarketsQueueCapacity", {
  defaultValue: () => 1000
}) {}

/** The close code when a venue fails while the socket streams its market. */
export const CLOSE_VENUE_ERROR = 1011

/** At most this many markets on one socket. */
export const MAX_STREAM_MARKETS = 100
/** Levels per side when `depth` is not given, as on `GET …/book`. */
export const DEFAULT_STREAM_DEPTH = 10
export const MAX_STREAM_DEPTH = 1000

export interface LevelChanges {
  readonly bids: ReadonlyArray<WireLevel>
  readonly asks: ReadonlyArray<WireLevel>
}

/** A market on the socket: what was last sent of its book and the newest trade seen. */
interface Watched {
  readonly marketId: string
  readonly venue: Venue
  readonly nativeId: string
  bids: ReadonlyArray<BookLevel>
  asks: ReadonlyArray<BookLevel>
  lastTradeId: string | undefined
}

/** The comma list of full market ids, each checked against its venue; the first refusal in list order wins. */
const resolveIds = (
  gateway: Context.Tag.Service<VenueGateway>,
  text: string | null
): Effect.Effect<ReadonlyArray<Watched>, ApiError> =>
  Effect.gen(function* () {
    const ids = [
      ...new Set(
        (text ?? "")
          .split(",")
          .map((id) => id.trim())
          .filter((id) => id.length > 0)
      )
    ]
    if (ids.length === 0) {
      return yield* Effect.fail(ApiError.field("ids", "give one or more market ids, e.g. ids=sim:<native_id>"))
    }
    if (ids.length > MAX_STREAM_MARKETS) {
      return yield* Effect.fail(
        ApiError.field("ids", `at most ${MAX_STREAM_MARKETS} markets on one socket; ${ids.length} given`)
      )
    }
    const out: Array<Watched> = []
    for (const id of ids) {
      const parts = Id.parseMarketId(id)
      if (parts === undefined) {
        return yield* Effect.fail(ApiError.field("ids", `'${id}' is not a full market id '<venue>:<native_id>'`))
      }
      const venueId = parts.venue
      const nativeId = parts.native
      const venue = gateway.venue(venueId)
      if (venue === undefined) {
        return yield* Effect.fail(
          ApiError.unknownVenue(
            venueId,
            gateway.venues.map((v) => v.info.id)
          )
        )
      }
      if (venue.info.has.fetch_order_book === false) {
        return yield* Effect.fail(
          new ApiError({
            status: 501,
            code: "not_supported",
            message: `venue '${venueId}' does not serve order books; read 'has' on GET /venues`,
            details: { venue: venueId, retryable: false, capability: "fetch_order_book" }
          })
        )
      }
      const market = yield* Effect.mapError(venue.market(nativeId), fromVenueError)
      if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(venueId, id))
      out.push({ marketId: id, venue, nativeId, bids: [], asks: [], lastTradeId: undefined })
    }
    return out
  })

const depthOf = (text: string | null): number | ApiError => {
  if (text === null) return DEFAULT_STREAM_DEPTH
  const n = /^\d+$/.test(text) ? Number(text) : NaN
  return n >= 1 && n <= MAX_STREAM_DEPTH
    ? n
    : ApiError.field("depth", `must be a whole number from 1 to ${MAX_STREAM_DEPTH} (levels per side)`)
}

export const MarketsRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    const capacity = yield* MarketsQueueCapacity
    yield* router.get(
      "/ws/markets",
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        // The ids first: a plain GET (curl, a browser's address bar) learns what is wrong with them, not only that
        // the route is a WebSocket.
        const url = new URL(request.url, "http://localhost")
        const depth = depthOf(url.searchParams.get("depth"))
        if (depth instanceof ApiError) return respond(depth)
        const resolved = yield* Effect.either(resolveIds(gateway, url.searchParams.get("ids")))
        if (resolved._tag === "Left") return respond(resolved.left)
        const handshake = badHandshake(request.method, request.headers)
        if (handshake !== undefined) return respond(handshake)
        const watched = resolved.right
        const byVenue = new Map<Venue, Map<string, Watched>>()
        for (const w of watched) {
          const markets = byVenue.get(w.venue) ?? new Map<string, Watched>()
          markets.set(w.nativeId, w)
          byVenue.set(w.venue, markets)
        }

        // Subscribe before the snapshots are read: a change made in between arrives as a change, never lost.
        const changed = yield* followBooks(byVenue, capacity)

        const socket = yield* request.upgrade
        const write = yield* socket.writer
        const reading = yield* Effect.fork(socket.runRaw(() => Effect.void))
        let seq = 0
        const send = (frame: Record<string, unknown>) => write(JSON.stringify({ seq: ++seq, ...frame }))

        const snapshot = (w: Watched) =>
          Effect.gen(function* () {
            const book = yield* w.venue.book(w.nativeId)
            const trades = w.venue.info.has.fetch_trades === false ? [] : yield* w.venue.trades(w.nativeId)
            w.bids = book.bids.slice(0, depth)
            w.asks = book.asks.slice(0, depth)
            w.lastTradeId = trades[0]?.id
            yield* send({
              ts: book.ts,
              type: "snapshot",
              market_id: w.marketId,
              bids: w.bids.map(wireLevel),
              asks: w.asks.map(wireLevel)
            })
          })

        /** What changed since the last frame of this market: its new trades, then the levels that moved. */
        const update = (w: Watched) =>
          Effect.gen(function* () {
            const book = yield* w.venue.book(w.nativeId)
            if (w.venue.info.has.fetch_trades !== false) {
              for (const t of newTrades(yield* w.venue.trades(w.nativeId), w.lastTradeId)) {
                yield* send({
                  ts: t.ts,
                  type: "trade",
                  market_id: w.marketId,
                  id: t.id,
                  price: F.format(t.price),
                  amount: F.format(t.amount),
                  taker_side: t.takerSide
                })
                w.lastTradeId = t.id
              }
            }
            const bids = book.bids.slice(0, depth)
            const asks = book.asks.slice(0, depth)
            const changes = { bids: sideChanges(w.bids, bids), asks: sideChanges(w.asks, asks) }
            w.bids = bids
            w.asks = asks
            if (changes.bids.length === 0 && changes.asks.length === 0) return
            yield* send({ ts: book.ts, type: "change", market_id: w.marketId, ...changes })
          })

        const stream = Effect.gen(function* () {
          for (const w of watched) yield* snapshot(w)
          for (;;) {
            const w = yield* Queue.take(changed.queue)
            if (changed.behind) {
              yield* write(new Socket.CloseEvent(CLOSE_TOO_SLOW, "fell behind; reconnect for a new snapshot"))
              return yield* Fiber.join(reading).pipe(Effect.ignore)
            }
            yield* update(w)
          }
        })
        // A venue that fails to answer ends the stream with 1011; the client reconnects for a new snapshot.
        const failed = (error: VenueError | Socket.SocketError) =>
          error._tag === "VenueError"
            ? write(new Socket.CloseEvent(CLOSE_VENUE_ERROR, `venue '${error.venue}' failed: ${error.kind}; reconnect`))
            : Effect.void
        yield* Effect.raceFirst(Effect.catchAll(stream, failed), Fiber.join(reading)).pipe(Effect.ignore)
        yield* Fiber.interrupt(reading)
        return HttpServerResponse.empty()
      }).pipe(Effect.scoped)
    )
  })
)
