/**
 * `pnpm bench:availability`: how fast the server answers everyone else while one request
 * misbehaves, against a floor measured in the same run (the same probes with nothing else going on).
 *
 * The built server runs as a process of its own on a fresh data directory. A probe loop asks
 * `GET /healthz` and an authenticated `GET /v2/members/me` (a store read) every 20 ms and records
 * each latency while one scenario runs:
 * - floor: nothing else;
 * - a wide query: `POST /v2/sandcastles/{id}/query` with `max_rows` 1,000,000 over rows of 4 KB on a
 *   POSTGRES connector (the local server, as a role of its own), capped in bytes;
 * - FIFOs: four `GET …/files/{fifo}` at once, for FIFOs the sandbox made;
 * - a kernel flooding its answer channel with 100 MiB;
 * - the DEMO connector sleeping (`SELECT pg_sleep(3)`), and growing its database's memory by a
 *   `repeat()` of 400 MB: PGlite runs in a worker thread, so neither holds the event loop.
 *
 * The goal is p99 under 100 ms for everyone else during each.
 *
 *   pnpm bench:availability [--database postgres://postgres@127.0.0.1:5432/test]
 */
import { parseArgs } from "node:util"
import pg from "pg"
import * as BuiltServer from "./builtServer.js"

const { values } = parseArgs({
  options: { database: { type: "string", default: "postgres://postgres@127.0.0.1:5432/test" } }
})
const port = 18_799
const base = `http://127.0.0.1:${port}`

BuiltServer.build()

const role = `sl_bench_${process.pid}`
const admin = new pg.Client({ connectionString: values.database })
await admin.connect()
await admin.query(`CREATE ROLE ${role} LOGIN`)

let server: BuiltServer.BuiltServer | undefined
const cleanup = async () => {
  server?.stop()
  await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined)
  await admin.end().catch(() => undefined)
}

try {
  server = await BuiltServer.start(port, {
    SIGHTLINE_CONNECTOR_ALLOW_PRIVATE: "1",
    SIGHTLINE_RATE_LIMIT_PER_MINUTE: "1000000"
  })
  const { key } = server
  const request = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? "GET",
      headers: {
        authorization: `Bearer ${key}`,
        ...(init.json === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.json === undefined ? {} : { body: JSON.stringify(init.json) })
    })
    const text = await response.text()
    return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
  }

  // What the scenarios need: a POSTGRES connector as the bench's role, and a running sandbox.
  const url = new URL(values.database)
  const connector = await request("/v2/connectors", {
    method: "POST",
    json: {
      config: {
        connector_type: "POSTGRES",
        name: "Local",
        postgres: {
          host: url.hostname,
          port: Number(url.port || 5432),
          user: role,
          password: "",
          database: url.pathname.slice(1),
          ssl_mode: "disable"
        }
      }
    }
  })
  if (connector.status !== 201) throw new Error(`no connector: ${JSON.stringify(connector.body)}`)
  const sandbox = await request("/v2/sandcastles", { method: "POST" })
  if (sandbox.status !== 201) throw new Error(`no sandbox: ${JSON.stringify(sandbox.body)}`)
  const sandboxId = sandbox.body.sandbox_id as string
  await request(`/v2/sandcastles/${sandboxId}/exec`, {
    method: "POST",
    json: { command: "mkfifo f1 f2 && mkdir -p d && mkfifo d/f3 d/f4" }
  })

  // Probes every 20 ms until `until` settles, one after the other (a stalled probe delays the next).
  const probe = async (until: Promise<unknown>) => {
    const latencies: Array<number> = []
    let done = false
    until.finally(() => done = true)
    while (!done) {
      for (const path of ["/healthz", "/v2/members/me"]) {
        const started = performance.now()
        await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.arrayBuffer())
        latencies.push(performance.now() - started)
      }
      await new Promise((r) => setTimeout(r, 20))
    }
    await until.catch(() => undefined)
    return latencies.sort((a, b) => a - b)
  }
  const at = (sorted: ReadonlyArray<number>, q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

  const scenarios: ReadonlyArray<readonly [string, () => Promise<unknown>]> = [
    ["floor: nothing else", () => new Promise((r) => setTimeout(r, 3_000))],
    [
      "wide query, max_rows 1,000,000 of 4 KB rows",
      () =>
        request(`/v2/sandcastles/${sandboxId}/query`, {
          method: "POST",
          json: {
            connector_id: connector.body.id,
            query: "SELECT i, repeat('x', 2000) AS filler FROM generate_series(1, 1000000) AS i",
            max_rows: 1_000_000
          }
        })
    ],
    [
      "four FIFOs read at once",
      () => Promise.all(["f1", "f2", "d/f3", "d/f4"].map((f) => request(`/v2/sandcastles/${sandboxId}/files/${f}`)))
    ],
    [
      "a kernel flooding its answer channel (100 MiB)",
      () =>
        request(`/v2/sandcastles/${sandboxId}/execute`, {
          method: "POST",
          json: {
            code:
              "import __main__, os\nfd = __main__._answers.fileno()\nfor _ in range(100):\n    os.write(fd, b'x' * (1024 * 1024))"
          }
        })
    ],
    [
      "DEMO: SELECT pg_sleep(3)",
      () =>
        request(`/v2/sandcastles/${sandboxId}/query`, {
          method: "POST",
          json: { connector_id: 1, query: "SELECT pg_sleep(3)" }
        })
    ],
    [
      "DEMO: repeat() of 400 MB",
      () =>
        request(`/v2/sandcastles/${sandboxId}/query`, {
          method: "POST",
          json: { connector_id: 1, query: "SELECT length(repeat('x', 400000000)) AS n" }
        })
    ]
  ]

  // The DEMO connector loads on its first use: warm it first, so the sleep measures the sleep.
  await request(`/v2/sandcastles/${sandboxId}/query`, { method: "POST", json: { connector_id: 1, query: "SELECT 1" } })

  // What the misbehaving request was answered (statuses, and a truncated result's row count).
  const outcome = (value: unknown): string => {
    if (Array.isArray(value)) return value.map(outcome).join(" ")
    if (typeof value !== "object" || value === null || !("status" in value)) return "-"
    const { body, status } = value as { status: number; body?: { num_rows?: number; error?: unknown } }
    return body?.num_rows !== undefined ? `${status} (${body.num_rows} rows)` : String(status)
  }
  const rows: Array<Record<string, string | number>> = []
  for (const [name, run] of scenarios) {
    const started = performance.now()
    const running = run()
    const sorted = await probe(running)
    rows.push({
      scenario: name,
      answered: outcome(await running.catch(() => undefined)),
      "took (s)": Number(((performance.now() - started) / 1000).toFixed(1)),
      probes: sorted.length,
      "p50 (ms)": Number(at(sorted, 0.5).toFixed(1)),
      "p99 (ms)": Number(at(sorted, 0.99).toFixed(1)),
      "max (ms)": Number(sorted[sorted.length - 1]!.toFixed(1))
    })
  }
  console.table(rows)
} finally {
  await cleanup()
}
