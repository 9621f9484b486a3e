/**
 * `pnpm bench:cluster`: the throughput of authenticated `GET /v2/chats` (one organization, its admin
 * key, `--chats` chats) through a round-robin proxy in front of one, two and three API processes of
 * the built server over one PostgreSQL, each figure beside the one-process figure of the same run
 * (the floor it scales from).
 *
 * The proxy is nginx when it is installed (`docs/deploy.md`'s configuration, `test/utils/nginx.ts`),
 * else a small Node.js one. Everything runs on this machine: the load generator,
 * the proxy, the servers and PostgreSQL share its cores, so the table also gives the CPU each
 * answer costs across all of them, and the answers per second per busy core: what adding processes
 * buys where there are cores to give them.
 *
 *   pnpm bench:cluster [--seconds 5] [--rounds 3] [--connections 32] [--chats 50] [--url postgres://…]
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import * as http from "node:http"
import { availableParallelism, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import * as Nginx from "../test/utils/nginx.js"
import { roundRobin } from "../test/utils/proxy.js"
import { build } from "./builtServer.js"
import { postgresCpuMs, processCpuMs } from "./cpu.js"
import { dropStore } from "./drop.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "32" },
    chats: { type: "string", default: "50" },
    url: { type: "string", default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" }
  }
})
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const root = new URL("../../..", import.meta.url).pathname
const bin = join(root, "examples/server/dist/bin.js")
const work = mkdtempSync(join(tmpdir(), "sightline-bench-cluster-"))
const prefix = `bench${Math.random().toString(16).slice(2, 10)}_`
const env = {
  ...process.env,
  DATABASE_URL: values.url,
  SIGHTLINE_TABLE_PREFIX: prefix,
  SIGHTLINE_ROLES: "api",
  SIGHTLINE_RATE_LIMIT_PER_MINUTE: "1000000000",
  SIGHTLINE_CLUSTER_SECRET: "the channel secret of the cluster benchmark"
}
const children: Array<ChildProcess> = []
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL")
})

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = http.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

/** Starts one API process; ready once `/readyz` answers. */
const serve = async () => {
  const port = await freePort()
  const child = spawn(process.execPath, [bin, "serve"], {
    env: { ...env, SIGHTLINE_PORT: String(port), SIGHTLINE_DATA_DIR: mkdtempSync(join(work, "data-")) },
    // Its access log (a line per request on stderr) would drown the table.
    stdio: "ignore"
  })
  children.push(child)
  const base = `http://127.0.0.1:${port}`
  for (let i = 0; i < 600; i++) {
    if ((await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200) return { base, pid: child.pid! }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("a server did not get ready")
}

const pidsOf = (command: string): Array<string> =>
  readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid)) return false
    try {
      return readFileSync(`/proc/${pid}/comm`, "utf8").trim() === command
    } catch {
      return false
    }
  })

interface Result {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  /** CPU milliseconds per answer: the servers, PostgreSQL, and everything (with the proxy and this load generator). */
  readonly serverCpuMs: number
  readonly pgCpuMs: number
  readonly totalCpuMs: number
  /** CPU seconds spent per second of wall clock: how many cores were busy. */
  readonly busyCores: number
  readonly errors: number
}

