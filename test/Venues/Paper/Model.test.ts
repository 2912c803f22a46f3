/** The order model paper accounts match in: queue position behind displayed size, fills from trades, exact fees. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import type { Book, Side } from "../../../src/Domain/Market.ts"
import type { FeeRule, VenueEvent, VenueFill } from "../../../src/Services/VenueGateway.ts"
import { makeOrderModel, modelBook, type OrderModel } from "../../../src/Venues/Paper/Model.ts"
import { tradingFee } from "../../../src/Venues/Sim/Exchange.ts"

/** The sim's schedule: takers 0.07 × C × p × (1 − p), makers 0.01 of the same, each rounded up to the cent. */
const FEES: FeeRule = (price, amount, liquidity) =>
  tradingFee(liquidity === "taker" ? F.of("0.07") : F.of("0.01"), price, amount)

const model = () =>
  makeOrderModel({
    orderId: (n) => `paper-${n}`,
    tradeId: (nativeId, n) => `paper-${nativeId}-${n}`,
    fees: () => FEES
  })

const level = (price: string, size: string) => ({ price: F.of(price), size: F.of(size) })
const book = (bids: ReadonlyArray<[string, string]>, asks: ReadonlyArray<[string, string]>): Book => ({
  ts: 0,
  bids: bids.map(([p, s]) => level(p, s)),
  asks: asks.map(([p, s]) => level(p, s))
})

let seq = 0
const place = (m: OrderModel, b: Book, side: Side, price: string, amount: string) => {
  const answer = m.place(
    {
      clientOrderId: `c${++seq}`,
      nativeId: "M",
      side,
      price: F.of(price),
      amount: F.of(amount),
      timeInForce: "gtc",
      postOnly: false,
      reduceOnly: false,
      expiresAt: null
    },
    modelBook(b),
    1
  )
  if (answer._tag !== "Done") throw new Error(answer.refusal.reason)
  return answer
}

const fillsOf = (events: ReadonlyArray<VenueEvent>): Array<VenueFill> =>
  events.flatMap((e) => (e._tag === "Fill" ? [e.fill] : []))
const sum = (fills: ReadonlyArray<VenueFill>) => fills.reduce((a, f) => F.add(a, f.amount), F.ZERO)

