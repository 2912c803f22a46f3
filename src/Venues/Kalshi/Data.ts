/** Kalshi's data side: books and trades, and the account's socket, whose messages it hands to the catalog and trading. */
import { Clock, Effect, Either, PubSub, Queue, type Scope } from "effect"
import type { Book, Trade } from "../../Domain/Market.ts"
import type { StreamStatus, VenueError, VenueEvent } from "../../Services/VenueGateway.ts"
import type { KalshiCatalog } from "./Catalog.ts"
import type { KalshiRest } from "./Rest.ts"
import type { KalshiConfig } from "./Settings.ts"
import { authHeaders } from "./Signing.ts"
import { connect, type StreamHandle, type StreamOutput } from "./Stream.ts"
import type { KalshiTrading } from "./Trading.ts"
import * as W from "./Wire.ts"

/** What the data side needs: the REST client, the settings, the event hub, and who the socket's news goes to. */
export interface DataDeps {
  readonly rest: KalshiRest
  readonly config: KalshiConfig
  readonly events: PubSub.PubSub<VenueEvent>
  readonly catalog: KalshiCatalog
  readonly trading: KalshiTrading
}

/** Kalshi's books, trades and socket of one venue. */
export interface KalshiData {
  readonly book: (ticker: string) => Effect.Effect<Book, VenueError>
  readonly trades: (ticker: string) => Effect.Effect<ReadonlyArray<Trade>, VenueError>
  /** Whether trades are streamed (a book read subscribes the market's deltas and trades on the socket). */
  readonly streamsTrades: boolean
  readonly streams: Effect.Effect<ReadonlyArray<StreamStatus>>
}

/**
 * Builds the data side. With credentials it opens the socket (one per account: the venue authenticates every
 * connection) for as long as the scope lasts; without, books and trades are read over REST.
 */
