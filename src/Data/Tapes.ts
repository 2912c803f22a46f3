/**
 * The Tapes seam: how the data host's commands read and write tapes (sim/TAPES.md). The format lives with the
 * simulator, so the `crossbook` entry point provides the implementation (`sim/History.ts`); the server-only entry
 * point says where to find it.
 */
import { Context, Effect, Layer } from "effect"
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

export class Tapes extends Context.Tag("crossbook/Tapes")<
  Tapes,
  {
    /** Writes a tape's markets, books and trades to the store; throws, naming the line, on a tape that does not parse. */
    readonly importTape: (store: DataStore, text: string) => ImportSummary
    /** A tape of one market over `[fromMs, toMs]`, read page by page through the history client. */
    readonly tapeFromHistory: (
      client: HistoryClient["Type"],
      marketId: string,
      fromMs: number,
      toMs: number
    ) => Effect.Effect<{ readonly text: string; readonly events: number }, HistoryError>
  }
>() {
  /** For an entry point without the simulator: the tape commands say which command has them. */
  static readonly unavailable = Layer.succeed(Tapes, {
    importTape: () => {
      throw new Error("tapes are read by the full `crossbook` command (bin/crossbook.js)")
    },
    tapeFromHistory: () => Effect.dieMessage("tapes are written by the full `crossbook` command (bin/crossbook.js)")
  })
}
