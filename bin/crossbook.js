#!/usr/bin/env node
// The `crossbook` command: runs sim/main.ts (the server and simulation commands) through tsx's loader.
import { register } from "tsx/esm/api"

register()
await import("../sim/main.ts")
