/** The VenueGateway seam: every venue the server knows, behind one interface for market data and orders. */
import { Context, Data, Effect, type Queue, type Scope } from "effect"
import type { MarketFees } from "../Domain/Fees.ts"
import type { Fixed } from "../Domain/Fixed.ts"
import type { Book, Market, Side, Touch, Trade } from "../Domain/Market.ts"
import { PAPER_NAME } from "../Domain/Order.ts"
import * as Id from "../Domain/Ids.ts"

export const CAPABILITY_KEYS = [
  "fetch_markets",
  "search",
  "fetch_order_book",
  "fetch_trades",
  "watch_order_book",
  "create_order",
  "cancel_order",
  "cancel_all_orders",
  "edit_order",
  "fetch_orders",
  "fetch_my_trades",
  "fetch_positions",
  "fetch_balance",
  "post_only",
  "reduce_only",
  "ioc",
  "fok",
  "market_order"
] as const
export type CapabilityKey = (typeof CAPABILITY_KEYS)[number]
export type Capability = boolean | "partial"
export type Capabilities = { readonly [K in CapabilityKey]: Capability }

/**
 * A venue's capability map as declared, its literal values kept (`false` stays `false`), so that the type of a remote
 * venue built with it knows which members it needs (see {@link RemoteVenue}).
 */
export const capabilities = <const H extends Capabilities>(has: H): H => has

export interface VenueInfo {
  readonly id: string
  readonly name: string
  /** How the venue keeps its books: `yes_book` = one YES book, a NO order is a YES order at 1 − p. */
  readonly book_model: string
  readonly has: Capabilities
}

/** Why a venue did not do what was asked; the HTTP layer maps each kind to the contract's status. */
export class VenueError extends Data.TaggedError("VenueError")<{
  readonly venue: string
  readonly kind:
    "rejected" | "insufficient_funds" | "rate_limited" | "timeout" | "unavailable" | "not_supported" | "market_closed"
  readonly reason: string
  readonly retryAfterS?: number
  /**
   * Whether the request certainly never reached the venue (a connection refused, a local rate limit): `false` lets a
   * placement be rejected at once. Unset, a `timeout` or `unavailable` answer to a placement is an unknown outcome.
   */
  readonly sent?: boolean
}> {}

export type TimeInForce = "gtc" | "gtd" | "ioc" | "fok"

export interface PlaceOrderRequest {
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: Side
  readonly price: Fixed
  readonly amount: Fixed
  readonly timeInForce: TimeInForce
  readonly postOnly: boolean
  readonly reduceOnly: boolean
  readonly expiresAt: number | null
}

export type VenueOrderStatus = "open" | "closed" | "canceled" | "expired" | "rejected"

/** An order as the venue reports it. */
export interface VenueOrder {
  readonly venueOrderId: string
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: Side
  readonly price: Fixed
  readonly amount: Fixed
  readonly filled: Fixed
  readonly status: VenueOrderStatus
  readonly averagePrice: Fixed | null
  readonly cost: Fixed
  readonly fee: Fixed
  readonly queuePriorityPreserved: boolean | null
  readonly updatedAt: number
  /** What the venue reported along with this answer (fills of this order among them), when it says. */
  readonly events?: ReadonlyArray<VenueEvent>
}

export interface VenueFill {
  readonly tradeId: string
  readonly venueOrderId: string
  readonly clientOrderId: string
  readonly nativeId: string
  readonly side: Side
  readonly price: Fixed
  readonly amount: Fixed
  readonly fee: Fixed
  readonly liquidity: "maker" | "taker"
  readonly ts: number
}

/** What a venue reports as it happens: own fills, own order changes, and book changes. */
export type VenueEvent =
  | { readonly _tag: "Fill"; readonly fill: VenueFill }
  /** A fill reported before that the venue undid (Polymarket: a trade `FAILED` after it matched). */
  | { readonly _tag: "FillReversed"; readonly fill: VenueFill; readonly reason: string }
  | { readonly _tag: "Order"; readonly order: VenueOrder }
  | { readonly _tag: "Book"; readonly nativeId: string; readonly ts: number }
  /** A public trade in a market the venue streams (`watch`), at its YES price. */
  | { readonly _tag: "Trade"; readonly nativeId: string; readonly price: Fixed; readonly ts: number }
  /**
   * A market resolved: every YES contract pays `payout` (1 or 0, or the venue's figure for a scalar or void
   * result), every NO contract 1 − payout.
   */
  | { readonly _tag: "Settled"; readonly nativeId: string; readonly payout: Fixed; readonly ts: number }
  /**
   * A stream of the venue changed state: `stale` (silent past its bound), `resumed` (reopened with fresh snapshots),
   * or `resync` (reopened after a gap: what the venue did meanwhile is to be read back, see `fillsSince`).
   */
  | {
      readonly _tag: "Stream"
      readonly channel: string
      readonly state: "stale" | "resumed" | "resync"
      readonly lastMessageAgeMs: number | null
      readonly ts: number
    }

