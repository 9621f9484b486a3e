import { defineConfig } from "vitest/config"

// One workspace run: every package's `test/` folder, resolving workspace packages to their sources.
export default defineConfig({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"]
  }
})
