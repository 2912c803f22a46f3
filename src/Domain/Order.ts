/** Orders as the server keeps them (exact amounts) and the Order record the API shows (decimal strings). */
import * as F from "./Fixed.ts"
import { type AccountId, type MarketId, makeAccountId, parseAccountId } from "./Ids.ts"
import type { Side } from "./Market.ts"
import { createHash } from "node:crypto"

export const PLAIN_TYPES = ["limit", "market"] as const
export type PlainType = (typeof PLAIN_TYPES)[number]
/** `limit`, `market`, or the name of a type the engine holds (its registration names it). */
export type OrderType = string

export const STATUSES = [
  "pending",
  "open",
  "pending_cancel",
  "closed",
  "canceled",
  "rejected",
  "expired",
  "waiting",
  "triggered"
] as const
export type OrderStatus = (typeof STATUSES)[number]
export const TERMINAL: ReadonlySet<OrderStatus> = new Set(["closed", "canceled", "rejected", "expired"])
export const LIVE: ReadonlyArray<OrderStatus> = ["pending", "open", "pending_cancel", "waiting", "triggered"]

export type TimeInForce = "gtc" | "gtd" | "ioc" | "fok"

export interface AccountRef {
  readonly venue: string
  readonly name: string
  readonly subaccount: string | null
}

export interface Order {
  readonly id: string
  readonly clientOrderId: string
  readonly venue: string
  readonly account: AccountRef
  /** `<venue>:<native_id>`. */
  readonly marketId: MarketId
  readonly side: Side
  readonly type: OrderType
  readonly timeInForce: TimeInForce
  readonly status: OrderStatus
  readonly heldBy: "venue" | "engine"
  readonly price: F.Fixed | null
  readonly stopPrice: F.Fixed | null
  readonly amount: F.Fixed
  readonly filled: F.Fixed
  /** Σ price × amount of the fills. */
  readonly cost: F.Fixed
  readonly fee: F.Fixed
  readonly lastFillPrice: F.Fixed | null
  readonly lastFillAmount: F.Fixed | null
  readonly postOnly: boolean
  readonly reduceOnly: boolean
  readonly expiresAt: number | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly parentId: string | null
  readonly queuePriorityPreserved: boolean | null
  readonly book: string
  readonly trader: string
  readonly tags: Readonly<Record<string, unknown>>
  readonly notes: string
  readonly info: Readonly<Record<string, unknown>>
  /** The venue's id, once it answered. */
  readonly venueOrderId: string | null
}

export const accountId = (account: AccountRef): AccountId => makeAccountId(account.venue, account.name)

const accountRefs = new Map<string, AccountRef>()
/** The account named `<venue>:<name>`: one shared object per account, not one per order. */
export const accountRef = (id: string): AccountRef => {
  let ref = accountRefs.get(id)
  if (ref === undefined) {
    const parts = parseAccountId(id)
    ref = Object.freeze({ venue: parts?.venue ?? "", name: parts?.name ?? id, subaccount: null })
    accountRefs.set(id, ref)
  }
  return ref
}

/** The tags of an order given none: one shared empty object. */
export const NO_TAGS: Readonly<Record<string, unknown>> = Object.freeze({})

/** What the ids of engine parents start with (`mo_000013`); every other order's id starts with `o_`. */
export const PARENT_ID_PREFIX = "mo_"

/** The counter inside an order id (`o_000012`, `mo_000013`): orders are numbered in the order they were made. */
export const orderNumber = (id: string): number => Number(id.slice(id.indexOf("_") + 1)) || 0

export const remainingOf = (order: Order): F.Fixed => F.sub(order.amount, order.filled)

/** The name of every venue's paper account (`<venue>:paper`), whose orders never leave the server. */
export const PAPER_NAME = "paper"

/** The interface's Order record: every field present, decimals as strings, ms timestamps. */
export const renderOrder = (o: Order) => ({
  id: o.id,
  client_order_id: o.clientOrderId,
  venue: o.venue,
  account: o.account,
  market_id: o.marketId,
  side: o.side,
  type: o.type,
  time_in_force: o.timeInForce,
  status: o.status,
  held_by: o.heldBy,
  price: F.formatOrNull(o.price),
  stop_price: F.formatOrNull(o.stopPrice),
  amount: F.format(o.amount),
  filled: F.format(o.filled),
  remaining: F.format(remainingOf(o)),
  average_price: o.filled === 0 ? null : F.format(F.div(o.cost, o.filled)),
  cost: o.filled === 0 ? null : F.format(o.cost),
  fee: o.filled === 0 ? null : F.format(o.fee),
  fee_currency: "USD",
  last_fill_price: F.formatOrNull(o.lastFillPrice),
  last_fill_amount: F.formatOrNull(o.lastFillAmount),
  post_only: o.postOnly,
  reduce_only: o.reduceOnly,
  expires_at: o.expiresAt,
  created_at: o.createdAt,
  updated_at: o.updatedAt,
  parent_id: o.parentId,
  queue_priority_preserved: o.queuePriorityPreserved,
  book: o.book,
  trader: o.trader,
  tags: o.tags,
  // An order of a paper account says so wherever it is read.
  info: o.account.name === PAPER_NAME ? { ...o.info, paper: true } : o.info
})
export type OrderRecord = ReturnType<typeof renderOrder>

/**
 * An order as the API answers it: its record, with the venue's own id for it in `info.venue_order_id` once known (the
 * journal's records leave it out, so an event log reads the same whatever ids a venue gives).
 */
export const renderOrderWire = (o: Order) => {
  const record = renderOrder(o)
  return o.venueOrderId === null ? record : { ...record, info: { ...record.info, venue_order_id: o.venueOrderId } }
}

/** JSON with every object's keys in order, so two bodies that differ only in the order of their keys read the same. */
const canonical = (value: unknown): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (Array.isArray(value)) return value.map(canonical)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key])
  return out
}

/**
 * What a request for an order asked for, less its client order id: a retry with the same client id is the same order
 * only when this matches, whatever the order of its keys. Kept as a sha256 (43 characters) rather than the request.
 */
export const requestDigest = (input: object): string =>
  createHash("sha256")
    .update(JSON.stringify(canonical({ ...input, client_order_id: undefined })))
    .digest("base64url")
