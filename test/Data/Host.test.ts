import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Keys } from "../../src/Data/Keys.ts"
import { DataStore } from "../../src/Data/Store.ts"
import {
  apiKey,
  apiKeyFile,
  hostedFile,
  readHosted,
  writeApiKey,
  writeHosted
} from "../../src/Services/HostedConfig.ts"
import { NodeHttpClient } from "@effect/platform-node"
import { Effect } from "effect"
import { readArrowTape } from "../../sim/ArrowTape.ts"
import { importTape, tapeFromHistory } from "../../sim/History.ts"
import { formatTape, parseTape } from "../../sim/Tape.ts"
import { Tapes } from "../../src/Data/Tapes.ts"
import { HistoryClient } from "../../src/Services/HistoryClient.ts"
import { call, keyOn, type RunningHost, startHost, tempFolder } from "./Support.ts"

const M = "sim:GEN-001"

/** A market recorded in two stretches: a sequence gap at 1500 breaks it until the snapshot at 2000. */
const TAPE = [
  `{"type":"header","version":1,"source":"generated","markets":[{"id":"${M}","title":"Test market","tick":"0.01","lot":"1"}]}`,
  `{"type":"snapshot","ts":1000,"market":"${M}","bids":[["0.4","10"]],"asks":[["0.45","5"]]}`,
  `{"type":"trade","ts":1100,"market":"${M}","price":"0.45","amount":"2","taker_side":"buy"}`,
  `{"type":"change","ts":1100,"market":"${M}","side":"ask","price":"0.45","size":"3"}`,
  `{"type":"change","ts":1200,"market":"${M}","side":"bid","price":"0.41","size":"7"}`,
  `{"type":"change","ts":1300,"market":"${M}","side":"bid","price":"0.4","size":"0"}`,
  `{"type":"gap","ts":1500,"market":"${M}","expected":5,"got":9}`,
  `{"type":"change","ts":1600,"market":"${M}","side":"bid","price":"0.3","size":"1"}`,
  `{"type":"snapshot","ts":2000,"market":"${M}","bids":[["0.5","1"]],"asks":[["0.6","2"]]}`,
  `{"type":"trade","ts":2100,"market":"${M}","price":"0.5","amount":"1","taker_side":"sell"}`,
  `{"type":"change","ts":2100,"market":"${M}","side":"bid","price":"0.5","size":"0"}`,
  ""
].join("\n")

let host: RunningHost
let key: string

beforeAll(async () => {
  const store = new DataStore(join(tempFolder(), "data.db"))
  importTape(store, TAPE)
  key = keyOn(store)
  host = await startHost(store, { maxRangeMs: 60_000, tapes: Tapes.lazy(() => import("../../sim/History.ts")) })
})
afterAll(() => host.close())

/** A history call with the test's key, another key, or none (null). */
const history = (path: string, body: unknown, bearer: string | null = key) =>
  call(host.url, "POST", path, { body, ...(bearer === null ? {} : { bearer }) })

