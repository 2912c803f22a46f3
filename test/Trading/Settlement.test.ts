/** Settlement: money is conserved when a market resolves, each settlement books once, across restarts too. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import { Context, Effect, Exit, Layer, Queue, Scope, TestContext } from "effect"
import * as F from "../../src/Domain/Fixed.ts"
import { submitOrder } from "../../src/Orders.ts"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { type Venue, type VenueEvent, VenueGateway } from "../../src/Services/VenueGateway.ts"
import { authLayer, serverServices, venuesLayer } from "../../src/Assembly.ts"
import { Desk } from "../../src/Trading/Desk.ts"
import { type Fill, Ledger, positionOfRow, positionRow, redeemableAmount } from "../../src/Trading/Ledger.ts"
import { settlementOf } from "../../src/Trading/Settlement.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"

const ACCOUNT = "sim:default"

const fillArb = fc.record({
  market: fc.integer({ min: 0, max: 2 }),
  side: fc.constantFrom("buy" as const, "sell" as const),
  price: fc.integer({ min: 1, max: 99 }),
  amount: fc.integer({ min: 1, max: 20 }),
  fee: fc.integer({ min: 0, max: 3 })
})

const fillsOf = (specs: ReadonlyArray<typeof fillArb extends fc.Arbitrary<infer T> ? T : never>): Array<Fill> =>
  specs.map((s, i) => ({
    id: `f${i}`,
    orderId: `o_${i}`,
    clientOrderId: `c${i}`,
    parentId: null,
    account: ACCOUNT,
    marketId: `sim:m${s.market}`,
    side: s.side,
    price: F.of(`0.${String(s.price).padStart(2, "0")}`),
    amount: F.fromInt(s.amount),
    fee: F.of(`0.0${s.fee}`),
    liquidity: "taker",
    tradeId: `t${i}`,
    book: "",
    ts: i
  }))

/** A payout: 0, 1, or a figure of the venue's on the cent grid. */
const payoutArb = fc.oneof(
  fc.constant(F.ZERO),
  fc.constant(F.ONE),
  fc.integer({ min: 1, max: 99 }).map((c) => (c * 10_000) as F.Fixed)
)

