/** One capability declaration: a remote venue's `has` decides, for the type checker and at start, which members it has. */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  CAPABILITY_KEYS,
  capabilities,
  capabilityGaps,
  type RemoteVenue,
  type Venue,
  VenueError
} from "../../src/Services/VenueGateway.ts"
import { buildVenues } from "../../src/Venues/Venues.ts"

const none = () => Effect.fail(new VenueError({ venue: "far", kind: "not_supported", reason: "not here" }))

/** Every capability true but the account ones, which `account` sets. */
const hasWith = <A extends boolean>(account: A) =>
  capabilities({
    ...(Object.fromEntries(CAPABILITY_KEYS.map((k) => [k, true])) as Record<(typeof CAPABILITY_KEYS)[number], true>),
    fetch_balance: account,
    fetch_positions: account,
    fetch_orders: account,
    fetch_my_trades: account,
    cancel_all_orders: account
  })

/** What every venue has: data and orders (failing here), no account members. */
const core = {
  accounts: ["default"],
  markets: Effect.succeed([]),
  market: () => Effect.succeed(undefined),
  book: none,
  trades: () => Effect.succeed([]),
  placeOrder: none,
  cancelOrder: none,
  amendOrder: none,
  orderByClientId: () => Effect.succeed(undefined),
  subscribe: Effect.never
}

const info = { id: "far", name: "Far", book_model: "yes_book" }

const base = (remote: boolean, account: boolean): Venue => ({
  info: { ...info, has: hasWith(account) },
  ...(remote ? { remote: true } : {}),
  ...core
})

describe("capabilities", () => {
  it("a remote venue that claims an account capability without its member is named, member by member", () => {
    assert.deepStrictEqual(capabilityGaps(base(true, true)), [
      "far claims fetch_balance but has no balance",
      "far claims fetch_positions but has no positions",
      "far claims fetch_orders but has no openOrders",
      "far claims fetch_orders but has no orderById",
      "far claims fetch_my_trades but has no fillsSince",
      "far claims cancel_all_orders but has no cancelAll"
    ])
    // the desk's ledger is an in-process venue's record; a remote venue that claims none needs none
    assert.deepStrictEqual(capabilityGaps(base(false, true)), [])
    assert.deepStrictEqual(capabilityGaps(base(true, false)), [])
    const served = { ...base(true, true), balance: Effect.succeed({ cash: 0 as any, portfolioValue: null }) }
    assert.strictEqual(capabilityGaps(served).length, 5)
  })

  it.effect("a server does not start on a venue whose members do not match what it claims", () =>
    Effect.gen(function* () {
      const refused = yield* Effect.flip(buildVenues(["far"], { far: Effect.succeed(base(true, true)) }))
      assert.match(refused, /^venue far is not consistent: far claims fetch_balance but has no balance;/)
      const fine = yield* buildVenues(["far"], { far: Effect.succeed(base(false, true)) })
      assert.deepStrictEqual(
        fine.venues.map((v) => v.info.id),
        ["far"]
      )
    })
  )

  it("the type of a remote venue reads its declared `has`", () => {
    const claims = hasWith(true)
    const never = hasWith(false)
    const members = {
      balance: Effect.succeed({ cash: 0 as any, portfolioValue: null }),
      positions: Effect.succeed([]),
      openOrders: Effect.succeed([]),
      orderById: () => Effect.succeed(undefined),
      fillsSince: () => Effect.succeed([]),
      cancelAll: Effect.succeed(0)
    }
    const full: RemoteVenue<typeof claims> = { ...core, ...members, remote: true, info: { ...info, has: claims } }
    // @ts-expect-error: it claims fetch_balance, so it must have `balance`
    const missing: RemoteVenue<typeof claims> = { ...full, balance: undefined }
    const bare: RemoteVenue<typeof never> = { ...core, remote: true, info: { ...info, has: never } }
    // @ts-expect-error: it never claims fetch_balance, so it has no `balance`
    const extra: RemoteVenue<typeof never> = { ...bare, balance: members.balance }
    assert.deepStrictEqual([full, missing, bare, extra].map(capabilityGaps), [
      [],
      ["far claims fetch_balance but has no balance"],
      [],
      []
    ])
  })
})
