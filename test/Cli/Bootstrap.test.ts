import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { accessToken } from "../../src/Client.ts"
import { bootstrapAccess } from "../../src/Stack.ts"
import { authLayer } from "../../src/Assembly.ts"
import { ensureHome } from "../../src/Home.ts"
import { registryFile } from "../../src/Registry.ts"
import { Auth } from "../../src/Services/Auth.ts"

const freshHome = () => ensureHome(join(mkdtempSync(join(tmpdir(), "crossbook-home-")), "home"))

const start = (home: string, host: string, port: number, lines: Array<string>) =>
  bootstrapAccess({
    home,
    host,
    port,
    controlFile: join(home, "control.db"),
    dbFile: join(home, "engine.db"),
    say: (line) => Effect.sync(() => void lines.push(line))
  }).pipe(Effect.provide(authLayer(join(home, "control.db"))))

describe("owner bootstrap", () => {
  it.effect("on loopback the owner token goes to servers.json (0600 in a 0700 folder), never to the console", () =>
    Effect.gen(function* () {
      const home = freshHome()
      const lines: Array<string> = []
      yield* start(home, "127.0.0.1", 8123, lines)
      const file = registryFile(home)
      assert.strictEqual(statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(statSync(home).mode & 0o777, 0o700)
      const registry = JSON.parse(readFileSync(file, "utf8"))
      const entry = registry["127.0.0.1:8123"]
      assert.deepStrictEqual(Object.keys(entry).sort(), ["access_token", "control", "db", "pid", "started_at"])
      assert.match(entry.access_token, /^cb_/)
      assert.isTrue(lines.some((l) => l.includes(file)))
      assert.isFalse(lines.some((l) => l.includes(entry.access_token)))
      assert.isTrue(
        lines.some((l) => l.includes("http://127.0.0.1:8123/ui/")),
        "the console names the dashboard"
      )
      const principal = yield* Effect.flatMap(Auth, (auth) => auth.authenticate(entry.access_token)).pipe(
        Effect.provide(authLayer(join(home, "control.db")))
      )
      assert.strictEqual(principal.name, "owner")
      assert.strictEqual(principal.grants.length, 4)
      // A client on this machine finds it there, unless the environment names one.
      assert.strictEqual(accessToken(home, "http://127.0.0.1:8123", {}), entry.access_token)
      assert.strictEqual(accessToken(home, "http://localhost:8123", {}), entry.access_token)
      assert.strictEqual(accessToken(home, "http://127.0.0.1:8123", { SERVICE_ACCESS_TOKEN: "cb_x" }), "cb_x")
      assert.isUndefined(accessToken(home, "http://10.0.0.5:8123", {}))
      // A restart keeps the same token.
      yield* start(home, "127.0.0.1", 8123, [])
      assert.strictEqual(JSON.parse(readFileSync(file, "utf8"))["127.0.0.1:8123"].access_token, entry.access_token)
      // Another port on the same control database gets an owner token of its own.
      yield* start(home, "127.0.0.1", 8124, [])
      const both = JSON.parse(readFileSync(file, "utf8"))
      assert.notStrictEqual(both["127.0.0.1:8124"].access_token, entry.access_token)
      assert.strictEqual(both["127.0.0.1:8123"].access_token, entry.access_token)
    })
  )

  it.effect("bound elsewhere, the token is printed once with a warning, and no registry entry is written", () =>
    Effect.gen(function* () {
      const home = freshHome()
      const lines: Array<string> = []
      yield* start(home, "0.0.0.0", 8125, lines)
      assert.isFalse(existsSync(registryFile(home)))
      const withToken = lines.filter((l) => /cb_[A-Za-z0-9]{8}_/.test(l))
      assert.strictEqual(withToken.length, 1)
      assert.isTrue(lines.some((l) => l.includes("without authentication") && l.includes("TLS proxy")))
      assert.isTrue(lines.some((l) => l.includes("http://0.0.0.0:8125/ui/")))
      const again: Array<string> = []
      yield* start(home, "0.0.0.0", 8125, again)
      assert.isFalse(
        again.some((l) => /cb_[A-Za-z0-9]{8}_/.test(l)),
        "shown once only"
      )
      assert.isFalse(existsSync(registryFile(home)))
    })
  )
})
