/** Kalshi's catalog: the open markets as last read, one market read again once it changed or aged, fee schedules. */
import { Clock, Effect, Either, Ref } from "effect"
import type { MarketFees } from "../../Domain/Fees.ts"
import type { Market } from "../../Domain/Market.ts"
import type { VenueError } from "../../Services/VenueGateway.ts"
import { type KalshiRest, unreadable, venueError } from "./Rest.ts"
import type { KalshiConfig } from "./Settings.ts"
import * as W from "./Wire.ts"

/** What the catalog needs: the REST client and the settings. */
export interface CatalogDeps {
  readonly rest: KalshiRest
  readonly config: KalshiConfig
}

/** Kalshi's catalog of one venue, and the hooks by which the socket says what changed. */
export interface KalshiCatalog {
  readonly markets: Effect.Effect<ReadonlyArray<Market>, VenueError>
  readonly market: (ticker: string) => Effect.Effect<Market | undefined, VenueError>
  /** The venue's own row of a market (its tick grid and status), as last read while fresh. */
  readonly kMarket: (ticker: string) => Effect.Effect<W.KMarket | undefined, VenueError>
  readonly fees: (ticker: string) => Effect.Effect<MarketFees | undefined, VenueError>
  /** A lifecycle message named this market: it is read again on next use. */
  readonly marketChanged: (ticker: string) => Effect.Effect<void>
  /** A lifecycle message may have been lost: every market is read again. */
  readonly forgetAll: Effect.Effect<void>
  /** An event's fee overrides changed: they are read again on next use. */
  readonly eventFeesChanged: (eventTicker: string) => void
}

