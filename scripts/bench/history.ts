/**
 * The data host's history reads: four hours of a generated market imported into a store on disk, then its book changes
 * read back as the range route answers them (pages of 10,000, each segment with its initial book) and the book at
 * 200 times. Baselines: the same rows read with one bare SELECT, and one indexed row lookup per time.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { generateTape } from "../../sim/Generator.ts"
import { importTape } from "../../sim/History.ts"
import { formatTape } from "../../sim/Tape.ts"
import { ApiError } from "../../src/Domain/Errors.ts"
import { bookAt, bookRange } from "../../src/Data/History.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { type Figure, ratio, time } from "./common.ts"

export const historyFigures = (): Array<Figure> => {
  const folder = mkdtempSync(join(tmpdir(), "crossbook-bench-history-"))
  const store = new DataStore(join(folder, "data.db"))
  const { header, events } = generateTape({ seed: 9, markets: 1, durationS: 4 * 3600 })
  importTape(store, formatTape(header, events))
  const market = header.markets[0]!.id
  const first = events[0]!.ts
  const last = events[events.length - 1]!.ts
  const rows = (store.db.prepare("SELECT COUNT(*) AS n FROM book WHERE market_id = ?").get(market) as { n: number }).n

  const readRange = () => {
    let cursor: string | undefined
    let changes = 0
    do {
      const page = bookRange(
        store,
        {
          market_id: market,
          start_ms: first,
          end_ms: last,
          limit: 10_000,
          ...(cursor === undefined ? {} : { cursor })
        },
        Infinity
      )
      if (page instanceof ApiError) throw page
      for (const s of page.segments) changes += s.changes.length
      cursor = page.next_cursor ?? undefined
    } while (cursor !== undefined)
    return changes
  }
  const rangeS = time(3, () => void readRange())
  const bareS = time(3, () => {
    const all = store.db.prepare("SELECT * FROM book WHERE market_id = ? ORDER BY id").all(market) as Array<{
      bids: string
      asks: string
    }>
    let levels = 0
    for (const r of all) {
      levels += (JSON.parse(r.bids) as Array<unknown>).length + (JSON.parse(r.asks) as Array<unknown>).length
    }
    if (levels < 0) throw new Error("a negative count of levels")
  })

  const times = Array.from({ length: 200 }, (_, i) => first + Math.floor(((i + 0.5) / 200) * (last - first)))
  const atS = time(3, () => {
    for (const t of times) if (bookAt(store, { market_id: market, as_of_ms: t }) instanceof ApiError) throw new Error()
  })
  const lookupS = time(3, () => {
    const span = (store.db.prepare("SELECT MIN(id) AS id FROM spans").get() as { id: number }).id
    const q = store.db.prepare("SELECT id FROM book WHERE span_id = ? AND ts <= ? ORDER BY ts DESC, id DESC LIMIT 1")
    for (const t of times) q.get(span, t)
  })
  store.close()
  rmSync(folder, { recursive: true, force: true })

  const perS = Math.round(rows / rangeS)
  const barePerS = Math.round(rows / bareS)
  const atMs = (atS / times.length) * 1000
  const lookupMs = (lookupS / times.length) * 1000
  return [
    {
      name: "history.range_rows_per_s",
      value: perS,
      unit: "rows/s",
      baseline: barePerS,
      ratio: ratio(barePerS, perS),
      rows
    },
    {
      name: "history.book_at_ms",
      value: Number(atMs.toFixed(3)),
      unit: "ms",
      baseline: Number(lookupMs.toFixed(3)),
      ratio: ratio(atMs, lookupMs),
      rows
    }
  ]
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of historyFigures()) console.log(JSON.stringify(f))
}
