/**
 * `pnpm bench:http`: authenticated `GET /v2/playbooks/{id}` and `GET /v2/chats` (seeded: one
 * organization, its admin key, a playbook, `--chats` chats), on PGlite and PostgreSQL, side by side
 * with the floor: the smallest correct server for the same reads, written by hand with `node:http`
 * and `pg` (`floor.ts`: two prepared statements, a token bucket in memory).
 *
 * Before measuring, it checks that both answer the same bytes: status, body and headers (all but
 * `x-request-id` and `date`) of a playbook, the chats, an unknown playbook (404), a malformed key
 * (401), and a request over a small rate limit (429).
 *
 * Then both servers run at once, each in its own process, and are measured in alternating rounds:
 * the load generator here keeps `--connections` keep-alive connections busy for `--seconds` per round
 * and path. Reported: req/s, p50/p99 latency, and CPU milliseconds per request of the server process
 * and of PostgreSQL (every `postgres` process), read from `/proc`: the figure that survives a noisy
 * machine. Each figure is the median over `--rounds`.
 *
 * With `--traced`, Sightline exports its traces over OTLP to a sink on loopback (as an operator's
 * collector would take them), so the same table measures what tracing costs; `--sample 0.1` keeps a
 * tenth of the traces (`OTEL_TRACES_SAMPLER=parentbased_traceidratio`).
 *
 *   pnpm bench:http [--seconds 5] [--rounds 3] [--connections 16] [--chats 1000] [--db pglite,postgres] [--traced [--sample 1]]
 */
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { bundleServer } from "../../../scripts/bundle.mjs"
import { postgresCpuMs, processCpuMs } from "./cpu.js"
import { dropStore } from "./drop.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    rounds: { type: "string", default: "3" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "16" },
    chats: { type: "string", default: "1000" },
    db: { type: "string", default: "pglite,postgres" },
    traced: { type: "boolean", default: false },
    sample: { type: "string", default: "1" },
    url: { type: "string", default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" }
  }
})
const seconds = Number(values.seconds)
// The collector of `--traced`: takes every export and answers 200, as a collector does.
const sink = values.traced
  ? await new Promise<string>((resolve) => {
    const server = http.createServer((request, response) => {
      request.resume()
      request.on("end", () => response.end("{}"))
    }).listen(
      0,
      "127.0.0.1",
      () => resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}/v1/traces`)
    )
    server.unref()
  })
  : undefined
const rounds = Number(values.rounds)
const connections = Number(values.connections)
const here = new URL(".", import.meta.url).pathname

// Both servers run bundled, as `pnpm start` runs the standalone server.
const bundled = { sightline: join(here, "../dist/bench/target.js"), floor: join(here, "../dist/bench/floor.js") }
await bundleServer(join(here, "target.ts"), bundled.sightline)
await bundleServer(join(here, "floor.ts"), bundled.floor)
type Target = keyof typeof bundled

const child = (file: string, args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, [file, ...args], { stdio: ["ignore", "pipe", "inherit"] })

/** The first stdout line of a child that satisfies `test`. */
const firstLine = (process_: ChildProcess, test: (line: string) => boolean): Promise<string> =>
  new Promise((resolve, reject) => {
    let buffer = ""
    process_.stdout!.on("data", (chunk: Buffer) => {
      buffer += chunk.toString()
      for (const line of buffer.split("\n").slice(0, -1)) if (test(line)) resolve(line)
    })
    process_.on("exit", (code) => reject(new Error(`child exited with ${code}: ${buffer.slice(0, 500)}`)))
  })

const stop = (process_: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (process_.exitCode !== null) return resolve()
    process_.on("exit", () => resolve())
    process_.kill("SIGTERM")
    setTimeout(() => process_.kill("SIGKILL"), 5000).unref()
  })

const startServer = async (file: string, args: ReadonlyArray<string>) => {
  const process_ = child(file, args)
  const ready = await firstLine(process_, (line) => line.startsWith("READY"))
  return { process: process_, port: Number(ready.split(" ")[1]) }
}

interface Answer {
  readonly status: number
  readonly headers: string
  readonly body: string
}
const fetchOnce = (port: number, path: string, key: string) =>
  new Promise<Answer>((resolve, reject) => {
    http.get(
      { host: "127.0.0.1", port, path, agent: false, headers: { authorization: `Bearer ${key}` } },
      (response) => {
        let body = ""
        response.on("data", (chunk) => (body += chunk))
        response.on("end", () => {
          const headers = Object.entries(response.headers)
            .filter(([name]) => name !== "date" && name !== "x-request-id" && name !== "connection")
            .map(([name, value]) => `${name}: ${value}`)
            .join("\n")
          resolve({ status: response.statusCode!, headers, body })
        })
      }
    ).on("error", reject)
  })

interface Result {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly cpuMs: number
  readonly pgCpuMs: number
  readonly errors: number
}

/** Keeps `connections` requests in flight for `duration` seconds; latencies in milliseconds. */
const load = async (
  server: ChildProcess,
  port: number,
  path: string,
  key: string,
  duration: number
): Promise<Result> => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections })
  const latencies: Array<number> = []
  let errors = 0
  const deadline = performance.now() + duration * 1000
  const one = () =>
    new Promise<void>((resolve) => {
      const started = performance.now()
      const request = http.get(
        { host: "127.0.0.1", port, path, agent, headers: { authorization: `Bearer ${key}` } },
        (response) => {
          response.resume()
          response.on("end", () => {
            if (response.statusCode === 200) latencies.push(performance.now() - started)
            else errors++
            resolve()
          })
        }
      )
      request.on("error", () => {
        errors++
        resolve()
      })
    })
  const cpuBefore = processCpuMs(server.pid!)
  const pgBefore = postgresCpuMs()
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) await one()
  }))
  const elapsed = (performance.now() - started) / 1000
  const cpu = processCpuMs(server.pid!) - cpuBefore
  const pgCpu = postgresCpuMs() - pgBefore
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
  const served = Math.max(1, latencies.length)
  return {
    rps: latencies.length / elapsed,
    p50: at(0.5),
    p99: at(0.99),
    cpuMs: cpu / served,
    pgCpuMs: pgCpu / served,
    errors
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const rows: Array<Array<string>> = []
let mismatches = 0
for (const db of values.db.split(",")) {
  const dir = mkdtempSync(join(tmpdir(), "sightline-bench-"))
  const prefix = `bench${Math.random().toString(16).slice(2, 10)}_`
  // On PGlite each server needs a data directory of its own (one process each): the floor reads a
  // copy of the seeded one.
  const store = (target: Target) =>
    db === "postgres"
      ? ["--db", "postgres", "--url", values.url]
      : ["--db", "pglite", "--data-dir", join(dir, target === "sightline" ? "data" : "floor")]
  const args = (target: Target, limit?: number) => [
    ...(target === "sightline"
      ? ["sightline", ...(sink === undefined ? [] : ["--otlp", sink, "--sample", values.sample])]
      : []),
    ...store(target),
    "--prefix",
    prefix,
    ...(limit === undefined ? [] : ["--limit", String(limit)])
  ]
  try {
    const seeding = child(bundled.sightline, [
      "seed",
      ...store("sightline"),
      "--prefix",
      prefix,
      "--chats",
      values.chats
    ])
    const seeded = JSON.parse(await firstLine(seeding, (line) => line.startsWith("{"))) as {
      key: string
      playbookId: string
    }
    await stop(seeding)
    if (db === "pglite") cpSync(join(dir, "data"), join(dir, "floor"), { recursive: true })
    const paths = { "GET /v2/playbooks/{id}": `/v2/playbooks/${seeded.playbookId}`, "GET /v2/chats": "/v2/chats" }

    // The same answers, byte for byte, under a limit of 3 a minute: three reads, then a 429.
    const checks: Array<[string, string, string]> = [
      ["playbook", paths["GET /v2/playbooks/{id}"], seeded.key],
      ["chats", paths["GET /v2/chats"], seeded.key],
      ["unknown playbook (404)", "/v2/playbooks/00000000-0000-4000-8000-000000000000", seeded.key],
      ["malformed key (401)", paths["GET /v2/chats"], `x${seeded.key}`],
      ["over the limit (429)", paths["GET /v2/chats"], seeded.key]
    ]
    const answers: Record<Target, Array<Answer>> = { sightline: [], floor: [] }
    for (const target of ["sightline", "floor"] as const) {
      const server = await startServer(bundled[target], args(target, 3))
      for (const [, path, key] of checks) answers[target].push(await fetchOnce(server.port, path, key))
      await stop(server.process)
    }
    const before = mismatches
    checks.forEach(([name], i) => {
      const [s, f] = [answers.sightline[i]!, answers.floor[i]!]
      const same = s.status === f.status && s.body === f.body && s.headers === f.headers
      if (!same) {
        mismatches++
        console.error(
          `${db}: ${name}: the floor answers differently\n  sightline: ${JSON.stringify(s)}\n  floor:     ${
            JSON.stringify(f)
          }`
        )
      } else console.error(`${db}: ${name}: identical (${s.status}, ${s.body.length} bytes)`)
    })
    // A floor that answers something else is no floor: nothing is measured against it.
    if (mismatches > before) continue

    const servers = {
      sightline: await startServer(bundled.sightline, args("sightline")),
      floor: await startServer(bundled.floor, args("floor"))
    }
    const results: Record<string, Record<Target, Array<Result>>> = {}
    for (const [name, path] of Object.entries(paths)) {
      results[name] = { sightline: [], floor: [] }
      for (const target of ["sightline", "floor"] as const) {
        const { port, process: server } = servers[target]
        await load(server, port, path, seeded.key, Number(values.warmup))
      }
      for (let round = 0; round < rounds; round++) {
        // Alternating, so that a noisy moment of the machine falls on both.
        const order: ReadonlyArray<Target> = round % 2 === 0 ? ["sightline", "floor"] : ["floor", "sightline"]
        for (const target of order) {
          const { port, process: server } = servers[target]
          results[name][target].push(await load(server, port, path, seeded.key, seconds))
        }
      }
    }
    await stop(servers.sightline.process)
    await stop(servers.floor.process)

    for (const [name, byTarget] of Object.entries(results)) {
      const m = (target: Target, field: keyof Result) => median(byTarget[target].map((r) => r[field]))
      const ratio = m("sightline", "rps") / m("floor", "rps")
      const cpuRatio = m("sightline", "cpuMs") / m("floor", "cpuMs")
      rows.push([
        db,
        name,
        m("sightline", "rps").toFixed(0),
        m("floor", "rps").toFixed(0),
        `${ratio.toFixed(2)}×`,
        `${m("sightline", "p50").toFixed(1)} / ${m("sightline", "p99").toFixed(1)}`,
        `${m("floor", "p50").toFixed(1)} / ${m("floor", "p99").toFixed(1)}`,
        m("sightline", "cpuMs").toFixed(3),
        m("floor", "cpuMs").toFixed(3),
        `${cpuRatio.toFixed(1)}×`,
        db === "postgres"
          ? `${m("sightline", "pgCpuMs").toFixed(3)} / ${m("floor", "pgCpuMs").toFixed(3)}`
          : "(in process)",
        String(byTarget.sightline.concat(byTarget.floor).reduce((sum, r) => sum + r.errors, 0))
      ])
    }
  } finally {
    if (db === "postgres") {
      await dropStore(values.url!, prefix)
    }
    rmSync(dir, { recursive: true, force: true })
  }
}

const header = [
  "database",
  "operation",
  "sightline req/s",
  "floor req/s",
  "throughput ratio (goal ≥ 0.5×)",
  "sightline p50 / p99 ms",
  "floor p50 / p99 ms",
  "sightline CPU ms/req",
  "floor CPU ms/req",
  "CPU ratio (goal ≤ 3×)",
  "PostgreSQL CPU ms/req (sightline / floor)",
  "errors"
]
console.log(
  `\n${connections} connections, ${rounds} alternating rounds of ${seconds} s per server and path (medians), ` +
    `${values.chats} chats seeded\n`
)
console.log(`| ${header.join(" | ")} |`)
console.log(`|${header.map((_, i) => (i < 2 ? "---" : "---:")).join("|")}|`)
for (const row of rows) console.log(`| ${row.join(" | ")} |`)
if (mismatches > 0) {
  console.log(`\n${mismatches} answers of the floor differ from Sightline's (see above): the comparison is not fair`)
  process.exitCode = 1
}
