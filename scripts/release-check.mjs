// `pnpm release:check`: what publishing would do, without publishing. Every package is built and
// packed (`pnpm pack`, which writes the versions `workspace:*` stands for), the tarballs are installed
// with plain npm into a new project outside the repository, and there, with plain node:
// - the library example of `docs/library.md` runs as ESM and as CommonJS, and type-checks with tsc;
// - the embed example (`examples/embed/src/Host.ts`, compiled by tsc as ESM and as CommonJS) mounts
//   Sightline in a node:http server, which answers the host's own page and `/v2` with its admin key;
// - the console's built files load (`@sightline/console/ConsoleAssets`);
// - the widget's package resolves to its bundle, its React wrapper and their types (`@sightline/embed`);
// - the sandbox runtime loads and answers whether sandboxes can run;
// - a package's internals cannot be imported.
// It needs the npm registry, for `effect` and the other dependencies. `--keep` keeps the project.
import { execFile } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const packages = ["core", "sql", "http", "ai", "connectors", "delivery", "sandbox", "console", "embed"]
const keep = process.argv.includes("--keep")

const run = async (command, args, cwd) => {
  try {
    const { stdout } = await promisify(execFile)(command, args, {
      cwd,
      encoding: "utf8",
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, CI: "true" }
    })
    return stdout
  } catch (error) {
    throw new Error(`${command} ${args.join(" ")} failed: ${error.message}\n${error.stdout ?? ""}\n${error.stderr ?? ""}`)
  }
}

const check = async (name, body) => {
  const started = performance.now()
  await body()
  console.log(`ok   ${name} (${((performance.now() - started) / 1000).toFixed(1)} s)`)
}