describe("settlement in the ledger", () => {
  it("lists every position as it is now: the same list while none changes, a new one after each change", () => {
    fc.assert(
      fc.property(fc.array(fillArb, { maxLength: 30 }), payoutArb, (specs, payout) => {
        const ledger = new Ledger(() => F.of("1000"))
        let last = ledger.allPositions()
        for (const f of fillsOf(specs)) {
          assert.strictEqual(ledger.allPositions(), last)
          const after = ledger.record(f)
          const now = ledger.allPositions()
          assert.notStrictEqual(now, last)
          assert.include(now, after)
          last = now
        }
        const settled = ledger.settle(ACCOUNT, "sim:m0", payout, 1000)
        if (settled !== undefined) assert.include(ledger.allPositions(), settled.position)
        else assert.strictEqual(ledger.allPositions(), last)
      })
    )
  })

  it("conserves money: cash grows by what the contracts pay, realized P&L by that less their cost, once", () => {
    fc.assert(
      fc.property(
        fc.array(fillArb, { maxLength: 40 }),
        payoutArb,
        fc.integer({ min: 0, max: 2 }),
        (specs, payout, m) => {
          const ledger = new Ledger(() => F.of("1000"))
          for (const f of fillsOf(specs)) ledger.record(f)
          const marketId = `sim:m${m}`
          const before = ledger.position(ACCOUNT, marketId)
          const cashBefore = ledger.cashOf(ACCOUNT)
          const others = ledger.allPositions().filter((p) => p.marketId !== marketId)
          const s = ledger.settle(ACCOUNT, marketId, payout, 1000)
          const q = before.contracts
          if (q === 0) {
            assert.isUndefined(s)
            assert.strictEqual(ledger.cashOf(ACCOUNT), cashBefore)
            return
          }
          assert.isDefined(s)
          const n = Math.abs(q) as F.Fixed
          const average = before.averagePrice!
          // A YES contract pays the payout, a NO contract 1 − payout; its cost basis is the average (1 − it for NO).
          const value = q > 0 ? F.mul(n, payout) : F.mul(n, F.sub(F.ONE, payout))
          const basis = q > 0 ? F.mul(n, average) : F.mul(n, F.sub(F.ONE, average))
          assert.strictEqual(ledger.cashOf(ACCOUNT), F.add(cashBefore, value))
          assert.strictEqual(s!.cashChange, value)
          assert.strictEqual(s!.realized, F.sub(value, basis))
          const after = ledger.position(ACCOUNT, marketId)
          assert.strictEqual(after.contracts, F.ZERO)
          assert.strictEqual(after.realized, F.add(before.realized, F.sub(value, basis)))
          assert.strictEqual(after.fees, before.fees)
          assert.deepStrictEqual(after.settled, { payout, contracts: q, realized: F.sub(value, basis), ts: 1000 })
          // Other markets are untouched.
          assert.deepStrictEqual(
            ledger.allPositions().filter((p) => p.marketId !== marketId),
            others
          )
          // A repeat books nothing, even read back from the stored row after a restart.
          assert.isUndefined(ledger.settle(ACCOUNT, marketId, payout, 2000))
          const restored = new Ledger(() => F.of("1000"))
          for (const p of ledger.allPositions()) {
            restored.restore(positionOfRow(p.account, p.marketId, JSON.parse(JSON.stringify(positionRow(p)))))
          }
          restored.restoreCash(ACCOUNT, ledger.cashMoved(ACCOUNT))
          assert.deepStrictEqual(restored.allPositions(), ledger.allPositions())
          assert.isUndefined(restored.settle(ACCOUNT, marketId, payout, 3000))
          assert.strictEqual(restored.cashOf(ACCOUNT), ledger.cashOf(ACCOUNT))
        }
      ),
      { seed: 30, numRuns: 400 }
    )
  })

  it("equity at the payout is the same before and after settling: cash + contracts at payout", () => {
    fc.assert(
      fc.property(fc.array(fillArb, { minLength: 1, maxLength: 40 }), payoutArb, (specs, payout) => {
        const ledger = new Ledger(() => F.of("1000"))
        for (const f of fillsOf(specs)) ledger.record(f)
        const worth = () =>
          ledger
            .allPositions()
            .reduce(
              (sum, p) =>
                F.add(
                  sum,
                  p.contracts > 0 ? F.mul(p.contracts, payout) : F.mul(F.neg(p.contracts), F.sub(F.ONE, payout))
                ),
              ledger.cashOf(ACCOUNT)
            )
        const before = worth()
        for (const m of [0, 1, 2]) ledger.settle(ACCOUNT, `sim:m${m}`, payout, 5)
        assert.strictEqual(worth(), before)
        assert.strictEqual(ledger.cashOf(ACCOUNT), before)
        for (const p of ledger.allPositions()) assert.strictEqual(p.contracts, F.ZERO)
      }),
      { seed: 31, numRuns: 300 }
    )
  })

  it("on a venue that pays once redeemed: what waits is what the settlement paid, until redeemed once, across restarts", () => {
    fc.assert(
      fc.property(
        fc.array(fillArb, { maxLength: 40 }),
        payoutArb,
        fc.integer({ min: 0, max: 2 }),
        (specs, payout, m) => {
          const ledger = new Ledger(() => F.of("1000"))
          for (const f of fillsOf(specs)) ledger.record(f)
          const marketId = `sim:m${m}`
          const s = ledger.settle(ACCOUNT, marketId, payout, 1000, true)
          if (s === undefined) return
          const settled = ledger.position(ACCOUNT, marketId).settled
          // The amount the holder can redeem is the cash the settlement booked: payout × contracts of the side held.
          assert.strictEqual(redeemableAmount(settled), s.cashChange)
          assert.deepStrictEqual(settled!.redemption, { amount: s.cashChange, redeemedAt: null })
          const reread = () => {
            const restored = new Ledger(() => F.of("1000"))
            for (const p of ledger.allPositions()) {
              restored.restore(positionOfRow(p.account, p.marketId, JSON.parse(JSON.stringify(positionRow(p)))))
            }
            return restored
          }
          assert.deepStrictEqual(reread().allPositions(), ledger.allPositions())
          const cash = ledger.cashOf(ACCOUNT)
          const redeemed = ledger.redeem(ACCOUNT, marketId, 2000)
          if (s.cashChange === 0) {
            // A losing side has nothing to redeem: it never waits, and is never marked redeemed.
            assert.isUndefined(redeemed)
            return
          }
          assert.deepStrictEqual(redeemed!.settled!.redemption, { amount: s.cashChange, redeemedAt: 2000 })
          assert.strictEqual(redeemableAmount(redeemed!.settled), F.ZERO)
          // Redeeming moves no cash (the ledger booked it at settlement) and happens once, after a restart too.
          assert.strictEqual(ledger.cashOf(ACCOUNT), cash)
          assert.strictEqual(redeemed!.realized, s.position.realized)
          assert.isUndefined(ledger.redeem(ACCOUNT, marketId, 3000))
          const restored = reread()
          assert.deepStrictEqual(restored.allPositions(), ledger.allPositions())
          assert.isUndefined(restored.redeem(ACCOUNT, marketId, 3000))
        }
      ),
      { seed: 32, numRuns: 300 }
    )
  })

  it("a flat position settles nothing; one opened again after settling settles what was added", () => {
    const p = {
      account: ACCOUNT,
      marketId: "sim:x",
      contracts: F.ZERO,
      averagePrice: null,
      realized: F.ZERO,
      fees: F.ZERO
    }
    assert.isUndefined(settlementOf(p, F.ONE, 1))
    const first = settlementOf({ ...p, contracts: F.fromInt(3), averagePrice: F.of("0.4") }, F.ONE, 1)!
    assert.strictEqual(F.format(first.realized), "1.8")
    const again = settlementOf({ ...first.position, contracts: F.fromInt(-2), averagePrice: F.of("0.7") }, F.ONE, 2)!
    // Two NO contracts sold at 0.7 (cost 0.3 each) pay nothing: −0.6.
    assert.strictEqual(F.format(again.realized), "-0.6")
    assert.strictEqual(F.format(again.cashChange), "0")
    assert.deepStrictEqual(again.position.settled, {
      payout: F.ONE,
      contracts: F.fromInt(1),
      realized: F.of("1.2"),
      ts: 2
    })
  })
})

