/** A quiet parent's summary: read back, it files the parent exactly as its state would, or not at all. */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import type { Band, Watch } from "../../src/Engine/Core.ts"
import { REGISTRY } from "../../src/Engine/Registry.ts"
import type { Driver, Runtime } from "../../src/Engine/Runtime.ts"
import { readSummary, summaryOf } from "../../src/Engine/Summary.ts"

const bound = fc.oneof(
  fc.integer({ min: -2_000_000, max: 2_000_000 }),
  fc.constantFrom(Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)
)
const band: fc.Arbitrary<Band> = fc
  .record({
    ref: fc.constantFrom("bid" as const, "ask" as const, "mid" as const, "last" as const),
    low: bound,
    high: bound,
    missing: fc.boolean(),
    lazy: fc.boolean()
  })
  .map(({ lazy, ...b }) => (lazy ? { ...b, lazy: true } : b))
const watch: fc.Arbitrary<Watch> = fc.oneof(fc.constant("all" as const), fc.array(band, { maxLength: 4 }))

/** A driver whose one type watches what the test says. */
const driverWatching = (w: Watch) =>
  ({
    registry: { probe: { ...REGISTRY.stop_market, core: { ...REGISTRY.stop_market.core, watch: () => w } } }
  }) as unknown as Driver

const quiet = (over: Partial<Runtime> = {}) =>
  ({
    id: "mo_000001",
    type: "probe",
    marketId: "kalshi:KX-25DEC31-T1",
    spec: {},
    params: {},
    state: {},
    children: [],
    timers: [],
    ending: null,
    done: false,
    expiresAt: null,
    ...over
  }) as unknown as Runtime

describe("parent summaries", () => {
  it("read back give the type, market, bands (lazy ones apart) and due times the state gives", () => {
    fc.assert(
      fc.property(
        watch,
        fc.option(fc.integer({ min: 0, max: 4_000_000_000_000 }), { nil: null }),
        fc.array(fc.integer({ min: 0, max: 4_000_000_000_000 }), { maxLength: 3 }),
        (w, expiresAt, ats) => {
          const rt = quiet({ expiresAt, timers: ats.map((at, i) => ({ timer: `t${i}`, at })) })
          const summary = readSummary(summaryOf(driverWatching(w), rt)!)!
          expect(summary.type).toBe("probe")
          expect(summary.marketId).toBe(rt.marketId)
          expect(summary.watch).toEqual(w === "all" ? "all" : [...w])
          const lazy = w === "all" ? [] : w.filter((b) => b.lazy === true)
          expect(summary.lazy).toEqual(lazy.length === 0 ? undefined : lazy)
          expect(summary.due).toEqual([...(expiresAt === null ? [] : [expiresAt]), ...ats])
        }
      )
    )
  })

  it("are not written for a parent a start must read whole", () => {
    const d = driverWatching([])
    expect(summaryOf(d, quiet({ ending: "canceled" }))).toBeNull()
    expect(summaryOf(d, quiet({ done: true }))).toBeNull()
    expect(summaryOf(d, quiet({ children: [{ status: "live" }] as never }))).toBeNull()
    expect(summaryOf(d, quiet({ members: [] }))).toBeNull()
    expect(summaryOf(d, quiet())).not.toBeNull()
  })

  it("of another version, or garbled, are not read", () => {
    const text = summaryOf(driverWatching([{ ref: "bid", low: 5, high: Infinity, missing: false }]), quiet())!
    expect(readSummary(text)).toBeDefined()
    const [, ...rest] = text.split("\t")
    expect(readSummary(["0.0.0-other", ...rest].join("\t"))).toBeUndefined()
    expect(readSummary(text.replace("bid", "bidd"))).toBeUndefined()
    expect(readSummary(text.replace(" 5 ", " x "))).toBeUndefined()
    expect(readSummary(`${text}\t`)).toBeUndefined()
    expect(readSummary("")).toBeUndefined()
  })
})
