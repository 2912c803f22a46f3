/** The dashboard's API types are generated from the server's HttpApi: the committed file is what the API makes now. */
import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { typeOf, uiApiSource } from "../../scripts/ui-api.ts"
import { openApiDocument } from "../../src/Http/Api.ts"

const ROOT = join(import.meta.dirname, "../..")

describe("ui/api.gen.ts", () => {
  it("is what the API's OpenAPI document makes now (run `npm run openapi:snapshot` after changing the API)", async () => {
    const committed = readFileSync(join(ROOT, "ui/api.gen.ts"), "utf8")
    assert.strictEqual(committed, await uiApiSource(openApiDocument()))
  })

  it("names every route of the API, with its answer's schema", async () => {
    const source = await uiApiSource(openApiDocument())
    for (const route of ['"GET /trading/orders"', '"POST /trading/orders"', '"DELETE /trading/orders/{id}"'])
      assert.include(source, route)
    assert.match(source, /"GET \/trading\/orders": \{[^]*?answer: \{[^]*?data: ReadonlyArray<Schemas\["Order"\]>/)
  })

  it("reads JSON Schema as TypeScript: refs, unions, nullables, arrays, records and required fields", () => {
    assert.strictEqual(typeOf({ $ref: "#/components/schemas/Order" }), 'Schemas["Order"]')
    assert.strictEqual(typeOf({ anyOf: [{ type: "string" }, { type: "null" }] }), "(string) | (null)")
    assert.strictEqual(typeOf({ enum: ["buy", "sell"] }), '"buy" | "sell"')
    assert.strictEqual(typeOf({ type: "array", items: { type: "integer" } }), "ReadonlyArray<number>")
    assert.strictEqual(
      typeOf({ type: "object", required: ["a"], properties: { a: { type: "string" }, "b-c": { type: "boolean" } } }),
      '{ readonly a: string; readonly "b-c"?: boolean }'
    )
    assert.strictEqual(
      typeOf({ type: "object", additionalProperties: { type: "number" } }),
      "{ readonly [key: string]: number }"
    )
    assert.strictEqual(typeOf({}), "unknown")
  })
})
