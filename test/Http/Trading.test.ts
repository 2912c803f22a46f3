import { assert, describe, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import * as F from "../../src/Domain/Fixed.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import { OwnerToken, type RawResponse, request, TestServerLive } from "./TestServer.ts"

const cents = (p: string) => Math.round(Number(p) * 100)
const price = (c: number) => String(c / 100)

const assertError = (res: RawResponse, status: number, code: string) => {
  assert.strictEqual(res.status, status, res.text)
  assert.strictEqual(res.body.error.code, code, res.text)
  assert.property(res.body.error.details, "venue")
  assert.isBoolean(res.body.error.details.retryable)
}

/** The first open market with both sides quoted, and its YES book. */
const aMarket = (index = 0) =>
  Effect.gen(function* () {
    const markets = (yield* request("GET", "/venues/sim/markets?limit=100")).body.data
    const market = markets.filter((m: any) => m.best_bid !== null && m.best_ask !== null)[index]
    const book = (yield* request("GET", `/venues/sim/markets/${market.id}/book?depth=10`)).body
    return { id: market.id as string, book }
  })

const simOrders = Effect.map(VenueGateway, (g) => (g.venue("sim") as SimVenue).exchange.openOrders().length)

const settle = Effect.forEach(Array.from({ length: 20 }), () => Effect.yieldNow())

describe("plain orders on the sim venue", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("a limit below the touch rests; the record has every field of the interface", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket()
        const bid = cents(book.best_bid)
        const res = yield* request("POST", "/trading/orders", {
          token,
          json: {
            market_id: id,
            side: "buy",
            type: "limit",
            amount: "5",
            price: price(bid - 3),
            book: "b1",
            tags: { k: 1 }
          }
        })
        assert.strictEqual(res.status, 201, res.text)
        const o = res.body
        assert.deepStrictEqual(
          Object.keys(o).sort(),
          [
            "account",
            "amount",
            "average_price",
            "book",
            "client_order_id",
            "cost",
            "created_at",
            "expires_at",
            "fee",
            "fee_currency",
            "filled",
            "held_by",
            "id",
            "info",
            "last_fill_amount",
            "last_fill_price",
            "market_id",
            "notes" in o ? "notes" : "parent_id",
            "parent_id",
            "post_only",
            "price",
            "queue_priority_preserved",
            "reduce_only",
            "remaining",
            "side",
            "status",
            "stop_price",
            "tags",
            "time_in_force",
            "trader",
            "type",
            "updated_at",
            "venue"
          ]
            .filter((v, i, a) => a.indexOf(v) === i)
            .sort()
        )
        assert.strictEqual(o.status, "open")
        assert.strictEqual(o.held_by, "venue")
        assert.strictEqual(o.filled, "0")
        assert.strictEqual(o.remaining, "5")
        assert.strictEqual(o.price, price(bid - 3))
        assert.isNull(o.parent_id)
        assert.deepStrictEqual(o.account, { venue: "sim", name: "default", subaccount: null })
        assert.strictEqual(o.time_in_force, "gtc")
        const listed = yield* request("GET", "/trading/orders?status=open", { token })
        assert.isTrue(listed.body.data.some((x: any) => x.id === o.id))
        const one = yield* request("GET", `/trading/orders/${o.id}`, { token })
        assert.deepStrictEqual(one.body, o)
      })
    )

    it.effect("a limit that crosses fills at the resting price and pays the taker fee", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket(1)
        const ask = book.asks[0]
        const amount = Math.min(3, Number(ask.size))
        const res = yield* request("POST", "/trading/orders", {
          token,
          json: {
            market_id: id,
            side: "buy",
            type: "limit",
            amount: String(amount),
            price: price(cents(ask.price) + 2)
          }
        })
        assert.strictEqual(res.status, 201, res.text)
        assert.strictEqual(res.body.status, "closed")
        assert.strictEqual(res.body.filled, String(amount))
        assert.strictEqual(res.body.average_price, ask.price)
        const expectedFee = F.format(
          F.roundTo(
            F.mul(F.mul(F.of("0.07"), F.fromInt(amount)), F.mul(F.of(ask.price), F.sub(F.ONE, F.of(ask.price))), "up"),
            F.of("0.01"),
            "up"
          )
        )
        assert.strictEqual(res.body.fee, expectedFee)
        const fills = yield* request("GET", `/trading/fills?order_id=${res.body.id}`, { token })
        assert.strictEqual(fills.body.count, 1)
        assert.strictEqual(fills.body.data[0].liquidity, "taker")
        assert.strictEqual(fills.body.data[0].price, ask.price)
      })
    )

    it.effect("a partial fill leaves the rest resting; cancel ends it with filled kept", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket(2)
        const ask = book.asks[0]
        const amount = Number(ask.size) + 5
        const res = yield* request("POST", "/trading/orders", {
          token,
          json: { market_id: id, side: "buy", type: "limit", amount: String(amount), price: ask.price }
        })
        assert.strictEqual(res.body.status, "open", res.text)
        assert.strictEqual(res.body.filled, ask.size)
        assert.strictEqual(res.body.remaining, "5")
        const canceled = yield* request("DELETE", `/trading/orders/${res.body.id}`, { token })
        assert.strictEqual(canceled.status, 200)
        assert.strictEqual(canceled.body.status, "canceled")
        assert.strictEqual(canceled.body.filled, ask.size)
      })
    )

    it.effect("PATCH keeps queue priority on a size cut and loses it on a price change; cancel-all counts", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket(3)
        const bid = cents(book.best_bid)
        const place = (amount: string) =>
          request("POST", "/trading/orders", {
            token,
            json: { market_id: id, side: "buy", type: "limit", amount, price: price(bid - 2) }
          })
        const a = (yield* place("10")).body
        const cut = yield* request("PATCH", `/trading/orders/${a.id}`, { token, json: { amount: "6" } })
        assert.strictEqual(cut.status, 200, cut.text)
        assert.strictEqual(cut.body.amount, "6")
        assert.isTrue(cut.body.queue_priority_preserved)
        const moved = yield* request("PATCH", `/trading/orders/${a.id}`, { token, json: { price: price(bid - 3) } })
        assert.strictEqual(moved.body.price, price(bid - 3))
        assert.isFalse(moved.body.queue_priority_preserved)
        yield* place("2")
        const all = yield* request("DELETE", `/trading/orders?market_id=${id}`, { token })
        assert.strictEqual(all.status, 200)
        assert.strictEqual(all.body.canceled, 2)
        const open = yield* request("GET", `/trading/orders?market_id=${id}&status=open`, { token })
        assert.strictEqual(open.body.count, 0)
      })
    )

    it.effect("the same client_order_id and body answers 200 with the first order; another body is 400", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket(4)
        const body = {
          market_id: id,
          side: "sell",
          type: "limit",
          amount: "4",
          price: price(cents(book.best_ask) + 3),
          client_order_id: "mine-1"
        }
        const before = yield* simOrders
        const first = yield* request("POST", "/trading/orders", { token, json: body })
        const again = yield* request("POST", "/trading/orders", { token, json: body })
        assert.strictEqual(first.status, 201)
        assert.strictEqual(again.status, 200)
        assert.strictEqual(again.body.id, first.body.id)
        assert.strictEqual(yield* simOrders, before + 1)
        const other = yield* request("POST", "/trading/orders", { token, json: { ...body, amount: "5" } })
        assertError(other, 400, "validation_error")
        assert.strictEqual(other.body.error.details.errors[0].field, "client_order_id")
      })
    )

    it.effect("an order placed without a client_order_id has its id as one: naming it for another order is a 400", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket(4)
        const body = { market_id: id, side: "sell", type: "limit", amount: "2", price: price(cents(book.best_ask) + 4) }
        const plain = (yield* request("POST", "/trading/orders", { token, json: body })).body
        assert.strictEqual(plain.client_order_id, plain.id)
        const stop = (yield* request("POST", "/trading/orders", {
          token,
          json: { market_id: id, side: "sell", type: "stop_market", amount: "1", stop_price: "0.01" }
        })).body
        assert.strictEqual(stop.client_order_id, stop.id)
        const before = yield* simOrders
        for (const taken of [plain.id, stop.id]) {
          const reused = yield* request("POST", "/trading/orders", {
            token,
            json: { ...body, client_order_id: taken }
          })
          assertError(reused, 400, "validation_error")
          assert.strictEqual(reused.body.error.details.errors[0].field, "client_order_id")
        }
        assert.strictEqual(yield* simOrders, before)
        // Each is still there, as it was.
        const read = yield* request("GET", `/trading/orders/${stop.id}`, { token })
        assert.strictEqual(read.body.status, "waiting")
      })
    )

    it.effect(
      "a parent's child is nobody's request: its client_order_id, even with the child's very body, is a 400",
      () =>
        Effect.gen(function* () {
          const token = yield* OwnerToken
          const { id, book } = yield* aMarket(4)
          const iceberg = (yield* request("POST", "/trading/orders", {
            token,
            json: {
              market_id: id,
              side: "sell",
              type: "iceberg",
              amount: "6",
              price: price(cents(book.best_ask) + 5),
              params: { display: "2" }
            }
          })).body
          const children = yield* request("GET", `/trading/orders?parent_id=${iceberg.id}`, { token })
          assert.strictEqual(children.body.count, 1, children.text)
          const child = children.body.data[0]
          const before = yield* simOrders
          const reused = yield* request("POST", "/trading/orders", {
            token,
            json: {
              market_id: child.market_id,
              side: child.side,
              type: child.type,
              amount: child.amount,
              price: child.price,
              client_order_id: child.client_order_id
            }
          })
          assertError(reused, 400, "validation_error")
          assert.strictEqual(reused.body.error.details.errors[0].field, "client_order_id")
          assert.strictEqual(yield* simOrders, before)
        })
    )

    it.effect("bad orders get the contract's errors and never reach the venue", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        yield* TestClock.adjust("10 seconds")
        const { id } = yield* aMarket()
        const base = { market_id: id, side: "buy", type: "limit", amount: "1", price: "0.3" }
        const before = yield* simOrders
        const off = yield* request("POST", "/trading/orders", { token, json: { ...base, price: "0.305" } })
        assertError(off, 400, "validation_error")
        assert.include(off.body.error.message, "0.3 or 0.31")
        for (const [patch, field] of [
          [{ amount: "0" }, "amount"],
          [{ amount: "-1" }, "amount"],
          [{ amount: "1.5" }, "amount"],
          [{ price: "1" }, "price"],
          [{ type: "market", price: undefined }, "price"],
          [{ type: "market", post_only: true }, "post_only"],
          [{ time_in_force: "gtd" }, "expires_at"],
          [{ expires_at: 1000 }, "expires_at"],
          [{ reduce_only: true }, "reduce_only"]
        ] as const) {
          const res = yield* request("POST", "/trading/orders", { token, json: { ...base, ...patch } })
          assertError(res, 400, "validation_error")
          assert.strictEqual(res.body.error.details.errors[0].field, field, JSON.stringify(patch))
        }
        assertError(
          yield* request("POST", "/trading/orders", { token, json: { ...base, market_id: "sim:NOPE" } }),
          404,
          "market_not_found"
        )
        assertError(
          yield* request("POST", "/trading/orders", { token, json: { ...base, market_id: "nasdaq:X" } }),
          400,
          "unknown_venue"
        )
        // a market that no longer trades is the contract's 409, rule market_halted, on every venue
        const closed = (yield* request("GET", "/venues/sim/markets?status=closed")).body.data[0].id
        const refused = yield* request("POST", "/trading/orders", { token, json: { ...base, market_id: closed } })
        assertError(refused, 409, "risk_rejected")
        assert.strictEqual(refused.body.error.details.rule, "market_halted")
        assert.strictEqual(refused.body.error.details.venue, "sim")
        const number = yield* request("POST", "/trading/orders", { token, json: { ...base, amount: 1 } })
        assertError(number, 422, "validation_error")
        assert.strictEqual(number.body.error.details.errors[0].field, "amount")
        assert.strictEqual(yield* simOrders, before)
      })
    )
  })
})

