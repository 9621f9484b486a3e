// `pnpm start` and `pnpm sightline …`: the standalone server as one bundled JavaScript file.
//
// The server and every workspace package it loads are bundled from their TypeScript sources into
// `examples/server/dist/bin.js` (`bundle.mjs`, a second or two) whenever a source is newer than the
// bundle: a fresh clone, a `git pull` and an edit all start on current code, and an unchanged tree
// starts at once.
import { spawnSync } from "node:child_process"
import { utimesSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { bundleServer, ensureConsoleModule, newest, stopBundler } from "./bundle.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const server = join(root, "examples", "server")
const bundle = join(server, "dist", "bin.js")

const sources = [server, ...["core", "sql", "http", "ai", "connectors", "delivery", "sandbox"].map((name) =>
  join(root, "packages", name)
)].flatMap((dir) => [join(dir, "src"), join(dir, "package.json")]).concat([
  join(root, "pnpm-lock.yaml"),
  join(root, "scripts", "bundle.mjs")
])

if (newest(bundle) <= Math.max(...sources.map(newest))) {
  try {
    await bundleServer(join(server, "src", "bin.ts"), bundle)
  } catch {
    process.stderr.write("sightline: building the server failed (see above)\n")
    process.exit(1)
  } finally {
    // esbuild's service is a child process that would otherwise live as long as the server, holding
    // hundreds of MB for nothing: the server is built, and nothing here builds again.
    await stopBundler()
  }
}

// Also when the bundle is current: the console's module may be missing or older than its sources.
ensureConsoleModule()

// A freshly migrated PGlite cluster that a new data directory starts from (seconds of `initdb` and
// migrations saved); made again whenever the SQL package changed (its migrations may differ).
const template = join(server, "dist", "pglite-template.tar.gz")
if (newest(template) <= newest(join(root, "packages", "sql", "src"))) {
  const result = spawnSync(process.execPath, [bundle, "pglite-template", template], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  if (result.status !== 0) process.stderr.write("sightline: no PGlite template (new data directories start slower)\n")
}

// The DEMO connector's database, built once where the server looks for it (`Config.builtDemoCache`),
// so that even a fresh install's first question loads it instead of spending seconds building it.
// Checked again whenever the connectors package changed (its dataset may differ); a new year's
// dataset is built by the first server that needs it, which writes it here too.
const demoCache = join(server, "dist", "demo-cache")
if (newest(demoCache) <= newest(join(root, "packages", "connectors", "src"))) {
  process.stderr.write("sightline: preparing the DEMO connector's database (seconds, once)\n")
  const result = spawnSync(process.execPath, [bundle, "demo-cache", demoCache], { stdio: ["ignore", "ignore", "inherit"] })
  if (result.status === 0) utimesSync(demoCache, new Date(), new Date())
  else process.stderr.write("sightline: the DEMO database is not cached (the first question about it waits longer)\n")
}

// `SIGHTLINE_BUILD_ONLY=1`: build and stop (the start benchmark and the tests run the bundle).
if (process.env.SIGHTLINE_BUILD_ONLY !== "1") await import(pathToFileURL(bundle).href)
