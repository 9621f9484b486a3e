/**
 * The semantic model as SQL, shared by the compiler (`SemanticCompiler`), its reading
 * (`SemanticReading`) and the checks' probes (`SemanticProbes`): the dialects, names resolved to
 * fields and metrics, the join graph of many-to-one relationships, and projections (a logical
 * table as the caller may read it, row filters travelling along relationships).
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type * as ConnectorRuntime from "../ConnectorRuntime.js"
import type * as SemanticModel from "../SemanticModel.js"
import type { Grain, ResolvedMeasure, SemanticModel as Model, Table } from "../SemanticModel.js"
import * as SemanticQuery from "../SemanticQuery.js"

/**
 * Why a query cannot be compiled against a model, in words a model or a person can act on.
 *
 * @since 0.1.0
 * @category errors
 */
export class CompileError extends Schema.TaggedError<CompileError>()("CompileError", {
  message: Schema.String
}) {}

/**
 * The SQL dialects the compiler writes.
 *
 * @since 0.1.0
 * @category models
 */
export type DialectName = ConnectorRuntime.DialectName

/**
 * A value bound to a placeholder.
 *
 * @since 0.1.0
 * @category models
 */
export type Param = string | number | boolean | null

// ---------------------------------------------------------------------------------------------
// Dialects
// ---------------------------------------------------------------------------------------------

/**
 * How the compiler writes one SQL dialect.
 *
 * @since 0.1.0
 * @category models
 */
export interface Dialect {
  readonly name: DialectName
  readonly quote: (identifier: string) => string
  /** A point in time as local time in `zone` (a `DATE` stays a day). */
  readonly local: (expr: string, isDate: boolean, zone: string) => string
  readonly truncate: (grain: Grain, local: string) => string
  readonly shift: (local: string, count: number, unit: Grain) => string
  /** Exact division of two aggregates (never integer division), null on a zero denominator. */
  readonly divide: (numerator: string, denominator: string) => string
  /** A measure another stacked subquery computes (typed, so the stack's column types agree). */
  readonly absent: string
  /** An ordering key with rows that have no value last, either way: a ranking never leads with them. */
  readonly orderKey: (expr: string, direction: "asc" | "desc") => string
  /** A day given as text (a bound `YYYY-MM-DD`) as a date. */
  readonly day: (expr: string) => string
  /**
   * A time spine: a subquery of one column, `bucket`, holding each period of `grain` from the
   * `lo` (a period's first day) to the `hi` columns of the one row of `bounds`, both included.
   */
  readonly spine: (bounds: string, grain: Grain) => string
  /** A percentile as one aggregate, where the dialect has one (MySQL has none: see the compiler). */
  readonly percentile: ((fraction: number, discrete: boolean, value: string) => string) | undefined
  /** Equality that holds between two nulls. */
  readonly sameValue: (a: string, b: string) => string
}

// PostgreSQL reads no quarters in an interval.
const interval = (count: number, unit: Grain) => unit === "quarter" ? `${count * 3} month` : `${count} ${unit}`

export const postgres: Dialect = {
  name: "postgres",
  quote: (identifier) => `"${identifier.replaceAll("\"", "\"\"")}"`,
  local: (expr, isDate, zone) =>
    isDate ? `CAST(${expr} AS date)` : `(CAST(${expr} AS timestamptz) AT TIME ZONE '${zone}')`,
  truncate: (grain, local) => `CAST(date_trunc('${grain}', ${local}) AS date)`,
  shift: (local, count, unit) => `(${local} + INTERVAL '${interval(count, unit)}')`,
  divide: (numerator, denominator) => `CAST(${numerator} AS numeric) / NULLIF(${denominator}, 0)`,
  absent: "CAST(NULL AS numeric)",
  orderKey: (expr, direction) => `${expr} ${direction === "asc" ? "ASC" : "DESC"} NULLS LAST`,
  day: (expr) => `CAST(${expr} AS date)`,
  spine: (bounds, grain) =>
    `(SELECT CAST(generate_series(CAST("b"."lo" AS timestamp), CAST("b"."hi" AS timestamp), INTERVAL '${
      interval(1, grain)
    }') AS date) AS "bucket" FROM ${bounds} AS "b")`,
  percentile: (fraction, discrete, value) =>
    `PERCENTILE_${discrete ? "DISC" : "CONT"}(${fraction}) WITHIN GROUP (ORDER BY ${value})`,
  sameValue: (a, b) => `${a} IS NOT DISTINCT FROM ${b}`
}

