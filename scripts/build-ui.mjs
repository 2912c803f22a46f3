// Builds the dashboard (ui/) into ui/dist: one script and one style sheet, named by their content hash, and the
// index.html that loads them. No network: uPlot and everything else come from node_modules.
import { build } from "esbuild"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** Builds into `outDir` (default ui/dist), replacing what was there; answers the names written. */
export const buildUi = async (outDir = join(root, "ui", "dist")) => {
  rmSync(outDir, { recursive: true, force: true })
  mkdirSync(outDir, { recursive: true })
  const result = await build({
    entryPoints: [join(root, "ui", "main.ts")],
    bundle: true,
    format: "esm",
    target: "es2022",
    minify: true,
    sourcemap: true,
    entryNames: "[name]-[hash]",
    outdir: outDir,
    metafile: true,
    logLevel: "warning"
  })
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p))
  const script = outputs.find((n) => n.endsWith(".js"))
  const style = outputs.find((n) => n.endsWith(".css"))
  if (script === undefined || style === undefined) throw new Error(`the build wrote ${outputs.join(", ")}`)
  const html = readFileSync(join(root, "ui", "index.html"), "utf8")
    .replace("%SCRIPT%", script)
    .replace("%STYLE%", style)
  writeFileSync(join(outDir, "index.html"), html)
  return { script, style, files: [...outputs, "index.html"] }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files } = await buildUi(process.argv[2])
  console.log(`dashboard built: ${files.filter((f) => !f.endsWith(".map")).join(", ")}`)
}
