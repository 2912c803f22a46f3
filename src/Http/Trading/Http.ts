/** Handlers of /trading: who the caller is, accounts, status, tokens, grants and the audit log. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Clock, Effect } from "effect"
import { ApiError } from "../../Domain/Errors.ts"
import { checkPageRequest, encodeCursor, pageOf } from "../../Domain/Page.ts"
import { Auth, isAccount, PERMISSIONS, type Permission } from "../../Services/Auth.ts"
import { OrderStore } from "../../Services/OrderStore.ts"
import { Desk } from "../../Trading/Desk.ts"
import { defaultAccount, VenueGateway } from "../../Services/VenueGateway.ts"
import { Api } from "../Api.ts"
import type { HeartbeatRecord } from "./Api.ts"
import { CurrentPrincipal, requestInfo, requirePermission } from "../Security.ts"
import * as Id from "../../Domain/Ids.ts"

export const TradingLive = HttpApiBuilder.group(Api, "trading", (handlers) =>
  Effect.gen(function* () {
    const auth = yield* Auth
    const gateway = yield* VenueGateway
    const store = yield* OrderStore
    const desk = yield* Desk

    /**
     * The account a request concerns: the one it names, else the server's only account that is not a paper account,
     * else `*`.
     */
    const accountOf = (given: string | undefined) => {
      if (given === undefined) return Effect.succeed(defaultAccount(gateway.accounts))
      return checkAccount(given)
    }

    const checkAccount = (account: string) => {
      if (!isAccount(account)) {
        return Effect.fail(ApiError.field("account", "must be '*' or '<venue>:<name>'"))
      }
      if (account === "*") return Effect.succeed(account)
      const venue = Id.venueOf(account)
      if (gateway.venue(venue) === undefined) {
        return Effect.fail(
          ApiError.unknownVenue(
            venue,
            gateway.venues.map((v) => v.info.id)
          )
        )
      }
      return Effect.succeed(account)
    }

    return handlers
      .handle("me", () =>
        Effect.map(CurrentPrincipal, (principal) => {
          const byAccount = new Map<string, Array<Permission>>()
          for (const grant of principal.grants) {
            const list = byAccount.get(grant.account) ?? []
            list.push(grant.permission)
            byAccount.set(grant.account, list)
          }
          return {
            user_id: principal.userId,
            name: principal.name,
            token_id: principal.tokenId,
            accounts: [...byAccount].map(([account, permissions]) => ({
              account,
              permissions: PERMISSIONS.filter((p) => permissions.includes(p))
            }))
          }
        })
      )
      .handle("accounts", ({ urlParams }) =>
        Effect.gen(function* () {
          const principal = yield* requirePermission("view", yield* accountOf(urlParams.account))
          const rows = gateway.accounts
            .filter(
              (account) => urlParams.account === undefined || urlParams.account === "*" || account === urlParams.account
            )
            .map((account) => ({
              account,
              ...Id.parseAccountId(account)!,
              permissions: PERMISSIONS.filter((p) =>
                principal.grants.some((g) => g.permission === p && (g.account === "*" || g.account === account))
              )
            }))
            .filter((row) => row.permissions.includes("view"))
          return { data: rows, next_cursor: null, count: rows.length }
        })
      )
      .handle("status", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* requirePermission("view", yield* accountOf(urlParams.account))
          const [openOrders, parents, seq, time, halt] = yield* Effect.all([
            store.countOrders(["pending", "open", "pending_cancel"]),
            store.countLiveParents,
            store.lastSeq,
            Clock.currentTimeMillis,
            desk.haltState
          ])
          const heartbeats: Record<string, typeof HeartbeatRecord.Type> = {}
          for (const v of gateway.venues) {
            if (v.heartbeat === undefined) continue
            const b = yield* v.heartbeat
            heartbeats[v.info.id] = {
              active: b.active,
              state: b.ok ? "ok" : "failing",
              last_ok_at: b.lastOkAt,
              last_error: b.lastError,
              last_error_at: b.lastErrorAt
            }
          }
          const states = yield* desk.venueStates
          const venue_state = Object.fromEntries(
            Object.entries(states).map(([id, v]) => [
              id,
              {
                ...v,
                streams: v.streams.map((st) => ({
                  channel: st.channel,
                  state: st.state,
                  last_message_at: st.lastMessageAt,
                  last_message_age_ms: st.lastMessageAt === null ? null : Math.max(0, time - st.lastMessageAt),
                  reconnects: st.reconnects
                }))
              }
            ])
          )
          return {
            running: true,
            halted: halt !== undefined,
            open_orders: openOrders,
            waiting_parents: parents,
            journal_seq: seq,
            venues: gateway.venues.map((v) => v.info.id),
            heartbeats,
            venue_state,
            time
          }
        })
      )
      .handle("issueKey", ({ payload }) =>
        Effect.gen(function* () {
          const principal = yield* requirePermission("manage_credentials", "*")
          const issued = yield* auth.issueToken(principal, yield* requestInfo, payload)
          return { ...issued.record, token: issued.token }
        })
      )
      .handle("listKeys", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* requirePermission("manage_credentials", "*")
          const request = checkPageRequest(urlParams, {})
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const tokens = yield* auth.listTokens
          return pageOf(tokens, (t) => `${String(t.created_at).padStart(16, "0")}|${t.id}`, request)
        })
      )
      .handle("revokeKey", ({ path }) =>
        Effect.gen(function* () {
          const principal = yield* requirePermission("manage_credentials", "*")
          return yield* auth.revokeToken(principal, yield* requestInfo, path.id)
        })
      )
      .handle("listGrants", ({ urlParams }) =>
        Effect.gen(function* () {
          const account = urlParams.account === undefined ? "*" : yield* checkAccount(urlParams.account)
          yield* requirePermission("manage_members", account)
          const request = checkPageRequest(urlParams, { user: urlParams.user, account: urlParams.account })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const grants = (yield* auth.listGrants).filter(
            (g) =>
              (urlParams.user === undefined || g.user === urlParams.user) &&
              (urlParams.account === undefined || g.account === urlParams.account)
          )
          return pageOf(grants, (g) => `${g.user}\u0000${g.account}\u0000${g.permission}`, request)
        })
      )
      .handle("addGrant", ({ payload }) =>
        Effect.gen(function* () {
          yield* checkAccount(payload.account)
          const principal = yield* requirePermission("manage_members", payload.account)
          const { grant, created } = yield* auth.addGrant(principal, yield* requestInfo, payload)
          return created ? grant : HttpServerResponse.unsafeJson(grant, { status: 200 })
        })
      )
      .handle("removeGrant", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* checkAccount(urlParams.account)
          const principal = yield* requirePermission("manage_members", urlParams.account)
          return yield* auth.removeGrant(principal, yield* requestInfo, urlParams)
        })
      )
      .handle("audit", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* requirePermission("manage_members", "*")
          const request = checkPageRequest(urlParams, {})
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const before = request.after === undefined ? undefined : Number(request.after)
          const rows = yield* auth.audit(before, request.limit + 1)
          const data = rows.slice(0, request.limit)
          const last = data[data.length - 1]
          return {
            data,
            next_cursor:
              rows.length > request.limit && last !== undefined
                ? encodeCursor({ k: String(last.id), f: request.digest })
                : null,
            count: data.length
          }
        })
      )
  })
)
