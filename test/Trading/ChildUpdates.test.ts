/** The desk's changes of engine children: taken in order, at once by a plain driver, else by a fiber woken for them. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { ChildUpdates } from "../../src/Trading/ChildUpdates.ts"
import type { Order } from "../../src/Domain/Order.ts"

const update = (id: string) => ({ order: { id } as Order, fill: undefined })

describe("child updates", () => {
  it.effect("are taken all at once, oldest first, and none is left after", () =>
    Effect.sync(() => {
      const updates = new ChildUpdates()
      assert.deepStrictEqual(updates.takeAll(), [])
      updates.offer(update("a"))
      updates.offerAll([update("b"), update("c")])
      assert.strictEqual(updates.size, 3)
      assert.deepStrictEqual(
        updates.takeAll().map((u) => u.order.id),
        ["a", "b", "c"]
      )
      assert.strictEqual(updates.size, 0)
      assert.deepStrictEqual(updates.takeAll(), [])
    })
  )

  it.live("wake a waiting fiber when the first arrives, and let it wait again once they were taken", () =>
    Effect.gen(function* () {
      const updates = new ChildUpdates()
      const waiter = yield* Effect.fork(updates.ready)
      yield* Effect.yieldNow()
      assert.isNull(yield* Fiber.poll(waiter).pipe(Effect.map((o) => (o._tag === "Some" ? o.value : null))))
      updates.offer(update("a"))
      yield* Fiber.join(waiter)
      // Still waiting: a second wait ends at once.
      yield* updates.ready
      updates.takeAll()
      const again = yield* Effect.fork(updates.ready)
      yield* Effect.yieldNow()
      assert.isNull(yield* Fiber.poll(again).pipe(Effect.map((o) => (o._tag === "Some" ? o.value : null))))
      updates.offer(update("b"))
      yield* Fiber.join(again)
      assert.deepStrictEqual(
        updates.takeAll().map((u) => u.order.id),
        ["b"]
      )
    })
  )
})
