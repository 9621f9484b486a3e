/**
 * `pnpm bench:semantic`: how fast an imported model of 200 metrics over 50 tables loads and
 * compiles. A script, not a test: it prints a table and exits 0 unless something broke.
 *
 * It writes a dbt project of 50 semantic models in a tree of foreign entities (each model's parent
 * is the one at half its index), each with two categorical dimensions, a time dimension and four
 * measures; 200 metrics over them (simple, ratio, derived with an offset, cumulative). It imports
 * the project, then times:
 * - the load: reading the model's YAML as the server reads a library file (`SemanticModel.parse`),
 *   beside the floor of parsing the same YAML alone;
 * - compiling: 2,000 semantic queries (a metric, one or two dimensions its table reaches, a grain
 *   and a period), beside the floor of the same queries' shape on a model of one table.
 *
 * Goals (issue 68): p95 compile under 5 ms; the model loads in under 200 ms.
 *
 * @internal
 */
import * as Either from "effect/Either"
import { performance } from "node:perf_hooks"
import * as Yaml from "yaml"
import * as SemanticCompiler from "../src/SemanticCompiler.js"
import * as SemanticImport from "../src/SemanticImport.js"
import * as SemanticModel from "../src/SemanticModel.js"
import type * as SemanticQuery from "../src/SemanticQuery.js"

const tables = 50
const parentOf = (i: number) => Math.floor((i - 1) / 2)

// The project: one YAML file per semantic model, and one of metrics.
const files: Array<SemanticImport.SourceFile> = []
for (let i = 0; i < tables; i++) {
  files.push({
    path: `models/t${i}.yml`,
    text: Yaml.stringify({
      semantic_models: [{
        name: `t${i}`,
        model: `ref('t${i}')`,
        defaults: { agg_time_dimension: "created_at" },
        entities: [
          { name: `e${i}`, type: "primary", expr: "id" },
          ...(i === 0 ? [] : [{ name: `e${parentOf(i)}`, type: "foreign", expr: `parent_id` }])
        ],
        dimensions: [
          { name: `kind_${i}`, type: "categorical", expr: "kind" },
          { name: `status_${i}`, type: "categorical", expr: "status" },
          { name: "created_at", type: "time", type_params: { time_granularity: "day" } }
        ],
        measures: [
          { name: `amount_${i}`, agg: "sum", expr: "amount" },
          { name: `rows_${i}`, agg: "count", expr: "1" },
          { name: `people_${i}`, agg: "count_distinct", expr: "person_id" },
          { name: `top_${i}`, agg: "max", expr: "amount" }
        ]
      }]
    })
  })
}
const metrics: Array<Record<string, unknown>> = []
for (let i = 0; i < tables; i++) {
  for (const m of ["amount", "rows", "people"]) {
    metrics.push({ name: `${m}_${i}`, type: "simple", type_params: { measure: `${m}_${i}` } })
  }
}
for (let i = 0; i < 20; i++) {
  metrics.push({
    name: `ratio_${i}`,
    type: "ratio",
    type_params: { numerator: `amount_${i}`, denominator: `rows_${i}` }
  })
}
for (let i = 0; i < 20; i++) {
  metrics.push({
    name: `change_${i}`,
    type: "derived",
    type_params: {
      expr: `(amount_${i} - before) / before`,
      metrics: [{ name: `amount_${i}` }, { name: `amount_${i}`, alias: "before", offset_window: "1 month" }]
    }
  })
}
for (let i = 0; i < 10; i++) {
  metrics.push({
    name: `to_date_${i}`,
    type: "cumulative",
    type_params: { measure: `amount_${i}`, cumulative_type_params: { grain_to_date: "month" } }
  })
}
files.push({ path: "models/metrics.yml", text: Yaml.stringify({ metrics }) })

const imported = (() => {
  const started = performance.now()
  const result = Either.getOrThrow(SemanticImport.importFiles("dbt", files, { name: "bench", schema: "warehouse" }))
  return { result, millis: performance.now() - started }
})()
const yaml = SemanticModel.stringify(imported.result.model)
const model = Either.getOrThrow(SemanticModel.parse("semantic/bench.yaml", yaml))
const metricCount = model.measures.length + model.metrics.length
if (model.tables.length !== tables || metricCount < 200) {
  throw new Error(`the model has ${model.tables.length} tables and ${metricCount} metrics`)
}

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
}
const timed = (runs: number, f: () => unknown) => {
  const out: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    f()
    out.push(performance.now() - started)
  }
  return out
}

