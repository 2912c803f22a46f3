/** The `crossbook` entry point: the server's commands plus simulation. */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { makeCli } from "../src/Cli.ts"
import { backtestCommand, simCommand } from "./Cli.ts"

makeCli([simCommand, backtestCommand])(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
