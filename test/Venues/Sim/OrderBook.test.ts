// The sim order book: price-time priority, limit crossing, time in force, post-only, amend and expiry rules.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as F from "../../../src/Domain/Fixed.ts"
import type { Side } from "../../../src/Domain/Market.ts"
import { OrderBook, type OwnOrderInput } from "../../../src/Venues/Sim/OrderBook.ts"

const p = F.of
const n = F.fromInt
let seq = 0
const order = (side: Side, price: string, amount: number, more: Partial<OwnOrderInput> = {}): OwnOrderInput => {
  seq++
  return {
    id: `o${seq}`,
    clientOrderId: `c${seq}`,
    side,
    price: p(price),
    amount: n(amount),
    tif: "gtc",
    postOnly: false,
    expiresAt: null,
    ...more
  }
}

/** Maker quotes 0.49/0.48 bid and 0.51/0.52 ask, 100 each. */
const quoted = () => {
  const book = new OrderBook()
  book.setMakerQuotes(
    [
      { price: p("0.49"), size: n(100) },
      { price: p("0.48"), size: n(100) }
    ],
    [
      { price: p("0.51"), size: n(100) },
      { price: p("0.52"), size: n(100) }
    ]
  )
  return book
}

const sizes = (book: OrderBook, side: Side) => book.levels(side).map((l) => [F.format(l.price), F.format(l.size)])

describe("OrderBook priority", () => {
  it("queues an own order behind the displayed size; it fills only after that size trades", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.49", 10)).order
    expect(book.queueAhead(a.id)).toBe(n(100))
    const first = book.take("sell", p("0.49"), n(99))
    expect(first.every((m) => m.maker === null)).toBe(true)
    expect(a.filled).toBe(0)
    expect(book.queueAhead(a.id)).toBe(n(1))
    const second = book.take("sell", p("0.49"), n(3))
    expect(second.map((m) => [m.maker?.id ?? "mm", F.format(m.amount)])).toEqual([
      ["mm", "1"],
      [a.id, "2"]
    ])
    expect(a.filled).toBe(n(2))
    expect(sizes(book, "buy")).toEqual([
      ["0.49", "8"],
      ["0.48", "100"]
    ])
  })

  it("fills two own orders at one level in arrival order", () => {
    const book = quoted()
    const a = book.place(order("sell", "0.51", 10)).order
    const b = book.place(order("sell", "0.51", 10)).order
    const matches = book.take("buy", p("0.51"), n(115))
    expect(matches.map((m) => [m.maker?.id ?? "mm", F.format(m.amount), F.format(m.price)])).toEqual([
      ["mm", "100", "0.51"],
      [a.id, "10", "0.51"],
      [b.id, "5", "0.51"]
    ])
    expect(a.status).toBe("closed")
    expect(matches[1]!.makerClosed).toBe(true)
    expect(b.status).toBe("open")
    expect(b.filled).toBe(n(5))
  })

  it("new maker size joins behind own orders and shrinks are taken from the newest size first", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.49", 10)).order
    book.setMakerQuotes([{ price: p("0.49"), size: n(150) }], [{ price: p("0.51"), size: n(100) }])
    expect(book.queueAhead(a.id)).toBe(n(100))
    expect(book.makerSize("buy", p("0.49"))).toBe(n(150))
    book.setMakerQuotes([{ price: p("0.49"), size: n(40) }], [{ price: p("0.51"), size: n(100) }])
    expect(book.queueAhead(a.id)).toBe(n(40))
    book.setMakerQuotes([{ price: p("0.48"), size: n(40) }], [{ price: p("0.51"), size: n(100) }])
    expect(book.queueAhead(a.id)).toBe(0)
    expect(sizes(book, "buy")).toEqual([
      ["0.49", "10"],
      ["0.48", "40"]
    ])
  })
})

