/** Polymarket's socket channels as `streams` reports them: each channel's state, its staleness and reopenings told. */
import { Effect, PubSub } from "effect"
import type { StreamStatus, VenueEvent } from "../../Services/VenueGateway.ts"
import type { PolymarketConfig } from "./Settings.ts"
import type { ChannelHandlers } from "./Stream.ts"

/** What the channels need: the settings (keep-alive timings), the event hub, and the clock in ms. */
export interface ChannelsDeps {
  readonly config: PolymarketConfig
  readonly events: PubSub.PubSub<VenueEvent>
  readonly nowMs: () => number
}

/** The channel states of one venue, and handlers that keep them. */
export const makeChannels = ({ config, events, nowMs }: ChannelsDeps) => {
  const channels = new Map<string, StreamStatus & { opens: number }>()
  const publish = (e: VenueEvent) => Effect.runSync(PubSub.publish(events, e))
  /** Handlers that keep a channel's state and report it stale, resumed (market) or to be read back (user). */
  const tracked = (channel: string, handlers: ChannelHandlers, resyncOnReopen: boolean): ChannelHandlers => {
    channels.set(channel, { channel, state: "connecting", lastMessageAt: null, reconnects: 0, opens: 0 })
    const update = (f: (s: StreamStatus & { opens: number }) => Partial<StreamStatus & { opens: number }>) => {
      const s = channels.get(channel)
      if (s !== undefined) channels.set(channel, { ...s, ...f(s) })
    }
    return {
      onOpen: () => {
        const at = nowMs()
        const before = channels.get(channel)
        update((s) => ({
          state: "live",
          opens: s.opens + 1,
          reconnects: s.opens > 0 ? s.reconnects + 1 : 0,
          lastMessageAt: at
        }))
        const sub = handlers.onOpen()
        if (before !== undefined && before.opens > 0 && resyncOnReopen) {
          publish({ _tag: "Stream", channel, state: "resync", lastMessageAgeMs: null, ts: at })
        }
        return sub
      },
      onFrame: handlers.onFrame,
      onHeard: (at) => update(() => ({ lastMessageAt: at })),
      onStale: (silentMs) => {
        update(() => ({ state: "stale" }))
        publish({ _tag: "Stream", channel, state: "stale", lastMessageAgeMs: silentMs, ts: nowMs() })
      },
      onClose: (reason) => {
        update((s) => ({ state: s.state === "stale" ? "stale" : "connecting" }))
        handlers.onClose(reason)
      }
    }
  }
  const channelOptions = { pingEvery: config.pingEvery, staleAfter: config.staleAfter, now: nowMs }

  return {
    tracked,
    publish,
    options: channelOptions,
    /** A channel ended: it is no longer reported. */
    drop: (channel: string) => void channels.delete(channel),
    statuses: Effect.sync(() =>
      [...channels.values()].map(({ channel, state, lastMessageAt, reconnects }): StreamStatus => ({
        channel,
        state,
        lastMessageAt,
        reconnects
      }))
    )
  }
}

/** The channel states of one Polymarket venue. */
export type Channels = ReturnType<typeof makeChannels>
