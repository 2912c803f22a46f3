/** Polymarket's data side: the YES token's book (streamed while watched, else read), trades, and the market channel. */
import { Effect, type Scope } from "effect"
import * as F from "../../Domain/Fixed.ts"
import type { Book, Trade } from "../../Domain/Market.ts"
import type { VenueError } from "../../Services/VenueGateway.ts"
import type { PolymarketCatalog } from "./Catalog.ts"
import type { Channels } from "./Channels.ts"
import type { PolymarketRest } from "./Rest.ts"
import type { PolymarketConfig } from "./Settings.ts"
import { type MarketBooks, marketSubscription, parseMarketFrame, runChannel } from "./Stream.ts"
import { ClobBook, DataTrades, toBook, toTrade } from "./Wire.ts"

/** What the data side needs: the REST client, the settings, the catalog, the books kept per token, the channels. */
export interface DataDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly catalog: PolymarketCatalog
  readonly books: MarketBooks
  readonly channels: Channels
}

/** Builds the data side of one venue. */
export const makePolymarketData = ({ rest, config, catalog, books, channels }: DataDeps) => {
  const { requireMarket } = catalog
  const { tracked, publish, options: channelOptions } = channels
  const nowMs = channelOptions.now
  /** How many open watches stream each YES token. */
  const streamed = new Map<string, number>()

  const book = (nativeId: string): Effect.Effect<Book, VenueError> =>
    Effect.gen(function* () {
      const m = yield* requireMarket(nativeId)
      const live = streamed.has(m.yesToken) ? books.book(m.yesToken) : undefined
      if (live !== undefined) return live.toBook()
      const raw = yield* rest.json(
        { family: "book", host: "clob", method: "GET", path: `/book?token_id=${m.yesToken}` },
        ClobBook
      )
      return toBook(raw, m)
    })

  const trades = (nativeId: string): Effect.Effect<ReadonlyArray<Trade>, VenueError> =>
    Effect.gen(function* () {
      const m = yield* requireMarket(nativeId)
      const rows = yield* rest.json(
        { family: "data", host: "data", method: "GET", path: `/trades?market=${m.nativeId}&limit=100` },
        DataTrades
      )
      return rows.flatMap((t) => toTrade(t, m) ?? []).sort((a, b) => b.ts - a.ts)
    })

  let watches = 0
  /** Streams the YES books of these markets into the event queue, for as long as the scope lasts. */
  const watch = (nativeIds: ReadonlyArray<string>): Effect.Effect<void, VenueError, Scope.Scope> =>
    Effect.gen(function* () {
      const ms = yield* Effect.forEach(nativeIds, requireMarket)
      const byToken = new Map(ms.map((m) => [m.yesToken, m.nativeId]))
      for (const t of byToken.keys()) {
        streamed.set(t, (streamed.get(t) ?? 0) + 1)
      }
      // Let go, a token no other watch streams is read from REST again, never from a book left to go stale.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const t of byToken.keys()) {
            const n = streamed.get(t) ?? 0
            if (n > 1) streamed.set(t, n - 1)
            else {
              streamed.delete(t)
              books.books.delete(t)
            }
          }
        })
      )
      const channel = `market:${++watches}`
      yield* Effect.addFinalizer(() => Effect.sync(() => channels.drop(channel)))
      /** Set on a reopen: the first fresh snapshot after it says the stream resumed. */
      let reopened = false
      let opens = 0
      const handlers = tracked(
        channel,
        {
          onOpen: () => {
            if (opens++ > 0) reopened = true
            // this connection's books are trusted again only from the fresh snapshots it is about to send
            for (const t of byToken.keys()) books.books.delete(t)
            return marketSubscription([...byToken.keys()])
          },
          onFrame: (text) => {
            for (const msg of parseMarketFrame(text).messages) {
              for (const u of books.apply(msg)) {
                if (u._tag === "Resolved") {
                  const m = catalog.known(u.market)
                  if (m === undefined || !ms.some((x) => x.nativeId === m.nativeId)) continue
                  const payout = u.winner === m.yesToken ? F.ONE : F.ZERO
                  catalog.resolved({ ...m, status: "settled", result: payout === F.ONE ? "yes" : "no" })
                  publish({ _tag: "Settled", nativeId: m.nativeId, payout, ts: u.ts > 0 ? u.ts : nowMs() })
                  continue
                }
                const nativeId = byToken.get(u.assetId)
                if (u._tag === "Book" && nativeId !== undefined) {
                  if (reopened) {
                    reopened = false
                    publish({ _tag: "Stream", channel, state: "resumed", lastMessageAgeMs: null, ts: nowMs() })
                  }
                  publish({ _tag: "Book", nativeId, ts: u.ts })
                }
                // Only YES tokens are subscribed: their last trade is the YES price.
                if (u._tag === "Trade" && nativeId !== undefined) {
                  publish({ _tag: "Trade", nativeId, price: u.price, ts: u.ts })
                }
              }
            }
          },
          // a book the socket no longer keeps is read from REST until the fresh snapshots arrive
          onClose: () => {
            for (const t of byToken.keys()) books.books.delete(t)
          }
        },
        false
      )
      yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/market`, handlers, channelOptions)
    })

  return { book, trades, watch }
}