describe("paper order model", () => {
  it("a resting buy fills only once trades have worked through the size shown ahead of it", () => {
    const m = model()
    const b = book(
      [
        ["0.40", "10"],
        ["0.39", "5"]
      ],
      [["0.45", "8"]]
    )
    const { order } = place(m, b, "buy", "0.40", "4")
    expect(order.ahead).toBe(F.of("10"))
    expect(fillsOf(m.traded("M", F.of("0.40"), F.of("6"), "sell", 2))).toEqual([])
    expect(fillsOf(m.traded("M", F.of("0.40"), F.of("3"), "sell", 3))).toEqual([])
    // One contract of the 10 ahead is left: a print of 3 fills 2 of ours.
    const fills = fillsOf(m.traded("M", F.of("0.40"), F.of("3"), "sell", 4))
    expect(fills.map((f) => [F.format(f.price), F.format(f.amount), f.liquidity])).toEqual([["0.4", "2", "maker"]])
    // A print that lifts asks (taker buy) never reaches a resting buy.
    expect(fillsOf(m.traded("M", F.of("0.40"), F.of("50"), "buy", 5))).toEqual([])
  })

  it("a level thinning out ahead moves the order up; a print then fills it", () => {
    const m = model()
    const b = book([["0.40", "10"]], [["0.45", "8"]])
    place(m, b, "buy", "0.40", "4")
    // Others cancel 8 of the 10 ahead: the book shows 2 at the level.
    expect(fillsOf(m.bookChanged("M", modelBook(book([["0.40", "2"]], [["0.45", "8"]])), 2))).toEqual([])
    expect(m.get("paper-1")!.ahead).toBe(F.of("2"))
    // The level growing again (others joining behind) leaves the order where it was.
    m.bookChanged("M", modelBook(book([["0.40", "30"]], [["0.45", "8"]])), 3)
    expect(m.get("paper-1")!.ahead).toBe(F.of("2"))
    expect(sum(fillsOf(m.traded("M", F.of("0.40"), F.of("5"), "sell", 4)))).toBe(F.of("3"))
  })

  it("a book read before an order took its place leaves that order alone", () => {
    const m = model()
    place(m, book([["0.40", "10"]], [["0.45", "8"]]), "buy", "0.40", "4")
    // Read at 0, before the order queued at 1: neither its thin level nor its crossing ask count for it.
    expect(
      fillsOf(m.bookChanged("M", modelBook(book([["0.40", "2"]], [["0.40", "5"]])), 5, undefined, undefined, 0))
    ).toEqual([])
    expect(m.get("paper-1")!.ahead).toBe(F.of("10"))
    // Read at 1 or later, they do.
    m.bookChanged("M", modelBook(book([["0.40", "2"]], [["0.45", "8"]])), 6, undefined, undefined, 1)
    expect(m.get("paper-1")!.ahead).toBe(F.of("2"))
    // Queued again by an amend at 7: a book read at 6 no longer counts for it.
    m.amend("paper-1", { price: F.of("0.41") }, modelBook(book([["0.41", "3"]], [["0.45", "8"]])), 7)
    m.bookChanged("M", modelBook(book([["0.41", "1"]], [["0.45", "8"]])), 8, undefined, undefined, 6)
    expect(m.get("paper-1")!.ahead).toBe(F.of("3"))
  })

  it("a book that moves through the price fills at the order's own price, as a maker", () => {
    const m = model()
    place(m, book([["0.40", "10"]], [["0.45", "8"]]), "buy", "0.40", "4")
    const fills = fillsOf(m.bookChanged("M", modelBook(book([["0.38", "1"]], [["0.39", "3"]])), 2))
    expect(fills.map((f) => [F.format(f.price), F.format(f.amount), f.liquidity])).toEqual([["0.4", "3", "maker"]])
  })

  it("a crossing order takes the displayed levels as a taker and pays the venue's taker fee, exactly", () => {
    const m = model()
    const b = book(
      [["0.40", "10"]],
      [
        ["0.45", "3"],
        ["0.47", "4"]
      ]
    )
    const { order, events } = place(m, b, "buy", "0.47", "5")
    const fills = fillsOf(events)
    expect(fills.map((f) => [F.format(f.price), F.format(f.amount), f.liquidity, F.format(f.fee)])).toEqual([
      // 0.07 × 3 × 0.45 × 0.55 = 0.051975 → 0.06; 0.07 × 2 × 0.47 × 0.53 = 0.034874 → 0.04
      ["0.45", "3", "taker", "0.06"],
      ["0.47", "2", "taker", "0.04"]
    ])
    expect(order.status).toBe("closed")
    expect(F.format(order.cost)).toBe("2.29")
    expect(F.format(order.fee)).toBe("0.1")
  })

  it("the venue's order ids and trade ids are its own", () => {
    const m = model()
    const { order, events } = place(m, book([], [["0.5", "1"]]), "buy", "0.5", "1")
    expect(order.id).toBe("paper-1")
    expect(fillsOf(events)[0]!.tradeId).toBe("paper-M-1")
  })

  it("property: a resting order never fills more than its amount, nor before the size ahead has traded", () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant("trade" as const),
        price: fc.integer({ min: 35, max: 45 }),
        amount: fc.integer({ min: 1, max: 12 }),
        taker: fc.constantFrom<Side>("buy", "sell")
      }),
      fc.record({ kind: fc.constant("shrink" as const), size: fc.integer({ min: 0, max: 20 }) })
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 1, max: 15 }),
        fc.array(step, { maxLength: 40 }),
        (shown, amount, steps) => {
          const m = model()
          const { order } = place(m, book([["0.40", String(shown)]], [["0.50", "5"]]), "buy", "0.40", String(amount))
          // The least size shown ahead of it, the volume printed at its level and the volume printed through it.
          let least = F.fromInt(shown)
          let atLevel = F.ZERO
          let through = F.ZERO
          let filled = F.ZERO
          let fees = F.ZERO
          for (const s of steps) {
            const price = (s.kind === "trade" ? s.price * 10_000 : 0) as F.Fixed
            const events =
              s.kind === "trade"
                ? m.traded("M", price, F.fromInt(s.amount), s.taker, 2)
                : m.bookChanged("M", modelBook(book([["0.40", String(s.size)]], [["0.50", "5"]])), 2)
            if (s.kind === "shrink") least = F.min(least, F.fromInt(s.size))
            if (s.kind === "trade" && s.taker === "sell" && s.price === 40)
              atLevel = F.add(atLevel, F.fromInt(s.amount))
            if (s.kind === "trade" && s.taker === "sell" && s.price < 40) through = F.add(through, F.fromInt(s.amount))
            for (const f of fillsOf(events)) {
              expect(f.price).toBe(F.of("0.40"))
              expect(f.liquidity).toBe("maker")
              expect(f.fee).toBe(FEES(f.price, f.amount, f.liquidity))
              filled = F.add(filled, f.amount)
              fees = F.add(fees, f.fee)
            }
            // Never more than its amount; never a print at its level before the size shown ahead of it has traded.
            expect(filled).toBeLessThanOrEqual(F.fromInt(amount))
            expect(filled).toBeLessThanOrEqual(F.add(through, F.max(F.ZERO, F.sub(atLevel, least))))
            expect(order.filled).toBe(filled)
            expect(order.fee).toBe(fees)
            expect(order.cost).toBe(F.mul(F.of("0.40"), filled))
          }
          expect(order.status).toBe(filled === F.fromInt(amount) ? "closed" : "open")
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("paper order model memory", () => {
  it("keeps every open order and the last 1,024 that finished: a long run does not grow with its history", () => {
    const m = model()
    const b = book([["0.40", "10"]], [["0.60", "10"]])
    const resting = place(m, b, "buy", "0.30", "1").order.id
    const ids: Array<string> = []
    for (let i = 0; i < 1_500; i++) {
      const id = place(m, b, "buy", "0.30", "1").order.id
      const canceled = m.cancel(id, 2)
      expect(canceled._tag === "Done" && canceled.order.status).toBe("canceled")
      ids.push(id)
    }
    expect(m.open().map((o) => o.id)).toEqual([resting])
    // The oldest finished ones are let go, the newest are still found (by id and by client id).
    expect(m.get(ids[0]!)).toBeUndefined()
    expect(m.get(ids[1_500 - 1_025]!)).toBeUndefined()
    expect(m.get(ids[1_500 - 1_024]!)?.status).toBe("canceled")
    const last = m.get(ids[ids.length - 1]!)!
    expect(m.byClientId(last.clientOrderId)?.id).toBe(last.id)
    // A late cancel of a kept one changes nothing; the resting order is untouched by all of it.
    const again = m.cancel(last.id, 3)
    expect(again._tag === "Done" && again.events).toEqual([])
    expect(m.get(resting)?.status).toBe("open")
  })
})
