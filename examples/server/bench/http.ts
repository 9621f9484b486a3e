/**
 * `pnpm bench:http`: requests per second and p99 latency of authenticated `GET /v2/playbooks/{id}`
 * and `GET /v2/chats` (seeded: one organization, a playbook, `--chats` chats), on PGlite and
 * PostgreSQL, side by side with the floor: a bare `node:http` handler replaying exactly the SQL
 * Sightline runs for the same request through the same driver (see `target.ts`).
 *
 * Each server runs in its own process; the load generator here keeps `--connections` keep-alive
 * connections busy for `--seconds` after a warm-up, and counts only 200 answers.
 *
 *   pnpm bench:http [--seconds 10] [--connections 16] [--chats 1000] [--db pglite,postgres]
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import * as http from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { bundleServer } from "../../../scripts/bundle.mjs"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "16" },
    chats: { type: "string", default: "1000" },
    db: { type: "string", default: "pglite,postgres" },
    url: { type: "string", default: process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test" }
  }
})
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const here = new URL(".", import.meta.url).pathname
// The target server runs bundled, as `pnpm start` runs the standalone server.
const target = join(here, "../dist/bench/target.js")
await bundleServer(join(here, "target.ts"), target)

const child = (args: ReadonlyArray<string>): ChildProcess =>
  spawn(process.execPath, [target, ...args], { stdio: ["ignore", "pipe", "inherit"] })

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

interface Result {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
}

/** Keeps `connections` requests in flight for `duration` seconds; latencies in milliseconds. */
const load = async (port: number, path: string, key: string, duration: number): Promise<Result> => {
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
  const started = performance.now()
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) await one()
  }))
  const elapsed = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN
  return { rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors }
}

const rows: Array<Array<string>> = []
for (const db of values.db.split(",")) {
  const dataDir = mkdtempSync(join(tmpdir(), "sightline-bench-"))
  const prefix = `bench${Math.random().toString(16).slice(2, 10)}_`
  const store = db === "postgres"
    ? ["--db", "postgres", "--url", values.url]
    : ["--db", "pglite", "--data-dir", dataDir]
  const common = [...store, "--prefix", prefix]
  try {
    const seeding = child(["seed", ...common, "--chats", values.chats])
    const seeded = JSON.parse(await firstLine(seeding, (line) => line.startsWith("{"))) as {
      key: string
      playbookId: string
    }
    await stop(seeding)
    const paths = { "GET /v2/playbooks/{id}": `/v2/playbooks/${seeded.playbookId}`, "GET /v2/chats": "/v2/chats" }
    const results: Record<string, Record<string, Result>> = {}
    for (const target of ["sightline", "floor"] as const) {
      const args = target === "floor"
        ? ["floor", ...common, "--key", seeded.key, "--paths", JSON.stringify(Object.values(paths))]
        : ["sightline", ...common]
      const server = child(args)
      const ready = await firstLine(server, (line) => line.startsWith("READY"))
      const port = Number(ready.split(" ")[1])
      if (target === "floor") {
        console.error(`floor statements per request (${db}): ${ready.split(" ").slice(2).join(" ")}`)
      }
      for (const [name, path] of Object.entries(paths)) {
        await load(port, path, seeded.key, Number(values.warmup))
        results[name] ??= {}
        results[name][target] = await load(port, path, seeded.key, seconds)
      }
      await stop(server)
    }
    for (const [name, byTarget] of Object.entries(results)) {
      const s = byTarget.sightline
      const f = byTarget.floor
      rows.push([
        db,
        name,
        s.rps.toFixed(0),
        s.p99.toFixed(1),
        f.rps.toFixed(0),
        f.p99.toFixed(1),
        `${(s.rps / f.rps).toFixed(2)}×`,
        s.rps / f.rps >= 0.7 ? "PASS" : "below",
        String(s.errors + f.errors)
      ])
    }
  } finally {
    if (db === "postgres") {
      // Drop the run's tables.
      const drop = spawn("psql", [
        values.url,
        "-qc",
        `DO $$ DECLARE t text; BEGIN FOR t IN SELECT tablename FROM pg_tables WHERE starts_with(tablename, '${prefix}') LOOP EXECUTE 'DROP TABLE IF EXISTS ' || quote_ident(t) || ' CASCADE'; END LOOP; END $$;`
      ], { stdio: "ignore" })
      await new Promise((resolve) => drop.on("exit", resolve))
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

const header = [
  "database",
  "operation",
  "sightline req/s",
  "sightline p99 ms",
  "floor req/s",
  "floor p99 ms",
  "ratio",
  "goal 0.7×",
  "errors"
]
console.log(`\n${connections} connections, ${seconds} s per run, ${values.chats} chats seeded\n`)
console.log(`| ${header.join(" | ")} |`)
console.log(`|${header.map((_, i) => (i < 2 ? "---" : "---:")).join("|")}|`)
for (const row of rows) console.log(`| ${row.join(" | ")} |`)
