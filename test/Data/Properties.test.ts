import { describe, expect, it } from "vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { generateTape } from "../../sim/Generator.ts"
import { importTape, tapeFromHistory } from "../../sim/History.ts"
import { formatTape, parseTape, type TapeEvent } from "../../sim/Tape.ts"
import { TapeBook } from "../../sim/TapeBook.ts"
import { ApiError } from "../../src/Domain/Errors.ts"
import { bookAt, bookRange, tradesRange } from "../../src/Data/History.ts"
import { DataStore } from "../../src/Data/Store.ts"
import { type HistoryClient, HistoryError } from "../../src/Services/HistoryClient.ts"

const LONG = process.env["CROSSBOOK_LONG"] !== undefined
const RUNS = LONG ? { numRuns: 40 } : { seed: 7, numRuns: 6 }

/** The history answers straight from the store, as a client would read them from the host. */
const local = (store: DataStore): HistoryClient["Type"] => {
  const answer = <A>(a: A | ApiError) =>
    a instanceof ApiError
      ? Effect.fail(new HistoryError({ kind: "http", message: a.message, code: a.code, retryable: false }))
      : Effect.succeed(a)
  return {
    url: "memory",
    markets: Effect.sync(() => ({ data: store.markets(), next_cursor: null, count: store.markets().length })),
    bookAt: (r) => answer(bookAt(store, r)),
    bookRange: (r) => answer(bookRange(store, r, Infinity)),
    tradesRange: (r) => answer(tradesRange(store, r, Infinity))
  }
}

/** The book of one market after every event with `ts` at or before each time asked, as tape levels. */
const booksAt = (events: ReadonlyArray<TapeEvent>, times: ReadonlyArray<number>) => {
  const book = new TapeBook()
  const out = new Map<number, string>()
  let i = 0
  for (const t of [...times].sort((a, b) => a - b)) {
    while (i < events.length && events[i]!.ts <= t) book.apply(events[i++]!)
    out.set(t, JSON.stringify([book.toSnapshotLevels("bid"), book.toSnapshotLevels("ask")]))
  }
  return out
}

const generated = fc.record({
  seed: fc.integer({ min: 1, max: 1_000_000 }),
  // Long enough for a few checkpoints (every 500 rows) inside one span.
  durationS: fc.integer({ min: 90, max: 240 })
})

describe("the data host's history, for any recorded market", () => {
  it("answers the book at any time as the tape's events up to it make it", () => {
    fc.assert(
      fc.property(
        generated,
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 5, maxLength: 20 }),
        (g, at) => {
          const { header, events } = generateTape({ ...g, markets: 1 })
          const store = new DataStore(":memory:")
          importTape(store, formatTape(header, events))
          const market = header.markets[0]!.id
          const first = events[0]!.ts
          const last = events[events.length - 1]!.ts
          const times = at.map((x) => first + Math.floor(x * (last - first)))
          const expected = booksAt(
            events.filter((e) => e.market === market),
            times
          )
          for (const t of times) {
            const answer = bookAt(store, { market_id: market, as_of_ms: t })
            if (answer instanceof ApiError) throw answer
            const levels = (side: ReadonlyArray<{ price: string; size: string }>) => side.map((l) => [l.price, l.size])
            expect(JSON.stringify([levels(answer.book!.bids), levels(answer.book!.asks)]), `at ${t}`).toBe(
              expected.get(t)
            )
          }
          store.close()
        }
      ),
      RUNS
    )
  })

  it("pages a range into the same changes whatever the page size", () => {
    fc.assert(
      fc.property(generated, fc.integer({ min: 1, max: 60 }), (g, limit) => {
        const { header, events } = generateTape({ ...g, markets: 1 })
        const store = new DataStore(":memory:")
        importTape(store, formatTape(header, events))
        const request = { market_id: header.markets[0]!.id, start_ms: 0, end_ms: events[events.length - 1]!.ts + 10 }
        const whole = bookRange(store, { ...request, limit: 10_000 }, Infinity)
        if (!(whole instanceof ApiError)) expect(whole.next_cursor).toBeNull()
        if (whole instanceof ApiError) throw whole
        const paged: Array<unknown> = []
        let cursor: string | undefined
        for (let pages = 0; pages < 10_000; pages++) {
          const page = bookRange(store, { ...request, limit, ...(cursor === undefined ? {} : { cursor }) }, Infinity)
          if (page instanceof ApiError) throw page
          for (const s of page.segments) paged.push(...s.changes)
          cursor = page.next_cursor ?? undefined
          if (cursor === undefined) break
        }
        expect(paged).toEqual(whole.segments.flatMap((s) => s.changes))
        store.close()
      }),
      RUNS
    )
  })

  it("gives back, as a tape, the same book at every time and the same prints it was given", async () => {
    await fc.assert(
      fc.asyncProperty(generated, async (g) => {
        const { header, events } = generateTape({ ...g, markets: 1 })
        const store = new DataStore(":memory:")
        importTape(store, formatTape(header, events))
        const market = header.markets[0]!.id
        const last = events[events.length - 1]!.ts
        const back = parseTape((await Effect.runPromise(tapeFromHistory(local(store), market, 0, last + 10))).text)
        const times = [...new Set(events.map((e) => e.ts))]
        // Before the first snapshot no book is known; from it on, the two tapes agree at every time.
        expect(booksAt(back.events, times)).toEqual(booksAt(events, times))
        const prints = (es: ReadonlyArray<TapeEvent>) =>
          es.flatMap((e) => (e.type === "trade" ? [`${e.ts} ${e.price} ${e.amount} ${e.taker_side}`] : []))
        expect(prints(back.events)).toEqual(prints(events))
        expect(back.header.markets).toEqual(header.markets)
        store.close()
      }),
      RUNS
    )
  })
})
