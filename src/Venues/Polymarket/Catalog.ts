/** Polymarket's catalog: Gamma's open markets, one market by condition id, Gamma id or slug, with the tick in force. */
import { Clock, Duration, Effect } from "effect"
import type * as F from "../../Domain/Fixed.ts"
import type { VenueError } from "../../Services/VenueGateway.ts"
import { fail, type PolymarketRest } from "./Rest.ts"
import type { PolymarketConfig } from "./Settings.ts"
import type { MarketBooks } from "./Stream.ts"
import { GammaMarkets, type PolymarketMarket, toMarket } from "./Wire.ts"

/** What the catalog needs: the REST client, the settings, and the streamed books (whose ticks may have moved). */
export interface CatalogDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly books: MarketBooks
}

/** Builds the catalog of one venue; what it read is kept for the catalog's time to live, markets by id for good. */
export const makePolymarketCatalog = ({ rest, config, books }: CatalogDeps) => {
  const byId = new Map<string, PolymarketMarket>()
  const byAlias = new Map<string, string>()
  const remember = (m: PolymarketMarket) => {
    byId.set(m.nativeId, m)
    byAlias.set(m.gammaId, m.nativeId)
    if (m.slug !== "") byAlias.set(m.slug, m.nativeId)
    return m
  }
  let catalog: { at: number; markets: ReadonlyArray<PolymarketMarket> } | undefined

  const markets = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    if (catalog !== undefined && now - catalog.at < Duration.toMillis(config.catalogTtl)) return catalog.markets
    const out: Array<PolymarketMarket> = []
    for (let page = 0; page < config.catalogPages; page++) {
      const rows = yield* rest.json(
        {
          family: "gamma",
          host: "gamma",
          method: "GET",
          path: `/markets?closed=false&limit=500&offset=${page * 500}&order=id&ascending=true`
        },
        GammaMarkets
      )
      for (const r of rows) {
        const m = toMarket(r)
        if (m !== undefined) out.push(remember(m))
      }
      if (rows.length < 500) break
    }
    out.sort((a, b) => (a.nativeId < b.nativeId ? -1 : a.nativeId > b.nativeId ? 1 : 0))
    catalog = { at: now, markets: out }
    return out
  })

  /** Ticks the venue moved since the catalog was read (`tick_size_change`, or a refusal), by YES token. */
  const ticks = new Map<string, F.Fixed>()
  const withTick = (m: PolymarketMarket): PolymarketMarket => {
    const tick = ticks.get(m.yesToken) ?? books.ticks.get(m.yesToken)
    return tick === undefined || tick === m.tick ? m : { ...m, tick }
  }

  /** A market by condition id, Gamma id or slug, with the tick the venue uses now. */
  const market = (id: string): Effect.Effect<PolymarketMarket | undefined, VenueError> =>
    Effect.map(catalogMarket(id), (m) => (m === undefined ? undefined : withTick(m)))

  const catalogMarket = (id: string): Effect.Effect<PolymarketMarket | undefined, VenueError> =>
    Effect.gen(function* () {
      const known = byId.get(id) ?? byId.get(byAlias.get(id) ?? "")
      if (known !== undefined) return known
      const query = id.startsWith("0x")
        ? `condition_ids=${encodeURIComponent(id)}`
        : /^\d+$/.test(id)
          ? `id=${id}`
          : `slug=${encodeURIComponent(id)}`
      const rows = yield* rest.json(
        { family: "gamma", host: "gamma", method: "GET", path: `/markets?${query}` },
        GammaMarkets
      )
      const found = rows.map((r) => toMarket(r)).find((m) => m !== undefined)
      return found === undefined ? undefined : remember(found)
    })

  const requireMarket = (id: string) =>
    Effect.flatMap(market(id), (m) => (m === undefined ? fail("rejected", `no market ${id}`) : Effect.succeed(m)))

  return {
    markets,
    market,
    requireMarket,
    remember,
    /** A market already read, by condition id, without asking the venue. */
    known: (nativeId: string): PolymarketMarket | undefined => byId.get(nativeId),
    /** The venue moved a token's tick (it refused a price on the old one). */
    tickMoved: (yesToken: string, tick: F.Fixed) => void ticks.set(yesToken, tick),
    /** A market resolved: its row is replaced and the list is read again on next use. */
    resolved: (m: PolymarketMarket) => {
      byId.set(m.nativeId, m)
      catalog = undefined
    }
  }
}

/** The catalog of one Polymarket venue. */
export type PolymarketCatalog = ReturnType<typeof makePolymarketCatalog>
