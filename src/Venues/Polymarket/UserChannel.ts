/** Polymarket's user channel: own fills as they match (a failed trade reversed), venue-side cancels as orders. */
import { Deferred, Effect, Exit, Scope } from "effect"
import * as F from "../../Domain/Fixed.ts"
import type { PolymarketCatalog } from "./Catalog.ts"
import type { Channels } from "./Channels.ts"
import type { OpenOrder, Orders } from "./Orders.ts"
import type { PolymarketConfig } from "./Settings.ts"
import { OwnFills, parseUserFrame, runChannel, type UserOrderMessage, userSubscription } from "./Stream.ts"

/** What the user channel needs: the settings, the catalog, the channels, the order records and the resting set. */
export interface UserChannelDeps {
  readonly config: PolymarketConfig
  readonly catalog: PolymarketCatalog
  readonly channels: Channels
  readonly orders: Orders
  readonly resting: Set<string>
}

/** Builds the user channel of one account; `start` opens it once, for as long as the scope lasts. */
export const makeUserChannel = ({ config, catalog, channels, orders, resting }: UserChannelDeps) =>
  Effect.gen(function* () {
    const { placed, derive, fromOpenOrder, toFill } = orders
    const { tracked, publish, options: channelOptions } = channels
    const nowMs = channelOptions.now
    const venueScope = yield* Effect.scope

    // own fills: counted once when matched; a failed trade is reported as a reversal
    const ownFills = new OwnFills((id) => placed.get(id))
    let userChannel = false
    /** Done once the user channel has connected: an own trade is only heard of on a subscribed channel. */
    const userOpen = yield* Deferred.make<void>()

    /** A venue-side cancel (CANCELLATION: a heartbeat lapse, an expiry, the operator) as an `Order` event. */
    const onUserOrder = (msg: UserOrderMessage) => {
      if (msg.type.toUpperCase() !== "CANCELLATION") return
      const m = catalog.known(msg.market)
      const row: OpenOrder = {
        id: msg.id,
        status: "CANCELED",
        market: msg.market,
        asset_id: msg.asset_id,
        side: msg.side,
        original_size: F.format(msg.original_size as F.Fixed),
        size_matched: F.format(msg.size_matched as F.Fixed),
        price: F.format(msg.price as F.Fixed)
      }
      const p = placed.get(msg.id) ?? (m === undefined ? undefined : derive(row, m))
      if (p === undefined) return
      placed.set(msg.id, p)
      resting.delete(msg.id)
      publish({ _tag: "Order", order: fromOpenOrder(row, p, nowMs()) })
    }

    const startUserChannel = (creds: { key: string; secret: string; passphrase: string }) =>
      Effect.gen(function* () {
        if (!userChannel) {
          userChannel = true
          const handlers = tracked(
            "user",
            {
              onOpen: () => {
                Deferred.unsafeDone(userOpen, Exit.void)
                return userSubscription(creds, [])
              },
              onFrame: (text) => {
                const frame = parseUserFrame(text)
                for (const bad of frame.bad) {
                  // an own order or trade we could not read: what the venue did is to be read back
                  Effect.runSync(Effect.logWarning(`polymarket user channel: unreadable message (${bad})`))
                  publish({ _tag: "Stream", channel: "user", state: "resync", lastMessageAgeMs: null, ts: nowMs() })
                }
                for (const msg of frame.messages) {
                  if (msg.event_type === "order") {
                    onUserOrder(msg)
                    continue
                  }
                  for (const c of ownFills.apply(msg)) {
                    const fill = toFill(c.fill)
                    if (c._tag === "Reversed") {
                      Effect.runSync(
                        Effect.logWarning(`polymarket trade ${fill.tradeId} failed after it matched: reversed`)
                      )
                    }
                    publish(
                      c._tag === "Reversed"
                        ? { _tag: "FillReversed", fill, reason: "the venue reported the trade FAILED after it matched" }
                        : { _tag: "Fill", fill }
                    )
                  }
                }
              },
              onClose: () => {}
            },
            true
          )
          yield* runChannel(`${config.hosts.ws.replace(/\/$/, "")}/user`, handlers, channelOptions).pipe(
            Scope.extend(venueScope)
          )
        }
        // the first placement waits a moment for the channel, so that its own fills are heard; never for long
        yield* Deferred.await(userOpen).pipe(Effect.timeout("2 seconds"), Effect.ignore)
      })

    return { start: startUserChannel }
  })
