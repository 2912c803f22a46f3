/** The desk's and the engine's lock: one holder at a time, in the order asked, never lost to a failure or interrupt. */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Ref } from "effect"
import { makeLock } from "../../src/Trading/Lock.ts"

/** Runs `n` holders that each wait on their own gate while holding the lock; answers the log and the gates. */
const holders = (n: number) =>
  Effect.gen(function* () {
    const lock = makeLock()
    const log = yield* Ref.make<ReadonlyArray<string>>([])
    const inside = yield* Ref.make(0)
    const gates = yield* Effect.forEach(Array.from({ length: n }), () => Deferred.make<void>())
    const fibers: Array<Fiber.RuntimeFiber<void>> = []
    for (let i = 0; i < n; i++) {
      const body = Effect.gen(function* () {
        const now = yield* Ref.updateAndGet(inside, (k) => k + 1)
        yield* Ref.update(log, (l) => [...l, `in ${i} (${now})`])
        yield* Deferred.await(gates[i]!)
        yield* Ref.update(inside, (k) => k - 1)
        yield* Ref.update(log, (l) => [...l, `out ${i}`])
      })
      fibers.push(yield* Effect.fork(lock(body)))
      // Each asks before the next one does.
      yield* Effect.yieldNow()
    }
    return { lock, log, gates, fibers }
  })

describe("makeLock", () => {
  it.effect("runs holders one at a time, in the order they asked, whatever order their work ends in", () =>
    Effect.gen(function* () {
      const { fibers, gates, log } = yield* holders(4)
      // Opened last to first: only the holder's own gate can let anyone else in.
      for (const i of [3, 2, 1, 0]) yield* Deferred.succeed(gates[i]!, undefined)
      yield* Fiber.joinAll(fibers)
      assert.deepStrictEqual(yield* Ref.get(log), [
        "in 0 (1)",
        "out 0",
        "in 1 (1)",
        "out 1",
        "in 2 (1)",
        "out 2",
        "in 3 (1)",
        "out 3"
      ])
    })
  )

  it.effect("a holder that fails or dies releases the lock, and its failure reaches its caller", () =>
    Effect.gen(function* () {
      const lock = makeLock()
      const failed = yield* Effect.exit(lock(Effect.fail("refused")))
      assert.deepStrictEqual(failed, Exit.fail("refused"))
      const died = yield* Effect.exit(lock(Effect.die("broken")))
      assert.isTrue(Exit.isFailure(died))
      assert.strictEqual(yield* lock(Effect.succeed("next")), "next")
    })
  )

  it.effect("a caller interrupted while it waits leaves the line; the ones behind it still get their turn", () =>
    Effect.gen(function* () {
      const { fibers, gates, log } = yield* holders(3)
      yield* Fiber.interrupt(fibers[1]!)
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* Fiber.join(fibers[0]!)
      yield* Fiber.join(fibers[2]!)
      assert.deepStrictEqual(yield* Ref.get(log), ["in 0 (1)", "out 0", "in 2 (1)", "out 2"])
    })
  )

  it.effect("a caller interrupted just as the lock is handed to it passes the lock on", () =>
    Effect.gen(function* () {
      const { fibers, gates, log } = yield* holders(3)
      // The first holder is let go and the second caller interrupted at once: the interrupt reaches the second caller
      // before the lock the first one's release hands it, so it never runs, and the lock goes on to the third.
      yield* Deferred.succeed(gates[0]!, undefined)
      yield* Fiber.interrupt(fibers[1]!)
      yield* Deferred.succeed(gates[2]!, undefined)
      yield* Fiber.join(fibers[2]!)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(fibers[1]!)))
      assert.deepStrictEqual(yield* Ref.get(log), ["in 0 (1)", "out 0", "in 2 (1)", "out 2"])
    })
  )

  it.effect("a caller interrupted by the holder right after its release, before it ran again, passes the lock on", () =>
    Effect.gen(function* () {
      const lock = makeLock()
      const log = yield* Ref.make<ReadonlyArray<string>>([])
      const gate = yield* Deferred.make<void>()
      const second = yield* Deferred.make<Fiber.RuntimeFiber<void>>()
      // The first holder, right after its release handed the lock on, interrupts the second caller, before the second
      // has run again.
      const first = yield* Effect.fork(
        Effect.zipRight(
          lock(Deferred.await(gate)),
          Effect.flatMap(Deferred.await(second), (fiber) => Fiber.interrupt(fiber))
        )
      )
      yield* Effect.yieldNow()
      const waiting = yield* Effect.fork(lock(Ref.update(log, (l) => [...l, "second ran"])))
      yield* Deferred.succeed(second, waiting)
      yield* Effect.yieldNow()
      const third = yield* Effect.fork(lock(Ref.update(log, (l) => [...l, "third ran"])))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(third)
      assert.isTrue(Exit.isInterrupted(yield* Fiber.await(waiting)))
      assert.deepStrictEqual(yield* Ref.get(log), ["third ran"])
      assert.strictEqual(yield* lock(Effect.succeed("free")), "free")
    })
  )

  it.effect("an uninterruptible holder runs to its end even when its caller is interrupted", () =>
    Effect.gen(function* () {
      const lock = makeLock()
      const gate = yield* Deferred.make<void>()
      const done = yield* Ref.make(false)
      const fiber = yield* Effect.fork(
        lock(Effect.zipRight(Deferred.await(gate), Ref.set(done, true))).pipe(Effect.uninterruptible)
      )
      yield* Effect.yieldNow()
      const interrupting = yield* Effect.fork(Fiber.interrupt(fiber))
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(interrupting)
      assert.isTrue(yield* Ref.get(done))
      assert.strictEqual(yield* lock(Effect.succeed("free")), "free")
    })
  )

  it.effect("hold runs plain code at once when the lock is free, and what it leaves keeps the lock until it ends", () =>
    Effect.gen(function* () {
      const lock = makeLock()
      const log: Array<string> = []
      // Finished in plain code: the lock is free again at once.
      const done = lock.hold(() => {
        log.push("plain")
        return undefined
      })
      assert.isDefined(done)
      assert.deepStrictEqual(log, ["plain"])
      assert.strictEqual(
        lock.now(() => "free"),
        "free"
      )
      // A part left to run: nobody else takes the lock before it has run.
      const gate = yield* Deferred.make<void>()
      const left = lock.hold(() => {
        log.push("first part")
        return Effect.zipRight(
          Deferred.await(gate),
          Effect.sync(() => void log.push("rest"))
        )
      })!
      assert.isUndefined(lock.now(() => "taken"))
      assert.isUndefined(lock.hold(() => undefined))
      const other = yield* Effect.fork(lock(Effect.sync(() => void log.push("other"))))
      const rest = yield* Effect.fork(left)
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      yield* Fiber.join(rest)
      yield* Fiber.join(other)
      assert.deepStrictEqual(log, ["plain", "first part", "rest", "other"])
      assert.strictEqual(
        lock.now(() => "free"),
        "free"
      )
    })
  )

  it("hold releases the lock when its plain code throws", () => {
    const lock = makeLock()
    assert.throws(() =>
      lock.hold(() => {
        throw new Error("boom")
      })
    )
    assert.strictEqual(
      lock.now(() => "free"),
      "free"
    )
  })
})
