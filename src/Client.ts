/** What the client commands need: the server's URL and the access token, from the environment or the registry. */
import { isLoopback, readRegistry, registryKey } from "./Registry.ts"

export const serviceUrl = (env: NodeJS.ProcessEnv = process.env): string =>
  (env["SERVICE_URL"] ?? "http://127.0.0.1:8000").replace(/\/$/, "")

/** `SERVICE_ACCESS_TOKEN`, else the registry entry of the loopback server at the URL; undefined when neither has one. */
export const accessToken = (home: string, url: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const fromEnv = env["SERVICE_ACCESS_TOKEN"]
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const parsed = new URL(url)
  const host = parsed.hostname
  if (!isLoopback(host)) return undefined
  const port = Number(parsed.port || (parsed.protocol === "https:" ? 443 : 80))
  return readRegistry(home)[registryKey(host, port)]?.access_token
}
