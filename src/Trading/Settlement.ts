/** Settlement: a resolved market closes its positions at the payout, with realized P&L, cash and one event. */
import { Clock, Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Batch, JournalEntry } from "../Services/OrderStore.ts"
import { isPaperAccount, type Venue } from "../Services/VenueGateway.ts"
import { type Ledger, type Position, positionRow, redeemableAmount } from "./Ledger.ts"
import * as Id from "../Domain/Ids.ts"

/** The settlement of one position: what it closed, at what payout, and what it moved. */
export interface Settlement {
  readonly account: string
  readonly marketId: string
  /** The contracts it closed, netted on the YES leg (negative: NO contracts). */
  readonly contracts: F.Fixed
  readonly averagePrice: F.Fixed | null
  /** What one YES contract pays; a NO contract pays 1 − payout. */
  readonly payout: F.Fixed
  /** The P&L it booked: what the contracts paid less what they cost. */
  readonly realized: F.Fixed
  /** The cash it paid into the account (never negative). */
  readonly cashChange: F.Fixed
  readonly ts: number
  /** The position it leaves: no contracts, the realized P&L grown by `realized`, marked settled. */
  readonly position: Position
}

/**
 * The settlement of a position at `payout` per YES contract: YES contracts are paid `payout` each, NO contracts
 * `1 − payout` each; the P&L booked is that value less the position's cost basis (its average price times the
 * contracts; `1 − average` a NO contract). Undefined when there is nothing to settle: no contracts held (a position
 * flat or settled already), so a settlement reported twice books once. `redeems`: the venue pays only once the holder
 * redeems, so the settled mark carries what is to be redeemed (with what an earlier settlement left unredeemed).
 */
export const settlementOf = (
  position: Position,
  payout: F.Fixed,
  ts: number,
  redeems = false
): Settlement | undefined => {
  const q = position.contracts
  if (q === 0) return undefined
  const n = Math.abs(q) as F.Fixed
  const average = position.averagePrice ?? payout
  const paid = q > 0 ? payout : F.sub(F.ONE, payout)
  const cashChange = F.mul(paid, n)
  const realized = F.mul(q > 0 ? F.sub(payout, average) : F.sub(average, payout), n)
  const before = position.settled
  const owed = F.add(redeemableAmount(before), cashChange)
  const redemption = redeems ? { amount: owed, redeemedAt: null } : undefined
  return {
    account: position.account,
    marketId: position.marketId,
    contracts: q,
    averagePrice: position.averagePrice,
    payout,
    realized,
    cashChange,
    ts,
    position: {
      ...position,
      contracts: F.ZERO,
      averagePrice: null,
      realized: F.add(position.realized, realized),
      // A position opened again after its market settled (a late fill) settles what was added, on top of before.
      settled: {
        payout,
        contracts: before === undefined ? q : F.add(before.contracts, q),
        realized: before === undefined ? realized : F.add(before.realized, realized),
        ts,
        ...(redemption === undefined ? {} : { redemption })
      }
    }
  }
}

/** The setting that keeps the time of the last settlement booked on an account: where the next catch-up reads from. */
export const settledThroughKey = (account: string) => `settled_through:${account}`

/** The `position.settled` event of a settlement. */
export const settledEntry = (s: Settlement): JournalEntry => ({
  ts: s.ts,
  kind: "position.settled",
  key: s.marketId,
  payload: {
    account: s.account,
    market_id: s.marketId,
    contracts: F.format(s.contracts),
    side: s.contracts > 0 ? "yes" : "no",
    average_price: F.formatOrNull(s.averagePrice),
    payout: F.format(s.payout),
    realized_pnl: F.format(s.realized),
    cash_change: F.format(s.cashChange),
    ts: s.ts
  }
})

/**
 * What stores a settlement, in one write: the position row it leaves, the account's cash moved, the time of the last
 * settlement booked on the account, and its event.
 */
export const settlementBatch = (s: Settlement, cashMoved: F.Fixed): Batch => ({
  positions: [{ account: s.account, marketId: s.marketId, value: positionRow(s.position) }],
  balances: [{ account: s.account, cashMoved: F.format(cashMoved) }],
  settings: [{ key: settledThroughKey(s.account), value: s.ts, ts: s.ts }],
  entries: [settledEntry(s)]
})

/**
 * What settling needs of the desk: its ledger, its one way to write, the accounts it serves, and which of them hold
 * their payouts on a venue that pays only once redeemed (the trading handle offers `unredeemed`).
 */
export interface Settling {
  readonly ledger: Ledger
  readonly write: (batch: Batch) => Effect.Effect<void>
  readonly accounts: ReadonlyArray<string>
  readonly redeems?: (account: string) => boolean
}

/**
 * Settles one market on every account of a venue the desk serves (its paper account when `paper`, else its own): each
 * position held there closes at the payout, each in one write with its `position.settled`. Answers what it booked.
 */
