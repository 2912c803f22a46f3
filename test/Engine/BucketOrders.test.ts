// Buckets and bucket orders through real HTTP, on a server running the sim as two venues (`--sim-venues 2`).
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { OwnerToken, request, testServer } from "../Http/TestServer.ts"
import { run, settle } from "./Support.ts"

const server = testServer({ simVenues: 2 })

const call = (method: "GET" | "POST" | "DELETE", path: string, json?: unknown) =>
  Effect.flatMap(OwnerToken, (token) => request(method, path, json === undefined ? { token } : { token, json }))

/** A sim market that sim2 lists the other way round, and that twin: the flipped pair of a bucket. */
const flippedPair = Effect.gen(function* () {
  const sim2 = (yield* request("GET", "/venues/sim2/markets?limit=1000")).body.data as Array<any>
  const twin = sim2.find((m) => m.native_id.endsWith("-no") && m.best_bid !== null && m.best_ask !== null)
  assert.isDefined(twin, "the seed gives sim2 a flipped twin with a two-sided book")
  return { anchor: `sim:${twin.native_id.replace(/-no$/, "").toUpperCase()}`, twin: twin.id as string }
})

const bookOf = (id: string) =>
  Effect.map(request("GET", `/venues/${id.slice(0, id.indexOf(":"))}/markets/${id}/book?depth=100`), (r) => r.body)

/** Contracts on the levels a bucket buy takes at bucket price ≤ `limit`: asks of a plain member, bids of a flipped one. */
const depthWithin = (book: any, flip: boolean, limit: number) =>
  flip
    ? book.bids.filter((l: any) => 1 - Number(l.price) <= limit).reduce((s: number, l: any) => s + Number(l.size), 0)
    : book.asks.filter((l: any) => Number(l.price) <= limit).reduce((s: number, l: any) => s + Number(l.size), 0)

const childrenOf = (id: string, account = "*") =>
  Effect.map(
    call("GET", `/trading/orders?parent_id=${id}&limit=1000&account=${account}`),
    (r) => r.body.data as Array<any>
  )

const fillsOf = (account: string) =>
  Effect.map(call("GET", `/trading/fills?account=${account}&limit=1000`), (r) => r.body.data as Array<any>)

