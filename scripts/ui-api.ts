/**
 * The dashboard's API types, generated from the OpenAPI document the server's `HttpApi` publishes: every schema and
 * every route (its path and query parameters, body and answer). `npm run openapi:snapshot` writes ui/api.gen.ts; a
 * test checks that the committed file is what the API makes now, so a renamed field breaks the dashboard's typecheck.
 */
import { format } from "prettier"

type Json = any

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/
const key = (name: string) => (identifier.test(name) ? name : JSON.stringify(name))
const refName = (ref: string) => ref.replace(/^#\/components\/schemas\//, "")

/** A JSON Schema (as Effect's OpenAPI writes it) as a TypeScript type. */
export const typeOf = (schema: Json): string => {
  if (schema === undefined || schema === true || (typeof schema === "object" && Object.keys(schema).length === 0))
    return "unknown"
  if (schema === false) return "never"
  if (typeof schema["$ref"] === "string") return `Schemas[${JSON.stringify(refName(schema["$ref"]))}]`
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(" | ")
  if ("const" in schema) return JSON.stringify(schema.const)
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) return union.map((s: Json) => `(${typeOf(s)})`).join(" | ")
  if (Array.isArray(schema.allOf)) return schema.allOf.map((s: Json) => `(${typeOf(s)})`).join(" & ")
  if (Array.isArray(schema.type)) return schema.type.map((t: string) => typeOf({ ...schema, type: t })).join(" | ")
  switch (schema.type) {
    case "string":
      return "string"
    case "number":
    case "integer":
      return "number"
    case "boolean":
      return "boolean"
    case "null":
      return "null"
    case "array":
      return Array.isArray(schema.prefixItems)
        ? `readonly [${schema.prefixItems.map(typeOf).join(", ")}${schema.items === undefined || schema.items === false ? "" : `, ...Array<${typeOf(schema.items)}>`}]`
        : `ReadonlyArray<${typeOf(schema.items)}>`
  }
  if (schema.type === "object" || schema.properties !== undefined || schema.additionalProperties !== undefined) {
    const required = new Set<string>(schema.required ?? [])
    const fields = Object.entries<Json>(schema.properties ?? {}).map(
      ([name, s]) => `readonly ${key(name)}${required.has(name) ? "" : "?"}: ${typeOf(s)}`
    )
    const extra = [
      ...(schema.additionalProperties === undefined || schema.additionalProperties === false
        ? []
        : [schema.additionalProperties === true ? "unknown" : typeOf(schema.additionalProperties)]),
      ...Object.values<Json>(schema.patternProperties ?? {}).map(typeOf)
    ]
    const own = fields.length === 0 ? "Record<string, never>" : `{ ${fields.join("; ")} }`
    if (extra.length === 0) return own
    const index = `{ readonly [key: string]: ${fields.length > 0 ? "unknown" : extra.join(" | ")} }`
    return fields.length > 0 ? `${own} & ${index}` : index
  }
  return "unknown"
}

const METHODS = ["get", "post", "put", "patch", "delete"] as const

/** The source of ui/api.gen.ts for an OpenAPI document. */
export const uiApiSource = async (document: Json): Promise<string> => {
  const schemas = Object.entries<Json>(document.components?.schemas ?? {})
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, schema]) => `  readonly ${key(name)}: ${typeOf(schema)}`)
  const routes: Array<string> = []
  for (const path of Object.keys(document.paths ?? {}).sort()) {
    for (const method of METHODS) {
      const operation = document.paths[path][method]
      if (operation === undefined) continue
      const parameters: Array<Json> = operation.parameters ?? []
      const params = (where: string, value: (p: Json) => string) => {
        const fields = parameters
          .filter((p) => p.in === where)
          .map((p) => `readonly ${key(p.name)}${p.required === true ? "" : "?"}: ${value(p)}`)
        return fields.length === 0 ? "Record<string, never>" : `{ ${fields.join("; ")} }`
      }
      const body = operation.requestBody?.content?.["application/json"]?.schema
      const success = Object.entries<Json>(operation.responses ?? {}).find(([status]) => /^2/.test(status))?.[1]
      const answer = success?.content?.["application/json"]?.schema
      routes.push(
        `  readonly ${JSON.stringify(`${method.toUpperCase()} ${path}`)}: {\n` +
          `    readonly path: ${params("path", () => "string")}\n` +
          // A query string carries text: numbers and flags are written into it as they are.
          `    readonly query: ${params("query", (p) => `${typeOf(p.schema)} | number | boolean | undefined`)}\n` +
          `    readonly body: ${body === undefined ? "undefined" : typeOf(body)}\n` +
          `    readonly answer: ${answer === undefined ? "void" : typeOf(answer)}\n` +
          `  }`
      )
    }
  }
  const source = [
    "// Generated from the server's OpenAPI document by scripts/ui-api.ts (`npm run openapi:snapshot`): do not edit.",
    "",
    "/** Every schema of the API, by its name in the document. */",
    "export interface Schemas {",
    ...schemas,
    "}",
    "",
    "/** Every route of the API by method and path: its path and query parameters, its body and its answer. */",
    "export interface Routes {",
    ...routes,
    "}",
    ""
  ].join("\n")
  return format(source, { parser: "typescript", semi: false, printWidth: 120, trailingComma: "none" })
}
