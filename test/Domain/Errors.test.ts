import { assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit } from "effect"
import { ApiError } from "../../src/Domain/Errors.ts"

describe("ApiError", () => {
  it("is an answer with its body and no stack trace, and leaves the process's stack depth as it was", () => {
    const before = Error.stackTraceLimit
    const error = ApiError.field("price", "must be on the tick grid")
    assert.strictEqual(Error.stackTraceLimit, before)
    assert.instanceOf(error, ApiError)
    assert.strictEqual(error._tag, "ApiError")
    assert.strictEqual(error.status, 400)
    assert.deepStrictEqual(error.body, {
      error: {
        code: "validation_error",
        message: "price: must be on the tick grid",
        details: { venue: null, retryable: false, errors: [{ field: "price", message: "must be on the tick grid" }] }
      }
    })
    // The stack is the header line alone: no frame was captured.
    assert.notInclude(error.stack ?? "", "\n")
    assert.include(error.stack ?? "", "must be on the tick grid")
    // Other errors keep theirs.
    assert.include(new Error("a fault").stack ?? "", "\n")
  })

  it("still checks what it is given, and restores the stack depth when it refuses", () => {
    const before = Error.stackTraceLimit
    assert.throws(
      () => new ApiError({ status: 400, code: "no_such_code" as never, message: "x", details: {} }),
      /no_such_code/
    )
    assert.strictEqual(Error.stackTraceLimit, before)
  })

  it.effect("fails an Effect as the same value", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.fail(ApiError.marketNotFound("sim", "sim:NOPE")))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const failure = Cause.failureOption(exit.cause)
        assert.strictEqual(failure._tag, "Some")
        if (failure._tag === "Some") assert.strictEqual(failure.value.status, 404)
      }
    })
  )
})
