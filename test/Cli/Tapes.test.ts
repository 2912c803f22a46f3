import { assert, describe, it } from "@effect/vitest"
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { makeCli } from "../../src/Cli.ts"
import { Tapes } from "../../src/Data/Tapes.ts"

/** The command line as the server-only entry (src/main.ts) runs it: no simulator, so no tape format. */
const serverOnly = (args: ReadonlyArray<string>) =>
  makeCli([])(["node", "crossbook", ...args]).pipe(Effect.provide(Tapes.unavailable), Effect.provide(NodeContext.layer))

const TAPE =
  '{"type":"header","version":1,"source":"generated","markets":[{"id":"sim:A","title":"A","tick":"0.01","lot":"1"}]}\n'

describe("the tape commands on the entry without the simulator", () => {
  it.live("data import and history tape say that the full crossbook command has the tape format", () =>
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "crossbook-tapes-"))
      const tape = join(dir, "t.jsonl")
      writeFileSync(tape, TAPE)
      const imported = yield* Effect.flip(serverOnly(["data", "import", "--store", join(dir, "data.db"), tape]))
      assert.include(String((imported as { message?: unknown }).message), "`data import` needs the full `crossbook`")

      const saved = { ...process.env }
      Object.assign(process.env, {
        CROSSBOOK_HOME: join(dir, "home"),
        SERVICE_API_KEY: "a-key",
        SERVICE_DATA_URL: "http://127.0.0.1:9"
      })
      const written = yield* Effect.flip(
        serverOnly(["history", "tape", "--from", "0", "--to", "1000", "--out", join(dir, "out.jsonl"), "sim:A"])
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            for (const k of ["CROSSBOOK_HOME", "SERVICE_API_KEY", "SERVICE_DATA_URL"]) {
              if (saved[k] === undefined) delete process.env[k]
              else process.env[k] = saved[k]
            }
          })
        )
      )
      assert.include(String((written as { message?: unknown }).message), "`history tape` needs the full `crossbook`")
    })
  )
})
