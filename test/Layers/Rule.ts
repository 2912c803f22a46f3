/** The layering rule: every module of src/, sim/ and scripts/ sits in a ranked room, and imports run only down. */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/** One import: both ends as paths from the project's root, e.g. `src/Data/Record.ts` → `src/Domain/Fixed.ts`. */
export interface Import {
  readonly from: string
  readonly to: string
}

/** The folders whose modules the rule covers. */
export const ROOTS = ["src", "sim", "scripts"] as const

/**
 * The rooms, lowest first: a room may import its own level and the levels below, never one above. A room is a folder
 * or a top-level file (without its ending) of a root; outside the roots, the first folder (`test`).
 */
export const LEVELS: ReadonlyArray<ReadonlyArray<string>> = [
  // pure schemas and functions: ids, exact money, orders, markets, errors
  ["src/Domain"],
  // SQLite, the home folder and its files, the product's name, the CLI's errors: none imports a room
  ["src/Persistence", "src/Home", "src/Registry", "src/Version", "src/CliError"],
  // the seams, and the client commands' view of a server
  ["src/Services", "src/Client"],
  ["src/Telemetry"],
  ["src/Venues"],
  // the desk; the matcher behind the MatchingClient seam; the doctor's checks; help pages (they list the venues)
  ["src/Trading", "src/Matching", "src/Doctor", "src/CliHelp"],
  ["src/Engine"],
  // the order routes' logic, and the services assembled as layers (the server's and the simulator's)
  ["src/Orders", "src/Assembly"],
  ["src/Http"],
  // the data host (its server is built of the Http room's parts)
  ["src/Data"],
  // the clients of the hosted services and their commands
  ["src/Hosted"],
  // what the commands that run a server build
  ["src/Stack"],
  ["src/Cli"],
  ["src/main"],
  // the simulator: tapes and what reads them, then the drivers that run the server's layers over them
  ["sim/Tape", "sim/DiscreteClock", "sim/DrainScheduler", "sim/EventLog", "sim/Strategy", "sim/StrategyLoader"],
  ["sim/TapeBook", "sim/TapeStream", "sim/ArrowTape", "sim/Generator", "sim/convert", "sim/examples"],
  ["sim/TapeVenue", "sim/History"],
  ["sim/Replay"],
  ["sim/Backtest"],
  ["sim/Report"],
  ["sim/Sweep"],
  ["sim/Cli"],
  // the `crossbook` entry point: the server's commands and the simulator's
  ["sim/main"],
  // the fakes of real venues (the bench drives them)
  ["test"],
  // entry points: build, bench, crash test, OpenAPI snapshot
  [
    "scripts/bench",
    "scripts/build",
    "scripts/build-ui",
    "scripts/crash",
    "scripts/lock-optional",
    "scripts/openapi-snapshot",
    "scripts/ui-api"
  ]
]

/** The room of a path from the project's root: `src/Http/Markets.ts` → `src/Http`, `src/Stack.ts` → `src/Stack`. */
export const roomOf = (path: string): string => {
  const parts = path.split("/")
  if (!(ROOTS as ReadonlyArray<string>).includes(parts[0]!)) return parts[0]!
  return parts.length === 2 ? `${parts[0]}/${parts[1]!.replace(/\.[^.]+$/, "")}` : `${parts[0]}/${parts[1]}`
}

/**
 * What breaks the rule, one line each: a module in a room without a level, an import of a room without one, an
 * import of a room above the importer's, and a room the levels name that no module is in nor imported.
 */
export const layerProblems = (
  modules: ReadonlyArray<string>,
  imports: ReadonlyArray<Import>,
  levels: ReadonlyArray<ReadonlyArray<string>> = LEVELS
): Array<string> => {
  const rank = new Map(levels.flatMap((rooms, level) => rooms.map((room) => [room, level] as const)))
  const problems: Array<string> = []
  const seen = new Set<string>()
  for (const module of modules) {
    const room = roomOf(module)
    seen.add(room)
    if (!rank.has(room)) problems.push(`${module}: its room ${room} has no level`)
  }
  for (const { from, to } of imports) {
    const source = roomOf(from)
    const target = roomOf(to)
    seen.add(target)
    const below = rank.get(source)
    const above = rank.get(target)
    if (above === undefined) problems.push(`${from} → ${to}: the room ${target} has no level`)
    else if (below !== undefined && above > below)
      problems.push(`${from} → ${to}: ${source} (level ${below}) imports ${target} (level ${above}), a room above it`)
  }
  for (const room of rank.keys()) if (!seen.has(room)) problems.push(`${room}: no module is in this room`)
  return problems
}

const MODULE = /\.(ts|mts|js|mjs)$/
const RELATIVE = /(?:\bfrom|\bimport)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g

/** The modules under `roots` of the project at `base`, and their relative imports (static, dynamic and `export … from`). */
export const readTree = (
  base: string,
  roots: ReadonlyArray<string> = ROOTS
): { readonly modules: Array<string>; readonly imports: Array<Import> } => {
  const walk = (dir: string): Array<string> =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name)
      return statSync(path).isDirectory() ? walk(path) : MODULE.test(name) ? [path] : []
    })
  const modules = roots.flatMap((root) => walk(join(base, root))).map((path) => relative(base, path))
  const imports = modules.flatMap((module) =>
    [...readFileSync(join(base, module), "utf8").matchAll(RELATIVE)].map((match) => ({
      from: module,
      to: relative(base, resolve(base, dirname(module), match[1]!))
    }))
  )
  return { modules, imports }
}
