// Builds the console unless `build/` is newer than every source file: `pnpm install` runs this (the
// package's `prepare`), so a fresh clone serves the console without a separate build step, and a
// second install or test run does not rebuild for nothing.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const built = join(root, "build", "index.html")

const newest = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

const sources = [join(root, "web"), join(root, "vite.config.mts"), join(root, "package.json")]
const stale = !existsSync(built) || Math.max(...sources.map(newest)) > statSync(built).mtimeMs
if (stale) {
  const result = spawnSync(process.execPath, [join(root, "node_modules", "vite", "bin", "vite.js"), "build", "--config", "vite.config.mts", "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit"
  })
  process.exit(result.status ?? 1)
}
