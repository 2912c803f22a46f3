/** Settlement through the server: a sim market resolves; positions, balances, P&L and the events socket show it. */
import { assert, describe, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import WebSocket from "ws"
import * as F from "../../src/Domain/Fixed.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import { OwnerToken, request, testServer } from "./TestServer.ts"

interface Frame {
  readonly seq: number
  readonly kind: string
  readonly payload: any
}

/** The sim moves once an hour: the test alone trades. Each sim venue has its paper account. */
const server = testServer({ simStepMs: 3_600_000, paper: { cash: "500" } })

const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

const call = (method: "GET" | "POST", path: string, json?: unknown) =>
  Effect.flatMap(OwnerToken, (token) => request(method, path, json === undefined ? { token } : { token, json }))

/** Opens the events socket from `since` and collects `count` frames of `kinds`. */
const frames = (since: number, kinds: string, count: number) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    const port = ((yield* HttpServer.HttpServer).address as HttpServer.TcpAddress).port
    return yield* Effect.async<Array<Frame>>((resume) => {
      const got: Array<Frame> = []
      const socket = new WebSocket(`ws://127.0.0.1:${port}/trading/ws/events?since=${since}&kinds=${kinds}`, {
        headers: { authorization: `Bearer ${token}` }
      })
      socket.on("message", (data) => {
        got.push(JSON.parse(String(data)))
        if (got.length >= count) {
          socket.close()
          resume(Effect.succeed(got))
        }
      })
      return Effect.sync(() => socket.close())
    })
  })

describe("settlement through the server", () => {
  it.effect(
    "a sim market that resolves YES settles sim:default and sim:paper: positions, balances, P&L, events socket",
    () =>
      Effect.gen(function* () {
        const sim = (yield* VenueGateway).venue("sim") as SimVenue
        const market = (yield* call("GET", "/venues/sim/markets?status=open&limit=1")).body.data[0]
        const nativeId = market.id.slice("sim:".length)
        for (const account of ["sim:default", "sim:paper"]) {
          const bought = yield* call("POST", "/trading/orders", {
            account,
            market_id: market.id,
            side: "sell",
            type: "market",
            amount: "3",
            price: "0.01"
          })
          assert.strictEqual(bought.status, 201, bought.text)
          const resting = yield* call("POST", "/trading/orders", {
            account,
            market_id: market.id,
            side: "buy",
            type: "limit",
            amount: "1",
            price: "0.01"
          })
          assert.strictEqual(resting.status, 201, resting.text)
        }
        const seq = (yield* call("GET", "/trading/status")).body.journal_seq as number
        const before = new Map<string, any>()
        for (const account of ["sim:default", "sim:paper"]) {
          const p = (yield* call("GET", `/trading/positions?account=${account}`)).body.data.find(
            (r: any) => r.market_id === market.id
          )
          assert.strictEqual(p.contracts, "-3", account)
          assert.strictEqual(p.settled, null)
          before.set(account, {
            position: p,
            balance: (yield* call("GET", `/trading/balances?account=${account}`)).body.data[0]
          })
        }

        // YES wins: the three NO contracts each account holds pay nothing.
        const socket = yield* Effect.fork(frames(seq, "position,order", 4))
        yield* sim.resolve(nativeId, F.ONE)
        yield* settle
        const seen = yield* socket.await.pipe(Effect.flatten)
        const settled = seen.filter((f) => f.kind === "position.settled")
        assert.deepStrictEqual(settled.map((f) => f.payload.account).sort(), ["sim:default", "sim:paper"])
        // Each resting bid was canceled by its venue before its account settled.
        for (const s of settled) {
          const cancel = seen.find(
            (f) => f.kind === "order.canceled" && f.payload.account.name === s.payload.account.split(":")[1]
          )
          assert.isDefined(cancel, JSON.stringify(seen.map((f) => f.kind)))
          assert.isBelow(cancel!.seq, s.seq)
        }

        for (const s of settled) {
          const account = s.payload.account as string
          const was = before.get(account)
          const average = F.of(was.position.average_price)
          // A NO contract sold at YES price a cost 1 − a and pays 1 − 1 = 0.
          const loss = F.neg(F.mul(F.sub(F.ONE, average), F.fromInt(3)))
          assert.deepStrictEqual(s.payload, {
            account,
            market_id: market.id,
            contracts: "-3",
            side: "no",
            average_price: was.position.average_price,
            payout: "1",
            realized_pnl: F.format(loss),
            cash_change: "0",
            ts: s.payload.ts
          })
          const p = (yield* call("GET", `/trading/positions?account=${account}`)).body.data.find(
            (r: any) => r.market_id === market.id
          )
          assert.strictEqual(p.contracts, "0")
          assert.strictEqual(p.side, null)
          assert.strictEqual(p.unrealized_pnl, "0")
          assert.strictEqual(p.realized_pnl, F.format(F.add(F.of(was.position.realized_pnl), loss)))
          // The sim pays a settlement itself: nothing waits to be redeemed.
          assert.deepStrictEqual(p.settled, {
            payout: "1",
            contracts: "-3",
            realized_pnl: F.format(loss),
            ts: s.payload.ts,
            redeemable: false,
            redeemable_amount: "0",
            redeemed_at: null
          })
          const balance = (yield* call("GET", `/trading/balances?account=${account}`)).body.data[0]
          // Nothing paid in; the bid's collateral is free again.
          assert.strictEqual(balance.cash, was.balance.cash)
          assert.strictEqual(balance.locked, "0")
          const pnl = (yield* call("GET", `/trading/pnl?account=${account}&level=market`)).body.data.find(
            (r: any) => r.key === market.id
          )
          assert.strictEqual(pnl.settled, F.format(loss))
          assert.strictEqual(pnl.realized, p.realized_pnl)
          assert.strictEqual(pnl.unrealized, "0")
        }
        const shown = (yield* call("GET", `/venues/sim/markets/${market.id}`)).body
        assert.strictEqual(shown.status, "settled")
        // A settled market takes no order.
        const late = yield* call("POST", "/trading/orders", {
          market_id: market.id,
          side: "buy",
          type: "limit",
          amount: "1",
          price: "0.5"
        })
        assert.strictEqual(late.status, 409, late.text)
        assert.strictEqual(late.body.error.details.rule, "market_halted")
      }).pipe(Effect.provide(server)),
    30_000
  )
})
