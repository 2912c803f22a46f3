/** The server's entry point without the simulation commands: runs the CLI on Node. */
import { runCli } from "./Cli.ts"

runCli([])
