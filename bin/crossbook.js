#!/usr/bin/env node
// The `crossbook` command: runs sim/main.ts (the server and simulation commands) through tsx's loaders, both of them,
// so that a strategy module outside an ES module package loads as well.
import { register } from "tsx/esm/api"
import { register as registerCommonJs } from "tsx/cjs/api"

register()
registerCommonJs()
await import("../sim/main.ts")
