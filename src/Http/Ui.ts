/**
 * The dashboard at `/ui`: the files `npm run build:ui` writes, served as they are. Only names the build can write are
 * looked up (no `..`, no hidden files, nothing outside the folder); `index.html` is revalidated on every load, the
 * other files carry a content hash in their name and are kept for a year.
 */
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect } from "effect"
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { dirname, extname, join, resolve, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { ApiError } from "../Domain/Errors.ts"
import { respond } from "./Errors.ts"

/**
 * The project's `ui/dist`: the first folder up from this module (in `src/Http/` when run from the sources, in
 * `dist/` or one of its chunks when built) that holds a `ui/` beside a `package.json`.
 */
const builtUi = (): string => {
  let dir = dirname(fileURLToPath(import.meta.url))
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "ui"))) return join(dir, "ui", "dist")
    const up = dirname(dir)
    if (up === dir) return fileURLToPath(new URL("../../ui/dist", import.meta.url))
    dir = up
  }
}

/** Where the built dashboard is: the project's `ui/dist`, unless a test points elsewhere. */
export class UiDirectory extends Context.Reference<UiDirectory>()("crossbook/UiDirectory", {
  defaultValue: builtUi
}) {}

export const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2"
}

/** One path segment the build may write: letters, digits, `.`, `_`, `-`, not starting with a dot. */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/

/**
 * The file a request path names under `root`, or undefined when it names none the build could have written: a
 * segment that is empty, hidden, `..`, encoded or escaping, or a type not in {@link CONTENT_TYPES}.
 */
export const uiFile = (root: string, path: string): string | undefined => {
  if (path !== "/ui" && !path.startsWith("/ui/")) return undefined
  const rest = path.slice(4)
  if (rest === "") return join(root, "index.html")
  const segments = rest.split("/")
  if (segments.some((s) => !SEGMENT.test(s) || s.includes(".."))) return undefined
  if (CONTENT_TYPES[extname(rest).toLowerCase()] === undefined) return undefined
  const base = resolve(root)
  const file = resolve(base, ...segments)
  return file.startsWith(base + sep) ? file : undefined
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>crossbook: dashboard not built</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em}code{background:#eee;padding:0 .3em}</style>
</head><body>
<h1>The dashboard is not built</h1>
<p>This server found no built dashboard files. From the crossbook folder run</p>
<p><code>npm run build:ui</code></p>
<p>then reload this page. (<code>npm ci</code> runs it too.) The API is served as usual: see <a href="/docs">/docs</a>.</p>
</body></html>
`

const notFound = (path: string) => respond(ApiError.notFound(`no dashboard file ${path}`))

export const UiRoute = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function* () {
    const root = yield* UiDirectory
    const serveFile = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const path = new URL(request.url, "http://localhost").pathname
      // `/ui` and `/ui/` are the page; a relative asset link resolves the same from both.
      if (path === "/ui") {
        return HttpServerResponse.empty({ status: 308, headers: { location: "/ui/" } })
      }
      const file = uiFile(root, path === "/ui/" ? "/ui" : path)
      if (file === undefined) return notFound(path)
      const isIndex = file === join(root, "index.html")
      const bytes = yield* Effect.promise(() =>
        readFile(file).then(
          (b) => b as Buffer | undefined,
          () => undefined
        )
      )
      if (bytes === undefined) {
        if (!isIndex) return notFound(path)
        return HttpServerResponse.text(NOT_BUILT, {
          status: 503,
          contentType: "text/html; charset=utf-8",
          headers: { "cache-control": "no-store" }
        })
      }
      return HttpServerResponse.uint8Array(bytes, {
        contentType: CONTENT_TYPES[extname(file).toLowerCase()]!,
        headers: {
          "cache-control": isIndex ? "no-cache" : "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff"
        }
      })
    })
    yield* router.get("/ui", serveFile)
    yield* router.get("/ui/*", serveFile)
  })
)
