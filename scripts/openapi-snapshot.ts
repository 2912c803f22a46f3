/** Writes fixtures/openapi.json, the snapshot the OpenAPI test compares against, and the dashboard's API types from it. */
import { writeFileSync } from "node:fs"
import { openApiDocument } from "../src/Http/Api.ts"
import { uiApiSource } from "./ui-api.ts"

const document = openApiDocument()
const target = new URL("../fixtures/openapi.json", import.meta.url)
writeFileSync(target, JSON.stringify(document, null, 2) + "\n")
console.log(`wrote ${target.pathname}`)
const types = new URL("../ui/api.gen.ts", import.meta.url)
writeFileSync(types, await uiApiSource(document))
console.log(`wrote ${types.pathname}`)
