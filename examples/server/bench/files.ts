/**
 * `pnpm bench:files`: a FILES connector on a large CSV, beside the floor of DuckDB alone.
 *
 * A CSV of `--rows` rows (10 million by default, about 0.9 GB) is generated once. Then:
 * - **floor:** DuckDB's node API in a process of its own loads the file into a database file and runs
 *   the grouped aggregate, as Sightline does underneath: its load time, aggregate time and peak memory;
 * - **Sightline:** the built server (over PostgreSQL) receives the file as a multipart upload; the
 *   time to the connector, then to a first answer (the offline model's `total amount by region`), then
 *   of a second grouped question, and the server process's peak memory (`VmHWM`).
 *
 *   pnpm bench:files [--rows 10000000] [--url postgres://…]
 */
import { execFileSync } from "node:child_process"
import { existsSync, mkdtempSync, openAsBlob, readFileSync, rmSync, statSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import * as BuiltServer from "./builtServer.js"
import { dropStore } from "./drop.js"

const { values } = parseArgs({
  options: {
    rows: { type: "string", default: "10000000" },
    url: {
      type: "string",
      default: process.env.SIGHTLINE_TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
    }
  }
})
const rows = Number(values.rows)
const work = mkdtempSync(join(tmpdir(), "sightline-bench-files-"))
const csv = join(tmpdir(), `sightline-bench-${rows}.csv`)
const root = new URL("../../..", import.meta.url).pathname

// A node script run in a process of its own, so that its peak memory is its own.
const runNode = (script: string): string =>
  execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: join(root, "packages/connectors"),
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024
  })

if (!existsSync(csv)) {
  console.log(`generating ${rows} rows into ${csv}…`)
  runNode(`
    import { DuckDBInstance } from "@duckdb/node-api"
    const db = await DuckDBInstance.create(":memory:")
    const c = await db.connect()
    await c.run(\`COPY (
      SELECT range AS id,
        DATE '2023-01-01' + (range % 730)::INTEGER AS day,
        ['North','South','East','West','Central','Coast','Hills','Lakes'][(range % 8) + 1] AS region,
        'product-' || lpad((range % 1000)::VARCHAR, 4, '0') AS product,
        (range % 7) + 1 AS quantity,
        round(((range * 7919) % 100000) / 100.0, 2) AS amount,
        'order note ' || md5(range::VARCHAR)[1:24] AS note
      FROM range(${rows})
    ) TO '${csv}' (HEADER, DELIMITER ',')\`)
  `)
}
const bytes = statSync(csv).size
console.log(`${rows} rows, ${(bytes / 1024 ** 3).toFixed(2)} GiB`)

// --- the floor -------------------------------------------------------------------------------
const floor = JSON.parse(runNode(`
  import { DuckDBInstance } from "@duckdb/node-api"
  import { readFileSync } from "node:fs"
  const db = await DuckDBInstance.create("${join(work, "floor.duckdb")}", { threads: "2", memory_limit: "512MB" })
  const c = await db.connect()
  let t = performance.now()
  await c.run("CREATE TABLE t AS SELECT * FROM read_csv('${csv}')")
  const load = performance.now() - t
  t = performance.now()
  await c.runAndReadAll("SELECT region, sum(amount) FROM t GROUP BY 1 ORDER BY 2 DESC")
  const aggregate = performance.now() - t
  t = performance.now()
  const r = await c.runAndReadAll("SELECT product, sum(amount) FROM t GROUP BY 1 ORDER BY 2 DESC")
  const products = performance.now() - t
  const hwm = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024
  console.log(JSON.stringify({ load, aggregate, products, hwm, groups: r.currentRowCount }))
`))

// --- Sightline -------------------------------------------------------------------------------
BuiltServer.build()
const port = await new Promise<number>((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const address = probe.address() as { port: number }
    probe.close(() => resolve(address.port))
  })
})
const prefix = `bench${Date.now().toString(36)}_`
const server = await BuiltServer.start(port, {
  DATABASE_URL: values.url!,
  SIGHTLINE_TABLE_PREFIX: prefix,
  SIGHTLINE_FILES_DIR: join(work, "files"),
  SIGHTLINE_FILES_MAX_FILE_MB: "4096",
  SIGHTLINE_FILES_MAX_ORGANIZATION_MB: "8192",
  SIGHTLINE_SANDBOX_DIR: "off"
})
const memory = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, "utf8"))![1]) * 1024
const baseline = memory()
try {
  const started = performance.now()
  const form = new FormData()
  form.set("name", "Large CSV")
  // A blob backed by the file: the upload streams from disk.
  form.append("files", await openAsBlob(csv), "orders.csv")
  const created = await fetch(`${server.base}/v2/connectors`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.key}` },
    body: form
  })
  if (created.status !== 201) throw new Error(`upload: ${created.status} ${await created.text()}`)
  const connector = await created.json() as { id: number }
  const uploaded = performance.now() - started
  const ask = async (question: string) => {
    const t = performance.now()
    const answered = await fetch(`${server.base}/v2/chats`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify({ question, connector_ids: [connector.id], model: "offline" })
    })
    const body = await answered.json() as { response?: string }
    if (answered.status !== 200) throw new Error(`${question}: ${answered.status} ${JSON.stringify(body)}`)
    return { millis: performance.now() - t, response: body.response ?? "" }
  }
  const first = await ask("total amount by region")
  const firstAnswer = performance.now() - started
  const second = await ask("total amount by product")
  const peak = memory()

  const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`
  const mib = (b: number) => `${Math.round(b / 1024 ** 2)} MiB`
  console.log(`
${rows} rows (${(bytes / 1024 ** 3).toFixed(2)} GiB of CSV), PostgreSQL store, 2 cores

| step | Sightline | floor (DuckDB alone) | ratio |
|---|---:|---:|---:|
| file to a queryable table | ${seconds(uploaded)} (upload, load, keep) | ${seconds(floor.load)} (load) | ${
    (uploaded / floor.load).toFixed(2)
  }× |
| to the first answer (from the upload's start) | ${seconds(firstAnswer)} | ${
    seconds(floor.load + floor.aggregate)
  } | ${(firstAnswer / (floor.load + floor.aggregate)).toFixed(2)}× |
| grouped aggregate (a second question, 1,000 groups) | ${seconds(second.millis)} | ${seconds(floor.products)} | ${
    (second.millis / floor.products).toFixed(2)
  }× |
| peak memory of the process | ${mib(peak)} (${mib(baseline)} before) | ${mib(floor.hwm)} | ${
    (peak / floor.hwm).toFixed(2)
  }× |
`)
  console.log(`first answer: ${first.response.split("\n").slice(0, 3).join(" / ")}`)
} finally {
  server.stop()
  await dropStore(values.url!, prefix)
  rmSync(work, { recursive: true, force: true })
}
