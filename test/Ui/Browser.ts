/** Where the browser tests find chromium, how they launch it, and where their screenshots go. */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type BrowserContext, chromium } from "playwright-core"
import { afterAll, beforeAll } from "vitest"

export const CHROMIUM = process.env["CROSSBOOK_CHROMIUM"] ?? "/usr/bin/chromium"
export const skipBrowser = process.env["CROSSBOOK_SKIP_BROWSER"] === "1"
export const SHOTS = join(import.meta.dirname, "..", "..", "test-results", "ui")

/** Debian's chromium, headless, with nothing that reaches the network on its own. */
export const BROWSER_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** Fails, saying how to install it, when chromium is missing; makes the screenshot folder. */
export const requireChromium = () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `chromium is not installed at ${CHROMIUM}: install it with \`apt-get install -y chromium\` ` +
        "(Debian/Ubuntu), or set CROSSBOOK_SKIP_BROWSER=1 to skip the browser tests"
    )
  }
  mkdirSync(SHOTS, { recursive: true })
}

/** A headless chromium with its own profile in a fresh folder, for a page opened from a file; `close` removes both. */
export const launchBrowser = async (
  prefix: string,
  viewport: { readonly width: number; readonly height: number }
): Promise<{ readonly context: BrowserContext; readonly dir: string; readonly close: () => Promise<void> }> => {
  requireChromium()
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const context = await chromium.launchPersistentContext(join(dir, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: BROWSER_ARGS,
    viewport
  })
  return {
    context,
    dir,
    close: async () => {
      await context.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * A browser for the tests of one `describe`: launched before them, closed after; `context` and `dir` (a fresh folder
 * for the pages they write) are read inside the tests.
 */
export const useBrowser = (prefix: string, viewport: { readonly width: number; readonly height: number }) => {
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined
  beforeAll(async () => {
    browser = await launchBrowser(prefix, viewport)
  }, 30_000)
  afterAll(() => browser?.close())
  return {
    get context(): BrowserContext {
      return browser!.context
    },
    get dir(): string {
      return browser!.dir
    }
  }
}

/** A client of the server at `base` with a bearer token: the JSON answer and its status. */
export const apiClient =
  (base: string, token: string) =>
  async (method: string, path: string, body?: unknown): Promise<{ readonly status: number; readonly body: any }> => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, body: (await response.json()) as any }
  }
