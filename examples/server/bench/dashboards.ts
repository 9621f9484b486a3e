/**
 * `pnpm bench:dashboards`: a dashboard of eight tiles over `--lines` order lines (10 million by
 * default) on the local PostgreSQL, read through the model derived from its schema, beside its
 * floors measured in the same run:
 * - **cold:** `POST /v2/dashboards/{name}/query` of a copy that keeps nothing (`cache_seconds: 0`),
 *   beside each tile's query alone (`POST /v2/semantic/query`): the slowest (the floor, goal at
 *   most 1.3× it) and their sum (what running them one after another would take);
 * - **warm:** the same dashboard once its rows are kept, p50 and p95 over `--warm` requests (goal:
 *   p95 under 20 ms), beside `GET /healthz`'s as the floor of a request over the socket.
 *
 * The server runs in this process (its use cases file the dashboard as a library change) and is
 * reached over a real socket. Each cold figure is the median of `--runs` runs after one to warm the
 * database's caches.
 *
 *   pnpm bench:dashboards [--lines 10000000] [--runs 3] [--warm 200] [--database postgres://postgres@127.0.0.1:5432/postgres]
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import * as ApiKeys from "@sightline/core/ApiKeys"
import * as Auth from "@sightline/core/Auth"
import * as Change from "@sightline/core/Change"
import * as Changes from "@sightline/core/Changes"
import * as Dashboard from "@sightline/core/Dashboard"
import { Library } from "@sightline/core/Library"
import * as Organizations from "@sightline/core/Organizations"
import * as Server from "@sightline/http/Server"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import * as Sightline from "../src/Sightline.js"
import * as LinesData from "./linesData.js"

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "10000000" },
    runs: { type: "string", default: "3" },
    warm: { type: "string", default: "200" },
    database: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" }
  }
})
const lines = Number(values.lines)
const runs = Number(values.runs)
const lastYear = new Date().getUTCFullYear() - 1

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const percentile = (xs: ReadonlyArray<number>, p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!

/** The eight tiles, over the names of the model derived from the data set's schema. */
const dashboard = (cacheSeconds: number | undefined) =>
  `title: Lines
connector: Lines
filters:
  dimensions: [{ dimension: channel }]
  time: { start: "${lastYear}-01-01", end: "${lastYear + 1}-01-01" }
${cacheSeconds === undefined ? "" : `cache_seconds: ${cacheSeconds}\n`}tiles:
  - title: Amount
    query: { semantic: { metrics: [amount] } }
    visualization: { type: figure, compare: previous_period }
    layout: { x: 0, y: 0, w: 3, h: 2 }
  - title: Lines
    query: { semantic: { metrics: [lines_count] } }
    visualization: { type: figure }
    layout: { x: 3, y: 0, w: 3, h: 2 }
  - title: Amount by month
    query: { semantic: { metrics: [amount], time: { grain: month } } }
    visualization: { type: line }
    layout: { x: 6, y: 0, w: 6, h: 4 }
  - title: Amount by channel
    query: { semantic: { metrics: [amount], dimensions: [channel] } }
    visualization: { type: bar }
    layout: { x: 0, y: 2, w: 6, h: 4 }
  - title: Amount by region
    query: { semantic: { metrics: [amount], dimensions: [regions.name] } }
    visualization: { type: bar }
    layout: { x: 0, y: 6, w: 6, h: 4 }
  - title: Amount by category
    query: { semantic: { metrics: [amount], dimensions: [category] } }
    visualization: { type: bar }
    layout: { x: 6, y: 4, w: 6, h: 4 }
  - title: Amount by segment and channel
    query: { semantic: { metrics: [amount], dimensions: [segment, channel] } }
    visualization: { type: stacked_bar }
    layout: { x: 6, y: 8, w: 6, h: 4 }
  - title: Amount by region and category
    query: { semantic: { metrics: [amount], dimensions: [regions.name, category] } }
    visualization: { type: table }
    layout: { x: 0, y: 12, w: 12, h: 4 }
`