describe("data host: keys and login", () => {
  it("invite → login → key → history → revoke → 401 naming the way back", async () => {
    const code = new Keys(host.store).invite("alice", Date.now()).code
    const login = await call(host.url, "POST", "/v1/login", { body: { code } })
    expect(login.status).toBe(200)
    expect(login.body.user).toBe("alice")
    // The code is spent.
    const again = await call(host.url, "POST", "/v1/login", { body: { code } })
    expect(again.status).toBe(401)
    expect(again.body.error.code).toBe("unauthorized")

    const created = await call(host.url, "POST", "/v1/keys", { bearer: login.body.session, body: { name: "laptop" } })
    expect(created.status).toBe(201)
    const aliceKey: string = created.body.key
    expect(created.body.record.name).toBe("laptop")

    const ok = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1100 }, aliceKey)
    expect(ok.status).toBe(200)

    // Keys are the session user's own: alice sees hers only.
    const listed = await call(host.url, "GET", "/v1/keys", { bearer: login.body.session })
    expect(listed.body.data.map((k: any) => k.id)).toEqual([created.body.record.id])
    expect(JSON.stringify(listed.body)).not.toContain(aliceKey)

    const revoked = await call(host.url, "DELETE", `/v1/keys/${created.body.record.id}`, { bearer: login.body.session })
    expect(revoked.status).toBe(200)
    expect(revoked.body.revoked_at).toBeTypeOf("number")

    const refused = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1100 }, aliceKey)
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("unauthorized")
    expect(refused.body.error.message).toContain("crossbook login")
    expect(refused.body.error.message).toContain("crossbook keys create")
    expect(refused.body.error.message).toContain("SERVICE_API_KEY")
    expect(refused.body.error.details).toEqual({ venue: null, retryable: false })
  })

  it("refuses history without a key, and keys without a session, with the error body", async () => {
    const missing = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1100 }, null)
    expect(missing.status).toBe(401)
    expect(missing.body.error.message).toContain("crossbook login")
    const noSession = await call(host.url, "POST", "/v1/keys", { bearer: key, body: {} })
    expect(noSession.status).toBe(401)
    expect(noSession.body.error.code).toBe("unauthorized")
  })

  it("stores keys, sessions and invite codes as their SHA-256 only", async () => {
    const folder = tempFolder()
    const store = new DataStore(join(folder, "data.db"))
    const keys = new Keys(store)
    const { code } = keys.invite("bob", 1_000)
    const login = keys.login(code, 2_000)!
    const { key: secret } = keys.createKey(keys.session(login.session, 2_000)!, "k", 2_000)
    store.close()
    const bytes = ["data.db", "data.db-wal"]
      .map((f) => {
        try {
          return readFileSync(join(folder, f)).toString("latin1")
        } catch {
          return ""
        }
      })
      .join("")
    for (const s of [secret, login.session, code]) {
      expect(bytes).not.toContain(s)
      expect(bytes).toContain(createHash("sha256").update(s).digest("hex"))
    }
  })

  it("creates the store, hosted.json and the saved API key readable by their owner only", () => {
    const folder = tempFolder()
    new DataStore(join(folder, "data.db")).close()
    expect(statSync(join(folder, "data.db")).mode & 0o777).toBe(0o600)
    writeHosted(folder, { url: "http://127.0.0.1:8100", session: "cbs_x" })
    expect(statSync(hostedFile(folder)).mode & 0o777).toBe(0o600)
    expect(readHosted(folder)).toEqual({ url: "http://127.0.0.1:8100", session: "cbs_x" })
    writeApiKey(folder, "cbk_y")
    expect(statSync(apiKeyFile(folder)).mode & 0o777).toBe(0o600)
    expect(apiKey(folder, {})).toBe("cbk_y")
  })
})

