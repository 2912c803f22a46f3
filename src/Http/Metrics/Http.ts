/** Handler of `GET /metrics`: the counters as they stand, with the gauges read at scrape time. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect } from "effect"
import { COMPLEX_TYPES } from "../../Domain/Order.ts"
import { Engine } from "../../Engine/Engine.ts"
import { defaultAccount, VenueGateway } from "../../Services/VenueGateway.ts"
import { CONTENT_TYPE } from "../../Telemetry/Metrics.ts"
import { Telemetry } from "../../Telemetry/Telemetry.ts"
import { Api } from "../Api.ts"
import { requirePermission } from "../Security.ts"

const STREAM_STATES = ["live", "stale", "connecting", "down"] as const

export const MetricsLive = HttpApiBuilder.group(Api, "metrics", (handlers) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    const engine = yield* Engine
    const m = yield* Telemetry

    /** The gauges that are read rather than kept: streams, live parents, memory. */
    const readGauges = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      m.streamLastMessageAge.clear()
      m.streamUp.clear()
      for (const venue of gateway.venues) {
        if (venue.streams === undefined) continue
        const id = venue.info.id
        for (const s of yield* venue.streams) {
          m.streamReconnects.setTotal([id, s.channel], s.reconnects)
          if (s.lastMessageAt !== null) {
            m.streamLastMessageAge.set([id, s.channel], Math.max(0, now - s.lastMessageAt) / 1000)
          }
          for (const state of STREAM_STATES) m.streamUp.set([id, s.channel, state], s.state === state ? 1 : 0)
        }
      }
      const live = yield* engine.liveByType
      for (const type of COMPLEX_TYPES) m.parentsLive.set([type], live[type] ?? 0)
      const memory = process.memoryUsage()
      m.memory.set(["rss"], memory.rss)
      m.memory.set(["heap_used"], memory.heapUsed)
      m.memory.set(["heap_total"], memory.heapTotal)
      m.memory.set(["external"], memory.external)
      m.up.set([], 1)
    })

    return handlers.handle("metrics", () =>
      Effect.gen(function* () {
        yield* requirePermission("view", defaultAccount(gateway.accounts))
        yield* readGauges
        return HttpServerResponse.text(m.registry.render(), { contentType: CONTENT_TYPE })
      })
    )
  })
)
