/** Replay: the engine and a tape-fed venue over a tape on a discrete-event clock, with a scenario of orders. */
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import * as F from "../src/Domain/Fixed.ts"
import type { OrderRequest } from "../src/Domain/OrderRequest.ts"
import { serverServices } from "../src/Assembly.ts"
import { Engine as EngineTag, type Engine } from "../src/Engine/Engine.ts"
import type { MarketView } from "../src/Engine/Core.ts"
import type { OrderType } from "../src/Engine/OrderType.ts"
import { Auth } from "../src/Services/Auth.ts"
import { PlaceOrder } from "../src/Orders.ts"
import { OrderStore } from "../src/Services/OrderStore.ts"
import { type VenueEvent, VenueGateway } from "../src/Services/VenueGateway.ts"
import type { Buckets } from "../src/Trading/Buckets.ts"
import { Desk } from "../src/Trading/Desk.ts"
import type { Journal } from "../src/Trading/Journal.ts"
import { submitOrder } from "../src/Orders.ts"
import type { TapeEvent, TapeHeader } from "./Tape.ts"
import { streamTapeText, type TapeStream } from "./TapeStream.ts"
import { DiscreteClock } from "./DiscreteClock.ts"
import { DrainScheduler } from "./DrainScheduler.ts"
import { makeEventLog } from "./EventLog.ts"
import { makeTapeVenue, type TapeVenue } from "./TapeVenue.ts"
import * as Id from "../src/Domain/Ids.ts"

const venueOfMarket = (marketId: string) => Id.venuePrefix(marketId) ?? ""

/** A market of the tape as the replay applies its events: its venue, and the venue's handle of it. */
interface Slot {
  readonly venue: TapeVenue
  readonly apply: (event: TapeEvent) => ReadonlyArray<VenueEvent>
  readonly view: (marketId: string) => MarketView | undefined
}

/** One order of a scenario: placed `at_ms` after the tape's first event, with the body of `POST /trading/orders`. */
export const ScenarioOrder = Schema.Struct({ at_ms: Schema.Int.pipe(Schema.nonNegative()), order: PlaceOrder })
export type ScenarioOrder = typeof ScenarioOrder.Type
export const Scenario = Schema.Array(ScenarioOrder)

/** What a run hands to hooks: the services the engine runs on, and the accounts orders go to. */
export interface RunContext {
  readonly context: Context.Context<Desk | Engine | OrderStore | Journal | VenueGateway | Buckets>
  /** The account of the tape's first venue. */
  readonly account: string
  /** Every venue's account (`<venue>:default`), in the tape's order of venues. */
  readonly accounts: ReadonlyArray<string>
  /** The account that trades a market: its venue's. */
  readonly accountOf: (marketId: string) => string
  /** The run's clock: read it with `Clock`, move it with `clock.setTime`. */
  readonly clock: DiscreteClock
  /** Lets every fiber of the run finish what was started before going on. */
  readonly settle: Effect.Effect<void>
}

/** The services a run builds around its tape venue; by default the same composition `serve` uses. */
export type Wiring = (
  venues: Layer.Layer<VenueGateway>,
  seed: number,
  startingCash: string
) => Layer.Layer<Desk | Engine | OrderStore | Journal | VenueGateway | Buckets, never, never>

/** The composition `serve` uses around a tape venue, its engine holding `orderTypes` (by default the built-in nine). */
export const simWiringWith =
  (orderTypes?: ReadonlyArray<OrderType>): Wiring =>
  (venues, seed, startingCash) =>
    serverServices({
      seed,
      engineSeed: seed,
      drivenEngine: true,
      startingCash,
      venues,
      store: OrderStore.layerMemory,
      auth: Auth.layerAllowAll,
      ...(orderTypes === undefined ? {} : { orderTypes })
    })

export const simWiring: Wiring = simWiringWith()

/**
 * The services of a driven engine over one tape venue whose book is at the tape's first moment, on `clock`: for
 * tests and benchmarks that hand the engine its views themselves. Built in the caller's scope.
 */
export const drivenOverTape = (
  tape: { readonly header: TapeHeader; readonly events: ReadonlyArray<TapeEvent> },
  options: { readonly clock: DiscreteClock; readonly store: Layer.Layer<OrderStore>; readonly startingCash: string }
) =>
  Effect.gen(function* () {
    const venue = yield* makeTapeVenue(tape.header)
    const t0 = tape.events[0]?.ts ?? 0
    for (const e of tape.events) {
      if (e.ts > t0) break
      venue.applyNow(e)
    }
    const layer = serverServices({
      seed: 1,
      engineSeed: 1,
      drivenEngine: true,
      startingCash: options.startingCash,
      venues: Layer.succeed(VenueGateway, VenueGateway.fromVenues([venue])),
      store: options.store,
      auth: Auth.layerAllowAll
    })
    const context = yield* Layer.build(layer).pipe(Effect.withClock(options.clock))
    return { venue, context, engine: Context.get(context, EngineTag) }
  })

