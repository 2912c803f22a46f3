/**
 * The services the server and the simulator run on, as layers: the venues, the store, auth, the desk with its
 * journal, and the engine that holds complex orders. Nothing here serves HTTP, so a replay, a backtest or a sweep
 * worker loads the trading code alone.
 */
import { Effect, Layer } from "effect"
import { controlDatabase } from "./Persistence/Sql.ts"
import { Auth } from "./Services/Auth.ts"
import { OrderStore } from "./Services/OrderStore.ts"
import { VenueGateway } from "./Services/VenueGateway.ts"
import { Desk, type DeskConfig } from "./Trading/Desk.ts"
import { Engine } from "./Engine/Engine.ts"
import type { OrderType } from "./Engine/OrderType.ts"
import { ORDER_TYPES } from "./Engine/Registry.ts"
import { Buckets } from "./Trading/Buckets.ts"
import { Journal } from "./Trading/Journal.ts"
import { type FaultRule, makeSimVenues } from "./Venues/SimVenue.ts"
import { makePaperVenue } from "./Venues/Paper/Venue.ts"
import * as F from "./Domain/Fixed.ts"

/** The venues of this server: the embedded sim venues (`sim`, and `sim2`, … when `simVenues` > 1). */
export const venuesLayer = (config: {
  readonly seed: number
  readonly stepMs?: number
  readonly markets?: number
  readonly faults?: ReadonlyArray<FaultRule>
  readonly simVenues?: number
  /** Whether each sim venue has its paper account too (`serve` always gives it one). */
  readonly paper?: boolean
}) =>
  Layer.scoped(
    VenueGateway,
    Effect.flatMap(
      makeSimVenues({
        seed: config.seed,
        stepMs: config.stepMs ?? 1000,
        markets: config.markets ?? 24,
        faults: config.faults ?? [],
        count: config.simVenues ?? 1
      }),
      (sims) =>
        Effect.map(
          config.paper === true ? Effect.forEach(sims, (v) => makePaperVenue(v)) : Effect.succeed([]),
          (paper) => VenueGateway.fromVenues(sims, paper)
        )
    )
  )

/** What the engine runs on: venues, the store, auth, and the desk with its journal. */
export const deskServices = <E1, E2, E3 = never>(options: {
  readonly seed: number
  readonly faults?: ReadonlyArray<FaultRule>
  /** How many embedded sim venues, when `venues` is not given (default 1). */
  readonly simVenues?: number
  readonly startingCash?: string
  /** Cash each paper account starts with (default 10000). */
  readonly paperCash?: F.Fixed
  /** The server's journal: the placements of one turn of the event loop commit together. */
  readonly gatherCommits?: boolean
  readonly store: Layer.Layer<OrderStore, E1>
  readonly auth: Layer.Layer<Auth, E2>
  /** Other venues in place of the embedded sim venue alone (`serve`'s list, a tape-fed one in the simulator). */
  readonly venues?: Layer.Layer<VenueGateway, E3>
  /** How the desk waits on remote venues and settles lost answers (see `DeskConfig`). */
  readonly remote?: Pick<DeskConfig, "placementTimeoutMs" | "outcome" | "reconcileEveryMs">
}) => {
  const base = Layer.mergeAll(
    options.venues ??
      venuesLayer({
        seed: options.seed,
        ...(options.faults === undefined ? {} : { faults: options.faults }),
        ...(options.simVenues === undefined ? {} : { simVenues: options.simVenues })
      }),
    options.store,
    options.auth
  )
  const withJournal = Layer.provideMerge(Journal.layerWith({ gather: options.gatherCommits ?? false }), base)
  return Layer.provideMerge(
    Desk.layer({
      startingCash: F.of(options.startingCash ?? "10000"),
      paperCash: options.paperCash ?? F.of("10000"),
      ...options.remote
    }),
    withJournal
  )
}

/** Everything the server runs on: the desk's services and the engine that holds complex orders. */
export const serverServices = <E1, E2, E3 = never>(
  options: Parameters<typeof deskServices<E1, E2, E3>>[0] & {
    readonly engineSeed?: number
    /** The simulator moves the clock and tells the engine when its timers are due. */
    readonly drivenEngine?: boolean
    /** The complex order types the engine holds (default the built-in ones, `ORDER_TYPES`). */
    readonly orderTypes?: ReadonlyArray<OrderType>
  }
) =>
  Layer.provideMerge(
    Layer.merge(
      Engine.layer(options.orderTypes ?? ORDER_TYPES, {
        seed: options.engineSeed ?? 0,
        driven: options.drivenEngine ?? false
      }),
      Buckets.layer
    ),
    deskServices(options)
  )

/** Auth on a control database file; its SQL client stays private to it. */
export const authLayer = (controlFile: string) => Auth.layerSql.pipe(Layer.provide(controlDatabase(controlFile)))
