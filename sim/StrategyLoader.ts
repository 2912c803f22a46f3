/**
 * Loads a strategy module: JavaScript as it is; TypeScript (an ES module or CommonJS) through tsx, which the project's
 * own install has and an installed package asks for. `backtest` and the sweep's workers load strategies through it.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"

/** Why a strategy module did not load, in a sentence naming the file. */
export class StrategyLoadError extends Error {}

const firstLine = (error: unknown): string =>
  ((error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "").trim()

export const loadStrategyModule = async (file: string): Promise<Record<string, unknown>> => {
  const url = pathToFileURL(resolve(file)).href
  const failed = (error: unknown) => new StrategyLoadError(`the strategy ${file} does not load: ${firstLine(error)}`)
  if (!/\.[cm]?tsx?$/.test(file)) {
    try {
      return (await import(url)) as Record<string, unknown>
    } catch (error) {
      throw failed(error)
    }
  }
  let tsx: typeof import("tsx/esm/api")
  try {
    tsx = await import("tsx/esm/api")
  } catch {
    throw new StrategyLoadError(
      `the strategy ${file} is TypeScript, which needs tsx: \`npm install tsx\` beside crossbook, or compile it to JavaScript`
    )
  }
  try {
    return (await tsx.tsImport(url, import.meta.url)) as Record<string, unknown>
  } catch (error) {
    throw failed(error)
  }
}
