/**
 * `pnpm bench:start`: how fast the standalone server starts and how much memory it holds, against
 * a floor measured in the same run (a bare `node:http` server: Node's own start and RSS).
 *
 * For each way of starting (the built server `pnpm start` runs, `pnpm start` itself building the
 * bundle first as on a fresh clone's first start, and tsx compiling the sources as `pnpm start` did
 * before), on a fresh data directory and on reopening it: the time from spawn to the first `200` of
 * `/healthz`, the RSS then (of the process and its descendants), and the RSS after `--requests`
 * authenticated reads. The first start that builds must hold no more memory than the reopening that
 * does not: a build process left behind would show there.
 *
 *   pnpm bench:start [--rounds 3] [--requests 10000]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, utimesSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: { rounds: { type: "string", default: "3" }, requests: { type: "string", default: "10000" } }
})
const rounds = Number(values.rounds)
const requests = Number(values.requests)
const root = new URL("../../..", import.meta.url).pathname
const port = 18_787

// The built server (and its PGlite template) must exist before timing it.
const build = spawnSync(process.execPath, [join(root, "scripts/sightline.mjs")], {
  env: { ...process.env, SIGHTLINE_BUILD_ONLY: "1" },
  stdio: "inherit"
})
if (build.status !== 0) throw new Error("the build failed")

interface Way {
  readonly name: string
  readonly command: ReadonlyArray<string>
  readonly env?: Record<string, string>
  /** Run before the fresh start only. */
  readonly beforeFresh?: () => void
}
const bundle = join(root, "examples/server/dist/bin.js")
const ways: ReadonlyArray<Way> = [
  { name: "floor: bare node:http", command: [process.execPath, "-e", floorServer()] },
  { name: "built (pnpm start)", command: [process.execPath, bundle, "serve"] },
  {
    // As a fresh clone's first `pnpm start`: the bundle is older than its sources, so it is built
    // (esbuild in this process) before the server starts in it.
    name: "pnpm start, building first",
    command: [process.execPath, join(root, "scripts/sightline.mjs"), "serve"],
    beforeFresh: () => utimesSync(bundle, new Date(0), new Date(0))
  },
  {
    name: "built, no PGlite template",
    command: [process.execPath, bundle, "serve"],
    env: { SIGHTLINE_PGLITE_TEMPLATE: "off" }
  },
  {
    name: "tsx from sources (before)",
    command: [
      join(root, "node_modules/.bin/tsx"),
      "--conditions=@sightline/source",
      join(root, "examples/server/src/bin.ts"),
      "serve"
    ]
  }
]

function floorServer(): string {
  return `require("node:http").createServer((q, s) => s.end('{"status":"ok"}')).listen(${port}, "127.0.0.1")`
}

// The RSS of a process and its descendants: tsx runs the server in a child process of its own.
const rssMiB = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"))!
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter((c) => c !== "")
  return Number(line.split(/\s+/)[1]) / 1024 + children.reduce((sum, child) => sum + rssMiB(Number(child)), 0)
}

// One agent per server process: a kept-alive socket must not outlive the server it went to. A
// request that stalls is abandoned, so a wait never outlives everything that keeps Node running.
let agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
const get = (path: string, key?: string) =>
  new Promise<number>((resolve) => {
    const request = http.get(
      { host: "127.0.0.1", port, path, agent, headers: key === undefined ? {} : { authorization: `Bearer ${key}` } },
      (response) => {
        response.resume()
        response.on("end", () => resolve(response.statusCode ?? 0))
        response.on("error", () => resolve(0))
      }
    )
    request.setTimeout(5_000, () => request.destroy(new Error("timed out")))
    request.on("error", () => resolve(0))
  })

interface Run {
  readonly startMs: number
  readonly rssStart: number
  readonly rssAfter: number | undefined
}

const once = async (way: Way, dataDir: string): Promise<Run> => {
  agent.destroy()
  agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
  const started = performance.now()
  const child: ChildProcess = spawn(way.command[0]!, way.command.slice(1), {
    cwd: root,
    env: {
      ...process.env,
      ...way.env,
      SIGHTLINE_PORT: String(port),
      SIGHTLINE_DATA_DIR: dataDir,
      SIGHTLINE_SANDBOX_DIR: "off",
      SIGHTLINE_RATE_LIMIT_PER_MINUTE: "100000000"
    },
    stdio: ["ignore", "pipe", "ignore"]
  })
  let stdout = ""
  child.stdout!.on("data", (chunk) => (stdout += chunk))
  for (;;) {
    if ((await get("/healthz")) === 200) break
    if (performance.now() - started > 120_000) throw new Error(`${way.name} did not start`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const startMs = performance.now() - started
  const rssStart = rssMiB(child.pid!)
  const key = /Admin API key \(shown once, keep it\): (\S+)/.exec(stdout)?.[1] ?? lastKey
  lastKey = key ?? lastKey
  let rssAfter: number | undefined
  if (key !== undefined && requests > 0) {
    let sent = 0
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent < requests) {
        sent++
        await get("/v2/playbooks", key)
      }
    }))
    rssAfter = rssMiB(child.pid!)
  }
  const exited = new Promise((resolve) => child.on("exit", resolve))
  // tsx runs the server in a child of its own: the whole process group goes.
  child.kill("SIGTERM")
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))])
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  return { startMs, rssStart, rssAfter }
}
let lastKey: string | undefined

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const fmt = (n: number | undefined, digits = 0) => (n === undefined ? "–" : n.toFixed(digits))

console.log(`\n${rounds} rounds each; median. Start: spawn to the first 200 of /healthz. RSS in MiB.\n`)
console.log(
  "| way | fresh start ms | reopen start ms | RSS after a fresh start | RSS after reopening | RSS after " + requests +
    " reads |"
)
console.log("|---|---:|---:|---:|---:|---:|")
for (const way of ways) {
  const fresh: Array<Run> = []
  const reopen: Array<Run> = []
  for (let round = 0; round < rounds; round++) {
    const dir = mkdtempSync(join(tmpdir(), "sightline-start-"))
    const dataDir = join(dir, "data")
    lastKey = undefined
    way.beforeFresh?.()
    fresh.push(await once(way, dataDir))
    reopen.push(await once(way, dataDir))
    rmSync(dir, { recursive: true, force: true })
  }
  const afters = reopen.map((r) => r.rssAfter).filter((x): x is number => x !== undefined)
  console.log(
    `| ${way.name} | ${fmt(median(fresh.map((r) => r.startMs)))} | ${fmt(median(reopen.map((r) => r.startMs)))} | ` +
      `${fmt(median(fresh.map((r) => r.rssStart)))} | ${fmt(median(reopen.map((r) => r.rssStart)))} | ` +
      `${afters.length === 0 ? "–" : fmt(median(afters))} |`
  )
}
agent.destroy()
