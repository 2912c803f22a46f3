/** The sweep's page opened in chromium: offline, a table sorted by the column clicked, chosen runs' curves in a chart. */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, it } from "vitest"
import { isFailure, type JobResult, runJob } from "../../sim/Sweep/Job.ts"
import { renderSweep } from "../../sim/Sweep/Report.ts"
import { expandJobs, type SweepSpec } from "../../sim/Sweep/Spec.ts"
import { rank } from "../../sim/Sweep/Sweep.ts"
import { SHOTS, skipBrowser, useBrowser } from "./Browser.ts"

const STRATEGY = resolve(import.meta.dirname, "../../sim/examples/bracket-maker.ts")

describe.skipIf(skipBrowser)("the sweep page in a browser", () => {
  const browser = useBrowser("crossbook-sweep-page-", { width: 1200, height: 900 })

  it("sorts by the column clicked and draws the chosen runs", async () => {
    const spec = {
      strategy: "bracket-maker.ts",
      params: { take_ticks: [1, 2, 3] },
      seeds: [1, 2],
      metric: "net",
      generate: { markets: 1, duration_s: 240 }
    } as unknown as SweepSpec
    const jobs = expandJobs(spec, STRATEGY, undefined)
    const outcomes = await Effect.runPromise(Effect.forEach(jobs, (job) => runJob(job)))
    const results = outcomes.filter((o): o is JobResult => !isFailure(o))
    expect(results).toHaveLength(6)
    const file = join(browser.dir, "sweep.html")
    writeFileSync(file, renderSweep({ spec, outcomes, ranked: rank(results, "net") }))
    const page = browser.context.pages()[0] ?? (await browser.context.newPage())
    const requests: Array<string> = []
    const errors: Array<string> = []
    page.on("request", (r) => requests.push(r.url()))
    page.on("pageerror", (e) => errors.push(String(e)))
    await page.goto(`file://${file}`)
    await page.waitForSelector("#equity .uplot canvas")
    expect(errors).toEqual([])
    expect(requests.filter((u) => !u.startsWith("file:") && !u.startsWith("data:"))).toEqual([])
    expect(await page.locator("#runs tbody tr").count()).toBe(6)
    expect(await page.locator("#runs tbody tr svg polyline").count()).toBe(6)
    // The five best runs are drawn at first; clicking the sixth adds its curve.
    expect(await page.locator("#equity .u-legend .u-series").count()).toBe(1 + 5)
    const net = (await page.locator("#runs thead th").allTextContents()).indexOf("net")
    expect(net).toBeGreaterThan(0)
    const column = async () =>
      (await page.locator(`#runs tbody tr td:nth-child(${net + 1})`).allTextContents()).map(Number)
    // As the page says, ranked by net before any click: the best first.
    const ranked = await column()
    expect(ranked).toEqual([...ranked].sort((a, b) => b - a))
    expect(await page.locator("#runs tbody tr td:first-child").allTextContents()).toEqual([
      "1",
      "2",
      "3",
      "4",
      "5",
      "6"
    ])
    await page.locator("#runs thead th", { hasText: /^net$/ }).click()
    const down = await column()
    expect(down).toEqual([...down].sort((a, b) => b - a))
    await page.locator("#runs thead th", { hasText: /^net$/ }).click()
    const up = await column()
    expect(up).toEqual([...up].sort((a, b) => a - b))
    // Clicking the run not drawn yet adds its curve.
    expect(await page.locator("#runs tbody tr:not(.chosen)").count()).toBe(1)
    await page.locator("#runs tbody tr:not(.chosen)").click()
    expect(await page.locator("#equity .u-legend .u-series").count()).toBe(1 + 6)
    expect(await page.locator("#runs tbody tr.chosen").count()).toBe(6)
    await page.screenshot({ path: join(SHOTS, "sweep.png"), fullPage: true })
  }, 120_000)
})