export const makeKalshiData = ({
  rest,
  config,
  events,
  catalog,
  trading
}: DataDeps): Effect.Effect<KalshiData, never, Scope.Scope> =>
  Effect.gen(function* () {
    const now = Clock.currentTimeMillis
    let stream: StreamHandle | undefined
    const wsPath = new URL(config.wsUrl).pathname
    const startedAt = yield* now
    let lastFillTs: number | undefined
    /** Since when the socket was not to be trusted (a drop, a silence), until it is back with fresh snapshots. */
    let lostAt: number | undefined
    let recovering = false

    const streamEvent = (state: "stale" | "resumed" | "resync") =>
      Effect.gen(function* () {
        const t = yield* now
        const status = stream === undefined ? undefined : yield* stream.status
        const last = status?.lastMessageAt ?? null
        yield* PubSub.publish(events, {
          _tag: "Stream",
          channel: "socket",
          state,
          lastMessageAgeMs: last === null ? null : Math.max(0, t - last),
          ts: t
        })
      })

    /** A `resync` for the desk, then what the venue did since `since` read back. */
    const reconcile = (since: number, why: string) =>
      Effect.gen(function* () {
        yield* Effect.logWarning(`kalshi: reading orders and fills back since ${since} (${why})`)
        yield* streamEvent("resync")
        yield* trading.readBack(since)
      })

    /** Where a read-back after an unreadable message starts: a second before the last fill seen, else the start. */
    const sinceLastFill = Effect.sync(() => Math.max(0, (lastFillTs ?? startedAt) - 1000))

    const resumed = Effect.suspend(() => {
      recovering = false
      return streamEvent("resumed")
    })

    if (config.credentials !== undefined) {
      const creds = config.credentials
      stream = yield* connect({
        url: config.wsUrl,
        headers: Effect.map(now, (t) => authHeaders(creds.keyId, creds.key, t, "GET", wsPath)),
        tickers: [],
        privateChannels: true,
        idleTimeout: `${config.streamIdleMs} millis`,
        yesPrice: config.yesPrice
      })
      const handle = stream
      const step = (o: StreamOutput) =>
        Effect.gen(function* () {
          switch (o._tag) {
            case "Book":
              yield* PubSub.publish(events, { _tag: "Book", nativeId: o.ticker, ts: o.book.ts })
              break
            case "Trade":
              yield* PubSub.publish(events, { _tag: "Trade", nativeId: o.ticker, price: o.trade.price, ts: o.trade.ts })
              break
            case "Fill":
              trading.sawFill(o.fill)
              lastFillTs = Math.max(lastFillTs ?? 0, o.fill.ts)
              yield* PubSub.publish(events, { _tag: "Fill", fill: o.fill })
              break
            case "Order":
              trading.sawOrder(o.order)
              yield* PubSub.publish(events, { _tag: "Order", order: o.order })
              break
            case "OrderUnknown": {
              // not terminal: the order is read again; while the venue cannot say, the desk reconciles
              const read = yield* Effect.either(trading.fetchOrder(o.orderId))
              if (Either.isRight(read)) yield* PubSub.publish(events, { _tag: "Order", order: read.right })
              else yield* reconcile(yield* sinceLastFill, `order ${o.orderId} in status unknown`)
              break
            }
            case "Gap":
              yield* Effect.logWarning(
                `kalshi: ${o.channel} (sid ${o.sid}) lost messages (expected seq ${o.expected}, got ${o.got})` +
                  (o.tickers.length > 0 ? `; fresh snapshots asked for ${o.tickers.join(", ")}` : "")
              )
              // a lost lifecycle message may have changed any market: every market is read again
              if (o.channel === "market_lifecycle_v2") yield* catalog.forgetAll
              break
            case "Stale":
              yield* Effect.logWarning(`kalshi: socket silent for ${o.silentMs} ms; reopening it`)
              lostAt ??= yield* now
              yield* streamEvent("stale")
              break
            case "Disconnected":
              lostAt ??= yield* now
              yield* Effect.logWarning(`kalshi: socket ${o.reason}; reconnecting in ${o.retryInMs} ms`)
              break
            case "Connected": {
              const since = lostAt
              lostAt = undefined
              if (o.attempt > 0 && since !== undefined) {
                recovering = true
                yield* reconcile(since - 1000, "the socket reopened")
                // without markets streamed there is no snapshot to wait for
                if ((yield* handle.markets).length === 0) yield* resumed
              }
              break
            }
            case "Fresh":
              if (recovering) yield* resumed
              break
            case "Lifecycle": {
              yield* catalog.marketChanged(o.ticker)
              if (o.event === "determined") {
                const payout = W.payoutOf(
                  o.result,
                  o.result === "yes" || o.result === "no" ? undefined : o.settlementValue
                )
                if (payout !== undefined) trading.resultDetermined(o.ticker, payout)
              }
              if (o.event === "settled") {
                const payout =
                  o.result !== undefined || o.settlementValue !== undefined
                    ? W.payoutOf(o.result, o.result === "yes" || o.result === "no" ? undefined : o.settlementValue)
                    : undefined
                yield* trading.settled(o.ticker, payout, o.ts)
              }
              break
            }
            case "FeeUpdate":
              catalog.eventFeesChanged(o.eventTicker)
              break
            case "Resubscribed":
              yield* Effect.logWarning(`kalshi: ${o.channel} ended with terminal error ${o.code}; subscribed again`)
              if ((["fill", "user_orders"] as ReadonlyArray<string>).includes(o.channel))
                yield* reconcile(yield* sinceLastFill, `${o.channel} was subscribed again`)
              break
            case "Unreadable":
              if (o.trading) {
                yield* Effect.logError(`kalshi: unreadable ${o.type} message: ${o.reason}`)
                yield* reconcile(yield* sinceLastFill, `an unreadable ${o.type} message`)
              }
              break
            case "VenueError":
              yield* Effect.logWarning(`kalshi: socket error ${String(o.code)}: ${o.message}`)
              break
            default:
              break
          }
        })
      yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(handle.outputs), step)))
    }

    const book = (ticker: string): Effect.Effect<Book, VenueError> =>
      Effect.gen(function* () {
        if (stream !== undefined) {
          const streamed = yield* stream.book(ticker)
          if (streamed !== undefined) return streamed
          yield* stream.addMarkets([ticker])
        }
        const r = yield* rest.orderbook(ticker)
        return W.toBook(r, yield* now)
      })

    const trades = (ticker: string): Effect.Effect<ReadonlyArray<Trade>, VenueError> =>
      Effect.map(rest.trades({ ticker, limit: 100 }), (r) =>
        r.trades.flatMap((t) => {
          const x = W.toTrade(t)
          return Either.isRight(x) ? [x.right] : []
        })
      )

    const socket = stream
    return {
      book,
      trades,
      streamsTrades: socket !== undefined,
      streams: socket === undefined ? Effect.succeed([]) : Effect.map(socket.status, (x) => [x])
    }
  })
