import { afterAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, spawnCrossbook } from "../../scripts/crash/serve.ts"
import { readArrowTape } from "../../sim/ArrowTape.ts"
import { parseTape } from "../../sim/Tape.ts"
import { makeSimVenue } from "../../src/Venues/SimVenue.ts"

const home = join(mkdtempSync(join(tmpdir(), "crossbook-hosted-")), "home")
const crossbook = (args: ReadonlyArray<string>) => spawnCrossbook(args, { CROSSBOOK_HOME: home, SERVICE_API_KEY: "" })
let host: ReturnType<typeof spawnCrossbook> | undefined

afterAll(async () => {
  if (host !== undefined && host.child.exitCode === null) {
    host.child.kill("SIGTERM")
    await host.ended
  }
})

const waitFor = async (check: () => Promise<boolean> | boolean, what: string) => {
  for (let i = 0; i < 600; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe("the hosted flow on the command line", () => {
  it("data serve, data invite, login, keys create, record (Ctrl-C), history tape, keys revoke → 401", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    host = crossbook(["data", "serve", "--port", String(port)])
    await waitFor(
      () =>
        fetch(`${url}/health`).then(
          (r) => r.ok,
          () => false
        ),
      "the data host"
    )

    const invite = await crossbook(["data", "invite", "--name", "me"]).ended
    expect(invite.code).toBe(0)
    expect(invite.stdout).toMatch(/^cbi_[A-Za-z0-9]+\n$/)

    const login = await crossbook(["login", "--url", url, "--code", invite.stdout.trim()]).ended
    expect(login.code, login.stderr).toBe(0)
    const hosted = join(home, "hosted.json")
    expect(statSync(hosted).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(hosted, "utf8"))).toMatchObject({ url })

    const created = await crossbook(["keys", "create", "--name", "laptop", "--json"]).ended
    expect(created.code, created.stderr).toBe(0)
    const answer = JSON.parse(created.stdout)
    const keyFile = join(home, "api-key")
    expect(readFileSync(keyFile, "utf8").trim()).toBe(answer.key)
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    expect(readFileSync(hosted, "utf8")).not.toContain(answer.key)

    const market = await Effect.runPromise(
      Effect.scoped(Effect.flatMap(makeSimVenue({ seed: 1, stepMs: 1000, markets: 24 }), (v) => v.markets))
    ).then((all) => all[0]!.nativeId)
    const recording = crossbook(["record", "--venue", "sim", "--markets", market])
    await waitFor(() => recording.stdout().includes("recording"), "the recorder")
    await new Promise((resolve) => setTimeout(resolve, 2500))
    recording.child.kill("SIGINT")
    const recorded = await recording.ended
    expect(recorded.code, recorded.stderr).toBe(0)
    const summary = JSON.parse(recorded.stdout.trim().split("\n").pop()!)
    expect(summary.book_rows).toBeGreaterThan(0)

    const now = Date.now()
    const out = join(home, "tape.jsonl")
    const tape = await crossbook([
      "history",
      "tape",
      "--from",
      String(now - 3_600_000),
      "--to",
      new Date(now + 60_000).toISOString(),
      "--out",
      out,
      `sim:${market}`
    ]).ended
    expect(tape.code, tape.stderr).toBe(0)
    const parsed = parseTape(readFileSync(out, "utf8"))
    expect(parsed.header.markets[0]!.id).toBe(`sim:${market}`)
    expect(parsed.events.some((e) => e.type === "snapshot")).toBe(true)

    // What a person reads: times in ISO 8601, never ms since the epoch (`--json` keeps the API's ms).
    const trades = await crossbook([
      "history",
      "trades",
      "--from",
      String(now - 3_600_000),
      "--to",
      String(now + 60_000),
      `sim:${market}`
    ]).ended
    expect(trades.code, trades.stderr).toBe(0)
    expect(trades.stdout).toMatch(/^absent \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\.\.\d{4}-/m)
    expect(trades.stdout).not.toMatch(/\b1\d{12}\b/)

    // The same range as the columnar tape: the same header and events.
    const arrowOut = join(home, "tape.arrow")
    const arrow = await crossbook([
      "history",
      "tape",
      "--from",
      String(now - 3_600_000),
      "--to",
      new Date(now + 60_000).toISOString(),
      "--out",
      arrowOut,
      `sim:${market}`
    ]).ended
    expect(arrow.code, arrow.stderr).toBe(0)
    const columnar = readArrowTape(readFileSync(arrowOut))
    expect(columnar.header).toEqual(parsed.header)
    // The recording may have gone on between the two reads: what the first tape holds comes first in the second.
    expect([...columnar.events].slice(0, parsed.events.length)).toEqual(parsed.events)

    const revoked = await crossbook(["keys", "revoke", answer.record.id]).ended
    expect(revoked.code, revoked.stderr).toBe(0)
    const refused = await crossbook(["history", "book", "--at", String(now), `sim:${market}`]).ended
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("unauthorized")
    expect(refused.stderr).toContain("crossbook keys create")
  }, 240_000)
})
