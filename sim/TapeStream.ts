/** Tapes read as streams: one event at a time from text, an NDJSON file or an Arrow file, in bounded memory. */
import { closeSync, fstatSync, openSync, readSync } from "node:fs"
import { StringDecoder } from "node:string_decoder"
import { isArrowTape, readArrowTape } from "./ArrowTape.ts"
import { makeEventParser, parseHeaderLine, type TapeEvent, type TapeHeader } from "./Tape.ts"

/**
 * A tape as a stream: the header, and its events once, in order, validated as they are read (a bad line throws when
 * it is reached). `progress` says how much of the source has been read, from 0 to 1.
 */
export interface TapeStream {
  readonly header: TapeHeader
  readonly events: Iterable<TapeEvent>
  /** The number of events when it is known before reading them. */
  readonly total?: number
  readonly progress: () => number
}

/** Bytes read from a file at a time. */
const CHUNK = 1 << 20

/** The events of a tape's text, parsed one line at a time as they are asked for (no array of lines or events). */
export const streamTapeText = (text: string): TapeStream => {
  let end = text.indexOf("\n")
  const header = parseHeaderLine(end < 0 ? text : text.slice(0, end))
  let at = end < 0 ? text.length : end + 1
  return {
    header,
    progress: () => (text.length === 0 ? 1 : at / text.length),
    events: {
      *[Symbol.iterator]() {
        const parse = makeEventParser(header)
        let n = 1
        while (at < text.length) {
          end = text.indexOf("\n", at)
          if (end < 0) end = text.length
          n += 1
          const line = text.slice(at, end)
          at = end + 1
          yield parse(line, n)
        }
      }
    }
  }
}

/** Lines of a file, read a chunk at a time; the last line need not end in "\n". Closes the file when done. */
function* fileLines(fd: number, read: { bytes: number }): Generator<string> {
  const buffer = Buffer.allocUnsafe(CHUNK)
  const decoder = new StringDecoder("utf8")
  let rest = ""
  try {
    for (;;) {
      const got = readSync(fd, buffer, 0, CHUNK, null)
      read.bytes += got
      if (got === 0) break
      const text = rest + decoder.write(buffer.subarray(0, got))
      let from = 0
      for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n", from)) {
        yield text.slice(from, end)
        from = end + 1
      }
      rest = text.slice(from)
    }
    rest += decoder.end()
    if (rest.length > 0) yield rest
  } finally {
    closeSync(fd)
  }
}

/** An NDJSON tape file as a stream: a megabyte of it in memory at a time, whatever its length. */
export const streamNdjsonFile = (path: string): TapeStream => {
  const fd = openSync(path, "r")
  const size = fstatSync(fd).size
  const read = { bytes: 0 }
  const lines = fileLines(fd, read)
  const first = lines.next()
  if (first.done === true) throw new Error("tape line 1: expected the header")
  const header = parseHeaderLine(first.value)
  return {
    header,
    progress: () => (size === 0 ? 1 : Math.min(1, read.bytes / size)),
    events: {
      *[Symbol.iterator]() {
        const parse = makeEventParser(header)
        let n = 1
        for (const line of { [Symbol.iterator]: () => lines }) yield parse(line, ++n)
      }
    }
  }
}

/** A tape file of either format, told apart by its first bytes: Arrow IPC (`ARROW1`) or NDJSON. */
export const streamTapeFile = (path: string): TapeStream => {
  const fd = openSync(path, "r")
  const head = Buffer.alloc(8)
  const got = readSync(fd, head, 0, 8, 0)
  closeSync(fd)
  return isArrowTape(head.subarray(0, got)) ? readArrowTape(path) : streamNdjsonFile(path)
}

/** A whole tape in memory, from its text or bytes of either format: what a caller that keeps tapes holds. */
export const streamTapeBytes = (bytes: Uint8Array | string): TapeStream =>
  typeof bytes === "string"
    ? streamTapeText(bytes)
    : isArrowTape(bytes)
      ? readArrowTape(bytes)
      : streamTapeText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"))
