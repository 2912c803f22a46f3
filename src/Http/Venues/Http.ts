/** Handlers of the public market-data routes. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { ApiError } from "../../Domain/Errors.ts"
import * as F from "../../Domain/Fixed.ts"
import { type Book, type Market, type MarketQuote, mirrorBook, type Trade } from "../../Domain/Market.ts"
import { checkPageRequest, descendingKey, pageOf } from "../../Domain/Page.ts"
import { type CapabilityKey, type Venue, VenueGateway } from "../../Services/VenueGateway.ts"
import { Api } from "../Api.ts"
import { fromVenueError } from "../../Domain/VenueErrors.ts"
import { makeLocalMatcher } from "../../Matching/Local.ts"
import { MatchingClient, type MatchingError } from "../../Services/MatchingClient.ts"
import * as Id from "../../Domain/Ids.ts"

const venueRecord = (venue: Venue) => ({
  id: venue.info.id,
  name: venue.info.name,
  book_model: venue.info.book_model,
  has: venue.info.has
})

const midOf = (book: Book): F.Fixed | null => {
  const bid = book.bids[0]
  const ask = book.asks[0]
  return bid === undefined || ask === undefined ? null : F.div(F.add(bid.price, ask.price), F.fromInt(2))
}

export const marketRecord = (market: Market, book: Book | undefined, last: Trade | undefined) => ({
  id: `${market.venue}:${market.nativeId}`,
  venue: market.venue,
  native_id: market.nativeId,
  event_id: market.eventId,
  title: market.title,
  subtitle: market.subtitle,
  category: market.category,
  status: market.status,
  open_time: market.openTime,
  close_time: market.closeTime,
  tick_size: F.format(market.tick),
  lot_size: F.format(market.lot),
  best_bid: F.formatOrNull(book?.bids[0]?.price),
  best_ask: F.formatOrNull(book?.asks[0]?.price),
  last_price: F.formatOrNull(last?.price),
  result: market.result
})

/** A market's record from the quote its catalog carries. */
export const quotedRecord = (market: Market, quote: MarketQuote) => ({
  ...marketRecord(market, undefined, undefined),
  best_bid: F.formatOrNull(quote.bestBid),
  best_ask: F.formatOrNull(quote.bestAsk),
  last_price: F.formatOrNull(quote.last)
})

/** Relevance of a market to a search: every word must occur; title words weigh most. 0 = no match. */
export const relevance = (market: Market, words: ReadonlyArray<string>): number => {
  const title = market.title.toLowerCase()
  const rest = `${market.subtitle} ${market.nativeId} ${market.eventId} ${market.category}`.toLowerCase()
  let score = 0
  for (const word of words) {
    const inTitle = title.includes(word)
    if (!inTitle && !rest.includes(word)) return 0
    score += inTitle ? 3 : 1
    if (inTitle && new RegExp(`\\b${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\b`).test(title)) score += 2
  }
  return score
}

