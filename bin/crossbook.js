#!/usr/bin/env node
// The `crossbook` command: the compiled JavaScript in dist/ (`npm run build`, run by `npm ci` and before `npm pack`).
import { existsSync } from "node:fs"

const entry = new URL("../dist/crossbook.js", import.meta.url)
if (!existsSync(entry)) {
  process.stderr.write("crossbook: not built: run `npm run build` in the project folder (`npm ci` runs it)\n")
  process.exit(1)
}
await import(entry.href)
