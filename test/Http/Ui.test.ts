import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { dashboardUrl } from "../../src/Stack.ts"
import { UiDirectory, uiFile } from "../../src/Http/Ui.ts"
import { get, rawExchange, testServer } from "./TestServer.ts"

const built = mkdtempSync(join(tmpdir(), "crossbook-ui-"))
writeFileSync(join(built, "index.html"), '<!doctype html><script src="main-ABC123.js"></script>')
writeFileSync(join(built, "main-ABC123.js"), "console.log('dashboard')")
writeFileSync(join(built, "main-ABC123.css"), "body{}")
writeFileSync(join(built, ".hidden.js"), "secret")
mkdirSync(join(built, "assets"))
writeFileSync(join(built, "assets", "logo.svg"), "<svg/>")
// A file beside the folder: no request path may reach it.
writeFileSync(join(built, "..", "crossbook-ui-outside.js"), "the-outside-file-content")

const served = (dir: string) => testServer().pipe(Layer.provide(Layer.succeed(UiDirectory, dir)))

describe("the dashboard's files", () => {
  it.layer(served(built))((it) => {
    it.effect("/ui/ answers the page, revalidated on each load; /ui redirects to it", () =>
      Effect.gen(function* () {
        const page = yield* get("/ui/")
        assert.strictEqual(page.status, 200)
        assert.strictEqual(page.headers["content-type"], "text/html; charset=utf-8")
        assert.strictEqual(page.headers["cache-control"], "no-cache")
        assert.include(page.text, "main-ABC123.js")
        const bare = yield* rawExchange(["GET /ui HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"])
        assert.strictEqual(bare.status, 308)
        assert.match(bare.head, /\r\nlocation: \/ui\/\r\n/i)
      })
    )

    it.effect("assets carry their content type and a long cache (their names hold a content hash)", () =>
      Effect.gen(function* () {
        const script = yield* get("/ui/main-ABC123.js")
        assert.strictEqual(script.status, 200)
        assert.strictEqual(script.headers["content-type"], "text/javascript; charset=utf-8")
        assert.strictEqual(script.headers["cache-control"], "public, max-age=31536000, immutable")
        assert.strictEqual(script.headers["x-content-type-options"], "nosniff")
        assert.strictEqual(script.text, "console.log('dashboard')")
        assert.strictEqual((yield* get("/ui/main-ABC123.css")).headers["content-type"], "text/css; charset=utf-8")
        assert.strictEqual((yield* get("/ui/assets/logo.svg")).headers["content-type"], "image/svg+xml")
      })
    )

    it.effect("a missing file, a hidden one, or a path out of the folder answers 404 with the error body", () =>
      Effect.gen(function* () {
        for (const path of [
          "/ui/nope.js",
          "/ui/.hidden.js",
          "/ui/../crossbook-ui-outside.js",
          "/ui/%2e%2e/crossbook-ui-outside.js",
          "/ui/..%2fcrossbook-ui-outside.js",
          "/ui/assets/../../crossbook-ui-outside.js",
          "/ui//etc/passwd",
          "/ui/index.html%00.js",
          "/ui/main-ABC123.exe"
        ]) {
          const res = yield* rawExchange([`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`])
          assert.strictEqual(res.status, 404, path)
          assert.notInclude(res.text, "the-outside-file-content", path)
          assert.strictEqual(res.body?.error?.code, "not_found", path)
        }
      })
    )
    it.effect("without a build, /ui/ answers a page saying how to build it", () =>
      Effect.gen(function* () {
        rmSync(join(built, "index.html"))
        const page = yield* get("/ui/")
        assert.strictEqual(page.status, 503)
        assert.strictEqual(page.headers["content-type"], "text/html; charset=utf-8")
        assert.include(page.text, "npm run build:ui")
        assert.strictEqual(page.headers["cache-control"], "no-store")
        assert.strictEqual((yield* get("/ui/app.js")).status, 404)
      })
    )
  })
})

describe("uiFile", () => {
  it("maps only names the build writes, inside the folder", () => {
    assert.strictEqual(uiFile("/srv/ui", "/ui"), "/srv/ui/index.html")
    assert.strictEqual(uiFile("/srv/ui", "/ui/a-1.js"), "/srv/ui/a-1.js")
    assert.strictEqual(uiFile("/srv/ui", "/ui/x/y.css"), "/srv/ui/x/y.css")
    for (const bad of ["/uix", "/ui/..", "/ui/../a.js", "/ui/a/../../b.js", "/ui/.a.js", "/ui/a..b.js", "/ui/a.sh"])
      assert.isUndefined(uiFile("/srv/ui", bad), bad)
  })

  it("the console prints the dashboard's address", () => {
    assert.strictEqual(dashboardUrl("127.0.0.1", 8000), "http://127.0.0.1:8000/ui/")
    assert.strictEqual(dashboardUrl("::1", 8000), "http://[::1]:8000/ui/")
  })
})
