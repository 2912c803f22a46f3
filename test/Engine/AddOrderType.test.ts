/**
 * The walk-through of docs/architecture.md, "Adding an order type": a type defined in this file alone (`limit_after`,
 * one limit child placed a delay after the order is accepted), registered with the engine and run end to end in the
 * simulator, with the checks every order passes shared with plain orders.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Schema } from "effect"
import { readFileSync } from "node:fs"
import { replay, simWiringWith } from "../../sim/Replay.ts"
import type { FieldError } from "../../src/Domain/Errors.ts"
import * as F from "../../src/Domain/Fixed.ts"
import type { OrderRequest } from "../../src/Domain/OrderRequest.ts"
import { MAX_DELAY_S, Seconds, strict } from "../../src/Engine/Children.ts"
import type { Core, ParentSpec } from "../../src/Engine/Core.ts"
import type { OrderType } from "../../src/Engine/OrderType.ts"
import { COMPLEX_TYPES, ORDER_TYPES } from "../../src/Engine/Registry.ts"
import { PLAIN_TYPES } from "../../src/Domain/Order.ts"
import { OwnerToken, placeOnSim, request, testServer } from "../Http/TestServer.ts"
import { Desk } from "../../src/Trading/Desk.ts"

// 1. Its params: a strict schema, every number bounded.
const Params = strict(Schema.Struct({ delay_s: Seconds(MAX_DELAY_S, true) }), "LimitAfterParams")
type Params = typeof Params.Type

// 2. Its checks against the parent: the limit needs a price (already on the grid: every order's fields are checked
//    before a type sees them).
const validate = (
  spec: ParentSpec,
  params: Params
): { readonly params: Params } | { readonly errors: ReadonlyArray<FieldError> } =>
  spec.price === null ? { errors: [{ field: "price", message: "a limit_after needs a price" }] } : { params }

// 3. Its core: plain JSON state, time only from the inputs, no I/O.
interface State {
  readonly placed: boolean
  readonly filled: F.Fixed
  readonly seen: ReadonlyArray<string>
  readonly done: boolean
}

const CHILD = 1

const core: Core<Params, State> = {
  init: (spec, params) => ({
    state: { placed: false, filled: F.ZERO, seen: [], done: false },
    commands: [{ _tag: "SetTimer", timer: "release", at: spec.createdAt + params.delay_s * 1000 }]
  }),
  step: (spec, _params, state, input) => {
    if (state.done) return { state, commands: [] }
    switch (input._tag) {
      case "Timer":
        if (input.timer !== "release" || state.placed) return { state, commands: [] }
        return {
          state: { ...state, placed: true },
          commands: [
            { _tag: "Trigger" },
            {
              _tag: "Place",
              spec: {
                child: CHILD,
                side: spec.side,
                price: spec.price!,
                amount: spec.amount,
                timeInForce: spec.timeInForce,
                postOnly: spec.postOnly,
                reduceOnly: spec.reduceOnly,
                role: "limit"
              }
            }
          ]
        }
      case "ChildFill":
        if (input.child !== CHILD || state.seen.includes(input.fillId)) return { state, commands: [] }
        return {
          state: { ...state, filled: F.add(state.filled, input.amount), seen: [...state.seen, input.fillId] },
          commands: []
        }
      case "ChildDone": {
        const filled = F.max(state.filled, input.filled)
        const status = filled >= spec.amount ? "closed" : input.status === "rejected" ? "rejected" : "canceled"
        return {
          state: { ...state, filled, done: true },
          commands: [{ _tag: "Finish", status, detail: `its limit ended ${input.status}` }]
        }
      }
      default:
        return { state, commands: [] }
    }
  },
  // Market data never changes it: the driver feeds it none.
  watch: () => [],
  info: (state) => ({ placed: state.placed, filled: F.format(state.filled) })
}

// 4. The registration: everything the engine, the API and its document know of the type.
const limitAfter: OrderType<Params, State> = { type: "limit_after", params: Params, validate, core, postOnly: true }

// 5. Registered: the engine of this run holds the built-in types and this one (`serve`'s composition otherwise).
const wiring = simWiringWith([...ORDER_TYPES, limitAfter])

const tape = readFileSync(new URL("../../fixtures/tapes/demo.jsonl", import.meta.url), "utf8")
const T0 = 1767225600000
const MARKET = "sim:DEMO-1"

const order = (over: Partial<OrderRequest>): OrderRequest => ({
  market_id: MARKET,
  side: "buy",
  type: "limit_after",
  amount: "20",
  price: "0.52",
  params: { delay_s: 5 },
  ...over
})

interface Line {
  readonly ts: number
  readonly kind: string
  readonly key: string
  readonly payload: Record<string, any>
}
const lines = (log: string): ReadonlyArray<Line> =>
  log
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Line)

describe("adding an order type", () => {
  it.live("a type registered with the engine alone is accepted, places its child on time and closes filled", () =>
    Effect.gen(function* () {
      let record: Record<string, any> | undefined
      const run = yield* replay({
        tape,
        seed: 3,
        wiring,
        orders: [{ at_ms: 500, order: order({}) }],
        hooks: {
          end: (r) =>
            Effect.gen(function* () {
              const desk = Context.get(r.context, Desk)
              const parents = yield* desk.list({ status: ["closed"] })
              record = parents.find((o) => o.heldBy === "engine")
            })
        }
      })
      assert.deepStrictEqual(run.summary.orders.refused, [])
      const log = lines(run.log)
      const created = log.find((l) => l.kind === "managed.created")!
      assert.strictEqual(created.payload["type"], "limit_after")
      assert.strictEqual(created.ts, T0 + 500)
      // Its one child goes out at the release time, not before, for the whole amount at the parent's price.
      const children = log.filter((l) => l.kind === "order.accepted" && l.payload["parent_id"] === created.key)
      assert.strictEqual(children.length, 1)
      assert.strictEqual(children[0]!.ts, T0 + 500 + 5000)
      assert.strictEqual(children[0]!.payload["price"], "0.52")
      assert.strictEqual(children[0]!.payload["amount"], "20")
      assert.strictEqual(children[0]!.payload["info"]["role"], "limit")
      const done = log.find((l) => l.kind === "managed.done" && l.key === created.key)!
      assert.strictEqual(done.payload["status"], "closed")
      assert.strictEqual(done.payload["filled"], "20")
      // The parent's record shows the type, its state and what the core reports.
      assert.isDefined(record)
      assert.strictEqual(record!["type"], "limit_after")
      assert.strictEqual(record!["filled"], F.fromInt(20))
      assert.strictEqual(record!["info"]["kind"], "limit_after")
      assert.strictEqual(record!["info"]["placed"], true)
      assert.deepStrictEqual(record!["info"]["params"], { delay_s: 5 })
    })
  )

  it.live("its checks are the registration's; every order's own fields are checked as for a plain order", () =>
    Effect.gen(function* () {
      const sent: ReadonlyArray<OrderRequest> = [
        // The same mistakes on a plain limit and on the new type answer the same error.
        order({ type: "limit", params: undefined, price: "0.505" }),
        order({ price: "0.505" }),
        order({ type: "limit", params: undefined, amount: "0" }),
        order({ amount: "0" }),
        order({ type: "limit", params: undefined, expires_at: T0 - 1 }),
        order({ expires_at: T0 - 1 }),
        // What the type itself checks: its price, its params (unknown keys are a 422), post_only it allows.
        order({ price: undefined }),
        order({ params: { delay_s: 5, delay_ms: 1 } }),
        order({ params: { delay_s: 0 } }),
        order({ post_only: true, price: "0.4" })
      ]
      const run = yield* replay({
        tape,
        seed: 3,
        wiring,
        orders: sent.map((o, i) => ({ at_ms: 100 + i, order: o }))
      })
      const refused = run.summary.orders.refused.map((r) => [r.at_ms - 100, r.code, r.message] as const)
      const at = (i: number) => refused.find((r) => r[0] === i)
      for (const [plain, held] of [
        [0, 1],
        [2, 3],
        [4, 5]
      ] as const) {
        assert.isDefined(at(plain))
        assert.deepStrictEqual(at(held)!.slice(1), at(plain)!.slice(1))
      }
      assert.include(at(1)![2], "off the tick grid of 0.01; nearest valid: 0.5 or 0.51")
      assert.include(at(3)![2], "must be a positive multiple of the lot 1")
      assert.deepStrictEqual(at(6)!.slice(1), ["validation_error", "price: a limit_after needs a price"])
      assert.strictEqual(at(7)![1], "validation_error")
      assert.include(at(7)![2], "params.delay_ms")
      assert.include(at(8)![2], "params.delay_s")
      // post_only is the type's to allow: accepted here, refused on a type that does not.
      assert.isUndefined(at(9))
      assert.strictEqual(refused.length, 9)
    })
  )

  it.live("a market that no longer trades is 409 market_halted for a plain order and for the new type alike", () =>
    Effect.gen(function* () {
      // The market closes 100 s in; both orders come 10 s later.
      const rows = tape.trim().split("\n")
      const at = rows.findIndex((r, i) => i > 0 && (JSON.parse(r) as { ts: number }).ts > T0 + 100_000)
      rows.splice(at, 0, JSON.stringify({ type: "status", ts: T0 + 100_000, market: MARKET, status: "closed" }))
      const run = yield* replay({
        tape: rows.join("\n") + "\n",
        seed: 3,
        wiring,
        orders: [
          { at_ms: 110_000, order: order({ type: "limit", params: undefined }) },
          { at_ms: 110_001, order: order({}) }
        ]
      })
      const refused = run.summary.orders.refused.map((r) => [r.code, r.message])
      assert.deepStrictEqual(refused, [
        ["risk_rejected", `market ${MARKET} is closed`],
        ["risk_rejected", `market ${MARKET} is closed`]
      ])
    })
  )

  it.live("an engine not given the type does not know it", () =>
    Effect.gen(function* () {
      const run = yield* replay({ tape, seed: 3, orders: [{ at_ms: 500, order: order({}) }] })
      assert.deepStrictEqual(
        run.summary.orders.refused.map((r) => [r.code, r.message]),
        [
          [
            "validation_error",
            `type: Expected ${[...PLAIN_TYPES, ...COMPLEX_TYPES].map((t) => `"${t}"`).join(" | ")}, actual "limit_after"`
          ]
        ]
      )
    })
  )
})

describe("adding an order type, through the API", () => {
  // The server `serve` builds, its engine given the built-in types and this one.
  it.layer(testServer({ orderTypes: [...ORDER_TYPES, limitAfter] }))((it) => {
    const post = (body: Record<string, unknown>) => placeOnSim({ amount: "5", ...body })

    it.effect("POST /trading/orders takes the registered type, and the engine holds it", () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const res = yield* post({ type: "limit_after", price: "0.01", params: { delay_s: 60 } })
        assert.strictEqual(res.status, 201, res.text)
        assert.strictEqual(res.body.type, "limit_after")
        assert.strictEqual(res.body.held_by, "engine")
        const read = yield* request("GET", `/trading/orders/${res.body.id}`, { token })
        assert.strictEqual(read.status, 200, read.text)
        assert.strictEqual(read.body.info.kind, "limit_after")
        assert.strictEqual(read.body.info.placed, false)
        // Its own checks answer through the route as through the engine.
        const bad = yield* post({ type: "limit_after", params: { delay_s: 60 } })
        assert.strictEqual(bad.status, 400, bad.text)
        assert.strictEqual(bad.body.error.details.errors[0].field, "price")
        // Cancelled like any engine order.
        const canceled = yield* request("DELETE", `/trading/orders/${res.body.id}`, { token })
        assert.strictEqual(canceled.status, 200, canceled.text)
        assert.strictEqual(canceled.body.status, "canceled")
      })
    )

    it.effect("a type no one registered is a 422 naming the types this server takes", () =>
      Effect.gen(function* () {
        const res = yield* post({ type: "limit_before", price: "0.5" })
        assert.strictEqual(res.status, 422, res.text)
        assert.strictEqual(res.body.error.code, "validation_error")
        assert.strictEqual(res.body.error.details.errors[0].field, "type")
        assert.include(res.body.error.details.errors[0].message, '"limit_after"')
        assert.include(res.body.error.details.errors[0].message, '"smart_taker"')
        // A type name no type could have is refused by the body's schema, and not echoed back whole.
        const long = yield* post({ type: "x".repeat(5000), price: "0.5" })
        assert.strictEqual(long.status, 422, long.text)
        assert.isBelow(long.text.length, 2000)
      })
    )
  })
})