export const mysql: Dialect = {
  name: "mysql",
  quote: (identifier) => `\`${identifier.replaceAll("`", "``")}\``,
  local: (expr, isDate, zone) =>
    isDate ? `CAST(${expr} AS DATE)` : zone === "UTC" ? expr : `CONVERT_TZ(${expr}, '+00:00', '${zone}')`,
  truncate: (grain, local) => {
    switch (grain) {
      case "day":
        return `DATE(${local})`
      case "week":
        return `DATE_SUB(DATE(${local}), INTERVAL WEEKDAY(${local}) DAY)`
      case "month":
        return `CAST(DATE_FORMAT(${local}, '%Y-%m-01') AS DATE)`
      case "quarter":
        return `DATE_ADD(MAKEDATE(YEAR(${local}), 1), INTERVAL QUARTER(${local}) - 1 QUARTER)`
      case "year":
        return `MAKEDATE(YEAR(${local}), 1)`
    }
  },
  shift: (local, count, unit) => `(${local} + INTERVAL ${count} ${unit.toUpperCase()})`,
  // Decimal division keeps only `div_precision_increment` (4) more digits: 0.0425 for 0.04255.
  // A double (`1e0` is one) keeps them all.
  divide: (numerator, denominator) => `${numerator} * 1e0 / NULLIF(${denominator}, 0)`,
  absent: "NULL",
  // MySQL has no NULLS LAST, and sorts them first going up.
  orderKey: (expr, direction) => `${expr} IS NULL, ${expr} ${direction === "asc" ? "ASC" : "DESC"}`,
  day: (expr) => `CAST(${expr} AS DATE)`,
  // No generate_series: a recursive common table expression (MySQL 8 stops one at 1,000 rows unless
  // `cte_max_recursion_depth` allows more; MariaDB does not).
  spine: (bounds, grain) =>
    `(WITH RECURSIVE \`s\`(\`bucket\`, \`hi\`) AS (SELECT \`b\`.\`lo\`, \`b\`.\`hi\` FROM ${bounds} AS \`b\` UNION ALL SELECT \`bucket\` + INTERVAL 1 ${grain.toUpperCase()}, \`hi\` FROM \`s\` WHERE \`bucket\` + INTERVAL 1 ${grain.toUpperCase()} <= \`hi\`) SELECT \`bucket\` FROM \`s\`)`,
  percentile: undefined,
  sameValue: (a, b) => `${a} <=> ${b}`
}

// DuckDB reads PostgreSQL's spelling of time (its ICU extension, built in, gives `AT TIME ZONE`)
// and of NULLS LAST. Its `numeric` is DECIMAL(18,3), which would round a ratio's parts to three
// places, so exact division and a stacked measure go through DOUBLE instead.
export const duckdb: Dialect = {
  ...postgres,
  name: "duckdb",
  divide: (numerator, denominator) => `CAST(${numerator} AS DOUBLE) / NULLIF(${denominator}, 0)`,
  absent: "CAST(NULL AS DOUBLE)",
  // Its generate_series is a list outside FROM.
  spine: (bounds, grain) =>
    `(SELECT CAST(unnest(generate_series(CAST("b"."lo" AS timestamp), CAST("b"."hi" AS timestamp), INTERVAL '${
      interval(1, grain)
    }')) AS date) AS "bucket" FROM ${bounds} AS "b")`
}

const dialects: { readonly [Name in DialectName]: Dialect } = { postgres, mysql, duckdb }

/**
 * The periods a query groups by: of a standard grain, starting in `startMonth` (1 for the
 * calendar's; 4 for a fiscal year from April).
 *
 * @since 0.1.0
 * @category models
 */
export interface Periods {
  readonly grain: Grain
  readonly startMonth: number
}

