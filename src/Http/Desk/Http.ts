/** Handlers of the trading desk routes: they check the permission on the account, then ask the desk. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { Engine } from "../../Engine/Engine.ts"
import { ApiError } from "../../Domain/Errors.ts"
import * as F from "../../Domain/Fixed.ts"
import { type OrderStatus, renderOrderWire, STATUSES, TERMINAL } from "../../Domain/Order.ts"
import { checkPageRequest, descendingKey, pageOf, pageOfFetched, parseDescendingKey } from "../../Domain/Page.ts"
import { isAccount, type Permission } from "../../Services/Auth.ts"
import { defaultAccount, isPaperAccount, VenueGateway, venueAccount } from "../../Services/VenueGateway.ts"
import { withVenueBalances, withVenuePositions } from "../../Trading/VenueAccount.ts"
import { Desk, type HaltState, renderFill } from "../../Trading/Desk.ts"
import { orderTypes, submitBucketOrder, submitOrder } from "../../Orders.ts"
import { unknownType } from "../../Domain/OrderRequest.ts"
import { accountsOf, bucketIdOf, Buckets } from "../../Trading/Buckets.ts"
import { type Position, redeemableAmount, unrealized } from "../../Trading/Ledger.ts"
import { traced } from "../../Telemetry/Telemetry.ts"
import { Api } from "../Api.ts"
import { badCursor, orderPage } from "./OrderPages.ts"
import { CurrentPrincipal, requireOnEvery, requirePermission } from "../Security.ts"
import * as Id from "../../Domain/Ids.ts"

export const DeskLive = HttpApiBuilder.group(Api, "desk", (handlers) =>
  Effect.gen(function* () {
    const desk = yield* Desk
    const engine = yield* Engine
    /** The types this server takes: the engine's are fixed once it is built. */
    const types = orderTypes(engine)
    const gateway = yield* VenueGateway
    const buckets = yield* Buckets

    /**
     * The account a request concerns: the one it names, else the only configured one that is not a paper account,
     * else `*`.
     */
    const accountOf = (given: string | undefined) => {
      if (given === undefined) return Effect.succeed(defaultAccount(gateway.accounts))
      if (!isAccount(given)) return Effect.fail(ApiError.field("account", "must be '*' or '<venue>:<name>'"))
      if (given !== "*" && !gateway.accounts.includes(given)) {
        const venue = Id.venueOf(given)
        return gateway.venue(venue) === undefined
          ? Effect.fail(
              ApiError.unknownVenue(
                venue,
                gateway.venues.map((v) => v.info.id)
              )
            )
          : Effect.fail(ApiError.field("account", `no account '${given}' is configured`))
      }
      return Effect.succeed(given)
    }

    /** Checks the permission and answers the accounts the request covers. */
    const scope = Effect.fnUntraced(function* (permission: Permission, given: string | undefined) {
      const account = yield* accountOf(given)
      yield* requirePermission(permission, account)
      if (account !== "*") return [account]
      // `*` named covers every account; a request naming none leaves the paper accounts out.
      return given === undefined ? gateway.accounts.filter((a) => !isPaperAccount(a)) : gateway.accounts
    })

    /** An order the caller may see through the accounts in scope; another account's order is a 404 like a missing one. */
    const orderIn = (id: string, accounts: ReadonlyArray<string>) =>
      Effect.flatMap(desk.get(id), (order) =>
        order === undefined || !accounts.includes(`${order.account.venue}:${order.account.name}`)
          ? Effect.fail(ApiError.notFound(`no order '${id}'`))
          : Effect.succeed(order)
      )

    const actorName = Effect.map(CurrentPrincipal, (p) => `${p.name} (${p.tokenId})`)

    const haltRecord = (halt: HaltState | undefined, canceled: number) => ({
      halted: halt !== undefined,
      reason: halt?.reason ?? null,
      scope: halt?.scope ?? null,
      policy: halt?.policy ?? null,
      at: halt?.at ?? null,
      by: halt?.by ?? null,
      canceled
    })

    return handlers
      .handle(
        "createOrder",
        Effect.fnUntraced(function* ({ payload }) {
          // A type the server holds no orders of is a body the schema does not take (422), before any permission.
          if (!types.includes(payload.type)) return yield* Effect.fail(unknownType(payload.type, types))
          const bucketId = bucketIdOf(payload.market_id)
          if (bucketId !== undefined) {
            // An order on a bucket needs `trade` on every member's account: the 403 names the first one missing.
            const bucket = yield* buckets.get(bucketId)
            yield* requireOnEvery("trade", accountsOf(bucket))
            const { order, created } = yield* submitBucketOrder(payload, bucket, yield* actorName).pipe(
              Effect.provideService(Desk, desk),
              Effect.provideService(Engine, engine),
              traced("engine.create", () => ({ "order.market_id": payload.market_id, "order.type": payload.type }))
            )
            return HttpServerResponse.unsafeJson(renderOrderWire(order), { status: created ? 201 : 200 })
          }
          const venue = Id.venuePrefix(payload.market_id) ?? ""
          const account = payload.account ?? venueAccount(gateway.venue(venue))
          const [target] = yield* scope("trade", account)
          const { order, created } = yield* submitOrder(payload, target!, yield* actorName).pipe(
            Effect.provideService(Desk, desk),
            Effect.provideService(Engine, engine),
            traced(engine.holds(payload.type) ? "engine.create" : "desk.place", () => ({
              account: target!,
              "order.market_id": payload.market_id,
              "order.type": payload.type,
              "order.side": payload.side
            }))
          )
          // renderOrderWire gives the wire form the Order schema would encode to, so it is sent as it is.
          return HttpServerResponse.unsafeJson(renderOrderWire(order), { status: created ? 201 : 200 })
        })
      )
      .handle("listOrders", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          const given = urlParams.status?.split(",").map((s) => s.trim())
          const unknown = given?.find((s) => s !== "all" && !(STATUSES as ReadonlyArray<string>).includes(s))
          if (unknown !== undefined) {
            return yield* Effect.fail(
              ApiError.field("status", `'${unknown}' is not 'all' or one of ${STATUSES.join(", ")}`)
            )
          }
          // By default the live orders, as trading APIs list them; `status=all` and a `parent_id` list every one.
          const statuses =
            given === undefined
              ? urlParams.parent_id === undefined
                ? LIVE_STATUSES
                : undefined
              : given.includes("all")
                ? undefined
                : given
          const filters = {
            status: statuses,
            venue: urlParams.venue,
            marketId: urlParams.market_id,
            parentId: urlParams.parent_id,
            book: urlParams.book,
            accounts
          }
          const request = checkPageRequest(urlParams, { ...filters, accounts: accounts.join(",") })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          // The store filters and cuts the page (keyset on creation time, then order number).
          return yield* orderPage(desk, filters, request)
        })
      )
      .handle("getOrder", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          return renderOrderWire(yield* orderIn(path.id, accounts))
        })
      )
      .handle("amendOrder", ({ path, urlParams, payload }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("trade", urlParams.account)
          const order = yield* orderIn(path.id, accounts)
          if (order.heldBy === "engine") {
            return yield* Effect.fail(
              ApiError.field("id", "an engine order cannot be amended; cancel it and place another")
            )
          }
          return renderOrderWire(
            yield* desk
              .amend(path.id, { price: payload.price, amount: payload.amount, expiresAt: payload.expires_at })
              .pipe(traced("desk.amend", () => ({ "order.id": path.id })))
          )
        })
      )
      .handle("cancelOrder", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("trade", urlParams.account)
          const order = yield* orderIn(path.id, accounts)
          const cancel = order.heldBy === "engine" ? engine.cancel(path.id) : desk.cancel(path.id)
          return renderOrderWire(yield* cancel.pipe(traced("desk.cancel", () => ({ "order.id": path.id }))))
        })
      )
      .handle("cancelAllOrders", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("trade", urlParams.account)
          const filter = { venue: urlParams.venue, marketId: urlParams.market_id, book: urlParams.book, accounts }
          return yield* Effect.gen(function* () {
            // Engine parents first, so none places a child while the plain orders are pulled.
            let parents = 0
            for (const order of yield* desk.list({ ...filter, parentId: undefined, status: LIVE_STATUSES })) {
              if (order.heldBy !== "engine" || TERMINAL.has(order.status) || order.status === "pending_cancel") continue
              const after = yield* engine.cancel(order.id).pipe(Effect.orElseSucceed(() => order))
              if (after.status === "canceled" || after.status === "pending_cancel") parents++
            }
            const canceled = yield* desk.cancelAll(filter)
            return { canceled: canceled + parents }
          }).pipe(traced("desk.cancel_all", () => ({ accounts: accounts.join(",") })))
        })
      )
      .handle("listFills", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          const filters = { since: urlParams.since, marketId: urlParams.market_id, orderId: urlParams.order_id }
          const request = checkPageRequest(urlParams, { ...filters, accounts: accounts.join(",") })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          // Newest first, paged in the store; the journal seq breaks ties, so appended fills never shift a page.
          const cursor = request.after === undefined ? undefined : parseDescendingKey(request.after)
          if (request.after !== undefined && cursor === undefined) return yield* Effect.fail(badCursor)
          const after = cursor === undefined ? undefined : { ts: cursor.n, seq: 1e15 - Number(cursor.tie) }
          const rows = yield* desk.fillPage({ ...filters, accounts }, { after, limit: request.limit + 1 })
          return pageOfFetched(
            rows,
            (r) => descendingKey(r.fill.ts, String(1e15 - r.seq)),
            request,
            (r) => renderFill(r.fill)
          )
        })
      )
      .handle("positions", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          const request = checkPageRequest(urlParams, { accounts: accounts.join(",") })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const held = yield* withVenuePositions(gateway, accounts, yield* desk.positions(accounts))
          const rows = held.map(({ position: p, mark, source }) => {
            const u = unrealized(p, mark)
            return {
              account: p.account,
              market_id: p.marketId,
              contracts: F.format(p.contracts),
              side: p.contracts > 0 ? ("yes" as const) : p.contracts < 0 ? ("no" as const) : null,
              average_price: F.formatOrNull(p.averagePrice),
              mark: F.formatOrNull(mark),
              mark_source: source,
              realized_pnl: F.format(p.realized),
              unrealized_pnl: F.formatOrNull(u),
              fees: F.format(p.fees),
              settled:
                p.settled === undefined
                  ? null
                  : {
                      payout: F.format(p.settled.payout),
                      contracts: F.format(p.settled.contracts),
                      realized_pnl: F.format(p.settled.realized),
                      ts: p.settled.ts,
                      redeemable: redeemableAmount(p.settled) > 0,
                      redeemable_amount: F.format(redeemableAmount(p.settled)),
                      redeemed_at: p.settled.redemption?.redeemedAt ?? null
                    }
            }
          })
          return pageOf(rows, (r) => `${r.account}\u0000${r.market_id}`, request)
        })
      )
      .handle("balances", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          const rows = (yield* withVenueBalances(gateway, yield* desk.balances(accounts))).map((b) => ({
            account: b.account,
            currency: "USD",
            cash: F.format(b.cash),
            locked: F.format(b.locked),
            available: F.format(b.available)
          }))
          return { data: rows, next_cursor: null, count: rows.length }
        })
      )
      .handle("pnl", ({ urlParams }) =>
        Effect.gen(function* () {
          const accounts = yield* scope("view", urlParams.account)
          const level = urlParams.level ?? "account"
          const positions = yield* desk.positions(accounts)
          const filledUnder = yield* desk.fillBooks(accounts)
          // The book level groups each market's position by the book labels of its fills, in proportion to nothing:
          // realized and fees follow the fills' books; unrealized goes to the market's single book when it has one.
          const groups = new Map<
            string,
            { realized: F.Fixed; unrealized: F.Fixed | null; fees: F.Fixed; settled: F.Fixed }
          >()
          const add = (key: string, p: Position, u: F.Fixed | null) => {
            const g = groups.get(key) ?? { realized: F.ZERO, unrealized: F.ZERO, fees: F.ZERO, settled: F.ZERO }
            groups.set(key, {
              realized: F.add(g.realized, p.realized),
              unrealized: g.unrealized === null || u === null ? null : F.add(g.unrealized, u),
              fees: F.add(g.fees, p.fees),
              settled: F.add(g.settled, p.settled?.realized ?? F.ZERO)
            })
          }
          for (const { position: p, mark } of positions) {
            const u = unrealized(p, mark)
            if (level === "account") add(p.account, p, u)
            else if (level === "market") add(p.marketId, p, u)
            else {
              const books = [
                ...new Set(
                  filledUnder.filter((f) => f.marketId === p.marketId && f.account === p.account).map((f) => f.book)
                )
              ]
              add(books.length === 1 ? books[0]! : books.join("+"), p, u)
            }
          }
          const rows = [...groups.entries()]
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([key, g]) => ({
              level,
              key,
              realized: F.format(g.realized),
              unrealized: F.formatOrNull(g.unrealized),
              fees: F.format(g.fees),
              net: g.unrealized === null ? null : F.format(F.sub(F.add(g.realized, g.unrealized), g.fees)),
              settled: F.format(g.settled)
            }))
          return { data: rows, next_cursor: null, count: rows.length }
        })
      )
      .handle("getFairValues", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* scope("view", urlParams.account)
          return renderFairValues(yield* desk.fairValues)
        })
      )
      .handle("putFairValues", ({ urlParams, payload }) =>
        Effect.gen(function* () {
          yield* scope("trade", urlParams.account)
          return renderFairValues(yield* desk.setFairValues(payload.values, yield* actorName))
        })
      )
      .handle("getRisk", ({ urlParams }) => Effect.zipRight(scope("view", urlParams.account), desk.risk))
      .handle("putRisk", ({ urlParams, payload }) =>
        Effect.gen(function* () {
          yield* scope("manage_credentials", urlParams.account)
          return yield* desk.setRisk(payload, yield* actorName)
        })
      )
      .handle("halt", ({ urlParams, payload }) =>
        Effect.gen(function* () {
          yield* scope("trade", urlParams.account)
          const { halt, canceled } = yield* desk
            .halt(payload, yield* actorName)
            .pipe(traced("desk.halt", () => ({ "halt.scope": payload.scope, "halt.policy": payload.policy })))
          return haltRecord(halt, canceled)
        })
      )
      .handle("resume", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* scope("trade", urlParams.account)
          yield* desk.resume(yield* actorName)
          return haltRecord(undefined, 0)
        })
      )
  })
)

/** The statuses of an order that is not done: what `GET /trading/orders` lists when no status is asked for. */
export const LIVE_STATUSES: ReadonlyArray<OrderStatus> = STATUSES.filter((s) => !TERMINAL.has(s))

const renderFairValues = (values: Record<string, { value: F.Fixed; updated_at: number }>) => ({
  values: Object.fromEntries(
    Object.entries(values).map(([k, v]) => [k, { value: F.format(v.value), updated_at: v.updated_at }])
  )
})

export type { OrderStatus }
