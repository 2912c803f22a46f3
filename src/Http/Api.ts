/** The whole HTTP API as one spec: every group, the common errors, and the OpenAPI document built from it. */
import { HttpApi, OpenApi } from "@effect/platform"
import { JSONSchema, type Schema } from "effect"
import { Params as BucketParams } from "../Engine/Bucket.ts"
import { REGISTRY } from "../Engine/Registry.ts"
import { ApiErrorWire } from "../Domain/Errors.ts"
import { MAX_BODY_BYTES, MAX_DEPTH } from "./BodyGuard.ts"
import { DEFAULT_STREAM_DEPTH, MAX_STREAM_DEPTH, MAX_STREAM_MARKETS } from "./Markets.ts"
import { NAME, VERSION } from "../Version.ts"
import { BucketsApi } from "./Buckets/Api.ts"
import { DeskApi } from "./Desk/Api.ts"
import { MetaApi } from "./Meta/Api.ts"
import { MetricsApi } from "./Metrics/Api.ts"
import { TradingApi } from "./Trading/Api.ts"
import { VenuesApi } from "./Venues/Api.ts"

type Spec = OpenApi.OpenAPISpec

/**
 * The automatic decode error is never what the server answers: its own error body is. A body that does not
 * match its schema answers 422, bad query or path parameters 400, both with the error body.
 */
const withContractErrors = (document: Record<string, any>): Record<string, any> => {
  const spec = document as Spec
  const ref = { $ref: "#/components/schemas/ErrorBody" }
  const errorResponse = (description: string) => ({
    description,
    content: { "application/json": { schema: ref } }
  })
  const paths = spec.paths as Record<
    string,
    Record<string, { responses?: Record<string, unknown>; requestBody?: unknown }>
  >
  for (const item of Object.values(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (typeof operation !== "object" || operation === null || operation.responses === undefined) continue
      const responses = operation.responses
      responses["400"] = errorResponse(
        method === "get" || method === "delete"
          ? "Bad query or path parameters (`validation_error`), or another refusal"
          : "Malformed JSON or bad parameters (`validation_error`), or the venue's refusal"
      )
      if (operation.requestBody !== undefined) {
        responses["400"] = errorResponse(
          `Malformed JSON or a body nested deeper than ${MAX_DEPTH} levels, bad parameters ` +
            "(`validation_error`), or the venue's refusal"
        )
        responses["413"] = errorResponse(
          `The body is larger than ${MAX_BODY_BYTES} bytes (\`validation_error\`, \`details.max_bytes\`)`
        )
        responses["415"] = errorResponse(
          "The body is not JSON (`validation_error`): send `Content-Type: application/json`"
        )
        responses["422"] = errorResponse(
          "The body does not match the schema, or has a field the schema does not name (`validation_error`, " +
            "`details.errors` names each field)"
        )
      }
      responses["500"] = errorResponse("A bug on the server (`internal_error`); the cause is in its log")
    }
  }
  paths["/trading/ws/events"] = {
    get: {
      tags: ["trading"],
      operationId: "trading.events",
      description:
        "WebSocket. Needs `view`. Token in `Authorization: Bearer`, `X-API-Key` or `?key=`; a bad token is " +
        "accepted, then closed with 4401, and so is an open socket whose token is revoked or loses `view`. Replays " +
        "every journal event with seq > `since` that matches `kinds`, then streams live ones as " +
        "`{seq, ts, kind, key, payload}` text frames. A reader that falls behind is closed with 4408 and resumes " +
        "from its last seq. Public market data streams on `/ws/markets` (no token).",
      parameters: [
        { name: "since", in: "query", required: false, schema: { type: "integer", minimum: 0 } },
        {
          name: "kinds",
          in: "query",
          required: false,
          schema: { type: "string" },
          description: "Comma list of prefixes"
        },
        {
          name: "key",
          in: "query",
          required: false,
          schema: { type: "string" },
          description: "The token, for browsers"
        }
      ],
      responses: {
        "101": { description: "Switching to the WebSocket protocol" },
        "400": errorResponse(
          "A bad `since`, or a request that is not a good WebSocket upgrade (`validation_error`; " +
            "`details.errors` names the header)"
        ),
        "500": errorResponse("A bug on the server (`internal_error`); the cause is in its log")
      }
    }
  } as any
  paths["/ws/markets"] = {
    get: {
      tags: ["venues"],
      operationId: "venues.marketStream",
      description:
        "WebSocket, public (no token), beside the events socket `/trading/ws/events`. One JSON text frame each, " +
        "with a per-connection `seq` from 1, strictly increasing: first a snapshot of each market's YES book " +
        '`{seq, ts, type: "snapshot", market_id, bids, asks}` (levels `{price, size}`, best first, `depth` per ' +
        "side, as `GET /venues/{venue}/markets/{id}/book` answers), then as the venue's market data moves " +
        '`{seq, ts, type: "trade", market_id, id, price, amount, taker_side}` for each new trade and ' +
        '`{seq, ts, type: "change", market_id, bids, asks}` listing only the levels that changed: set each ' +
        "level, remove those with size `0`; the result is the venue's book at that depth. A reader that falls " +
        "behind is closed with 4408 and a venue failure with 1011; reconnect for a new snapshot (there is no " +
        "replay). Ids are refused before the upgrade.",
      parameters: [
        {
          name: "ids",
          in: "query",
          required: true,
          schema: { type: "string" },
          description: `Comma list of full market ids \`<venue>:<native_id>\`, at most ${MAX_STREAM_MARKETS}`
        },
        {
          name: "depth",
          in: "query",
          required: false,
          schema: { type: "integer", minimum: 1, maximum: MAX_STREAM_DEPTH, default: DEFAULT_STREAM_DEPTH },
          description: "Levels per side"
        }
      ],
      responses: {
        "101": { description: "Switching to the WebSocket protocol" },
        "400": errorResponse(
          "No ids, too many, an id that is not `<venue>:<native_id>`, a bad `depth`, or a request that is not a " +
            "good WebSocket upgrade (`validation_error`; `details.errors` names the field or header); an unknown " +
            "venue (`unknown_venue`)"
        ),
        "404": errorResponse("A market the venue does not list (`market_not_found`, `details.market_id`)"),
        "500": errorResponse("A bug on the server (`internal_error`); the cause is in its log")
      }
    }
  } as any
  // The token is taken from `X-API-Key` as well as from `Authorization: Bearer`.
  const schemes = (spec.components.securitySchemes ?? {}) as Record<string, unknown>
  schemes["apiKey"] = {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "The access token, for clients that send it in a key header"
  }
  spec.components.securitySchemes = schemes as any
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item) as Array<{ security?: Array<Record<string, unknown>> }>) {
      if (typeof operation !== "object" || operation === null || !Array.isArray(operation.security)) continue
      if (operation.security.some((s) => "bearer" in s)) operation.security.push({ apiKey: [] })
    }
  }
  const schemas = spec.components.schemas as Record<string, unknown>
  delete schemas["HttpApiDecodeError"]
  delete schemas["Issue"]
  delete schemas["PropertyKey"]
  withOrderParams(schemas)
  return document
}

