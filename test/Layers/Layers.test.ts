import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "vitest"

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src")

/** How high each room sits: arrows run down (Http → Orders → Engine → Trading → Services/Venues/Telemetry → Domain). */
const RANK: Record<string, number> = {
  Domain: 0,
  Services: 1,
  Venues: 1,
  Persistence: 1,
  Telemetry: 1,
  Trading: 2,
  Engine: 3,
  Orders: 4,
  Http: 5
}

const roomOf = (file: string): string | undefined => {
  const first = relative(SRC, file).split("/")[0]!
  return RANK[first.replace(/\.ts$/, "")] === undefined ? undefined : first.replace(/\.ts$/, "")
}

const files = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? files(path) : path.endsWith(".ts") ? [path] : []
  })

describe("the layout", () => {
  it("no module imports one from a room above its own", () => {
    const upward: Array<string> = []
    for (const file of files(SRC)) {
      const from = roomOf(file)
      if (from === undefined) continue
      for (const match of readFileSync(file, "utf8").matchAll(/from "(\.[^"]+)"/g)) {
        const to = roomOf(resolve(dirname(file), match[1]!))
        if (to !== undefined && RANK[to]! > RANK[from]!) upward.push(`${relative(SRC, file)} → ${match[1]}`)
      }
    }
    assert.deepStrictEqual(upward, [])
  })
})