const load = async (url: string, key: string, duration: number, servers: ReadonlyArray<number>): Promise<Result> => {
  const target = new URL(url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies: Array<number> = []
  let errors = 0
  const one = () =>
    new Promise<void>((resolve) => {
      const started = performance.now()
      http.get(
        {
          host: target.hostname,
          port: target.port,
          path: "/v2/chats",
          agent,
          headers: { authorization: `Bearer ${key}` }
        },
        (response) => {
          response.resume()
          response.on("end", () => {
            if (response.statusCode === 200) latencies.push(performance.now() - started)
            else errors++
            resolve()
          })
        }
      ).on("error", () => {
        errors++
        resolve()
      })
    })
  const cpuOf = () => {
    const serverCpu = servers.reduce((sum, pid) => sum + processCpuMs(pid), 0)
    const proxyCpu = pidsOf("nginx").reduce((sum, pid) => sum + processCpuMs(pid), 0)
    return { serverCpu, pgCpu: postgresCpuMs(), rest: proxyCpu + processCpuMs(process.pid) }
  }
  const before = cpuOf()
  const deadline = performance.now() + duration * 1000
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) await one()
  }))
  const elapsed = (performance.now() - started) / 1000
  const after = cpuOf()
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
  const served = Math.max(1, latencies.length)
  const serverCpu = after.serverCpu - before.serverCpu
  const pgCpu = after.pgCpu - before.pgCpu
  const total = serverCpu + pgCpu + (after.rest - before.rest)
  return {
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    serverCpuMs: serverCpu / served,
    pgCpuMs: pgCpu / served,
    totalCpuMs: total / served,
    busyCores: total / 1000 / elapsed,
    errors
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

build()
try {
  const created = spawnSync(process.execPath, [
    bin,
    "org",
    "create",
    "--name",
    "Bench",
    "--admin-email",
    "bench@example.com",
    "--json"
  ], {
    env: { ...env, SIGHTLINE_DATA_DIR: mkdtempSync(join(work, "data-")) },
    encoding: "utf8"
  })
  if (created.status !== 0) throw new Error(`org create failed: ${created.stderr}`)
  const key = JSON.parse(created.stdout).api_key as string
  const servers = [await serve(), await serve(), await serve()]
  // The chats the page lists, asked of the offline model.
  for (let i = 0; i < Number(values.chats); i++) {
    const asked = await fetch(`${servers[0]!.base}/v2/chats`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ question: `How many orders were there in week ${i}?` })
    })
    if (asked.status >= 300) throw new Error(`seeding a chat answered ${asked.status}: ${await asked.text()}`)
  }

  const proxies = []
  for (const count of [1, 2, 3]) {
    const backends = servers.slice(0, count).map((s) => s.base)
    const proxy = Nginx.unavailable === undefined ? await Nginx.start(backends) : await roundRobin(backends)
    proxies.push({ count, proxy, pids: servers.slice(0, count).map((s) => s.pid) })
  }
  const kind = Nginx.unavailable === undefined ? "nginx" : "a Node.js round-robin proxy"
  for (const { pids, proxy } of proxies) await load(proxy.url, key, Number(values.warmup), pids)
  const results = new Map<number, Array<Result>>(proxies.map((p) => [p.count, []]))
  for (let round = 0; round < Number(values.rounds); round++) {
    // Alternating order, so that a noisy moment of the machine falls on every count.
    const order = round % 2 === 0 ? proxies : [...proxies].reverse()
    for (const { count, pids, proxy } of order) results.get(count)!.push(await load(proxy.url, key, seconds, pids))
  }
  for (const { proxy } of proxies) await proxy.close()

  const m = (count: number, field: keyof Result) => median(results.get(count)!.map((r) => r[field]))
  const header = [
    "API processes",
    "req/s",
    "× one process (goal: 3 ≥ 2.5× where there are cores)",
    "p50 / p99 ms",
    "server CPU ms/req",
    "PostgreSQL CPU ms/req",
    "all CPU ms/req",
    "busy cores",
    "req/s per busy core",
    "errors"
  ]
  console.log(
    `\n${availableParallelism()} cores; ${kind} in front; ${connections} connections; ${values.rounds} alternating rounds ` +
      `of ${seconds} s per count (medians); ${values.chats} chats on the page\n`
  )
  console.log(`| ${header.join(" | ")} |`)
  console.log(`|${header.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`)
  for (const count of [1, 2, 3]) {
    console.log(`| ${
      [
        String(count),
        m(count, "rps").toFixed(0),
        `${(m(count, "rps") / m(1, "rps")).toFixed(2)}×`,
        `${m(count, "p50").toFixed(1)} / ${m(count, "p99").toFixed(1)}`,
        m(count, "serverCpuMs").toFixed(3),
        m(count, "pgCpuMs").toFixed(3),
        m(count, "totalCpuMs").toFixed(3),
        m(count, "busyCores").toFixed(2),
        (m(count, "rps") / m(count, "busyCores")).toFixed(0),
        String(results.get(count)!.reduce((sum, r) => sum + r.errors, 0))
      ].join(" | ")
    } |`)
  }
} finally {
  for (const child of children) child.kill("SIGKILL")
  await dropStore(values.url!, prefix).catch((error) => console.error(`could not drop ${prefix}: ${String(error)}`))
  rmSync(work, { recursive: true, force: true })
}