export const VenuesLive = HttpApiBuilder.group(Api, "venues", (handlers) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    // the server's matcher; without one given, the local matcher over these venues' catalogs
    const matching = Option.getOrElse(
      yield* Effect.serviceOption(MatchingClient),
      () => makeLocalMatcher(gateway).client
    )

    const venueOf = (id: string) => {
      const venue = gateway.venue(id)
      return venue === undefined
        ? Effect.fail(
            ApiError.unknownVenue(
              id,
              gateway.venues.map((v) => v.info.id)
            )
          )
        : Effect.succeed(venue)
    }

    const need = (venue: Venue, capability: CapabilityKey) =>
      venue.info.has[capability] === false
        ? Effect.fail(
            new ApiError({
              status: 501,
              code: "not_supported",
              message: `venue '${venue.info.id}' does not support ${capability}; read 'has' on GET /venues`,
              details: { venue: venue.info.id, retryable: false, capability }
            })
          )
        : Effect.void

    /** Accepts `<venue>:<native_id>` or the bare native id; an id of another venue is a 400. */
    const nativeIdOf = (venue: Venue, marketId: string) => {
      const id = Id.nativeIn(venue.info.id, marketId)
      return "native" in id
        ? Effect.succeed(id.native)
        : Effect.fail(
            ApiError.field("market_id", `'${marketId}' is an id of venue '${id.otherVenue}', not of '${venue.info.id}'`)
          )
    }

    const marketOf = (venueId: string, marketId: string) =>
      Effect.gen(function* () {
        const venue = yield* venueOf(venueId)
        const nativeId = yield* nativeIdOf(venue, marketId)
        const market = yield* Effect.mapError(venue.market(nativeId), fromVenueError)
        if (market === undefined) return yield* Effect.fail(ApiError.marketNotFound(venue.info.id, marketId))
        return { venue, market }
      })

    return handlers
      .handle("listVenues", () =>
        Effect.succeed({ data: gateway.venues.map(venueRecord), next_cursor: null, count: gateway.venues.length })
      )
      .handle("getVenue", ({ path }) => Effect.map(venueOf(path.venue), venueRecord))
      .handle("listMarkets", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const venue = yield* venueOf(path.venue)
          yield* need(venue, "fetch_markets")
          const search = (urlParams.search ?? urlParams.query ?? "").trim().toLowerCase()
          const status = urlParams.status ?? "open"
          const request = checkPageRequest(urlParams, { venue: venue.info.id, search, status })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const markets = yield* Effect.mapError(venue.markets, fromVenueError)
          const words = search.split(/\s+/).filter((w) => w.length > 0)
          const rows = markets
            .filter((m) => status === "all" || m.status === status)
            .map((market) => ({ market, score: words.length === 0 ? 0 : relevance(market, words) }))
            .filter((row) => words.length === 0 || row.score > 0)
          // Id order without a search; with one, best match first, ties in id order.
          const keyed = rows
            .map((row) => ({
              ...row,
              key: words.length === 0 ? row.market.nativeId : descendingKey(row.score, row.market.nativeId)
            }))
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
          const page = pageOf(
            keyed,
            (row) => row.key,
            request,
            (row) => row.market
          )
          const data = yield* Effect.forEach(page.data, (market) =>
            Effect.gen(function* () {
              // a venue whose catalog carries the quote answers a page with no request per row
              if (market.quote !== undefined) return quotedRecord(market, market.quote)
              const book = venue.info.has.fetch_order_book === false ? undefined : yield* venue.book(market.nativeId)
              const trades = venue.info.has.fetch_trades === false ? [] : yield* venue.trades(market.nativeId)
              return marketRecord(market, book, trades[0])
            }).pipe(Effect.mapError(fromVenueError))
          )
          return { ...page, data }
        })
      )
      .handle("getMarket", ({ path }) =>
        Effect.gen(function* () {
          const { venue, market } = yield* marketOf(path.venue, path.market_id)
          const book = venue.info.has.fetch_order_book === false ? undefined : yield* venue.book(market.nativeId)
          const trades = venue.info.has.fetch_trades === false ? [] : yield* venue.trades(market.nativeId)
          return marketRecord(market, book, trades[0])
        }).pipe(Effect.mapError((e) => (e instanceof ApiError ? e : fromVenueError(e))))
      )
      .handle("getBook", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { venue, market } = yield* marketOf(path.venue, path.market_id)
          yield* need(venue, "fetch_order_book")
          const yes = yield* Effect.mapError(venue.book(market.nativeId), fromVenueError)
          const side = urlParams.side ?? "yes"
          const depth = urlParams.depth ?? 10
          const book = side === "yes" ? yes : mirrorBook(yes, F.ONE)
          const level = (l: { price: F.Fixed; size: F.Fixed }) => ({ price: F.format(l.price), size: F.format(l.size) })
          return {
            market_id: `${venue.info.id}:${market.nativeId}`,
            side,
            ts: book.ts,
            bids: book.bids.slice(0, depth).map(level),
            asks: book.asks.slice(0, depth).map(level),
            best_bid: F.formatOrNull(book.bids[0]?.price),
            best_ask: F.formatOrNull(book.asks[0]?.price),
            mid: F.formatOrNull(midOf(book))
          }
        })
      )
      .handle("matchMarket", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { venue, market } = yield* marketOf(path.venue, path.market_id)
          const id = `${venue.info.id}:${market.nativeId}`
          const answer = yield* Effect.mapError(matching.match(id, urlParams.venue), matchingFailure)
          if (answer === undefined) return yield* Effect.fail(ApiError.marketNotFound(venue.info.id, path.market_id))
          return answer
        })
      )
      .handle("getTrades", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { venue, market } = yield* marketOf(path.venue, path.market_id)
          yield* need(venue, "fetch_trades")
          const marketId = `${venue.info.id}:${market.nativeId}`
          const request = checkPageRequest(urlParams, { market: marketId, since: urlParams.since })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const since = urlParams.since
          const trades = yield* Effect.mapError(venue.trades(market.nativeId), fromVenueError)
          const rows = (since === undefined ? trades : trades.filter((t) => t.ts >= since))
            .map((trade) => ({ trade, key: descendingKey(trade.ts, trade.id) }))
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
          return pageOf(
            rows,
            (row) => row.key,
            request,
            ({ trade: t }) => ({
              id: t.id,
              market_id: marketId,
              ts: t.ts,
              price: F.format(t.price),
              amount: F.format(t.amount),
              taker_side: t.takerSide
            })
          )
        })
      )
  })
)

/** A matcher's failure: a refused query is the caller's (400); anything else the matcher's (502, retryable or not). */
const matchingFailure = (error: MatchingError): ApiError =>
  error.invalid !== true
    ? new ApiError({
        status: 502,
        code: "venue_error",
        message: `the matcher failed: ${error.reason}`,
        details: { venue: null, retryable: error.retryable }
      })
    : ApiError.field("venue", error.reason)
