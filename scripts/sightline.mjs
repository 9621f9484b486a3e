// `pnpm start` and `pnpm sightline …`: the standalone server as built JavaScript. Each package the
// server loads is built with tsup (JavaScript only, a second or two each) when its sources are newer
// than its build, so a fresh clone, a `git pull` and an edit all start on current code; an unchanged
// tree starts at once, without compiling TypeScript on every start as tsx did.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const tsup = join(root, "node_modules", "tsup", "dist", "cli-default.js")
const built = ["core", "sql", "http", "ai", "connectors", "delivery", "sandbox"].map((name) => join(root, "packages", name))
  .concat([join(root, "examples", "server")])

const newest = (path) => {
  if (!existsSync(path)) return 0
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

for (const dir of built) {
  const sources = Math.max(newest(join(dir, "src")), newest(join(dir, "tsup.config.ts")), newest(join(dir, "package.json")))
  if (newest(join(dir, "dist")) > sources) continue
  const result = spawnSync(process.execPath, [tsup, "--silent"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] })
  if (result.status !== 0) {
    process.stderr.write(`sightline: building ${dir} failed\n`)
    process.exit(result.status ?? 1)
  }
}
// The console builds itself (`prepare`); here only where its files are is needed, from its dist.
const consoleDir = join(root, "packages", "console")
if (newest(join(consoleDir, "dist")) <= newest(join(consoleDir, "src"))) {
  spawnSync(process.execPath, [tsup, "--silent"], { cwd: consoleDir, stdio: ["ignore", "ignore", "inherit"] })
}

// A freshly migrated PGlite cluster that a new data directory starts from (seconds of `initdb` and
// migrations saved); made again whenever the SQL package was rebuilt (its migrations may differ).
const server = join(root, "examples", "server", "dist")
const template = join(server, "pglite-template.tar.gz")
if (newest(template) <= newest(join(root, "packages", "sql", "dist"))) {
  const result = spawnSync(process.execPath, [join(server, "bin.js"), "pglite-template", template], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  if (result.status !== 0) process.stderr.write("sightline: no PGlite template (new data directories start slower)\n")
}

// `SIGHTLINE_BUILD_ONLY=1`: build and stop (the start benchmark times the built server alone).
if (process.env.SIGHTLINE_BUILD_ONLY !== "1") await import(pathToFileURL(join(server, "bin.js")).href)
