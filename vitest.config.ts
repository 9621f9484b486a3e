import { defineConfig } from "vitest/config"
import { BaseSequencer, type TestSpecification } from "vitest/node"

// The files that take longest (measured on a 2-core machine, each over a minute): started first, so
// that the last minutes of a run are short files on both workers rather than one long file alone.
// The release check alone builds, packs and installs every package (about 3 minutes).
const longest = [
  "examples/embed/test/Pack.test.ts",
  "examples/server/test/ChangeEvaluations.test.ts",
  "examples/server/test/Console.test.ts",
  "examples/server/test/Fuzz.test.ts",
  "examples/server/test/SandcastlesRuntime.test.ts",
  "examples/server/test/Evals.test.ts",
  "packages/connectors/test/Runtime.test.ts"
]

/** Vitest's order (slowest first from its cache, else largest first), with `longest` ahead of it. */
class LongestFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const rank = (file: TestSpecification) => {
      const at = longest.findIndex((path) => file.moduleId.endsWith(path))
      return at < 0 ? longest.length : at
    }
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}

// One workspace run: every package's `test/` folder, resolving workspace packages to their sources.
export default defineConfig({
  resolve: { conditions: ["@sightline/source"] },
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    // Vitest runs one file at a time on two cores (`cores - 1`), while many files wait on servers,
    // PostgreSQL, Chromium, sandboxes or npm for much of their time: two at once keeps both cores
    // busy. Every file's databases, table prefixes, ports and directories are its own.
    maxWorkers: 2,
    minWorkers: 1,
    sequence: { sequencer: LongestFirst }
  }
})
