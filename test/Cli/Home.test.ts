import { assert, describe, it } from "@effect/vitest"
import Database from "better-sqlite3"
import { Effect } from "effect"
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { call, freePort, ownerToken, spawnCrossbook, startServe } from "../../scripts/crash/serve.ts"

const freshHome = () => join(mkdtempSync(join(tmpdir(), "crossbook-home-")), "home")
const modes = (home: string) =>
  Object.fromEntries(readdirSync(home).map((name) => [name, (statSync(join(home, name)).mode & 0o777).toString(8)]))

describe("the home folder", () => {
  it.live(
    "a second serve on the same home stops before touching it and names the owner's pid; the first keeps working; every file is 0600",
    () =>
      Effect.promise(async () => {
        const home = freshHome()
        mkdirSync(home, { recursive: true, mode: 0o700 })
        // A database an earlier version left readable by others.
        new Database(join(home, "engine.db")).close()
        chmodSync(join(home, "engine.db"), 0o644)
        const [port, otherPort] = [await freePort(), await freePort()]
        const first = await startServe({ home, port })
        try {
          const token = ownerToken(home, port)
          const market = (await call(first.url, "GET", "/venues/sim/markets?limit=1")).body.data[0].id
          const order = { market_id: market, side: "buy", type: "limit", amount: "1", price: "0.01" }
          const resting = await call(first.url, "POST", "/trading/orders", {
            token,
            json: { ...order, client_order_id: "resting" }
          })
          assert.strictEqual(resting.status, 201, JSON.stringify(resting.body))
          const seq = (await call(first.url, "GET", "/trading/status", { token })).body.journal_seq
          const registry = readFileSync(join(home, "servers.json"), "utf8")

          const second = spawnCrossbook(["serve", "--port", String(otherPort)], { CROSSBOOK_HOME: home })
          const ended = await Promise.race([
            second.ended,
            new Promise<void>((r) => setTimeout(r, 30_000)).then(() => {
              second.child.kill("SIGKILL")
              return undefined
            })
          ])
          assert.isDefined(ended, `the second serve kept running: ${second.stdout()}`)
          assert.strictEqual(ended!.code, 1)
          assert.strictEqual(ended!.stdout, "")
          const lines = ended!.stderr.trim().split("\n")
          assert.strictEqual(lines.length, 1, ended!.stderr)
          assert.include(lines[0], `in use by process ${first.pid}`)

          assert.strictEqual(readFileSync(join(home, "servers.json"), "utf8"), registry)
          const after = await call(first.url, "GET", "/trading/orders/" + resting.body.id, { token })
          assert.strictEqual(after.body.status, "open")
          assert.strictEqual((await call(first.url, "GET", "/trading/status", { token })).body.journal_seq, seq)
          const next = await call(first.url, "POST", "/trading/orders", { token, json: order })
          assert.strictEqual(next.status, 201, JSON.stringify(next.body))

          for (const [name, mode] of Object.entries(modes(home))) assert.strictEqual(mode, "600", name)
          assert.isTrue(existsSync(join(home, "engine.db-wal")))
        } finally {
          first.child.kill("SIGKILL")
          await first.ended
        }
        // A server killed outright leaves no lock behind: the next one starts on the same home.
        const again = await startServe({ home, port })
        again.child.kill("SIGTERM")
        assert.strictEqual((await again.ended).code, 0)
      }),
    120_000
  )

  it.live("a port in use stops serve with one sentence before anything is written in its home", () =>
    Effect.promise(async () => {
      const taken = createServer()
      const port = await new Promise<number>((resolve) =>
        taken.listen(0, "127.0.0.1", () => resolve((taken.address() as { port: number }).port))
      )
      try {
        const home = freshHome()
        const run = spawnCrossbook(["serve", "--port", String(port)], { CROSSBOOK_HOME: home })
        const ended = await run.ended
        assert.strictEqual(ended.code, 1)
        assert.strictEqual(
          ended.stderr,
          `crossbook: port ${port} on 127.0.0.1 is in use: stop what listens there, or pick another --port\n`
        )
        // A new home is left as it was found: no database, no registry, and no lock or owner's note either.
        assert.deepStrictEqual(existsSync(home) ? readdirSync(home) : [], [], "nothing written in the home")
      } finally {
        taken.close()
      }
    })
  )
})
