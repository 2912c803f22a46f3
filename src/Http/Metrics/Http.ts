/** Handler of `GET /metrics`: the counters as they stand, with the gauges read at scrape time. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect } from "effect"
import { Engine } from "../../Engine/Engine.ts"
import { defaultAccount, VenueGateway } from "../../Services/VenueGateway.ts"
import { CONTENT_TYPE } from "../../Telemetry/Metrics.ts"
import { readGauges, Telemetry } from "../../Telemetry/Telemetry.ts"
import { Api } from "../Api.ts"
import { requirePermission } from "../Security.ts"

export const MetricsLive = HttpApiBuilder.group(Api, "metrics", (handlers) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    const engine = yield* Engine
    const m = yield* Telemetry

    return handlers.handle("metrics", () =>
      Effect.gen(function* () {
        yield* requirePermission("view", defaultAccount(gateway.accounts))
        yield* readGauges(m, gateway.venues, yield* engine.liveByType, yield* Clock.currentTimeMillis)
        return HttpServerResponse.text(m.registry.render(), { contentType: CONTENT_TYPE })
      })
    )
  })
)
