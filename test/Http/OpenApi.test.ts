import { describe, expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { openApiDocument } from "../../src/Http/Api.ts"

describe("OpenAPI document", () => {
  it("matches the committed snapshot (regenerate with `npm run openapi:snapshot` when the API changes on purpose)", () => {
    const snapshot = JSON.parse(readFileSync(new URL("../../fixtures/openapi.json", import.meta.url), "utf8"))
    expect(JSON.parse(JSON.stringify(openApiDocument()))).toEqual(snapshot)
  })

  it("documents the error body on every operation and no automatic decode error", () => {
    const spec = openApiDocument() as any
    expect(spec.components.schemas.HttpApiDecodeError).toBeUndefined()
    for (const [path, item] of Object.entries<any>(spec.paths)) {
      for (const [method, operation] of Object.entries<any>(item)) {
        for (const status of ["400", "500"]) {
          const schema = operation.responses[status]?.content?.["application/json"]?.schema
          expect(schema, `${method} ${path} ${status}`).toEqual({ $ref: "#/components/schemas/ErrorBody" })
        }
        if (operation.requestBody !== undefined) expect(operation.responses["422"]).toBeDefined()
      }
    }
  })
})
