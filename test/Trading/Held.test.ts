import { describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import { accountRef, type Order, type OrderStatus, TERMINAL } from "../../src/Domain/Order.ts"
import { Held, type ParentHolder } from "../../src/Trading/Held.ts"
import { makeMarketId } from "../../src/Domain/Ids.ts"

/** What an engine holds of a parent: the desk renders its record from this. */
interface Handle {
  id: string
  status: OrderStatus
  filled: F.Fixed
  updatedAt: number
}

const order = (over: Partial<Order> & Pick<Order, "id">): Order => ({
  clientOrderId: over.id,
  venue: "sim",
  account: accountRef("sim:default"),
  marketId: makeMarketId("sim", "m1"),
  side: "buy",
  type: "limit",
  timeInForce: "gtc",
  status: "open",
  heldBy: "venue",
  price: F.of("0.40"),
  stopPrice: null,
  amount: F.of("5"),
  filled: F.ZERO,
  cost: F.ZERO,
  fee: F.ZERO,
  lastFillPrice: null,
  lastFillAmount: null,
  postOnly: false,
  reduceOnly: false,
  expiresAt: null,
  createdAt: 1,
  updatedAt: 1,
  parentId: null,
  queuePriorityPreserved: null,
  book: "",
  trader: "",
  tags: {},
  notes: "",
  info: {},
  venueOrderId: null,
  ...over
})

const render = (handle: unknown): Order => {
  const h = handle as Handle
  return order({
    id: h.id,
    clientOrderId: `c-${h.id}`,
    type: "stop_market",
    heldBy: "engine",
    price: null,
    stopPrice: F.of("0.30"),
    status: h.status,
    filled: h.filled,
    updatedAt: h.updatedAt
  })
}

const parent = (id: string, status: OrderStatus = "waiting"): Handle => ({ id, status, filled: F.ZERO, updatedAt: 1 })

/** A holder of parents as the engine is one: it has each from its creation until a while after it finished. */
const holderOf = (...handles: ReadonlyArray<Handle>) => {
  const map = new Map(handles.map((h) => [h.id, h]))
  const holder: ParentHolder = {
    get: (id) => map.get(id),
    working: () => [...map].filter(([, h]) => !TERMINAL.has(h.status)),
    render,
    status: (h) => (h as Handle).status
  }
  return { map, holder }
}

describe("the desk's memory of working engine parents", () => {
  it("renders a parent's record from its holder's handle on every read, as the handle is now", () => {
    const held = new Held()
    const h = parent("mo_000001")
    held.renderParents(holderOf(h).holder)
    held.name(render(h), "digest-1")
    held.remember(render(h), true)
    expect(held.lookup("mo_000001")?.status).toBe("waiting")
    h.status = "triggered"
    h.filled = F.of("2")
    h.updatedAt = 7
    const read = held.lookup("mo_000001")!
    expect([read.status, F.format(read.filled), read.updatedAt]).toEqual(["triggered", "2", 7])
    // The status alone reads the same, without the record.
    expect(held.statusOf("mo_000001")).toBe("triggered")
    expect(held.statusOf("mo_000099")).toBeUndefined()
    expect(held.byClient("sim:default", "c-mo_000001")?.status).toBe("triggered")
    expect(held.digestOf("mo_000001")).toBe("digest-1")
    expect(held.liveOrders().map((o) => o.id)).toEqual(["mo_000001"])
    expect(held.sizes()).toEqual({ live: 1, recent: 0 })
  })

  it("counts a parent being canceled as open exactly while its record says so", () => {
    const held = new Held()
    const h = parent("mo_000002")
    held.renderParents(holderOf(h).holder)
    held.remember(order({ id: "o_1" }))
    held.remember(render(h), true)
    expect(held.openOrders("sim:default")).toBe(1)
    // The holder changes its handle, then hands over the record made from it.
    h.status = "pending_cancel"
    held.remember(render(h), true)
    expect([held.openOrders("sim:default"), held.openTotal()]).toEqual([2, 2])
    held.remember(render(h), true)
    expect(held.openOrders("sim:default")).toBe(2)
    h.status = "canceled"
    held.remember(render(h))
    expect([held.openOrders("sim:default"), held.openTotal()]).toEqual([1, 1])
    // Finished, it is kept as the record it ended with, whatever becomes of the handle.
    h.status = "waiting"
    expect(held.lookup("mo_000002")?.status).toBe("canceled")
    expect(held.liveOrders().map((o) => o.id)).toEqual(["o_1"])
    expect(held.sizes()).toEqual({ live: 1, recent: 1 })
  })

  it("lets go of the records of parents restored at start, and keeps records again once the holder leaves", () => {
    const held = new Held()
    const h = parent("mo_000003", "pending_cancel")
    held.remember(render(h))
    expect(held.openOrders("sim:default")).toBe(1)
    held.renderParents(holderOf(h).holder)
    h.filled = F.of("1")
    expect(F.format(held.lookup("mo_000003")!.filled)).toBe("1")
    h.status = "waiting"
    held.remember(render(h), true)
    expect(held.openOrders("sim:default")).toBe(0)
    held.renderParents(undefined)
    h.filled = F.of("3")
    expect(F.format(held.lookup("mo_000003")!.filled)).toBe("1")
    expect(held.liveOrders().map((o) => o.status)).toEqual(["waiting"])
  })

  it("files a parent restored at start by its head: counted and named, its record read elsewhere until held", () => {
    const held = new Held()
    const h = parent("mo_000004", "pending_cancel")
    held.fileParent({
      id: "mo_000004",
      account: "sim:default",
      clientOrderId: "c-mo_000004",
      status: "pending_cancel",
      digest: "digest-4"
    })
    held.fileParent({
      id: "mo_000005",
      account: "sim:default",
      clientOrderId: "c5",
      status: "waiting",
      digest: undefined
    })
    expect([held.openOrders("sim:default"), held.openTotal()]).toEqual([1, 1])
    expect(held.digestOf("mo_000004")).toBe("digest-4")
    // No record of its own: the store answers until a holder has it.
    expect(held.lookup("mo_000004")).toBeUndefined()
    expect(held.liveOrders()).toEqual([])
    held.renderParents(holderOf(h).holder)
    expect(held.byClient("sim:default", "c-mo_000004")?.status).toBe("pending_cancel")
    expect(held.openOrders("sim:default")).toBe(1)
    h.status = "canceled"
    held.remember(render(h))
    expect([held.openOrders("sim:default"), held.openTotal()]).toEqual([0, 0])
    expect(held.lookup("mo_000004")?.status).toBe("canceled")
  })

  it("names an order by the client id it was placed with, and not one placed without (its id is its client id)", () => {
    const held = new Held()
    held.name(order({ id: "o_1", clientOrderId: "mine" }), "digest-1")
    held.remember(order({ id: "o_1", clientOrderId: "mine" }))
    held.name(order({ id: "o_2" }), "digest-2")
    held.remember(order({ id: "o_2" }))
    expect([held.byClient("sim:default", "mine")?.id, held.digestOf("o_1")]).toEqual(["o_1", "digest-1"])
    expect([held.byClient("sim:default", "o_2"), held.digestOf("o_2")]).toEqual([undefined, undefined])
    expect(held.lookup("o_2")?.id).toBe("o_2")
  })
})