/** The plain-code answers of a venue that answers in process (see `Venue.now`). */
export interface VenueNow {
  /** As `market`. */
  readonly market: (nativeId: string) => Market | undefined
  /**
   * As `placeOrder` at `now`: the order, or the venue's refusal. What it reports is published as `placeOrder`
   * publishes it; the answer's events are fills and changes of the order placed.
   */
  readonly placeOrder: (request: PlaceOrderRequest, now: number) => VenueOrder | VenueError
  /** As `cancelOrder` at `now`, its answer given as `placeOrder`'s is (what it reports comes with the order). */
  readonly cancelOrder?: (venueOrderId: string, now: number) => VenueOrder | VenueError
  /**
   * The market's best bid, best ask (YES prices) and last trade price now, as `book` and `trades` would give them,
   * without copying either; undefined for a market the venue does not have.
   */
  readonly touch?: (nativeId: string) => Touch | undefined
}

/** A venue: public market data plus, where the venue allows it, orders on one account. */
export interface Venue {
  readonly info: VenueInfo
  /** Names of the accounts configured on this venue (`sim` has `default`); `<venue>:<name>` on the wire. */
  readonly accounts: ReadonlyArray<string>
  /** Every market of the venue, in native id order. */
  readonly markets: Effect.Effect<ReadonlyArray<Market>, VenueError>
  readonly market: (nativeId: string) => Effect.Effect<Market | undefined, VenueError>
  readonly book: (nativeId: string) => Effect.Effect<Book, VenueError>
  /** Recent public trades, newest first. */
  readonly trades: (nativeId: string) => Effect.Effect<ReadonlyArray<Trade>, VenueError>
  readonly placeOrder: (request: PlaceOrderRequest) => Effect.Effect<VenueOrder, VenueError>
  readonly cancelOrder: (venueOrderId: string) => Effect.Effect<VenueOrder, VenueError>
  readonly amendOrder: (
    venueOrderId: string,
    changes: { readonly price?: Fixed; readonly amount?: Fixed }
  ) => Effect.Effect<VenueOrder, VenueError>
  /**
   * The order with this client id, if the venue has it: how a placement whose answer was lost is reconciled.
   * `undefined` means the venue certainly has no such order. `request` is the placement as it was sent (a venue
   * that keys orders by their hash, Polymarket, computes it from the request).
   */
  readonly orderByClientId: (
    clientOrderId: string,
    request?: PlaceOrderRequest
  ) => Effect.Effect<VenueOrder | undefined, VenueError>
  /**
   * The venue answers over a network (Kalshi, Polymarket): its calls may be slow, lost or ambiguous, so the desk
   * sends them in the account's lane outside its own lock, bounds them, and gives its orders client ids that never
   * repeat. Unset for a venue that answers in process (sim, paper, a tape).
   */
  readonly remote?: boolean
  /**
   * A venue that answers in process at once and never loses an answer (a tape) answers a placement's reads and the
   * placement itself in plain code too, so the desk places on it with no Effect step.
   */
  readonly now?: VenueNow
  /** A queue of everything the venue reports from now on, for as long as the scope lasts. */
  readonly subscribe: Effect.Effect<Queue.Dequeue<VenueEvent>, never, Scope.Scope>

