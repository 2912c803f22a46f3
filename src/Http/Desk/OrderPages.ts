/** One page of the desk's orders, newest first, cut in the store with a keyset cursor (creation time, order number). */
import { type Context, Effect } from "effect"
import { ApiError } from "../../Domain/Errors.ts"
import { orderNumber, renderOrderWire } from "../../Domain/Order.ts"
import { descendingKey, pageOfFetched, parseDescendingKey } from "../../Domain/Page.ts"
import type { Desk, OrderFilter } from "../../Trading/Desk.ts"

export const badCursor = ApiError.field("cursor", "not a cursor this server issued")

/** The page `request` (from `checkPageRequest`) asks for of the orders `filter` matches; one more read tells of more. */
export const orderPage = (
  desk: Context.Tag.Service<typeof Desk>,
  filter: OrderFilter,
  request: { readonly limit: number; readonly after: string | undefined; readonly digest: string }
) =>
  Effect.gen(function* () {
    const cursor = request.after === undefined ? undefined : parseDescendingKey(request.after)
    if (request.after !== undefined && cursor === undefined) return yield* Effect.fail(badCursor)
    const after = cursor === undefined ? undefined : { createdAt: cursor.n, num: 1e15 - Number(cursor.tie) }
    const orders = yield* desk.page(filter, { after, limit: request.limit + 1 })
    return pageOfFetched(
      orders,
      (o) => descendingKey(o.createdAt, String(1e15 - orderNumber(o.id))),
      request,
      renderOrderWire
    )
  })
