/** The columnar tape: the same header and events as the NDJSON tape, as an Arrow IPC file that quant tools read directly. */
import {
  Data,
  Decimal,
  Dictionary,
  Field,
  Int32,
  Int64,
  Int8,
  List,
  makeData,
  Message,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchReader,
  Schema,
  Struct,
  TimestampMillisecond,
  Utf8,
  vectorFromArray,
  type DataType
} from "apache-arrow"
import { closeSync, createWriteStream, fstatSync, openSync, readFileSync, readSync } from "node:fs"
import { once } from "node:events"
import * as F from "../src/Domain/Fixed.ts"
import { formatTapeLine, parseHeaderLine, type TapeEvent, type TapeHeader } from "./Tape.ts"
import type { TapeStream } from "./TapeStream.ts"

/** The schema metadata key that holds the tape's header line, exactly as line 1 of the NDJSON tape. */
export const HEADER_KEY = "crossbook.tape.header"
/** Events in one record batch (the last one may hold fewer). */
export const BATCH_ROWS = 65_536

/** Rows of a batch made into events at a time as a tape is read. */
const CHUNK_ROWS = 1024

const TYPES = ["snapshot", "change", "trade", "status", "quote", "gap"] as const
const SIDES = ["bid", "ask"] as const
const TAKER_SIDES = ["buy", "sell"] as const
const STATUSES = ["open", "closed", "settled"] as const
const RESULTS = ["yes", "no"] as const

const decimal = () => new Decimal(6, 18, 128)
const levelType = () =>
  new List(
    new Field("item", new Struct([new Field("price", decimal(), false), new Field("size", decimal(), false)]), false)
  )
const dict = (id: number, indices: Int8 | Int32 = new Int8()) => new Dictionary(new Utf8(), indices, id, false)

/** The tape's Arrow schema: one column per key of the NDJSON events, null where an event has no such key. */
export const arrowTapeSchema = (header: TapeHeader): Schema =>
  new Schema(
    [
      new Field("type", dict(0), false),
      new Field("ts", new TimestampMillisecond(), false),
      new Field("market", dict(1, new Int32()), false),
      new Field("side", dict(2), true),
      new Field("price", decimal(), true),
      new Field("size", decimal(), true),
      new Field("amount", decimal(), true),
      new Field("taker_side", dict(3), true),
      new Field("bids", levelType(), true),
      new Field("asks", levelType(), true),
      new Field("status", dict(4), true),
      new Field("result", dict(5), true),
      new Field("best_bid", decimal(), true),
      new Field("best_ask", decimal(), true),
      new Field("expected", new Int64(), true),
      new Field("got", new Int64(), true)
    ],
    new Map([[HEADER_KEY, formatTapeLine(header)]])
  )

const TWO32 = 4294967296

/** A column of one batch being filled: validity bits and 32-bit words (a Decimal takes 4, an Int64 2, a key 1). */
class Column {
  readonly valid: Uint8Array
  readonly words: Uint32Array
  nulls = 0
  constructor(
    readonly rows: number,
    readonly width: number
  ) {
    this.valid = new Uint8Array((rows + 7) >> 3)
    this.words = new Uint32Array(rows * width)
  }
  /** A non-negative integer below 2^53 (a Fixed, a ts, a count) at a row. */
  int(row: number, v: number): void {
    this.valid[row >> 3]! |= 1 << (row & 7)
    this.words[row * this.width] = v % TWO32
    if (this.width > 1) this.words[row * this.width + 1] = Math.floor(v / TWO32)
  }
  decimal(row: number, s: string | null | undefined): void {
    if (s === null || s === undefined) this.nulls += 1
    else this.int(row, F.of(s))
  }
  none(): void {
    this.nulls += 1
  }
}

/** Levels of one side of the snapshots of a batch: offsets per row, then the levels' prices and sizes. */
class Levels {
  readonly offsets: Int32Array
  readonly valid: Uint8Array
  nulls = 0
  prices: Array<number> = []
  sizes: Array<number> = []
  constructor(rows: number) {
    this.offsets = new Int32Array(rows + 1)
    this.valid = new Uint8Array((rows + 7) >> 3)
  }
  set(row: number, levels: ReadonlyArray<readonly [string, string]> | undefined): void {
    if (levels === undefined) this.nulls += 1
    else {
      this.valid[row >> 3]! |= 1 << (row & 7)
      for (const [p, s] of levels) {
        this.prices.push(F.of(p))
        this.sizes.push(F.of(s))
      }
    }
    this.offsets[row + 1] = this.prices.length
  }
}

