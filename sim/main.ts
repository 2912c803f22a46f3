/** The `crossbook` entry point: the server's commands plus simulation. */
import { runCli } from "../src/Cli.ts"
import { Tapes } from "../src/Data/Tapes.ts"
import { simulationCommands } from "./Cli.ts"

// The tape format (and the simulator's modules it reads) loads when `data import` or `history tape` runs.
runCli(
  simulationCommands,
  process.argv,
  Tapes.lazy(() => import("./History.ts"))
)
