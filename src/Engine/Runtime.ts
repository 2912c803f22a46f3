/** A parent's runtime record, and the context the driver's parts share (the maps, the lock, the handles). */
import type { Context, Effect, Queue } from "effect"
import type * as F from "../Domain/Fixed.ts"
import type { MarketId } from "../Domain/Ids.ts"
import type { OrderStore } from "../Services/OrderStore.ts"
import type { VenueGateway } from "../Services/VenueGateway.ts"
import type { Desk } from "../Trading/Desk.ts"
import type { Journal } from "../Trading/Journal.ts"
import type { Band, ChildSpec, ParentSpec } from "./Core.ts"
import type { ParentsByMarket } from "./LiveMarkets.ts"
import type { Registry } from "./OrderType.ts"
import type { DueHeap, WakeIndex } from "./WakeIndex.ts"

/** What the engine holds: the registered types, and bucket orders (a `market` order on a bucket, over its members). */
export type EngineType = string

/** A market a parent over several markets trades, and the account it trades with there. */
export interface RuntimeMember {
  readonly marketId: MarketId
  readonly account: string
  readonly flip: boolean
}

export interface ChildRecord {
  readonly spec: ChildSpec
  orderId: string | null
  status: "placing" | "live" | "done"
  retries: number
  /**
   * Orders of this child its venue refused after they were written ahead (a remote venue's): each is kept, rejected,
   * under its client id, so the next attempt goes under a new one.
   */
  refused?: number | undefined
  /** What of the child's filled, cost and fee the parent's sums hold already. */
  seen?: { filled: F.Fixed; cost: F.Fixed; fee: F.Fixed } | undefined
}

/**
 * Everything about a parent the engine keeps; plain JSON, written whole on every change. Its size does not grow
 * with the parent's history: `children` holds only the live ones, and the amounts are kept as running sums.
 */
export interface Runtime {
  readonly id: string
  readonly type: EngineType
  readonly account: string
  readonly venue: string
  readonly marketId: MarketId
  /** A bucket order's members: a child of member i goes to its market on its account. */
  readonly members?: ReadonlyArray<RuntimeMember> | undefined
  readonly spec: ParentSpec
  readonly params: unknown
  readonly wireParams: Readonly<Record<string, unknown>>
  state: unknown
  /**
   * Children not yet finished, by number; a finished child leaves (its order stays in the store under the parent's
   * id). Never changed in place: each change makes a list of the exact length (a list grown in place keeps room for
   * more, and a parent holds its few children for long).
   */
  children: ReadonlyArray<ChildRecord>
  /** Sums over the children whose fills count (all of them for `fee`), and the last fill that counted. */
  filled: F.Fixed
  cost: F.Fixed
  fee: F.Fixed
  lastFill: { readonly price: F.Fixed; readonly amount: F.Fixed } | null
  /** Never changed in place, as `children`. */
  timers: ReadonlyArray<{ readonly timer: string; readonly at: number }>
  triggered: boolean
  ending: null | "closed" | "canceled" | "expired" | "rejected"
  detail: string
  done: boolean
  /** When its record last changed (absent in a state written before it was kept: the parent's creation). */
  updatedAt?: number
  readonly expiresAt: number | null
  readonly clientOrderId: string
  readonly book: string
  readonly trader: string
  readonly tags: Readonly<Record<string, unknown>>
  readonly notes: string
}

/** What the driver's parts share: built once with the engine's layer, passed to each part explicitly. */
export interface Driver {
  /** Every type the driver runs, by name, `bucket` included. */
  readonly registry: Registry
  readonly seed: number
  readonly desk: Context.Tag.Service<typeof Desk>
  readonly store: Context.Tag.Service<typeof OrderStore>
  readonly journal: Context.Tag.Service<typeof Journal>
  readonly gateway: Context.Tag.Service<typeof VenueGateway>
  /** The driver's one lock: every input and request runs under it. */
  readonly serialized: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Wakes the live timer fiber when an earlier expiry or timer was added. */
  readonly wake: Queue.Queue<void>
  /** The live parents by id. */
  readonly parents: ParentsByMarket
  /**
   * Where each live parent sleeps: market data reaches only the parents whose watched bands a view leaves
   * (`WakeIndex`), so an update costs O(log n + woken), not O(parents of the market).
   */
  readonly sleeping: WakeIndex
  readonly stats: { views: number; woken: number }
  readonly wokenByType: Partial<Record<EngineType, number>>
  /**
   * Every expiry and timer of a live parent, earliest first, so the next one is known without a scan: a min-heap
   * whose entries are checked against the parent when they reach the top (a timer that was reset, fired or dropped
   * with its parent is skipped then).
   */
  readonly due: DueHeap
  /** Lazy bands per parent: views there reach it only just before its next other input. */
  readonly lazyBands: Map<string, ReadonlyArray<Band>>
  /**
   * The last trade price of each market with live parents on a venue that streams its trades (`streamsTrades`): read
   * from the venue once, then kept from its `Trade` events, so a book change costs no request for it.
   */
  readonly lastTrades: Map<string, F.Fixed | null>
  /**
   * Parents whose state is to be written with their next child's write ahead (one transaction, before the venue is
   * asked) instead of on its own just before: a step whose first command to reach out is a placement. Any write of
   * the parent's state takes it off.
   */
  readonly stateAhead: Set<string>
  /** A parent's summary from its state as written (see `Summary.ts`): one function, handed with every write. */
  readonly summarize: (state: unknown) => string | null
}

export const kindOf = (d: Driver, rt: Runtime) => d.registry[rt.type]!

/** The markets a parent trades: its members' for a bucket order, else its own. */
/** The live child of this number. */
export const childOf = (rt: Runtime, n: number): ChildRecord | undefined => {
  for (const child of rt.children) if (child.spec.child === n) return child
  return undefined
}

export const marketsOf = (rt: Runtime): ReadonlyArray<string> => rt.members?.map((m) => m.marketId) ?? [rt.marketId]
