/**
 * Buckets: one proposition listed on several venues. A member is a market and the account that trades it; `flip`
 * says the member's YES is the bucket's NO. Buckets are archived, never deleted: their orders keep naming them.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { ApiError, type FieldError } from "../Domain/Errors.ts"
import type { Market } from "../Domain/Market.ts"
import { matchedOnly, type MatchingClient, verdictOf } from "../Services/MatchingClient.ts"
import { OrderStore, type StoredBucket } from "../Services/OrderStore.ts"
import { VenueGateway, venueAccount } from "../Services/VenueGateway.ts"
import { Desk } from "./Desk.ts"
import { Journal } from "./Journal.ts"
import * as Id from "../Domain/Ids.ts"

/** The venue part of a bucket's market id (`bucket:<id>`). */
export const BUCKET_VENUE = "bucket"
/** The bucket a market id names (`bucket:<id>`), if it names one. */
export const bucketIdOf = (marketId: string): string | undefined => {
  const parts = Id.parseMarketId(marketId)
  return parts?.venue === BUCKET_VENUE ? parts.native : undefined
}
export const MAX_MEMBERS = 16
const MAX_NAME = 200

export interface BucketMember {
  readonly market_id: string
  readonly flip: boolean
  /** The account that trades this member: `<venue>:<name>`. */
  readonly account: string
  /** The member market's title when the bucket was made. */
  readonly title: string
}

export interface BucketRecord {
  readonly id: string
  readonly name: string
  readonly book: string
  readonly status: "active" | "archived"
  readonly members: ReadonlyArray<BucketMember>
  readonly created_at: number
  readonly created_by: string
  readonly archived_at: number | null
  readonly archived_by: string | null
}

export interface BucketInput {
  readonly name: string
  readonly book?: string | undefined
  readonly members: ReadonlyArray<{
    readonly market_id: string
    readonly flip: boolean
    readonly account?: string | undefined
  }>
}

/** Checks that the caller may act on these accounts (the route checks `trade` or `view` on each). */
export type Authorize = (accounts: ReadonlyArray<string>) => Effect.Effect<void, ApiError>

/** The accounts that trade a bucket's members, each once. */
export const accountsOf = (bucket: Pick<BucketRecord, "members">): ReadonlyArray<string> => [
  ...new Set(bucket.members.map((m) => m.account))
]

export const bucketNumber = (id: string): number => Number(id.slice(2)) || 0

export class Buckets extends Context.Tag("crossbook/Buckets")<
  Buckets,
  {
    readonly create: (input: BucketInput, actor: string, authorize: Authorize) => Effect.Effect<BucketRecord, ApiError>
    /** A bucket of a market and its match on another venue, the side map giving the member's flip. */
    readonly fromMatch: (
      marketId: string,
      input: { readonly name?: string | undefined; readonly book?: string | undefined },
      actor: string,
      authorize: Authorize,
      matching: Context.Tag.Service<typeof MatchingClient>
    ) => Effect.Effect<BucketRecord, ApiError>
    readonly get: (id: string) => Effect.Effect<BucketRecord, ApiError>
    /** Every bucket with this status, oldest first (a server holds few: a list pages them after the caller's reads). */
    readonly all: (status: "active" | "archived" | "all") => Effect.Effect<ReadonlyArray<BucketRecord>>
    readonly archive: (id: string, actor: string, authorize: Authorize) => Effect.Effect<BucketRecord, ApiError>
  }
