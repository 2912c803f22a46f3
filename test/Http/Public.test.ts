import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock, TestContext } from "effect"
import { openApiDocument } from "../../src/Http/Api.ts"
import { CAPABILITY_KEYS } from "../../src/Services/VenueGateway.ts"
import { get, type RawResponse, TestServerLive } from "./TestServer.ts"

const cents = (price: string) => Math.round(Number(price) * 100)
const onTick = (price: string) => /^0(\.\d{1,2})?$/.test(price) && cents(price) >= 1 && cents(price) <= 99

const spec = openApiDocument() as any

/** The status must be one the published document lists for this operation, and the body the error shape. */
const assertDocumentedError = (res: RawResponse, method: string, template: string, status: number, code: string) => {
  assert.strictEqual(res.status, status, res.text)
  assert.deepStrictEqual(Object.keys(res.body), ["error"])
  assert.deepStrictEqual(Object.keys(res.body.error).sort(), ["code", "details", "message"])
  assert.strictEqual(res.body.error.code, code)
  assert.isString(res.body.error.message)
  assert.isTrue(res.body.error.message.length > 0)
  assert.property(res.body.error.details, "venue")
  assert.isBoolean(res.body.error.details.retryable)
  if (template !== "") {
    const operation = spec.paths[template]?.[method]
    assert.isDefined(operation, `${method} ${template} is documented`)
    assert.property(operation.responses, String(status), `${method} ${template} documents ${status}`)
  }
}

