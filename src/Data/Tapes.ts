/**
 * The Tapes seam: how the data host's commands read and write tapes (sim/TAPES.md). The format lives with the
 * simulator, so the `crossbook` entry point provides the implementation (`sim/History.ts`, loaded on first use); the
 * server-only entry point says where to find it.
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { HistoryClient, HistoryError } from "../Services/HistoryClient.ts"
import type { DataStore } from "./Store.ts"

export interface ImportSummary {
  readonly markets: number
  readonly snapshots: number
  readonly changes: number
  readonly trades: number
  readonly gaps: number
  /** Changes and trades before a market's first snapshot (or after a gap, before the next): no book to apply them to. */
  readonly skipped: number
  /** Quotes and statuses: not part of what the host serves. */
  readonly ignored: number
}

/** This entry point has no tape format: the sentence says which command has it. */
export class TapesUnavailable extends Data.TaggedError("TapesUnavailable")<{ readonly message: string }> {}

/** The tape format's two functions, as `sim/History.ts` exports them. */
export interface TapeFormat {
  /** Writes a tape's markets, books and trades to the store; throws, naming the line, on a tape that does not parse. */
  readonly importTape: (store: DataStore, text: string) => ImportSummary
  /** A tape of one market over `[fromMs, toMs]`, read page by page through the history client. */
  readonly tapeFromHistory: (
    client: HistoryClient["Type"],
    marketId: string,
    fromMs: number,
    toMs: number
  ) => Effect.Effect<{ readonly text: string; readonly events: number }, HistoryError>
  /** A tape's text as the bytes of the columnar tape (an Arrow IPC file); throws, naming the line, on a bad tape. */
  readonly arrowOf: (text: string) => Uint8Array
}

export class Tapes extends Context.Tag("crossbook/Tapes")<
  Tapes,
  {
    /** Writes a tape to the store; fails with what did not parse (an Error naming the line), or TapesUnavailable. */
    readonly importTape: (store: DataStore, text: string) => Effect.Effect<ImportSummary, Error | TapesUnavailable>
    /** A tape of one market over `[fromMs, toMs]`, read page by page through the history client. */
    readonly tapeFromHistory: (
      client: HistoryClient["Type"],
      marketId: string,
      fromMs: number,
      toMs: number
    ) => Effect.Effect<{ readonly text: string; readonly events: number }, HistoryError | TapesUnavailable>
    /** A tape's text as an Arrow IPC file (docs/tapes.md); fails with what did not parse, or TapesUnavailable. */
    readonly arrowOf: (text: string) => Effect.Effect<Uint8Array, Error | TapesUnavailable>
  }
>() {
  /** The format loaded the first time a command reads or writes a tape, not when the command line starts. */
  static lazy(load: () => Promise<TapeFormat>) {
    const format = Effect.promise(load)
    return Layer.succeed(Tapes, {
      importTape: (store, text) =>
        Effect.flatMap(format, (f) =>
          Effect.try({
            try: () => f.importTape(store, text),
            catch: (error) => (error instanceof Error ? error : new Error(String(error)))
          })
        ),
      tapeFromHistory: (client, marketId, fromMs, toMs) =>
        Effect.flatMap(format, (f) => f.tapeFromHistory(client, marketId, fromMs, toMs)),
      arrowOf: (text) =>
        Effect.flatMap(format, (f) =>
          Effect.try({
            try: () => f.arrowOf(text),
            catch: (error) => (error instanceof Error ? error : new Error(String(error)))
          })
        )
    })
  }

  /** For an entry point without the simulator: the tape commands say which command has them. */
  static readonly unavailable = Layer.succeed(Tapes, {
    importTape: () =>
      Effect.fail(
        new TapesUnavailable({
          message:
            "this entry point has no tape format: `data import` needs the full `crossbook` command (bin/crossbook.js)"
        })
      ),
    tapeFromHistory: () =>
      Effect.fail(
        new TapesUnavailable({
          message:
            "this entry point has no tape format: `history tape` needs the full `crossbook` command (bin/crossbook.js)"
        })
      ),
    arrowOf: () =>
      Effect.fail(
        new TapesUnavailable({
          message:
            "this entry point has no tape format: `history tape` needs the full `crossbook` command (bin/crossbook.js)"
        })
      )
  })
}
