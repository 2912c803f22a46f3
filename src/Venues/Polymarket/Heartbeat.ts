/** Polymarket's heartbeat: while an order rests it is sent every few seconds, or the venue cancels the account's orders. */
import { Clock, Effect, Schedule, Schema, type Scope } from "effect"
import type { HeartbeatStatus } from "../../Services/VenueGateway.ts"
import type { PolymarketRest } from "./Rest.ts"
import type { PolymarketConfig } from "./Settings.ts"

const HeartbeatAnswer = Schema.Struct({ heartbeat_id: Schema.optional(Schema.NullOr(Schema.String)) })

/** What the heartbeat needs: the REST client, the settings, and whether there is an account to keep alive. */
export interface HeartbeatDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly trading: boolean
}

/**
 * Starts the heartbeat for as long as the scope lasts (with an account). `resting` is the set of orders last seen
 * resting, kept by the trading side: the heartbeat is sent only while it is not empty.
 */
export const makeHeartbeat = ({
  rest,
  config,
  trading
}: HeartbeatDeps): Effect.Effect<
  { readonly resting: Set<string>; readonly status: Effect.Effect<HeartbeatStatus> },
  never,
  Scope.Scope
> =>
  Effect.gen(function* () {
    /** Orders last seen resting: while there is one, the heartbeat runs. */
    const resting = new Set<string>()
    let beat: HeartbeatStatus = { active: false, ok: true, lastOkAt: null, lastError: null, lastErrorAt: null }
    let heartbeatId = ""
    const sendHeartbeat = Effect.gen(function* () {
      if (resting.size === 0) {
        beat = { ...beat, active: false }
        return
      }
      const now = yield* Clock.currentTimeMillis
      yield* rest
        .json(
          {
            family: "clob",
            host: "clob",
            method: "POST",
            path: "/v1/heartbeats",
            body: { heartbeat_id: heartbeatId },
            auth: "l2"
          },
          HeartbeatAnswer
        )
        .pipe(
          Effect.matchEffect({
            onSuccess: (a) =>
              Effect.sync(() => {
                heartbeatId = a.heartbeat_id ?? heartbeatId
                beat = { ...beat, active: true, ok: true, lastOkAt: now }
              }),
            onFailure: (e) =>
              Effect.zipRight(
                Effect.sync(() => {
                  beat = { ...beat, active: true, ok: false, lastError: e.reason, lastErrorAt: now }
                }),
                Effect.logWarning(`polymarket heartbeat failed: ${e.reason}; resting orders may be canceled`)
              )
          })
        )
    })
    if (trading) {
      yield* sendHeartbeat.pipe(Effect.repeat(Schedule.spaced(config.heartbeatEvery)), Effect.ignore, Effect.forkScoped)
    }
    return { resting, status: Effect.sync(() => beat) }
  })
