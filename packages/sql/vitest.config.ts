import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    name: "sql",
    include: ["test/**/*.test.ts"],
    // PGlite starts in about 3 s and PostgreSQL suites share one server: give them room.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