/**
 * The periods a grain groups by: a standard grain, or one of the model's custom granularities.
 *
 * @since 0.1.0
 * @category utils
 */
export const bucketsOf = (model: Model, name: string): Either.Either<Periods, CompileError> => {
  const standard = SemanticQuery.Grain.literals.find((grain) => grain === name)
  if (standard !== undefined) return Either.right({ grain: standard, startMonth: 1 })
  const customs = model.file.custom_granularities ?? []
  const custom = customs.find((g) => g.name === name)
  return custom === undefined
    ? Either.left(
      new CompileError({
        message: `${name} is not a grain of this model: its grains are ${
          [...SemanticQuery.Grain.literals, ...customs.map((g) => g.name)].join(", ")
        }`
      })
    )
    : Either.right({ grain: custom.grain, startMonth: custom.start_month })
}

/**
 * The first day of the period that holds `local`. A period starting in another month is the
 * calendar's, read that many months earlier and moved back: April 2025 to March 2026 is the year
 * 2025 of the days three months earlier.
 *
 * @since 0.1.0
 * @category utils
 */
export const periodStart = (dialect: Dialect, periods: Periods, local: string): string => {
  if (periods.startMonth === 1) return dialect.truncate(periods.grain, local)
  const months = periods.startMonth - 1
  return dialect.day(
    dialect.shift(dialect.truncate(periods.grain, dialect.shift(local, -months, "month")), months, "month")
  )
}

/**
 * The dialect of a connector's SQL.
 *
 * @since 0.1.0
 * @category utils
 */
export const dialect = (name: DialectName): Dialect => dialects[name]

// ---------------------------------------------------------------------------------------------
// Resolving names
// ---------------------------------------------------------------------------------------------

export const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

export interface FieldRef {
  readonly table: Table
  readonly kind: "dimension" | "time"
  readonly name: string
  readonly expr: string
  readonly isDate: boolean
  /** The grains a time dimension may be grouped by (any when absent). */
  readonly grains?: ReadonlyArray<Grain> | undefined
  readonly description?: string | undefined
  readonly values?: ReadonlyArray<SemanticModel.DimensionValue> | undefined
}

export const fieldsOf = (table: Table): ReadonlyArray<FieldRef> => [
  ...(table.dimensions ?? []).map((d): FieldRef => ({
    table,
    kind: "dimension",
    name: d.name,
    expr: d.expr ?? d.name,
    isDate: false,
    description: d.description,
    values: d.values
  })),
  ...(table.time_dimensions ?? []).map((d): FieldRef => ({
    table,
    kind: "time",
    name: d.name,
    expr: d.expr ?? d.name,
    isDate: /^date$/i.test(d.data_type ?? ""),
    grains: d.grains,
    description: d.description
  }))
]

export const resolveField = (model: Model, reference: string): Either.Either<FieldRef, CompileError> => {
  const [tableName, fieldName] = reference.includes(".")
    ? reference.split(".", 2) as [string, string]
    : [undefined, reference]
  const candidates = model.tables
    .filter((t) => tableName === undefined || same(t.name, tableName))
    .flatMap(fieldsOf)
    .filter((f) => same(f.name, fieldName))
  if (candidates.length === 1) return Either.right(candidates[0]!)
  if (candidates.length === 0) {
    return Either.left(new CompileError({ message: `no dimension named ${reference} in model ${model.file.name}` }))
  }
  return Either.left(
    new CompileError({
      message: `${reference} names a dimension of ${candidates.map((c) => c.table.name).join(" and ")}: say which (${
        candidates.map((c) => `${c.table.name}.${c.name}`).join(", ")
      })`
    })
  )
}

export type MetricRef =
  | { readonly kind: "measure"; readonly measure: ResolvedMeasure }
  | { readonly kind: "derived"; readonly metric: SemanticModel.DerivedMetric }

export const resolveMetric = (model: Model, name: string): Either.Either<MetricRef, CompileError> => {
  const measure = model.measures.find((m) => same(m.name, name))
  if (measure !== undefined) return Either.right({ kind: "measure", measure })
  const metric = model.metrics.find((m) => same(m.name, name))
  if (metric !== undefined) return Either.right({ kind: "derived", metric })
  return Either.left(new CompileError({ message: `no metric named ${name} in model ${model.file.name}` }))
}