export const settleMarket = Effect.fnUntraced(function* (
  d: Settling,
  paper: boolean,
  venue: string,
  nativeId: string,
  payout: F.Fixed,
  ts: number
) {
  const marketId = `${venue}:${nativeId}`
  const booked: Array<Settlement> = []
  for (const account of d.accounts) {
    if (Id.parseAccountId(account)?.venue !== venue || isPaperAccount(account) !== paper) continue
    const s = d.ledger.settle(account, marketId, payout, ts, !paper && d.redeems?.(account) === true)
    if (s === undefined) continue
    booked.push(s)
    yield* d.write(settlementBatch(s, d.ledger.cashMoved(account)))
  }
  return booked
})

/**
 * What one handle reports resolved since the last settlement booked on its accounts, oldest first: read outside the
 * desk's lock (a venue call), applied under it with `settleMarket`.
 */
export const resolutionsSince = Effect.fnUntraced(function* (
  handle: Venue,
  setting: (key: string) => Effect.Effect<unknown>
) {
  const venue = handle.info.id
  const accounts = handle.accounts.map((name) => `${venue}:${name}`)
  const paper = accounts.every(isPaperAccount)
  // A handle that trades for no account (a venue without credentials) has nothing to settle.
  if (handle.settlementsSince === undefined || accounts.length === 0) return { venue, paper, resolved: [] }
  let since = Number.POSITIVE_INFINITY
  for (const account of accounts) {
    const through = yield* setting(settledThroughKey(account))
    since = Math.min(since, typeof through === "number" ? through : 0)
  }
  const resolved = yield* handle.settlementsSince(Number.isFinite(since) ? since : 0).pipe(
    Effect.catchAll((e) =>
      Effect.as(
        // A venue that cannot say (no credentials behind a paper account) is not a warning.
        (e.kind === "not_supported" ? Effect.logDebug : Effect.logWarning)(
          `${venue}: settlements since the last one booked are unavailable (${e.reason})`
        ),
        []
      )
    )
  )
  return {
    venue,
    paper,
    resolved: [...resolved].sort((a, b) => a.ts - b.ts || (a.nativeId < b.nativeId ? -1 : 1))
  }
})

/** At start: every handle's resolutions since the last settlement booked, settled in order. */
export const catchUpSettlements = Effect.fnUntraced(function* (
  d: Settling,
  handles: ReadonlyArray<Venue>,
  setting: (key: string) => Effect.Effect<unknown>
) {
  for (const handle of handles) {
    const { venue, paper, resolved } = yield* resolutionsSince(handle, setting)
    for (const r of resolved) yield* settleMarket(d, paper, venue, r.nativeId, r.payout, r.ts)
  }
})

/** The `position.redeemed` event: the venue holds no more of a settled position's winning tokens. */
export const redeemedEntry = (p: Position, amount: F.Fixed, ts: number): JournalEntry => ({
  ts,
  kind: "position.redeemed",
  key: p.marketId,
  payload: { account: p.account, market_id: p.marketId, amount: F.format(amount), ts }
})

/**
 * Reads what a venue that pays on redemption (`unredeemed`) still holds of the positions settled there and waiting to be
 * redeemed, and marks redeemed each whose side the venue holds no more (the holder redeemed its tokens), one write
 * each with its `position.redeemed`. Tokens still held wait, whether or not the venue flags them redeemable yet.
 */
export const checkRedemptions = Effect.fnUntraced(function* (
  d: Settling,
  handle: Venue,
  serialized: <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
) {
  if (handle.unredeemed === undefined) return
  const venue = handle.info.id
  const accounts = new Set(handle.accounts.map((name) => `${venue}:${name}`))
  const waiting = d.ledger
    .allPositions()
    .filter((p) => accounts.has(p.account) && !isPaperAccount(p.account) && redeemableAmount(p.settled) > 0)
  if (waiting.length === 0) return
  const nativeIds = [...new Set(waiting.map((p) => p.marketId.slice(venue.length + 1)))]
  const read = yield* Effect.either(handle.unredeemed(nativeIds))
  if (read._tag === "Left") {
    return yield* Effect.logWarning(`${venue}: the tokens left to redeem are unavailable (${read.left.reason})`)
  }
  const held = new Set(read.right.filter((h) => h.size > 0).map((h) => `${venue}:${h.nativeId}\u0000${h.side}`))
  for (const p of waiting) {
    const side = p.settled!.contracts > 0 ? "yes" : "no"
    if (held.has(`${p.marketId}\u0000${side}`)) continue
    yield* serialized(
      Effect.gen(function* () {
        const amount = redeemableAmount(d.ledger.position(p.account, p.marketId).settled)
        const ts = yield* Clock.currentTimeMillis
        const after = d.ledger.redeem(p.account, p.marketId, ts)
        if (after === undefined) return
        yield* d.write({
          positions: [{ account: p.account, marketId: p.marketId, value: positionRow(after) }],
          entries: [redeemedEntry(after, amount, ts)]
        })
      })
    )
  }
})