/**
 * Called around each tape event, on the same clock; a backtest's strategy lives here. `before` and `after` may answer
 * null: nothing more to run. The replay then goes on in plain code, as it does where no hook is given.
 */
export interface ReplayHooks {
  /**
   * Before time moves to `ts`: anything due earlier (a strategy's timers) runs now, at its own time; null when nothing
   * is. It may be asked more than once for a moment: making the Effect must do nothing until it runs.
   */
  readonly before?: (ts: number, run: RunContext) => Effect.Effect<void> | null
  /**
   * After the event was applied and what it caused has settled. What it can do at once it does in plain code; it
   * answers the Effect that does the rest, or null when there is none (then nothing it did needs settling).
   */
  readonly after?: (event: TapeEvent, run: RunContext) => Effect.Effect<void> | null
  /** After the last event. */
  readonly end?: (run: RunContext) => Effect.Effect<void>
}

/** Wall time of one kind of work a replay did, and how often it did it. */
export interface Segment {
  ms: number
  count: number
}

/**
 * Where a replay's wall time went, by the kind of work an input caused; filled as the replay goes when a caller passes
 * one. Only the work that wakes something is timed, one reading around each, so a market input that causes none costs
 * no reading: its time (and a hook's) is the run's time less these. The caller's `now` reads the wall clock: a replay
 * reads none itself, and what it finds is the same with timings or without.
 */
export interface ReplayTimings {
  /** Milliseconds on the caller's wall clock. */
  readonly now: () => number
  /** Own-order events a market input caused (fills, order changes), applied by the desk and the engine; `count` batches. */
  readonly own: Segment & { events: number }
  /** Market views that woke parents, and what those parents did; `count` views. */
  readonly woken: Segment & { parents: number }
  /**
   * Moments that began with orders, expiries or hooks, and timers that fell due; `count` the stretches timed (the
   * start of a moment and its timers are timed apart).
   */
  readonly scheduled: Segment
}

/** An empty record of timings read on `now`, to pass as `ReplayOptions.timings`. */
export const replayTimings = (now: () => number): ReplayTimings => ({
  now,
  own: { ms: 0, count: 0, events: 0 },
  woken: { ms: 0, count: 0, parents: 0 },
  scheduled: { ms: 0, count: 0 }
})

export interface ReplayOptions {
  /**
   * The tape's text (read a line at a time as the replay reaches it; a bad line fails the run when reached), a tape
   * already parsed, or a tape read as a stream (`sim/TapeStream.ts`: from a file of either format, a batch or a
   * megabyte at a time, whatever its length).
   */
  readonly tape: string | { readonly header: TapeHeader; readonly events: ReadonlyArray<TapeEvent> } | TapeStream
  /** Orders sent at their time from the tape's start: a scenario's, or any request of a type the wiring's engine holds. */
  readonly orders?: ReadonlyArray<{ readonly at_ms: number; readonly order: OrderRequest }>
  readonly seed?: number
  readonly startingCash?: string
  /** Called as the replay goes: events done and the total (estimated from the bytes read when a stream's is unknown). */
  readonly onProgress?: (done: number, total: number) => void
  /**
   * Whether the event log is kept to answer as `log` (default true). Either way it is hashed as it is written, and
   * handed to `onLog` as it goes; without it a run holds none of it.
   */
  readonly keepLog?: boolean
  /** Receives the event log as it is written, a few lines at a time, each line ending in "\n". */
  readonly onLog?: (lines: string) => void
  /**
   * The same as UTF-8 bytes, for a writer or a scan that needs no text: a view of a buffer the next lines write over,
   * to be used before returning.
   */
  readonly onLogBytes?: (lines: Buffer) => void
  /** Filled with where the run's time went, when given. */
  readonly timings?: ReplayTimings
  readonly hooks?: ReplayHooks
  /** How the run is wired (default `simWiring`). */
  readonly wiring?: Wiring
  /** How a scenario order is sent (default: straight to the submit path the route uses). */
  readonly submit?: (
    order: OrderRequest,
    run: RunContext
  ) => Effect.Effect<void, { readonly code: string; readonly message: string }>
}