export const measureNamed = (model: Model, name: string): ResolvedMeasure =>
  model.measures.find((m) => m.name === name)!

export const filterNamed = (model: Model, name: string) => {
  for (const table of model.tables) {
    const filter = (table.filters ?? []).find((f) => same(f.name, name))
    if (filter !== undefined) return { table, filter }
  }
  return undefined
}

export const tableNamed = (model: Model, name: string): Table => model.tables.find((t) => t.name === name)!

// ---------------------------------------------------------------------------------------------
// The join graph: many-to-one (and one-to-one) edges only
// ---------------------------------------------------------------------------------------------

export interface Edge {
  readonly from: string
  readonly to: string
  readonly columns: ReadonlyArray<readonly [from: string, to: string]>
}

export const edges = (model: Model): ReadonlyArray<Edge> =>
  model.relationships.flatMap((r) => {
    const forward: Edge = {
      from: r.left_table,
      to: r.right_table,
      columns: r.relationship_columns.map((c) => [c.left_column, c.right_column] as const)
    }
    if (r.relationship_type !== "one_to_one") return [forward]
    return [forward, {
      from: r.right_table,
      to: r.left_table,
      columns: forward.columns.map(([a, b]) => [b, a] as const)
    }]
  })

/** The tables reachable from `root` along many-to-one edges, each with the edge that reaches it first. */
export const reachable = (model: Model, root: string): ReadonlyMap<string, Edge | undefined> => {
  const all = edges(model)
  const parents = new Map<string, Edge | undefined>([[root, undefined]])
  const queue = [root]
  while (queue.length > 0) {
    const at = queue.shift()!
    for (const edge of all) {
      if (edge.from !== at || parents.has(edge.to)) continue
      parents.set(edge.to, edge)
      queue.push(edge.to)
    }
  }
  return parents
}

// ---------------------------------------------------------------------------------------------
// Projections: a logical table as the caller may read it
// ---------------------------------------------------------------------------------------------

export class Writer {
  readonly params: Array<Param> = []
  constructor(readonly dialect: Dialect, readonly rowFilters: boolean = true) {}
  bind(value: Param): string {
    this.params.push(value)
    return `$${this.params.length}`
  }
  q(identifier: string): string {
    return this.dialect.quote(identifier)
  }
}

export const baseTableSql = (w: Writer, table: Table): string => {
  const { database, schema, table: name } = table.base_table
  const qualifier = w.dialect.name === "mysql" ? schema ?? database : schema
  return qualifier === undefined ? w.q(name) : `${w.q(qualifier)}.${w.q(name)}`
}

/**
 * `(SELECT <columns> FROM <base> WHERE <row filters>)`: the table's rows the caller may read, with
 * the given output columns. Facts are computed in an inner layer so expressions can name them.
 */
export const projection = (
  w: Writer,
  model: Model,
  table: Table,
  columns: ReadonlyArray<readonly [expr: string, alias: string]>,
  visiting: ReadonlySet<string> = new Set()
): string => {
  // A fact that only names a column of its table is that column already.
  const facts = (table.facts ?? []).filter((f) => f.expr.trim() !== f.name)
  const from = facts.length === 0
    ? `${baseTableSql(w, table)} AS ${w.q("b")}`
    : `(SELECT ${w.q("b")}.*, ${facts.map((f) => `(${f.expr}) AS ${w.q(f.name)}`).join(", ")} FROM ${
      baseTableSql(w, table)
    } AS ${w.q("b")}) AS ${w.q("b")}`
  const conditions: Array<string> = []
  if (w.rowFilters && table.row_filter !== undefined) conditions.push(`(${table.row_filter})`)
  // Parents with row filters (directly or further up) limit this table's rows too.
  const inside = new Set([...visiting, table.name])
  for (const edge of w.rowFilters ? edges(model) : []) {
    if (edge.from !== table.name || inside.has(edge.to)) continue
    if (!hasRowFilterAbove(model, edge.to, inside)) continue
    const parent = tableNamed(model, edge.to)
    const keys = edge.columns.map(([, to]) => [to, `k__${to}`] as const)
    const own = edge.columns.map(([from]) => `${w.q("b")}.${w.q(from)}`)
    const tuple = own.length === 1 ? own[0]! : `(${own.join(", ")})`
    conditions.push(
      `${tuple} IN (SELECT ${keys.map(([, alias]) => w.q(alias)).join(", ")} FROM ${
        projection(w, model, parent, keys, inside)
      } AS ${w.q("p")})`
    )
  }
  const list = columns.length === 0
    ? "1 AS one"
    : columns.map(([expr, alias]) => `(${expr}) AS ${w.q(alias)}`).join(", ")
  return `(SELECT ${list} FROM ${from}${conditions.length === 0 ? "" : ` WHERE ${conditions.join(" AND ")}`})`
}