const benchName = `sl_bench_dash_${process.pid}`
const { drop, url } = await LinesData.load(values.database, benchName, lines)
const dataDir = mkdtempSync(join(tmpdir(), "sightline-bench-"))
let runtime: ManagedRuntime.ManagedRuntime<any, any> | undefined
try {
  const options: Sightline.Options = {
    store: { _tag: "Pglite", dataDir },
    rateLimitPerMinute: 1_000_000_000,
    connectorAccess: { network: { allowPrivate: true, allowHosts: [] }, allowSuperuser: false }
  }
  runtime = ManagedRuntime.make(
    Server.layerServe.pipe(
      Layer.provideMerge(Sightline.layer(options)),
      Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
      Layer.provide(Sightline.observability(options)),
      Layer.provide(Logger.minimumLogLevel(LogLevel.None))
    )
  )
  const address = await runtime.runPromise(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") throw new Error("no TCP address")
  const base = `http://127.0.0.1:${address.port}`
  const key = await runtime.runPromise(Effect.gen(function*() {
    const { admin, organization } = yield* (yield* Organizations.Organizations).create({
      name: "Bench",
      adminEmail: "bench@example.test"
    })
    return (yield* (yield* ApiKeys.ApiKeys).bootstrap(organization.id, admin.id, "bench")).key
  }))
  const request = async (method: string, path: string, json?: unknown) => {
    const started = performance.now()
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(json === undefined ? {} : { body: JSON.stringify(json) })
    })
    const body = await response.json() as any
    if (response.status >= 300) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`)
    return { body, millis: performance.now() - started }
  }
  const connectorId = (await request("POST", "/v2/connectors", {
    config: {
      connector_type: "POSTGRES",
      name: "Lines",
      postgres: {
        host: url.hostname,
        port: Number(url.port || 5432),
        user: benchName,
        password: "",
        database: benchName,
        ssl_mode: "disable"
      }
    }
  })).body.id as number

  // The model derived from the schema, kept as the library's model of the connector (a dashboard
  // needs one), with the dashboards: `lines` keeps its rows, `lines_cold` none. Filed and merged
  // as the admin, as a reviewed change.
  const derived = await (await fetch(`${base}/v2/connectors/${connectorId}/semantic-model`, {
    headers: { authorization: `Bearer ${key}` }
  })).text()
  const model = derived.includes("\nconnector:") ? derived : `${derived.trimEnd()}\nconnector: Lines\n`
  const merged = await runtime.runPromise(Effect.gen(function*() {
    const principal = yield* (yield* Auth.Auth).authenticateApiKey(key)
    const changes = yield* Changes.Changes
    const main = yield* (yield* Library).main(principal.organizationId)
    const encode = (text: string) => Option.some(new TextEncoder().encode(text))
    const filed = yield* changes.create(principal, {
      body: Schema.decodeUnknownSync(Change.CreateLibraryChange)({ title: "Bench dashboards", description: "8 tiles" }),
      baseRef: main.head,
      edits: HashMap.make(
        ["semantic/lines.yaml", encode(model)],
        ["dashboards/lines.yaml", encode(dashboard(undefined))],
        ["dashboards/lines_cold.yaml", encode(dashboard(0))]
      )
    })
    const approved = yield* changes.approve(principal, filed.change_id, { expected_git_ref: filed.git_ref })
    return approved.merged ? undefined : filed.checks
  }))
  if (merged !== undefined) throw new Error(`the dashboards did not merge: ${JSON.stringify(merged)}`)

  // The floors: each tile's query alone, as the dashboard runs it under its default filters.
  const file = Either.getOrThrow(Dashboard.parse("dashboards/lines.yaml", dashboard(undefined)))
  const alone: Array<{ title: string; millis: number }> = []
  for (const tile of file.tiles) {
    const query = { connector_id: connectorId, ...Dashboard.tileQuery(file, tile)! }
    await request("POST", "/v2/semantic/query", query)
    const timings: Array<number> = []
    for (let i = 0; i < runs; i++) timings.push((await request("POST", "/v2/semantic/query", query)).millis)
    alone.push({ title: tile.title, millis: median(timings) })
  }
  const slowest = alone.reduce((a, b) => (b.millis > a.millis ? b : a))
  const sum = alone.reduce((total, tile) => total + tile.millis, 0)

  const first = await request("POST", "/v2/dashboards/lines_cold/query", {})
  const failed = first.body.tiles.filter((tile: { status: string }) => tile.status !== "ok")
  if (failed.length > 0) throw new Error(`tiles failed: ${JSON.stringify(failed.map((t: any) => t.error))}`)
  const cold: Array<number> = []
  for (let i = 0; i < runs; i++) cold.push((await request("POST", "/v2/dashboards/lines_cold/query", {})).millis)

  await request("POST", "/v2/dashboards/lines/query", {})
  const warm: Array<number> = []
  const health: Array<number> = []
  const definition: Array<number> = []
  for (let i = 0; i < Number(values.warm); i++) {
    const kept = await request("POST", "/v2/dashboards/lines/query", {})
    if (!kept.body.tiles.every((tile: { cached: boolean }) => tile.cached)) throw new Error("a warm tile ran again")
    warm.push(kept.millis)
    const started = performance.now()
    await fetch(`${base}/healthz`).then((r) => r.text())
    health.push(performance.now() - started)
    definition.push((await request("GET", "/v2/dashboards/lines")).millis)
  }

  console.log(`\n${file.tiles.length} tiles over ${lines.toLocaleString("en-US")} order lines (PostgreSQL)\n`)
  console.log("| tile alone | median (ms) |")
  console.log("|---|---:|")
  for (const tile of alone) console.log(`| ${tile.title} | ${tile.millis.toFixed(0)} |`)
  console.log("\n| measure | figure (ms) | floor (ms) | × floor | goal |")
  console.log("|---|---:|---:|---:|---|")
  const coldMedian = median(cold)
  console.log(
    `| cold dashboard (median of ${runs}) | ${coldMedian.toFixed(0)} | slowest tile alone ${
      slowest.millis.toFixed(0)
    } (${slowest.title}) | ${(coldMedian / slowest.millis).toFixed(2)} | ≤ 1.3× |`
  )
  console.log(
    `| cold dashboard against every tile in turn | ${coldMedian.toFixed(0)} | sum ${sum.toFixed(0)} | ${
      (coldMedian / sum).toFixed(2)
    } | |`
  )
  console.log(
    `| warm dashboard p50 / p95 (${warm.length} requests) | ${percentile(warm, 0.5).toFixed(1)} / ${
      percentile(warm, 0.95).toFixed(1)
    } | /healthz p50 / p95 ${percentile(health, 0.5).toFixed(1)} / ${
      percentile(health, 0.95).toFixed(1)
    } | | p95 < 20 |`
  )
  console.log(
    `| the definition alone (GET /v2/dashboards/lines) p50 / p95 | ${percentile(definition, 0.5).toFixed(1)} / ${
      percentile(definition, 0.95).toFixed(1)
    } | | | |`
  )
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  await runtime?.dispose()
  rmSync(dataDir, { recursive: true, force: true })
  await drop()
}
