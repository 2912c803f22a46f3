/** Public market data: venues, markets, books and trades. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ApiErrorWire } from "../../Domain/Errors.ts"
import { MatchResult } from "../../Services/MatchingClient.ts"
import { CAPABILITY_KEYS } from "../../Services/VenueGateway.ts"
import { DecimalString, Millis, Page, PageParams } from "../Schemas.ts"

const Capability = Schema.Union(Schema.Boolean, Schema.Literal("partial"))

export const VenueRecord = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  book_model: Schema.String,
  has: Schema.Struct(
    Object.fromEntries(CAPABILITY_KEYS.map((k) => [k, Capability])) as {
      [K in (typeof CAPABILITY_KEYS)[number]]: typeof Capability
    }
  )
}).annotations({ identifier: "Venue" })

export const MarketRecord = Schema.Struct({
  id: Schema.String.annotations({ description: "<venue>:<native_id>" }),
  venue: Schema.String,
  native_id: Schema.String,
  event_id: Schema.String,
  title: Schema.String,
  subtitle: Schema.String,
  category: Schema.String,
  status: Schema.Literal("open", "closed", "settled"),
  open_time: Millis,
  close_time: Millis,
  tick_size: DecimalString,
  lot_size: DecimalString,
  best_bid: Schema.NullOr(DecimalString),
  best_ask: Schema.NullOr(DecimalString),
  last_price: Schema.NullOr(DecimalString),
  result: Schema.NullOr(Schema.Literal("yes", "no"))
}).annotations({ identifier: "Market" })

const Level = Schema.Struct({ price: DecimalString, size: DecimalString }).annotations({ identifier: "BookLevel" })

export const BookRecord = Schema.Struct({
  market_id: Schema.String,
  side: Schema.Literal("yes", "no"),
  ts: Millis,
  bids: Schema.Array(Level),
  asks: Schema.Array(Level),
  best_bid: Schema.NullOr(DecimalString),
  best_ask: Schema.NullOr(DecimalString),
  mid: Schema.NullOr(DecimalString)
}).annotations({ identifier: "Book" })

export const TradeRecord = Schema.Struct({
  id: Schema.String,
  market_id: Schema.String,
  ts: Millis,
  price: DecimalString,
  amount: DecimalString,
  taker_side: Schema.Literal("buy", "sell")
}).annotations({ identifier: "Trade" })

const VenuePath = Schema.Struct({ venue: Schema.String })
const MarketPath = Schema.Struct({ venue: Schema.String, market_id: Schema.String })

export const VenuesApi = HttpApiGroup.make("venues")
  .add(HttpApiEndpoint.get("listVenues", "/venues").addSuccess(Page(VenueRecord)))
  .add(
    HttpApiEndpoint.get("getVenue", "/venues/:venue")
      .setPath(VenuePath)
      .addSuccess(VenueRecord)
      .addError(ApiErrorWire, { status: 400 })
  )
  .add(
    HttpApiEndpoint.get("listMarkets", "/venues/:venue/markets")
      .setPath(VenuePath)
      .setUrlParams(
        Schema.Struct({
          search: Schema.optional(Schema.String.annotations({ description: "Words to look for; ranked by relevance" })),
          query: Schema.optional(Schema.String.annotations({ description: "Alias of search" })),
          status: Schema.optional(Schema.Literal("open", "closed", "settled", "all")),
          ...PageParams
        })
      )
      .addSuccess(Page(MarketRecord))
      .addError(ApiErrorWire, { status: 400 })
      .addError(ApiErrorWire, { status: 501 })
  )
  .add(
    HttpApiEndpoint.get("getMarket", "/venues/:venue/markets/:market_id")
      .setPath(MarketPath)
      .addSuccess(MarketRecord)
      .addError(ApiErrorWire, { status: 400 })
      .addError(ApiErrorWire, { status: 404 })
  )
  .add(
    HttpApiEndpoint.get("getBook", "/venues/:venue/markets/:market_id/book")
      .setPath(MarketPath)
      .setUrlParams(
        Schema.Struct({
          side: Schema.optional(Schema.Literal("yes", "no")),
          depth: Schema.optional(
            Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)).annotations({
              description: "Levels per side, default 10"
            })
          )
        })
      )
      .addSuccess(BookRecord)
      .addError(ApiErrorWire, { status: 400 })
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 501 })
  )
  .add(
    HttpApiEndpoint.get("getTrades", "/venues/:venue/markets/:market_id/trades")
      .setPath(MarketPath)
      .setUrlParams(
        Schema.Struct({
          since: Schema.optional(
            Schema.NumberFromString.pipe(Schema.int()).annotations({ description: "ms since epoch" })
          ),
          ...PageParams
        })
      )
      .addSuccess(Page(TradeRecord))
      .addError(ApiErrorWire, { status: 400 })
      .addError(ApiErrorWire, { status: 404 })
      .addError(ApiErrorWire, { status: 501 })
  )
  .add(
    HttpApiEndpoint.get("matchMarket", "/venues/:venue/markets/:market_id/match")
      .setPath(MarketPath)
      .setUrlParams(
        Schema.Struct({
          venue: Schema.optional(Schema.String.annotations({ description: "Only a market on this venue" }))
        })
      )
      .addSuccess(MatchResult)
      .addError(ApiErrorWire, { status: 400 })
      .addError(ApiErrorWire, { status: 404 })
      .annotate(
        OpenApi.Description,
        "The market on another venue that asks the same question, with the side_map from this market's sides to " +
          "its sides. `verdict` is `matched` (then `matched` holds the market), `uncertain` (then `matched` is null " +
          "and `candidate` and `reasons` say what a person must judge: the time, scope, settlement source or " +
          "boundary that differ or could not be read, or a runner-up as close) or `none`. `explain` carries both " +
          "parsed propositions and the rules verdict. From the hosted matcher at SERVICE_MATCHING_URL when set, else " +
          "the local matcher over the served venues' catalogs."
      )
  )
  .addError(ApiErrorWire, { status: 502 })
  .addError(ApiErrorWire, { status: 504 })
  .annotate(OpenApi.Description, "Public market data; no token needed")
