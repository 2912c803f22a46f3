/** The dashboard in a real browser shows a position that settled: in the positions table and the events log. */
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as F from "../../src/Domain/Fixed.ts"
import { UiDirectory } from "../../src/Http/Ui.ts"
import { VenueGateway } from "../../src/Services/VenueGateway.ts"
import type { SimVenue } from "../../src/Venues/SimVenue.ts"
import { OwnerToken, serverPort, testServer } from "../Http/TestServer.ts"
import { apiClient, BROWSER_ARGS, CHROMIUM, requireChromium, SHOTS, skipBrowser } from "./Browser.ts"
// @ts-expect-error: a plain ES module without types
import { buildUi } from "../../scripts/build-ui.mjs"

describe.skipIf(skipBrowser)("a settled position on the dashboard", () => {
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let context: BrowserContext
  let page: Page
  let base = ""
  let owner = ""
  let profile = ""
  let built = ""

  beforeAll(async () => {
    requireChromium()
    built = mkdtempSync(join(tmpdir(), "crossbook-ui-build-"))
    await buildUi(built)
    runtime = ManagedRuntime.make(
      testServer({ simStepMs: 3_600_000 }).pipe(Layer.provide(Layer.succeed(UiDirectory, built)))
    )
    base = `http://127.0.0.1:${await runtime.runPromise(serverPort)}`
    owner = await runtime.runPromise(OwnerToken)
    profile = mkdtempSync(join(tmpdir(), "crossbook-chromium-"))
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: BROWSER_ARGS,
      viewport: { width: 1400, height: 1000 }
    })
    page = context.pages()[0] ?? (await context.newPage())
    page.setDefaultTimeout(10_000)
  }, 60_000)

  afterAll(async () => {
    await context?.close()
    await runtime?.dispose()
    for (const dir of [profile, built]) if (dir !== "") rmSync(dir, { recursive: true, force: true })
  })

  it("shows what the position held, who won and the P&L booked, and the position.settled event", async () => {
    const api = apiClient(base, owner)
    const market = (await api("GET", "/venues/sim/markets?status=open&limit=1")).body.data[0]
    const bought = await api("POST", "/trading/orders", {
      market_id: market.id,
      side: "buy",
      type: "market",
      amount: "4",
      price: "0.99"
    })
    expect(bought.status).toBe(201)
    await page.goto(`${base}/ui/`)
    await page.fill("#token", owner)
    await page.click("#signin button[type=submit]")
    await page.waitForSelector("#trading:not([hidden])")
    await expect.poll(() => page.textContent("#positions")).toContain(market.id)

    await runtime.runPromise(
      Effect.flatMap(VenueGateway, (g) => (g.venue("sim") as SimVenue).resolve(market.id.slice(4), F.ONE))
    )
    const position = (await api("GET", "/trading/positions")).body.data.find((p: any) => p.market_id === market.id)
    expect(position.settled).not.toBeNull()
    const text = `4 YES, YES won: ${position.settled.realized_pnl}`
    await expect.poll(() => page.textContent("#positions")).toContain(text)
    // The side column says so, where the table's narrow view shows it without scrolling.
    const row = page.locator("#positions tr", { hasText: market.id })
    expect(await row.locator("td").nth(2).textContent()).toBe("settled")
    await page.waitForSelector('#events li[data-kind="position.settled"]')
    expect(await page.textContent("#pnl-now")).toContain(`settled ${position.settled.realized_pnl}`)
    await page.screenshot({ path: join(SHOTS, "settled-position.png"), fullPage: true })
  }, 60_000)
})
