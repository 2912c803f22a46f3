/** Where the browser tests find chromium, how they launch it, and where their screenshots go. */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"

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
