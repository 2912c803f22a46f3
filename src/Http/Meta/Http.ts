/** Handlers of `/` and `/health`. */
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { VenueGateway } from "../../Services/VenueGateway.ts"
import { NAME, VERSION } from "../../Version.ts"
import { Api } from "../Api.ts"

export const MetaLive = HttpApiBuilder.group(Api, "meta", (handlers) =>
  Effect.gen(function* () {
    const gateway = yield* VenueGateway
    return handlers
      .handle("root", () =>
        Effect.succeed({
          name: NAME,
          version: VERSION,
          links: {
            health: "/health",
            openapi: "/openapi.json",
            docs: "/docs",
            venues: "/venues",
            trading: "/trading"
          }
        })
      )
      .handle("health", () =>
        Effect.map(Clock.currentTimeMillis, (time) => ({
          status: "ok" as const,
          version: VERSION,
          time,
          venues: gateway.venues.map((v) => v.info.id)
        }))
      )
  })
)
