/**
 * Example strategy over several venues: each proposition the tape lists on more than one venue becomes a bucket, and
 * every `every_s` seconds the strategy buys a clip of it wherever it is cheapest, while the cheapest price in bucket
 * terms is under `below`, until it holds `max` contracts of it. The engine routes each clip across the venues.
 *
 * Twins are found by name as the sim venues and `sim generate --venues N` write them: `sim2:gen-001` lists what
 * `sim:GEN-001` asks; `sim2:gen-002-no` asks its opposite (its YES is the bucket's NO).
 */
import { parseMarketId, type Strategy, type StrategyContext, type StrategyParams } from "../Strategy.ts"

export const params = { every_s: 5, clip: "20", below: 0.6, max: 200, worst: "0.7" }

interface Bucket {
  readonly id: string
  readonly members: ReadonlyArray<{ readonly market_id: string; readonly flip: boolean }>
  bought: number
}

/** The markets of the tape grouped by the proposition they ask, with each member's flip. */
const propositions = (markets: ReadonlyArray<string>) => {
  const groups = new Map<string, Array<{ market_id: string; flip: boolean }>>()
  for (const id of markets) {
    const native = parseMarketId(id)?.native ?? id
    const flip = native.endsWith("-no")
    const key = (flip ? native.slice(0, -3) : native).toLowerCase()
    const group = groups.get(key) ?? []
    group.push({ market_id: id, flip })
    groups.set(key, group)
  }
  return [...groups.entries()].filter(([, members]) => members.length > 1)
}

/** The cheapest price, in bucket terms, at which a contract of the bucket can be bought now (fees aside). */
const cheapest = (ctx: StrategyContext, bucket: Bucket): number | null => {
  let best: number | null = null
  for (const m of bucket.members) {
    const touch = ctx.touch(m.market_id)
    const price = m.flip
      ? touch.bestBid === null
        ? null
        : 1 - Number(touch.bestBid)
      : touch.bestAsk === null
        ? null
        : Number(touch.bestAsk)
    if (price !== null && (best === null || price < best)) best = price
  }
  return best
}

const cheapestBucket = (given: StrategyParams = {}): Strategy => {
  const p = { ...params, ...given } as typeof params
  const buckets: Array<Bucket> = []
  return {
    name: "buy wherever cheapest",
    onStart: (ctx) => {
      for (const [key, members] of propositions(ctx.markets)) {
        const id = ctx.bucket({ name: key, members })
        buckets.push({ id, members, bought: 0 })
        ctx.log(`${id}: ${members.map((m) => `${m.market_id}${m.flip ? " (flipped)" : ""}`).join(", ")}`)
      }
      ctx.setTimer(p.every_s * 1000, "buy")
    },
    onTimer: (ctx) => {
      for (const bucket of buckets) {
        const price = cheapest(ctx, bucket)
        if (price === null || price >= p.below || bucket.bought >= p.max) continue
        const clip = Math.min(Number(p.clip), p.max - bucket.bought)
        ctx.place({ market_id: bucket.id, side: "buy", type: "market", amount: String(clip), price: p.worst })
        bucket.bought += clip
        ctx.log(`${bucket.id}: buying ${clip} at ${price.toFixed(2)} or better, at most ${p.worst} after fees`)
      }
      ctx.setTimer(p.every_s * 1000, "buy")
    }
  }
}

export default cheapestBucket
