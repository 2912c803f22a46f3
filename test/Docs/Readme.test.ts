/**
 * The README's command blocks run as written against a scratch home: `serve` on a free port with the sim venue,
 * `CROSSBOOK_HOME` a new folder, `npx crossbook` the command from the sources. An example that cannot work on a fresh
 * clone, offline, fails here.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, startServe } from "../../scripts/crash/serve.ts"
import { blocks, read, ROOT } from "./Markdown.ts"

/** The set-up block (`npm ci && …`) is what a reader runs before; the tour is every `sh` block after it. */
const tour = () => blocks(read("README.md")).filter((b) => b.lang === "sh")

const bash = (script: string, cwd: string, env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("bash", ["-c", script], { cwd, env: { ...process.env, ...env } })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

describe("the README", () => {
  it.live(
    "its command blocks work as written on a fresh home, offline, on the sim venue",
    () =>
      Effect.gen(function* () {
        const blocksToRun = tour()
        assert.isAtLeast(blocksToRun.length, 3)
        const dir = mkdtempSync(join(tmpdir(), "crossbook-readme-"))
        const home = join(dir, "home")
        const work = join(dir, "work")
        mkdirSync(work)
        // The project folder a reader stands in: the example strategies, the installed modules.
        for (const name of ["sim", "node_modules", "fixtures"]) symlinkSync(join(ROOT, name), join(work, name))
        const port = yield* Effect.promise(freePort)
        const closed = yield* Effect.promise(freePort)
        const served = yield* Effect.acquireRelease(
          Effect.promise(() => startServe({ home, port, args: ["--venues", "sim"] })),
          (s) =>
            Effect.promise(() => {
              s.child.kill("SIGTERM")
              return s.ended
            })
        )
        const script = [
          "set -euo pipefail",
          `crossbook() { node ${JSON.stringify(join(ROOT, "bin/run-ts.js"))} ${JSON.stringify(join(ROOT, "sim/main.ts"))} "$@"; }`,
          'npx() { if [ "$1" = crossbook ]; then shift; crossbook "$@"; else command npx "$@"; fi; }',
          // An HTTP error answer fails the script, as a reader would notice it.
          'curl() { command curl --fail-with-body "$@"; }',
          ...blocksToRun.map((b, i) => `echo "--- block ${i + 1}" >&2\n${b.text}`)
        ]
          .join("\n")
          .replaceAll("127.0.0.1:8000", `127.0.0.1:${port}`)
        const ran = yield* Effect.promise(() =>
          bash(script, work, {
            CROSSBOOK_HOME: home,
            SERVICE_URL: served.url,
            NO_COLOR: "1",
            // `doctor` probes the real venues' hosts: here, a port nothing listens on, as offline.
            KALSHI_API_URL: `http://127.0.0.1:${closed}/trade-api/v2`,
            POLYMARKET_CLOB_URL: `http://127.0.0.1:${closed}`
          })
        )
        assert.strictEqual(ran.code, 0, `${ran.stderr.slice(-3000)}\n${ran.stdout.slice(-2000)}`)
        // What the tour says it shows.
        assert.match(ran.stdout, /"id":"sim"/)
        assert.match(ran.stdout, /^ID +MARKET +SIDE +TYPE/m)
        assert.match(ran.stdout, /"type":"stop_market"/)
        assert.match(ran.stdout, /report in bt\/report\.html/)
      }).pipe(Effect.scoped),
    300_000
  )
})
