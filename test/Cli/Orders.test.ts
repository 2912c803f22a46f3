import { assert, describe, it } from "@effect/vitest"
import { HttpServer } from "@effect/platform"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { crossbookFromSources } from "../../scripts/crash/serve.ts"
import { OwnerToken, request, testServer } from "../Http/TestServer.ts"

const cli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(
      process.execPath,
      crossbookFromSources(args),
      { env: { ...process.env, ...env }, cwd: join(import.meta.dirname, "../..") },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    )
  })

describe("crossbook orders", () => {
  it.live(
    "places, lists and cancels through the server at SERVICE_URL with SERVICE_ACCESS_TOKEN",
    () =>
      Effect.gen(function* () {
        const token = yield* OwnerToken
        const server = yield* HttpServer.HttpServer
        const port = (server.address as HttpServer.TcpAddress).port
        const env = {
          SERVICE_URL: `http://127.0.0.1:${port}`,
          SERVICE_ACCESS_TOKEN: token,
          CROSSBOOK_HOME: mkdtempSync(join(tmpdir(), "crossbook-cli-"))
        }
        const market = (yield* request("GET", "/venues/sim/markets?limit=1")).body.data[0].id
        const placed = yield* cli(
          [
            "orders",
            "place",
            "--market",
            market,
            "--side",
            "buy",
            "--amount",
            "3",
            "--price",
            "0.02",
            "--client-order-id",
            "cli-1",
            "--json"
          ],
          env
        )
        assert.strictEqual(placed.code, 0, placed.stderr)
        const order = JSON.parse(placed.stdout)
        assert.strictEqual(order.status, "open")
        assert.strictEqual(order.client_order_id, "cli-1")
        const listed = yield* cli(["orders", "list", "--status", "open", "--json"], env)
        assert.strictEqual(JSON.parse(listed.stdout).data[0].id, order.id)
        // Without --json, a table a person reads: a header, one order a row, times in ISO 8601.
        const table = yield* cli(["orders", "list", "--status", "open"], env)
        assert.strictEqual(table.code, 0, table.stderr)
        const [header, row, ...more] = table.stdout.trimEnd().split("\n")
        assert.match(header!, /^ID +MARKET +SIDE +TYPE +PRICE +AMOUNT +FILLED +STATUS +CREATED$/)
        assert.match(row!, new RegExp(`^${order.id} +${market} +buy +limit +0\\.02 +3 +0 +open +\\d{4}-\\d\\d-\\d\\dT`))
        assert.deepStrictEqual(more, [])
        const canceled = yield* cli(["orders", "cancel", order.id, "--json"], env)
        assert.strictEqual(JSON.parse(canceled.stdout).status, "canceled")
        const me = yield* cli(["me"], env)
        assert.strictEqual(JSON.parse(me.stdout).name, "owner")
        const refused = yield* cli(
          ["orders", "place", "--market", market, "--side", "buy", "--amount", "1", "--price", "0.015"],
          env
        )
        assert.strictEqual(refused.code, 1)
        assert.strictEqual(refused.stdout, "")
        assert.match(refused.stderr, /^crossbook: POST \/trading\/orders answered 400 validation_error: .+\n$/)
        // --account names a paper account: placed, listed and canceled there, never on sim:default.
        const paper = yield* cli(
          [
            "orders",
            "place",
            "--account",
            "sim:paper",
            "--market",
            market,
            "--side",
            "buy",
            "--amount",
            "1",
            "--price",
            "0.02",
            "--json"
          ],
          env
        )
        assert.strictEqual(paper.code, 0, paper.stderr)
        const onPaper = JSON.parse(paper.stdout)
        assert.strictEqual(onPaper.account.name, "paper")
        assert.strictEqual(onPaper.info.paper, true)
        const paperList = yield* cli(["orders", "list", "--account", "sim:paper", "--status", "open", "--json"], env)
        assert.deepStrictEqual(
          JSON.parse(paperList.stdout).data.map((o: any) => o.id),
          [onPaper.id]
        )
        const paperCanceled = yield* cli(["orders", "cancel", onPaper.id, "--account", "sim:paper", "--json"], env)
        assert.strictEqual(paperCanceled.code, 0, paperCanceled.stderr)
        assert.strictEqual(JSON.parse(paperCanceled.stdout).status, "canceled")
      }).pipe(Effect.provide(testServer({ paper: { cash: "1000" } }))),
    120_000
  )
})