describe("data host: history", () => {
  it("answers the book at a time, and says why when none was recorded", async () => {
    const at = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1250 })
    expect(at.status).toBe(200)
    expect(at.body.metadata.time_basis).toBe("venue_ms")
    expect(at.body.book).toEqual({
      ts: 1200,
      bids: [
        { price: "0.41", size: "7" },
        { price: "0.4", size: "10" }
      ],
      asks: [{ price: "0.45", size: "3" }]
    })
    const no = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1250, side: "no", depth: 1 })
    expect(no.body.book).toEqual({
      ts: 1200,
      bids: [{ price: "0.55", size: "3" }],
      asks: [{ price: "0.59", size: "7" }]
    })
    const inGap = await history("/v1/order-book/at", { market_id: M, as_of_ms: 1700 })
    expect(inGap.body).toMatchObject({ book: null, absence_reason: "sequence_gap" })
    const before = await history("/v1/order-book/at", { market_id: M, as_of_ms: 10 })
    expect(before.body).toMatchObject({ book: null, absence_reason: "not_recorded" })
  })

  it("cuts a range into data and absent segments, the gap explicit", async () => {
    const range = await history("/v1/order-book/range", { market_id: M, start_ms: 0, end_ms: 3000 })
    expect(range.status).toBe(200)
    const segments = range.body.segments
    expect(segments.map((s: any) => [s.kind, s.start_ms, s.end_ms, s.reason])).toEqual([
      ["absent", 0, 1000, "not_recorded"],
      ["data", 1000, 1500, null],
      ["absent", 1500, 2000, "sequence_gap"],
      ["data", 2000, 2100, null],
      ["absent", 2100, 3000, "not_recorded"]
    ])
    expect(segments[1].initial_book.bids).toEqual([{ price: "0.4", size: "10" }])
    expect(segments[1].changes.map((c: any) => c.ts)).toEqual([1100, 1200, 1300])
    expect(range.body.next_cursor).toBeNull()
  })

  it("pages with a cursor, and the pages hold the same changes as one answer", async () => {
    const whole = await history("/v1/order-book/range", { market_id: M, start_ms: 0, end_ms: 3000 })
    const changes = (segments: ReadonlyArray<any>) => segments.flatMap((s: any) => s.changes)
    const paged: Array<any> = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await history("/v1/order-book/range", {
        market_id: M,
        start_ms: 0,
        end_ms: 3000,
        limit: 1,
        ...(cursor === undefined ? {} : { cursor })
      })
      expect(page.status).toBe(200)
      paged.push(...changes(page.body.segments))
      cursor = page.body.next_cursor ?? undefined
      pages += 1
    } while (cursor !== undefined && pages < 20)
    expect(paged).toEqual(changes(whole.body.segments))
    expect(pages).toBeGreaterThan(3)
    const other = await history("/v1/order-book/range", {
      market_id: M,
      start_ms: 0,
      end_ms: 2999,
      cursor: "eyJkIjoiIiwiYSI6MX0"
    })
    expect(other.status).toBe(400)
    expect(other.body.error.details.errors[0].field).toBe("cursor")
  })

  it("answers trades with their coverage", async () => {
    const trades = await history("/v1/trades/range", { market_id: M, start_ms: 0, end_ms: 3000 })
    expect(trades.body.trades.map((t: any) => [t.ts, t.price, t.amount, t.taker_side])).toEqual([
      [1100, "0.45", "2", "buy"],
      [2100, "0.5", "1", "sell"]
    ])
    expect(trades.body.coverage.filter((c: any) => c.kind === "absent").map((c: any) => c.reason)).toEqual([
      "not_recorded",
      "sequence_gap",
      "not_recorded"
    ])
  })

  it("refuses too long a range with 413 result_too_large, never a cut answer", async () => {
    for (const path of ["/v1/order-book/range", "/v1/trades/range"]) {
      const r = await history(path, { market_id: M, start_ms: 0, end_ms: 60_001 })
      expect(r.status).toBe(413)
      expect(r.body.error.code).toBe("result_too_large")
      expect(r.body.error.details).toMatchObject({ venue: null, retryable: false, max_range_ms: 60_000 })
    }
  })

  it("answers 404 market_not_found for a market it never recorded, and the error body on every refusal", async () => {
    const missing = await history("/v1/order-book/at", { market_id: "sim:NOPE", as_of_ms: 1 })
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("market_not_found")
    const route = await call(host.url, "GET", "/v2/nothing", { bearer: key })
    expect(route.status).toBe(404)
    expect(route.body.error.code).toBe("not_found")
    const bad = await history("/v1/order-book/at", { market_id: M, as_of_ms: "soon" })
    expect(bad.status).toBe(422)
    expect(bad.body.error.code).toBe("validation_error")
    const backwards = await history("/v1/trades/range", { market_id: M, start_ms: 5, end_ms: 1 })
    expect(backwards.status).toBe(400)
  })

  it("serves a range as a columnar tape: the tape `history tape` writes from the JSON ranges, as an Arrow file", async () => {
    const response = await fetch(`${host.url}/v1/tape/range`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ market_id: M, start_ms: 0, end_ms: 3000 })
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("application/vnd.apache.arrow.file")
    const served = readArrowTape(new Uint8Array(await response.arrayBuffer()))
    const paged = await Effect.runPromise(
      Effect.flatMap(HistoryClient, (client) => tapeFromHistory(client, M, 0, 3000)).pipe(
        Effect.map((t) => ({ text: t.text, header: parseTape(t.text).header })),
        Effect.provide(HistoryClient.layer({ url: host.url, apiKey: key })),
        Effect.provide(NodeHttpClient.layerUndici)
      )
    )
    // The same tape but for the header's note of where it came from.
    const { notes, ...header } = served.header
    expect(notes).toMatch(/^history of sim:GEN-001 from crossbook data host, 0\.\.3000 ms/)
    expect(formatTape({ ...header, notes: paged.header.notes! }, [...served.events])).toBe(paged.text)
    expect(paged.text).toContain('"type":"gap"')

    const long = await history("/v1/tape/range", { market_id: M, start_ms: 0, end_ms: 60_001 })
    expect(long.status).toBe(413)
    expect(long.body.error.code).toBe("result_too_large")
    const missing = await history("/v1/tape/range", { market_id: "sim:NOPE", start_ms: 0, end_ms: 10 })
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("market_not_found")
    const none = await history("/v1/tape/range", { market_id: M, start_ms: 0, end_ms: 10 }, null)
    expect(none.status).toBe(401)
  })

  it("publishes its OpenAPI document", async () => {
    const doc = await call(host.url, "GET", "/openapi.json")
    expect(doc.status).toBe(200)
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/v1/order-book/at", "/v1/order-book/range", "/v1/trades/range", "/v1/keys", "/v1/login"])
    )
  })
})
