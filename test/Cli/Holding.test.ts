import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { holdingServer } from "../../src/Stack.ts"

describe("the port serve binds before it starts", () => {
  it.live("a request that arrives before the API is attached waits for it and gets its answer", () =>
    Effect.promise(async () => {
      const server = holdingServer()
      const port = await new Promise<number>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve((server.address() as { port: number }).port))
      )
      try {
        const answer = fetch(`http://127.0.0.1:${port}/health`).then(async (r) => [r.status, await r.text()] as const)
        await new Promise((r) => setTimeout(r, 200))
        server.on("request", (request, response) => response.end(`served ${request.url}`))
        assert.deepStrictEqual(await answer, [200, "served /health"])
        const later = await fetch(`http://127.0.0.1:${port}/later`)
        assert.strictEqual(await later.text(), "served /later")
      } finally {
        server.close()
      }
    })
  )
})
