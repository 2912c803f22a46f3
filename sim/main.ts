/** The `crossbook` entry point: the server's commands plus simulation. */
import { runCli } from "../src/Cli.ts"
import { backtestCommand, simCommand } from "./Cli.ts"
import { TapesLive } from "./History.ts"

runCli([simCommand, backtestCommand], process.argv, TapesLive)
