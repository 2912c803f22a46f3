// Adds lock entries for optional platform packages that npm left out (the registry did not serve them), so `npm ci`
// accepts the lockfile; they are skipped at install like any optional package that does not fit the platform.
import { readFileSync, writeFileSync } from "node:fs"
const file = process.argv[2] ?? "package-lock.json"
const lock = JSON.parse(readFileSync(file, "utf8"))
let added = 0
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === "" ? "" : path + "/"
    const candidates = [`${base}node_modules/${name}`, `node_modules/${name}`]
    if (candidates.some((c) => lock.packages[c])) continue
    lock.packages[`node_modules/${name}`] = { version: version.replace(/^[\^~]/, ""), optional: true }
    added++
  }
}
writeFileSync(file, JSON.stringify(lock, null, 2) + "\n")
console.log(`added ${added}`)
