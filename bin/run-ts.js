#!/usr/bin/env node
// Runs a TypeScript entry point of this package on Node 20 (through tsx's loader).
import { register } from "tsx/esm/api"
import { pathToFileURL } from "node:url"
import { resolve } from "node:path"

const [, , entry, ...rest] = process.argv
if (entry === undefined) {
  console.error("usage: run-ts.js FILE.ts [args…]")
  process.exit(2)
}
register()
process.argv = [process.argv[0], resolve(entry), ...rest]
await import(pathToFileURL(resolve(entry)).href)
