import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, spawnCrossbook } from "../../scripts/crash/serve.ts"
import { generateTape } from "../../sim/Generator.ts"
import { formatTape } from "../../sim/Tape.ts"

const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => spawnCrossbook(args, { CROSSBOOK_HOME: join(scratch(), "home"), ...env }).ended)
const scratch = () => mkdtempSync(join(tmpdir(), "crossbook-cli-"))

/** One plain sentence on stderr: no stack, no logger block, no escape codes, nothing on stdout. */
const oneSentence = (ended: { stdout: string; stderr: string }) => {
  assert.strictEqual(ended.stdout, "")
  const lines = ended.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, ended.stderr)
  assert.match(lines[0]!, /^crossbook: /)
  assert.notInclude(ended.stderr, "\x1b[")
  assert.notMatch(ended.stderr, /Effect| {4}at |ERROR \(/)
  return lines[0]!
}

describe("crossbook fails like a tool", () => {
  it.live(
    "an unreachable server is one sentence on stderr that says what to do, exit 1",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const ended = yield* run(["me"], { SERVICE_URL: `http://127.0.0.1:${port}`, SERVICE_ACCESS_TOKEN: "cb_x" })
        assert.strictEqual(ended.code, 1)
        const line = oneSentence(ended)
        assert.include(line, `cannot reach the server at http://127.0.0.1:${port} (ECONNREFUSED)`)
        assert.include(line, "crossbook serve")
      }),
    120_000
  )

  it.live(
    "a usage error explains itself on stderr without colour when piped, exit 2",
    () =>
      Effect.gen(function* () {
        const ended = yield* run(["orders", "place", "--market", "sim:x"], { NO_COLOR: "" })
        assert.strictEqual(ended.code, 2)
        assert.strictEqual(ended.stdout, "")
        assert.include(ended.stderr, "--side")
        assert.notInclude(ended.stderr, "\x1b[")
        assert.notInclude(ended.stderr, "_tag")
      }),
    120_000
  )

  it.live(
    "a --paper-cash that is not a decimal is refused in one sentence before the server starts, exit 1",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const ended = yield* run(["serve", "--port", String(port), "--venues", "sim", "--paper-cash", "lots"])
        assert.strictEqual(ended.code, 1)
        assert.include(oneSentence(ended), "--paper-cash must be a decimal of at most six places, not 'lots'")
      }),
    120_000
  )

  it.live(
    "a strategy that is not one is refused before any backtest runs, exit 1",
    () =>
      Effect.gen(function* () {
        const dir = scratch()
        writeFileSync(join(dir, "answer.mjs"), "export default 42\n")
        const ended = yield* run(["backtest", "--out", join(dir, "out"), join(dir, "answer.mjs")])
        assert.strictEqual(ended.code, 1)
        assert.include(oneSentence(ended), "its default export is a number, not a Strategy")
        assert.isFalse(existsSync(join(dir, "out")))
      }),
    120_000
  )

  it.live(
    "a TypeScript strategy outside an ES module package runs",
    () =>
      Effect.gen(function* () {
        const dir = scratch()
        const g = generateTape({ seed: 3, markets: 1, durationS: 60 })
        writeFileSync(join(dir, "tape.jsonl"), formatTape(g.header, g.events))
        writeFileSync(
          join(dir, "quiet.ts"),
          'const name: string = "quiet"\nexport default { name, onStart: (_ctx: unknown): void => {} }\n'
        )
        const ended = yield* run([
          "backtest",
          "--tape",
          join(dir, "tape.jsonl"),
          "--out",
          join(dir, "out"),
          join(dir, "quiet.ts")
        ])
        assert.strictEqual(ended.code, 0, ended.stderr)
        assert.match(ended.stdout, /^quiet: net /)
        assert.isTrue(existsSync(join(dir, "out", "report.json")))
      }),
    120_000
  )

  it.live(
    "converting a file that holds no market data writes nothing and exits 1",
    () =>
      Effect.gen(function* () {
        const dir = scratch()
        writeFileSync(join(dir, "garbage.txt"), "not a recording\n")
        const ended = yield* run(["sim", "convert", "--from", "kalshi", join(dir, "garbage.txt"), join(dir, "t.jsonl")])
        assert.strictEqual(ended.code, 1)
        assert.include(ended.stderr, "holds no kalshi market data")
        assert.isFalse(existsSync(join(dir, "t.jsonl")))
      }),
    120_000
  )

  it.live(
    "doctor reports credentials without their values, an unreachable venue without failing, and clock skew",
    () =>
      Effect.gen(function* () {
        const ahead = createServer((_req, res) => {
          res.setHeader("date", new Date(Date.now() + 60_000).toUTCString())
          res.end("{}")
        })
        const port = yield* Effect.promise(
          () => new Promise<number>((r) => ahead.listen(0, "127.0.0.1", () => r((ahead.address() as any).port)))
        )
        const closed = yield* Effect.promise(freePort)
        const secret = "do-not-print-this-value"
        const ended = yield* run(["doctor", "--json"], {
          KALSHI_API_KEY_ID: secret,
          KALSHI_PRIVATE_KEY: secret,
          KALSHI_PRIVATE_KEY_PATH: "",
          POLYMARKET_PRIVATE_KEY: "",
          KALSHI_API_URL: `http://127.0.0.1:${port}/status`,
          POLYMARKET_CLOB_URL: `http://127.0.0.1:${closed}/time`
        }).pipe(Effect.ensuring(Effect.sync(() => ahead.close())))
        assert.strictEqual(ended.code, 0, ended.stderr)
        assert.notInclude(ended.stdout + ended.stderr, secret)
        const checks = Object.fromEntries(
          (JSON.parse(ended.stdout).checks as Array<{ name: string; status: string; detail: string }>).map((c) => [
            c.name,
            c
          ])
        )
        assert.strictEqual(checks["venue sim"]!.status, "ok")
        assert.include(checks["venue kalshi"]!.detail, "credentials present")
        assert.match(checks["venue kalshi"]!.detail, /clock skew \+(59|60|61) s/)
        assert.strictEqual(checks["venue kalshi"]!.status, "warn")
        assert.include(checks["venue polymarket"]!.detail, "unreachable")
        assert.include(checks["venue polymarket"]!.detail, "credentials missing: POLYMARKET_PRIVATE_KEY")
      }),
    120_000
  )

  it.live(
    "doctor fails on a database others can read",
    () =>
      Effect.gen(function* () {
        const dir = scratch()
        const home = join(dir, "home")
        const Database = (yield* Effect.promise(() => import("better-sqlite3"))).default
        const { mkdirSync, chmodSync } = yield* Effect.promise(() => import("node:fs"))
        mkdirSync(home, { mode: 0o700 })
        new Database(join(home, "engine.db")).close()
        chmodSync(join(home, "engine.db"), 0o644)
        const ended = yield* Effect.promise(
          () =>
            spawnCrossbook(["doctor"], {
              CROSSBOOK_HOME: home,
              KALSHI_API_URL: "http://127.0.0.1:9/",
              POLYMARKET_CLOB_URL: "http://127.0.0.1:9/"
            }).ended
        )
        assert.strictEqual(ended.code, 1)
        assert.match(ended.stdout, /fail +engine database .*engine\.db is 0644: others can read it/)
        assert.strictEqual(ended.stderr, "crossbook: 1 check failed: engine database\n")
      }),
    120_000
  )
})
