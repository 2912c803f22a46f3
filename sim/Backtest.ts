/** Backtests: a strategy module run over a tape through the engine itself, with a report and an equity curve. */
import { Context, Effect, Either, Schema } from "effect"
import { ApiError } from "../src/Domain/Errors.ts"
import * as F from "../src/Domain/Fixed.ts"
import { type OrderStatus, TERMINAL } from "../src/Domain/Order.ts"
import { Engine } from "../src/Engine/Engine.ts"
import { PlaceOrder } from "../src/Orders.ts"
import { OrderStore } from "../src/Services/OrderStore.ts"
import { type Venue, VenueGateway } from "../src/Services/VenueGateway.ts"
import { Desk } from "../src/Trading/Desk.ts"
import { type Fill, type Position, unrealized } from "../src/Trading/Ledger.ts"
import { submitBucketOrder, submitOrder, submitOrderNow } from "../src/Orders.ts"
import { bucketIdOf, Buckets } from "../src/Trading/Buckets.ts"
import { replay, type RunContext, type Wiring } from "./Replay.ts"
import type { Strategy, StrategyContext, StrategyFill, StrategyOrder, Touch } from "./Strategy.ts"
import type { TapeEvent } from "./Tape.ts"
import type { TapeStream } from "./TapeStream.ts"
import type { TapeVenue } from "./TapeVenue.ts"
import * as Id from "../src/Domain/Ids.ts"

export interface BacktestOptions {
  /** The tape's text, or a tape read as a stream (`sim/TapeStream.ts`). */
  readonly tape: string | TapeStream
  readonly strategy: Strategy
  readonly seed?: number
  readonly startingCash?: string
  readonly onProgress?: (done: number, total: number) => void
  /** How the run is wired (default the simulator's: see `Wiring` in `Replay.ts`). */
  readonly wiring?: Wiring
}

export interface BacktestReport {
  readonly strategy: string
  readonly seed: number
  readonly tape: { readonly source: string; readonly markets: number; readonly events: number }
  readonly pnl: {
    readonly realized: string
    readonly unrealized: string | null
    readonly fees: string
    readonly net: string | null
    /** The part of `realized` booked by markets that resolved while held. */
    readonly settled: string
  }
  readonly starting_cash: string
  readonly final_equity: string
  readonly max_drawdown: string
  readonly exposure: { readonly max_contracts: string; readonly time_in_market: number }
  readonly orders: number
  readonly refused: ReadonlyArray<{ readonly ts: number; readonly order: string; readonly message: string }>
  readonly fills: ReadonlyArray<{
    ts: number
    market_id: string
    side: string
    price: string
    amount: string
    fee: string
  }>
  /** Positions closed at their market's payout when it resolved, in the order they settled. */
  readonly settlements: ReadonlyArray<{
    ts: number
    market_id: string
    contracts: string
    payout: string
    realized_pnl: string
    cash_change: string
  }>
  /** [ts, equity] at most once a second of simulated time. */
  readonly equity: ReadonlyArray<readonly [number, string]>
  /** [ts, mid] of the market the strategy traded most (or the first), at most once a second. */
  readonly prices: { readonly market_id: string; readonly points: ReadonlyArray<readonly [number, string]> }
  readonly log: ReadonlyArray<string>
  readonly events_sha256: string
}

/** A market's best prices as last read; the touch shown to the hooks and the mid, each made when first needed. */
interface TouchSeen {
  readonly bid: F.Fixed | null
  readonly ask: F.Fixed | null
  shown: Touch | undefined
  mid: F.Fixed | null | undefined
}

type Action =
  | { readonly _tag: "place"; readonly id: string; readonly order: StrategyOrder }
  | {
      readonly _tag: "bucket"
      readonly id: string
      readonly name: string
      readonly members: ReadonlyArray<{ readonly market_id: string; readonly flip?: boolean }>
    }
  | { readonly _tag: "cancel"; readonly id: string }

const decodeOrder = Schema.decodeUnknownEither(PlaceOrder)

/**
 * A value taken at most once a second of simulated time, kept as two columns of numbers (no object per point) and
 * formatted as `[ts, value]` points once, for the report.
 */
