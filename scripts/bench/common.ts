/** What every benchmark shares: the figure it prints, how it times a run, and the command built as it ships. */
import { join } from "node:path"
import { performance } from "node:perf_hooks"
import { buildCli } from "../build.ts"
import type { TapeEvent } from "../../sim/Tape.ts"
import { TapeBook } from "../../sim/TapeBook.ts"

export interface Figure {
  readonly name: string
  readonly value: number
  readonly unit: string
  readonly baseline: number
  readonly ratio: number
  readonly target?: string
  readonly [extra: string]: unknown
}

/** Best of `rounds` timed runs after one warm-up; answers seconds. */
export const time = (rounds: number, run: () => void): number => {
  run()
  let best = Number.POSITIVE_INFINITY
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    run()
    best = Math.min(best, (performance.now() - start) / 1000)
  }
  return best
}

/** CPU seconds this process has used (every thread: the collector's helpers count too). */
export const cpuSeconds = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

/**
 * Best of `rounds` runs after one warm-up, on the wall clock and in CPU time (each the least seen). The CPU figure
 * moves less when other processes share the machine: a ratio of two of them compares across loaded runs.
 */
export const timeBoth = (rounds: number, run: () => void): { readonly wall: number; readonly cpu: number } => {
  run()
  let wall = Number.POSITIVE_INFINITY
  let cpu = Number.POSITIVE_INFINITY
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    const c = cpuSeconds()
    run()
    cpu = Math.min(cpu, cpuSeconds() - c)
    wall = Math.min(wall, (performance.now() - start) / 1000)
  }
  return { wall, cpu }
}

/** Best of `rounds` timed runs of an asynchronous job after one warm-up; answers seconds. */
export const timeAsync = async (rounds: number, run: () => Promise<void>): Promise<number> => {
  await run()
  let best = Number.POSITIVE_INFINITY
  for (let i = 0; i < rounds; i++) {
    const start = performance.now()
    await run()
    best = Math.min(best, (performance.now() - start) / 1000)
  }
  return best
}

/** The baseline of the tape benches: each event applied to a bare book of its market, and nothing else. */
export const applyToBareBooks = (events: Iterable<TapeEvent>): Map<string, TapeBook> => {
  const books = new Map<string, TapeBook>()
  for (const e of events) {
    let book = books.get(e.market)
    if (book === undefined) books.set(e.market, (book = new TapeBook()))
    book.apply(e)
  }
  return books
}

export const ratio = (value: number, baseline: number): number => Number((value / baseline).toFixed(4))

let built: Promise<string> | undefined

/**
 * The command line built from the current sources into dist/, as `npm run build` leaves it (once per bench run);
 * answers the folder. What ships is this build, not the sources run through tsx, whose loader makes every function
 * set its own name as it is created.
 */
export const builtCli = (): Promise<string> => {
  const dist = join(import.meta.dirname, "../../dist")
  built ??= buildCli(dist).then(() => dist)
  return built
}