describe("ledger", () => {
  it.layer(TestServerLive)((it) => {
    it.effect("positions, balances and P&L agree with the fills to the last decimal", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const { id, book } = yield* aMarket()
        const buy = yield* request("POST", "/trading/orders", {
          token,
          json: { market_id: id, side: "buy", type: "limit", amount: "8", price: price(cents(book.best_ask) + 3) }
        })
        assert.strictEqual(buy.body.status, "closed", buy.text)
        // Resting sells near the touch fill as simulated takers arrive.
        const sell = yield* request("POST", "/trading/orders", {
          token,
          json: { market_id: id, side: "sell", type: "limit", amount: "12", price: book.best_ask }
        })
        assert.strictEqual(sell.status, 201, sell.text)
        for (let i = 0; i < 120; i++) {
          yield* TestClock.adjust("1 second")
          yield* settle
        }
        const fills = (yield* request("GET", "/trading/fills?limit=1000", { token })).body.data
        assert.isAbove(fills.length, 1)
        let contracts = F.ZERO
        let cash = F.of("10000")
        let fees = F.ZERO
        for (const f of [...fills].reverse()) {
          const amount = F.of(f.amount)
          const p = F.of(f.price)
          const before = contracts
          contracts = F.add(contracts, f.side === "buy" ? amount : F.neg(amount))
          fees = F.add(fees, F.of(f.fee))
          // Buying YES pays p (or gets 1 − p back for NO it closes); selling gets p back (or pays 1 − p for NO).
          const closing =
            before === 0 || before > 0 === (f.side === "buy") ? F.ZERO : F.min(Math.abs(before) as F.Fixed, amount)
          const opening = F.sub(amount, closing)
          const q = F.sub(F.ONE, p)
          cash = F.sub(cash, F.of(f.fee))
          cash =
            f.side === "buy"
              ? F.sub(F.add(cash, F.mul(q, closing)), F.mul(p, opening))
              : F.sub(F.add(cash, F.mul(p, closing)), F.mul(q, opening))
        }
        const positions = (yield* request("GET", "/trading/positions", { token })).body.data
        const position = positions.find((p: any) => p.market_id === id)
        assert.strictEqual(position.contracts, F.format(contracts))
        assert.strictEqual(position.fees, F.format(fees))
        const orders = (yield* request("GET", "/trading/orders?status=open", { token })).body.data
        let locked = F.ZERO
        for (const o of orders) {
          const remaining = F.of(o.remaining)
          locked = F.add(locked, F.mul(o.side === "buy" ? F.of(o.price) : F.sub(F.ONE, F.of(o.price)), remaining))
        }
        const balance = (yield* request("GET", "/trading/balances", { token })).body.data[0]
        assert.strictEqual(balance.cash, F.format(cash))
        assert.strictEqual(balance.locked, F.format(locked))
        assert.strictEqual(balance.available, F.format(F.sub(cash, locked)))
        // A fair value marks the position; P&L at every level agrees with the position's numbers.
        yield* request("PUT", "/trading/fair-values", { token, json: { values: { [id]: "0.5" } } })
        const marked = (yield* request("GET", "/trading/positions", { token })).body.data.find(
          (p: any) => p.market_id === id
        )
        assert.strictEqual(marked.mark, "0.5")
        assert.strictEqual(marked.mark_source, "fair_value")
        const expectedU =
          contracts === 0
            ? F.ZERO
            : F.mul(
                contracts > 0
                  ? F.sub(F.of("0.5"), F.of(marked.average_price))
                  : F.sub(F.of(marked.average_price), F.of("0.5")),
                Math.abs(contracts) as F.Fixed
              )
        assert.strictEqual(marked.unrealized_pnl, F.format(expectedU))
        const account = (yield* request("GET", "/trading/pnl?level=account", { token })).body.data[0]
        assert.strictEqual(account.realized, marked.realized_pnl)
        assert.strictEqual(account.unrealized, marked.unrealized_pnl)
        assert.strictEqual(account.fees, marked.fees)
        assert.strictEqual(account.net, F.format(F.sub(F.add(F.of(marked.realized_pnl), expectedU), F.of(marked.fees))))
        const byMarket = (yield* request("GET", "/trading/pnl?level=market", { token })).body.data
        assert.deepStrictEqual(
          byMarket.map((r: any) => r.key),
          [id]
        )
      })
    )
  })
})
