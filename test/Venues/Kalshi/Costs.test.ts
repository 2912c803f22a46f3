/** Kalshi's token costs as its document states them: reading one order by id costs 2 tokens, most reads cost 10. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { generateKeyPairSync } from "node:crypto"
import { makeRest } from "../../../src/Venues/Kalshi/Rest.ts"
import { createOrderBody } from "../../../src/Venues/Kalshi/Venue.ts"
import { fakeKalshi, orderOn } from "./Fake.ts"
import { live, MARKETS } from "./Helpers.ts"

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })

describe("Kalshi's token costs", () => {
  it.live("five reads of one order fit a 10-token bucket; a default-cost read after them waits for the refill", () =>
    live(
      Effect.gen(function* () {
        const x = yield* fakeKalshi(publicKey, MARKETS)
        // a read bucket of 10 tokens that refills in 200 s: whatever waits for it does not answer within the test
        const rest = yield* makeRest({
          baseUrl: x.apiUrl,
          credentials: { keyId: "k", key: privateKey },
          limits: { read: { capacity: 10, refillPerSecond: 0.05 }, write: { capacity: 100, refillPerSecond: 100 } }
        })
        const placed = yield* rest.createOrder(createOrderBody(orderOn({ clientOrderId: "cost-1" })))
        for (let i = 0; i < 5; i++) {
          const read = yield* rest.order(placed.order_id).pipe(Effect.timeoutOption("5 seconds"))
          assert.isTrue(Option.isSome(read), `read ${i + 1} of the order by id answered at 2 tokens`)
        }
        const balance = yield* rest.balance.pipe(Effect.timeoutOption("1 second"))
        assert.isTrue(
          Option.isNone(balance),
          "a 10-token read waits: the bucket holds no tokens after five 2-token reads"
        )
      })
    )
  )
})