describe("OrderBook incoming orders", () => {
  it("a crossing limit fills at the resting prices, best first, and the rest rests", () => {
    const book = quoted()
    const r = book.place(order("buy", "0.52", 250))
    expect(r.reason).toBeNull()
    expect(r.matches.map((m) => [F.format(m.price), F.format(m.amount), m.takerSide])).toEqual([
      ["0.51", "100", "buy"],
      ["0.52", "100", "buy"]
    ])
    expect(r.matches.every((m) => m.taker === r.order)).toBe(true)
    expect(r.order.filled).toBe(n(200))
    expect(r.order.status).toBe("open")
    expect(sizes(book, "buy")[0]).toEqual(["0.52", "50"])
    expect(book.levels("sell")).toEqual([])
  })

  it("a limit does not trade through its price", () => {
    const book = quoted()
    const r = book.place(order("sell", "0.49", 300))
    expect(r.matches.map((m) => F.format(m.price))).toEqual(["0.49"])
    expect(sizes(book, "sell")).toEqual([
      ["0.49", "200"],
      ["0.51", "100"],
      ["0.52", "100"]
    ])
    expect(book.bestBid()).toBe(p("0.48"))
  })

  it("IOC cancels what it cannot fill", () => {
    const book = quoted()
    const r = book.place(order("buy", "0.51", 150, { tif: "ioc" }))
    expect(r.order.filled).toBe(n(100))
    expect(r.order.status).toBe("canceled")
    expect(sizes(book, "buy")).toEqual([
      ["0.49", "100"],
      ["0.48", "100"]
    ])
    expect(book.bestAsk()).toBe(p("0.52"))
  })

  it("FOK fills all or nothing", () => {
    const book = quoted()
    const before = book.version
    const no = book.place(order("buy", "0.51", 150, { tif: "fok" }))
    expect(no.reason).toBe("fok_not_filled")
    expect(no.order.status).toBe("rejected")
    expect(no.matches).toEqual([])
    expect(book.version).toBe(before)
    expect(sizes(book, "sell")).toEqual([
      ["0.51", "100"],
      ["0.52", "100"]
    ])
    const yes = book.place(order("buy", "0.52", 150, { tif: "fok" }))
    expect(yes.reason).toBeNull()
    expect(yes.order.status).toBe("closed")
    expect(yes.order.filled).toBe(n(150))
    expect(sizes(book, "sell")).toEqual([["0.52", "50"]])
  })

  it("post-only is refused when it would cross and rests otherwise", () => {
    const book = quoted()
    const no = book.place(order("buy", "0.51", 5, { postOnly: true }))
    expect(no.reason).toBe("post_only_would_cross")
    expect(no.order.filled).toBe(0)
    expect(book.bestAsk()).toBe(p("0.51"))
    const yes = book.place(order("buy", "0.50", 5, { postOnly: true }))
    expect(yes.reason).toBeNull()
    expect(book.bestBid()).toBe(p("0.50"))
  })

  it("cancel removes the order's size and the level when it empties", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.50", 7)).order
    expect(book.cancel(a.id)?.status).toBe("canceled")
    expect(book.bestBid()).toBe(p("0.49"))
    expect(book.cancel(a.id)).toBeUndefined()
  })
})

describe("OrderBook amend", () => {
  it("keeps queue priority only for a reduction at the same price", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.49", 10)).order
    const b = book.place(order("buy", "0.49", 10)).order
    const reduced = book.amend(a.id, { amount: n(6) })
    expect(reduced._tag).toBe("Amended")
    expect(a.queuePriorityPreserved).toBe(true)
    expect(book.queueAhead(a.id)).toBe(n(100))
    expect(book.queueAhead(b.id)).toBe(n(106))
    const grown = book.amend(a.id, { amount: n(12) })
    expect(grown._tag).toBe("Amended")
    expect(a.queuePriorityPreserved).toBe(false)
    expect(book.queueAhead(a.id)).toBe(n(110))
    expect(book.queueAhead(b.id)).toBe(n(100))
    book.amend(b.id, { price: p("0.48"), amount: n(5) })
    expect(b.queuePriorityPreserved).toBe(false)
    expect(book.queueAhead(b.id)).toBe(n(100))
    expect(sizes(book, "buy")).toEqual([
      ["0.49", "112"],
      ["0.48", "105"]
    ])
  })

  it("an amend to a crossing price trades like a new order; post-only is refused; never below filled", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.50", 120)).order
    const moved = book.amend(a.id, { price: p("0.51") })
    expect(moved._tag === "Amended" && moved.matches.map((m) => F.format(m.amount))).toEqual(["100"])
    expect(a.filled).toBe(n(100))
    expect(book.bestBid()).toBe(p("0.51"))
    expect(book.amend(a.id, { amount: n(99) })).toEqual({ _tag: "Refused", reason: "amount_below_filled" })
    const shut = book.amend(a.id, { amount: n(100) })
    expect(shut._tag).toBe("Amended")
    expect(a.status).toBe("closed")
    expect(book.bestBid()).toBe(p("0.49"))

    const c = book.place(order("sell", "0.53", 5, { postOnly: true })).order
    expect(book.amend(c.id, { price: p("0.49") })).toEqual({ _tag: "Refused", reason: "post_only_would_cross" })
    expect(c.price).toBe(p("0.53"))
  })
})

