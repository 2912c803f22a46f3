/**
 * What the clients of the hosted services know: `<home>/hosted.json` (mode 0600) with `{url, session}` written by
 * `crossbook login`, the API key in `<home>/api-key` (mode 0600) written by `crossbook keys create`, and the settings
 * that override them.
 */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface HostedFile {
  readonly url: string
  readonly session: string
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
      ? { url: value.url, session: value.session }
      : undefined
  } catch {
    return undefined
  }
}

/** Replaces a file whole, readable by its owner only. */
const writePrivate = (file: string, text: string): void => {
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, text, { mode: 0o600 })
  chmodSync(temp, 0o600)
  renameSync(temp, file)
}

export const writeHosted = (home: string, value: HostedFile): void =>
  writePrivate(hostedFile(home), JSON.stringify(value, null, 2) + "\n")

export const apiKeyFile = (home: string): string => join(home, "api-key")

/** Saves the key `crossbook keys create` made, for every hosted client of this home. */
export const writeApiKey = (home: string, key: string): void => writePrivate(apiKeyFile(home), key + "\n")

/** The key in `<home>/api-key`, if there is one. */
export const savedApiKey = (home: string): string | undefined => {
  try {
    const text = readFileSync(apiKeyFile(home), "utf8").trim()
    return text === "" ? undefined : text
  } catch {
    return undefined
  }
}

const trimSlash = (url: string): string => url.replace(/\/+$/, "")

/** `SERVICE_DATA_URL`, else the URL `crossbook login` saved, else the local data host. */
export const dataUrl = (home: string, env: NodeJS.ProcessEnv = process.env): string => {
  const fromEnv = env["SERVICE_DATA_URL"]
  if (fromEnv !== undefined && fromEnv !== "") return trimSlash(fromEnv)
  return trimSlash(readHosted(home)?.url ?? DEFAULT_DATA_URL)
}

/** `SERVICE_API_KEY`, else the key `crossbook keys create` saved in `<home>/api-key`; undefined when neither has one. */
export const apiKey = (
  home: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): string | undefined => {
  const fromEnv = env["SERVICE_API_KEY"]
  return fromEnv !== undefined && fromEnv !== "" ? fromEnv : savedApiKey(home)
}
