/**
 * Tapes: the Arrow tape against the NDJSON one (reading alone, and a whole replay from each), and the heap a replay
 * streaming its tape from disk holds (collected at every percent of its events), on a tape and on one four times as long.
 * Alone: `node --expose-gc bin/run-ts.js scripts/bench/tapes.ts`.
 */
import { Effect } from "effect"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { performance } from "node:perf_hooks"
import { arrowTapeBytes, readArrowTape, writeArrowTapeFile } from "../../sim/ArrowTape.ts"
import { generateTape } from "../../sim/Generator.ts"
import { replay } from "../../sim/Replay.ts"
import { formatTape, parseTape } from "../../sim/Tape.ts"
import { streamTapeFile } from "../../sim/TapeStream.ts"
import { type Figure, ratio, time } from "./common.ts"

const gc = (globalThis as { gc?: () => void }).gc

/** Seconds of one whole replay. */
const replayOnce = async (tape: Parameters<typeof replay>[0]["tape"]) => {
  const start = performance.now()
  await Effect.runPromise(replay({ tape, orders: [], seed: 1, keepLog: false }))
  return (performance.now() - start) / 1000
}

/** The most the heap held over a replay streaming `path` (collected and read at every percent of its events), in MB. */
const replayHeapMb = async (path: string) => {
  gc?.()
  const before = process.memoryUsage().heapUsed
  let peak = before
  await Effect.runPromise(
    replay({
      tape: streamTapeFile(path),
      orders: [],
      seed: 1,
      keepLog: false,
      onProgress: () => {
        gc?.()
        peak = Math.max(peak, process.memoryUsage().heapUsed)
      }
    })
  )
  return (peak - before) / 1e6
}

export const tapeFigures = async (): Promise<Array<Figure>> => {
  const g = generateTape({ seed: 3, markets: 100, durationS: 600 })
  const text = formatTape(g.header, g.events)
  const bytes = arrowTapeBytes(g.header, g.events)
  const events = g.events.length
  const ndjsonRead = time(3, () => void parseTape(text))
  const arrowRead = time(3, () => {
    for (const e of readArrowTape(bytes).events) void e
  })
  // Best of three each after a warm-up, the two taking turns so a busy moment of the machine falls on both alike.
  let ndjsonReplay = Number.POSITIVE_INFINITY
  let arrowReplay = Number.POSITIVE_INFINITY
  for (let i = 0; i < 4; i++) {
    const a = await replayOnce(text)
    const b = await replayOnce(readArrowTape(bytes))
    if (i > 0) {
      ndjsonReplay = Math.min(ndjsonReplay, a)
      arrowReplay = Math.min(arrowReplay, b)
    }
  }

  const dir = mkdtempSync(join(tmpdir(), "crossbook-bench-tapes-"))
  let heaps: Array<{ events: number; mb: number; arrowMb: number }> = []
  try {
    for (const durationS of [600, 2400]) {
      const long = generateTape({ seed: 4, markets: 50, durationS })
      const ndjson = join(dir, `t${durationS}.jsonl`)
      const arrow = join(dir, `t${durationS}.arrow`)
      writeFileSync(ndjson, formatTape(long.header, long.events))
      await writeArrowTapeFile(arrow, long.header, long.events)
      const count = long.events.length
      heaps = [...heaps, { events: count, mb: await replayHeapMb(ndjson), arrowMb: await replayHeapMb(arrow) }]
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const [short, long] = heaps as [(typeof heaps)[0], (typeof heaps)[0]]
  return [
    {
      name: "tape.arrow_read_events_per_s",
      value: Math.round(events / arrowRead),
      unit: "events/s",
      baseline: Math.round(events / ndjsonRead),
      ratio: ratio(ndjsonRead, arrowRead),
      target: "> 1 (reading the Arrow tape beats parsing the NDJSON one)",
      events,
      arrow_bytes: bytes.byteLength,
      ndjson_bytes: Buffer.byteLength(text)
    },
    {
      name: "replay.arrow_inputs_per_s",
      value: Math.round(events / arrowReplay),
      unit: "inputs/s",
      baseline: Math.round(events / ndjsonReplay),
      ratio: ratio(ndjsonReplay, arrowReplay),
      target: "> 1 (a replay from the Arrow tape beats one from the NDJSON text)",
      events
    },
    {
      name: "replay.stream_heap_mb",
      value: Number(Math.max(long.mb, long.arrowMb).toFixed(1)),
      unit: "MB",
      baseline: 64,
      ratio: ratio(Math.max(long.mb, long.arrowMb), 64),
      target: "<= 64 MB whatever the tape's length",
      events: long.events,
      ndjson_mb: Number(long.mb.toFixed(1)),
      arrow_mb: Number(long.arrowMb.toFixed(1)),
      quarter_tape_events: short.events,
      quarter_tape_ndjson_mb: Number(short.mb.toFixed(1)),
      quarter_tape_arrow_mb: Number(short.arrowMb.toFixed(1)),
      gc: gc !== undefined
    }
  ]
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  for (const f of await tapeFigures()) console.log(JSON.stringify(f))
}
