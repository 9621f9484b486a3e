// How a Sightline server is bundled into one ES module file with esbuild, for `pnpm start` (the
// standalone server) and the benchmarks (their target servers). One file instead of a thousand ES
// modules is most of a fast start: resolving and linking each module cost more than the server's own
// start did (measured with `pnpm bench:start`).
import { build, stop } from "esbuild"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, rmSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

/** The newest modification time under `path` (0 when it does not exist). */
export const newest = (path) => {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

/**
 * Builds the console's server-side module (where its built files are) into its own dist when a
 * source is newer: bundles leave it external, so it loads from there.
 */
export const ensureConsoleModule = () => {
  const consoleDir = join(root, "packages", "console")
  if (newest(join(consoleDir, "dist")) <= newest(join(consoleDir, "src"))) {
    const tsup = join(root, "node_modules", "tsup", "dist", "cli-default.js")
    spawnSync(process.execPath, [tsup, "--silent"], { cwd: consoleDir, stdio: ["ignore", "ignore", "inherit"] })
  }
}

/**
 * Bundles the TypeScript entry point `entry` and what it imports into `outfile`. What the server
 * only imports on demand (`import()`: the API reference page, the MySQL driver, ...) goes into
 * chunks of its own next to it (`<name>-chunks/`), loaded the first time it is needed, so that a
 * start parses and holds only what a start runs.
 */
export const bundleServer = (entry, outfile) => {
  ensureConsoleModule()
  const name = basename(outfile, ".js")
  rmSync(join(dirname(outfile), `${name}-chunks`), { recursive: true, force: true })
  return build({
    entryPoints: { [name]: entry },
    outdir: dirname(outfile),
    splitting: true,
    chunkNames: `${name}-chunks/[name]-[hash]`,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // Workspace packages from their sources, as the tests and tsx read them.
    conditions: ["@sightline/source"],
    mainFields: ["module", "main"],
    // Loaded from node_modules at run time: PGlite reads its WebAssembly and data files next to its
    // own module, resvg, DuckDB and pg-native are native addons, and the console finds its built
    // files next to its own module.
    external: [
      "@electric-sql/pglite",
      "@electric-sql/pglite/*",
      "@resvg/resvg-js",
      "@duckdb/node-api",
      "pg-native",
      "@sightline/console/*"
    ],
    // Bundled CommonJS dependencies (pg, mysql2, nodemailer) call `require` for Node's modules.
    banner: {
      js: "import { createRequire as __sightlineRequire } from 'node:module'; " +
        "const require = __sightlineRequire(import.meta.url);"
    },
    // Without comments the file is ASCII, which V8 keeps in one byte a character (one comment in
    // another alphabet made all of it two); names stay, so stack traces read as the sources do.
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: "linked",
    logLevel: "warning"
  })
}

/** Stops esbuild's service process (a later build starts it again). */
export const stopBundler = () => stop()
