import { defineConfig } from "vitest/config"

/** Opt-in checks against real venues' demo environments (`npm run test:live`); never part of `npm test`. */
export default defineConfig({
  test: {
    include: ["test/**/*.live.ts"],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