describe("OrderBook maker quotes and expiry", () => {
  it("re-laid quotes that reach an own order fill it at its own price and leave the book uncrossed", () => {
    const book = quoted()
    const a = book.place(order("buy", "0.50", 30)).order
    const matches = book.setMakerQuotes(
      [{ price: p("0.45"), size: n(100) }],
      [
        { price: p("0.47"), size: n(20) },
        { price: p("0.48"), size: n(50) }
      ]
    )
    expect(matches.map((m) => [F.format(m.price), F.format(m.amount), m.takerSide, m.taker, m.maker?.id])).toEqual([
      ["0.5", "20", "sell", null, a.id],
      ["0.5", "10", "sell", null, a.id]
    ])
    expect(a.status).toBe("closed")
    expect(sizes(book, "sell")).toEqual([["0.48", "40"]])
    expect(sizes(book, "buy")).toEqual([["0.45", "100"]])
  })

  it("expires gtd orders at their time, earliest first", () => {
    const book = quoted()
    const late = book.place(order("buy", "0.40", 1, { tif: "gtd", expiresAt: 2000 })).order
    const early = book.place(order("buy", "0.41", 1, { tif: "gtd", expiresAt: 1000 })).order
    expect(book.nextExpiry()).toBe(1000)
    expect(book.expireUpTo(999)).toEqual([])
    expect(book.expireUpTo(1000).map((o) => o.id)).toEqual([early.id])
    expect(early.status).toBe("expired")
    book.cancel(late.id)
    expect(book.nextExpiry()).toBeNull()
    expect(book.expireUpTo(5000)).toEqual([])
  })
})

describe("OrderBook property", () => {
  type Op =
    | {
        readonly k: "place"
        readonly side: Side
        readonly ticks: number
        readonly amount: number
        readonly tif: number
      }
    | { readonly k: "take"; readonly side: Side; readonly ticks: number; readonly amount: number }
    | { readonly k: "quote"; readonly mid: number; readonly size: number }
    | { readonly k: "cancel" | "amend"; readonly pick: number; readonly ticks: number; readonly amount: number }

  const side = fc.constantFrom<Side>("buy", "sell")
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      k: fc.constant("place" as const),
      side,
      ticks: fc.integer({ min: 40, max: 60 }),
      amount: fc.integer({ min: 1, max: 80 }),
      tif: fc.integer({ min: 0, max: 3 })
    }),
    fc.record({
      k: fc.constant("take" as const),
      side,
      ticks: fc.integer({ min: 40, max: 60 }),
      amount: fc.integer({ min: 1, max: 150 })
    }),
    fc.record({
      k: fc.constant("quote" as const),
      mid: fc.integer({ min: 44, max: 56 }),
      size: fc.integer({ min: 1, max: 60 })
    }),
    fc.record({
      k: fc.constantFrom("cancel" as const, "amend" as const),
      pick: fc.nat(),
      ticks: fc.integer({ min: 40, max: 60 }),
      amount: fc.integer({ min: 1, max: 80 })
    })
  )
  const TIFS = ["gtc", "ioc", "fok", "gtc"] as const

  it("never crosses, conserves size and keeps levels equal to maker plus own remaining", () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const book = quoted()
        const orders: Array<ReturnType<OrderBook["place"]>["order"]> = []
        const matched = new Map<string, number>()
        const note = (
          ms: ReadonlyArray<{ taker: { id: string } | null; maker: { id: string } | null; amount: F.Fixed }>
        ) => {
          for (const m of ms) {
            for (const o of [m.taker, m.maker]) if (o !== null) matched.set(o.id, (matched.get(o.id) ?? 0) + m.amount)
          }
        }
        let i = 0
        for (const o of ops) {
          i++
          const price = (t: number) => (t * 10_000) as F.Fixed
          if (o.k === "place") {
            const r = book.place({
              id: `x${i}`,
              clientOrderId: `x${i}`,
              side: o.side,
              price: price(o.ticks),
              amount: n(o.amount),
              tif: TIFS[o.tif]!,
              postOnly: o.tif === 3,
              expiresAt: null
            })
            orders.push(r.order)
            note(r.matches)
          } else if (o.k === "take") {
            note(book.take(o.side, price(o.ticks), n(o.amount)))
          } else if (o.k === "quote") {
            note(
              book.setMakerQuotes(
                [0, 1, 2].map((d) => ({ price: price(o.mid - 1 - d), size: n(o.size + d) })),
                [0, 1, 2].map((d) => ({ price: price(o.mid + 1 + d), size: n(o.size + 2 * d) }))
              )
            )
          } else if (orders.length > 0) {
            const target = orders[o.pick % orders.length]!
            if (o.k === "cancel") book.cancel(target.id)
            else {
              const r = book.amend(target.id, { price: price(o.ticks), amount: n(o.amount) })
              if (r._tag === "Amended") note(r.matches)
            }
          }
          const bid = book.bestBid()
          const ask = book.bestAsk()
          if (bid !== null && ask !== null) expect(bid).toBeLessThan(ask)
          for (const s of ["buy", "sell"] as const) {
            for (const level of book.levels(s)) {
              let own = 0
              for (const x of book.openOrders()) if (x.side === s && x.price === level.price) own += x.amount - x.filled
              expect(level.size).toBe(book.makerSize(s, level.price) + own)
              expect(level.size).toBeGreaterThan(0)
            }
          }
          for (const x of orders) {
            expect(x.filled).toBe(matched.get(x.id) ?? 0)
            expect(x.filled).toBeLessThanOrEqual(x.amount)
            expect(x.status === "closed").toBe(x.filled === x.amount && x.status !== "rejected")
          }
        }
      }),
      { numRuns: 300 }
    )
  })
})
