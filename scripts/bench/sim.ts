/**
 * The simulator's market makers: the tape generator's events per second against bare books taking the same events,
 * and one step of the embedded sim venue's 24 markets against the generator making a step of as many markets. Both
 * were once timed inside tests; a figure of speed belongs here, beside its baseline.
 */
import { performance } from "node:perf_hooks"
import { generateTape } from "../../sim/Generator.ts"
import { formatTape } from "../../sim/Tape.ts"
import { SimExchange } from "../../src/Venues/Sim/Exchange.ts"
import { applyToBareBooks, type Figure, ratio, time } from "./common.ts"

const START = Date.UTC(2026, 11, 1, 14, 0, 0)
/** The embedded venue's catalog: 24 markets, each stepped once a second. */
const MARKETS = 24
const STEPS = 3_000

export const simFigures = (): ReadonlyArray<Figure> => {
  // About 200,000 events: ten markets over 4,000 seconds.
  const options = { seed: 3, markets: 10, durationS: 4_000 }
  const generated = generateTape(options)
  const events = generated.events.length
  const generating = time(3, () => void generateTape(options))
  const applying = time(3, () => applyToBareBooks(generated.events))
  const formatting = time(3, () => void formatTape(generated.header, generated.events))

  // The sim venue's steps, each of all its markets, on a warm exchange (its first 200 steps untimed); best of three.
  let bestStep = Number.POSITIVE_INFINITY
  for (let round = 0; round < 4; round++) {
    const exchange = new SimExchange({ seed: 1, startMs: START, stepMs: 1000 })
    exchange.advanceTo(START + 200_000)
    const from = performance.now()
    exchange.advanceTo(START + 200_000 + STEPS * 1000)
    if (round > 0) bestStep = Math.min(bestStep, (performance.now() - from) / 1000)
  }
  // The generator making as many market steps: 24 markets for the same number of seconds.
  const generatorSteps = time(3, () => void generateTape({ seed: 1, markets: MARKETS, durationS: STEPS, stepMs: 1000 }))

  return [
    {
      name: "sim.generator_events_per_s",
      value: Math.round(events / generating),
      unit: "events/s",
      baseline: Math.round(events / applying),
      ratio: ratio(applying, generating),
      events,
      formatted_events_per_s: Math.round(events / formatting)
    },
    {
      name: "sim.exchange_step_us",
      value: Number(((bestStep * 1e6) / STEPS).toFixed(1)),
      unit: "µs",
      baseline: Number(((generatorSteps * 1e6) / STEPS).toFixed(1)),
      ratio: ratio(bestStep, generatorSteps),
      markets: MARKETS,
      steps: STEPS
    }
  ]
}
