/** `crossbook serve` in a child process on a chosen home and port: started, waited for, killed; for the crash test and the CLI tests. */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"

const ROOT = join(import.meta.dirname, "../..")

/** A port nothing listens on now (the kernel's choice, released at once). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

export interface Ended {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Serve {
  readonly child: ChildProcess
  readonly pid: number
  readonly url: string
  readonly stdout: () => string
  readonly stderr: () => string
  readonly ended: Promise<Ended>
}

/**
 * The arguments to `node` that run `crossbook <args>` from the sources (through tsx), so a test exercises the code as
 * it is now and never an older build in dist/.
 */
export const crossbookFromSources = (args: ReadonlyArray<string>): Array<string> => [
  join(ROOT, "bin/run-ts.js"),
  join(ROOT, "sim/main.ts"),
  ...args
]

/** Runs `crossbook <args>` (from the sources) with the environment given; answers as soon as it has started. */
export const spawnCrossbook = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, crossbookFromSources(args), {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
  const ended = new Promise<Ended>((resolve) =>
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  )
  return { child, ended, stdout: () => stdout, stderr: () => stderr }
}

/**
 * Starts `crossbook serve` on `home` and `port` and waits until it listens; rejects with its output when it ends first
 * or does not listen within `timeoutMs`.
 */
export const startServe = async (options: {
  readonly home: string
  readonly port: number
  readonly args?: ReadonlyArray<string>
  readonly timeoutMs?: number
}): Promise<Serve> => {
  const run = spawnCrossbook(["serve", "--port", String(options.port), ...(options.args ?? [])], {
    CROSSBOOK_HOME: options.home
  })
  const url = `http://127.0.0.1:${options.port}`
  const deadline = Date.now() + (options.timeoutMs ?? 60_000)
  let done: Ended | undefined
  void run.ended.then((e) => (done = e))
  while (!run.stdout().includes("Listening on")) {
    if (done !== undefined) {
      throw new Error(`serve ended (code ${done.code}) before listening: ${done.stderr || done.stdout}`)
    }
    if (Date.now() > deadline) {
      run.child.kill("SIGKILL")
      throw new Error(`serve did not listen within ${options.timeoutMs ?? 60_000} ms: ${run.stdout()}${run.stderr()}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { ...run, pid: run.child.pid!, url }
}

/** The owner token a loopback server wrote to the registry of its home. */
export const ownerToken = (home: string, port: number): string =>
  JSON.parse(readFileSync(join(home, "servers.json"), "utf8"))[`127.0.0.1:${port}`].access_token

/** One HTTP call; answers the status and the parsed body (or the text, when it is not JSON). */
export const call = async (
  url: string,
  method: string,
  path: string,
  options: { readonly token?: string; readonly json?: unknown; readonly timeoutMs?: number } = {}
): Promise<{ readonly status: number; readonly body: any }> => {
  const response = await fetch(`${url}${path}`, {
    method,
    signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    headers: {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...(options.json === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) })
  })
  const text = await response.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    // not JSON
  }
  return { status: response.status, body }
}
