/** Every relative link in the docs points at a file (and heading) that exists; every `crossbook` line names real commands and flags. */
import { assert, describe, it } from "@effect/vitest"
import { existsSync, statSync } from "node:fs"
import { dirname, join, normalize } from "node:path"
import { rootCommand } from "../../src/Cli.ts"
import { commandLineProblems, commandSpec } from "../../src/CliHelp.ts"
import { simulationCommands } from "../../sim/Cli.ts"
import { anchors, blocks, crossbookLines, links, markdownFiles, read, ROOT, SHELL, shellWords } from "./Markdown.ts"

/**
 * Pages whose subjects have their own authors: linked from here, written beside this work. A link to one is
 * accepted while it is absent; once it exists it is checked as any other.
 */
const OWNED_ELSEWHERE = new Set([
  "docs/matching.md",
  "docs/operations.md",
  "docs/venues/kalshi.md",
  "docs/venues/polymarket.md"
])

const root = commandSpec(rootCommand(simulationCommands))

describe("the docs", () => {
  const files = markdownFiles()

  it("README.md is a front door: short, with the two set-up commands in its first screen", () => {
    const readme = read("README.md")
    assert.isBelow(Buffer.byteLength(readme), 15_000)
    const firstScreen = readme.split("\n").slice(0, 40).join("\n")
    assert.include(firstScreen, "npm ci && npm start")
    assert.include(firstScreen, "npm ci && npm test")
  })

  it("every subject has its page", () => {
    for (const page of [
      "configuration",
      "api",
      "orders",
      "venues/sim",
      "venues/paper",
      "simulation",
      "data-host",
      "architecture",
      "development",
      "performance",
      "cli"
    ]) {
      assert.include(files, `docs/${page}.md`)
    }
    assert.include(files, "CHANGELOG.md")
  })

  it("no page reads files outside the project (../shared, machine paths)", () => {
    for (const file of files) assert.notMatch(read(file), /\.\.\/shared|\/work\//, file)
  })

  it("every relative link points at a file that exists, and at a heading of it when it names one", () => {
    const problems: Array<string> = []
    for (const file of files) {
      for (const link of links(read(file))) {
        if (/^[a-z]+:/.test(link)) continue
        const [path, anchor] = link.split("#") as [string, string | undefined]
        const target = path === "" ? file : normalize(join(dirname(file), path))
        if (!existsSync(join(ROOT, target))) {
          if (!OWNED_ELSEWHERE.has(target)) problems.push(`${file}: ${link} (no ${target})`)
          continue
        }
        if (anchor !== undefined && target.endsWith(".md") && statSync(join(ROOT, target)).isFile()) {
          if (!anchors(read(target)).has(anchor)) problems.push(`${file}: ${link} (no heading #${anchor} in ${target})`)
        }
      }
    }
    assert.deepStrictEqual(problems, [])
  })

  it("every command block's `crossbook` line names commands and flags that exist", () => {
    const problems: Array<string> = []
    let lines = 0
    for (const file of files) {
      for (const block of blocks(read(file)).filter((b) => SHELL.has(b.lang))) {
        for (const words of crossbookLines(block.text)) {
          lines++
          for (const problem of commandLineProblems(root, words)) {
            problems.push(`${file}: crossbook ${words.join(" ")}: ${problem}`)
          }
        }
      }
    }
    assert.isAbove(lines, 30)
    assert.deepStrictEqual(problems, [])
  })

  it("the command-line reader finds crossbook where a shell would run it, and only there", () => {
    assert.deepStrictEqual(shellWords(`a "b c" 'd' e\\ f # g`), ["a", "b c", "d", "e f"])
    assert.deepStrictEqual(crossbookLines(`X=$(npx crossbook data invite --name me)`), [
      ["data", "invite", "--name", "me"]
    ])
    assert.deepStrictEqual(crossbookLines(`SERVICE_URL=x npx crossbook me; crossbook orders list | cat`), [
      ["me"],
      ["orders", "list"]
    ])
    assert.deepStrictEqual(crossbookLines(`npm run dev -- serve   # crossbook from the sources`), [])
    assert.deepStrictEqual(crossbookLines(`echo crossbook serve`), [])
    assert.deepStrictEqual(crossbookLines(`npx crossbook sweep \\\n  --out sw sweep.json`), [
      ["sweep", "--out", "sw", "sweep.json"]
    ])
    const wrong = crossbookLines(`npx crossbook orders plase --prot 1`)[0]!
    assert.deepStrictEqual(commandLineProblems(root, wrong), [
      "crossbook orders has no command plase",
      "crossbook orders has no flag --prot"
    ])
  })
})
