/**
 * What the clients of the hosted services know: `<home>/hosted.json` (mode 0600) with `{url, session, api_key?}`
 * written by `crossbook login` and `crossbook keys create`, and the settings that override it.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface HostedFile {
  readonly url: string
  readonly session: string
  readonly api_key?: string
}

export const hostedFile = (home: string): string => join(home, "hosted.json")

/** The data host a client talks to when nothing says otherwise. */
export const DEFAULT_DATA_URL = "http://127.0.0.1:8100"

export const readHosted = (home: string): HostedFile | undefined => {
  const file = hostedFile(home)
  if (!existsSync(file)) return undefined
  try {
    const value = JSON.parse(readFileSync(file, "utf8")) as Partial<HostedFile>
    return typeof value.url === "string" && typeof value.session === "string"
      ? {
          url: value.url,
          session: value.session,
          ...(typeof value.api_key === "string" ? { api_key: value.api_key } : {})
        }
      : undefined
  } catch {
    return undefined
  }
}

/** Replaces the file whole, readable by its owner only. */
export const writeHosted = (home: string, value: HostedFile): void => {
  const file = hostedFile(home)
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 })
  chmodSync(temp, 0o600)
  renameSync(temp, file)
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** `SERVICE_DATA_URL`, else the URL `crossbook login` saved, else the local data host. */
export const dataUrl = (home: string, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env["SERVICE_DATA_URL"]
  if (fromEnv !== undefined && fromEnv !== "") return trimSlash(fromEnv)
  return trimSlash(readHosted(home)?.url ?? DEFAULT_DATA_URL)
}

/**
 * `SERVICE_API_KEY`, else the key `crossbook keys create` saved in hosted.json, else a key kept alone in
 * `<home>/api-key`; undefined when none has one.
 */
export const apiKey = (home: string, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const fromEnv = env["SERVICE_API_KEY"]
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv
  const saved = readHosted(home)?.api_key
  if (saved !== undefined) return saved
  const file = join(home, "api-key")
  if (!existsSync(file)) return undefined
  const text = readFileSync(file, "utf8").trim()
  return text === "" ? undefined : text
}
