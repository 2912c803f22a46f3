import { describe, expect, it } from "vitest"
import { readFileSync } from "node:fs"
import { openApiDocument } from "../../src/Http/Api.ts"
import * as F from "../../src/Domain/Fixed.ts"
import { REGISTRY } from "../../src/Engine/Registry.ts"
import { DEFAULT_SLIPPAGE } from "../../src/Domain/OrderRequest.ts"

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

  it("offers each complex type's params, with their bounds and defaults, for a client to build a form from", () => {
    const spec = openApiDocument() as any
    const byType = spec.components.schemas.PlaceOrder.properties.params["x-params-by-type"]
    expect(Object.keys(byType).sort()).toEqual(Object.keys(REGISTRY).sort())
    for (const [type, entry] of Object.entries(REGISTRY)) {
      const name = String(byType[type].$ref).replace("#/components/schemas/", "")
      const schema = spec.components.schemas[name]
      expect(schema, type).toBeDefined()
      const keys = (entry.params as any).fields ?? (entry.params as any).from?.fields
      expect(keys, type).toBeDefined()
      expect(Object.keys(schema.properties).sort(), type).toEqual(Object.keys(keys).sort())
      expect(schema.additionalProperties, type).toBe(false)
    }
    // A bucket order's params, for a client to build its form from too.
    const bucket = spec.components.schemas.PlaceOrder.properties.params["x-bucket-params"]
    expect(bucket.$ref).toBe("#/components/schemas/BucketParams")
    expect(Object.keys(spec.components.schemas.BucketParams.properties).sort()).toEqual([
      "interval_s",
      "max_age_s",
      "max_rounds",
      "min_amount",
      "min_stay_s"
    ])
    const twap = spec.components.schemas.TwapParams.properties
    expect([twap.slices.minimum, twap.slices.maximum]).toEqual([1, 10_000])
    expect(twap.style.default).toBe("limit")
    const stop = spec.components.schemas.StopParams.properties
    expect(stop.trigger_source.default).toBe("touch")
    expect(stop.max_slippage.default).toBe(F.format(DEFAULT_SLIPPAGE))
  })
})