/**
 * The columns each table's projection gives, as `[expr, alias]`, gathered by `column`, which
 * answers the column's reference in the query.
 */
export const projected = (w: Writer) => {
  const columns = new Map<string, Array<readonly [string, string]>>()
  const column = (table: string, expr: string, alias: string) => {
    const list = columns.get(table) ?? []
    if (!list.some(([, a]) => a === alias)) list.push([expr, alias])
    columns.set(table, list)
    return `${w.q(table)}.${w.q(alias)}`
  }
  return { column, columns }
}

/**
 * The FROM of one table's rows joined, along the many-to-one edges of `reach`, to the `needed`
 * tables, each read through its projection with the `columns` asked of it (and the keys its joins use).
 */
export const joined = (
  w: Writer,
  model: Model,
  reach: ReadonlyMap<string, Edge | undefined>,
  needed: ReadonlySet<string>,
  column: (table: string, expr: string, alias: string) => string,
  columns: ReadonlyMap<string, ReadonlyArray<readonly [string, string]>>
): string => {
  const ordered = [...needed].sort((a, b) => depth(reach, a) - depth(reach, b) || (a < b ? -1 : 1))
  for (const table of ordered) {
    const edge = reach.get(table)
    if (edge !== undefined) {
      for (const [fromColumn] of edge.columns) column(edge.from, fromColumn, `k__${fromColumn}`)
      for (const [, toColumn] of edge.columns) column(table, toColumn, `k__${toColumn}`)
    }
  }
  let from = ""
  for (const table of ordered) {
    const body = projection(w, model, tableNamed(model, table), columns.get(table) ?? [])
    const edge = reach.get(table)
    from += edge === undefined
      ? `${body} AS ${w.q(table)}`
      : `\n  LEFT JOIN ${body} AS ${w.q(table)} ON ${
        edge.columns.map(([a, b]) => `${w.q(edge.from)}.${w.q(`k__${a}`)} = ${w.q(table)}.${w.q(`k__${b}`)}`)
          .join(" AND ")
      }`
  }
  return from
}

/** How many joins lead from the root of `reach` to `table`. */
export const depth = (reach: ReadonlyMap<string, Edge | undefined>, table: string): number => {
  let n = 0
  for (let at = reach.get(table); at !== undefined; at = reach.get(at.from)) n++
  return n
}

export const hasRowFilterAbove = (model: Model, name: string, visiting: ReadonlySet<string>): boolean => {
  const table = tableNamed(model, name)
  if (table.row_filter !== undefined) return true
  const inside = new Set([...visiting, name])
  return edges(model).some((e) => e.from === name && !inside.has(e.to) && hasRowFilterAbove(model, e.to, inside))
}

/** A filter value as the model stores it: a listed value's synonym ("APAC") becomes the value. */
export const canonical = (field: FieldRef, value: string | number | boolean): string | number | boolean => {
  if (typeof value !== "string") return value
  for (const listed of field.values ?? []) {
    if (String(listed.value).toLowerCase() === value.toLowerCase()) return listed.value
    if ((listed.synonyms ?? []).some((s) => same(s, value))) return listed.value
  }
  return value
}

/** A name as words: `order_lines` is "order lines". */
export const words = (name: string) => name.replaceAll("_", " ")
