import { assert, describe, it } from "@effect/vitest"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { ApiError } from "../../src/Domain/Errors.ts"
import { matchCommand } from "../../src/Matching/Cli.ts"
import { describeMatch } from "../../src/Matching/Run.ts"
import { generateVenueCatalogs } from "../../src/Venues/Sim/Catalog.ts"

/** Runs `crossbook match …` in process and answers what it printed, one string per line. */
const run = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const out: Array<string> = []
    const base = yield* Effect.console
    const console: Console.Console = {
      ...base,
      log: (...xs: ReadonlyArray<unknown>) => Effect.sync(() => void out.push(xs.map(String).join(" "))),
      unsafe: {
        ...base.unsafe,
        log: (...xs: ReadonlyArray<unknown>) => void out.push(xs.map(String).join(" "))
      }
    }
    const cli = Command.run(Command.make("crossbook").pipe(Command.withSubcommands([matchCommand])), {
      name: "crossbook",
      version: "test"
    })
    yield* cli(["node", "crossbook", ...args]).pipe(Effect.withConsole(console), Effect.provide(NodeContext.layer))
    return out
  })

const record = (venue: string, id: string, title: string, extra: Record<string, string> = {}) =>
  JSON.stringify({ venue, native_id: id, title, ...extra })

describe("crossbook match", () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-match-"))
  const kalshi = join(dir, "kalshi.jsonl")
  const poly = join(dir, "polymarket.jsonl")
  const pairs = join(dir, "pairs.jsonl")
  writeFileSync(
    kalshi,
    [
      record("kalshi", "U3-T4.1", "Will the unemployment rate be above 4.1% in March 2026?"),
      record("kalshi", "NOBEL-AB", "Who will win the Nobel Peace Prize?", {
        rules: "If Ana Bell wins the Nobel Peace Prize in 2026, then the market resolves to Yes."
      })
    ].join("\n") + "\n"
  )
  writeFileSync(
    poly,
    [
      record("polymarket", "0xu3", "Unemployment rate 4.1% or less in March 2026?", { yes_label: "Yes" }),
      record("polymarket", "0xu3b", "Unemployment rate at least 4.1% in March 2026?", { yes_label: "Yes" }),
      record("polymarket", "0xab", "Will Ana Bell win the Nobel Peace Prize in 2026?", { yes_label: "Yes" }),
      record("polymarket", "0xbtc", "Bitcoin Up or Down - July 24, 3:55PM-4:00PM ET", { yes_label: "Up" })
    ].join("\n") + "\n"
  )
  const kalshiU3 = JSON.parse(record("kalshi", "U3-T4.1", "Will the unemployment rate be above 4.1% in March 2026?"))
  writeFileSync(
    pairs,
    [
      {
        id: "c1",
        a: kalshiU3,
        b: { venue: "polymarket", native_id: "0xu3", title: "x" },
        side_map: { yes: "no", no: "yes" },
        relation: "inverse"
      },
      {
        id: "c2",
        a: kalshiU3,
        b: { venue: "polymarket", native_id: "0xu3b", title: "x" },
        side_map: null,
        relation: "none"
      },
      {
        id: "c3",
        a: { venue: "kalshi", native_id: "NOBEL-AB", title: "Who will win the Nobel Peace Prize?" },
        b: { venue: "polymarket", native_id: "0xab", title: "x" },
        side_map: { yes: "yes", no: "no" },
        relation: "same"
      },
      {
        id: "c4",
        a: {
          venue: "polymarket",
          native_id: "0xbtc",
          title: "Bitcoin Up or Down - July 24, 3:55PM-4:00PM ET",
          yes_label: "Up"
        },
        b: null,
        side_map: null,
        relation: "crypto_updown"
      }
    ]
      .map((c) => JSON.stringify(c))
      .join("\n") + "\n"
  )

  it.effect("eval prints one line per case, then precision, recall, side_map accuracy and refusals", () =>
    Effect.gen(function* () {
      const out = yield* run(["match", "eval", "--catalog", kalshi, "--catalog", poly, "--pairs", pairs])
      assert.strictEqual(out.length, 5)
      const lines = out.slice(0, 4).map((l) => JSON.parse(l))
      assert.deepStrictEqual(
        lines.map((l) => [l.id, l.anchor, l.matched, l.side_map]),
        [
          ["c1", "kalshi:U3-T4.1", "polymarket:0xu3", { yes: "no", no: "yes" }],
          ["c2", "kalshi:U3-T4.1", "polymarket:0xu3", { yes: "no", no: "yes" }],
          ["c3", "kalshi:NOBEL-AB", "polymarket:0xab", { yes: "yes", no: "no" }],
          ["c4", "polymarket:0xbtc", null, null]
        ]
      )
      assert.deepStrictEqual(lines[2].rules, { verdict: "unknown", differs: [] })
      const summary = JSON.parse(out[4]!)
      assert.deepInclude(summary, {
        cases: 4,
        correct: 3,
        wrong: 0,
        precision: 1,
        recall: 1,
        side_map_accuracy: 1,
        crypto_refused: 1,
        crypto_cases: 1
      })
      assert.deepStrictEqual(
        lines.map((l) => [l.verdict, l.candidate, l.reasons]),
        [
          ["matched", null, []],
          ["matched", null, []],
          ["matched", null, []],
          ["none", null, []]
        ]
      )
      assert.strictEqual(summary.uncertain, 0)
      assert.deepStrictEqual(summary.relations.none, {
        cases: 1,
        tp: 1,
        fp: 0,
        fn: 0,
        tn: 0,
        uncertain: 0,
        unlabelled: 0,
        precision: 1,
        recall: null
      })
    })
  )

  it.effect("match ID answers from the catalogs with the side_map and the explanation", () =>
    Effect.gen(function* () {
      const out = yield* run(["match", "--catalog", kalshi, "--catalog", poly, "--json", "kalshi:U3-T4.1"])
      const answer = JSON.parse(out[0]!)
      assert.deepStrictEqual(answer.matched, {
        id: "polymarket:0xu3",
        venue: "polymarket",
        side_map: { yes: "no", no: "yes" }
      })
      assert.strictEqual(answer.explain.anchor.quantity.comparator, "gt")
      assert.strictEqual(answer.explain.matched.quantity.comparator, "le")
      const failed = yield* Effect.flip(run(["match", "--catalog", kalshi, "kalshi:NOPE"]))
      assert.include(String(failed), "kalshi:NOPE")
      const words = yield* run(["match", "--catalog", kalshi, "--catalog", poly, "kalshi:U3-T4.1"])
      assert.deepStrictEqual(words, [
        "kalshi:U3-T4.1 → polymarket:0xu3: flipped (yes→no, no→yes); score 1; rules unknown"
      ])
    })
  )

  it("an uncertain answer is shown with its candidate and each reason, never as a match", () => {
    const text = describeMatch({
      anchor: "kalshi:A",
      event_id: "A",
      verdict: "uncertain",
      matched: null,
      candidate: { id: "polymarket:0xb", venue: "polymarket", side_map: { yes: "no", no: "yes" }, score: 0.9 },
      reasons: [
        { dimension: "time", status: "differs", reason: "time: the rules' deadlines are 2026-07-01 and 2027-01-01" }
      ]
    })
    assert.deepStrictEqual(text.split("\n"), [
      "kalshi:A: uncertain → polymarket:0xb would be flipped (yes→no, no→yes); judge before trading:",
      "  - time differs: time: the rules' deadlines are 2026-07-01 and 2027-01-01"
    ])
  })

  it.live("without catalogs, the local matcher reads the configured venues: sim run as two venues", () =>
    Effect.gen(function* () {
      const day = Math.floor(Date.now() / 86_400_000) * 86_400_000
      const [, sim2] = generateVenueCatalogs(7, day, 24, 2)
      const flipped = sim2!.find((s) => s.link!.flipped)!
      const args = ["match", "--venues", "sim", "--sim-venues", "2", "--sim-seed", "7"]
      const out = yield* run([...args, "--json", `sim:${flipped.link!.key}`])
      assert.deepStrictEqual(JSON.parse(out[0]!).matched, {
        id: `sim2:${flipped.market.nativeId}`,
        venue: "sim2",
        side_map: { yes: "no", no: "yes" }
      })
      const event = JSON.parse((yield* run([...args, "--event", "--json", `sim:${flipped.link!.key}`]))[0]!)
      assert.include(event.events.sim2, `sim2:${flipped.market.nativeId}`)
      assert.include(event.event_ids, `sim:${flipped.market.eventId.toUpperCase()}`)
      const bad = yield* Effect.flip(run([...args, "no-venue-here"]))
      assert.include(String(bad), "is not a market id")
    })
  )

  it.live("with SERVICE_MATCHING_URL it asks the hosted service, and says what a refused key needs", () =>
    Effect.gen(function* () {
      const seen: Array<string | undefined> = []
      const server = createServer((req, res) => {
        seen.push(req.headers.authorization)
        res.setHeader("content-type", "application/json")
        if (req.headers.authorization !== "Bearer good") {
          res.writeHead(401)
          return void res.end(JSON.stringify(ApiError.unauthorized("unknown API key").body))
        }
        const id = new URL(req.url ?? "/", "http://x").searchParams.get("id")
        res.end(JSON.stringify({ anchor: id, event_id: "e", matched: null }))
      })
      yield* Effect.acquireRelease(
        Effect.async<void>((resume) => void server.listen(0, "127.0.0.1", () => resume(Effect.void))),
        () => Effect.sync(() => void server.close())
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const saved = { url: process.env["SERVICE_MATCHING_URL"], key: process.env["SERVICE_API_KEY"] }
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          for (const [k, v] of [
            ["SERVICE_MATCHING_URL", saved.url],
            ["SERVICE_API_KEY", saved.key]
          ] as const) {
            if (v === undefined) delete process.env[k]
            else process.env[k] = v
          }
        })
      )
      process.env["SERVICE_MATCHING_URL"] = url
      process.env["SERVICE_API_KEY"] = "good"
      assert.deepStrictEqual(yield* run(["match", "kalshi:ANY"]), ["kalshi:ANY: no match"])
      process.env["SERVICE_API_KEY"] = "bad"
      const refused = yield* Effect.flip(run(["match", "kalshi:ANY"]))
      assert.include(String(refused), "crossbook login")
      assert.deepStrictEqual(seen, ["Bearer good", "Bearer bad"])
    }).pipe(Effect.scoped)
  )
})
