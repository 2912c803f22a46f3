/**
 * Tapes (sim/TAPES.md) in and out of the data host: `crossbook data import` writes a tape's books and trades to the
 * store, and `crossbook history tape` turns the history API's segments back into a tape that `sim replay` and
 * `backtest` read as they are. An absent segment becomes an explicit `gap`, followed by an empty snapshot: no book is
 * known until the next data segment's snapshot.
 */
import { Effect } from "effect"
import type { DataStore, Levels } from "../src/Data/Store.ts"
import type { ImportSummary } from "../src/Data/Tapes.ts"
import type { BookRangeAnswer, HistoryClient, TradesRangeAnswer } from "../src/Services/HistoryClient.ts"
import { arrowTapeBytes } from "./ArrowTape.ts"
import { formatTape, parseTape, type TapeEvent, type TapeHeader } from "./Tape.ts"
import * as Id from "../src/Domain/Ids.ts"

/** Writes a tape's markets, books and trades to the store; throws (naming the line) on a tape that does not parse. */
export const importTape = (store: DataStore, text: string): ImportSummary => {
  const { header, events } = parseTape(text)
  const counts = { snapshots: 0, changes: 0, trades: 0, gaps: 0, skipped: 0, ignored: 0 }
  store.db.transaction(() => {
    const spans = new Map<string, number | undefined>()
    const reasons = new Map<string, string>()
    for (const m of header.markets) store.upsertMarket(m)
    events.forEach((e, i) => {
      const span = spans.get(e.market)
      switch (e.type) {
        case "snapshot":
          if (span === undefined) {
            spans.set(
              e.market,
              store.openSpan(e.market, e.ts, e.ts, e.bids, e.asks, reasons.get(e.market) ?? "not_recorded").span
            )
          } else store.appendBook(e.market, span, e.ts, e.ts, "snapshot", e.bids, e.asks)
          counts.snapshots += 1
          return
        case "change": {
          if (span === undefined) return void (counts.skipped += 1)
          const level: Levels = [[e.price, e.size]]
          store.appendBook(
            e.market,
            span,
            e.ts,
            e.ts,
            "change",
            e.side === "bid" ? level : [],
            e.side === "ask" ? level : []
          )
          counts.changes += 1
          return
        }
        case "trade":
          if (span === undefined) return void (counts.skipped += 1)
          // Tapes carry no trade ids: the line number names the print.
          store.appendTrade(
            e.market,
            span,
            { trade_id: `line-${i + 2}`, ts: e.ts, price: e.price, amount: e.amount, taker_side: e.taker_side },
            e.ts
          )
          counts.trades += 1
          return
        case "gap":
          if (span !== undefined) store.extendSpan(e.market, span, e.ts)
          spans.set(e.market, undefined)
          reasons.set(e.market, "sequence_gap")
          counts.gaps += 1
          return
        default:
          counts.ignored += 1
      }
    })
  })()
  return { markets: header.markets.length, ...counts }
}

const sourceOf = (marketId: string): TapeHeader["source"] => {
  const venue = Id.venuePrefix(marketId)
  return venue === "kalshi" || venue === "polymarket" ? venue : "generated"
}

/** A tape of one market over `[fromMs, toMs]` read page by page through the history client. */
export const tapeFromHistory = (client: HistoryClient["Type"], marketId: string, fromMs: number, toMs: number) =>
  Effect.gen(function* () {
    const listed = (yield* client.markets).data.find((m) => m.id === marketId)
    if (listed === undefined) {
      // The host says whether it has the market: its 404 is the answer.
      yield* client.bookAt({ market_id: marketId, as_of_ms: fromMs })
    }
    const market = listed ?? { id: marketId, title: marketId, tick: "0.01", lot: "1" }
    type Keyed = { readonly event: TapeEvent; readonly order: number }
    const out: Array<Keyed> = []
    let version: string | undefined
    let bookLines = 0
    let seenData = false
    let cursor: string | undefined
    do {
      const page: BookRangeAnswer = yield* client.bookRange({
        market_id: marketId,
        start_ms: fromMs,
        end_ms: toMs,
        ...(cursor === undefined ? {} : { cursor })
      })
      version ??= page.metadata.dataset_version
      for (const s of page.segments) {
        if (s.kind === "absent") {
          if (!seenData) continue
          // A data segment holds its end ms, so nothing is known from the ms after it.
          const ts = s.start_ms + 1
          out.push({
            event: { type: "gap", ts, market: marketId, expected: bookLines + 1, got: bookLines + 2 },
            order: 1
          })
          out.push({ event: { type: "snapshot", ts, market: marketId, bids: [], asks: [] }, order: 1 })
          bookLines += 2
          continue
        }
        seenData = true
        if (s.initial_book !== null) {
          out.push({
            event: {
              type: "snapshot",
              ts: s.start_ms,
              market: marketId,
              bids: s.initial_book.bids.map((l) => [l.price, l.size] as const),
              asks: s.initial_book.asks.map((l) => [l.price, l.size] as const)
            },
            order: 1
          })
          bookLines += 1
        }
        for (const c of s.changes) {
          if (c.kind === "snapshot") {
            out.push({
              event: {
                type: "snapshot",
                ts: c.ts,
                market: marketId,
                bids: c.bids.map((l) => [l.price, l.size] as const),
                asks: c.asks.map((l) => [l.price, l.size] as const)
              },
              order: 1
            })
          } else {
            for (const l of c.bids) {
              out.push({ event: { type: "change", ts: c.ts, market: marketId, side: "bid", ...l }, order: 1 })
            }
            for (const l of c.asks) {
              out.push({ event: { type: "change", ts: c.ts, market: marketId, side: "ask", ...l }, order: 1 })
            }
          }
          bookLines += 1
        }
      }
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)

    cursor = undefined
    do {
      const page: TradesRangeAnswer = yield* client.tradesRange({
        market_id: marketId,
        start_ms: fromMs,
        end_ms: toMs,
        ...(cursor === undefined ? {} : { cursor })
      })
      for (const t of page.trades) {
        out.push({
          event: {
            type: "trade",
            ts: t.ts,
            market: marketId,
            price: t.price,
            amount: t.amount,
            taker_side: t.taker_side
          },
          order: 0
        })
      }
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)

    // In time order; at one ms a print comes before the book changes it caused, as the recorder saw them.
    const events = out
      .map((k, i) => ({ ...k, i }))
      .sort((a, b) => a.event.ts - b.event.ts || a.order - b.order || a.i - b.i)
      .map((k) => k.event)
    const header: TapeHeader = {
      type: "header",
      version: 1,
      source: sourceOf(marketId),
      markets: [{ id: market.id, title: market.title, tick: market.tick, lot: market.lot }],
      notes: `history of ${marketId} from ${client.url}, ${fromMs}..${toMs} ms, dataset ${version ?? "?"}`
    }
    return { text: formatTape(header, events), events: events.length }
  })

/** A tape's text as the bytes of an Arrow IPC file (sim/ArrowTape.ts). */
export const arrowOf = (text: string): Uint8Array => {
  const { header, events } = parseTape(text)
  return arrowTapeBytes(header, events)
}
