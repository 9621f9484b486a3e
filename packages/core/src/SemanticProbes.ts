/**
 * The probes of a model: the statements a change's check plans against each connector the model
 * governs, one per part (a table, each of its expressions, a relationship, a metric, a verified
 * query), so that the database names what fails.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { fieldsOf, projection, tableNamed, Writer } from "./internal/semanticSql.js"
import { compile, dialect, type DialectName, type Param, verifiedSql } from "./SemanticCompiler.js"
import * as SemanticModel from "./SemanticModel.js"
import type { SemanticModel as Model } from "./SemanticModel.js"
import type * as SemanticQuery from "./SemanticQuery.js"

// ---------------------------------------------------------------------------------------------
// Probes: what a change's check runs against the connector
// ---------------------------------------------------------------------------------------------

/**
 * A statement that exercises one part of a model; the database planning it is the check.
 *
 * @since 0.1.0
 * @category models
 */
export interface Probe {
  /** What it checks, as a check's message names it: `table orders: dimension channel`. */
  readonly subject: string
  readonly sql: string
  readonly params: ReadonlyArray<Param>
  /** The table whose part it checks (when the table itself fails, its parts are moot). */
  readonly table?: string | undefined
  /** The logical tables a verified query reads (when one of them fails, so would it). */
  readonly reads?: ReadonlyArray<string> | undefined
  /** Why no statement could be written for it (a metric that does not compile). */
  readonly error?: string | undefined
}

/**
 * The query a metric is probed with (and an import checked with): its total, or by year where it
 * compares or accumulates periods, or by the finest grain an input is read at the start of.
 *
 * @since 0.1.0
 * @category utils
 */
export const probeQuery = (model: Model, name: string): SemanticQuery.SemanticQuery => {
  const metric = model.metrics.find((m) => m.name === name)
  const inputs = metric?.type === "derived" ? metric.metrics : []
  // A standard grain's rank, or its custom granularity's grain's.
  const rank = (grain: SemanticQuery.GrainName) =>
    SemanticModel.grains.indexOf(
      model.file.custom_granularities?.find((g) => g.name === grain)?.grain ?? grain as SemanticModel.Grain
    )
  const toGrain = inputs.flatMap((input) => input.offset_to_grain === undefined ? [] : [input.offset_to_grain])
    .sort((a, b) => rank(a) - rank(b))[0]
  if (toGrain !== undefined) return { metrics: [name], time: { grain: toGrain } }
  const byTime = metric?.type === "period_over_period" || metric?.type === "cumulative" ||
    inputs.some((input) => input.offset_window !== undefined)
  return byTime ? { metrics: [name], time: { grain: "year" } } : { metrics: [name] }
}

/** A value to plan a verified query's parameter with, by its type. */
const sampleOf = (parameter: SemanticModel.Parameter): Param =>
  parameter.default ?? (parameter.type === "number"
    ? 1
    : parameter.type === "date"
    ? "2000-01-01"
    : parameter.type === "boolean"
    ? true
    : parameter.type === "string"
    ? "x"
    : null)

/**
 * The probes of a model: each table's row filter, each expression of each table (through its
 * projection), each metric compiled alone, and each verified query with sample parameters. A
 * table whose row filter fails is not probed further (every other probe of it would fail alike).
 *
 * @since 0.1.0
 * @category utils
 */
export const probes = (model: Model, dialectName: DialectName): ReadonlyArray<Probe> => {
  const out: Array<Probe> = []
  const of = (subject: string, build: (w: Writer) => string, table?: string) => {
    const w = new Writer(dialect(dialectName))
    const sql = build(w)
    out.push({ subject, sql, params: w.params, ...(table === undefined ? {} : { table }) })
  }
  for (const table of model.tables) {
    const parts: Array<readonly [string, string]> = [
      ...fieldsOf(table).map((f) =>
        [`${f.kind === "time" ? "time dimension" : "dimension"} ${f.name}`, f.expr] as const
      ),
      ...(table.facts ?? []).map((f) => [`fact ${f.name}`, f.name] as const),
      ...(table.filters ?? []).map((f) => [`filter ${f.name}`, f.expr] as const),
      ...model.measures.filter((m) => m.table === table.name && m.expr !== undefined)
        .map((m) => [`measure ${m.name}`, m.expr!] as const),
      ...(table.primary_key?.columns ?? []).map((c) => [`primary key ${c}`, c] as const)
    ]
    of(`table ${table.name}`, (w) => `SELECT 1 FROM ${projection(w, model, table, [])} AS ${w.q("probe")}`, table.name)
    for (const [what, expr] of parts) {
      of(
        `table ${table.name}: ${what}`,
        (w) => `SELECT * FROM ${projection(w, model, table, [[expr, "probe"]])} AS ${w.q("probe")}`,
        table.name
      )
    }
  }
  for (const relationship of model.relationships) {
    const left = tableNamed(model, relationship.left_table)
    const right = tableNamed(model, relationship.right_table)
    of(
      `relationship ${relationship.name}`,
      (w) =>
        `SELECT 1 FROM ${
          projection(w, model, left, relationship.relationship_columns.map((c, i) => [c.left_column, `l${i}`] as const))
        } AS ${w.q("l")} JOIN ${
          projection(
            w,
            model,
            right,
            relationship.relationship_columns.map((c, i) => [c.right_column, `r${i}`] as const)
          )
        } AS ${w.q("r")} ON ${
          relationship.relationship_columns.map((_, i) => `${w.q("l")}.${w.q(`l${i}`)} = ${w.q("r")}.${w.q(`r${i}`)}`)
            .join(" AND ")
        }`
    )
  }
  for (const name of [...model.measures.map((m) => m.name), ...model.metrics.map((m) => m.name)]) {
    Either.match(compile(model, probeQuery(model, name), dialectName), {
      onLeft: (error) => out.push({ subject: `metric ${name}`, sql: "", params: [], error: error.message }),
      onRight: (compiled) => out.push({ subject: `metric ${name}`, sql: compiled.sql, params: compiled.params })
    })
  }
  for (const query of model.verifiedQueries) {
    const values = Object.fromEntries((query.parameters ?? []).map((p) => [p.name, sampleOf(p)]))
    Either.match(verifiedSql(model, query, values, dialectName), {
      onLeft: (error) =>
        out.push({ subject: `verified query ${query.name}`, sql: "", params: [], error: error.message }),
      onRight: (bound) =>
        out.push({
          subject: `verified query ${query.name}`,
          sql: bound.sql,
          params: bound.params,
          // A semantic query is written in the connector's dialect; SQL is as its author wrote it.
          ...(query.sql === undefined
            ? {}
            : { reads: [...new Set([...query.sql.matchAll(/\b__([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))] })
        })
    })
  }
  return out
}
