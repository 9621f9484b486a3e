/**
 * The library as a host outside this monorepo gets it: `pnpm release:check` (`scripts/release-check.mjs`)
 * builds and packs every package, the console included, installs the tarballs with plain npm into a
 * new project, and runs there, with plain node, the library example of `docs/library.md` and the
 * embed example as ESM and as CommonJS, and type-checks them with tsc. It needs the npm registry (for
 * `effect` and the other dependencies); without it the test is skipped, and says so, except under
 * `CI=true`.
 */
import { execFile, execFileSync } from "node:child_process"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const root = new URL("../../..", import.meta.url).pathname

const registry = (() => {
  try {
    execFileSync("npm", ["view", "effect@3", "version", "--json"], { stdio: "pipe", timeout: 30_000 })
    return undefined
  } catch (error) {
    return String(error).split("\n")[0]
  }
})()
if (registry !== undefined && process.env.CI === "true") {
  throw new Error(`the npm registry is unreachable (CI=true): ${registry}`)
}
if (registry !== undefined) console.warn(`packed packages: the npm registry is unreachable: skipped (${registry})`)

describe.skipIf(registry !== undefined)("the packed packages in a fresh project", () => {
  it("install with npm, and the library and embed examples run with node as ESM and CJS", {
    timeout: 900_000
  }, async () => {
    // Asynchronous, so the test worker stays responsive during minutes of building and installing.
    const { stdout } = await promisify(execFile)(process.execPath, ["scripts/release-check.mjs"], {
      cwd: root,
      encoding: "utf8",
      timeout: 880_000,
      maxBuffer: 64 * 1024 * 1024
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`the release check failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`)
    })
    const passed = stdout.split("\n").filter((line) => line.startsWith("ok ")).map((line) =>
      line.replace(/^ok\s+/, "").replace(/ \([\d.]+ s\)$/, "")
    )
    expect(passed).toEqual([
      "build and pack 9 packages",
      "install the tarballs with npm into a new project",
      "a package's internals cannot be imported",
      "the sandbox runtime loads from its built files",
      "the console's built files load",
      "the widget's package holds its bundles and types",
      "the library example of docs/library.md runs as ESM and as CommonJS",
      "the library example type-checks with tsc",
      "the embed example, compiled by tsc, serves as ESM and as CommonJS"
    ])
    expect(stdout).toContain("release check passed")
  })
})
