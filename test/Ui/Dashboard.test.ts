/**
 * The dashboard in a real browser (Debian's chromium driven by playwright-core) against a real server on the sim
 * venue: sign in, pick a market, place orders and watch them in the ladder and the orders tree, a trailing level
 * that moves, a parent canceled with its children, a halt that refuses the next order, a read-only token, a bad
 * token. Each step leaves a screenshot under test-results/ui/.
 */
import { Layer, ManagedRuntime } from "effect"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UiDirectory } from "../../src/Http/Ui.ts"
import { OwnerToken, serverPort, testServer } from "../Http/TestServer.ts"
import { BROWSER_ARGS, CHROMIUM, requireChromium, SHOTS, skipBrowser } from "./Browser.ts"
// @ts-expect-error: a plain ES module without types
import { buildUi } from "../../scripts/build-ui.mjs"

const runtimeFor = (dir: string) =>
  ManagedRuntime.make(testServer({ simStepMs: 200 }).pipe(Layer.provide(Layer.succeed(UiDirectory, dir))))

describe.skipIf(skipBrowser)("the dashboard in a browser", () => {
  let runtime: ReturnType<typeof runtimeFor>
  let context: BrowserContext
  let page: Page
  let base = ""
  let owner = ""
  let profile = ""
  let built = ""
  let step = 0

  const shot = async (name: string) => {
    step += 1
    await page.screenshot({ path: join(SHOTS, `${String(step).padStart(2, "0")}-${name}.png`), fullPage: true })
  }

  const api = async (method: string, path: string, body?: unknown, token = owner) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as any }
  }

  /** Fills the ticket: the type first (it decides the params fields), then each field by its name. */
  const ticket = async (fields: Record<string, string>) => {
    await page.selectOption("#f-type", fields["type"]!)
    for (const [name, value] of Object.entries(fields)) {
      if (name === "type") continue
      const input = page.locator(`#ticket [name="${name}"]`)
      if ((await input.evaluate((el) => el.tagName)) === "SELECT") await input.selectOption(value)
      else await input.fill(value)
    }
    await page.click("#ticket-submit")
  }

  const clearTicket = async () => {
    for (const input of await page.locator("#ticket input[name]").all()) await input.fill("")
  }

  beforeAll(async () => {
    requireChromium()
    // This run's screenshots only (the report's test adds its own beside them).
    for (const old of readdirSync(SHOTS)) if (/^\d\d-/.test(old)) rmSync(join(SHOTS, old))
    built = mkdtempSync(join(tmpdir(), "crossbook-ui-build-"))
    await buildUi(built)
    runtime = runtimeFor(built)
    const port = await runtime.runPromise(serverPort)
    owner = await runtime.runPromise(OwnerToken)
    base = `http://127.0.0.1:${port}`
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

  it("a bad token shows why, not a blank page", async () => {
    await page.goto(`${base}/ui/`)
    await page.fill("#token", "cb_notatoken_0000000000000000")
    await page.click("#signin button[type=submit]")
    await expect.poll(() => page.textContent("#signin-message")).toContain("refused this token")
    expect(await page.isVisible("#trading")).toBe(false)
    expect(await page.evaluate(() => (globalThis as any).sessionStorage.getItem("crossbook.token"))).toBeNull()
    await shot("bad-token")
  })

  it("signs in, finds a sim market, and places a limit that rests in the ladder and the orders tree", async () => {
    await page.fill("#token", owner)
    await page.click("#signin button[type=submit]")
    await page.waitForSelector("#trading:not([hidden])")
    expect(await page.textContent("#permissions")).toContain("trade")
    expect(await page.isVisible("#readonly")).toBe(false)
    // A market in the middle of its range, so a trailing level stays inside (0, 1).
    const markets = (await api("GET", "/venues/sim/markets?limit=100")).body.data as Array<any>
    const market = markets.find((m) => m.best_bid !== null && Number(m.best_bid) >= 0.3 && Number(m.best_bid) <= 0.7)
    expect(market).toBeDefined()
    const word = (market.title as string).split(/\s+/).find((w) => w.length > 4) ?? market.title
    await page.fill("#market-search", word)
    await page.click(`#market-list li[data-market-id="${market.id}"]`)
    await page.waitForSelector("#ladder-yes tr.bid")
    await page.waitForSelector("#ladder-no tr.bid")
    await shot("market")

    const bid = Number(await page.getAttribute("#ladder-yes tr.bid >> nth=0", "data-price"))
    const price = (Math.round(bid * 100) - 10) / 100
    await ticket({ type: "limit", side: "buy", amount: "5", price: price.toFixed(2) })
    await expect.poll(() => page.textContent("#ticket-message")).toContain("placed limit buy 5")
    const row = page.locator(`#ladder-yes tr.bid.has-mine`)
    await expect.poll(() => row.first().locator("td.mine").textContent()).toBe("5")
    expect(Number(await row.first().getAttribute("data-price"))).toBe(price)
    await page.waitForSelector('#orders li[data-type="limit"]')
    // The NO ladder shows the same order at 1 − p.
    await page.waitForSelector("#ladder-no tr.ask.has-mine")
    await shot("limit-rests")
  })

  it("shows the ticket's field errors from the error body", async () => {
    await clearTicket()
    await ticket({
      type: "twap",
      side: "buy",
      amount: "5",
      price: "0.5",
      "params.window_s": "60",
      "params.slices": "0"
    })
    await expect.poll(() => page.textContent('[data-field="params.slices"] .field-error')).not.toBe("")
    expect(await page.getAttribute("#ticket-message", "class")).toBe("error")
    expect(await page.textContent('[data-field="params.slices"] .hint')).toContain("≤ 10000")
    await shot("field-errors")
  })

  it("a trailing stop's level moves as the sim market moves, and cancel removes it", async () => {
    // One stop trails the bid up, the other the ask down: whichever way the market goes, one level moves.
    const levels: Array<{ id: string; first: string }> = []
    for (const side of ["sell", "buy"]) {
      await clearTicket()
      await ticket({ type: "trailing_stop", side, amount: "5", "params.trail": "0.2" })
      await expect.poll(() => page.textContent("#ticket-message")).toContain(`placed trailing_stop ${side}`)
      const id = /: (\S+) \(/.exec((await page.textContent("#ticket-message")) ?? "")![1]!
      const level = page.locator(`#orders li[data-order-id="${id}"] [data-info="level"] b`)
      await expect.poll(() => level.count()).toBe(1)
      levels.push({ id, first: (await level.textContent())! })
    }
    await shot("trailing-placed")
    const moved = async () => {
      for (const { id, first } of levels) {
        const now = await page.textContent(`#orders li[data-order-id="${id}"] [data-info="level"] b`)
        if (now !== first) return true
      }
      return false
    }
    await expect.poll(moved, { timeout: 25_000 }).toBe(true)
    await shot("trailing-moved")
    for (const { id } of levels) {
      await page.click(`#orders li[data-order-id="${id}"] .cancel`)
      await expect.poll(() => page.locator(`#orders li[data-order-id="${id}"]`).count()).toBe(0)
    }
  }, 45_000)

  it("canceling a parent takes its children with it", async () => {
    await clearTicket()
    const bid = Number(await page.getAttribute("#ladder-yes tr.bid >> nth=0", "data-price"))
    const price = ((Math.round(bid * 100) - 10) / 100).toFixed(2)
    await ticket({ type: "iceberg", side: "buy", amount: "3", price, "params.display": "1" })
    await expect.poll(() => page.textContent("#ticket-message")).toContain("placed iceberg")
    const parent = page.locator('#orders > li[data-type="iceberg"]')
    await expect.poll(() => parent.locator("ul.children > li").count()).toBeGreaterThan(0)
    const child = await parent.locator("ul.children > li").first().getAttribute("data-order-id")
    await shot("iceberg-child")
    await parent.locator(".order-line .cancel").first().click()
    await expect.poll(() => parent.count()).toBe(0)
    expect(await page.locator(`#orders li[data-order-id="${child}"]`).count()).toBe(0)
    expect((await api("GET", `/trading/orders/${child}`)).body.status).toBe("canceled")
    await shot("iceberg-canceled")
  })

  it("an oco parent shows its legs in words, and the fills table shows every header whole", async () => {
    // A market with a bid well inside (0, 1), read from the venue, not from an order an earlier test left on the page.
    const markets = (await api("GET", "/venues/sim/markets?limit=100")).body.data as Array<any>
    const market = markets.find((m) => m.best_bid !== null && Number(m.best_bid) >= 0.3 && Number(m.best_bid) <= 0.7).id
    const book = (await api("GET", `/venues/sim/markets/${encodeURIComponent(market)}/book?depth=1`)).body
    const bid = Number(book.bids[0].price)
    const low = ((Math.round(bid * 100) - 15) / 100).toFixed(2)
    const oco = await api("POST", "/trading/orders", {
      market_id: market,
      side: "buy",
      type: "oco",
      amount: "2",
      params: {
        legs: [
          { side: "buy", type: "limit", price: low },
          { side: "buy", type: "limit", price: ((Math.round(bid * 100) - 20) / 100).toFixed(2) }
        ]
      }
    })
    expect(oco.status, JSON.stringify(oco.body)).toBe(201)
    // A fill, so the fills table has a row to lay out.
    const taken = await api("POST", "/trading/orders", {
      market_id: market,
      side: "buy",
      type: "market",
      amount: "1",
      price: "0.99"
    })
    expect(taken.status, JSON.stringify(taken.body)).toBe(201)
    const legs = page.locator(`#orders li[data-order-id="${oco.body.id}"] > .info [data-info="legs"]`)
    await expect.poll(() => legs.textContent()).toMatch(/^legs 1: filled 0.* \| 2: filled 0/)
    expect(await page.locator("#orders").textContent()).not.toContain("[object Object]")
    await page.waitForSelector("#fills table td")
    const fee = page.locator("#fills th", { hasText: /^fee$/ })
    // The table is drawn again as fills and positions refresh: measure it once it stands still.
    let box = await fee.boundingBox()
    let panel = await page.locator("#fills").boundingBox()
    for (let i = 0; i < 50 && (box === null || panel === null); i++) {
      await page.waitForTimeout(100)
      box = await fee.boundingBox()
      panel = await page.locator("#fills").boundingBox()
    }
    expect(box, "the fee header is laid out").not.toBeNull()
    expect(panel, "the fills panel is laid out").not.toBeNull()
    expect(box!.x + box!.width).toBeLessThanOrEqual(panel!.x + panel!.width + 0.5)
    expect(await page.locator("#fills").evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true)
    await shot("oco-and-fills")
    await api("DELETE", `/trading/orders/${oco.body.id}`)
  })

  it("a halt refuses the next order, naming the rule", async () => {
    await page.fill("#halt-reason", "lunch")
    await page.selectOption("#halt-policy", "hold")
    await page.click("#halt")
    await expect.poll(() => page.textContent("#halt-state")).toBe("HALTED")
    await clearTicket()
    const bid = Number(await page.getAttribute("#ladder-yes tr.bid >> nth=0", "data-price"))
    await ticket({ type: "limit", side: "buy", amount: "1", price: ((Math.round(bid * 100) - 4) / 100).toFixed(2) })
    await expect.poll(() => page.textContent("#ticket-message")).toContain("kill_switch")
    await page.waitForSelector('#events li[data-kind="risk.rejected"]')
    await shot("halted")
    // The events socket dropped and opened again resumes after the last seq it showed: nothing twice, nothing lost.
    const seen = Number(await page.getAttribute("#events li >> nth=0", "data-seq"))
    await page.click("#events-reconnect")
    await expect.poll(() => page.textContent("#events-status")).toContain(`from seq ${seen}`)
    await page.click("#resume")
    await expect.poll(() => page.textContent("#halt-state")).toBe("running")
    await page.waitForSelector('#events li[data-kind="engine.resumed"]')
    const seqs = await page
      .locator("#events li")
      .evaluateAll((lines) => lines.map((l) => Number(l.getAttribute("data-seq"))))
    expect(new Set(seqs).size).toBe(seqs.length)
    expect(Math.min(...seqs)).toBe(1)
    expect(Math.max(...seqs) - Math.min(...seqs) + 1).toBe(seqs.length)
  })

  it("a token with only view is read-only", async () => {
    expect(
      (await api("POST", "/trading/grants", { user: "viewer", account: "sim:default", permission: "view" })).status
    ).toBe(201)
    const key = await api("POST", "/trading/keys", { user: "viewer", name: "viewer-tab" })
    expect(key.status).toBe(201)
    await page.click("#signout")
    await page.waitForSelector("#signin:not([hidden])")
    await page.fill("#token", key.body.token)
    await page.click("#signin button[type=submit]")
    await page.waitForSelector("#readonly:not([hidden])")
    expect(await page.isDisabled("#ticket-submit")).toBe(true)
    expect(await page.isDisabled("#cancel-all")).toBe(true)
    expect(await page.isDisabled("#risk-save")).toBe(true)
    await shot("read-only")
  })
})
