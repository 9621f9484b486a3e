import { defineProject } from "vitest/config"

export default defineProject({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    name: "core",
    include: ["test/**/*.test.ts"]
  }
})