  // What a real venue states about the account itself (Kalshi). Optional: a venue without them leaves them out.
  /** Cash as the venue states it. */
  readonly balance?: Effect.Effect<VenueBalance, VenueError>
  /** Positions as the venue states them, netted on the YES leg (negative = NO held). */
  readonly positions?: Effect.Effect<ReadonlyArray<VenuePosition>, VenueError>
  /** The account's resting orders on the venue, for reconciling after a restart or a reconnect. */
  readonly openOrders?: Effect.Effect<ReadonlyArray<VenueOrder>, VenueError>
  /** One order by the venue's id, whatever its state (an order the venue no longer lists as open). */
  readonly orderById?: (venueOrderId: string) => Effect.Effect<VenueOrder | undefined, VenueError>
  /**
   * Every own fill since `since` (ms, inclusive), every page, oldest first: what the desk reads back at start, after
   * a reconnect and on its periodic reconcile, booking each trade id once.
   */
  readonly fillsSince?: (since: number) => Effect.Effect<ReadonlyArray<VenueFill>, VenueError>
  /** Resolutions of markets the account held, since `since` (ms): a settlement missed while not listening. */
  readonly settlementsSince?: (
    since: number
  ) => Effect.Effect<
    ReadonlyArray<{ readonly nativeId: string; readonly payout: Fixed; readonly ts: number }>,
    VenueError
  >
  /**
   * Set by a venue that pays a resolved market only when the holder redeems the winning tokens itself (Polymarket: the
   * conditional tokens' `redeemPositions`, on chain): the tokens the account still holds in these markets. A position
   * settled there shows as redeemable until the venue holds none of its side any more.
   */
  readonly unredeemed?: (nativeIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<VenueHolding>, VenueError>
  /** The state of each of the venue's streams, for `GET /trading/status`. */
  readonly streams?: Effect.Effect<ReadonlyArray<StreamStatus>>
  /** Shrinks a resting order to `remaining` contracts left, keeping its place in the queue. */
  readonly decreaseOrder?: (venueOrderId: string, remaining: Fixed) => Effect.Effect<VenueOrder, VenueError>

  // Optional members a venue offers when it can (Polymarket has all four).
  /** Cancels every open order of the account on the venue in one call; answers how many were canceled. */
  readonly cancelAll?: Effect.Effect<number, VenueError>
  /** Cancels every open order of the account in one market; answers how many were canceled. */
  readonly cancelMarket?: (nativeId: string) => Effect.Effect<number, VenueError>
  /** Streams these markets' books into the `subscribe` queue (`Book` events) for as long as the scope lasts. */
  readonly watch?: (nativeIds: ReadonlyArray<string>) => Effect.Effect<void, VenueError, Scope.Scope>
  /**
   * The venue streams the public trades (`Trade` events) of the markets it streams books of (those it `watch`es, or
   * whose book it was asked for, as Kalshi subscribes them): their last price need not be asked for on every change.
   */
  readonly streamsTrades?: boolean
  /** The keep-alive the venue needs while orders rest: when it last succeeded or failed, and why. */
  readonly heartbeat?: Effect.Effect<HeartbeatStatus>
  /**
   * The venue's fee schedule on one market, for a venue whose market records do not carry it (`feeSchedule`);
   * undefined where the venue states none as data. Read through {@link feesOf}.
   */
  readonly fees?: (nativeId: string) => Effect.Effect<MarketFees | undefined, VenueError>
}

/**
 * The members a remote venue provides for the account capabilities it may claim. A remote venue's own record is the
 * account's (its cash, positions, orders and fills), so what `has` claims is read there; an in-process venue's record
 * is the desk's own ledger, and needs none of them.
 */
export const CAPABILITY_MEMBERS = {
  fetch_balance: ["balance"],
  fetch_positions: ["positions"],
  fetch_orders: ["openOrders", "orderById"],
  fetch_my_trades: ["fillsSince"],
  cancel_all_orders: ["cancelAll"]
} as const satisfies { readonly [K in CapabilityKey]?: ReadonlyArray<keyof Venue> }

type MemberKeys = keyof typeof CAPABILITY_MEMBERS
type MembersOf<K extends MemberKeys> = (typeof CAPABILITY_MEMBERS)[K][number]
/** The members a capability map needs: those of every key that may be true or `"partial"`. */
type Needed<H extends Capabilities> = { [K in MemberKeys]: H[K] extends false ? never : MembersOf<K> }[MemberKeys]
/** The members a capability map rules out: those of every key that is surely false. */
type RuledOut<H extends Capabilities> = { [K in MemberKeys]: H[K] extends false ? MembersOf<K> : never }[MemberKeys]

/**
 * A remote venue whose type reads its own capability map `H` (its `info.has`): every account capability it may claim
 * comes with the members that serve it (`fetch_balance` → `balance`, …), and one it never claims has none of them.
 */
export type RemoteVenue<H extends Capabilities> = Venue & {
  readonly remote: true
  readonly info: VenueInfo & { readonly has: H }
} & { readonly [M in Needed<H>]-?: NonNullable<Venue[M]> } & { readonly [M in RuledOut<H>]?: undefined }

/**
 * What a built remote venue claims without the members to serve it, as sentences (none for an in-process venue): the
 * run-time side of {@link RemoteVenue}, for venues whose capabilities are only known once built.
 */
export const capabilityGaps = (venue: Venue): ReadonlyArray<string> =>
  venue.remote !== true
    ? []
    : Object.entries(CAPABILITY_MEMBERS).flatMap(([key, members]) =>
        venue.info.has[key as MemberKeys] === false
          ? []
          : members.filter((m) => venue[m] === undefined).map((m) => `${venue.info.id} claims ${key} but has no ${m}`)
      )

/**
 * A market's fee schedule: the one its record carries, else the one its venue states for it, else undefined (none
 * known). What a paper fill pays and what a bucket order prices a member's contract with.
 */
export const feesOf = (venue: Venue, market: Market): Effect.Effect<MarketFees | undefined, VenueError> =>
  market.feeSchedule !== undefined || venue.fees === undefined
    ? Effect.succeed(market.feeSchedule)
    : venue.fees(market.nativeId)

/** The fee of one fill of `amount` contracts at YES price `price`. */
export type FeeRule = (price: Fixed, amount: Fixed, liquidity: "maker" | "taker") => Fixed

/** The name of every venue's paper account: `<venue>:paper` trades on live market data, its orders never leave. */
export const PAPER = PAPER_NAME

/** Whether an account `<venue>:<name>` is a paper account. */
export const isPaperAccount = (account: string): boolean => Id.accountNamed(account, PAPER)

export interface VenueBalance {
  readonly cash: Fixed
  /** The venue's value of the open positions, when it says. */
  readonly portfolioValue: Fixed | null
}

export interface VenuePosition {
  readonly nativeId: string
  readonly contracts: Fixed
  readonly exposure: Fixed | null
  readonly realizedPnl: Fixed | null
  readonly feesPaid: Fixed | null
}

/** Tokens of one side of a market the account holds, as the venue lists them (see `unredeemed`). */
export interface VenueHolding {
  readonly nativeId: string
  readonly side: "yes" | "no"
  readonly size: Fixed
}

/** One stream of a venue (a socket, or a channel of one), for `GET /trading/status`. */
export interface StreamStatus {
  readonly channel: string
  readonly state: "live" | "stale" | "connecting" | "down"
  /** When the stream last heard anything from the venue (a message or a PONG); null before the first. */
  readonly lastMessageAt: number | null
  readonly reconnects: number
}

/** The state of a venue's order keep-alive, for `GET /trading/status`. */
export interface HeartbeatStatus {
  /** Whether the keep-alive is sent now (some order rests). */
  readonly active: boolean
  readonly ok: boolean
  readonly lastOkAt: number | null
  readonly lastError: string | null
  readonly lastErrorAt: number | null
}

/**
 * The account a request that names none concerns: the server's only account that is not a paper one, else `*`
 * (every account).
 */
export const defaultAccount = (accounts: ReadonlyArray<string>): string => {
  const own = accounts.filter((a) => !isPaperAccount(a))
  return own.length === 1 ? own[0]! : "*"
}

/** The account `<venue>:<name>` an order on the venue goes to when it names none: the venue's only own account. */
export const venueAccount = (venue: Venue | undefined): string | undefined =>
  venue?.accounts.length === 1 ? `${venue.info.id}:${venue.accounts[0]}` : undefined

export class VenueGateway extends Context.Tag("crossbook/VenueGateway")<
  VenueGateway,
  {
    readonly venues: ReadonlyArray<Venue>
    readonly venue: (id: string) => Venue | undefined
    /** Every configured account, `<venue>:<name>`, in venue order: the venue's own, then its paper account. */
    readonly accounts: ReadonlyArray<string>
    /**
     * The handle that trades for an account `<venue>:<name>`: the paper one for `<venue>:paper`, else the venue's
     * own. Its market data is the venue's either way.
     */
    readonly trading: (account: string) => Venue | undefined
    /** Every trading handle: each venue, then its paper handle when it has one. */
    readonly handles: ReadonlyArray<Venue>
  }
>() {
  /** The gateway of these venues; `paper` holds the paper handles, one per venue at most, by the venue's id. */
  static fromVenues(venues: ReadonlyArray<Venue>, paper: ReadonlyArray<Venue> = []): Context.Tag.Service<VenueGateway> {
    const byId = new Map(venues.map((v) => [v.info.id, v]))
    const paperById = new Map(paper.map((v) => [v.info.id, v]))
    const accounts = venues.flatMap((v) => [
      ...v.accounts.map((name) => `${v.info.id}:${name}`),
      ...(paperById.has(v.info.id) ? [`${v.info.id}:${PAPER}`] : [])
    ])
    const handles = venues.flatMap((v) => {
      const p = paperById.get(v.info.id)
      return p === undefined ? [v] : [v, p]
    })
    const trading = (account: string) => {
      const parts = Id.parseAccountId(account)
      if (parts === undefined) return undefined
      return parts.name === PAPER ? paperById.get(parts.venue) : byId.get(parts.venue)
    }
    return { venues, venue: (id) => byId.get(id), accounts, trading, handles }
  }
}
