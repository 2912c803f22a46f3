/** The command line reads like a tool: short help pages with examples that fit 100 columns, "did you mean", exit codes. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { existsSync, mkdtempSync, readdirSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { freePort, spawnCrossbook } from "../../scripts/crash/serve.ts"
import { rootCommand } from "../../src/Cli.ts"
import {
  allCommands,
  commandLineProblems,
  commandSpec,
  EXAMPLES,
  HELP_WIDTH,
  helpPages,
  suggestions,
  unknownCommand
} from "../../src/CliHelp.ts"
import { simulationCommands } from "../../sim/Cli.ts"

const root = commandSpec(rootCommand(simulationCommands))
const scratch = () => mkdtempSync(join(tmpdir(), "crossbook-help-"))
const run = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  Effect.promise(() => spawnCrossbook(args, { CROSSBOOK_HOME: join(scratch(), "home"), ...env }).ended)

describe("help pages", () => {
  const pages = helpPages(root, true)

  it("every command has a page that fits 100 columns, with a usage line, its flags one a line, and examples", () => {
    assert.isAbove(Object.keys(pages).length, 30)
    for (const spec of allCommands(root)) {
      const path = spec.path.join(" ")
      const page = stripVTControlCharacters(pages[path]!)
      for (const line of page.split("\n")) {
        assert.isAtMost([...line].length, HELP_WIDTH, `${path || "crossbook"}: ${line}`)
      }
      assert.match(page, /^Usage:\n {2}crossbook/m, path)
      assert.match(page, /^Examples:\n {2}\S/m, path)
      for (const flag of spec.flags) assert.match(page, new RegExp(`^ +(-\\w, )?--${flag.name}\\b`, "m"), path)
      for (const child of spec.commands) assert.match(page, new RegExp(`^ {2}${child.name} +\\S`, "m"), path)
    }
  })

  it("the root page groups the commands, each on one line", () => {
    const page = stripVTControlCharacters(pages[""]!)
    assert.include(page, "Run a server:\n  serve ")
    assert.include(page, "Talk to a running server:\n  me ")
    for (const command of root.commands) assert.match(page, new RegExp(`^ {2}${command.name} {2,}\\S`, "m"))
  })

  it("shows a flag's default and marks the required ones", () => {
    const serve = stripVTControlCharacters(pages["serve"]!)
    assert.match(serve, /--port <n> +Port to listen on \(default 8000\)/)
    const place = stripVTControlCharacters(pages["orders place"]!)
    assert.match(place, /--side buy\|sell +.*\(required\)/)
    assert.match(place, /^ {2}crossbook orders place --market <text> --side buy\|sell/m)
  })

  it("every example names commands and flags that exist", () => {
    for (const [path, examples] of Object.entries(EXAMPLES)) {
      assert.isDefined(
        allCommands(root).find((c) => c.path.join(" ") === path),
        `examples for a command that does not exist: ${path}`
      )
      for (const example of examples.filter((e) => !e.startsWith("#"))) {
        const words = example.split(/\s+/)
        const end = words.findIndex((w) => [">", "|", ";", "&&"].includes(w))
        if (end >= 0) words.length = end
        const at = words.indexOf("crossbook")
        assert.isAtLeast(at, 0, example)
        assert.deepStrictEqual(commandLineProblems(root, words.slice(at + 1)), [], example)
      }
    }
  })

  it("the checker of command lines finds a command or a flag that does not exist", () => {
    assert.deepStrictEqual(commandLineProblems(root, ["orders", "list", "--json"]), [])
    assert.deepStrictEqual(commandLineProblems(root, ["orders", "plase"]), ["crossbook orders has no command plase"])
    assert.deepStrictEqual(commandLineProblems(root, ["serve", "--prot", "1"]), ["crossbook serve has no flag --prot"])
    assert.deepStrictEqual(commandLineProblems(root, ["match", "sim:X", "--json"]), [])
  })
})

describe("did you mean", () => {
  it("suggests the nearest commands of the group that was named", () => {
    assert.deepStrictEqual(suggestions("plase", ["list", "place", "cancel"]), ["place"])
    assert.deepStrictEqual(suggestions("serv", ["serve", "sweep", "sim"]).slice(0, 1), ["serve"])
    assert.deepStrictEqual(suggestions("zzzzzz", ["serve", "orders"]), [])
    const message = unknownCommand(root, ["orders", "plase"])!
    assert.include(message, 'unknown command "plase" for "crossbook orders"')
    assert.include(message, "Did you mean this?\n  place")
    for (const sub of ["list", "place", "cancel"]) assert.match(message, new RegExp(`^ {2}${sub} +\\S`, "m"))
    assert.notMatch(message, /^ {2}serve /m)
    assert.isUndefined(unknownCommand(root, ["--log-level", "debug", "orders", "list"]))
    assert.isUndefined(unknownCommand(root, ["match", "sim:X"]))
  })

  it.live(
    "`crossbook orders plase` lists orders' own commands on stderr and exits 2; `--help` answers on stdout, exit 0",
    () =>
      Effect.gen(function* () {
        const wrong = yield* run(["orders", "plase"])
        assert.strictEqual(wrong.code, 2)
        assert.strictEqual(wrong.stdout, "")
        assert.include(wrong.stderr, "Did you mean this?\n  place")
        assert.include(wrong.stderr, "  cancel")
        const top = yield* run(["serv"])
        assert.strictEqual(top.code, 2)
        assert.include(top.stderr, "  serve")
        const help = yield* run(["orders", "place", "--help"], { FORCE_COLOR: "1", NO_COLOR: "1" })
        assert.strictEqual(help.code, 0)
        assert.include(help.stdout, "Usage:\n  crossbook orders place")
        assert.notInclude(help.stdout, "\x1b[", "NO_COLOR wins over FORCE_COLOR")
        const group = yield* run(["orders"])
        assert.strictEqual(group.code, 0)
        assert.include(group.stdout, "Commands:\n  list")
      }),
    120_000
  )
})

describe("--json where a command prints data", () => {
  it.live(
    "token create --json prints one JSON document with the token, and nothing else",
    () =>
      Effect.gen(function* () {
        const ended = yield* run(["token", "create", "--name", "ci", "--json"])
        assert.strictEqual(ended.code, 0, ended.stderr)
        const answer = JSON.parse(ended.stdout)
        assert.match(answer.id, /^tok_/)
        assert.match(answer.token, /^cb_/)
        assert.match(answer.control, /control\.db$/)
      }),
    120_000
  )
})

describe("usage errors", () => {
  it.live(
    "a --control or --db path whose folder does not exist is a usage error naming the flag, exit 2, not 70",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const missing = join(scratch(), "no-such-folder", "control.db")
        for (const args of [
          ["token", "create", "--control", missing],
          ["serve", "--port", String(port), "--venues", "sim", "--control", missing],
          ["serve", "--port", String(port), "--venues", "sim", "--db", missing]
        ]) {
          const ended = yield* run(args)
          assert.strictEqual(ended.code, 2, `${args.join(" ")}: ${ended.stderr}`)
          assert.match(ended.stderr, /^crossbook: --(control|db) .*does not exist\n$/)
        }
      }),
    120_000
  )

  it.live(
    "serve on a busy port leaves a new home as it found it: no home.lock, no home.owner",
    () =>
      Effect.gen(function* () {
        const port = yield* Effect.promise(freePort)
        const busy = createServer()
        yield* Effect.promise(() => new Promise<void>((resolve) => busy.listen(port, "127.0.0.1", resolve)))
        const home = join(scratch(), "home")
        const ended = yield* Effect.promise(
          () => spawnCrossbook(["serve", "--port", String(port), "--venues", "sim"], { CROSSBOOK_HOME: home }).ended
        )
        busy.close()
        assert.strictEqual(ended.code, 1, ended.stderr)
        assert.include(ended.stderr, `port ${port} on 127.0.0.1 is in use`)
        const left = existsSync(home) ? readdirSync(home) : []
        assert.notInclude(left, "home.lock")
        assert.notInclude(left, "home.owner")
      }),
    120_000
  )
})