class Sampled {
  private readonly ts: Array<number> = []
  private readonly values: Array<F.Fixed> = []
  /** Whether a value taken at `ts` is kept: none yet, or a second or more since the last one. */
  due(ts: number): boolean {
    const n = this.ts.length
    return n === 0 || ts - this.ts[n - 1]! >= 1000
  }
  sample(ts: number, value: F.Fixed): void {
    if (!this.due(ts)) return
    this.ts.push(ts)
    this.values.push(value)
  }
  last(): F.Fixed | undefined {
    return this.values[this.values.length - 1]
  }
  points(): Array<readonly [number, string]> {
    return this.ts.map((ts, i) => [ts, F.format(this.values[i]!)] as const)
  }
}

/** Runs the strategy; the hooks drive it from the replay's event loop, on the replay's clock. */
export const backtest = (options: BacktestOptions) =>
  Effect.gen(function* () {
    const strategy = options.strategy
    const seed = options.seed ?? 1
    const startingCash = F.of(options.startingCash ?? "10000")
    const actions: Array<Action> = []
    const timers: Array<{ at: number; name: string; n: number }> = []
    const log: Array<string> = []
    const refused: Array<{ ts: number; order: string; message: string }> = []
    const orderIds = new Map<string, string>()
    /** The orders of `orderIds` not yet finished: a finished order's status no longer changes, and is not read again. */
    const unfinished = new Map<string, string>()
    let placed = 0
    /** What the run starts with over every venue's account (each starts with `startingCash`). */
    let startingTotal = startingCash
    let bucketCount = 0
    let timerCount = 0
    let seenFills = 0
    /** Actions sent and fills handed on so far: while it stays, the run's state stays as last observed. */
    let sent = 0
    let started = false
    let now = 0
    /**
     * Each market's best prices as last read, and the touch the hooks are shown of them: formatted when first asked
     * for, and kept (the same object) while the prices stay.
     */
    const touches = new Map<string, TouchSeen>()
    const setTouch = (id: string, bid: F.Fixed | null, ask: F.Fixed | null) => {
      const seen = touches.get(id)
      if (seen !== undefined && seen.bid === bid && seen.ask === ask) return
      touches.set(id, { bid, ask, shown: undefined, mid: undefined })
    }
    const touchOf = (id: string): Touch => {
      const t = touches.get(id)
      if (t === undefined) return { bestBid: null, bestAsk: null }
      t.shown ??= { bestBid: F.formatOrNull(t.bid), bestAsk: F.formatOrNull(t.ask) }
      return t.shown
    }
    const statuses = new Map<string, string>()
    let positions: ReadonlyArray<{
      marketId: string
      contracts: F.Fixed
      averagePrice: F.Fixed | null
      realized: F.Fixed
      fees: F.Fixed
      settled?: { readonly realized: F.Fixed } | undefined
    }> = []
    let cash = startingCash
    let markets: ReadonlyArray<Id.MarketId> = []
    const equity = new Sampled()
    const prices = new Map<string, Sampled>()
    const traded = new Map<string, number>()
    let peak = startingCash as F.Fixed
    let drawdown = F.ZERO
    let maxContracts = F.ZERO
    let inMarketSince: number | null = null
    let inMarketMs = 0
    let firstTs: number | null = null

    /** The mid of a touch, worked out once for each new one. */
    const midOf = (t: TouchSeen | undefined): F.Fixed | null => {
      if (t === undefined) return null
      t.mid ??= t.bid === null || t.ask === null ? null : F.div(F.add(t.bid, t.ask), F.fromInt(2))
      return t.mid
    }

    const ctx: StrategyContext = {
      get now() {
        return now
      },
      get markets() {
        return markets
      },
      touch: touchOf,
      position: (marketId) => {
        const p = positions.find((x) => x.marketId === marketId)
        return { contracts: F.format(p?.contracts ?? F.ZERO), averagePrice: F.formatOrNull(p?.averagePrice ?? null) }
      },
      pnl: () => {
        let realized = F.ZERO
        let fees = F.ZERO
        let open: F.Fixed | null = F.ZERO
        for (const p of positions) {
          realized = F.add(realized, p.realized)
          fees = F.add(fees, p.fees)
          const u = unrealized(
            {
              account: "",
              marketId: p.marketId,
              contracts: p.contracts,
              averagePrice: p.averagePrice,
              realized: p.realized,
              fees: p.fees
            },
            midOf(touches.get(p.marketId))
          )
          open = open === null || u === null ? null : F.add(open, u)
        }
        return {
          realized: F.format(realized),
          unrealized: F.formatOrNull(open),
          fees: F.format(fees),
          cash: F.format(cash)
        }
      },
      bucket: (spec) => {
        bucketCount += 1
        // A run's store is new: its buckets are numbered from 1 in the order they are made.
        const id = `b_${String(bucketCount).padStart(6, "0")}`
        actions.push({ _tag: "bucket", id, name: spec.name, members: spec.members })
        return `bucket:${id}`
      },
      place: (order) => {
        placed += 1
        const id = `s-${placed}`
        actions.push({ _tag: "place", id, order })
        return id
      },
      cancel: (id) => void actions.push({ _tag: "cancel", id }),
      status: (id) => statuses.get(id) ?? null,
      setTimer: (afterMs, name) =>
        void timers.push({ at: now + Math.max(0, Math.floor(afterMs)), name, n: ++timerCount }),
      log: (message) => void log.push(`${now} ${message}`)
    }

    /**
     * Reads the book of every market, the positions and the cash, so the hooks see the state of this moment: in plain
     * code where every market's venue shows its best prices at once and the desk holds every order still read (see
     * `observeNow`), else through the services' Effects. Both read the same values.
     */
    const observe = (run: RunContext) => Effect.suspend(() => (observeNow(run) ? Effect.void : observeRead(run)))

    const startOf = (run: RunContext) => {
      now = run.clock.unsafeCurrentTimeMillis()
      use(run)
    }
    /** The run `startingTotal` and the services below were taken from (a run's accounts and services never change). */
    let seenRun: RunContext | undefined
    let gateway: Context.Tag.Service<typeof VenueGateway>
    let desk: Context.Tag.Service<typeof Desk>
    let storeNow: Context.Tag.Service<typeof OrderStore>["now"]
    const use = (run: RunContext) => {
      if (run === seenRun) return
      seenRun = run
      startingTotal = F.mul(startingCash, F.fromInt(run.accounts.length))
      gateway = Context.get(run.context, VenueGateway)
      desk = Context.get(run.context, Desk)
      storeNow = Context.get(run.context, OrderStore).now
      views = undefined
    }
    /** Each market's venue, in the order of `markets`, where it shows its best prices at once (else null). */
    let views: Array<Pick<TapeVenue, "view"> | null> | undefined
    const viewsOf = () =>
      (views ??= markets.map((id) => {
        const venue: Venue & Partial<Pick<TapeVenue, "view">> = gateway.venue(Id.venueOf(id))!
        return venue.view === undefined ? null : (venue as Pick<TapeVenue, "view">)
      }))

    /** The ledger's list `positions` was last filtered from. */
    let positionsOf: ReadonlyArray<Position> | undefined
    /** Takes an order's status as read; a finished one is not read again. */
    const took = (clientId: string, status: OrderStatus) => {
      statuses.set(clientId, status)
      if (TERMINAL.has(status)) unfinished.delete(clientId)
    }

    /** `observe` at once; false (the rest left to `observeRead`) where something cannot be read now. */
    const observeNow = (run: RunContext): boolean => {
      if (markets.length === 0) return false
      startOf(run)
      const shown = viewsOf()
      for (let i = 0; i < markets.length; i++) {
        const id = markets[i]!
        const view = shown[i]?.view(id)
        if (view === undefined) return false
        setTouch(id, view.bestBid, view.bestAsk)
      }
      const all = desk.positionsNow()
      // The ledger answers the same list while no position changed: it is filtered again only when it did.
      if (all !== positionsOf) {
        positionsOf = all
        positions = all.filter((p) => run.accounts.includes(p.account))
      }
      for (const clientId of unfinished.keys()) {
        const status = desk.statusNow(unfinished.get(clientId)!)
        if (status === undefined) return false
        took(clientId, status)
      }
      let total = F.ZERO
      for (const account of run.accounts) total = F.add(total, desk.cashNow(account))
      cash = total
      return true
    }

    const observeRead = (run: RunContext) =>
      Effect.gen(function* () {
        startOf(run)
        if (markets.length === 0) {
          for (const venue of gateway.venues) {
            const listed = (yield* Effect.orDie(venue.markets)).map((m) => Id.makeMarketId(venue.info.id, m.nativeId))
            markets = [...markets, ...listed]
            views = undefined
          }
        }
        for (const id of markets) {
          const venue: Venue & Partial<Pick<TapeVenue, "view">> = gateway.venue(Id.venueOf(id))!
          // A tape's venue answers its best prices with no copy of the book; another venue is asked for its book.
          const view = venue.view?.(id)
          if (view !== undefined) {
            setTouch(id, view.bestBid, view.bestAsk)
            continue
          }
          const book = yield* Effect.orDie(venue.book(Id.nativeOf(id)))
          setTouch(id, book.bids[0]?.price ?? null, book.asks[0]?.price ?? null)
        }
        positionsOf = yield* desk.ledgerPositions
        positions = positionsOf.filter((p) => run.accounts.includes(p.account))
        for (const clientId of unfinished.keys()) {
          const order = yield* desk.get(unfinished.get(clientId)!)
          if (order !== undefined) took(clientId, order.status)
        }
        cash = (yield* desk.balances(run.accounts)).reduce((sum, b) => F.add(sum, b.cash), F.ZERO)
      })

    /** Sends what the hook asked for, in order, then lets it settle. */
    const flush = (run: RunContext) => (actions.length === 0 ? Effect.void : flushNow(run))
    const flushNow = (run: RunContext) =>
      Effect.gen(function* () {
        while (actions.length > 0) {
          sent += 1
          const action = actions.shift()!
          use(run)
          const actor = `strategy ${strategy.name ?? ""}`.trim()
          if (action._tag === "bucket") {
            const made = yield* Effect.either(
              Context.get(run.context, Buckets).create(
                {
                  name: action.name,
                  members: action.members.map((m) => ({ market_id: m.market_id, flip: m.flip ?? false }))
                },
                actor,
                () => Effect.void
              )
            )
            if (made._tag === "Left") {
              refused.push({ ts: now, order: action.id, message: `${made.left.code}: ${made.left.message}` })
              log.push(`${now} bucket ${action.name} refused: ${made.left.message}`)
            } else if (made.right.id !== action.id) {
              return yield* Effect.dieMessage(`bucket ${made.right.id} was made where ${action.id} was promised`)
            }
            continue
          }
          if (action._tag === "place") {
            const decoded = decodeOrder({ ...action.order, client_order_id: action.id })
            if (decoded._tag === "Left") {
              refused.push({ ts: now, order: action.id, message: String(decoded.left) })
              continue
            }
            const order = decoded.right
            const bucketId = bucketIdOf(order.market_id)
            const account = run.accountOf(order.market_id)
            // A plain order the desk can place at once is placed in plain code; any other through the Effects.
            const placedNow =
              bucketId !== undefined
                ? undefined
                : submitOrderNow(
                    order,
                    account,
                    actor,
                    { desk, engine: Context.get(run.context, Engine) },
                    run.clock.unsafeCurrentTimeMillis()
                  )
            const result =
              placedNow !== undefined
                ? placedNow instanceof ApiError
                  ? Either.left(placedNow)
                  : Either.right(placedNow)
                : yield* Effect.either(
                    bucketId !== undefined
                      ? Effect.flatMap(Context.get(run.context, Buckets).get(bucketId), (bucket) =>
                          submitBucketOrder(order, bucket, actor)
                        ).pipe(Effect.provide(run.context))
                      : submitOrder(order, account, actor).pipe(Effect.provide(run.context))
                  )
            if (result._tag === "Left") {
              refused.push({ ts: now, order: action.id, message: `${result.left.code}: ${result.left.message}` })
              log.push(`${now} ${action.id} refused: ${result.left.message}`)
            } else {
              orderIds.set(action.id, result.right.order.id)
              unfinished.set(action.id, result.right.order.id)
            }
          } else {
            const id = orderIds.get(action.id)
            const order = id === undefined ? undefined : yield* desk.get(id)
            if (order === undefined) continue
            const engine = Context.get(run.context, Engine)
            yield* Effect.either(order.heldBy === "engine" ? engine.cancel(order.id) : desk.cancel(order.id))
          }
          yield* run.settle
        }
      })

    /**
     * The run's fills oldest first, by time then seq (`desk.fills` reversed). Where the store reads its fills at once,
     * the list is kept here and each read takes in only the fills written since the last, each put in its place.
     */
    const fillsKept: Array<Fill> = []
    const seqsKept: Array<number> = []
    /** How many of the store's fills have been taken in. */
    let rowsRead = 0
    /** Whether a fill may have come in since the last read (always, where the store cannot count its fills at once). */
    const fillsMoved = (run: RunContext) => {
      use(run)
      const count = storeNow?.fillCount()
      return count === undefined || count !== rowsRead
    }
    const fillsInOrder = (run: RunContext): Effect.Effect<ReadonlyArray<Fill>> => {
      use(run)
      const read = desk.fillsNow(run.accounts, rowsRead)
      if (read === undefined) return Effect.map(desk.fills({ accounts: run.accounts }), (list) => [...list].reverse())
      rowsRead = read.next
      for (const { fill, seq } of read.fills) {
        let at = fillsKept.length
        while (
          at > 0 &&
          (fillsKept[at - 1]!.ts > fill.ts || (fillsKept[at - 1]!.ts === fill.ts && seqsKept[at - 1]! > seq))
        )
          at--
        fillsKept.splice(at, 0, fill)
        seqsKept.splice(at, 0, seq)
      }
      return Effect.succeed(fillsKept)
    }

    /** Hands new fills to `onFill`, naming the strategy order each belongs to. */
    const deliverFills = (run: RunContext) =>
      Effect.gen(function* () {
        const fills = yield* fillsInOrder(run)
        while (seenFills < fills.length) {
          const f = fills[seenFills++]!
          sent += 1
          traded.set(f.marketId, (traded.get(f.marketId) ?? 0) + 1)
          const order = yield* desk.get(f.parentId ?? f.orderId)
          const fill: StrategyFill = {
            orderId: f.orderId,
            clientOrderId: f.clientOrderId,
            strategyOrder: order?.clientOrderId ?? f.clientOrderId,
            marketId: f.marketId,
            side: f.side,
            price: F.format(f.price),
            amount: F.format(f.amount),
            fee: F.format(f.fee),
            ts: f.ts
          }
          if (strategy.onFill !== undefined) {
            yield* observe(run)
            strategy.onFill(ctx, fill)
            yield* flush(run)
          }
        }
      })

    /**
     * What the last valuation read (the cash, the positions, their markets' touches) and made of them: while none of
     * them is a new one, the equity and the contracts held are what they were.
     */
    let valued:
      | {
          readonly cash: F.Fixed
          readonly positions: typeof positions
          readonly touches: ReadonlyArray<TouchSeen | undefined>
          readonly value: F.Fixed
          readonly held: F.Fixed
        }
      | undefined
    const valuation = () => {
      if (valued !== undefined && valued.cash === cash && valued.positions === positions) {
        let same = true
        for (let i = 0; i < positions.length && same; i++)
          same = touches.get(positions[i]!.marketId) === valued.touches[i]
        if (same) return valued
      }
      let value = cash
      let held = F.ZERO
      for (const p of positions) {
        const mid = midOf(touches.get(p.marketId))
        held = F.add(held, Math.abs(p.contracts) as F.Fixed)
        if (mid === null || p.contracts === 0) continue
        value = F.add(
          value,
          p.contracts > 0 ? F.mul(p.contracts, mid) : F.mul(Math.abs(p.contracts) as F.Fixed, F.sub(F.ONE, mid))
        )
      }
      valued = { cash, positions, touches: positions.map((p) => touches.get(p.marketId)), value, held }
      return valued
    }

    /** Equity = cash + what the held contracts are worth at mid; sampled at most once a second. */
    const sample = (ts: number) => {
      const { value, held } = valuation()
      maxContracts = F.max(maxContracts, held)
      if (held > 0 && inMarketSince === null) inMarketSince = ts
      if (held === 0 && inMarketSince !== null) {
        inMarketMs += ts - inMarketSince
        inMarketSince = null
      }
      peak = F.max(peak, value)
      drawdown = F.max(drawdown, F.sub(peak, value))
      equity.sample(ts, value)
      for (const id of markets) {
        let series = prices.get(id)
        if (series !== undefined && !series.due(ts)) continue
        const mid = midOf(touches.get(id))
        if (mid === null) continue
        if (series === undefined) prices.set(id, (series = new Sampled()))
        series.sample(ts, mid)
      }
    }

    /** Runs the strategy's timers that fell due by `ts`, each at its own time. */
    const timersDue = (ts: number, run: RunContext) =>
      Effect.gen(function* () {
        timers.sort((a, b) => a.at - b.at || a.n - b.n)
        while (timers.length > 0 && timers[0]!.at <= ts) {
          const timer = timers.shift()!
          if (timer.at > run.clock.unsafeCurrentTimeMillis()) {
            yield* run.clock.setTime(timer.at)
            yield* run.settle
          }
          yield* observe(run)
          strategy.onTimer?.(ctx, timer.name)
          yield* flush(run)
        }
      })

    /** Hands a market event to the strategy's hook for it. */
    const tell = (event: TapeEvent) => {
      if (event.type === "snapshot" || event.type === "change") strategy.onBook?.(ctx, event.market)
      else if (event.type === "trade") {
        strategy.onTrade?.(ctx, {
          marketId: event.market,
          price: event.price,
          amount: event.amount,
          takerSide: event.taker_side,
          ts: event.ts
        })
      }
    }

    /** After an event, through the services' Effects: what it sent, the fills it brought, the state they left. */
    const afterSent = (event: TapeEvent, run: RunContext, seen: number) =>
      Effect.gen(function* () {
        yield* flush(run)
        yield* deliverFills(run)
        // Nothing was sent and no fill came in: what the hooks saw is still so, and is not read again.
        if (sent !== seen) yield* observe(run)
        sample(event.ts)
      })

    /** The whole of an event's turn through Effects: the first event (the strategy starts), or a state read slowly. */
    const afterRead = (event: TapeEvent, run: RunContext) =>
      Effect.gen(function* () {
        yield* observe(run)
        const seen = sent
        if (!started) {
          started = true
          strategy.onStart?.(ctx)
          yield* flush(run)
        }
        tell(event)
        yield* afterSent(event, run, seen)
      })

    // The run's fills and settlements, picked from its event log as it is written; the log itself is hashed, not kept.
    const fillPayloads: Array<Record<string, unknown>> = []
    const settlements: Array<Record<string, unknown>> = []
    const result = yield* replay({
      tape: options.tape,
      keepLog: false,
      onLogBytes: (bytes) => {
        const fills = bytes.includes('"kind":"fill.new"')
        const settles = bytes.includes('"kind":"position.settled"')
        if (!fills && !settles) return
        for (const line of bytes.toString("utf8").split("\n")) {
          if (fills && line.includes('"kind":"fill.new"')) fillPayloads.push(JSON.parse(line).payload)
          else if (settles && line.includes('"kind":"position.settled"')) settlements.push(JSON.parse(line).payload)
        }
      },
      seed,
      startingCash: F.format(startingCash),
      ...(options.wiring === undefined ? {} : { wiring: options.wiring }),
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      hooks: {
        before: (ts, run) => (timers.every((timer) => timer.at > ts) ? null : timersDue(ts, run)),
        // Most events ask nothing of the services: the hooks see the moment, the equity is sampled, in plain code; an
        // Effect follows only for what the strategy sent, a fill to hand it, or its first event.
        after: (event: TapeEvent, run) => {
          firstTs ??= event.ts
          if (!started || !observeNow(run)) return afterRead(event, run)
          const seen = sent
          tell(event)
          if (actions.length > 0 || fillsMoved(run)) return afterSent(event, run, seen)
          sample(event.ts)
          return null
        },
        end: (run) =>
          Effect.gen(function* () {
            yield* deliverFills(run)
            yield* observe(run)
            sample(now + 1000)
          })
      }
    })

    const pnl = ctx.pnl()
    const realized = F.of(pnl.realized)
    const fees = F.of(pnl.fees)
    const openPnl = pnl.unrealized === null ? null : F.of(pnl.unrealized)
    if (inMarketSince !== null) inMarketMs += now - inMarketSince
    const span = firstTs === null ? 0 : Math.max(1, now - firstTs)
    const busiest =
      [...traded.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? markets[0] ?? ""
    const allFills = fillPayloads
    const settled = positions.reduce((sum, p) => F.add(sum, p.settled?.realized ?? F.ZERO), F.ZERO)
    const report: BacktestReport = {
      strategy: strategy.name ?? "strategy",
      seed,
      tape: result.summary.tape,
      pnl: {
        realized: pnl.realized,
        unrealized: pnl.unrealized,
        fees: pnl.fees,
        net: openPnl === null ? null : F.format(F.sub(F.add(realized, openPnl), fees)),
        settled: F.format(settled)
      },
      starting_cash: F.format(startingTotal),
      final_equity: F.format(equity.last() ?? startingTotal),
      max_drawdown: F.format(drawdown),
      exposure: { max_contracts: F.format(maxContracts), time_in_market: Number((inMarketMs / span).toFixed(4)) },
      orders: placed,
      refused,
      fills: allFills.map((f: any) => ({
        ts: f.ts,
        market_id: f.market_id,
        side: f.side,
        price: f.price,
        amount: f.amount,
        fee: f.fee
      })),
      settlements: settlements.map((s: any) => ({
        ts: s.ts,
        market_id: s.market_id,
        contracts: s.contracts,
        payout: s.payout,
        realized_pnl: s.realized_pnl,
        cash_change: s.cash_change
      })),
      equity: equity.points(),
      prices: { market_id: busiest, points: prices.get(busiest)?.points() ?? [] },
      log,
      events_sha256: result.summary.events_sha256
    }
    return report
  })
