/**
 * A replay's event log as it is written: each journal event one line of JSON, in seq order, hashed with sha256 as it
 * goes, handed on and kept as asked.
 *
 * A batch's lines are written as UTF-8 into one buffer that is reused from batch to batch (handed on every 256 kB, so
 * it stays that small), and the hash reads the bytes. Hashing the batch as one string instead first copies the string
 * of its lines into a flat string of their own: for a batch of a few thousand events that copy cost as much as making
 * the lines.
 */
import { createHash } from "node:crypto"
import type { JournalEvent } from "../src/Services/OrderStore.ts"

export interface EventLogOptions {
  /** Whether the log is kept, to be answered whole by `finish`. */
  readonly keep: boolean
  /** Each batch's lines as text. */
  readonly onLog?: ((lines: string) => void) | undefined
  /**
   * Each batch's lines as UTF-8: a view of the log's buffer, which the next batch writes over, so read it (or copy it)
   * before returning.
   */
  readonly onLogBytes?: ((lines: Buffer) => void) | undefined
}

export interface EventLog {
  /** Writes these events, which follow those written before. */
  readonly write: (events: ReadonlyArray<JournalEvent>) => void
  /** How many events were written. */
  readonly count: () => number
  /** Ends the log: a log with no event is one empty line. Answers the log when kept (else "") and its sha256. */
  readonly finish: () => { readonly log: string; readonly sha256: string }
}

/** Lines are handed on once this many bytes of them are written, so the buffer stays small however large a batch. */
const CHUNK_BYTES = 1 << 18

export const makeEventLog = (options: EventLogOptions): EventLog => {
  const hash = createHash("sha256")
  const kept: Array<Buffer> = []
  let bytes = Buffer.allocUnsafe(1 << 16)
  let count = 0

  /** The buffer with room for `need` bytes, keeping its first `used`. */
  const room = (used: number, need: number) => {
    if (need <= bytes.length) return
    const grown = Buffer.allocUnsafe(Math.max(need, bytes.length * 2))
    bytes.copy(grown, 0, 0, used)
    bytes = grown
  }
  /** Hashes the first `used` bytes, then hands them on and keeps them. */
  const written = (used: number) => {
    const lines = bytes.subarray(0, used)
    hash.update(lines)
    if (options.keep) kept.push(Buffer.from(lines))
    options.onLogBytes?.(lines)
    options.onLog?.(lines.toString("utf8"))
  }

  return {
    write: (events) => {
      if (events.length === 0) return
      let used = 0
      for (const e of events) {
        const line = JSON.stringify({ seq: e.seq, ts: e.ts, kind: e.kind, key: e.key, payload: e.payload })
        // A UTF-16 code unit takes at most three bytes of UTF-8; one more for the newline.
        room(used, used + line.length * 3 + 1)
        used += bytes.write(line, used)
        bytes[used++] = 0x0a
        if (used >= CHUNK_BYTES) {
          written(used)
          used = 0
        }
      }
      count += events.length
      if (used > 0) written(used)
    },
    count: () => count,
    finish: () => {
      if (count === 0) {
        bytes[0] = 0x0a
        written(1)
      }
      return { log: options.keep ? Buffer.concat(kept).toString("utf8") : "", sha256: hash.digest("hex") }
    }
  }
}
