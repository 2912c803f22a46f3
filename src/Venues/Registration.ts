/** A venue as one registration: its id, its words for help and doctor, its settings, and how it is built. */
import type { HttpClient } from "@effect/platform"
import { Effect, type Scope } from "effect"
import type { Venue } from "../Services/VenueGateway.ts"
import type { FaultRule } from "./SimVenue.ts"

/** The environment a venue's settings are read from. */
export type Env = Readonly<Record<string, string | undefined>>

/** What a settings check of `doctor` says about an account, when there is something to say. */
export interface SettingsNote {
  readonly status: "ok" | "warn" | "fail"
  readonly detail: string
}

/** What a venue is built with besides its own settings: the server's seed, its sim count and fault plan. */
export interface VenueContext {
  /** Seed of anything simulated (`--sim-seed`). */
  readonly seed: number
  /** How many embedded sim venues (`--sim-venues`). */
  readonly simVenues: number
  /** The fault plan of the sim venue (`--sim-faults`). */
  readonly faults: ReadonlyArray<FaultRule>
}

/** The context of a server given no flags: seed 1, one sim venue, no faults. */
export const DEFAULT_CONTEXT: VenueContext = { seed: 1, simVenues: 1, faults: [] }

/**
 * A venue the server can serve. `Config` is what its settings read from the environment; `build` makes the venue
 * from it (without reaching the network: an unreachable venue still starts, its routes answer 502/504).
 */
export interface VenueRegistration<Config = any> {
  /** The venue's id: `<id>:<native id>` market ids, `<id>:<name>` accounts, `--venues` lists. */
  readonly id: string
  /** One line for help pages: what the venue is and what it needs to trade. */
  readonly description: string
  readonly settings: {
    /** Every environment variable the venue reads; help pages list them (its docs page says what each sets). */
    readonly variables: ReadonlyArray<string>
    /** Its credentials, for `doctor`: each inner list is one credential, any of its variables provides it. */
    readonly credentials: ReadonlyArray<ReadonlyArray<string>>
    /** The configuration from the environment; a bad setting fails with a sentence that names it, never its value. */
    readonly read: (env: Env) => Effect.Effect<Config, string>
  }
  /** How `doctor` checks the venue; a venue without a URL is embedded (no network, the server's own clock). */
  readonly doctor?: {
    /** The URL that tells whether the venue is reachable and what its clock says: the host `serve` would use. */
    readonly url?: (env: Env) => Effect.Effect<string>
    /** What the settings say about the account (a note, a warning or a failure), when there is something to say. */
    readonly account?: (env: Env) => SettingsNote | undefined
  }
  /** The venue, or several served under ids of their own (the sim as `sim`, `sim2`, …), for as long as the scope. */
  readonly build: (
    config: Config,
    context: VenueContext
  ) => Effect.Effect<Venue | ReadonlyArray<Venue>, string, Scope.Scope | HttpClient.HttpClient>
}

/** The venues of one registration, built from the environment: its settings read, then its builder run. */
export const buildRegistered = (
  registration: VenueRegistration,
  env: Env,
  context: VenueContext
): Effect.Effect<ReadonlyArray<Venue>, string, Scope.Scope | HttpClient.HttpClient> =>
  Effect.flatMap(registration.settings.read(env), (config) =>
    Effect.map(registration.build(config, context), (built) => (Array.isArray(built) ? built : [built as Venue]))
  )

/** Every venue module a registration loads on use, for {@link loadVenueCode}. */
const loaders: Array<() => Promise<unknown>> = []

/**
 * A module loaded the first time an effect needs it, once: how a registration reaches its venue's code, so that the
 * registrations stay light enough for the command line's start (its help pages list them). Once loaded, the effect
 * answers it without waiting.
 */
export const lazyModule = <M>(load: () => Promise<M>): Effect.Effect<M> => {
  let loaded: M | undefined
  let loading: Promise<M> | undefined
  const start = () =>
    (loading ??= load().then((m) => {
      loaded = m
      return m
    }))
  loaders.push(start)
  return Effect.suspend(() => (loaded !== undefined ? Effect.succeed(loaded) : Effect.promise(start)))
}

/**
 * Loads the code of every registered venue now. A server loads it before it binds its port, so that building its
 * venues never waits (a request that came in while a layer waited would find no handler yet).
 */
export const loadVenueCode = (): Promise<unknown> => Promise.all(loaders.map((load) => load()))

/** A setting that reads as a thrown error (a venue whose reader throws) as the failure of an effect. */
export const readOrFail = <A>(read: () => A): Effect.Effect<A, string> =>
  Effect.try({ try: read, catch: (e) => (e instanceof Error ? e.message : String(e)) })

/** A base URL as a venue reads it from the environment: the variable when set and not blank, else the default. */
export const baseUrl = (given: string | undefined, fallback: string): string =>
  (given?.trim() || fallback).replace(/\/+$/, "")
