/** `doctor` probes the hosts `serve` trades on: the same settings, read the same way. */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { BUILT_IN_VENUES } from "../../src/Venues/BuiltIn.ts"
import { configFromEnv as kalshiConfig } from "../../src/Venues/Kalshi/Venue.ts"
import { configFromEnv as polymarketConfig } from "../../src/Venues/Polymarket/Venue.ts"

const probe = (id: string, env: NodeJS.ProcessEnv) =>
  Effect.runPromise(BUILT_IN_VENUES.find((v) => v.id === id)!.doctor!.url!(env))

describe("doctor's venue hosts", () => {
  for (const env of [
    {},
    { KALSHI_ENV: "demo" },
    { KALSHI_API_URL: "http://127.0.0.1:9/trade-api/v2" },
    { KALSHI_ENV: "demo", KALSHI_API_URL: "  " }
  ] as ReadonlyArray<NodeJS.ProcessEnv>) {
    it(`Kalshi with ${JSON.stringify(env)}: the API serve uses, then /exchange/status`, async () => {
      const config = Either.getOrThrow(kalshiConfig(env))
      assert.strictEqual(await probe("kalshi", env), `${config.apiUrl.replace(/\/+$/, "")}/exchange/status`)
    })
  }

  for (const env of [{}, { POLYMARKET_CLOB_URL: "http://127.0.0.1:9" }] as ReadonlyArray<NodeJS.ProcessEnv>) {
    it(`Polymarket with ${JSON.stringify(env)}: the CLOB serve uses, then /time`, async () => {
      const config = polymarketConfig(env)
      assert.strictEqual(await probe("polymarket", env), `${config.hosts.clob.replace(/\/+$/, "")}/time`)
    })
  }
})
