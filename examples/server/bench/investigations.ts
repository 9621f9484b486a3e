/**
 * `pnpm bench:investigations`: the time to a complete three-level investigation, beside the floor of
 * its slowest step run alone, on two data sets:
 * - the DEMO retail data on the embedded PGlite: revenue last year against the year before;
 * - `--lines` order lines (10 million by default) on the local PostgreSQL, in a database of their own
 *   read through the model derived from its schema: the amount of one year against the one before.
 *
 * The built server runs as a process of its own on a fresh data directory. Each investigation is
 * `POST /v2/semantic/investigate` (its steps four at once, then one level deeper at a time); the
 * floor is each of its steps as `POST /v2/semantic/query` alone, the slowest one. Each figure is the
 * median of `--runs` runs after one to warm the caches. The goal is an investigation within twice
 * its slowest step.
 *
 * First, on both (the DEMO's library model and the model derived from the second schema), every
 * metric of the model is investigated over the two years with its drivers: each driver's parts must
 * add up to the total change, or the metric must be refused with its reason.
 *
 *   pnpm bench:investigations [--lines 10000000] [--runs 3] [--database postgres://postgres@127.0.0.1:5432/postgres]
 */
import * as SemanticModel from "@sightline/core/SemanticModel"
import * as Either from "effect/Either"
import { parseArgs } from "node:util"
import * as BuiltServer from "./builtServer.js"
import * as LinesData from "./linesData.js"

