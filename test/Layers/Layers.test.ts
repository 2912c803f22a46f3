import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"
import { layerProblems, readTree, roomOf } from "./Rule.ts"

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
const tree = readTree(ROOT)

describe("the layout", () => {
  it("every module of src/, sim/ and scripts/ sits in a room with a level, and no import runs up", () => {
    assert.isAbove(tree.modules.length, 100)
    assert.deepStrictEqual(layerProblems(tree.modules, tree.imports), [])
  })

  it("a new import of a room above fails, naming both ends", () => {
    const back = { from: "src/Services/MatchingClient.ts", to: "src/Matching/Matcher.ts" }
    assert.deepStrictEqual(layerProblems(tree.modules, [...tree.imports, back]), [
      "src/Services/MatchingClient.ts → src/Matching/Matcher.ts: src/Services (level 2) imports src/Matching (level 5), a room above it"
    ])
  })

  it("a module in a new folder fails until the folder is given a level; so does an import of it", () => {
    const problems = layerProblems(
      [...tree.modules, "src/Gadgets/Widget.ts"],
      [...tree.imports, { from: "src/Stack.ts", to: "src/Gadgets/Widget.ts" }]
    )
    assert.deepStrictEqual(problems, [
      "src/Gadgets/Widget.ts: its room src/Gadgets has no level",
      "src/Stack.ts → src/Gadgets/Widget.ts: the room src/Gadgets has no level"
    ])
  })

  it("a level naming a room no module is in fails", () => {
    const levels = [["src/Domain"], ["src/Gone"]]
    assert.deepStrictEqual(layerProblems(["src/Domain/Fixed.ts"], [], levels), ["src/Gone: no module is in this room"])
  })

  it("rooms are folders and top-level files; outside the roots, the first folder", () => {
    assert.strictEqual(roomOf("src/Http/Desk/Api.ts"), "src/Http")
    assert.strictEqual(roomOf("src/Stack.ts"), "src/Stack")
    assert.strictEqual(roomOf("scripts/build-ui.mjs"), "scripts/build-ui")
    assert.strictEqual(roomOf("test/Venues/Kalshi/Fake.ts"), "test")
  })

  it("reads static, type, dynamic and re-export imports from files on disk, and reports the back-arrows among them", () => {
    const base = mkdtempSync(join(tmpdir(), "layers-"))
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(base, path)), { recursive: true })
        writeFileSync(join(base, path), text)
      }
      file("src/Domain/Id.ts", 'export type { Client } from "../Services/Client.ts"\nexport const id = 1\n')
      file("src/Services/Client.ts", 'import type { id } from "../Domain/Id.ts"\nexport type Client = typeof id\n')
      file("src/Services/Lazy.ts", 'export const load = () => import("../Http/Route.ts")\n')
      file("src/Http/Route.ts", 'import { id } from "../Domain/Id.ts"\nimport "node:fs"\nexport const route = id\n')
      const { modules, imports } = readTree(base, ["src"])
      assert.deepStrictEqual([...modules].sort(), [
        "src/Domain/Id.ts",
        "src/Http/Route.ts",
        "src/Services/Client.ts",
        "src/Services/Lazy.ts"
      ])
      assert.deepStrictEqual(layerProblems(modules, imports, [["src/Domain"], ["src/Services"], ["src/Http"]]).sort(), [
        "src/Domain/Id.ts → src/Services/Client.ts: src/Domain (level 0) imports src/Services (level 1), a room above it",
        "src/Services/Lazy.ts → src/Http/Route.ts: src/Services (level 1) imports src/Http (level 2), a room above it"
      ])
    } finally {
      rmSync(base, { recursive: true, force: true })
    }
  })
})

describe("what a sweep worker loads", () => {
  /** Every module of the project the worker's entry reaches through its imports. */
  const reached = (entry: string): Set<string> => {
    const seen = new Set([entry])
    for (const module of seen) for (const i of tree.imports) if (i.from === module) seen.add(i.to)
    return seen
  }

  it("the trading code alone: no HTTP, server stack or remote venue, and no package index that loads them", () => {
    const modules = [...reached("sim/Sweep/Worker.ts")]
    assert.include(modules, "src/Engine/Engine.ts")
    assert.include(modules, "src/Trading/Desk.ts")
    const server = modules.filter((m) =>
      /^src\/(Http|Stack|Doctor|Cli|Data|Hosted)[./]|^src\/Venues\/(Kalshi|Polymarket)\//.test(m)
    )
    assert.deepStrictEqual(server, [])
    // An index such as `@effect/platform`'s loads every module of the package (its API reference pages among them).
    const indexes = modules.filter((m) =>
      /from "@effect\/(platform|platform-node)"/.test(readFileSync(join(ROOT, m), "utf8"))
    )
    assert.deepStrictEqual(indexes, [])
  })
})