const decimalData = (values: ReadonlyArray<number>) => {
  const words = new Uint32Array(values.length * 4)
  for (let i = 0; i < values.length; i++) {
    words[i * 4] = values[i]! % TWO32
    words[i * 4 + 1] = Math.floor(values[i]! / TWO32)
  }
  return makeData({ type: decimal(), length: values.length, nullCount: 0, data: words })
}

/** Record batches of a tape's events, `rows` at a time. */
export function* arrowTapeBatches(
  header: TapeHeader,
  events: Iterable<TapeEvent>,
  rows = BATCH_ROWS
): Generator<RecordBatch> {
  const schema = arrowTapeSchema(header)
  const marketIndex = new Map(header.markets.map((m, i) => [m.id, i] as const))
  const dictionaries = [TYPES, header.markets.map((m) => m.id), SIDES, TAKER_SIDES, STATUSES, RESULTS].map((values) =>
    vectorFromArray(values as Array<string>, new Utf8())
  )
  let buffer: Array<TapeEvent> = []
  const flush = (): RecordBatch => {
    const n = buffer.length
    const type = new Int8Array(n)
    const ts = new Column(n, 2)
    const market = new Int32Array(n)
    const side = new Column(n, 1)
    const price = new Column(n, 4)
    const size = new Column(n, 4)
    const amount = new Column(n, 4)
    const taker = new Column(n, 1)
    const bids = new Levels(n)
    const asks = new Levels(n)
    const status = new Column(n, 1)
    const result = new Column(n, 1)
    const bestBid = new Column(n, 4)
    const bestAsk = new Column(n, 4)
    const expected = new Column(n, 2)
    const got = new Column(n, 2)
    const key = (c: Column, row: number, values: ReadonlyArray<string>, v: string | undefined) =>
      v === undefined ? c.none() : c.int(row, values.indexOf(v))
    for (let row = 0; row < n; row++) {
      const e = buffer[row]!
      type[row] = TYPES.indexOf(e.type)
      ts.int(row, e.ts)
      market[row] = marketIndex.get(e.market) ?? -1
      if (market[row]! < 0) throw new Error(`market ${e.market} is not in the header`)
      key(side, row, SIDES, e.type === "change" ? e.side : undefined)
      price.decimal(row, e.type === "change" || e.type === "trade" ? e.price : undefined)
      size.decimal(row, e.type === "change" ? e.size : undefined)
      amount.decimal(row, e.type === "trade" ? e.amount : undefined)
      key(taker, row, TAKER_SIDES, e.type === "trade" ? e.taker_side : undefined)
      bids.set(row, e.type === "snapshot" ? e.bids : undefined)
      asks.set(row, e.type === "snapshot" ? e.asks : undefined)
      key(status, row, STATUSES, e.type === "status" ? e.status : undefined)
      key(result, row, RESULTS, e.type === "status" ? e.result : undefined)
      bestBid.decimal(row, e.type === "quote" ? e.best_bid : undefined)
      bestAsk.decimal(row, e.type === "quote" ? e.best_ask : undefined)
      if (e.type === "gap") {
        expected.int(row, e.expected)
        got.int(row, e.got)
      } else {
        expected.none()
        got.none()
      }
    }
    const fields = schema.fields
    const keyData = (i: number, c: Column | Int8Array | Int32Array, dictionary: number) => {
      const t = fields[i]!.type as Dictionary
      const plain = c instanceof Int8Array || c instanceof Int32Array
      const data = plain ? c : t.indices instanceof Int32 ? new Int32Array(c.words) : new Int8Array(c.words)
      return makeData({
        type: t,
        length: n,
        nullCount: plain ? 0 : c.nulls,
        ...(plain ? {} : { nullBitmap: c.valid }),
        data,
        dictionary: dictionaries[dictionary]!
      })
    }
    const wordData = (i: number, c: Column) =>
      makeData({
        type: fields[i]!.type as Decimal,
        length: n,
        nullCount: c.nulls,
        nullBitmap: c.valid,
        data: c.words
      })
    const int64Data = (i: number, c: Column) =>
      makeData({
        type: fields[i]!.type as Int64 | TimestampMillisecond,
        length: n,
        nullCount: c.nulls,
        ...(c.nulls > 0 ? { nullBitmap: c.valid } : {}),
        data: new BigInt64Array(c.words.buffer, 0, n)
      } as never)
    const levelsData = (i: number, l: Levels) => {
      const t = fields[i]!.type as List
      const item = t.children[0]!.type as Struct
      const struct = makeData({
        type: item,
        length: l.prices.length,
        nullCount: 0,
        children: [decimalData(l.prices), decimalData(l.sizes)]
      })
      return makeData({
        type: t,
        length: n,
        nullCount: l.nulls,
        nullBitmap: l.valid,
        valueOffsets: l.offsets,
        child: struct
      })
    }
    const children: Array<Data<DataType>> = [
      keyData(0, type, 0),
      int64Data(1, ts),
      keyData(2, market, 1),
      keyData(3, side, 2),
      wordData(4, price),
      wordData(5, size),
      wordData(6, amount),
      keyData(7, taker, 3),
      levelsData(8, bids),
      levelsData(9, asks),
      keyData(10, status, 4),
      keyData(11, result, 5),
      wordData(12, bestBid),
      wordData(13, bestAsk),
      int64Data(14, expected),
      int64Data(15, got)
    ] as Array<Data<DataType>>
    buffer = []
    return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: n, nullCount: 0, children }))
  }
  for (const e of events) {
    buffer.push(e)
    if (buffer.length >= rows) yield flush()
  }
  if (buffer.length > 0 || rows === Number.POSITIVE_INFINITY) yield flush()
}