/** Lets the desk's and the venue's fibers run what is started. */
const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

/** One run of the server on a database file with the venues given; the run ends with `use`. */
const life = <A>(file: string, venues: Layer.Layer<VenueGateway>, use: Effect.Effect<A, unknown, any>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const store = OrderStore.layerSql.pipe(Layer.provide(engineDatabase(file)))
    const context = yield* Layer.buildWithScope(
      serverServices({ seed: 5, store, auth: authLayer(":memory:"), venues }),
      scope
    )
    yield* settle
    const result = yield* Effect.exit(use.pipe(Effect.provide(context)))
    yield* settle
    return yield* result
  })

/** The sim venue built once, outliving server runs (a venue keeps what it did while the server was down). */
const lastingSim = Effect.gen(function* () {
  const scope = yield* Effect.acquireRelease(Scope.make(), (s) => Scope.close(s, Exit.void))
  const built = yield* Layer.buildWithScope(venuesLayer({ seed: 5 }), scope)
  const sim = Context.get(built, VenueGateway).venue("sim") as SimVenue
  return { sim, layer: (v: Venue = sim) => Layer.succeed(VenueGateway, VenueGateway.fromVenues([v])) }
})

const events = (kind: string) =>
  Effect.gen(function* () {
    const store = yield* OrderStore
    return yield* store.eventsAfter(0, 1_000_000, kind)
  })

