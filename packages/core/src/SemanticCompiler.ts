/**
 * The one compiler from a semantic query to SQL, for PostgreSQL and MySQL. Pure and deterministic:
 * the same model and query always give the same text and parameters.
 *
 * How it keeps numbers right:
 * - **Joins only along declared relationships**, and only from the many side to the one side: a
 *   measure's rows are never multiplied. A dimension it cannot reach that way is refused, never
 *   joined anyhow.
 * - **Each measure is aggregated at its own grain**: the measures of one table (and time axis) are
 *   aggregated together in one subquery, grouped by the requested dimensions; subqueries are then
 *   stacked (`UNION ALL`) and folded on the dimensions. Two tables that share a dimension never
 *   meet in a join (the chasm trap), and a one-to-many join never repeats a measure (the fan trap).
 * - **Ratios divide totals** (the sums of their parts), never average averages; a share divides by
 *   the total over the answer's rows; period over period aggregates the same measure over the
 *   shifted period in a subquery of its own.
 * - **Row filters travel**: each logical table is read through a projection that applies its own
 *   `row_filter` and keeps only rows whose parents (along many-to-one relationships) pass theirs,
 *   so a row-level rule on customers also limits their orders, whichever dimensions are asked.
 * - **Values are parameters**: filter values and dates are bound (`$1`, `$2`, ...; the MySQL
 *   driver rewrites them), and client attributes stay `_svc.client_attributes_json.<field>` for
 *   the runtime to bind exactly as it does for chat SQL.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as SqlStatement from "./internal/sqlStatement.js"
import * as LibraryContext from "./LibraryContext.js"
import type * as SemanticModel from "./SemanticModel.js"
import type { Grain, ResolvedMeasure, SemanticModel as Model, Table } from "./SemanticModel.js"
import * as SemanticQuery from "./SemanticQuery.js"

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
export type DialectName = "postgres" | "mysql"

/**
 * A value bound to a placeholder.
 *
 * @since 0.1.0
 * @category models
 */
export type Param = string | number | boolean | null

/**
 * A result column and what it is.
 *
 * @since 0.1.0
 * @category models
 */
export interface OutputColumn {
  readonly name: string
  readonly kind: "dimension" | "time" | "metric"
  readonly format?: SemanticModel.Format | undefined
}

/**
 * A compiled query.
 *
 * @since 0.1.0
 * @category models
 */
export interface Compiled {
  /** One statement, `$n` placeholders for `params`. */
  readonly sql: string
  readonly params: ReadonlyArray<Param>
  readonly columns: ReadonlyArray<OutputColumn>
  readonly reading: SemanticQuery.Reading
}

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
}

const postgres: Dialect = {
  name: "postgres",
  quote: (identifier) => `"${identifier.replaceAll("\"", "\"\"")}"`,
  local: (expr, isDate, zone) =>
    isDate ? `CAST(${expr} AS date)` : `(CAST(${expr} AS timestamptz) AT TIME ZONE '${zone}')`,
  truncate: (grain, local) => `CAST(date_trunc('${grain}', ${local}) AS date)`,
  shift: (local, count, unit) => `(${local} + INTERVAL '${count} ${unit}')`,
  divide: (numerator, denominator) => `CAST(${numerator} AS numeric) / NULLIF(${denominator}, 0)`,
  absent: "CAST(NULL AS numeric)",
  orderKey: (expr, direction) => `${expr} ${direction === "asc" ? "ASC" : "DESC"} NULLS LAST`
}

const mysql: Dialect = {
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
  orderKey: (expr, direction) => `${expr} IS NULL, ${expr} ${direction === "asc" ? "ASC" : "DESC"}`
}

/**
 * The dialect of a connector's SQL.
 *
 * @since 0.1.0
 * @category utils
 */
export const dialect = (name: DialectName): Dialect => name === "mysql" ? mysql : postgres

// ---------------------------------------------------------------------------------------------
// Resolving names
// ---------------------------------------------------------------------------------------------

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