/**
 * An IPC file writer that also writes the schema message after the leading magic, as the format describes (the file is
 * the stream format between magic and footer), so a reader can go through a file front to back a batch at a time.
 */
class TapeFileWriter extends RecordBatchFileWriter {
  protected override _writeSchema(schema: Schema): this {
    return super._writeSchema(schema)._writeMessage(Message.from(schema))
  }
}

/** A whole tape as the bytes of an Arrow IPC file, in memory, `rows` events a batch. */
export const arrowTapeBytes = (header: TapeHeader, events: Iterable<TapeEvent>, rows = BATCH_ROWS): Uint8Array => {
  const writer = new TapeFileWriter()
  writer.reset(undefined, arrowTapeSchema(header))
  for (const batch of arrowTapeBatches(header, events, rows)) writer.write(batch)
  return writer.finish().toUint8Array(true)
}

/** Writes a tape as an Arrow IPC file a batch at a time, so a tape of any length takes a batch's memory. */
export const writeArrowTapeFile = async (path: string, header: TapeHeader, events: Iterable<TapeEvent>) => {
  const out = createWriteStream(path)
  const writer = new TapeFileWriter()
  writer.reset(undefined, arrowTapeSchema(header))
  const piped = writer.toNodeStream()
  piped.pipe(out)
  for (const batch of arrowTapeBatches(header, events)) {
    writer.write(batch)
    // Let the file take the batch before the next one is made.
    await new Promise((done) => setImmediate(done))
    if (out.writableLength > 0) await once(out, "drain")
  }
  writer.finish()
  writer.close()
  await once(out, "finish")
}

const MAGIC = [0x41, 0x52, 0x52, 0x4f, 0x57, 0x31] // "ARROW1"

/** Whether bytes begin an Arrow IPC file (`ARROW1`) or stream (a message's continuation marker). */
export const isArrowTape = (bytes: Uint8Array): boolean =>
  (bytes.length >= 6 && MAGIC.every((b, i) => bytes[i] === b)) ||
  (bytes.length >= 4 && bytes[0] === 0xff && bytes[1] === 0xff && bytes[2] === 0xff && bytes[3] === 0xff)

