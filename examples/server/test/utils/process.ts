/**
 * The standalone server as a real process (`node dist/bin.js …`, the bundle `pnpm start` runs, built
 * by `globalSetup.ts`): for the CLI tests and for tests that kill a server mid-run. Every process
 * started here is killed after the test file.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll } from "vitest"

const root = new URL("../../../..", import.meta.url).pathname
const bin = join(root, "examples/server/dist/bin.js")
const dirs: Array<string> = []
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  for (const dir of dirs) removeDataDir(dir)
})

/**
 * Removes a data directory a killed server used. Run as root, a server mounts each sandbox's
 * workspace, and a server killed mid-run leaves those mounts (its next start over the directory
 * sweeps them): they are detached first, or the removal fails on them.
 */
export const removeDataDir = (dir: string) => {
  const prefix = `${dir}/`
  const points = readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((line) => line.split(" ")[4] ?? "")
    .filter((point) => point.startsWith(prefix))
  for (const point of points.sort((a, b) => b.length - a.length)) {
    execFileSync("umount", ["-l", point], { stdio: "ignore" })
  }
  rmSync(dir, { recursive: true, force: true })
}

/** A temporary data directory, removed after the test file. */
export const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "sightline-cli-"))
  dirs.push(dir)
  return join(dir, "data")
}

export const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number }
      server.close(() => resolve(address.port))
    })
  })

/** Starts the binary with `args` and extra environment. */
export const start = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  children.push(child)
  const output = { stdout: "", stderr: "" }
  child.stdout!.on("data", (chunk) => (output.stdout += chunk))
  child.stderr!.on("data", (chunk) => (output.stderr += chunk))
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
  return { child, output, exited }
}

/**
 * Runs a command to its end. One that has not exited after 45 s is killed, and says so on its stderr,
 * so a hang fails its test with what the command printed rather than with a bare timeout.
 */
export const cli = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const { child, exited, output } = start(args, env)
  const timer = setTimeout(() => {
    output.stderr += "\n[the command did not exit within 45 s: killed]"
    child.kill("SIGKILL")
  }, 45_000)
  const code = await exited
  clearTimeout(timer)
  return { code, ...output }
}

/** Starts `serve` and waits until `/readyz` answers 200. */
export const serve = async (env: Record<string, string>) => {
  // A test that must know the address beforehand (an OpenID client's redirect URI) passes the port.
  const port = env.SIGHTLINE_PORT === undefined ? await freePort() : Number(env.SIGHTLINE_PORT)
  const process_ = start(["serve"], { ...env, SIGHTLINE_PORT: String(port) })
  const base = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    if (process_.child.exitCode !== null) throw new Error(`serve exited: ${process_.output.stderr}`)
    if (Date.now() > deadline) throw new Error(`serve did not get ready: ${process_.output.stderr}`)
    // Bounded: a request that gets no answer must not outlast the deadline.
    const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0)
    if (ready === 200) return { ...process_, base }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
