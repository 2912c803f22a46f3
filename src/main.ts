/** The server's entry point without the simulation commands: runs the CLI on Node. */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { makeCli } from "./Cli.ts"

makeCli([])(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
