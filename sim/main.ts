/** The `crossbook` entry point: the server's commands plus simulation. */
import { runCli } from "../src/Cli.ts"
import { backtestCommand, simCommand } from "./Cli.ts"

runCli([simCommand, backtestCommand])
