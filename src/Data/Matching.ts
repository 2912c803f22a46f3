/**
 * The matching protocol on the data host: `GET /match/market` and `/match/event` (src/Http/Matching.ts) over the
 * MatchingClient in the layer's context, each request refused with 401 unless it carries an API key, like the
 * history routes.
 */
import { HttpApiBuilder, HttpRouter } from "@effect/platform"
import { Effect } from "effect"
import { respond } from "../Http/Errors.ts"
import { matchingRouter } from "../Http/Matching.ts"
import { MatchingClient } from "../Services/MatchingClient.ts"
import { DataHost, requireApiKey } from "./Server.ts"

/** For `dataHostApp(extra)`: the matching routes behind the host's API keys. */
export const dataHostMatchingRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const host = yield* DataHost
    const client = yield* MatchingClient
    const guarded = matchingRouter.pipe(
      HttpRouter.use((app) =>
        Effect.flatMap(Effect.either(requireApiKey), (allowed) =>
          allowed._tag === "Left" ? Effect.succeed(respond(allowed.left)) : app
        )
      ),
      HttpRouter.provideService(MatchingClient, client),
      HttpRouter.provideService(DataHost, host)
    )
    yield* router.concat(guarded)
  })
)
