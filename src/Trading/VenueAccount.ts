/**
 * What a venue states about an account, where it does (the optional `balance` and `positions` of a venue): it wins
 * over the desk's own ledger for `/trading/balances` and `/trading/positions` of that account. A venue that cannot
 * answer leaves the ledger's figures, with a warning in the log.
 */
import { Effect } from "effect"
import type * as F from "../Domain/Fixed.ts"
import type { Venue, VenueGateway } from "../Services/VenueGateway.ts"
import type { Position } from "./Ledger.ts"
import * as Id from "../Domain/Ids.ts"

type Gateway = { readonly trading: VenueGateway["Type"]["trading"] }

export interface BalanceRow {
  readonly account: string
  readonly cash: F.Fixed
  readonly locked: F.Fixed
  readonly available: F.Fixed
}

export interface PositionRow {
  readonly position: Position
  readonly mark: F.Fixed | null
  readonly source: "fair_value" | "mid" | null
}

/** The trading handle behind an account `<venue>:<name>`, if it serves that account. */
const venueOf = (gateway: Gateway, account: string): Venue | undefined => {
  const venue = gateway.trading(account)
  const name = Id.parseAccountId(account)?.name
  return venue !== undefined && name !== undefined && venue.accounts.includes(name) ? venue : undefined
}

/**
 * Balances with the venue's cash where it states it: `cash` and `available` are the venue's figure (what it lets the
 * account spend), `locked` the collateral of the desk's resting orders.
 */
export const withVenueBalances = (gateway: Gateway, rows: ReadonlyArray<BalanceRow>) =>
  Effect.forEach(rows, (row) => {
    const venue = venueOf(gateway, row.account)
    if (venue?.balance === undefined) return Effect.succeed(row)
    return venue.balance.pipe(
      Effect.map((b): BalanceRow => ({ ...row, cash: b.cash, available: b.cash })),
      Effect.catchAll((e) =>
        Effect.as(Effect.logWarning(`${row.account}: the venue's balance is unavailable (${e.reason})`), row)
      )
    )
  })

/**
 * Positions with the venue's contracts where it states them: a market the ledger holds takes the venue's count (0
 * when the venue lists it no more); one only the venue holds is added without an average price or a mark.
 */
export const withVenuePositions = (
  gateway: Gateway,
  accounts: ReadonlyArray<string>,
  rows: ReadonlyArray<PositionRow>
) =>
  Effect.gen(function* () {
    let out = [...rows]
    for (const account of accounts) {
      const venue = venueOf(gateway, account)
      if (venue?.positions === undefined) continue
      const stated = yield* venue.positions.pipe(
        Effect.catchAll((e) =>
          Effect.as(Effect.logWarning(`${account}: the venue's positions are unavailable (${e.reason})`), undefined)
        )
      )
      if (stated === undefined) continue
      const byMarket = new Map(stated.map((p) => [`${venue.info.id}:${p.nativeId}`, p]))
      out = out.map((row) => {
        if (row.position.account !== account) return row
        const venuePosition = byMarket.get(row.position.marketId)
        byMarket.delete(row.position.marketId)
        const contracts = venuePosition?.contracts ?? (0 as F.Fixed)
        return contracts === row.position.contracts ? row : { ...row, position: { ...row.position, contracts } }
      })
      for (const [marketId, p] of byMarket) {
        out.push({
          position: {
            account,
            marketId,
            contracts: p.contracts,
            averagePrice: null,
            realized: p.realizedPnl ?? (0 as F.Fixed),
            fees: p.feesPaid ?? (0 as F.Fixed)
          },
          mark: null,
          source: null
        })
      }
    }
    return out
  })