export interface ReplaySummary {
  readonly tape: { readonly source: string; readonly markets: number; readonly events: number }
  readonly seed: number
  readonly orders: {
    readonly submitted: number
    readonly refused: ReadonlyArray<{ at_ms: number; code: string; message: string }>
    readonly by_status: Readonly<Record<string, number>>
  }
  readonly fills: number
  readonly cash: string
  readonly positions: ReadonlyArray<{ market_id: string; contracts: string; realized_pnl: string; fees: string }>
  readonly journal_events: number
  readonly events_sha256: string
}

/**
 * Runs a replay and answers the event log (one JSON line per journal event) and its summary. Time comes only from
 * the tape and the scenario: the clock jumps from one input to the next and runs every timer due on the way, so an
 * hour of market takes as long as its inputs do, and the same inputs and seed give the same log, byte for byte.
 */
export const replay = (options: ReplayOptions) => {
  // A tape's text is read a line at a time as the replay reaches it, as a file is: no array of its events is made, and
  // each event is garbage once applied.
  const source = typeof options.tape === "string" ? streamTapeText(options.tape) : options.tape
  const { header } = source
  const known = "progress" in source ? source.total : source.events.length
  const progress = "progress" in source ? source.progress : () => 1
  const input = Array.isArray(source.events) ? undefined : source.events[Symbol.iterator]()
  const list = input === undefined ? (source.events as ReadonlyArray<TapeEvent>) : undefined
  let at = 0
  /** The next event of the tape, read ahead by one (undefined at the end). */
  const read = (): TapeEvent | undefined => {
    if (list !== undefined) return list[at++]
    const r = input!.next()
    return r.done === true ? undefined : r.value
  }
  let ahead = read()
  const t0 = ahead === undefined ? 0 : ahead.ts
  const clock = new DiscreteClock(t0)
  const scheduler = new DrainScheduler()
  /** Lets every fiber (venue fan-out, desk, engine) finish what the last input started before time moves on. */
  const settle = scheduler.settle()
  return Effect.gen(function* () {
    const seed = options.seed ?? 1
    const scope = yield* Scope.make()
    // A tape may hold several venues' markets: each venue is fed its own, and trades on its own account.
    const venueIds = [...new Set(header.markets.map((m) => venueOfMarket(m.id)))]
    const tapeVenues = new Map<string, TapeVenue>()
    for (const id of venueIds.length === 0 ? ["sim"] : venueIds) {
      tapeVenues.set(
        id,
        yield* makeTapeVenue({ ...header, markets: header.markets.filter((m) => venueOfMarket(m.id) === id) })
      )
    }
    const venues = [...tapeVenues.values()]
    /**
     * Each market's venue and the venue's handle of it by the market's id: an event finds both with one lookup and no
     * slice of its id. An event of a market the header did not name goes to the first venue, which ignores it.
     */
    const slotOf = new Map<string, Slot>()
    for (const m of header.markets) {
      const venue = tapeVenues.get(venueOfMarket(m.id))!
      const market = venue.marketOf(m.id)
      if (market !== undefined) slotOf.set(m.id, { venue, apply: market.apply, view: market.view })
    }
    const noSlot: Slot = { venue: venues[0]!, apply: venues[0]!.applyNow, view: venues[0]!.view }
    const wiring = options.wiring ?? simWiring
    const services = wiring(
      Layer.succeed(VenueGateway, VenueGateway.fromVenues(venues)),
      seed,
      options.startingCash ?? "10000"
    )
    const context = yield* Layer.buildWithScope(services, scope)
    const desk = Context.get(context, Desk)
    const store = Context.get(context, OrderStore)
    const accounts = venues.map((v) => `${v.info.id}:default`)
    const account = accounts[0]!
    const accountOf = (marketId: string) =>
      tapeVenues.has(venueOfMarket(marketId)) ? `${venueOfMarket(marketId)}:default` : account
    const run: RunContext = { context, account, accounts, accountOf, clock, settle }
    const hooks = options.hooks ?? {}
    const orders = [...(options.orders ?? [])].sort((a, b) => a.at_ms - b.at_ms)
    const refused: Array<{ at_ms: number; code: string; message: string }> = []
    let next = 0
    const submitDue = (until: number) =>
      Effect.gen(function* () {
        while (next < orders.length && t0 + orders[next]!.at_ms <= until) {
          const item = orders[next++]!
          const due = t0 + item.at_ms
          yield* clock.setTime(due)
          const send =
            options.submit === undefined
              ? Effect.asVoid(
                  submitOrder(item.order, accountOf(item.order.market_id), "replay").pipe(Effect.provide(context))
                )
              : options.submit(item.order, run)
          const result = yield* Effect.either(send)
          if (result._tag === "Left")
            refused.push({ at_ms: item.at_ms, code: result.left.code, message: result.left.message })
          yield* settle
        }
      })
    const engine = Context.get(context, EngineTag)
    /**
     * Brings the clock to `t` and plays the moment's first inputs: timers that fell due on the way run at their own
     * times, then, at `t`, orders and strategy requests, then expiries. The moment's market data and its timers follow.
     */
    const moveTo = (t: number) =>
      Effect.gen(function* () {
        for (;;) {
          const timer = engine.nextDue()
          const order = next < orders.length ? t0 + orders[next]!.at_ms : Number.POSITIVE_INFINITY
          const at = Math.min(timer, order)
          if (at >= t) break
          yield* moment(at)
          yield* timers(at)
        }
        yield* moment(t)
      })
    const moment = (t: number) =>
      Effect.gen(function* () {
        yield* clock.setTime(t)
        yield* submitDue(t)
        if (hooks.before !== undefined) {
          const due = hooks.before(t, run)
          if (due !== null) yield* due
          yield* settle
        }
        if (engine.nextDue() <= t) {
          yield* engine.expireDue(t)
          yield* settle
        }
      })
    /** The moment's timers, last among its inputs. */
    const timers = (t: number) =>
      Effect.gen(function* () {
        if (engine.nextDue() > t) return
        yield* engine.timersDue(t)
        yield* settle
      })
    const step = known === undefined ? 10_000 : Math.max(1, Math.floor(known / 100))
    /** The total the progress reports: the known one, else one estimated from how much of the source is read. */
    const totalNow = (done: number) => known ?? Math.max(done, Math.round(done / Math.max(progress(), 1e-9)))
    /** Whether the moment `t` starts with nothing but market data: no order, timer, expiry, hook or sleeper due. */
    const quietUntil = (t: number) =>
      (hooks.before === undefined || hooks.before(t, run) === null) &&
      engine.nextDue() > t &&
      (next >= orders.length || t0 + orders[next]!.at_ms > t) &&
      clock.advanceQuietly(t)
    const timings = options.timings
    /** Adds the time since `from` to a segment (when timings were asked for). */
    const timed = (segment: Segment | undefined, from: number) => {
      if (segment === undefined || timings === undefined) return
      segment.ms += timings.now() - from
      segment.count += 1
    }
    /**
     * When the timed work began, and when the last view was handed to the engine (with timings): fields of an object,
     * which V8 updates in place, where a variable of the closure would box each new time.
     */
    const marks = { from: 0, viewFrom: 0 }
    let wokenSeen = engine.stats().woken
    // The event log, hashed (and handed on) as the journal grows: whatever ran since the last look is written.
    const eventLog = makeEventLog({
      keep: options.keepLog ?? true,
      onLog: options.onLog,
      onLogBytes: options.onLogBytes
    })
    let dirty = false
    const writeLog = Effect.gen(function* () {
      dirty = false
      for (;;) {
        const batch = yield* store.eventsAfter(eventLog.count(), 4096)
        if (batch.length === 0) return
        eventLog.write(batch)
      }
    })
    let i = 0
    const onProgress = options.onProgress
    /** Reports progress now and then, and moves on to the next event. */
    const done = () => {
      if (onProgress !== undefined && (i % step === 0 || i + 1 === known)) onProgress(i + 1, totalNow(i + 1))
      i++
      ahead = read()
    }
    const after = hooks.after
    /**
     * The event the plain loop stopped at, applied: what it reported, its view's work when that was asked, and what the
     * `after` hook left to run when it was already called (undefined when it was not).
     */
    let stopped: {
      event: TapeEvent
      venue: TapeVenue
      reported: ReadonlyArray<VenueEvent>
      work: Effect.Effect<void> | null | undefined
      rest: Effect.Effect<void> | null | undefined
    } = { event: undefined as unknown as TapeEvent, venue: venues[0]!, reported: [], work: undefined, rest: undefined }
    /**
     * Plays the market data of the moment `t` in plain code for as long as it needs no fiber. Stops at an event that
     * reported own-order events, whose view woke parents, or whose `after` hook left an Effect to run (the event is
     * applied, and `stopped` says what it needs); answers false at the moment's end.
     */
    const playQuietly = (t: number): boolean => {
      for (let event = ahead; event !== undefined && event.ts === t; event = ahead) {
        const slot = slotOf.get(event.market) ?? noSlot
        const venue = slot.venue
        const reported = slot.apply(event)
        // Child updates first (fills and order changes the event caused), then the market view.
        if (reported.length > 0) return stop(event, venue, reported, undefined)
        // A woken parent is fed in plain code within `marketView`: its time counts as the woken view's.
        if (timings !== undefined) marks.viewFrom = timings.now()
        const work =
          event.type === "snapshot" || event.type === "change" || event.type === "trade"
            ? engine.marketView(event.market, slot.view, clock.unsafeCurrentTimeMillis())
            : null
        if (work !== null) return stop(event, venue, reported, work)
        if (after !== undefined) {
          const rest = after(event, run)
          if (rest !== null) return stop(event, venue, reported, work, rest)
        }
        done()
      }
      return false
    }
    const stop = (
      event: TapeEvent,
      venue: TapeVenue,
      reported: ReadonlyArray<VenueEvent>,
      work: Effect.Effect<void> | null | undefined,
      rest?: Effect.Effect<void> | null
    ) => {
      stopped = { event, venue, reported, work, rest }
      return true
    }
    while (ahead !== undefined) {
      const t = ahead.ts
      // Most moments hold market data only: the clock moves in plain code, and only what wakes something runs fibers.
      if (!quietUntil(t)) {
        if (timings !== undefined) marks.from = timings.now()
        yield* moveTo(t)
        timed(timings?.scheduled, marks.from)
        dirty = true
      }
      // Market data of this moment, in tape order; child updates it causes settle after each.
      while (playQuietly(t)) {
        const { event, venue, reported } = stopped
        let work = stopped.work
        if (reported.length > 0) {
          if (timings !== undefined) {
            marks.from = timings.now()
            timings.own.events += reported.length
          }
          // The desk takes what the venue reported, and the engine what that did to its children, in plain code
          // where nothing waits; else through the venue's subscription and the engine's fiber.
          if (venue.subscribers() !== 1 || !desk.applyNow(venue, reported)) yield* venue.publish(reported)
          const left = engine.childrenNow(clock.unsafeCurrentTimeMillis())
          if (left !== null) yield* left
          yield* settle
          timed(timings?.own, marks.from)
          dirty = true
          if (event.type === "snapshot" || event.type === "change" || event.type === "trade") {
            if (timings !== undefined) marks.viewFrom = timings.now()
            work = engine.marketView(event.market, venue.view, clock.unsafeCurrentTimeMillis())
          }
        }
        if (work !== null && work !== undefined) {
          if (timings !== undefined) {
            marks.from = marks.viewFrom
            // Only a view that woke parents counts any, so the count since the last such view is this one's.
            const woken = engine.stats().woken
            timings.woken.parents += woken - wokenSeen
            wokenSeen = woken
          }
          yield* work
          yield* settle
          timed(timings?.woken, marks.from)
          dirty = true
        }
        if (after !== undefined) {
          const rest = stopped.rest !== undefined ? stopped.rest : after(event, run)
          if (rest !== null) {
            yield* rest
            yield* settle
            dirty = true
          }
        }
        done()
      }
      if (engine.nextDue() <= t) {
        if (timings !== undefined) marks.from = timings.now()
        yield* timers(t)
        timed(timings?.scheduled, marks.from)
        dirty = true
      }
      if (dirty) yield* writeLog
    }
    if (options.onProgress !== undefined && known === undefined && i > 0) options.onProgress(i, i)
    yield* submitDue(Number.MAX_SAFE_INTEGER)
    yield* settle
    if (hooks.end !== undefined) yield* hooks.end(run)
    yield* writeLog
    const { log, sha256 } = eventLog.finish()
    const all = yield* desk.list({})
    const byStatus: Record<string, number> = {}
    for (const o of all) byStatus[o.status] = (byStatus[o.status] ?? 0) + 1
    const positions = yield* desk.ledgerPositions
    const balances = yield* desk.balances(accounts)
    const summary: ReplaySummary = {
      tape: { source: header.source, markets: header.markets.length, events: i },
      seed,
      orders: { submitted: orders.length, refused, by_status: byStatus },
      fills: (yield* desk.fills({})).length,
      cash: F.format(balances.reduce((sum, b) => F.add(sum, b.cash), F.ZERO)),
      positions: positions.map((p) => ({
        market_id: p.marketId,
        contracts: F.format(p.contracts),
        realized_pnl: F.format(p.realized),
        fees: F.format(p.fees)
      })),
      journal_events: eventLog.count(),
      events_sha256: sha256
    }
    yield* Scope.close(scope, Exit.void)
    return { log, summary }
  }).pipe(
    // Every service built inside reads time from this run's clock, and only the run moves it.
    Effect.withClock(clock),
    // The run does no waiting of its own: continuations go through microtasks only, never a timer.
    Effect.withScheduler(scheduler)
  )
}
