import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { buildCli, loadedAtStart } from "../../scripts/build.ts"

const ROOT = join(import.meta.dirname, "../..")

/** A copy of the package as shipped, built now from the current sources: bin/crossbook.js beside a fresh dist/. */
const shipped = Effect.promise(async () => {
  const dir = mkdtempSync(join(tmpdir(), "crossbook-build-"))
  mkdirSync(join(dir, "bin"))
  copyFileSync(join(ROOT, "bin/crossbook.js"), join(dir, "bin/crossbook.js"))
  // The native SQLite binding is loaded from node_modules, as in an install: the project's own, linked.
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir")
  const metafile = await buildCli(join(dir, "dist"))
  return { dir, metafile }
})

const run = (dir: string, args: ReadonlyArray<string>) =>
  Effect.async<{ code: number; stdout: string; stderr: string }>((resume) => {
    execFile(
      process.execPath,
      [join(dir, "bin/crossbook.js"), ...args],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1" } },
      (error, stdout, stderr) =>
        resume(Effect.succeed({ code: error === null ? 0 : (error.code as number), stdout, stderr }))
    )
  })

describe("the built command line", () => {
  it.live(
    "runs from JavaScript alone: help, a command that loads the server's modules, and one that loads the simulator's",
    () =>
      Effect.gen(function* () {
        const { dir, metafile } = yield* shipped
        const help = yield* run(dir, ["--help"])
        assert.strictEqual(help.code, 0, help.stderr)
        for (const command of ["serve", "orders", "doctor", "sim", "backtest"]) assert.include(help.stdout, command)

        const openapi = yield* run(dir, ["openapi", "--out", join(dir, "openapi.json")])
        assert.strictEqual(openapi.code, 0, openapi.stderr)
        const document = JSON.parse(readFileSync(join(dir, "openapi.json"), "utf8")) as { paths: object }
        assert.property(document.paths, "/trading/orders")

        const tape = join(dir, "gen.jsonl")
        const generated = yield* run(dir, ["sim", "generate", "--markets", "1", "--duration-s", "30", tape])
        assert.strictEqual(generated.code, 0, generated.stderr)
        assert.isTrue(existsSync(tape))

        // `--help` and the client commands load the command tree only, not the server or the engine.
        const atStart = [...loadedAtStart(metafile, relative(ROOT, join(dir, "dist/crossbook.js")))]
        assert.include(atStart, "src/Cli.ts")
        // The venues' registrations are read at start (help lists them); their venues' code is not.
        const heavy = atStart.filter(
          (file) =>
            /^(src\/(Engine|Http|Trading|Venues|Persistence)|sim\/Replay)/.test(file) &&
            !/^src\/Venues\/(BuiltIn|Registration|\w+\/Registration)\.ts$/.test(file)
        )
        assert.deepStrictEqual(heavy, [])
        // Nor the data host's handlers, its store and clients, or the tape format: they load when their command runs.
        assert.includeMembers(atStart, ["src/Data/Cli.ts", "src/Hosted/Cli.ts"])
        const dataHost = atStart.filter((file) =>
          /^(src\/(Data\/(Run|Server|Store|Record|Keys|History)|Hosted\/(Run|Config)|Services\/HistoryClient)|sim\/History)\.ts$/.test(
            file
          )
        )
        assert.deepStrictEqual(dataHost, [])
      }),
    120_000
  )

  it.live(
    "answers --help from the pages the build rendered: the same text the command prints, for every command it lists",
    () =>
      Effect.gen(function* () {
        const { dir } = yield* shipped
        const pages = JSON.parse(readFileSync(join(dir, "dist/help.json"), "utf8")) as Record<string, string>
        const root = yield* run(dir, ["--help"])
        for (const command of ["serve", "orders place", "sim generate", "backtest", "history tape", "keys create"]) {
          assert.property(pages, command)
          assert.match(root.stdout, new RegExp(`^  ${command.split(" ")[0]} `, "m"))
        }
        assert.property(pages, "match eval")
        // The command itself, run past the pages, prints what the pages hold (here without colour: not a terminal).
        const live = (args: ReadonlyArray<string>) =>
          Effect.async<string>((resume) => {
            execFile(
              process.execPath,
              [join(dir, "dist/crossbook.js"), ...args],
              { env: { ...process.env, NO_COLOR: "1" } },
              (_error, stdout) => resume(Effect.succeed(stdout))
            )
          })
        for (const path of [[], ["serve"], ["orders", "place"], ["sim", "replay"]]) {
          const answered = yield* run(dir, [...path, "--help"])
          assert.strictEqual(answered.code, 0)
          assert.strictEqual(answered.stdout, yield* live([...path, "--help"]), path.join(" "))
          assert.strictEqual(answered.stdout, stripVTControlCharacters(pages[path.join(" ")]!))
        }
        // A path the pages do not hold goes to the command.
        const other = yield* run(dir, ["match", "eval", "--pairs", "x", "--help"])
        assert.strictEqual(other.code, 0)
        assert.include(other.stdout, "--pairs")
      }),
    120_000
  )

  it.live(
    "says how to build when dist/ is missing, exit 1",
    () =>
      Effect.gen(function* () {
        const dir = mkdtempSync(join(tmpdir(), "crossbook-unbuilt-"))
        mkdirSync(join(dir, "bin"))
        copyFileSync(join(ROOT, "bin/crossbook.js"), join(dir, "bin/crossbook.js"))
        const ended = yield* run(dir, ["--help"])
        assert.strictEqual(ended.code, 1)
        assert.include(ended.stderr, "npm run build")
      }),
    30_000
  )
})
