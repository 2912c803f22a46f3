#!/usr/bin/env node
// The `crossbook` command: runs src/main.ts on Node 20 through tsx's loader.
import { register } from "tsx/esm/api"

register()
await import("../src/main.ts")