const { values } = parseArgs({
  options: {
    lines: { type: "string", default: "10000000" },
    runs: { type: "string", default: "3" },
    database: { type: "string", default: "postgres://postgres@127.0.0.1:5432/postgres" }
  }
})
const lines = Number(values.lines)
const runs = Number(values.runs)
const lastYear = new Date().getUTCFullYear() - 1
const years = {
  period: { start: `${lastYear}-01-01`, end: `${lastYear + 1}-01-01` },
  compared_with: { start: `${lastYear - 1}-01-01`, end: `${lastYear}-01-01` }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

interface Measured {
  readonly name: string
  readonly steps: number
  readonly investigation: number
  readonly floor: number
  readonly slowest: string
  /** Every step alone, one after another: what running them at once saves. */
  readonly sum: number
}

const measure = async (
  server: BuiltServer.BuiltServer,
  name: string,
  connectorId: number,
  metric: string
): Promise<Measured> => {
  const post = async (path: string, json: unknown) => {
    const started = performance.now()
    const response = await fetch(`${server.base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.key}`, "content-type": "application/json" },
      body: JSON.stringify(json)
    })
    const body = await response.json() as any
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(body)}`)
    return { body, millis: performance.now() - started }
  }
  const request = { connector_id: connectorId, metric, ...years, depth: 3 }
  const warm = await post("/v2/semantic/investigate", request)
  const steps = warm.body.steps as ReadonlyArray<{ id: string; query: Record<string, unknown> }>
  const timings: Array<number> = []
  for (let i = 0; i < runs; i++) timings.push((await post("/v2/semantic/investigate", request)).millis)
  let floor = 0
  let slowest = ""
  let sum = 0
  for (const step of steps) {
    await post("/v2/semantic/query", { connector_id: connectorId, ...step.query })
    const alone: Array<number> = []
    for (let i = 0; i < runs; i++) {
      alone.push((await post("/v2/semantic/query", { connector_id: connectorId, ...step.query })).millis)
    }
    sum += median(alone)
    if (median(alone) > floor) {
      floor = median(alone)
      slowest = step.id
    }
  }
  console.log(`${name}: ${warm.body.summary}`)
  return { name, steps: steps.length, investigation: median(timings), floor, slowest, sum }
}

/** Every metric of the connector's model investigated: the steps whose parts add up, and those that do not. */
const addsUp = async (server: BuiltServer.BuiltServer, connectorId: number) => {
  const headers = { authorization: `Bearer ${server.key}`, "content-type": "application/json" }
  const text = await (await fetch(`${server.base}/v2/connectors/${connectorId}/semantic-model`, { headers })).text()
  const model = Either.getOrThrow(SemanticModel.parse("model.yaml", text))
  const metrics = [...model.measures.map((m) => m.name), ...model.metrics.map((m) => m.name)]
  let investigated = 0
  let steps = 0
  const refused: Array<string> = []
  const wrong: Array<string> = []
  for (const metric of metrics) {
    const response = await fetch(`${server.base}/v2/semantic/investigate`, {
      method: "POST",
      headers,
      body: JSON.stringify({ connector_id: connectorId, metric, ...years })
    })
    const body = await response.json() as any
    if (response.status === 400) {
      refused.push(`${metric} (${body.error.message})`)
      continue
    }
    if (response.status !== 200) throw new Error(`${metric}: ${response.status} ${JSON.stringify(body)}`)
    investigated += 1
    for (const step of body.steps.filter((s: any) => s.level === 1 && s.parts !== undefined)) {
      if ((step.more_parts ?? 0) > 0) continue
      steps += 1
      const sum = step.parts.reduce((total: number, part: { change: number }) => total + part.change, 0)
      if (Math.abs(sum - body.total.change) > 1e-6 * Math.max(1, Math.abs(body.total.change))) {
        wrong.push(`${metric} ${step.id}: parts ${sum} against ${body.total.change}`)
      }
    }
  }
  return { metrics: metrics.length, investigated, steps, refused, wrong }
}

const benchName = `sl_bench_inv_${process.pid}`
const { drop, url } = await LinesData.load(values.database, benchName, lines)
let server: BuiltServer.BuiltServer | undefined
try {
  BuiltServer.build()
  server = await BuiltServer.start(18_797, { SIGHTLINE_SANDBOX_DIR: "off", SIGHTLINE_CONNECTOR_ALLOW_PRIVATE: "1" })
  const create = async (config: unknown) => {
    const response = await fetch(`${server!.base}/v2/connectors`, {
      method: "POST",
      headers: { authorization: `Bearer ${server!.key}`, "content-type": "application/json" },
      body: JSON.stringify({ config })
    })
    return ((await response.json()) as { id: number }).id
  }
  const demo = await create({ connector_type: "DEMO", name: "Demo", demo: { dataset: "retail" } })
  const large = await create({
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
  })
  for (const [name, id] of [["DEMO (library model)", demo], ["the second schema (derived model)", large]] as const) {
    const checked = await addsUp(server, id)
    console.log(
      `${name}: ${checked.investigated} of ${checked.metrics} metrics investigated, ${checked.steps} driver steps: ` +
        `${checked.steps - checked.wrong.length} add up to the change, ${checked.wrong.length} do not`
    )
    for (const line of checked.wrong) console.log(`  does not add up: ${line}`)
    for (const line of checked.refused) console.log(`  refused: ${line}`)
    if (checked.wrong.length > 0) process.exitCode = 1
  }
  const results = [
    await measure(server, "DEMO (PGlite)", demo, "revenue"),
    await measure(server, `${lines.toLocaleString("en-US")} lines (PostgreSQL)`, large, "amount")
  ]
  console.log(
    "\n| data | steps | investigation (ms) | floor: slowest step alone (ms) | × floor | every step alone, in turn (ms) |"
  )
  console.log("|---|---:|---:|---:|---:|---:|")
  for (const r of results) {
    console.log(
      `| ${r.name} | ${r.steps} | ${r.investigation.toFixed(0)} | ${r.floor.toFixed(0)} (${r.slowest}) | ${
        (r.investigation / r.floor).toFixed(2)
      } | ${r.sum.toFixed(0)} |`
    )
  }
  console.log("\ngoal: at most 2× the floor")
} catch (error) {
  console.error(error)
  process.exitCode = 1
} finally {
  server?.stop()
  await drop()
}
