/** Offline, `serve` and `match` say nothing alarming about the venues they cannot reach: no WARN lines. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, spawnCrossbook, startServe } from "../../scripts/crash/serve.ts"

/** Every venue host on a port nothing listens on: what a machine without a network meets. */
const offline = (port: number): Record<string, string> => ({
  KALSHI_API_URL: `http://127.0.0.1:${port}/trade-api/v2`,
  KALSHI_WS_URL: `ws://127.0.0.1:${port}/trade-api/ws/v2`,
  POLYMARKET_CLOB_URL: `http://127.0.0.1:${port}`,
  POLYMARKET_GAMMA_URL: `http://127.0.0.1:${port}`,
  POLYMARKET_DATA_URL: `http://127.0.0.1:${port}`,
  POLYMARKET_WS_URL: `ws://127.0.0.1:${port}/ws`
})

describe("offline starts are quiet", () => {
  it.live(
    "serve on every venue, none reachable but the sim: no WARN line once it has tried them",
    () =>
      Effect.gen(function* () {
        const closed = yield* Effect.promise(freePort)
        const port = yield* Effect.promise(freePort)
        const home = join(mkdtempSync(join(tmpdir(), "crossbook-quiet-")), "home")
        const env = offline(closed)
        for (const [k, v] of Object.entries(env)) process.env[k] = v
        const served = yield* Effect.promise(() =>
          startServe({ home, port, args: ["--venues", "sim,kalshi,polymarket"] }).finally(() => {
            for (const k of Object.keys(env)) delete process.env[k]
          })
        )
        // The matcher loads the catalogs in the background: a match asks for them now.
        const answer = yield* Effect.promise(() =>
          fetch(`${served.url}/venues/sim/markets?limit=1`).then((r) => r.json() as Promise<any>)
        )
        const id = answer.data[0].id as string
        yield* Effect.promise(() => fetch(`${served.url}/venues/sim/markets/${encodeURIComponent(id)}/match`))
        yield* Effect.sleep("1 second")
        served.child.kill("SIGTERM")
        const ended = yield* Effect.promise(() => served.ended)
        assert.notMatch(ended.stdout + ended.stderr, /WARN/, ended.stdout + ended.stderr)
      }),
    120_000
  )

  it.live(
    "match over the configured venues, none reachable but the sim: no WARN line",
    () =>
      Effect.gen(function* () {
        const closed = yield* Effect.promise(freePort)
        const home = join(mkdtempSync(join(tmpdir(), "crossbook-quiet-")), "home")
        const ended = yield* Effect.promise(
          () =>
            spawnCrossbook(["match", "--venues", "sim,kalshi,polymarket", "sim:NO-SUCH-MARKET"], {
              CROSSBOOK_HOME: home,
              ...offline(closed)
            }).ended
        )
        assert.notMatch(ended.stdout + ended.stderr, /WARN/, ended.stdout + ended.stderr)
      }),
    120_000
  )
})