/** Builds the catalog; it keeps what it read for the catalog's time to live. */
export const makeKalshiCatalog = ({ rest, config }: CatalogDeps): Effect.Effect<KalshiCatalog> =>
  Effect.gen(function* () {
    /** The catalog of open markets as last read, and the same by ticker (a placement looks its market up there). */
    const catalog = yield* Ref.make<
      { at: number; markets: ReadonlyArray<Market>; byTicker: ReadonlyMap<string, Market> } | undefined
    >(undefined)
    /**
     * Each market as last read, and when: taken as it is while younger than the catalog's time to live, read again
     * after (a socket's lifecycle message drops it sooner, but only for the markets the socket follows).
     */
    const known = new Map<string, { readonly market: W.KMarket; readonly at: number }>()
    const now = Clock.currentTimeMillis

    const readCatalog = Effect.gen(function* () {
      const out: Array<Market> = []
      let cursor: string | undefined
      for (let page = 0; page < config.catalogPages; page++) {
        const r = yield* rest.events({ limit: 200, status: "open", ...(cursor ? { cursor } : {}) })
        const at = yield* now
        for (const e of r.events) for (const market of e.markets ?? []) known.set(market.ticker, { market, at })
        out.push(...W.marketsOfEvents(r.events))
        cursor = r.cursor
        if (!cursor || r.events.length === 0) break
      }
      return out.sort((a, b) => (a.nativeId < b.nativeId ? -1 : a.nativeId > b.nativeId ? 1 : 0))
    })

    /** Markets a lifecycle message named since they were last read: read again on next use, one by one. */
    const changed = new Set<string>()

    const markets = Effect.gen(function* () {
      const t = yield* now
      const cached = yield* Ref.get(catalog)
      if (cached !== undefined && t - cached.at < config.catalogTtlMs) {
        const rows = [...changed].filter((ticker) => cached.byTicker.has(ticker))
        if (rows.length === 0) return cached.markets
        for (const ticker of rows) yield* market(ticker)
        return (yield* Ref.get(catalog))?.markets ?? cached.markets
      }
      const read = yield* readCatalog
      changed.clear()
      yield* Ref.set(catalog, { at: t, markets: read, byTicker: new Map(read.map((m) => [m.nativeId, m])) })
      return read
    })

    /** Puts a market read again in the catalog in place of its old row (an open catalog keeps open markets only). */
    const patchCatalog = (m: Market) =>
      Ref.update(catalog, (c) => {
        if (c === undefined || !c.byTicker.has(m.nativeId)) return c
        const list = c.markets.flatMap((x) => (x.nativeId !== m.nativeId ? [x] : m.status === "open" ? [m] : []))
        const byTicker = new Map(c.byTicker)
        if (m.status === "open") byTicker.set(m.nativeId, m)
        else byTicker.delete(m.nativeId)
        return { at: c.at, markets: list, byTicker }
      })

    const kMarket = (ticker: string) =>
      Effect.gen(function* () {
        const t = yield* now
        const k = known.get(ticker)
        if (k !== undefined && t - k.at < config.catalogTtlMs) return k.market
        const r = yield* rest.market(ticker).pipe(
          Effect.map((x) => x.market),
          Effect.catchIf(
            (e) => e.kind === "rejected" && /not.found|404/i.test(e.reason),
            () => Effect.succeed(undefined)
          ),
          // A read that fails leaves the market as last read, where there is one (the venue judges an order anyway).
          Effect.catchAll((e) => (k === undefined ? Effect.fail(e) : Effect.succeed(k.market)))
        )
        if (r === undefined) known.delete(ticker)
        else if (r !== k?.market) known.set(ticker, { market: r, at: t })
        return r
      })

    const market = (ticker: string) =>
      Effect.gen(function* () {
        const t = yield* now
        const listed = yield* Ref.get(catalog)
        const row = listed?.byTicker.get(ticker)
        // The catalog's row while the catalog is fresh (it carries the event's title and category); after, the
        // market as read again, with the row's words.
        if (listed !== undefined && row !== undefined && t - listed.at < config.catalogTtlMs && !changed.has(ticker))
          return row
        const k = yield* kMarket(ticker)
        if (k === undefined) return undefined
        const read = W.toMarket(k)
        const out =
          row === undefined ? read : { ...read, title: row.title, subtitle: row.subtitle, category: row.category }
        if (changed.delete(ticker)) yield* patchCatalog(out)
        return out
      })

    /**
     * A market's fee schedule: its event's override where one is in force (`/events/fee_changes`), else its series'
     * (the event ticker's first part names the series). Each is kept for the fee time to live; an `event_fee_update`
     * on the socket drops the event's at once. A schedule whose table the API does not publish (`flat`) is none.
     */
    const seriesFees = new Map<string, { readonly at: number; readonly schedule: W.FeeSchedule }>()
    const eventFees = new Map<string, { readonly at: number; readonly changes: ReadonlyArray<W.KEventFeeChange> }>()
    const fees = (ticker: string): Effect.Effect<MarketFees | undefined, VenueError> =>
      Effect.gen(function* () {
        const m = yield* market(ticker)
        if (m === undefined) return yield* Effect.fail(venueError("rejected", `no market ${ticker}`))
        const t = yield* now
        const seriesTicker = m.eventId.split("-")[0]!
        let series = seriesFees.get(seriesTicker)
        if (series === undefined || t - series.at >= config.feeTtlMs) {
          const r = yield* rest.series(seriesTicker)
          series = { at: t, schedule: yield* Either.mapLeft(W.feeSchedule(r.series), unreadable("series")) }
          seriesFees.set(seriesTicker, series)
        }
        let event = eventFees.get(m.eventId)
        if (event === undefined || t - event.at >= config.feeTtlMs) {
          const changes: Array<W.KEventFeeChange> = []
          let cursor: string | undefined
          for (let page = 0; page < config.maxPages; page++) {
            const r = yield* rest.eventFeeChanges({
              event_ticker: m.eventId,
              limit: 1000,
              ...(cursor ? { cursor } : {})
            })
            changes.push(...r.event_fee_changes.filter((c) => c.event_ticker === m.eventId))
            cursor = r.cursor
            if (!cursor) break
          }
          event = { at: t, changes }
          eventFees.set(m.eventId, event)
        }
        const override = yield* Either.mapLeft(W.feeOverride(event.changes, t), unreadable("event fee change"))
        return W.marketFees(override ?? series.schedule)
      })

    // one market changed: that market alone is read again on next use (the channel carries every market of the
    // venue: only those the catalog lists are remembered as changed)
    const marketChanged = (ticker: string) =>
      Effect.gen(function* () {
        known.delete(ticker)
        if ((yield* Ref.get(catalog))?.byTicker.has(ticker) === true) changed.add(ticker)
      })

    const forgetAll = Effect.suspend(() => {
      known.clear()
      return Ref.set(catalog, undefined)
    })

    return {
      markets,
      market,
      kMarket,
      fees,
      marketChanged,
      forgetAll,
      eventFeesChanged: (eventTicker: string) => void eventFees.delete(eventTicker)
    }
  })
