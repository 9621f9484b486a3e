import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    name: "core",
    include: ["test/**/*.test.ts"],
    // Property tests take seconds, more while another file runs beside them (vitest.config.ts).
    testTimeout: 30_000
  }
})
