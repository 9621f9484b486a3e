/**
 * The built server as a process of its own on a fresh data directory, for the benchmarks that
 * measure it from outside: built first (`scripts/sightline.mjs`), started with `env`, and ready
 * once it printed the first admin's API key and `/healthz` answers.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const root = new URL("../../..", import.meta.url).pathname

/** A started server: its base URL, the first admin's key, and how to stop it (its data goes too). */
export interface BuiltServer {
  readonly base: string
  readonly key: string
  /** The server process's id (its memory is read from `/proc`). */
  readonly pid: number
  readonly stop: () => void
}

/** Builds the server (when a source is newer than the bundle). */
export const build = (): void => {
  const built = spawnSync(process.execPath, [join(root, "scripts/sightline.mjs")], {
    env: { ...process.env, SIGHTLINE_BUILD_ONLY: "1" },
    stdio: "inherit"
  })
  if (built.status !== 0) throw new Error("the build failed")
}

/** Starts the built server on `port` with `env` added to this process's environment. */
export const start = async (port: number, env: Readonly<Record<string, string>>): Promise<BuiltServer> => {
  const dataDir = mkdtempSync(join(tmpdir(), "sightline-bench-"))
  const server = spawn(process.execPath, [join(root, "examples/server/dist/bin.js"), "serve"], {
    env: { ...process.env, SIGHTLINE_PORT: String(port), SIGHTLINE_DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  const stop = () => {
    server.kill("SIGKILL")
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    let output = ""
    server.stdout!.on("data", (chunk) => output += chunk)
    server.stderr!.resume()
    const key = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not start:\n${output}`)), 60_000)
      const check = setInterval(() => {
        const found = /Admin API key \(shown once, keep it\): (\S+)/.exec(output)
        if (found !== null) {
          clearInterval(check)
          clearTimeout(timer)
          resolve(found[1]!)
        }
      }, 50)
    })
    const base = `http://127.0.0.1:${port}`
    for (let i = 0; i < 100; i++) {
      if ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200) break
      await new Promise((r) => setTimeout(r, 100))
    }
    return { base, key, pid: server.pid!, stop }
  } catch (error) {
    stop()
    throw error
  }
}
