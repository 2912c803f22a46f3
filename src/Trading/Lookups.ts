/** Finding the desk's orders: in memory when held, else in the store; an engine parent with its children's ids. */
import { type Context, Effect } from "effect"
import { ApiError } from "../Domain/Errors.ts"
import { accountId, type Order } from "../Domain/Order.ts"
import type { OrderStore, StoredOrder, StoreReadsNow } from "../Services/OrderStore.ts"
import type { OrderFilter } from "./Desk.ts"
import type { Held } from "./Held.ts"

export interface Lookups {
  readonly memory: Held
  readonly store: Context.Tag.Service<typeof OrderStore>
}

/** The order a client id names on an account, held or stored, with the digest of its first body. */
export const byClientId = (l: Lookups, account: string, clientOrderId: string) => {
  const held = heldByClient(l, account, clientOrderId)
  return held !== undefined
    ? Effect.succeed(held)
    : Effect.map(l.store.orderByClientId(account, clientOrderId), (found) => namedBy(l, found))
}

/** The same, in plain code, on a store that answers at once (`OrderStore.now`). */
export const byClientIdNow = (l: Lookups, reads: StoreReadsNow, account: string, clientOrderId: string) =>
  heldByClient(l, account, clientOrderId) ?? namedBy(l, reads.orderByClientId(account, clientOrderId))

const heldByClient = (l: Lookups, account: string, clientOrderId: string) => {
  const held = l.memory.byClient(account, clientOrderId)
  return held === undefined ? undefined : { order: held, digest: l.memory.digestOf(held.id) }
}

const namedBy = (l: Lookups, found: StoredOrder | undefined) => {
  if (found === undefined) return undefined
  const record = found.record as Order & { readonly digest?: string }
  // Held but not named (its client id is its own id): the record held is the newer one.
  return { order: l.memory.lookup(found.id) ?? (record as Order), digest: record.digest }
}

/** The order of this id, held or stored; a 404 when there is none. */
export const orderOrNotFound = Effect.fnUntraced(function* (l: Lookups, id: string) {
  const order = l.memory.lookup(id) ?? ((yield* l.store.getOrder(id))?.record as Order | undefined)
  return order === undefined ? yield* Effect.fail(ApiError.notFound(`no order '${id}'`)) : order
})

/** Whether an order is one a filter asks for. */
export const matches = (o: Order, filter: OrderFilter) =>
  (filter.status === undefined || filter.status.includes(o.status)) &&
  (filter.venue === undefined || o.venue === filter.venue) &&
  (filter.marketId === undefined || o.marketId === filter.marketId) &&
  (filter.parentId === undefined || o.parentId === filter.parentId) &&
  (filter.book === undefined || o.book === filter.book) &&
  (filter.accounts === undefined || filter.accounts.includes(accountId(o.account)))

/**
 * An engine parent as clients read it: `info.children` comes from the store's parent index, oldest first (a working
 * parent's record is rendered from its holder as it is now, `info` included; see `Held.renderParents`).
 */
export const withChildIds = (l: Lookups, order: Order): Effect.Effect<Order> =>
  order.heldBy !== "engine"
    ? Effect.succeed(order)
    : Effect.map(l.store.childIds(order.id), (children) => {
        const { kind, state, detail, ...rest } = order.info
        return { ...order, info: { kind, state, detail, children, ...rest } }
      })