describe("buckets over two sim venues", () => {
  it.effect("from a match: the twin joins flipped; create, list, read, archive; a bad member names its field", () =>
    Effect.gen(function* () {
      const { anchor, twin } = yield* flippedPair
      const made = yield* call("POST", "/trading/buckets/from-match", { market_id: anchor })
      assert.strictEqual(made.status, 201, made.text)
      assert.deepStrictEqual(
        made.body.members.map((m: any) => [m.market_id, m.flip, m.account]),
        [
          [anchor, false, "sim:default"],
          [twin, true, "sim2:default"]
        ]
      )
      assert.strictEqual(made.body.status, "active")

      const plain = yield* call("POST", "/trading/buckets", {
        name: "by hand",
        members: [{ market_id: anchor }, { market_id: twin, flip: true }]
      })
      assert.strictEqual(plain.status, 201, plain.text)
      const listed = yield* call("GET", "/trading/buckets?limit=1")
      assert.strictEqual(listed.body.data[0].id, made.body.id)
      assert.isString(listed.body.next_cursor)
      const second = yield* call("GET", `/trading/buckets?limit=1&cursor=${listed.body.next_cursor}`)
      assert.strictEqual(second.body.data[0].id, plain.body.id)

      const archived = yield* call("DELETE", `/trading/buckets/${plain.body.id}`)
      assert.strictEqual(archived.body.status, "archived")
      assert.deepStrictEqual(
        (yield* call("GET", "/trading/buckets")).body.data.map((b: any) => b.id),
        [made.body.id]
      )
      assert.deepStrictEqual(
        (yield* call("GET", "/trading/buckets?status=archived")).body.data.map((b: any) => b.id),
        [plain.body.id]
      )
      const onArchived = yield* call("POST", "/trading/orders", {
        market_id: `bucket:${plain.body.id}`,
        side: "buy",
        type: "market",
        amount: "1",
        price: "0.9"
      })
      assert.strictEqual(onArchived.status, 400)
      assert.include(onArchived.body.error.message, "archived")

      const bad = yield* call("POST", "/trading/buckets", {
        name: "bad",
        members: [{ market_id: anchor }, { market_id: "sim2:NOPE" }]
      })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.details.errors[0].field, "members[1].market_id")
      assert.strictEqual((yield* call("GET", "/trading/buckets/b_999999")).status, 404)
    }).pipe(Effect.provide(server))
  )

  it.effect(
    "a bucket buy fills across both venues, the flipped member on its NO side, inside the worst price after fees",
    () =>
      Effect.gen(function* () {
        const { anchor, twin } = yield* flippedPair
        const bucket = (yield* call("POST", "/trading/buckets/from-match", { market_id: anchor })).body
        const worst = 0.95
        // More than either venue shows inside 0.90, so that neither can fill it alone.
        const a = depthWithin(yield* bookOf(anchor), false, 0.9)
        const b = depthWithin(yield* bookOf(twin), true, 0.9)
        assert.isAbove(a, 0)
        assert.isAbove(b, 0)
        const amount = Math.min(Math.max(a, b) + 1, a + b)
        const res = yield* call("POST", "/trading/orders", {
          market_id: `bucket:${bucket.id}`,
          side: "buy",
          type: "market",
          amount: String(amount),
          price: String(worst)
        })
        assert.strictEqual(res.status, 201, res.text)
        assert.strictEqual(res.body.type, "market")
        assert.strictEqual(res.body.held_by, "engine")
        assert.strictEqual(res.body.info.kind, "bucket")
        yield* settle
        yield* run(1)

        const parent = (yield* call("GET", `/trading/orders/${res.body.id}`)).body
        assert.strictEqual(parent.status, "closed", JSON.stringify(parent.info))
        assert.strictEqual(Number(parent.filled), amount)
        assert.strictEqual(parent.info.stop_reason, "filled")
        const [first, flipped] = parent.info.venues
        assert.strictEqual(first.market_id, anchor)
        assert.strictEqual(first.side, "buy")
        assert.strictEqual(flipped.market_id, twin)
        assert.strictEqual(flipped.side, "sell")
        assert.isAbove(Number(first.filled), 0)
        assert.isAbove(Number(flipped.filled), 0)
        assert.strictEqual(Number(first.filled) + Number(flipped.filled), amount)

        const kids = yield* childrenOf(res.body.id)
        for (const kid of kids) {
          assert.strictEqual(kid.side, kid.market_id === twin ? "sell" : "buy", kid.market_id)
          assert.include([anchor, twin], kid.market_id)
        }
        // Every fill, in bucket terms after its own fee, is inside the worst price.
        const fills = [...(yield* fillsOf("sim:default")), ...(yield* fillsOf("sim2:default"))].filter((f) =>
          kids.some((k) => k.id === f.order_id)
        )
        assert.strictEqual(
          fills.reduce((s, f) => s + Number(f.amount), 0),
          amount
        )
        // The parent's cost and average are in bucket terms: a flipped member's contract at p costs 1 − p.
        const bucketCost = fills.reduce(
          (t, f) => t + (f.market_id === twin ? 1 - Number(f.price) : Number(f.price)) * Number(f.amount),
          0
        )
        assert.closeTo(Number(parent.cost), bucketCost, 1e-6)
        assert.isAtMost(Number(parent.average_price), worst)
        for (const f of fills) {
          const inBucket = f.market_id === twin ? 1 - Number(f.price) : Number(f.price)
          assert.isAtMost(inBucket + Number(f.fee) / Number(f.amount), worst + 1e-9, JSON.stringify(f))
        }

        const orders = (yield* call("GET", `/trading/buckets/${bucket.id}/orders`)).body.data
        assert.deepStrictEqual(
          orders.map((o: any) => o.id),
          [res.body.id]
        )
        const position = (yield* call("GET", `/trading/buckets/${bucket.id}/position`)).body
        assert.strictEqual(Number(position.contracts), amount)
        assert.strictEqual(Number(position.members[1].contracts), -Number(flipped.filled), "NO held on the twin")
        assert.strictEqual(Number(position.members[1].bucket_contracts), Number(flipped.filled))
      }).pipe(Effect.provide(server))
  )

  it.effect("legs rest on both venues past what the books show; a cancel pulls every leg on every venue", () =>
    Effect.gen(function* () {
      const { anchor, twin } = yield* flippedPair
      const bucket = (yield* call("POST", "/trading/buckets/from-match", { market_id: anchor })).body
      const res = yield* call("POST", "/trading/orders", {
        market_id: `bucket:${bucket.id}`,
        side: "buy",
        type: "market",
        amount: "5000",
        price: "0.95",
        params: { min_stay_s: 60 }
      })
      assert.strictEqual(res.status, 201, res.text)
      yield* settle
      const live = (yield* childrenOf(res.body.id)).filter((k) => k.status === "open")
      assert.deepStrictEqual([...new Set(live.map((k) => k.market_id))].sort(), [anchor, twin].sort())
      const working = (yield* call("GET", `/trading/orders/${res.body.id}`)).body
      assert.strictEqual(working.status, "triggered")
      assert.strictEqual(working.info.legs.length, 2)

      const canceled = yield* call("DELETE", `/trading/orders/${res.body.id}`)
      assert.strictEqual(canceled.status, 200, canceled.text)
      yield* settle
      yield* run(1)
      const after = yield* childrenOf(res.body.id)
      assert.deepStrictEqual(
        after.filter((k) => ["open", "pending", "pending_cancel"].includes(k.status)),
        []
      )
      const parent = (yield* call("GET", `/trading/orders/${res.body.id}`)).body
      assert.strictEqual(parent.status, "canceled")
      // Nothing of it still rests on either venue.
      for (const account of ["sim:default", "sim2:default"]) {
        const open = (yield* call("GET", `/trading/orders?account=${account}&limit=1000`)).body.data
        assert.deepStrictEqual(
          open.filter((o: any) => o.parent_id === res.body.id),
          []
        )
      }
    }).pipe(Effect.provide(server))
  )

  it.effect("permissions: trade on one member only is a 403 naming the other; view on both reads but cannot act", () =>
    Effect.gen(function* () {
      const { anchor, twin } = yield* flippedPair
      const bucket = (yield* call("POST", "/trading/buckets/from-match", { market_id: anchor })).body
      const owner = yield* OwnerToken
      const tokenFor = (user: string, grants: ReadonlyArray<[string, string]>) =>
        Effect.gen(function* () {
          for (const [account, permission] of grants) {
            const granted = yield* request("POST", "/trading/grants", {
              token: owner,
              json: { user, account, permission }
            })
            assert.strictEqual(granted.status, 201, granted.text)
          }
          return (yield* request("POST", "/trading/keys", { token: owner, json: { user, name: `${user}-key` } })).body
            .token as string
        })
      const half = yield* tokenFor("half", [
        ["sim:default", "trade"],
        ["sim:default", "view"],
        ["sim2:default", "view"]
      ])
      const order = {
        market_id: `bucket:${bucket.id}`,
        side: "buy",
        type: "market",
        amount: "1",
        price: "0.9"
      }
      const refused = yield* request("POST", "/trading/orders", { token: half, json: order })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body.error.code, "forbidden")
      assert.strictEqual(refused.body.error.details.account, "sim2:default")
      assert.include(refused.body.error.message, "sim2:default")
      const create = yield* request("POST", "/trading/buckets", {
        token: half,
        json: { name: "x", members: [{ market_id: anchor }, { market_id: twin, flip: true }] }
      })
      assert.strictEqual(create.status, 403)
      assert.strictEqual(create.body.error.details.account, "sim2:default")
      assert.strictEqual(
        (yield* request("DELETE", `/trading/buckets/${bucket.id}`, { token: half })).body.error.details.account,
        "sim2:default"
      )
      // view on both members reads the bucket, its orders and position
      assert.strictEqual((yield* request("GET", `/trading/buckets/${bucket.id}`, { token: half })).status, 200)
      assert.strictEqual((yield* request("GET", `/trading/buckets/${bucket.id}/position`, { token: half })).status, 200)

      // view on one member only: the bucket is not listed, and reading it names the missing account
      const one = yield* tokenFor("one", [["sim:default", "view"]])
      const read = yield* request("GET", `/trading/buckets/${bucket.id}`, { token: one })
      assert.strictEqual(read.status, 403)
      assert.strictEqual(read.body.error.details.account, "sim2:default")
      assert.deepStrictEqual((yield* request("GET", "/trading/buckets", { token: one })).body.data, [])
      // no order was placed by the refusals
      assert.deepStrictEqual((yield* call("GET", `/trading/buckets/${bucket.id}/orders`)).body.data, [])
    }).pipe(Effect.provide(server))
  )

  it.effect("a bucket of paper accounts routes on live books and sends nothing to either venue", () =>
    Effect.gen(function* () {
      const { anchor, twin } = yield* flippedPair
      const made = yield* call("POST", "/trading/buckets", {
        name: "on paper",
        members: [
          { market_id: anchor, account: "sim:paper" },
          { market_id: twin, flip: true, account: "sim2:paper" }
        ]
      })
      assert.strictEqual(made.status, 201, made.text)
      const a = depthWithin(yield* bookOf(anchor), false, 0.9)
      const b = depthWithin(yield* bookOf(twin), true, 0.9)
      const amount = Math.min(Math.max(a, b) + 1, a + b)
      const res = yield* call("POST", "/trading/orders", {
        market_id: `bucket:${made.body.id}`,
        side: "buy",
        type: "market",
        amount: String(amount),
        price: "0.95"
      })
      assert.strictEqual(res.status, 201, res.text)
      assert.strictEqual(res.body.info.paper, true)
      yield* settle
      yield* run(1)
      const parent = (yield* call("GET", `/trading/orders/${res.body.id}?account=sim:paper`)).body
      assert.strictEqual(parent.status, "closed", JSON.stringify(parent.info))
      const kids = yield* childrenOf(res.body.id)
      assert.deepStrictEqual([...new Set(kids.map((k) => k.account.name))], ["paper"])
      for (const kid of kids) assert.isTrue(kid.info.paper)
      const venues = parent.info.venues.map((v: any) => Number(v.filled))
      assert.isAbove(venues[0], 0)
      assert.isAbove(venues[1], 0)
      // The venues' own accounts never traded.
      for (const account of ["sim:default", "sim2:default"]) {
        assert.deepStrictEqual(yield* fillsOf(account), [])
      }
      const paperFills = [...(yield* fillsOf("sim:paper")), ...(yield* fillsOf("sim2:paper"))]
      assert.strictEqual(
        paperFills.reduce((t, f) => t + Number(f.amount), 0),
        amount
      )
    }).pipe(Effect.provide(testServer({ simVenues: 2, paper: { cash: "100000" } })))
  )
})
