/** `GET /metrics`: the server's metrics in Prometheus' text format, for a token with `view`. */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { ApiErrorWire } from "../../Domain/Errors.ts"
import { CONTENT_TYPE } from "../../Telemetry/Metrics.ts"
import { Authorization } from "../Security.ts"

export const MetricsApi = HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(
        HttpApiSchema.Text({ contentType: CONTENT_TYPE }).annotations({
          description: "The metrics in Prometheus' text exposition format"
        })
      )
      .annotate(
        OpenApi.Description,
        "Prometheus text format (0.0.4): orders placed and refused, fills, venue request latencies and 429s, venue " +
          "streams, journal commit latency, live parents, events-socket clients, process memory. Needs `view` on " +
          "the server's account (its only one that is not a paper account, else `*`); Prometheus sends the token " +
          "with `authorization: {credentials: <token>}`."
      )
  )
  .middleware(Authorization)
  .addError(ApiErrorWire, { status: 401 })
  .addError(ApiErrorWire, { status: 403 })
  .annotate(OpenApi.Description, "Metrics for Prometheus; needs `Authorization: Bearer <token>`")
