/** The failure a command reports as one sentence, shared by the command line and the modules it loads. */
import * as Data from "effect/Data"

/**
 * A failure of a command that the user can act on: printed as one sentence on stderr, exit status 1, or 2 when the
 * command line itself is wrong (a path that cannot be used, say).
 */
export class CliError extends Data.TaggedError("CliError")<{
  readonly message: string
  readonly exitCode?: 1 | 2
}> {}

/** The first line of an error's message, without a stack. */
export const oneLine = (error: unknown): string => {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split("\n")[0] ?? "").trim()
}