/**
 * The IPC stream inside the bytes: a file is its 8-byte magic, the stream of its schema and batches, then a footer the
 * stream's end marker keeps the reader from, so a file reads a batch at a time like a stream.
 */
function* streamChunks(source: string, read: { bytes: number; size: number }): Generator<Uint8Array> {
  const fd = openSync(source, "r")
  try {
    read.size = fstatSync(fd).size
    let first = true
    for (;;) {
      const chunk = new Uint8Array(1 << 20)
      const got = readSync(fd, chunk, 0, chunk.length, null)
      if (got === 0) return
      read.bytes += got
      const bytes = chunk.subarray(0, got)
      yield first && MAGIC.every((b, i) => bytes[i] === b) ? bytes.subarray(8) : bytes
      first = false
    }
  } finally {
    closeSync(fd)
  }
}

/** Refuses the event numbered `row` (from 1), or the tape's column when `row` is 0. */
const fail = (row: number, what: string): never => {
  throw new Error(row === 0 ? `arrow tape: ${what}` : `arrow tape event ${row}: ${what}`)
}

const ALL = () => true
const NONE = () => null
/** A column's validity bitmap, or undefined when every row holds a value. */
const nullBits = (data: Data): Uint8Array | undefined => {
  const bits = data.nullBitmap
  return data.nullCount === 0 || bits === undefined || bits.length === 0 ? undefined : bits
}
/** Whether row `i` of a column whose rows start at bit `at` of its bitmap holds a value. */
const present = (bits: Uint8Array, at: number, i: number): boolean =>
  (bits[(at + i) >> 3]! & (1 << ((at + i) & 7))) !== 0
/** Whether a row of a column holds a value. */
const validity = (data: Data): ((i: number) => boolean) => {
  const bits = nullBits(data)
  if (bits === undefined) return ALL
  const at = data.offset
  return (i) => present(bits, at, i)
}

/**
 * A key column's values as the tape's strings, `null` for a null, read by row (checked against the dictionary it must
 * hold, every row's key at once: no array of strings is made for the batch).
 */
const keys = (data: Data, values: ReadonlyArray<string>, name: string): ((i: number) => string | null) => {
  // A column no row of the batch uses (most of them, for most events) is null throughout.
  if (data.nullCount === data.length) return NONE
  const dictionary = data.dictionary
  const words = dictionary === undefined ? [] : (dictionary.toArray() as Array<string>)
  const mapping = words.map((w) => (values.includes(w) ? w : fail(0, `${name} "${w}" is not allowed`)))
  const indices = data.values as Int8Array | Int32Array
  // The bitmap read in the loop, not through a closure per row.
  const bits = nullBits(data)
  const at = data.offset
  for (let i = 0; i < data.length; i++) {
    if ((bits === undefined || present(bits, at, i)) && mapping[indices[i]!] === undefined) {
      fail(0, `${name} key out of range`)
    }
  }
  if (bits === undefined) return (i) => mapping[indices[i]!]!
  return (i) => (present(bits, at, i) ? mapping[indices[i]!]! : null)
}

/** A column of nulls as {@link ints} reads them, as long as the longest batch a tape's writer makes. */
const NULLS = new Float64Array(BATCH_ROWS).fill(-1)

/** A column of 64-bit integers or 128-bit decimals as numbers (-1 for null); a value beyond 2^53 is refused. */
const ints = (data: Data, width: number, name: string): Float64Array => {
  // A column no row of the batch uses (most of them, for most events) is null throughout: it reads as the shared
  // column of nulls, which nothing writes to.
  if (data.nullCount === data.length && data.length <= NULLS.length) return NULLS
  const out = new Float64Array(data.length)
  const v = data.values as { buffer: ArrayBuffer; byteOffset: number; length: number; BYTES_PER_ELEMENT: number }
  const words = new Uint32Array(v.buffer, v.byteOffset, data.length * width)
  // The bitmap read in the loop, not through a closure per row: this runs for every row of nine columns.
  const bits = nullBits(data)
  const at = data.offset
  for (let i = 0; i < data.length; i++) {
    if (bits !== undefined && !present(bits, at, i)) {
      out[i] = -1
      continue
    }
    const hi = words[i * width + 1]!
    if (hi >= 0x200000 || (width === 4 && (words[i * 4 + 2] !== 0 || words[i * 4 + 3] !== 0))) {
      fail(0, `${name} holds a value that is negative or too large`)
    }
    out[i] = hi * TWO32 + words[i * width]!
  }
  return out
}

