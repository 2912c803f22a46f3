/** Settlement: a resolved market closes its positions at the payout, with realized P&L, cash and one event. */
import { Effect } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Batch, JournalEntry } from "../Services/OrderStore.ts"
import { isPaperAccount, type Venue } from "../Services/VenueGateway.ts"
import { type Ledger, type Position, positionRow } from "./Ledger.ts"
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
 * flat or settled already), so a settlement reported twice books once.
 */
export const settlementOf = (position: Position, payout: F.Fixed, ts: number): Settlement | undefined => {
  const q = position.contracts
  if (q === 0) return undefined
  const n = Math.abs(q) as F.Fixed
  const average = position.averagePrice ?? payout
  const paid = q > 0 ? payout : F.sub(F.ONE, payout)
  const cashChange = F.mul(paid, n)
  const realized = F.mul(q > 0 ? F.sub(payout, average) : F.sub(average, payout), n)
  const before = position.settled
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
        ts
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

/** What settling needs of the desk: its ledger, its one way to write, and the accounts it serves. */
export interface Settling {
  readonly ledger: Ledger
  readonly write: (batch: Batch) => Effect.Effect<void>
  readonly accounts: ReadonlyArray<string>
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
    const s = d.ledger.settle(account, marketId, payout, ts)
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
