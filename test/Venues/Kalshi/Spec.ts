/** Checks requests and WebSocket commands against Kalshi's own API descriptions (read from the shared fixtures, never copied). */
import { Ajv } from "ajv"
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { parse } from "yaml"

const SPECS = new URL("../../../../shared/fixtures/specs/kalshi/", import.meta.url)
export const haveSpecs = existsSync(fileURLToPath(SPECS))

type Doc = Record<string, any>
let loaded: { openapi: Doc; asyncapi: Doc; ajv: Ajv } | undefined

/** OpenAPI 3.0's `nullable` beside a `$ref` (no `type`) as JSON Schema says it: the schema or null. */
const openNullable = (x: any): any => {
  if (Array.isArray(x)) return x.map(openNullable)
  if (x === null || typeof x !== "object") return x
  const out = Object.fromEntries(Object.entries(x).map(([k, v]) => [k, openNullable(v)]))
  if (out["nullable"] === true && out["type"] === undefined) {
    const { nullable: _, ...rest } = out
    return { anyOf: [rest, { type: "null" }] }
  }
  return out
}

const load = () => {
  if (!haveSpecs) return undefined
  if (loaded === undefined) {
    const openapi = openNullable(parse(readFileSync(new URL("openapi-3.31.yaml", SPECS), "utf8"))) as Doc
    const asyncapi = parse(readFileSync(new URL("asyncapi.yaml", SPECS), "utf8")) as Doc
    const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: true })
    ajv.addSchema(openapi, "openapi")
    ajv.addSchema(asyncapi, "asyncapi")
    loaded = { openapi, asyncapi, ajv }
  }
  return loaded
}

const errorsOf = (ajv: Ajv, ref: string, value: unknown): Array<string> => {
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref })
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`)
}

const COMMAND_SCHEMAS: Record<string, ReadonlyArray<string>> = {
  subscribe: ["subscribeCommandPayload"],
  unsubscribe: ["unsubscribeCommandPayload"],
  list_subscriptions: ["listSubscriptionsCommandPayload"],
  update_subscription: ["updateSubscriptionCommandPayload"]
}

/** The problems of each WebSocket command against asyncapi.yaml; undefined when the document is absent. */
export const commandErrors = (commands: ReadonlyArray<unknown>): Array<string> | undefined => {
  const specs = load()
  if (specs === undefined) return undefined
  return commands.flatMap((c, i) => {
    const cmd = (c as { cmd?: unknown }).cmd
    const names = typeof cmd === "string" ? COMMAND_SCHEMAS[cmd] : undefined
    if (names === undefined) return [`command ${i}: unknown cmd ${String(cmd)}`]
    const tries = names.map((n) => errorsOf(specs.ajv, `asyncapi#/components/schemas/${n}`, c))
    return tries.some((e) => e.length === 0) ? [] : tries.flat().map((e) => `command ${i} (${String(cmd)}): ${e}`)
  })
}

/** A request as the adapter sent it: the path is the full path, with the `/trade-api/v2` prefix. */
export interface SentRequest {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly body?: unknown
}

const PREFIX = "/trade-api/v2"

const deref = (doc: Doc, x: any): any => {
  if (x && typeof x.$ref === "string" && x.$ref.startsWith("#/")) {
    return deref(
      doc,
      x.$ref
        .slice(2)
        .split("/")
        .reduce((o: any, k: string) => o?.[k], doc)
    )
  }
  return x
}

/** A fragment of the document made standalone: its local references point into the registered document. */
const rebase = (x: any): any =>
  Array.isArray(x)
    ? x.map(rebase)
    : x !== null && typeof x === "object"
      ? Object.fromEntries(
          Object.entries(x).map(([k, v]) => [
            k,
            k === "$ref" && typeof v === "string" && v.startsWith("#/") ? `openapi${v}` : rebase(v)
          ])
        )
      : x

/** Coerces a query string value to the parameter's type so that its schema can judge it. */
const coerce = (schema: any, value: string): unknown => {
  if (schema?.type === "integer" || schema?.type === "number")
    return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value
  if (schema?.type === "boolean") return value === "true" ? true : value === "false" ? false : value
  return value
}

/** The problems of a request against openapi-3.31.yaml: path, method, every query parameter, the body. */
export const requestErrors = (req: SentRequest): Array<string> | undefined => {
  const specs = load()
  if (specs === undefined) return undefined
  const { ajv, openapi } = specs
  const where = `${req.method} ${req.path}`
  if (!req.path.startsWith(PREFIX)) return [`${where}: not under ${PREFIX}`]
  const path = req.path.slice(PREFIX.length)
  const segments = path.split("/")
  const template = Object.keys(openapi.paths).find((t) => {
    const parts = t.split("/")
    return parts.length === segments.length && parts.every((p, i) => /^\{.+\}$/.test(p) || p === segments[i])
  })
  if (template === undefined) return [`${where}: no such path in the document`]
  const item = openapi.paths[template]
  const op = item[req.method.toLowerCase()]
  if (op === undefined) return [`${where}: ${req.method} is not an operation of ${template}`]
  const errors: Array<string> = []
  const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => deref(openapi, p))
  const queryParams = new Map(params.filter((p: any) => p.in === "query").map((p: any) => [p.name as string, p]))
  for (const [name, value] of Object.entries(req.query)) {
    const p = queryParams.get(name)
    if (p === undefined) {
      errors.push(`${where}: query parameter ${name} is not in the document`)
      continue
    }
    const schema = deref(openapi, p.schema)
    const validate = ajv.compile(rebase(schema))
    if (!validate(coerce(schema, value)))
      errors.push(`${where}: query ${name}=${value}: ${ajv.errorsText(validate.errors)}`)
  }
  for (const p of queryParams.values()) {
    if (p.required === true && !(p.name in req.query))
      errors.push(`${where}: required query parameter ${p.name} missing`)
  }
  const bodySchema = op.requestBody?.content?.["application/json"]?.schema
  if (bodySchema === undefined) {
    if (req.body !== undefined) errors.push(`${where}: the operation takes no body`)
  } else if (req.body === undefined) {
    if (op.requestBody?.required === true) errors.push(`${where}: the body is required`)
  } else {
    const ref = typeof bodySchema.$ref === "string" ? `openapi${bodySchema.$ref}` : undefined
    const found = ref !== undefined ? errorsOf(ajv, ref, req.body) : []
    errors.push(...found.map((e) => `${where}: body ${e}`))
    // properties the document does not name are refused too: the venue would ignore them silently
    const schema = deref(openapi, bodySchema)
    if (schema?.properties && req.body !== null && typeof req.body === "object") {
      for (const k of Object.keys(req.body))
        if (!(k in schema.properties)) errors.push(`${where}: body field ${k} is not in the document`)
    }
  }
  return errors
}