/** Canonical text of Fixed values, kept for the few thousand prices and sizes a tape repeats. */
const makeFormat = () => {
  const seen = new Map<number, string>()
  return (v: number): string => {
    let s = seen.get(v)
    if (s === undefined) {
      s = F.format(v as F.Fixed)
      if (seen.size < 100_000) seen.set(v, s)
    }
    return s
  }
}

const COLUMNS = arrowTapeSchema({ type: "header", version: 1, source: "generated", markets: [] }).fields

/**
 * One batch's rows as events, checked for what the NDJSON parser checks: its columns are read once, and `rows(from, to)`
 * makes the events of those rows when they are wanted, so a batch's events live as long as the replay keeps them, not
 * as long as the batch.
 */
const rowsOf = (
  batch: RecordBatch,
  header: TapeHeader,
  state: { lastTs: number; row: number },
  text: (v: number) => string
): ((from: number, to: number) => Array<TapeEvent>) => {
  const data = batch.data.children
  const n = batch.numRows
  const base = state.row
  const col = (name: string) => data[COLUMNS.findIndex((f) => f.name === name)]!
  const type = keys(col("type"), TYPES, "type")
  const ts = ints(col("ts"), 2, "ts")
  const market = keys(
    col("market"),
    header.markets.map((m) => m.id),
    "market"
  )
  const side = keys(col("side"), SIDES, "side")
  const price = ints(col("price"), 4, "price")
  const size = ints(col("size"), 4, "size")
  const amount = ints(col("amount"), 4, "amount")
  const taker = keys(col("taker_side"), TAKER_SIDES, "taker_side")
  const status = keys(col("status"), STATUSES, "status")
  const result = keys(col("result"), RESULTS, "result")
  const bestBid = ints(col("best_bid"), 4, "best_bid")
  const bestAsk = ints(col("best_ask"), 4, "best_ask")
  const expected = ints(col("expected"), 2, "expected")
  const got = ints(col("got"), 2, "got")
  const levelsOf = (name: string) => {
    const d = col(name)
    const offsets = d.valueOffsets as Int32Array
    const struct = d.children[0]!
    const p = ints(struct.children[0]!, 4, `${name} price`)
    const s = ints(struct.children[1]!, 4, `${name} size`)
    const valid = validity(d)
    return (i: number, falling: boolean): Array<readonly [string, string]> | undefined => {
      if (!valid(i)) return undefined
      const out: Array<readonly [string, string]> = []
      let last = -1
      for (let k = offsets[i]!; k < offsets[i + 1]!; k++) {
        const pk = p[k]!
        const sk = s[k]!
        if (!(pk > 0 && pk < F.SCALE) || !(sk > 0)) fail(base + i, `${name} level out of range`)
        if (last >= 0 && (falling ? pk >= last : pk <= last)) fail(base + i, `${name} must be best first`)
        last = pk
        out.push([text(pk), text(sk)])
      }
      return out
    }
  }
  const bids = levelsOf("bids")
  const asks = levelsOf("asks")
  const isPrice = (v: number) => v > 0 && v < F.SCALE
  const rows = (from: number, to: number): Array<TapeEvent> => {
    const out: Array<TapeEvent> = []
    for (let i = from; i < to; i++) {
      const row = base + i
      const t = ts[i]!
      const m = market(i) ?? fail(row, "no market")
      if (t < state.lastTs) fail(row, `ts ${t} is before the previous event's ${state.lastTs}`)
      state.lastTs = t
      switch (type(i)) {
        case "change": {
          if (!isPrice(price[i]!) || size[i]! < 0 || side(i) === null) fail(row, "a change needs side, price and size")
          out.push({
            type: "change",
            ts: t,
            market: m,
            side: side(i) as "bid" | "ask",
            price: text(price[i]!),
            size: text(size[i]!)
          })
          break
        }
        case "trade": {
          if (!isPrice(price[i]!) || !(amount[i]! > 0) || taker(i) === null)
            fail(row, "a trade needs price, a positive amount and taker_side")
          out.push({
            type: "trade",
            ts: t,
            market: m,
            price: text(price[i]!),
            amount: text(amount[i]!),
            taker_side: taker(i) as "buy" | "sell"
          })
          break
        }
        case "snapshot": {
          const b = bids(i, true)
          const a = asks(i, false)
          if (b === undefined || a === undefined) fail(row, "a snapshot needs bids and asks")
          out.push({ type: "snapshot", ts: t, market: m, bids: b!, asks: a! })
          break
        }
        case "status": {
          const s = status(i) ?? fail(row, "a status needs status")
          const r = result(i)
          if (r !== null && s !== "settled") fail(row, "result is only allowed with status settled")
          out.push(
            r === null
              ? { type: "status", ts: t, market: m, status: s as "open" }
              : { type: "status", ts: t, market: m, status: "settled", result: r as "yes" | "no" }
          )
          break
        }
        case "quote": {
          const bb = bestBid[i]!
          const ba = bestAsk[i]!
          if ((bb >= 0 && !isPrice(bb)) || (ba >= 0 && !isPrice(ba))) fail(row, "a quote's prices lie in (0, 1)")
          out.push({
            type: "quote",
            ts: t,
            market: m,
            best_bid: bb < 0 ? null : text(bb),
            best_ask: ba < 0 ? null : text(ba)
          })
          break
        }
        case "gap": {
          const e = expected[i]!
          const g = got[i]!
          if (e < 0 || g < 0 || e === g) fail(row, "a gap needs expected ≠ got")
          out.push({ type: "gap", ts: t, market: m, expected: e, got: g })
          break
        }
        default:
          fail(row, "no type")
      }
    }
    return out
  }
  state.row += n
  return rows
}

