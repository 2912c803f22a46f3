/** Helpers for engine scenarios through HTTP: place a parent, move simulated time, read the parent and its children. */
import { Effect, TestClock } from "effect"
import { OrderStore } from "../../src/Services/OrderStore.ts"
import { OwnerToken, type RawResponse, request } from "../Http/TestServer.ts"

export const cents = (p: string) => Math.round(Number(p) * 100)
export const price = (c: number) => (c / 100).toFixed(2).replace(/0$/, "").replace(/\.$/, "")

/** Lets the fibers that carry fills and child updates run to the end of what they have. */
export const settle = Effect.forEach(Array.from({ length: 60 }), () => Effect.yieldNow(), { discard: true })

/** Moves simulated time forward one second at a time. */
export const run = (seconds: number) =>
  Effect.forEach(Array.from({ length: seconds }), () => Effect.zipRight(TestClock.adjust("1 second"), settle), {
    discard: true
  })

/** The n-th open market with both sides quoted. */
export const market = (n = 0) =>
  Effect.gen(function* () {
    const markets = (yield* request("GET", "/venues/sim/markets?limit=100")).body.data
    const m = markets.filter((x: any) => x.best_bid !== null && x.best_ask !== null)[n]
    const book = (yield* request("GET", `/venues/sim/markets/${m.id}/book?depth=10`)).body
    return { id: m.id as string, bid: cents(book.best_bid), ask: cents(book.best_ask), book }
  })

export const place = (body: Record<string, unknown>) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    return yield* request("POST", "/trading/orders", { token, json: body })
  })

export const parent = (id: string) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    return (yield* request("GET", `/trading/orders/${id}`, { token })).body
  })

/** The children of a parent, oldest first. */
export const children = (id: string) =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    const page = (yield* request("GET", `/trading/orders?parent_id=${id}&limit=1000`, { token })).body
    return [...page.data].reverse() as Array<any>
  })

export const cancel = (id: string): Effect.Effect<RawResponse, unknown, any> =>
  Effect.gen(function* () {
    const token = yield* OwnerToken
    return yield* request("DELETE", `/trading/orders/${id}`, { token })
  })

/** The journal events about a parent, in seq order. */
export const events = (id: string, kind?: string) =>
  Effect.gen(function* () {
    const store = yield* OrderStore
    const all = yield* store.eventsAfter(0, 1_000_000)
    return all.filter(
      (e) => (e.key === id || (e.payload as any)?.parent_id === id) && (kind === undefined || e.kind === kind)
    )
  })

/** Σ filled of the children whose role counts, against the parent's filled. */
export const sumFilled = (kids: ReadonlyArray<any>, roles?: ReadonlyArray<string>) =>
  kids.filter((c) => roles === undefined || roles.includes(c.info.role)).reduce((sum, c) => sum + Number(c.filled), 0)

export const LIVE = ["pending", "open", "pending_cancel"]
