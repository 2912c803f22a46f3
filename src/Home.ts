/** The home folder: `$CROSSBOOK_HOME`, else `~/.crossbook`, created with mode 0700. */
import { mkdirSync, chmodSync, statSync } from "node:fs"
import { homedir } from "node:os"
import { join, resolve } from "node:path"

export const homeFolder = (env: NodeJS.ProcessEnv = process.env): string =>
  resolve(env["CROSSBOOK_HOME"] ?? join(homedir(), ".crossbook"))

/** Creates the folder (0700) if needed, tightens its mode if it is looser, and answers its path. */
export const ensureHome = (path: string): string => {
  mkdirSync(path, { recursive: true, mode: 0o700 })
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o700)
  return path
}
