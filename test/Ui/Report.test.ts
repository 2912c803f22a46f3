/** The backtest report opened in chromium: one file that draws both charts with uPlot and shows values on hover. */
import { Effect } from "effect"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import bracketMaker from "../../sim/examples/bracket-maker.ts"
import { backtest } from "../../sim/Backtest.ts"
import { generateTape } from "../../sim/Generator.ts"
import { renderReport } from "../../sim/Report.ts"
import { strategyOf } from "../../sim/Strategy.ts"
import { formatTape } from "../../sim/Tape.ts"
import { SHOTS, skipBrowser, useBrowser } from "./Browser.ts"

describe.skipIf(skipBrowser)("the backtest report in a browser", () => {
  const browser = useBrowser("crossbook-report-", { width: 1000, height: 900 })

  it("draws the equity and the fills with uPlot, offline, with values on hover", async () => {
    const generated = generateTape({ seed: 4, markets: 2, durationS: 600 })
    const report = await Effect.runPromise(
      backtest({ tape: formatTape(generated.header, generated.events), strategy: strategyOf(bracketMaker), seed: 4 })
    )
    const file = join(browser.dir, "report.html")
    writeFileSync(file, renderReport(report))
    const page = browser.context.pages()[0] ?? (await browser.context.newPage())
    const requests: Array<string> = []
    const errors: Array<string> = []
    page.on("request", (r) => requests.push(r.url()))
    page.on("pageerror", (e) => errors.push(String(e)))
    await page.goto(`file://${file}`)
    await page.waitForSelector("#prices .uplot canvas")
    expect(await page.locator(".uplot").count()).toBe(2)
    expect(errors).toEqual([])
    expect(requests.filter((u) => !u.startsWith("file:") && !u.startsWith("data:"))).toEqual([])
    // Hovering the middle of the equity chart shows the equity there in the legend.
    const over = page.locator("#equity .u-over")
    const box = (await over.boundingBox())!
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
    const value = page.locator("#equity .u-legend .u-series:nth-child(2) .u-value")
    await expect.poll(async () => Number(await value.textContent())).toBeGreaterThan(0)
    // Dragging across it zooms in: the legend's time moves with the cursor over a narrower span.
    await page.mouse.move(box.x + box.width * 0.2, box.y + 20)
    await page.mouse.down()
    await page.mouse.move(box.x + box.width * 0.4, box.y + 20, { steps: 5 })
    await page.mouse.up()
    await page.screenshot({ path: join(SHOTS, "report.png"), fullPage: true })
  })
})