/** Buys `amount` YES contracts at the touch and leaves a bid resting; answers the market and the resting order. */
const tradeIn = (sim: SimVenue, amount: number) =>
  Effect.gen(function* () {
    const market = (yield* sim.markets).filter((m) => m.status === "open")[0]!
    const marketId = `sim:${market.nativeId}`
    yield* submitOrder(
      { market_id: marketId, side: "buy", type: "market", amount: String(amount), price: "0.99" },
      ACCOUNT,
      "t"
    )
    const resting = yield* submitOrder(
      { market_id: marketId, side: "buy", type: "limit", amount: "2", price: "0.01" },
      ACCOUNT,
      "t"
    )
    return { nativeId: market.nativeId, marketId, resting: resting.order.id }
  })

const withDir = <A, E, R>(f: (file: string) => Effect.Effect<A, E, R>) =>
  Effect.scoped(
    Effect.acquireUseRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "settle-"))),
      (dir) => f(join(dir, "engine.db")),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    )
  )

describe("settlement through the desk on the sim venue", () => {
  it.effect(
    "a market that resolves YES closes the position at 1: cash, realized P&L, the event, the resting order canceled",
    () =>
      withDir((file) =>
        Effect.gen(function* () {
          const { sim, layer } = yield* lastingSim
          const seen = yield* life(
            file,
            layer(),
            Effect.gen(function* () {
              const desk = yield* Desk
              const { nativeId, marketId, resting } = yield* tradeIn(sim, 5)
              const held = (yield* desk.ledgerPositions).find((p) => p.marketId === marketId)!
              assert.strictEqual(held.contracts, F.fromInt(5))
              const [cashBefore] = yield* desk.balances([ACCOUNT])
              yield* sim.resolve(nativeId, F.ONE)
              yield* settle
              const after = (yield* desk.ledgerPositions).find((p) => p.marketId === marketId)!
              const [cashAfter] = yield* desk.balances([ACCOUNT])
              assert.strictEqual(after.contracts, F.ZERO)
              assert.strictEqual(cashAfter!.cash, F.add(cashBefore!.cash, F.fromInt(5)))
              const gain = F.mul(F.sub(F.ONE, held.averagePrice!), F.fromInt(5))
              assert.strictEqual(after.realized, F.add(held.realized, gain))
              assert.strictEqual(after.settled?.payout, F.ONE)
              // The venue canceled the bid resting in the market, and said so.
              assert.strictEqual((yield* desk.get(resting))!.status, "canceled")
              assert.strictEqual(cashAfter!.locked, F.ZERO)
              const settled = yield* events("position.settled")
              assert.strictEqual(settled.length, 1)
              assert.deepStrictEqual(settled[0]!.payload, {
                account: ACCOUNT,
                market_id: marketId,
                contracts: "5",
                side: "yes",
                average_price: F.format(held.averagePrice!),
                payout: "1",
                realized_pnl: F.format(gain),
                cash_change: "5",
                ts: settled[0]!.ts
              })
              // The order's cancel is journaled before the settlement.
              const canceled = (yield* events("order.canceled")).find((e) => e.key === resting)!
              assert.isBelow(canceled.seq, settled[0]!.seq)
              return { cash: cashAfter!.cash, positions: yield* desk.ledgerPositions }
            })
          )
          // A restart asks the venue what resolved since: the market is settled already, nothing is booked twice.
          yield* life(
            file,
            layer(),
            Effect.gen(function* () {
              const desk = yield* Desk
              assert.strictEqual((yield* events("position.settled")).length, 1)
              assert.strictEqual((yield* desk.balances([ACCOUNT]))[0]!.cash, seen.cash)
              assert.deepStrictEqual(yield* desk.ledgerPositions, seen.positions)
            })
          )
        })
      ).pipe(Effect.provide(TestContext.TestContext)),
    60_000
  )

  it.effect("a market that resolved while the server was down settles at the next start, once", () =>
    withDir((file) =>
      Effect.gen(function* () {
        const { sim, layer } = yield* lastingSim
        const { nativeId, marketId } = yield* life(file, layer(), tradeIn(sim, 3))
        // NO wins while nothing listens.
        yield* sim.resolve(nativeId, F.ZERO)
        for (let run = 0; run < 2; run++) {
          yield* life(
            file,
            layer(),
            Effect.gen(function* () {
              const desk = yield* Desk
              const p = (yield* desk.ledgerPositions).find((x) => x.marketId === marketId)!
              assert.strictEqual(p.contracts, F.ZERO)
              assert.strictEqual(p.settled?.payout, F.ZERO)
              const settled = yield* events("position.settled")
              assert.strictEqual(settled.length, 1)
              assert.strictEqual((settled[0]!.payload as { cash_change: string }).cash_change, "0")
              // The resting order the venue canceled at the resolution is canceled here too.
              const open = yield* desk.list({ status: ["open"] })
              assert.deepStrictEqual(
                open.map((o) => o.marketId),
                []
              )
            })
          )
        }
      })
    ).pipe(Effect.provide(TestContext.TestContext))
  )

  it.effect("a loss booked by a resolution today counts toward the daily loss limit", () =>
    withDir((file) =>
      Effect.gen(function* () {
        const { sim, layer } = yield* lastingSim
        const feed = yield* Queue.unbounded<VenueEvent>()
        const fed: Venue = { ...sim, subscribe: Effect.succeed(feed), settlementsSince: () => Effect.succeed([]) }
        yield* life(
          file,
          layer(fed),
          Effect.gen(function* () {
            const desk = yield* Desk
            const { nativeId, marketId } = yield* tradeIn(sim, 10)
            yield* desk.setRisk({ ...(yield* desk.risk).rules, daily_loss_limit: "1" }, "t")
            // NO wins: ten YES contracts bought at 0.1 or more are worth nothing.
            yield* Queue.offer(feed, { _tag: "Settled", nativeId, payout: F.ZERO, ts: 7 })
            yield* settle
            const p = (yield* desk.ledgerPositions).find((x) => x.marketId === marketId)!
            assert.isAtMost(p.settled!.realized, F.neg(F.ONE))
            const other = (yield* sim.markets).filter((m) => m.status === "open")[1]!
            const refused = yield* Effect.flip(
              submitOrder(
                { market_id: `sim:${other.nativeId}`, side: "buy", type: "limit", amount: "1", price: "0.01" },
                ACCOUNT,
                "t"
              )
            )
            assert.strictEqual(refused.code, "risk_rejected")
            assert.strictEqual((refused.details as { rule?: string }).rule, "daily_loss_limit")
          })
        )
      })
    ).pipe(Effect.provide(TestContext.TestContext))
  )

  it.effect("a venue that reports the same resolution twice has it booked once", () =>
    withDir((file) =>
      Effect.gen(function* () {
        const { sim, layer } = yield* lastingSim
        const feed = yield* Queue.unbounded<VenueEvent>()
        const fed: Venue = { ...sim, subscribe: Effect.succeed(feed), settlementsSince: () => Effect.succeed([]) }
        yield* life(
          file,
          layer(fed),
          Effect.gen(function* () {
            const desk = yield* Desk
            const { nativeId, marketId } = yield* tradeIn(sim, 4)
            const [before] = yield* desk.balances([ACCOUNT])
            const report: VenueEvent = { _tag: "Settled", nativeId, payout: F.of("0.25"), ts: 7 }
            yield* Queue.offerAll(feed, [report, report])
            yield* settle
            yield* Queue.offer(feed, report)
            yield* settle
            assert.strictEqual((yield* events("position.settled")).length, 1)
            const [after] = yield* desk.balances([ACCOUNT])
            assert.strictEqual(after!.cash, F.add(before!.cash, F.fromInt(1)))
            const p = (yield* desk.ledgerPositions).find((x) => x.marketId === marketId)!
            assert.strictEqual(p.settled?.payout, F.of("0.25"))
          })
        )
      })
    ).pipe(Effect.provide(TestContext.TestContext))
  )
})
