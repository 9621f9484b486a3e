/**
 * Builds the standalone server's bundle (`pnpm start`'s `scripts/sightline.mjs`, which rebuilds only
 * when a source is newer) once before the tests: the tests that run the server as a real process
 * run exactly what operators run, and each process starts in about a second instead of compiling
 * the TypeScript sources again.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"

export default function setup() {
  const root = new URL("../../..", import.meta.url).pathname
  const built = spawnSync(process.execPath, [join(root, "scripts/sightline.mjs")], {
    env: { ...process.env, SIGHTLINE_BUILD_ONLY: "1" },
    stdio: ["ignore", "inherit", "inherit"]
  })
  if (built.status !== 0) throw new Error("building the standalone server failed")
}
