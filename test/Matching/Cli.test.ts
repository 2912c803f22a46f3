import { assert, describe, it } from "@effect/vitest"
import { Command } from "@effect/cli"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { matchCommand } from "../../src/Matching/Cli.ts"

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
      assert.deepStrictEqual(summary.relations.none, { cases: 1, tp: 1, fp: 0, fn: 0, tn: 0, unlabelled: 0 })
    })
  )

  it.effect("match ID answers from the catalogs with the side_map and the explanation", () =>
    Effect.gen(function* () {
      const out = yield* run(["match", "--catalog", kalshi, "--catalog", poly, "kalshi:U3-T4.1"])
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
    })
  )
})
