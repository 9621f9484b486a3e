// Builds the widget: one ESM bundle per entry (`dist/index.js`, `dist/react.js`), minified, with the
// chart library split into chunks that load on the first chart; then the types. Prints the gzipped
// size of what a page loads for `<sightline-chat>` before any chart (the budget is 60 kB), beside
// the chart library's, so a build shows both. `--if-stale` (the package's `prepare`) builds only when
// a source is newer than the bundle, so an install or a test run does not rebuild for nothing.
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const bundle = join(dist, "index.js")

const newest = (path) => {
  const stat = statSync(path)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))))
}

if (process.argv.includes("--if-stale") && existsSync(join(dist, "types", "index.d.ts"))) {
  const sources = [join(root, "src"), join(root, "scripts"), join(root, "package.json")]
  if (Math.max(...sources.map(newest)) <= statSync(bundle).mtimeMs) process.exit(0)
}

rmSync(dist, { recursive: true, force: true })
const result = await build({
  absWorkingDir: root,
  entryPoints: ["src/index.ts", "src/react.ts"],
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "browser",
  target: "es2022",
  minify: true,
  external: ["react"],
  chunkNames: "chunks/[name]-[hash]",
  metafile: true,
  legalComments: "none",
  logLevel: "warning"
})

// What loads with an entry before any chart: the entry and the chunks it imports statically.
const loaded = (entry, seen = new Set()) => {
  if (seen.has(entry)) return seen
  seen.add(entry)
  for (const imported of result.metafile.outputs[entry].imports) {
    if (imported.kind === "import-statement" && imported.path in result.metafile.outputs) loaded(imported.path, seen)
  }
  return seen
}
const gzipped = (files) => gzipSync(Buffer.concat([...files].map((file) => readFileSync(join(root, file))))).length
const chat = loaded("dist/index.js")
const charts = Object.keys(result.metafile.outputs).filter((file) => file.endsWith(".js") && !chat.has(file) && file !== "dist/react.js")
const kB = (bytes) => `${(bytes / 1024).toFixed(1)} kB`
console.log(`@sightline/embed: <sightline-chat> ${kB(gzipped(chat))} gzipped before charts (budget 60 kB); the chart library ${kB(gzipped(charts))} gzipped, loaded on the first chart`)

const types = spawnSync(process.execPath, [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json"], {
  cwd: root,
  stdio: "inherit"
})
if (types.status !== 0) process.exit(types.status ?? 1)
console.log(`@sightline/embed: built ${relative(process.cwd(), dist)}`)
