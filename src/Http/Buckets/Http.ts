/** Handlers of /trading/buckets: every member's account is checked, so a bucket is never wider than its caller. */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Option } from "effect"
import { makeLocalMatcher } from "../../Matching/Local.ts"
import { MatchingClient } from "../../Services/MatchingClient.ts"
import { VenueGateway } from "../../Services/VenueGateway.ts"
import { ApiError } from "../../Domain/Errors.ts"
import * as F from "../../Domain/Fixed.ts"
import { ascendingKey, checkPageRequest, pageOf } from "../../Domain/Page.ts"
import { allows, type Permission } from "../../Services/Auth.ts"
import { accountsOf, type BucketRecord, bucketNumber, Buckets } from "../../Trading/Buckets.ts"
import { Desk } from "../../Trading/Desk.ts"
import { Api } from "../Api.ts"
import { orderPage } from "../Desk/OrderPages.ts"
import { CurrentPrincipal, requireOnEvery } from "../Security.ts"

/** `requireOnEvery` for the caller of this request, as a check a service can run. */
const authorizeFor = (permission: Permission) =>
  Effect.map(
    CurrentPrincipal,
    (principal) => (accounts: ReadonlyArray<string>) =>
      requireOnEvery(permission, accounts).pipe(Effect.provideService(CurrentPrincipal, principal))
  )

const actorName = Effect.map(CurrentPrincipal, (p) => `${p.name} (${p.tokenId})`)

export const BucketsLive = HttpApiBuilder.group(Api, "buckets", (handlers) =>
  Effect.gen(function* () {
    const buckets = yield* Buckets
    const desk = yield* Desk
    const gateway = yield* VenueGateway
    // The server's matcher; without one given, the local matcher over these venues' catalogs.
    const given = yield* Effect.serviceOption(MatchingClient)
    let local: MatchingClient["Type"] | undefined
    const matcher = () => Option.getOrElse(given, () => (local ??= makeLocalMatcher(gateway).client))

    /** The bucket, once the caller may `view` every member. */
    const readable = (id: string) =>
      Effect.gen(function* () {
        const bucket = yield* buckets.get(id)
        yield* requireOnEvery("view", accountsOf(bucket))
        return bucket
      })

    return handlers
      .handle("createBucket", ({ payload }) =>
        Effect.gen(function* () {
          const bucket = yield* buckets.create(payload, yield* actorName, yield* authorizeFor("trade"))
          return HttpServerResponse.unsafeJson(bucket, { status: 201 })
        })
      )
      .handle("bucketFromMatch", ({ payload }) =>
        Effect.gen(function* () {
          const bucket = yield* buckets.fromMatch(
            payload.market_id,
            { name: payload.name, book: payload.book },
            yield* actorName,
            yield* authorizeFor("trade"),
            matcher()
          )
          return HttpServerResponse.unsafeJson(bucket, { status: 201 })
        })
      )
      .handle("listBuckets", ({ urlParams }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const request = checkPageRequest(urlParams, { status: urlParams.status, user: principal.name })
          if (request instanceof ApiError) return yield* Effect.fail(request)
          const visible = (yield* buckets.all(urlParams.status)).filter((b) =>
            accountsOf(b).every((account) => allows(principal, "view", account))
          )
          return pageOf(visible, (b: BucketRecord) => ascendingKey(bucketNumber(b.id), b.id), request)
        })
      )
      .handle("getBucket", ({ path }) => readable(path.id))
      .handle("archiveBucket", ({ path }) =>
        Effect.gen(function* () {
          return yield* buckets.archive(path.id, yield* actorName, yield* authorizeFor("trade"))
        })
      )
      .handle("bucketOrders", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const bucket = yield* readable(path.id)
          const filters = { marketId: `bucket:${bucket.id}` }
          const request = checkPageRequest(urlParams, filters)
          if (request instanceof ApiError) return yield* Effect.fail(request)
          return yield* orderPage(desk, filters, request)
        })
      )
      .handle("bucketPosition", ({ path }) =>
        Effect.gen(function* () {
          const bucket = yield* readable(path.id)
          // The ledger's rows alone: a bucket's position is in contracts, so no book is read for a mark.
          const held = yield* desk.ledgerPositions
          let contracts = F.ZERO
          let fees = F.ZERO
          const members = bucket.members.map((m) => {
            const position = held.find((p) => p.account === m.account && p.marketId === m.market_id)
            const own = position?.contracts ?? F.ZERO
            const inBucket = m.flip ? F.neg(own) : own
            contracts = F.add(contracts, inBucket)
            fees = F.add(fees, position?.fees ?? F.ZERO)
            return {
              market_id: m.market_id,
              account: m.account,
              flip: m.flip,
              contracts: F.format(own),
              bucket_contracts: F.format(inBucket),
              average_price: F.formatOrNull(position?.averagePrice ?? null),
              realized_pnl: F.format(position?.realized ?? F.ZERO),
              fees: F.format(position?.fees ?? F.ZERO)
            }
          })
          return { bucket_id: bucket.id, contracts: F.format(contracts), fees: F.format(fees), members }
        })
      )
  })
)
