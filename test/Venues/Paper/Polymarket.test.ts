/** `polymarket:paper` on the fake CLOB with public data only: taker fills at the book, a book moving through it. */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { CONDITION, type FakePolymarket, startFake } from "../Polymarket/Fake.ts"
import { authed, eventually, Owner, serveVenues } from "../ServeVenues.ts"

const M = `polymarket:${CONDITION}`

class Clob extends Context.Tag("test/PaperFakePolymarket")<Clob, FakePolymarket>() {}

const server = serveVenues({
  list: ["sim", "polymarket"],
  env: Effect.map(Clob, (x) => ({
    POLYMARKET_CLOB_URL: x.url,
    POLYMARKET_GAMMA_URL: x.url,
    POLYMARKET_DATA_URL: x.url,
    POLYMARKET_WS_URL: x.wsUrl
  })),
  sim: { seed: 7, markets: 4 }
}).pipe(
  Layer.provideMerge(
    Layer.scoped(
      Clob,
      Effect.acquireRelease(
        // no key is configured: any signer will do, none is ever asked for
        Effect.promise(() => startFake("0x0000000000000000000000000000000000000001")),
        (x) => Effect.promise(() => x.close())
      )
    )
  )
) as Layer.Layer<Owner | Clob | any>

describe("polymarket:paper on the fake CLOB", () => {
  it.live(
    "takes the displayed asks, rests behind the bid, fills when the book moves through it; the CLOB gets no order",
    () =>
      Effect.gen(function* () {
        const x = yield* Clob
        const place = (json: Record<string, unknown>) =>
          authed("POST", "/trading/orders", { account: "polymarket:paper", market_id: M, type: "limit", ...json })
        const taken = yield* place({ side: "buy", amount: "5", price: "0.6", time_in_force: "ioc" })
        assert.strictEqual(taken.status, 201, taken.text)
        assert.strictEqual(taken.body.filled, "5")
        assert.strictEqual(taken.body.average_price, "0.6")
        assert.strictEqual(taken.body.info.paper, true)

        const resting = yield* place({ side: "buy", amount: "10", price: "0.55" })
        assert.strictEqual(resting.body.status, "open", resting.text)
        // Others offer 20 at 0.54: the book moves through the paper bid, which fills at its own price.
        x.move("SELL", "0.54", "20")
        const done = yield* eventually(
          authed("GET", `/trading/orders/${resting.body.id}?account=polymarket:paper`),
          (r) => r.body.status === "closed"
        )
        assert.strictEqual(done.body.filled, "10", done.text)
        assert.strictEqual(done.body.average_price, "0.55")

        const fills = (yield* authed("GET", "/trading/fills?account=polymarket:paper")).body.data
        assert.deepStrictEqual(fills.map((f: any) => [f.price, f.amount, f.liquidity, f.fee]).reverse(), [
          ["0.6", "5", "taker", "0"],
          ["0.55", "10", "maker", "0"]
        ])
        const balance = (yield* authed("GET", "/trading/balances?account=polymarket:paper")).body.data[0]
        assert.strictEqual(balance.cash, "9991.5")
        assert.deepStrictEqual(x.orders, [])
        assert.deepStrictEqual(
          x.calls.filter((c) => !c.startsWith("GET ")),
          []
        )
      }).pipe(Effect.provide(server)),
    30_000
  )
})