describe("public market data", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("GET /venues lists sim with its full capability map", () =>
      Effect.gen(function* () {
        const res = yield* get("/venues")
        assert.strictEqual(res.status, 200)
        assert.strictEqual(res.body.count, 1)
        assert.isNull(res.body.next_cursor)
        const sim = res.body.data.find((v: any) => v.id === "sim")
        assert.isDefined(sim)
        assert.deepStrictEqual(Object.keys(sim.has).sort(), [...CAPABILITY_KEYS].sort())
        for (const key of CAPABILITY_KEYS) assert.include([true, false, "partial"], sim.has[key])
        const one = yield* get("/venues/sim")
        assert.deepStrictEqual(one.body, sim)
      })
    )

    it.effect("/, /health, /docs and /openapi.json answer", () =>
      Effect.gen(function* () {
        const root = yield* get("/")
        assert.strictEqual(root.status, 200)
        assert.strictEqual(root.body.name, "crossbook")
        const health = yield* get("/health")
        assert.strictEqual(health.body.status, "ok")
        assert.deepStrictEqual(health.body.venues, ["sim"])
        const docs = yield* get("/docs")
        assert.strictEqual(docs.status, 200)
        assert.include(docs.text, "<html")
        assert.notInclude(docs.text, '<script src="http', "the docs page loads nothing from the network")
        const published = yield* get("/openapi.json")
        assert.deepStrictEqual(published.body, JSON.parse(JSON.stringify(spec)))
      })
    )

    it.effect("paging the markets visits every market exactly once, for every page size", () =>
      Effect.gen(function* () {
        const all = yield* get("/venues/sim/markets?status=all&limit=1000")
        assert.strictEqual(all.status, 200)
        assert.isAtLeast(all.body.count, 20)
        assert.isNull(all.body.next_cursor)
        const ids: Array<string> = all.body.data.map((m: any) => m.id)
        assert.deepStrictEqual(ids, [...ids].sort(), "id order")
        for (const limit of [1, 5, 7]) {
          const seen: Array<string> = []
          let cursor: string | null = null
          let pages = 0
          do {
            const res: RawResponse = yield* get(
              `/venues/sim/markets?status=all&limit=${limit}${cursor === null ? "" : `&cursor=${cursor}`}`
            )
            assert.strictEqual(res.status, 200)
            assert.isAtMost(res.body.count, limit)
            assert.strictEqual(res.body.count, res.body.data.length)
            seen.push(...res.body.data.map((m: any) => m.id))
            cursor = res.body.next_cursor
            pages++
          } while (cursor !== null && pages < 100)
          assert.deepStrictEqual(seen, ids)
        }
      })
    )

    it.effect("the status filter defaults to open and narrows", () =>
      Effect.gen(function* () {
        const all = yield* get("/venues/sim/markets?status=all")
        const open = yield* get("/venues/sim/markets")
        const closed = yield* get("/venues/sim/markets?status=closed")
        assert.isTrue(open.body.data.every((m: any) => m.status === "open"))
        assert.isTrue(closed.body.data.every((m: any) => m.status === "closed"))
        assert.isAbove(closed.body.count, 0)
        assert.isBelow(open.body.count, all.body.count)
      })
    )

    it.effect("a search narrows the list, ranks title matches first, and `query` is an alias", () =>
      Effect.gen(function* () {
        const all = yield* get("/venues/sim/markets?status=all&limit=1000")
        const word = String(all.body.data[0].title)
          .split(/\s+/)
          .find((w: string) => w.length > 4)!
          .toLowerCase()
        const res = yield* get(`/venues/sim/markets?status=all&search=${encodeURIComponent(word)}`)
        assert.strictEqual(res.status, 200)
        assert.isAbove(res.body.count, 0)
        assert.isBelow(res.body.count, all.body.count)
        for (const m of res.body.data) {
          const text = `${m.title} ${m.subtitle} ${m.native_id} ${m.event_id} ${m.category}`.toLowerCase()
          assert.include(text, word)
        }
        const alias = yield* get(`/venues/sim/markets?status=all&query=${encodeURIComponent(word)}`)
        assert.deepStrictEqual(alias.body, res.body)
        const none = yield* get("/venues/sim/markets?search=zzzqqqxxx")
        assert.deepStrictEqual(none.body, { data: [], next_cursor: null, count: 0 })
      })
    )

    it.effect("a market answers by full or bare id, with its book on the tick grid", () =>
      Effect.gen(function* () {
        const list = yield* get("/venues/sim/markets?limit=3")
        for (const market of list.body.data) {
          const full = yield* get(`/venues/sim/markets/${market.id}`)
          const bare = yield* get(`/venues/sim/markets/${market.native_id}`)
          assert.strictEqual(full.status, 200)
          assert.deepStrictEqual(full.body, bare.body)
          assert.strictEqual(full.body.tick_size, "0.01")
          const yes = yield* get(`/venues/sim/markets/${market.id}/book?depth=5`)
          assert.strictEqual(yes.status, 200)
          assert.isAbove(yes.body.bids.length, 0)
          assert.isAbove(yes.body.asks.length, 0)
          assert.isAtMost(yes.body.bids.length, 5)
          assert.isBelow(cents(yes.body.best_bid), cents(yes.body.best_ask))
          for (const level of [...yes.body.bids, ...yes.body.asks]) {
            assert.isTrue(onTick(level.price), level.price)
            assert.isAbove(Number(level.size), 0)
          }
          const bids = yes.body.bids.map((l: any) => cents(l.price))
          assert.deepStrictEqual(
            bids,
            [...bids].sort((a: number, b: number) => b - a)
          )
          const no = yield* get(`/venues/sim/markets/${market.id}/book?side=no&depth=5`)
          assert.strictEqual(no.body.side, "no")
          assert.deepStrictEqual(
            no.body.bids,
            yes.body.asks.map((l: any) => ({ price: String((100 - cents(l.price)) / 100), size: l.size }))
          )
          assert.deepStrictEqual(
            no.body.asks,
            yes.body.bids.map((l: any) => ({ price: String((100 - cents(l.price)) / 100), size: l.size }))
          )
        }
      })
    )

    it.effect("error: unknown route is 404 not_found", () =>
      Effect.gen(function* () {
        assertDocumentedError(yield* get("/nope"), "get", "", 404, "not_found")
        assertDocumentedError(yield* get("/venues/sim/markets/x/y/z"), "get", "", 404, "not_found")
      })
    )

    it.effect("error: unknown venue is 400 unknown_venue naming the known ones", () =>
      Effect.gen(function* () {
        const res = yield* get("/venues/nasdaq/markets")
        assertDocumentedError(res, "get", "/venues/{venue}/markets", 400, "unknown_venue")
        assert.include(res.body.error.message, "sim")
        assert.isNull(res.body.error.details.venue)
        assertDocumentedError(yield* get("/venues/nasdaq"), "get", "/venues/{venue}", 400, "unknown_venue")
      })
    )

    it.effect("error: a missing market is 404 market_not_found; an id of another venue is 400", () =>
      Effect.gen(function* () {
        const missing = yield* get("/venues/sim/markets/NO-SUCH-MARKET")
        assertDocumentedError(missing, "get", "/venues/{venue}/markets/{market_id}", 404, "market_not_found")
        assert.strictEqual(missing.body.error.details.venue, "sim")
        const book = yield* get("/venues/sim/markets/sim:NO-SUCH-MARKET/book")
        assertDocumentedError(book, "get", "/venues/{venue}/markets/{market_id}/book", 404, "market_not_found")
        const other = yield* get("/venues/sim/markets/kalshi:FED-25DEC")
        assertDocumentedError(other, "get", "/venues/{venue}/markets/{market_id}", 400, "validation_error")
        assert.strictEqual(other.body.error.details.errors[0].field, "market_id")
      })
    )

    it.effect("error: bad query parameters are 400 validation_error with details.errors", () =>
      Effect.gen(function* () {
        for (const query of ["limit=0", "limit=1001", "limit=abc", "status=pending", "cursor=garbage"]) {
          const res = yield* get(`/venues/sim/markets?${query}`)
          assertDocumentedError(res, "get", "/venues/{venue}/markets", 400, "validation_error")
          assert.isAbove(res.body.error.details.errors.length, 0, query)
          assert.isString(res.body.error.details.errors[0].field)
        }
        const market = (yield* get("/venues/sim/markets?limit=1")).body.data[0].id
        for (const query of ["side=maybe", "depth=0", "depth=x"]) {
          const res = yield* get(`/venues/sim/markets/${market}/book?${query}`)
          assertDocumentedError(res, "get", "/venues/{venue}/markets/{market_id}/book", 400, "validation_error")
        }
      })
    )

    it.effect("error: a cursor passed back with other filters is 400", () =>
      Effect.gen(function* () {
        const first = yield* get("/venues/sim/markets?status=all&limit=2")
        const res = yield* get(`/venues/sim/markets?status=open&limit=2&cursor=${first.body.next_cursor}`)
        assertDocumentedError(res, "get", "/venues/{venue}/markets", 400, "validation_error")
        assert.strictEqual(res.body.error.details.errors[0].field, "cursor")
      })
    )

    it.effect("trades page newest first", () =>
      Effect.gen(function* () {
        const market = (yield* get("/venues/sim/markets?limit=1")).body.data[0].id
        const res = yield* get(`/venues/sim/markets/${market}/trades?limit=10`)
        assert.strictEqual(res.status, 200)
        const ts = res.body.data.map((t: any) => t.ts)
        assert.deepStrictEqual(
          ts,
          [...ts].sort((a: number, b: number) => b - a)
        )
      })
    )
  })
})

describe("determinism", () => {
  const snapshot = Effect.gen(function* () {
    yield* TestClock.adjust("90 seconds")
    const markets = yield* get("/venues/sim/markets?status=all&limit=1000")
    const books = yield* Effect.forEach(markets.body.data.slice(0, 6), (m: any) =>
      get(`/venues/sim/markets/${m.id}/book?depth=10`)
    )
    return JSON.stringify([markets.body, books.map((b) => b.body)])
  }).pipe(Effect.provide(TestServerLive), Effect.provide(TestContext.TestContext))

  it.effect("the same seed gives the same markets and books in two runs", () =>
    Effect.gen(function* () {
      const a = yield* snapshot
      const b = yield* snapshot
      assert.strictEqual(a, b)
    })
  )

  it.effect("the published document is the one the server is built from", () =>
    Effect.gen(function* () {
      const res = yield* get("/openapi.json").pipe(Effect.provide(TestServerLive))
      assert.deepStrictEqual(res.body, JSON.parse(JSON.stringify(openApiDocument())))
    })
  )
})
