/** The engine database on a file of its own, removed when the layer's scope ends: the path `serve` writes through. */
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { engineDatabase } from "../../src/Persistence/Sql.ts"
import { OrderStore } from "../../src/Services/OrderStore.ts"

export const storeOnFile = (): Layer.Layer<OrderStore> =>
  Layer.unwrapScoped(
    Effect.gen(function* () {
      const dir = mkdtempSync(join(tmpdir(), "crossbook-store-"))
      yield* Effect.addFinalizer(() => Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
      return OrderStore.layerSql.pipe(Layer.provide(engineDatabase(join(dir, "engine.db"))))
    })
  )
