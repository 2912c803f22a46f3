/** The dashboard in a real browser shows a Polymarket position that settled as redeemable, then as redeemed. */
import { Effect, Layer, ManagedRuntime } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UiDirectory } from "../../src/Http/Ui.ts"
import { signerOf } from "../../src/Venues/Polymarket/Signing.ts"
import { serverPort } from "../Http/TestServer.ts"
import { CONDITION, type FakePolymarket, startFake } from "../Venues/Polymarket/Fake.ts"
import { Owner, serveVenues } from "../Venues/ServeVenues.ts"
import { apiClient, launchBrowser, requireChromium, SHOTS, skipBrowser } from "./Browser.ts"
// @ts-expect-error: a plain ES module without types
import { buildUi } from "../../scripts/build-ui.mjs"

const KEY = "0x" + "3c".repeat(32)
const M = `polymarket:${CONDITION}`

describe.skipIf(skipBrowser)("a Polymarket position waiting to be redeemed on the dashboard", () => {
  let fake: FakePolymarket
  let runtime: ManagedRuntime.ManagedRuntime<any, any>
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
  let page: Page
  let base = ""
  let owner = ""
  let built = ""

  beforeAll(async () => {
    requireChromium()
    built = mkdtempSync(join(tmpdir(), "crossbook-ui-build-"))
    await buildUi(built)
    fake = await startFake(signerOf(KEY).address)
    const env = {
      POLYMARKET_CLOB_URL: fake.url,
      POLYMARKET_GAMMA_URL: fake.url,
      POLYMARKET_DATA_URL: fake.url,
      POLYMARKET_WS_URL: fake.wsUrl,
      POLYMARKET_PRIVATE_KEY: KEY
    }
    runtime = ManagedRuntime.make(
      serveVenues({
        list: ["sim", "polymarket"],
        env: Effect.succeed(env),
        sim: { seed: 7, markets: 4 },
        reconcileEveryMs: 300
      }).pipe(Layer.provide(Layer.succeed(UiDirectory, built)))
    )
    base = `http://127.0.0.1:${await runtime.runPromise(serverPort)}`
    owner = await runtime.runPromise(Owner)
    browser = await launchBrowser("crossbook-chromium-", { width: 1400, height: 1000 })
    page = browser.context.pages()[0] ?? (await browser.context.newPage())
    page.setDefaultTimeout(10_000)
  }, 60_000)

  afterAll(async () => {
    await browser?.close()
    await runtime?.dispose()
    await fake?.close()
    if (built !== "") rmSync(built, { recursive: true, force: true })
  })

  it("shows the amount to redeem in the settled column until the wallet redeems, then 'redeemed'", async () => {
    const api = apiClient(base, owner)
    const bought = await api("POST", "/trading/orders", {
      account: "polymarket:default",
      market_id: M,
      side: "buy",
      type: "limit",
      amount: "5",
      price: "0.6",
      time_in_force: "ioc"
    })
    expect(bought.status).toBe(201)
    await expect.poll(async () => (await api("GET", `/trading/orders/${bought.body.id}`)).body.filled).toBe("5")
    await page.goto(`${base}/ui/`)
    await page.fill("#token", owner)
    await page.click("#signin button[type=submit]")
    await page.waitForSelector("#trading:not([hidden])")
    await page.selectOption("#account", "polymarket:default")
    await expect.poll(() => page.textContent("#positions")).toContain(M)

    fake.resolve("yes")
    await expect
      .poll(() => page.textContent("#positions"), { timeout: 10_000 })
      .toContain("5 YES, YES won: 2, redeemable 5")
    await page.screenshot({ path: join(SHOTS, "redeemable-position.png"), fullPage: true })
    fake.redeem()
    await expect
      .poll(() => page.textContent("#positions"), { timeout: 10_000 })
      .toContain("5 YES, YES won: 2, redeemed")
  }, 60_000)
})