/**
 * An Arrow tape (a file's path, or its bytes) as a stream of events, a batch in memory at a time. The header comes from
 * the schema's metadata and is validated as line 1 is; the columns must be those {@link arrowTapeSchema} gives.
 */
export const readArrowTape = (source: string | Uint8Array): TapeStream => {
  const read = { bytes: 0, size: 0 }
  const open = () => {
    // Bytes in memory are read through the file's footer; a file on disk front to back, a batch at a time (a file
    // without the schema message ahead of its batches, as some writers leave it, is read whole instead).
    if (typeof source !== "string") {
      read.size = read.bytes = source.byteLength
      return RecordBatchReader.from(source).open()
    }
    try {
      return RecordBatchReader.from(streamChunks(source, read)).open()
    } catch {
      const bytes = readFileSync(source)
      read.size = read.bytes = bytes.byteLength
      return RecordBatchReader.from(bytes).open()
    }
  }
  let reader: RecordBatchReader
  try {
    reader = open()
  } catch (e) {
    throw new Error(`not an Arrow tape: ${e instanceof Error ? e.message : String(e)}`)
  }
  const schema = reader.schema
  if (schema === undefined || schema === null) throw new Error("not an Arrow tape: no schema")
  const line = schema.metadata.get(HEADER_KEY)
  if (line === undefined) throw new Error(`not an Arrow tape: the schema has no ${HEADER_KEY}`)
  const header = parseHeaderLine(line)
  const names = schema.fields.map((f) => `${f.name}:${String(f.type)}`)
  const wanted = COLUMNS.map((f) => `${f.name}:${String(f.type)}`)
  if (names.join(",") !== wanted.join(",")) {
    throw new Error(`not an Arrow tape of version 1: columns ${names.join(", ")} (expected ${wanted.join(", ")})`)
  }
  return {
    header,
    progress: () => (read.size === 0 ? 1 : Math.min(1, read.bytes / read.size)),
    events: {
      *[Symbol.iterator]() {
        const state = { lastTs: -1, row: 1 }
        const text = makeFormat()
        for (const batch of reader) {
          const n = batch.numRows
          if (n === 0) continue
          const rows = rowsOf(batch as RecordBatch, header, state, text)
          for (let from = 0; from < n; from += CHUNK_ROWS) yield* rows(from, Math.min(n, from + CHUNK_ROWS))
        }
      }
    }
  }
}