interface FieldRef {
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

const fieldsOf = (table: Table): ReadonlyArray<FieldRef> => [
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

const resolveField = (model: Model, reference: string): Either.Either<FieldRef, CompileError> => {
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

type MetricRef =
  | { readonly kind: "measure"; readonly measure: ResolvedMeasure }
  | { readonly kind: "derived"; readonly metric: SemanticModel.DerivedMetric }

const resolveMetric = (model: Model, name: string): Either.Either<MetricRef, CompileError> => {
  const measure = model.measures.find((m) => same(m.name, name))
  if (measure !== undefined) return Either.right({ kind: "measure", measure })
  const metric = model.metrics.find((m) => same(m.name, name))
  if (metric !== undefined) return Either.right({ kind: "derived", metric })
  return Either.left(new CompileError({ message: `no metric named ${name} in model ${model.file.name}` }))
}

const measureNamed = (model: Model, name: string): ResolvedMeasure => model.measures.find((m) => m.name === name)!

const filterNamed = (model: Model, name: string) => {
  for (const table of model.tables) {
    const filter = (table.filters ?? []).find((f) => same(f.name, name))
    if (filter !== undefined) return { table, filter }
  }
  return undefined
}

const tableNamed = (model: Model, name: string): Table => model.tables.find((t) => t.name === name)!

// ---------------------------------------------------------------------------------------------
// The join graph: many-to-one (and one-to-one) edges only
// ---------------------------------------------------------------------------------------------

interface Edge {
  readonly from: string
  readonly to: string
  readonly columns: ReadonlyArray<readonly [from: string, to: string]>
}

const edges = (model: Model): ReadonlyArray<Edge> =>
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
const reachable = (model: Model, root: string): ReadonlyMap<string, Edge | undefined> => {
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

/**
 * How a query is compiled for its caller.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * Whether the tables' row filters apply: for a caller with client attributes (a key a host
   * handed to its end user), always; for the organization's own members, who carry none, not.
   * Applied unless said otherwise.
   */
  readonly rowFilters?: boolean | undefined
}

/**
 * Whether row filters apply for a caller with these client attributes (`Policy.clientAttributesJson`).
 *
 * @since 0.1.0
 * @category utils
 */
export const rowFiltersFor = (clientAttributesJson: string): boolean => clientAttributesJson !== "{}"

class Writer {
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

const baseTableSql = (w: Writer, table: Table): string => {
  const { database, schema, table: name } = table.base_table
  const qualifier = w.dialect.name === "mysql" ? schema ?? database : schema
  return qualifier === undefined ? w.q(name) : `${w.q(qualifier)}.${w.q(name)}`
}

/**
 * `(SELECT <columns> FROM <base> WHERE <row filters>)`: the table's rows the caller may read, with
 * the given output columns. Facts are computed in an inner layer so expressions can name them.
 */
const projection = (
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

const hasRowFilterAbove = (model: Model, name: string, visiting: ReadonlySet<string>): boolean => {
  const table = tableNamed(model, name)
  if (table.row_filter !== undefined) return true
  const inside = new Set([...visiting, name])
  return edges(model).some((e) => e.from === name && !inside.has(e.to) && hasRowFilterAbove(model, e.to, inside))
}

// ---------------------------------------------------------------------------------------------
// Compiling
// ---------------------------------------------------------------------------------------------

interface Requested {
  readonly field: FieldRef
  readonly alias: string
}

/** One aggregating subquery: the measures of one table over one time axis. */
interface Group {
  readonly table: string
  readonly time: FieldRef | undefined
  /** Shifted forward by this much (period over period reads the earlier period). */
  readonly shift: { readonly count: number; readonly unit: Grain } | undefined
  readonly measures: Array<{ readonly measure: ResolvedMeasure; readonly alias: string }>
}

const offsetOf = (offset: string): { count: number; unit: Grain } => {
  const [count, unit] = offset.split(" ") as [string, string]
  return { count: Number(count), unit: unit.replace(/s$/, "") as Grain }
}

const aggregate = (agg: SemanticModel.Aggregation, value: string | undefined, condition: string | undefined) => {
  const guarded = (expr: string) => condition === undefined ? expr : `CASE WHEN ${condition} THEN ${expr} END`
  switch (agg) {
    case "count":
      return value === undefined
        ? condition === undefined ? "COUNT(*)" : `COUNT(${guarded("1")})`
        : `COUNT(${guarded(value)})`
    case "count_distinct":
      return `COUNT(DISTINCT ${guarded(value!)})`
    case "sum":
      return `SUM(${guarded(value!)})`
    case "avg":
      return `AVG(${guarded(value!)})`
    case "min":
      return `MIN(${guarded(value!)})`
    case "max":
      return `MAX(${guarded(value!)})`
  }
}

const timeOf = (model: Model, measure: ResolvedMeasure, named: FieldRef | undefined): FieldRef | undefined => {
  if (named !== undefined) return named
  if (measure.time_dimension !== undefined) return Either.getOrUndefined(resolveField(model, measure.time_dimension))
  const table = tableNamed(model, measure.table)
  const first = table.time_dimensions?.[0]?.name
  return first === undefined ? undefined : fieldsOf(table).find((f) => f.kind === "time" && f.name === first)
}

/**
 * Compiles a semantic query against a validated model.
 *
 * @since 0.1.0
 * @category utils
 */
export const compile = (
  model: Model,
  query: SemanticQuery.SemanticQuery,
  dialectName: DialectName,
  options: Options = {}
): Either.Either<Compiled, CompileError> =>
  Either.gen(function*() {
    const w = new Writer(dialect(dialectName), options.rowFilters ?? true)
    const zone = model.timeZone

    // What is asked for.
    // A metric named twice is one column.
    const metrics = Arr.dedupeWith(
      yield* Either.all(query.metrics.map((name) => resolveMetric(model, name))),
      (a, b) => (a.kind === "measure" ? a.measure : a.metric) === (b.kind === "measure" ? b.measure : b.metric)
    )
    const dimensions: Array<Requested> = []
    for (const reference of query.dimensions ?? []) {
      const field = yield* resolveField(model, reference)
      if (dimensions.some((d) => d.field.table === field.table && d.field.name === field.name)) continue
      // Two tables' dimensions of one name stay two columns.
      const alias = dimensions.some((d) => d.alias === field.name) ? `${field.table.name}_${field.name}` : field.name
      dimensions.push({ field, alias })
    }
    // A list (no metrics): the distinct values of its dimensions, from the first table that reaches
    // all of them. It has no time axis of its own to read a period or a grain on.
    const listing = metrics.length === 0
    if (listing && dimensions.length === 0) {
      return yield* Either.left(new CompileError({ message: "name a metric to measure, or a dimension to list" }))
    }
    if (listing && query.time !== undefined) {
      return yield* Either.left(
        new CompileError({
          message: "a list of dimension values has no period or grain: name a metric to read by time"
        })
      )
    }
    const time = query.time
    const namedTime = time?.dimension === undefined ? undefined : yield* resolveField(model, time.dimension)
    if (namedTime !== undefined && namedTime.kind !== "time") {
      return yield* Either.left(new CompileError({ message: `${time!.dimension} is not a time dimension` }))
    }
    const grain = time?.grain
    const timeAlias = grain === undefined ? undefined : `${namedTime?.name ?? "period"}_${grain}`
    const hasPeriod = time?.start !== undefined || time?.end !== undefined
    if (time?.start !== undefined && time.end !== undefined && time.start >= time.end) {
      return yield* Either.left(
        new CompileError({ message: `the period's start ${time.start} is not before its end ${time.end}` })
      )
    }
    const filters = yield* Either.all(
      (query.filters ?? []).map((filter) =>
        Either.map(resolveField(model, filter.dimension), (field) => ({ filter, field }))
      )
    )
    const segments = yield* Either.all((query.segments ?? []).map((name) => {
      const found = filterNamed(model, name)
      return found === undefined
        ? Either.left(new CompileError({ message: `no filter named ${name} in model ${model.file.name}` }))
        : Either.right(found)
    }))

    // The measures every metric needs, each in the group of its table and time axis.
    const groups: Array<Group> = []
    const measureAlias = new Map<string, string>()
    const addMeasure = (
      measure: ResolvedMeasure,
      shift?: { count: number; unit: Grain }
    ): Either.Either<string, CompileError> => {
      const key = `${measure.name}${shift === undefined ? "" : `@${shift.count}${shift.unit}`}`
      const known = measureAlias.get(key)
      if (known !== undefined) {
        return Either.right(known)
      }
      const axis = timeOf(model, measure, namedTime)
      if ((grain !== undefined || hasPeriod || shift !== undefined) && axis === undefined) {
        return Either.left(
          new CompileError({
            message: `metric ${measure.name} has no time dimension: it cannot be read by ${grain ?? "period"}`
          })
        )
      }
      if (grain !== undefined && axis?.grains !== undefined && !axis.grains.includes(grain)) {
        return Either.left(
          new CompileError({
            message: `${axis.name} cannot be read by ${grain}: its grains are ${axis.grains.join(", ")}`
          })
        )
      }
      const alias = `m${measureAlias.size}`
      measureAlias.set(key, alias)
      const useAxis = grain !== undefined || hasPeriod || shift !== undefined ? axis : undefined
      let group = groups.find((g) =>
        g.table === measure.table && g.time === useAxis && g.shift?.count === shift?.count &&
        g.shift?.unit === shift?.unit
      )
      if (group === undefined) {
        group = { table: measure.table, time: useAxis, shift, measures: [] }
        groups.push(group)
      }
      group.measures.push({ measure, alias })
      return Either.right(alias)
    }
    const outputs: Array<
      { readonly name: string; readonly expr: string; readonly format?: SemanticModel.Format | undefined }
    > = []
    for (const metric of metrics) {
      if (metric.kind === "measure") {
        const alias = yield* addMeasure(metric.measure)
        outputs.push({ name: metric.measure.name, expr: w.q(alias), format: metric.measure.format })
        continue
      }
      const derived = metric.metric
      switch (derived.type) {
        case "ratio": {
          const numerator = yield* addMeasure(measureNamed(model, derived.numerator))
          const denominator = yield* addMeasure(measureNamed(model, derived.denominator))
          outputs.push({
            name: derived.name,
            expr: w.dialect.divide(w.q(numerator), w.q(denominator)),
            format: derived.format
          })
          break
        }
        case "share": {
          const alias = yield* addMeasure(measureNamed(model, derived.measure))
          outputs.push({
            name: derived.name,
            expr: w.dialect.divide(w.q(alias), `SUM(${w.q(alias)}) OVER ()`),
            format: derived.format ?? "percent"
          })
          break
        }
        case "period_over_period": {
          if (grain === undefined && !hasPeriod) {
            return yield* Either.left(
              new CompileError({ message: `metric ${derived.name} compares periods: give a time grain or a period` })
            )
          }
          const current = w.q(yield* addMeasure(measureNamed(model, derived.measure)))
          const previous = w.q(yield* addMeasure(measureNamed(model, derived.measure), offsetOf(derived.offset)))
          const calculation = derived.calculation ?? "growth"
          outputs.push({
            name: derived.name,
            expr: calculation === "previous"
              ? previous
              : calculation === "difference"
              ? `(${current} - ${previous})`
              : w.dialect.divide(`(${current} - ${previous})`, previous),
            format: derived.format ?? (calculation === "growth" ? "percent" : undefined)
          })
          break
        }
      }
    }

    if (listing) {
      const tables = dimensions.map((d) => d.field.table.name)
      const used = [...tables, ...filters.map((f) => f.field.table.name), ...segments.map((f) => f.table.name)]
      const root = tables.find((table) => {
        const reach = reachable(model, table)
        return used.every((t) => reach.has(t))
      }) ?? tables[0]!
      groups.push({ table: root, time: undefined, shift: undefined, measures: [] })
    }

    // Each group: its table joined to the tables the dimensions, filters and segments live in.
    const dimensionAliases = [
      ...dimensions.map((d) => d.alias),
      ...(timeAlias === undefined ? [] : [timeAlias])
    ]
    const allAliases = [...measureAlias.values()]
    const branches: Array<string> = []
    for (const group of groups) {
      const reach = reachable(model, group.table)
      const needed = new Set<string>([group.table])
      const need = (table: string, what: string): Either.Either<void, CompileError> => {
        if (!reach.has(table)) {
          const names = group.measures.length === 0
            ? `the list of ${group.table}`
            : group.measures.map((m) => m.measure.name).join(", ")
          return Either.left(
            new CompileError({
              message:
                `${names} cannot be read by ${what}: no many-to-one relationship leads from ${group.table} to ${table}`
            })
          )
        }
        for (let at: string | undefined = table; at !== undefined; at = reach.get(at)?.from) needed.add(at)
        return Either.right(undefined)
      }
      // The columns each table's projection gives, as `[expr, alias]`.
      const columns = new Map<string, Array<readonly [string, string]>>()
      const column = (table: string, expr: string, alias: string) => {
        const list = columns.get(table) ?? []
        if (!list.some(([, a]) => a === alias)) list.push([expr, alias])
        columns.set(table, list)
        return `${w.q(table)}.${w.q(alias)}`
      }
      const select: Array<string> = []
      const aggregates = new Map<string, string>()
      const groupBy: Array<string> = []
      const where: Array<string> = []
      for (const d of dimensions) {
        yield* need(d.field.table.name, d.field.name)
        const ref = column(d.field.table.name, d.field.expr, `d__${d.field.name}`)
        const value = d.field.kind === "time" ? w.dialect.local(ref, d.field.isDate, zone) : ref
        select.push(`${value} AS ${w.q(d.alias)}`)
        groupBy.push(value)
      }
      let local: string | undefined = undefined
      if (group.time !== undefined) {
        yield* need(group.time.table.name, group.time.name)
        const ref = column(group.time.table.name, group.time.expr, `t__${group.time.name}`)
        local = w.dialect.local(ref, group.time.isDate, zone)
        if (group.shift !== undefined) local = w.dialect.shift(local, group.shift.count, group.shift.unit)
        if (grain !== undefined) {
          const truncated = w.dialect.truncate(grain, local)
          select.push(`${truncated} AS ${w.q(timeAlias!)}`)
          groupBy.push(truncated)
        }
        if (time?.start !== undefined) where.push(`${local} >= ${w.bind(time.start)}`)
        if (time?.end !== undefined) where.push(`${local} < ${w.bind(time.end)}`)
      }
      for (const { field, filter } of filters) {
        yield* need(field.table.name, field.name)
        const ref = column(field.table.name, field.expr, `d__${field.name}`)
        const value = field.kind === "time" ? w.dialect.local(ref, field.isDate, zone) : ref
        where.push(condition(w, value, filter, field))
      }
      for (const { table, filter } of segments) {
        yield* need(table.name, filter.name)
        where.push(column(table.name, filter.expr, `f__${filter.name}`))
      }
      for (const { measure, alias } of group.measures) {
        const value = measure.expr === undefined ? undefined : column(group.table, measure.expr, `v__${measure.name}`)
        const conditions: Array<string> = []
        for (const name of measure.filters ?? []) {
          const found = filterNamed(model, name)!
          yield* need(found.table.name, `filter ${name}`)
          conditions.push(column(found.table.name, found.filter.expr, `f__${found.filter.name}`))
        }
        aggregates.set(
          alias,
          aggregate(measure.agg, value, conditions.length === 0 ? undefined : conditions.join(" AND "))
        )
      }
      // Every alias of the stacked result, in one order: dimensions, then all measures (null where
      // another group computes it).
      const list = [
        ...select,
        ...allAliases.map((alias) => `${aggregates.get(alias) ?? w.dialect.absent} AS ${w.q(alias)}`)
      ]
      let from = ""
      for (const table of [...needed].sort((a, b) => depth(reach, a) - depth(reach, b) || (a < b ? -1 : 1))) {
        const edge = reach.get(table)
        if (edge !== undefined) {
          for (const [fromColumn] of edge.columns) column(edge.from, fromColumn, `k__${fromColumn}`)
          for (const [, toColumn] of edge.columns) column(table, toColumn, `k__${toColumn}`)
        }
      }
      for (const table of [...needed].sort((a, b) => depth(reach, a) - depth(reach, b) || (a < b ? -1 : 1))) {
        const body = projection(w, model, tableNamed(model, table), columns.get(table) ?? [])
        const edge = reach.get(table)
        from += edge === undefined
          ? `${body} AS ${w.q(table)}`
          : `\n  LEFT JOIN ${body} AS ${w.q(table)} ON ${
            edge.columns.map(([a, b]) => `${w.q(edge.from)}.${w.q(`k__${a}`)} = ${w.q(table)}.${w.q(`k__${b}`)}`)
              .join(" AND ")
          }`
      }
      branches.push(
        `SELECT ${list.join(", ")}\n  FROM ${from}${where.length === 0 ? "" : `\n  WHERE ${where.join(" AND ")}`}${
          groupBy.length === 0 ? "" : `\n  GROUP BY ${groupBy.join(", ")}`
        }`
      )
    }

    // Stack the groups and fold them on the dimensions: each dimension tuple has one row per group.
    const inner = branches.length === 1
      ? branches[0]!
      : `SELECT ${
        [
          ...dimensionAliases.map((a) => w.q(a)),
          ...allAliases.map((a) => `MAX(${w.q(a)}) AS ${w.q(a)}`)
        ].join(", ")
      }\n  FROM (\n${branches.join("\n  UNION ALL\n")}\n  ) AS ${w.q("stacked")}${
        dimensionAliases.length === 0 ? "" : `\n  GROUP BY ${dimensionAliases.map((a) => w.q(a)).join(", ")}`
      }`

    const outputNames = [...dimensionAliases, ...outputs.map((o) => o.name)]
    const order = query.order ?? (timeAlias !== undefined
      ? [{ by: "time", direction: "asc" as const }]
      : dimensions.length === 0 || outputs.length === 0
      ? []
      : [{ by: outputs[0]!.name, direction: "desc" as const }])
    const orderSql: Array<string> = []
    for (const o of order) {
      const target = o.by === "time" && timeAlias !== undefined ? timeAlias : outputNames.find((n) => same(n, o.by))
      if (target === undefined) {
        return yield* Either.left(
          new CompileError({ message: `cannot order by ${o.by}: it is not one of ${outputNames.join(", ")}` })
        )
      }
      // Unsaid, a metric goes highest first and anything else in its natural order, as the reading says.
      orderSql.push(
        w.dialect.orderKey(w.q(target), o.direction ?? (outputs.some((x) => same(x.name, o.by)) ? "desc" : "asc"))
      )
    }
    // Ties (and a missing order) still give one order: every dimension after the requested keys.
    for (const alias of dimensionAliases) {
      if (!order.some((o) => o.by === alias || (o.by === "time" && alias === timeAlias))) {
        orderSql.push(`${w.q(alias)} ASC`)
      }
    }
    const limit = query.limit ?? SemanticQuery.maxLimit
    const sql = `SELECT ${
      [
        ...dimensionAliases.map((a) => w.q(a)),
        ...outputs.map((o) => `${o.expr} AS ${w.q(o.name)}`)
      ].join(", ")
    }\nFROM (\n  ${inner}\n) AS ${w.q("q")}${
      orderSql.length === 0 ? "" : `\nORDER BY ${orderSql.join(", ")}`
    }\nLIMIT ${limit}`

    return {
      sql,
      params: w.params,
      columns: [
        ...dimensions.map((d): OutputColumn => ({
          name: d.alias,
          kind: d.field.kind === "time" ? "time" : "dimension"
        })),
        ...(timeAlias === undefined ? [] : [{ name: timeAlias, kind: "time" as const }]),
        ...outputs.map((o): OutputColumn => ({ name: o.name, kind: "metric", format: o.format }))
      ],
      reading: reading(model, query, metrics, dimensions.map((d) => d.field), namedTime, filters, segments, order)
    }
  })

const depth = (reach: ReadonlyMap<string, Edge | undefined>, table: string): number => {
  let n = 0
  for (let at = reach.get(table); at !== undefined; at = reach.get(at.from)) n++
  return n
}

/** A filter value as the model stores it: a listed value's synonym ("APAC") becomes the value. */
const canonical = (field: FieldRef, value: string | number | boolean): string | number | boolean => {
  if (typeof value !== "string") return value
  for (const listed of field.values ?? []) {
    if (String(listed.value).toLowerCase() === value.toLowerCase()) return listed.value
    if ((listed.synonyms ?? []).some((s) => same(s, value))) return listed.value
  }
  return value
}

const condition = (
  w: Writer,
  value: string,
  filter: SemanticQuery.DimensionFilter,
  field: FieldRef
): string => {
  const values = filter.values.map((v) => canonical(field, v))
  switch (filter.operator) {
    case "=":
    case "in":
      return values.length === 1
        ? `${value} = ${w.bind(values[0]!)}`
        : `${value} IN (${values.map((v) => w.bind(v)).join(", ")})`
    case "!=":
    case "not_in":
      return values.length === 1
        ? `${value} <> ${w.bind(values[0]!)}`
        : `${value} NOT IN (${values.map((v) => w.bind(v)).join(", ")})`
    case ">":
    case ">=":
    case "<":
    case "<=":
      return `${value} ${filter.operator} ${w.bind(values[0]!)}`
    case "between":
      return `${value} BETWEEN ${w.bind(values[0]!)} AND ${w.bind(values[1] ?? values[0]!)}`
    case "contains":
      return `LOWER(${value}) LIKE ${w.bind(`%${String(values[0]).toLowerCase().replace(/[\\%_]/g, "\\$&")}%`)}`
  }
}

// ---------------------------------------------------------------------------------------------
// The reading
// ---------------------------------------------------------------------------------------------

const words = (name: string) => name.replaceAll("_", " ")

const aggregationWords: Record<SemanticModel.Aggregation, string> = {
  sum: "sum of",
  count: "count of",
  count_distinct: "number of distinct",
  avg: "average of",
  min: "smallest",
  max: "largest"
}

/**
 * A measure's definition in words: its description, or its aggregation and filters.
 *
 * @since 0.1.0
 * @category utils
 */
export const definition = (model: Model, measure: ResolvedMeasure): string => {
  if (measure.description !== undefined) return measure.description
  const what = measure.expr === undefined ? `${words(measure.table)} rows` : words(measure.expr)
  // A filter's description says it whole ("cancelled orders excluded"); a bare name reads "only paid".
  const conditions = (measure.filters ?? []).map((name) =>
    filterNamed(model, name)?.filter.description ?? `only ${words(name)}`
  )
  return `${aggregationWords[measure.agg]} ${what}${conditions.length === 0 ? "" : `, ${conditions.join(" and ")}`}`
}

const metricDefinition = (model: Model, ref: MetricRef): string => {
  if (ref.kind === "measure") return definition(model, ref.measure)
  const metric = ref.metric
  if (metric.description !== undefined) return metric.description
  switch (metric.type) {
    case "ratio":
      return `${words(metric.numerator)} divided by ${words(metric.denominator)}`
    case "share":
      return `${words(metric.measure)} as a share of the total`
    case "period_over_period":
      return `${words(metric.measure)} against ${metric.offset} earlier (${metric.calculation ?? "growth"})`
  }
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

const monthNames = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
]

/**
 * A period in words: "2025", "March 2025", "Q1 2025", "2025-01-05 to 2025-02-10", "all time".
 *
 * @since 0.1.0
 * @category utils
 */
export const periodWords = (start: string | undefined, end: string | undefined): string => {
  if (start === undefined && end === undefined) return "all time"
  if (start === undefined) return `before ${end}`
  if (end === undefined) return `since ${start}`
  const [sy, sm, sd] = start.split("-").map(Number) as [number, number, number]
  const [ey, em, ed] = end.split("-").map(Number) as [number, number, number]
  const months = (ey - sy) * 12 + (em - sm)
  if (sd === 1 && ed === 1) {
    if (sm === 1 && months === 12) return `${sy}`
    if (months === 1) return `${monthNames[sm - 1]} ${sy}`
    if (months === 3 && (sm - 1) % 3 === 0) return `Q${(sm + 2) / 3} ${sy}`
  }
  const last = new Date(Date.UTC(ey, em - 1, ed) - 86_400_000).toISOString().slice(0, 10)
  return last === start ? `on ${start}` : `${start} to ${last}`
}

const operatorWords: Record<SemanticQuery.Operator, string> = {
  "=": "is",
  in: "is",
  "!=": "is not",
  not_in: "is not",
  ">": "is above",
  ">=": "is at least",
  "<": "is below",
  "<=": "is at most",
  between: "is between",
  contains: "contains"
}

const reading = (
  model: Model,
  query: SemanticQuery.SemanticQuery,
  metrics: ReadonlyArray<MetricRef>,
  dimensions: ReadonlyArray<FieldRef>,
  namedTime: FieldRef | undefined,
  filters: ReadonlyArray<{ readonly filter: SemanticQuery.DimensionFilter; readonly field: FieldRef }>,
  segments: ReadonlyArray<{ readonly filter: SemanticModel.Filter }>,
  order: ReadonlyArray<SemanticQuery.OrderBy>
): SemanticQuery.Reading => {
  const readingMetrics = metrics.map((ref) => ({
    name: ref.kind === "measure" ? ref.measure.name : ref.metric.name,
    definition: metricDefinition(model, ref)
  }))
  const filterWords = [
    ...filters.map(({ field, filter }) => {
      const values = filter.values.map((v) => String(canonical(field, v)))
      const joined = filter.operator === "between"
        ? values.join(" and ")
        : values.length > 1
        ? `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`
        : values[0]!
      const negated = filter.operator === "not_in" || filter.operator === "!="
      return `${words(field.name)} ${
        values.length > 1 && !negated && filter.operator !== "between" ? "is one of" : operatorWords[filter.operator]
      } ${joined}`
    }),
    ...segments.map(({ filter }) => filter.description ?? words(filter.name))
  ]
  const grain = query.time?.grain
  const period = periodWords(query.time?.start, query.time?.end)
  const first = order[0]
  const orderWords = first === undefined
    ? readingMetrics.length === 0 && dimensions.length > 0
      ? `in ${words(dimensions[0]!.name)} order`
      : "in no particular order"
    : first.by === "time" || (namedTime !== undefined && same(first.by, namedTime.name))
    ? first.direction === "desc" ? "latest first" : "earliest first"
    : readingMetrics.some((m) => same(m.name, first.by))
    ? first.direction === "asc" ? "lowest first" : "highest first" // unsaid: highest first, as the SQL orders it
    : `by ${words(first.by)}${first.direction === "desc" ? ", descending" : ""}`
  const by = [...dimensions.map((d) => words(d.name)), ...(grain === undefined ? [] : [grain])]
  // A list says what it lists.
  const listed = dimensions.map((d) => words(d.name)).join(" and ")
  const table = dimensions.length === 0 ? "" : words(dimensions[0]!.table.name)
  const metricText = readingMetrics.length === 0
    // "Every product", "every region of customers".
    ? `Every ${listed}${table.startsWith(words(dimensions[0]!.name)) ? "" : ` of ${table}`}`
    : readingMetrics.map((m) => `${capitalized(words(m.name))} (${m.definition})`).join(" and ")
  const text = [
    // The rows a limit keeps are the first of the order: the lowest ones when it goes up.
    query.limit !== undefined && readingMetrics.length === 0
      ? `The first ${query.limit}: `
      : query.limit !== undefined && by.length > 0
      ? `${orderWords === "lowest first" ? "Bottom" : "Top"} ${query.limit}: `
      : "",
    metricText,
    by.length === 0 || readingMetrics.length === 0 ? "" : ` by ${by.join(" and ")}`,
    readingMetrics.length === 0
      ? ""
      : period === "all time"
      ? ", over all time"
      : /^\d{4}$|^[A-Z]/.test(period)
      ? ` in ${period}`
      : period.startsWith("on ")
      ? ` ${period}`
      : `, ${period}`,
    filterWords.length === 0 ? "" : `, where ${filterWords.join(" and ")}`,
    by.length === 0 ? "" : `, ${orderWords}`
  ].join("")
  return {
    text,
    metrics: readingMetrics,
    dimensions: dimensions.map((d) => d.name),
    filters: filterWords,
    period,
    ...(grain === undefined ? {} : { grain }),
    order: orderWords,
    ...(query.limit === undefined ? {} : { limit: query.limit })
  }
}

// ---------------------------------------------------------------------------------------------
// Verified queries
// ---------------------------------------------------------------------------------------------

/**
 * A verified query's SQL made runnable: each logical table it reads (`__orders`) becomes a common
 * table expression over the table's projection (its dimensions, time dimensions and facts by name,
 * its keys, its row filter), and `:name` parameters become placeholders bound to `values` (a
 * parameter's default where `values` has none).
 *
 * @since 0.1.0
 * @category utils
 */
export const verifiedSql = (
  model: Model,
  query: SemanticModel.VerifiedQuery,
  values: Readonly<Record<string, unknown>>,
  dialectName: DialectName,
  options: Options = {}
): Either.Either<{ readonly sql: string; readonly params: ReadonlyArray<Param> }, CompileError> => {
  // The model's format check refuses it first; a model read any other way is held to it here.
  const notOne = SqlStatement.notOneQuery(query.sql)
  if (notOne !== undefined) return Either.left(new CompileError({ message: `not one SELECT or WITH query: ${notOne}` }))
  const w = new Writer(dialect(dialectName), options.rowFilters ?? true)
  const used = [...new Set([...query.sql.matchAll(/\b__([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))]
  const ctes: Array<string> = []
  for (const name of used) {
    const table = model.tables.find((t) => t.name === name)
    if (table === undefined) return Either.left(new CompileError({ message: `no table named ${name}` }))
    const columns: Array<readonly [string, string]> = []
    const add = (expr: string, alias: string) => {
      if (!columns.some(([, a]) => a === alias)) columns.push([expr, alias])
    }
    for (const field of fieldsOf(table)) add(field.expr, field.name)
    for (const fact of table.facts ?? []) add(fact.name, fact.name)
    for (const column of table.primary_key?.columns ?? []) add(column, column)
    for (const edge of edges(model)) {
      if (edge.from === table.name) { for (const [from] of edge.columns) add(from, from) }
      if (edge.to === table.name) { for (const [, to] of edge.columns) add(to, to) }
    }
    ctes.push(`${w.q(`__${name}`)} AS ${projection(w, model, table, columns)}`)
  }
  const defaults: Record<string, unknown> = {}
  for (const parameter of query.parameters ?? []) {
    if (parameter.default !== undefined) defaults[parameter.name] = parameter.default
  }
  // Placeholders in the projections were numbered first; the query's own follow them.
  const bound = LibraryContext.bindNamedParams(
    query.sql.trim().replace(/;\s*$/, ""),
    { ...defaults, ...values },
    w.params.length
  )
  if (bound.missing.length > 0) {
    return Either.left(new CompileError({ message: `missing values for parameters: ${bound.missing.join(", ")}` }))
  }
  const own = /^with\s/i.exec(bound.text)
  const sql = ctes.length === 0
    ? bound.text
    : own === null
    ? `WITH ${ctes.join(",\n")}\n${bound.text}`
    : `WITH ${ctes.join(",\n")},\n${bound.text.slice(own[0].length)}`
  return Either.right({ sql, params: [...w.params, ...bound.params] })
}

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
    const metric = model.metrics.find((m) => m.name === name)
    const query: SemanticQuery.SemanticQuery = metric?.type === "period_over_period"
      ? { metrics: [name], time: { grain: "year" } }
      : { metrics: [name] }
    Either.match(compile(model, query, dialectName), {
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
          reads: [...new Set([...query.sql.matchAll(/\b__([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))]
        })
    })
  }
  return out
}