// Warm up, then the load and its floor, interleaved.
timed(5, () => SemanticModel.parse("semantic/bench.yaml", yaml))
const loads: Array<number> = []
const yamlOnly: Array<number> = []
for (let i = 0; i < 30; i++) {
  loads.push(...timed(1, () => SemanticModel.parse("semantic/bench.yaml", yaml)))
  yamlOnly.push(...timed(1, () => Yaml.parse(yaml)))
}

// The queries: a metric, dimensions of its table's ancestors, a grain and a period.
let seed = 42
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed % n
}
const names = [
  ...model.measures.map((m) => ({ name: m.name, table: Number(m.table.slice(1)) })),
  ...model.metrics.flatMap((m) => {
    const table = /_(\d+)$/.exec(m.name)
    return table === null ? [] : [{ name: m.name, table: Number(table[1]) }]
  })
]
const queries: Array<SemanticQuery.SemanticQuery> = []
for (let i = 0; i < 2000; i++) {
  const metric = names[random(names.length)]!
  const ancestors = [metric.table]
  while (ancestors.at(-1)! > 0) ancestors.push(parentOf(ancestors.at(-1)!))
  const dimensions = [
    ...new Set(Array.from({ length: 1 + random(2) }, () => {
      const t = ancestors[random(ancestors.length)]!
      return `t${t}.${random(2) === 0 ? "kind" : "status"}_${t}`
    }))
  ]
  queries.push({
    metrics: [metric.name],
    dimensions,
    time: {
      grain: (["day", "week", "month", "quarter", "year"] as const)[random(5)],
      start: "2025-01-01",
      end: "2026-01-01"
    }
  })
}
const floorModel = Either.getOrThrow(SemanticModel.parse(
  "semantic/floor.yaml",
  `name: floor
tables:
  - name: t0
    base_table: { table: t0 }
    dimensions: [{ name: kind }]
    time_dimensions: [{ name: created_at }]
    measures: [{ name: amount, agg: sum, expr: amount }]
`
))
const floorQuery = (q: SemanticQuery.SemanticQuery): SemanticQuery.SemanticQuery => ({
  ...q,
  metrics: ["amount"],
  dimensions: ["kind"]
})
let failures = 0
for (const q of queries.slice(0, 200)) {
  SemanticCompiler.compile(model, q, "postgres")
  SemanticCompiler.compile(floorModel, floorQuery(q), "postgres")
}
const compiles: Array<number> = []
const floors: Array<number> = []
for (const q of queries) {
  const started = performance.now()
  const compiled = SemanticCompiler.compile(model, q, "postgres")
  compiles.push(performance.now() - started)
  if (Either.isLeft(compiled)) failures++
  const floorStarted = performance.now()
  SemanticCompiler.compile(floorModel, floorQuery(q), "postgres")
  floors.push(performance.now() - floorStarted)
}
if (failures > 0) throw new Error(`${failures} of ${queries.length} queries did not compile`)

const ms = (n: number) => `${n.toFixed(2)} ms`
const rows: Array<[string, string, string, string]> = [
  ["import the dbt project (once)", ms(imported.millis), "", ""],
  ["load the model (parse + validate), median", ms(percentile(loads, 0.5)), ms(percentile(yamlOnly, 0.5)), ""],
  [
    "load the model, p95",
    ms(percentile(loads, 0.95)),
    ms(percentile(yamlOnly, 0.95)),
    percentile(loads, 0.95) < 200 ? "< 200 ms: met" : "< 200 ms: MISSED"
  ],
  ["compile a query, median", ms(percentile(compiles, 0.5)), ms(percentile(floors, 0.5)), ""],
  [
    "compile a query, p95",
    ms(percentile(compiles, 0.95)),
    ms(percentile(floors, 0.95)),
    percentile(compiles, 0.95) < 5 ? "< 5 ms: met" : "< 5 ms: MISSED"
  ]
]
const widths = [0, 1, 2, 3].map((i) => Math.max(...[["", "model", "floor", "goal"], ...rows].map((r) => r[i]!.length)))
const line = (r: ReadonlyArray<string>) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
console.log(
  `${model.tables.length} tables, ${metricCount} metrics (${model.measures.length} measures, ${model.metrics.length} derived), ${
    (yaml.length / 1024).toFixed(0)
  } kB of YAML; ${queries.length} queries`
)
console.log("floor: the YAML parsed alone; the same queries on a model of one table")
console.log(line(["", "model", "floor", "goal"]))
console.log(line(widths.map((w) => "-".repeat(w))))
for (const row of rows) console.log(line(row))
