/** Writes fixtures/openapi.json, the snapshot the OpenAPI test compares against. */
import { writeFileSync } from "node:fs"
import { openApiDocument } from "../src/Http/Api.ts"

const target = new URL("../fixtures/openapi.json", import.meta.url)
writeFileSync(target, JSON.stringify(openApiDocument(), null, 2) + "\n")
console.log(`wrote ${target.pathname}`)
