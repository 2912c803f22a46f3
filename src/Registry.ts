/** The local server registry `<home>/servers.json` (mode 0600): how clients on this machine find a loopback server's token. */
import { chmodSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface RegistryEntry {
  readonly access_token: string
  readonly control: string
  readonly db: string
  readonly pid: number
  readonly started_at: number
}

export type Registry = Readonly<Record<string, RegistryEntry>>

export const registryFile = (home: string): string => join(home, "servers.json")

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The registry key of a server: `"127.0.0.1:<port>"` for every loopback name. */
export const registryKey = (host: string, port: number): string =>
  `${host === "localhost" ? "127.0.0.1" : host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`

export const readRegistry = (home: string): Registry => {
  const file = registryFile(home)
  if (!existsSync(file)) return {}
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"))
    return typeof value === "object" && value !== null ? (value as Registry) : {}
  } catch {
    return {}
  }
}

/** Writes one entry, keeping the others; the file is replaced whole and is readable by its owner only. */
export const writeRegistryEntry = (home: string, key: string, entry: RegistryEntry): void => {
  const file = registryFile(home)
  const next = { ...readRegistry(home), [key]: entry }
  const temp = `${file}.${process.pid}.tmp`
  writeFileSync(temp, JSON.stringify(next, null, 2) + "\n", { mode: 0o600 })
  chmodSync(temp, 0o600)
  renameSync(temp, file)
}
