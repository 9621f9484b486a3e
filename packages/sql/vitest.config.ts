import { defineProject } from "vitest/config"

// Workspace packages resolve to their TypeScript sources through the `@sightline/source` export
// condition. Vitest runs tests in Vite's SSR environment, which takes its conditions from
// `ssr.resolve`, not from the top-level `resolve`; the default conditions are kept beside it.
// Not "import": vitest hands these conditions to Node for external modules too, and under "import"
// a CJS dependency (pg) `require`s the ESM build of its own dependency (pg-pool).
const conditions = ["@sightline/source", "module", "node", "default"]

export default defineProject({
  resolve: { conditions },
  ssr: { resolve: { conditions, externalConditions: ["@sightline/source"] } },
  test: {
    name: "sql",
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"],
    // PGlite starts in about 3 s and PostgreSQL suites share one server: give them room.
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