const equal = (actual, expected, what) => {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`)
  }
}

/** The library guide's example, as written, ending by printing what it made. */
const libraryExample = () => {
  const guide = readFileSync(join(root, "docs", "library.md"), "utf8")
  const match = /```ts\n([\s\S]*?)```/.exec(guide.slice(guide.indexOf("## Using the library")))
  if (match === null) throw new Error("docs/library.md: no ts block under \"Using the library\"")
  return match[1].replace(
    /Effect\.runPromise\(program\.pipe\(Effect\.provide\(Sightline\)\)\)\s*$/,
    "Effect.runPromise(program.pipe(Effect.provide(Sightline))).then(({ created, page }) =>\n" +
      "  console.log(JSON.stringify({ status: created.status, total: page.total_count })))\n"
  )
}

/** How a host compiles its TypeScript against the packages. */
const compilerOptions = {
  target: "ES2022",
  module: "NodeNext",
  moduleResolution: "NodeNext",
  strict: true,
  skipLibCheck: true,
  types: ["node"]
}

const toCommonJs = (code) => code.replace(/^import \{([^}]+)\} from "([^"]+)"$/gm, "const {$1} = require(\"$2\")")

/** Starts the embed example's host, asks it its own page and `/v2` with its admin key, and stops it. */
const embedRunner = (load) => `${load}
;(async () => {
  const host = await Host.start({ port: 0 })
  try {
    const page = await fetch(host.url + "/host")
    const me = await fetch(host.url + "/v2/members/me", { headers: { authorization: "Bearer " + host.adminKey } })
    console.log(JSON.stringify({ page: page.status, me: me.status, email: (await me.json()).email }))
  } finally {
    await host.close()
  }
})()
`

const work = mkdtempSync(join(tmpdir(), "sightline-release-"))
const tarballs = join(work, "tarballs")
const project = join(work, "host")
try {
  await check(`build and pack ${packages.length} packages`, async () => {
    const buildAndPack = async (name) => {
      const dir = join(root, "packages", name)
      await run("npx", ["-y", "pnpm@10.34.9", "run", "build"], dir)
      await run("npx", ["-y", "pnpm@10.34.9", "pack", "--pack-destination", tarballs], dir)
    }
    // Core first: the others' declarations import its built ones. They depend on core alone, so
    // they build two at a time (the test suite runs one file at a time on two cores).
    await buildAndPack("core")
    const rest = packages.filter((name) => name !== "core")
    await Promise.all([0, 1].map(async () => {
      while (rest.length > 0) await buildAndPack(rest.shift())
    }))
    equal(readdirSync(tarballs).length, packages.length, "tarballs")
  })

  await check("install the tarballs with npm into a new project", async () => {
    const dependencies = Object.fromEntries(readdirSync(tarballs).map((file) => [
      `@sightline/${/^sightline-(.+)-\d+\.\d+\.\d+/.exec(file)[1]}`,
      `file:${join(tarballs, file)}`
    ]))
    mkdirSync(project, { recursive: true })
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify(
        {
          name: "host",
          private: true,
          type: "module",
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
    // From the npm cache where it holds the versions asked for: the registry is asked only for what it lacks.
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], project)
  })

  await check("a package's internals cannot be imported", async () => {
    const refused = await run("node", [
      "-e",
      "try { require.resolve('@sightline/core/internal/utf8'); console.log('resolved') } catch { console.log('refused') }"
    ], project)
    equal(refused.trim(), "refused", "@sightline/core/internal/utf8")
  })

  await check("the sandbox runtime loads from its built files", async () => {
    const sandbox = await run("node", [
      "--input-type=module",
      "-e",
      "const m = await import('@sightline/sandbox/BubblewrapRuntime'); console.log(typeof m.layerOrUnavailable, " +
      "m.availability('/nonexistent/python3')._tag)"
    ], project)
    equal(sandbox.trim(), "function Some", "sandbox availability")
  })

  await check("the console's built files load", async () => {
    const assets = await run("node", [
      "--input-type=module",
      "-e",
      "const c = await import('@sightline/console/ConsoleAssets'); const files = c.readAll(); " +
      "console.log(JSON.stringify({ index: files.some((f) => f.path === 'index.html'), " +
      "scripts: files.some((f) => f.path.endsWith('.js')) }))"
    ], project)
    equal(JSON.parse(assets), { index: true, scripts: true }, "console assets")
  })

  await check("the widget's package holds its bundles and types", async () => {
    const resolved = await run("node", [
      "--input-type=module",
      "-e",
      "const fs = await import('node:fs'); const url = await import('node:url'); " +
      "const files = ['@sightline/embed', '@sightline/embed/react'].map((s) => url.fileURLToPath(import.meta.resolve(s))); " +
      "console.log(JSON.stringify(files.map((f) => [f.split('node_modules/')[1], fs.existsSync(f.replace(/dist\\/(\\w+)\\.js$/, 'dist/types/$1.d.ts'))])))"
    ], project)
    equal(JSON.parse(resolved), [["@sightline/embed/dist/index.js", true], ["@sightline/embed/dist/react.js", true]], "embed")
  })

  const example = libraryExample()
  await check("the library example of docs/library.md runs as ESM and as CommonJS", async () => {
    writeFileSync(join(project, "example.mjs"), example)
    writeFileSync(join(project, "example.cjs"), toCommonJs(example))
    for (const file of ["example.mjs", "example.cjs"]) {
      const output = (await run("node", [file], project)).trim().split("\n").at(-1)
      equal(JSON.parse(output), { status: "draft", total: 1 }, file)
    }
  })

  await check("the library example type-checks with tsc", async () => {
    writeFileSync(join(project, "example.ts"), example)
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { ...compilerOptions, noEmit: true }, files: ["example.ts"] })
    )
    await run("npx", ["tsc", "-p", "."], project)
  })

  await check("the embed example, compiled by tsc, serves as ESM and as CommonJS", async () => {
    for (const [dir, type, runner, load] of [
      ["embed-esm", "module", "run.mjs", "import * as Host from \"./Host.js\""],
      ["embed-cjs", "commonjs", "run.cjs", "const Host = require(\"./Host.js\")"]
    ]) {
      const at = join(project, dir)
      mkdirSync(at)
      cpSync(join(root, "examples", "embed", "src", "Host.ts"), join(at, "Host.ts"))
      writeFileSync(join(at, "package.json"), JSON.stringify({ type }))
      writeFileSync(
        join(at, "tsconfig.json"),
        JSON.stringify({ compilerOptions, files: ["Host.ts"] })
      )
      await run("npx", ["tsc", "-p", "."], at)
      writeFileSync(join(at, runner), embedRunner(load))
      const output = (await run("node", [runner], at)).trim().split("\n").at(-1)
      equal(JSON.parse(output), { page: 200, me: 200, email: "admin@host.example" }, `${dir}/${runner}`)
    }
  })
  console.log(`release check passed${keep ? `; the project is in ${project}` : ""}`)
} catch (error) {
  console.error(`FAIL ${error.message.slice(0, 6000)}`)
  process.exitCode = 1
} finally {
  if (!keep) rmSync(work, { recursive: true, force: true })
}
