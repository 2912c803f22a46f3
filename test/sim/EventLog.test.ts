/** The replay's event log: one JSON line per journal event, whatever the text, hashed as the lines' UTF-8. */
import { createHash } from "node:crypto"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { makeEventLog } from "../../sim/EventLog.ts"
import type { JournalEvent } from "../../src/Services/OrderStore.ts"

/** Events with any text in their keys and payloads (other alphabets, emoji, lone surrogates, quotes, newlines). */
const text = fc.string({ unit: "binary", maxLength: 40 })
const payload = fc.oneof(
  fc.dictionary(text, fc.oneof(text, fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 6 }),
  // Lines longer than the buffer the log starts with.
  fc.record({
    note: fc
      .tuple(fc.string({ unit: "grapheme", minLength: 1, maxLength: 8 }), fc.integer({ min: 3_000, max: 12_000 }))
      .map(([piece, times]) => piece.repeat(times))
  })
)
const batches = fc.array(fc.array(fc.record({ ts: fc.nat(), kind: text, key: text, payload }), { maxLength: 30 }), {
  maxLength: 6
})

/** The log as its lines' text: what the replay has always written. */
const expected = (events: ReadonlyArray<JournalEvent>) =>
  events.length === 0
    ? "\n"
    : events
        .map((e) => JSON.stringify({ seq: e.seq, ts: e.ts, kind: e.kind, key: e.key, payload: e.payload }) + "\n")
        .join("")

describe("event log", () => {
  it("is each event's JSON line in order; the hash is of its UTF-8; text and bytes handed on make the same log", () => {
    fc.assert(
      fc.property(batches, (raw) => {
        let seq = 0
        const written = raw.map((batch) => batch.map((e): JournalEvent => ({ ...e, seq: ++seq })))
        const texts: Array<string> = []
        const bytes: Array<Buffer> = []
        const log = makeEventLog({
          keep: true,
          onLog: (lines) => texts.push(lines),
          onLogBytes: (lines) => bytes.push(Buffer.from(lines))
        })
        for (const batch of written) log.write(batch)
        const all = written.flat()
        const want = expected(all)
        const done = log.finish()
        expect(done.log).toBe(want)
        expect(texts.join("")).toBe(want)
        expect(Buffer.concat(bytes).toString("utf8")).toBe(want)
        expect(done.sha256).toBe(createHash("sha256").update(want, "utf8").digest("hex"))
        expect(log.count()).toBe(all.length)
      }),
      { numRuns: 150 }
    )
  })

  it("keeps nothing unless asked, and hashes the same", () => {
    const events: Array<JournalEvent> = [
      { seq: 1, ts: 5, kind: "order.accepted", key: "o_1", payload: { market: "Ünïcode — 市場 🚀" } },
      { seq: 2, ts: 6, kind: "fill.new", key: "f_1", payload: { price: "0.35" } }
    ]
    const kept = makeEventLog({ keep: true })
    const hashed = makeEventLog({ keep: false })
    kept.write(events)
    hashed.write(events)
    const a = kept.finish()
    const b = hashed.finish()
    expect(b.log).toBe("")
    expect(b.sha256).toBe(a.sha256)
    expect(a.log).toBe(expected(events))
  })
})
