#!/usr/bin/env node
// The `crossbook` command: the compiled JavaScript in dist/ (`npm run build`, run by `npm ci` and before `npm pack`).
import { existsSync, readFileSync } from "node:fs"
import { stripVTControlCharacters } from "node:util"

const entry = new URL("../dist/crossbook.js", import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write("crossbook: not built: run `npm run build` in the project folder (`npm ci` runs it)\n")
  process.exit(1)
}

// `crossbook [command…] --help`: the page the build rendered from the command itself, without loading it.
const args = process.argv.slice(2)
const last = args[args.length - 1]
const pages = new URL("../dist/help.json", import.meta.url)
if ((last === "--help" || last === "-h") && existsSync(pages)) {
  const page = JSON.parse(readFileSync(pages, "utf8"))[args.slice(0, -1).join(" ")]
  if (typeof page === "string") {
    // Colour as the command decides it (src/Cli.ts colourFor): a terminal, no NO_COLOR, or FORCE_COLOR.
    const env = process.env
    const force = env.FORCE_COLOR ?? ""
    const colour =
      (env.NO_COLOR ?? "") === "" && ((force !== "" && force !== "0") || (process.stdout.isTTY && env.TERM !== "dumb"))
    process.stdout.write(colour ? page : stripVTControlCharacters(page))
    process.exit(0)
  }
}
await import(entry.href)
