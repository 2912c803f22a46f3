/** Traces over OTLP/HTTP when `OTEL_EXPORTER_OTLP_ENDPOINT` is set; with no endpoint, no span is made at all. */
import { HttpMiddleware } from "@effect/platform"
import { NodeHttpClient } from "@effect/platform-node"
import { Duration, Effect, Layer } from "effect"
import { VERSION } from "../Version.ts"
import { currentTracing } from "./Telemetry.ts"

type Env = Readonly<Record<string, string | undefined>>

const set = (v: string | undefined): string | undefined => (v === undefined || v.trim() === "" ? undefined : v.trim())

/** Where spans go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else `OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`. */
export const tracesUrl = (env: Env): string | undefined => {
  const traces = set(env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"])
  if (traces !== undefined) return traces
  const base = set(env["OTEL_EXPORTER_OTLP_ENDPOINT"])
  return base === undefined ? undefined : `${base.replace(/\/+$/, "")}/v1/traces`
}

/** `OTEL_EXPORTER_OTLP_HEADERS`: `key=value` pairs separated by commas, values URL-encoded. */
export const otlpHeaders = (text: string | undefined): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=")
    if (at <= 0) continue
    const key = pair.slice(0, at).trim()
    if (key === "") continue
    try {
      headers[key] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      headers[key] = pair.slice(at + 1).trim()
    }
  }
  return headers
}

/** No spans: the HTTP server's per-request span and every other one are skipped. */
const off: Layer.Layer<never> = Layer.mergeAll(
  Layer.setTracerEnabled(false),
  Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)
)

/**
 * The server's tracing from the OpenTelemetry variables: spans of HTTP requests, desk operations, venue requests,
 * journal commits and engine reactions exported over OTLP/HTTP (protobuf, or JSON with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`) as service `OTEL_SERVICE_NAME` (default `crossbook`), every
 * `OTEL_BSP_SCHEDULE_DELAY` ms (default 5000) and at shutdown. Without an endpoint, tracing is off.
 */
export const tracingLayer = (env: Env): Layer.Layer<never> => {
  const url = tracesUrl(env)
  if (url === undefined) return off
  const protocol = set(env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) ?? set(env["OTEL_EXPORTER_OTLP_PROTOCOL"])
  const delay = Number(set(env["OTEL_BSP_SCHEDULE_DELAY"]) ?? "5000")
  // The exporter's modules are loaded only when there is somewhere to send spans.
  const exporter = Layer.unwrapEffect(
    Effect.promise(async () => {
      const [OtlpTracer, OtlpSerialization] = await Promise.all([
        import("@effect/opentelemetry/OtlpTracer"),
        import("@effect/opentelemetry/OtlpSerialization")
      ])
      return OtlpTracer.layer({
        url,
        resource: { serviceName: set(env["OTEL_SERVICE_NAME"]) ?? "crossbook", serviceVersion: VERSION },
        headers: otlpHeaders(set(env["OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) ?? env["OTEL_EXPORTER_OTLP_HEADERS"]),
        exportInterval: Duration.millis(Number.isFinite(delay) && delay > 0 ? delay : 5000)
      }).pipe(
        Layer.provide(protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
        Layer.provide(NodeHttpClient.layer)
      )
    })
  )
  return Layer.mergeAll(
    exporter,
    Layer.locallyScoped(currentTracing, true),
    // A socket lives as long as its client, and a token may ride in its URL (`?key=`): neither makes a span.
    Layer.locallyScoped(
      HttpMiddleware.currentTracerDisabledWhen,
      (request) => request.headers["upgrade"] !== undefined || /[?&]key=/i.test(request.url)
    )
  )
}
