/**
 * `npm run build`: compiles the command line into dist/ as plain JavaScript, so `crossbook` starts without compiling
 * TypeScript. One bundle with its dependencies (the native SQLite binding stays a package), split where the commands
 * load their modules, so `--help` and the client commands read only the command tree.
 */
import { build, type Metafile } from "esbuild"
import { rmSync } from "node:fs"
import { join, resolve } from "node:path"

const ROOT = join(import.meta.dirname, "..")

/** Builds the command line into `outdir` (emptied first); answers esbuild's account of what went where. */
export const buildCli = async (outdir: string): Promise<Metafile> => {
  rmSync(outdir, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: ROOT,
    // The sweep's worker threads start from their own entry beside the command's.
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
  return result.metafile
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
