/** The one entry point: runs the CLI on Node. */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Effect } from "effect"
import { run } from "./Cli.ts"

run(process.argv).pipe(Effect.provide(NodeContext.layer), NodeRuntime.runMain)
