/**
 * The library as a host outside this monorepo gets it: every package is built and packed
 * (`pnpm pack`), the tarballs are installed with plain `npm` into a fresh project in a temporary
 * directory, and the "Using the library" example of `docs/library.md` runs there with plain `node`,
 * as ESM and as CommonJS, and type-checks with `tsc`. It needs the npm registry (for `effect` and the other
 * dependencies); without it the test is skipped, and says so, except under `CI=true`.
 */
import { execFile, execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, describe, expect, it } from "vitest"

const root = new URL("../../..", import.meta.url).pathname
const packages = ["core", "sql", "http", "ai", "connectors", "delivery", "sandbox"]

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

const work = mkdtempSync(join(tmpdir(), "sightline-pack-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

// Asynchronous, so the test worker stays responsive during minutes of building and installing;
// a failure carries the command's output.
const run = async (command: string, args: ReadonlyArray<string>, cwd: string): Promise<string> => {
  try {
    const { stdout } = await promisify(execFile)(command, [...args], {
      cwd,
      encoding: "utf8",
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, CI: "true" }
    })
    return stdout
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `${command} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`.slice(0, 4000)
    )
  }
}

/** The library guide's example (`docs/library.md`), as written. */
const libraryExample = (): string => {
  const guide = readFileSync(join(root, "docs", "library.md"), "utf8")
  const section = guide.slice(guide.indexOf("## Using the library"))
  const match = /```ts\n([\s\S]*?)```/.exec(section)
  if (match === null) throw new Error("docs/library.md: no ts block under Using the library")
  return match[1]!
}

// The example ends by running the program; print its outcome so the test can check it.
const withOutput = (code: string) =>
  code.replace(
    /Effect\.runPromise\(program\.pipe\(Effect\.provide\(Sightline\)\)\)\s*$/,
    "Effect.runPromise(program.pipe(Effect.provide(Sightline))).then(({ created, page }) =>\n" +
      "  console.log(JSON.stringify({ status: created.status, total: page.total_count })))\n"
  )

const toCommonJs = (code: string) =>
  code.replace(/^import \{([^}]+)\} from "([^"]+)"$/gm, "const {$1} = require(\"$2\")")

describe.skipIf(registry !== undefined)("the packed packages in a fresh project", () => {
  it("install with npm and run the README example with node as ESM and CJS, and type-check with tsc", {
    timeout: 600_000
  }, async () => {
    const tarballs = join(work, "tarballs")
    for (const name of packages) {
      const dir = join(root, "packages", name)
      await run("npx", ["-y", "pnpm@10.34.9", "run", "build"], dir)
      await run("npx", ["-y", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], dir)
    }
    const files = readdirSync(tarballs)
    expect(files).toHaveLength(packages.length)
    const project = join(work, "host")
    const dependencies = Object.fromEntries(files.map((file) => [
      `@sightline/${/^sightline-(.+)-\d/.exec(file)![1]}`,
      `file:${join(tarballs, file)}`
    ]))
    execFileSync("mkdir", ["-p", project])
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify(
        {
          name: "host",
          private: true,
          dependencies: {
            ...dependencies,
            effect: "^3.22.4",
            "@effect/platform": "^0.97.2",
            "@effect/sql": "^0.52.1",
            "@effect/sql-pg": "^0.53.0",
            "@effect/experimental": "^0.61.1",
            typescript: "~5.9.3",
            "@types/node": "^20.19.0"
          }
        },
        null,
        2
      )
    )
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project)

    // The internals stay private.
    await expect(run("node", ["-e", "require.resolve('@sightline/core/internal/utf8')"], project)).rejects.toThrow()
    // The sandbox runtime loads from its built files and answers whether sandboxes can run here.
    const sandbox = await run("node", [
      "--input-type=module",
      "-e",
      "const m = await import('@sightline/sandbox/BubblewrapRuntime'); console.log(typeof m.layerOrUnavailable, " +
      "m.availability('/nonexistent/python3')._tag)"
    ], project)
    expect(sandbox.trim()).toBe("function Some")

    const example = withOutput(libraryExample())
    writeFileSync(join(project, "example.mjs"), example)
    writeFileSync(join(project, "example.cjs"), toCommonJs(example))
    for (const file of ["example.mjs", "example.cjs"]) {
      const output = (await run("node", [file], project)).trim().split("\n").at(-1)!
      expect([file, JSON.parse(output)]).toEqual([file, { status: "draft", total: 1 }])
    }

    writeFileSync(join(project, "example.ts"), example)
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ["node"]
        },
        files: ["example.ts"]
      })
    )
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        ...JSON.parse(readFileSync(join(project, "package.json"), "utf8")),
        type: "module"
      })
    )
    await run("npx", ["tsc", "-p", "."], project)
  })
})