/**
 * Each complex type's `params` schema (bounds, defaults, the keys it takes) as a component, and a map from the type to
 * it on `PlaceOrder.params` (`x-params-by-type`), so a client can build the fields of any type from the document.
 */
const withOrderParams = (schemas: Record<string, any>) => {
  const component = (ast: Schema.Schema.Any["ast"]) => {
    const definitions: Record<string, any> = {}
    const top = JSONSchema.fromAST(ast, {
      definitions,
      definitionPath: "#/components/schemas/",
      target: "openApi3.1"
    }) as { $ref?: string }
    for (const [name, schema] of Object.entries(definitions)) schemas[name] ??= schema
    return top.$ref === undefined ? undefined : { $ref: top.$ref }
  }
  const byType: Record<string, { $ref: string }> = {}
  for (const [type, entry] of Object.entries(REGISTRY)) {
    const ref = component(entry.params.ast)
    if (ref !== undefined) byType[type] = ref
  }
  const params = schemas["PlaceOrder"]?.properties?.params
  if (params !== undefined) {
    params.description =
      "The complex type's parameters: the schema named for the type in `x-params-by-type`; on a bucket " +
      "(`market_id: bucket:<id>`, type `market`), the schema in `x-bucket-params`"
    params["x-params-by-type"] = byType
    params["x-bucket-params"] = component(BucketParams.ast)
  }
}

export class Api extends HttpApi.make(NAME)
  .add(MetaApi)
  .add(VenuesApi)
  .add(TradingApi)
  .add(DeskApi)
  .add(BucketsApi)
  .add(MetricsApi)
  .addError(ApiErrorWire, { status: 500 })
  .annotate(OpenApi.Title, "crossbook")
  .annotate(OpenApi.Version, VERSION)
  .annotate(
    OpenApi.Description,
    "Self-hosted trading server for prediction markets. Decimals are strings, timestamps ms since epoch."
  )
  .annotate(OpenApi.Transform, withContractErrors) {}

/** The OpenAPI document the server publishes at /openapi.json. */
export const openApiDocument = (): Spec => OpenApi.fromApi(Api)