>() {
  static readonly layer = Layer.effect(
    Buckets,
    Effect.gen(function* () {
      const store = yield* OrderStore
      const journal = yield* Journal
      const desk = yield* Desk
      const gateway = yield* VenueGateway
      const lock = yield* Effect.makeSemaphore(1)

      const checkMembers = (input: BucketInput) =>
        Effect.gen(function* () {
          const errors: Array<FieldError> = []
          const name = input.name.trim()
          if (name === "" || name.length > MAX_NAME) {
            errors.push({ field: "name", message: `must be 1 to ${MAX_NAME} characters` })
          }
          if (input.members.length < 2 || input.members.length > MAX_MEMBERS) {
            errors.push({ field: "members", message: `a bucket has 2 to ${MAX_MEMBERS} members` })
          }
          const members: Array<BucketMember> = []
          const seen = new Set<string>()
          for (const [i, m] of input.members.entries()) {
            const field = `members[${i}]`
            if (seen.has(m.market_id)) {
              errors.push({ field: `${field}.market_id`, message: `${m.market_id} is a member already` })
              continue
            }
            seen.add(m.market_id)
            const resolved = yield* Effect.either(desk.resolveMarket(m.market_id))
            if (resolved._tag === "Left") {
              if (resolved.left.status >= 500) return yield* Effect.fail(resolved.left)
              errors.push({ field: `${field}.market_id`, message: resolved.left.message })
              continue
            }
            const venueId = resolved.right.venue.info.id
            const account = m.account ?? venueAccount(resolved.right.venue)
            if (account === undefined) {
              errors.push({ field: `${field}.account`, message: `venue ${venueId} has several accounts: name one` })
              continue
            }
            if (Id.parseAccountId(account)?.venue !== venueId || !gateway.accounts.includes(account)) {
              errors.push({ field: `${field}.account`, message: `no account '${account}' trades on ${venueId}` })
              continue
            }
            members.push({ market_id: m.market_id, flip: m.flip, account, title: resolved.right.market.title })
          }
          if (errors.length > 0) return yield* Effect.fail(ApiError.validation(errors))
          return { name, members }
        })

      const stored = (record: BucketRecord): StoredBucket => ({
        id: record.id,
        num: bucketNumber(record.id),
        status: record.status,
        createdAt: record.created_at,
        record
      })

      const create = (input: BucketInput, actor: string, authorize: Authorize) =>
        lock.withPermits(1)(
          Effect.gen(function* () {
            const { name, members } = yield* checkMembers(input)
            yield* authorize(accountsOf({ members }))
            const num = (yield* store.lastBucketNumber) + 1
            const now = yield* Clock.currentTimeMillis
            const record: BucketRecord = {
              id: `b_${String(num).padStart(6, "0")}`,
              name,
              book: input.book ?? "",
              status: "active",
              members,
              created_at: now,
              created_by: actor,
              archived_at: null,
              archived_by: null
            }
            yield* journal.commit({
              buckets: [stored(record)],
              entries: [{ ts: now, kind: "bucket.created", key: record.id, payload: record }]
            })
            return record
          })
        )

      const get = (id: string) =>
        Effect.flatMap(store.getBucket(id), (row) =>
          row === undefined
            ? Effect.fail(ApiError.notFound(`no bucket '${id}'`))
            : Effect.succeed(row.record as BucketRecord)
        )

      return {
        create,
        fromMatch: (marketId, input, actor, authorize, matching) =>
          Effect.gen(function* () {
            const { market } = yield* desk.resolveMarket(marketId)
            const found = yield* matching.match(marketId).pipe(
              Effect.mapError(
                (e) =>
                  new ApiError({
                    status: e.invalid === true ? 400 : 502,
                    code: e.invalid === true ? "validation_error" : "venue_error",
                    message: `matching: ${e.reason}`,
                    details: { venue: null, retryable: e.retryable }
                  })
              )
            )
            // a bucket is built on a `matched` verdict only: an uncertain candidate is for a person to judge
            const matched = matchedOnly(found)
            if (matched === null) {
              const doubts = found !== undefined && verdictOf(found) === "uncertain" ? (found.reasons ?? []) : []
              return yield* Effect.fail(
                ApiError.notFound(
                  found !== undefined && verdictOf(found) === "uncertain"
                    ? `the match of ${marketId} is uncertain (${found.candidate?.id ?? "no candidate"}: ${doubts.map((d) => d.reason).join("; ") || "unsure"}); a bucket needs a matched verdict`
                    : `no market on another venue asks what ${marketId} asks`
                )
              )
            }
            return yield* create(
              {
                name: input.name ?? titleOf(market),
                book: input.book,
                members: [
                  { market_id: marketId, flip: false },
                  // The matched market's YES is our NO when the side map sends our yes to its no.
                  { market_id: matched.id, flip: matched.side_map.yes === "no" }
                ]
              },
              actor,
              authorize
            )
          }),
        get,
        all: (status) =>
          Effect.gen(function* () {
            const out: Array<BucketRecord> = []
            for (let after = 0; ;) {
              const rows = yield* store.listBuckets({
                status: status === "all" ? undefined : status,
                after,
                limit: 1000
              })
              for (const row of rows) out.push(row.record as BucketRecord)
              if (rows.length < 1000) return out
              after = rows[rows.length - 1]!.num
            }
          }),
        archive: (id, actor, authorize) =>
          lock.withPermits(1)(
            Effect.gen(function* () {
              const bucket = yield* get(id)
              yield* authorize(accountsOf(bucket))
              if (bucket.status === "archived") return bucket
              const now = yield* Clock.currentTimeMillis
              const record: BucketRecord = { ...bucket, status: "archived", archived_at: now, archived_by: actor }
              yield* journal.commit({
                buckets: [stored(record)],
                entries: [{ ts: now, kind: "bucket.archived", key: record.id, payload: record }]
              })
              return record
            })
          )
      }
    })
  )
}

const titleOf = (market: Market): string =>
  market.subtitle === "" ? market.title : `${market.title} — ${market.subtitle}`
