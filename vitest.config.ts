import { defineConfig } from "vitest/config"

// One workspace run: every package's `test/` folder, resolving workspace packages to their sources.
export default defineConfig({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    // Vitest runs one file at a time on two cores (`cores - 1`), while most files wait on servers,
    // PostgreSQL, Chromium, sandboxes or npm most of the time: two at once keeps both cores busy.
    // Every file's databases, table prefixes, ports and directories are its own.
    maxWorkers: 2,
    minWorkers: 1
  }
})
