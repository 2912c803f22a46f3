/**
 * `npm run build`: compiles the command line into dist/ as plain JavaScript, so `crossbook` starts without compiling
 * TypeScript. One bundle with its dependencies (the native SQLite binding stays a package), split where the commands
 * load their modules, so `--help` and the client commands read only the command tree.
 */
import { build, type Metafile } from "esbuild"
import { execFile } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { promisify, stripVTControlCharacters } from "node:util"

const ROOT = join(import.meta.dirname, "..")

/** Builds the command line into `outdir` (emptied first); answers esbuild's account of what went where. */
export const buildCli = async (outdir: string): Promise<Metafile> => {
  rmSync(outdir, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: ROOT,
    // The sweep's worker processes start from their own entry beside the command's.
    entryPoints: { crossbook: "sim/main.ts", "sweep-worker": "sim/Sweep/Worker.ts" },
    outdir,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    minify: true,
    chunkNames: "chunks/[name]-[hash]",
    // The native SQLite binding, tsx (only for TypeScript strategies, where installed) and ws's optional helpers.
    external: ["better-sqlite3", "tsx", "tsx/*", "bufferutil", "utf-8-validate"],
    // Bundled CommonJS dependencies call require(), which an ES module does not have of its own.
    banner: {
      js: 'import { createRequire as __crossbookRequire } from "node:module"; const require = __crossbookRequire(import.meta.url);'
    },
    legalComments: "none",
    metafile: true,
    logLevel: "warning"
  })
  await renderHelp(outdir)
  return result.metafile
}

/** The help page of `crossbook <path> --help` as the built command prints it, in colour (the escapes kept). */
const helpPage = async (outdir: string, path: ReadonlyArray<string>): Promise<string> => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(outdir, "crossbook.js"), ...path, "--help"], {
    env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "1" },
    maxBuffer: 16 * 1024 * 1024
  })
  return stdout
}

/** The commands a help page lists (`Commands:` and the root's groups), by name. */
export const listedCommands = (page: string): Array<string> => {
  const names: Array<string> = []
  let listing = false
  for (const line of stripVTControlCharacters(page).split("\n")) {
    if (/^\S.*:$/.test(line)) {
      listing = !/^(Usage|Arguments|Flags|Global flags|Venues|Examples):$/.test(line)
      continue
    }
    const listed = /^ {2}([a-z][a-z0-9-]*)(?: {3,}\S.*)?$/.exec(line)
    if (listing && listed !== null) names.push(listed[1]!)
  }
  return names
}

/**
 * Writes `help.json` beside the bundle: the help page of the command and of every command the pages list, by path
 * (`""`, `"serve"`, `"orders place"`, …), as the built command prints them. `bin/crossbook.js` answers `--help` from
 * it without loading the bundle (a start costs about a quarter of a second of module loading); a path it does not
 * hold goes to the command itself.
 */
export const renderHelp = async (outdir: string): Promise<void> => {
  const pages: Record<string, string> = {}
  let level: Array<string> = [""]
  while (level.length > 0) {
    const rendered = await Promise.all(
      level.map(async (path) => [path, await helpPage(outdir, path === "" ? [] : path.split(" "))] as const)
    )
    level = []
    for (const [path, page] of rendered) {
      pages[path] = page
      for (const name of listedCommands(page)) level.push(path === "" ? name : `${path} ${name}`)
    }
  }
  const sorted = Object.fromEntries(Object.entries(pages).sort(([a], [b]) => (a < b ? -1 : 1)))
  writeFileSync(join(outdir, "help.json"), JSON.stringify(sorted))
}

/** The source files in what `entry` (a path in the metafile) loads at start: itself and its static imports. */
export const loadedAtStart = (metafile: Metafile, entry: string): Set<string> => {
  const chunks = new Set<string>()
  const queue = [entry]
  while (queue.length > 0) {
    const chunk = queue.pop()!
    if (chunks.has(chunk)) continue
    chunks.add(chunk)
    for (const imported of metafile.outputs[chunk]?.imports ?? []) {
      if (imported.kind === "import-statement" && metafile.outputs[imported.path] !== undefined)
        queue.push(imported.path)
    }
  }
  return new Set([...chunks].flatMap((chunk) => Object.keys(metafile.outputs[chunk]?.inputs ?? {})))
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  await buildCli(resolve(process.argv[2] ?? join(ROOT, "dist")))
}
