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
import * as MetricExpression from "./internal/metricExpression.js"
import { condition, havingOf, semiJoin } from "./internal/semanticConditions.js"
import {
  addShifts,
  aggregate,
  branch,
  offsetOf,
  type Shift,
  type Special,
  specialOf,
  timeOf
} from "./internal/semanticGroups.js"
import {
  edges,
  type FieldRef,
  fieldsOf,
  filterNamed,
  joined,
  measureNamed,
  projected,
  projection,
  reachable,
  resolveField,
  resolveMetric,
  same,
  words,
  Writer
} from "./internal/semanticSql.js"
import * as Sql from "./internal/semanticSql.js"
import * as SqlStatement from "./internal/sqlStatement.js"
import * as LibraryContext from "./LibraryContext.js"
import type * as SemanticModel from "./SemanticModel.js"
import type { Grain, ResolvedMeasure, SemanticModel as Model } from "./SemanticModel.js"
import * as SemanticQuery from "./SemanticQuery.js"
import * as SemanticReading from "./SemanticReading.js"

/**
 * Why a query cannot be compiled against a model, in words a model or a person can act on.
 *
 * @since 0.1.0
 * @category errors
 */
export const CompileError = Sql.CompileError

/**
 * @since 0.1.0
 * @category errors
 */
export type CompileError = Sql.CompileError

/**
 * The SQL dialects the compiler writes.
 *
 * @since 0.1.0
 * @category models
 */
export type DialectName = Sql.DialectName

/**
 * A value bound to a placeholder.
 *
 * @since 0.1.0
 * @category models
 */
export type Param = Sql.Param

/**
 * How the compiler writes one SQL dialect.
 *
 * @since 0.1.0
 * @category models
 */
export type Dialect = Sql.Dialect

/**
 * The dialect of a connector's SQL.
 *
 * @since 0.1.0
 * @category utils
 */
export const dialect: (name: DialectName) => Dialect = Sql.dialect

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
  /** The measure's currency or unit (`USD`), where its numbers are in one. */
  readonly unit?: string | undefined
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
  readonly special: Special | undefined
  readonly measures: Array<{ readonly measure: ResolvedMeasure; readonly alias: string }>
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
    // The grain asked for (a custom granularity by its name), and the standard grain under it.
    const grainName = time?.grain
    const buckets = grainName === undefined ? undefined : yield* Sql.bucketsOf(model, grainName)
    const grain = buckets?.grain
    const periods = time?.periods
    // Several periods with no grain are one row each, named by the day each starts.
    const timeAlias = grainName !== undefined
      ? `${namedTime?.name ?? "period"}_${grainName}`
      : periods === undefined
      ? undefined
      : namedTime === undefined
      ? "period"
      : `${namedTime.name}_period`
    const hasPeriod = time?.start !== undefined || time?.end !== undefined || time?.periods !== undefined
    if (time?.periods !== undefined && (time.start !== undefined || time.end !== undefined)) {
      return yield* Either.left(
        new CompileError({ message: "give one period (start, end) or several (periods), not both" })
      )
    }
    for (const period of [...(time?.periods ?? []), ...(time === undefined ? [] : [time])]) {
      if (period.start !== undefined && period.end !== undefined && period.start >= period.end) {
        return yield* Either.left(
          new CompileError({ message: `the period's start ${period.start} is not before its end ${period.end}` })
        )
      }
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

    const having = query.having_each === undefined ? undefined : yield* havingOf(model, query.having_each)

    // The measures every metric needs, each in the group of its table and time axis.
    const groups: Array<Group> = []
    const measureAlias = new Map<string, string>()
    const addMeasure = (
      measure: ResolvedMeasure,
      shift?: Shift,
      asked?: Special
    ): Either.Either<string, CompileError> =>
      Either.gen(function*() {
        const special = asked ?? (yield* specialOf(model, measure, w.dialect))
        const key = `${measure.name}${shift === undefined ? "" : `@${shift.count}${shift.unit}`}${
          special?._tag === "Converted"
            ? `#${special.metric.name}`
            : special?._tag === "Cumulative"
            ? `#${special.metric.name}`
            : special?._tag === "GrainStart"
            ? `^${special.grain}`
            : ""
        }`
        const known = measureAlias.get(key)
        if (known !== undefined) return known
        const axis = timeOf(model, measure, namedTime)
        const spined = special?._tag === "Cumulative" || special?._tag === "GrainStart"
        if ((grain !== undefined || hasPeriod || shift !== undefined || spined) && axis === undefined) {
          return yield* Either.left(
            new CompileError({
              message: `metric ${measure.name} has no time dimension: it cannot be read by ${grainName ?? "period"}`
            })
          )
        }
        if (grain !== undefined && axis?.grains !== undefined && !axis.grains.includes(grain)) {
          return yield* Either.left(
            new CompileError({
              message: `${axis.name} cannot be read by ${grainName}: its grains are ${axis.grains.join(", ")}`
            })
          )
        }
        const alias = `m${measureAlias.size}`
        measureAlias.set(key, alias)
        const useAxis = grain !== undefined || hasPeriod || shift !== undefined || spined ? axis : undefined
        let group = special === undefined
          ? groups.find((g) =>
            g.special === undefined && g.table === measure.table && g.time === useAxis &&
            g.shift?.count === shift?.count && g.shift?.unit === shift?.unit
          )
          : undefined
        if (group === undefined) {
          group = { table: measure.table, time: useAxis, shift, special, measures: [] }
          groups.push(group)
        }
        group.measures.push({ measure, alias })
        return alias
      })
    interface Output {
      readonly expr: string
      readonly format?: SemanticModel.Format | undefined
      readonly unit?: string | undefined
    }
    const filled = (expr: string, fill: number | undefined) => fill === undefined ? expr : `COALESCE(${expr}, ${fill})`
    // A metric's value over the stacked measures, read `shift` earlier where one is given.
    const valueOf = (
      ref: Sql.MetricRef,
      shift: Shift | undefined,
      path: ReadonlyArray<string>
    ): Either.Either<Output, CompileError> =>
      Either.gen(function*() {
        if (ref.kind === "measure") {
          const measure = ref.measure
          return {
            expr: filled(w.q(yield* addMeasure(measure, shift)), measure.fill_nulls_with),
            format: measure.format,
            unit: measure.unit
          }
        }
        const derived = ref.metric
        const input = (name: string, offset?: Shift) =>
          Either.gen(function*() {
            const combined = addShifts(shift, offset)
            if (combined === "apart") {
              return yield* Either.left(
                new CompileError({ message: `metric ${derived.name} offsets its inputs in two units: say one` })
              )
            }
            return yield* valueOf(yield* resolveMetric(model, name), combined, [...path, derived.name])
          })
        const fixed = (what: string) =>
          shift === undefined
            ? Either.void
            : Either.left(
              new CompileError({ message: `metric ${derived.name} is ${what}: it cannot be read an offset earlier` })
            )
        // An input read, for each period of the query, in the period where its `toGrain` period starts.
        const atGrainStart = (metric: SemanticModel.ExpressionMetric, name: string, toGrain: SemanticQuery.GrainName) =>
          Either.gen(function*() {
            const refuse = (why: string) =>
              Either.left(
                new CompileError({
                  message: `metric ${metric.name} reads ${name} at the start of each ${toGrain}: ${why}`
                })
              )
            yield* fixed("read at the start of a period")
            if (buckets === undefined || periods !== undefined) {
              return yield* refuse("read it by a time grain over one period")
            }
            const to = yield* Sql.bucketsOf(model, toGrain)
            if (SemanticQuery.Grain.literals.indexOf(buckets.grain) > SemanticQuery.Grain.literals.indexOf(to.grain)) {
              return yield* refuse(`read it by ${toGrain} or a finer grain, not ${grainName}`)
            }
            const ref = yield* resolveMetric(model, name)
            if (ref.kind !== "measure") return yield* refuse(`${name} is a ${ref.metric.type} metric, not a measure`)
            const measure = ref.measure
            if (
              measure.non_additive_dimension !== undefined || measure.agg === "median" || measure.agg === "percentile"
            ) {
              return yield* refuse(
                `a ${
                  measure.non_additive_dimension === undefined ? measure.agg : "semi-additive measure"
                } is not read so`
              )
            }
            const alias = yield* addMeasure(measure, undefined, { _tag: "GrainStart", grain: toGrain })
            return { expr: filled(w.q(alias), measure.fill_nulls_with), format: measure.format, unit: measure.unit }
          })
        switch (derived.type) {
          case "ratio": {
            const numerator = yield* input(derived.numerator)
            const denominator = yield* input(derived.denominator)
            return { expr: w.dialect.divide(numerator.expr, denominator.expr), format: derived.format }
          }
          case "share": {
            const value = yield* input(derived.measure)
            return {
              expr: w.dialect.divide(value.expr, `SUM(${value.expr}) OVER ()`),
              format: derived.format ?? "percent"
            }
          }
          case "period_over_period": {
            if (grain === undefined && !hasPeriod) {
              return yield* Either.left(
                new CompileError({ message: `metric ${derived.name} compares periods: give a time grain or a period` })
              )
            }
            const current = yield* input(derived.measure)
            const previous = yield* input(derived.measure, offsetOf(derived.offset))
            const calculation = derived.calculation ?? "growth"
            return {
              expr: calculation === "previous"
                ? previous.expr
                : calculation === "difference"
                ? `(${current.expr} - ${previous.expr})`
                : w.dialect.divide(`(${current.expr} - ${previous.expr})`, previous.expr),
              format: derived.format ?? (calculation === "growth" ? "percent" : undefined),
              // The previous value and the difference are in the measure's unit; a growth is a ratio.
              unit: calculation === "growth" ? undefined : current.unit
            }
          }
          case "derived": {
            if (path.includes(derived.name)) {
              return yield* Either.left(new CompileError({ message: `metric ${derived.name} is derived from itself` }))
            }
            const values = new Map<string, Output>()
            for (const metricInput of derived.metrics) {
              values.set(
                metricInput.alias ?? metricInput.name,
                metricInput.offset_to_grain === undefined
                  ? yield* input(
                    metricInput.name,
                    metricInput.offset_window === undefined ? undefined : offsetOf(metricInput.offset_window)
                  )
                  : yield* atGrainStart(derived, metricInput.name, metricInput.offset_to_grain)
              )
            }
            if (grain === undefined && !hasPeriod && derived.metrics.some((m) => m.offset_window !== undefined)) {
              return yield* Either.left(
                new CompileError({ message: `metric ${derived.name} compares periods: give a time grain or a period` })
              )
            }
            const expression = yield* Either.mapLeft(
              MetricExpression.parse(derived.expr),
              (message) => new CompileError({ message: `metric ${derived.name}: ${message}` })
            )
            const units = [...new Set([...values.values()].map((v) => v.unit))]
            return {
              expr: filled(
                MetricExpression.render(expression, (name) => values.get(name)!.expr, w.dialect.divide),
                derived.fill_nulls_with
              ),
              format: derived.format,
              unit: derived.unit ?? (units.length === 1 ? units[0] : undefined)
            }
          }
          case "cumulative": {
            yield* fixed("cumulative")
            if (grain === undefined || periods !== undefined) {
              return yield* Either.left(
                new CompileError({
                  message: `metric ${derived.name} accumulates over time: read it by a time grain over one period`
                })
              )
            }
            const measure = measureNamed(model, derived.measure)
            if (
              measure.non_additive_dimension !== undefined || measure.agg === "median" || measure.agg === "percentile"
            ) {
              return yield* Either.left(
                new CompileError({
                  message: `metric ${derived.name} cannot accumulate ${measure.name}: a ${
                    measure.non_additive_dimension === undefined ? measure.agg : "semi-additive measure"
                  } does not add up over time`
                })
              )
            }
            const alias = yield* addMeasure(measure, undefined, { _tag: "Cumulative", metric: derived })
            return {
              expr: filled(w.q(alias), derived.fill_nulls_with),
              format: derived.format ?? measure.format,
              unit: measure.unit
            }
          }
          case "conversion": {
            yield* fixed("a conversion")
            const base = measureNamed(model, derived.base_measure)
            const conversion = measureNamed(model, derived.conversion_measure)
            const converted = w.q(
              yield* addMeasure(base, undefined, { _tag: "Converted", metric: derived, conversion })
            )
            if (derived.calculation === "conversions") return { expr: converted, format: derived.format ?? base.format }
            const all = w.q(yield* addMeasure(base))
            return { expr: w.dialect.divide(converted, all), format: derived.format ?? "percent" }
          }
        }
      })
    const outputs: Array<Output & { readonly name: string }> = []
    for (const metric of metrics) {
      const value = yield* valueOf(metric, undefined, [])
      outputs.push({ name: metric.kind === "measure" ? metric.measure.name : metric.metric.name, ...value })
    }

    if (listing) {
      const tables = dimensions.map((d) => d.field.table.name)
      const used = [...tables, ...filters.map((f) => f.field.table.name), ...segments.map((f) => f.table.name)]
      const root = tables.find((table) => {
        const reach = reachable(model, table)
        return used.every((t) => reach.has(t))
      }) ?? tables[0]!
      groups.push({ table: root, time: undefined, shift: undefined, special: undefined, measures: [] })
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
      const { column, columns } = projected(w)
      const special = group.special
      // Each period of a time spine reads the rows of its window (`semanticGroups.ts`).
      const spined = special?._tag === "Cumulative" || special?._tag === "GrainStart"
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
        const at = local
        const within = (p: { readonly start: string; readonly end: string }) =>
          `${at} >= ${w.bind(p.start)} AND ${at} < ${w.bind(p.end)}`
        if (spined) {
          // Each period of the spine reads the rows of its window: all of them up to its end. An
          // input read at a period's start reads them from the start of the first period's one.
          select.push(`${local} AS ${w.q("t__")}`)
          if (time?.end !== undefined) where.push(`${local} < ${w.bind(time.end)}`)
          if (special?._tag === "GrainStart" && time?.start !== undefined) {
            const first = Sql.periodStart(
              w.dialect,
              yield* Sql.bucketsOf(model, special.grain),
              w.dialect.day(w.bind(time.start))
            )
            where.push(`${local} >= ${Sql.periodStart(w.dialect, buckets!, first)}`)
          }
        } else {
          if (grain !== undefined) {
            const truncated = Sql.periodStart(w.dialect, buckets!, local)
            select.push(`${truncated} AS ${w.q(timeAlias!)}`)
            groupBy.push(truncated)
          } else if (periods !== undefined) {
            select.push(
              `CASE ${periods.map((p) => `WHEN ${within(p)} THEN ${w.bind(p.start)}`).join(" ")} END AS ${
                w.q(timeAlias!)
              }`
            )
            // By position: the expression's placeholders differ from the select's, so it is not the same text.
            groupBy.push(String(select.length))
          }
          if (time?.start !== undefined) where.push(`${local} >= ${w.bind(time.start)}`)
          if (time?.end !== undefined) where.push(`${local} < ${w.bind(time.end)}`)
          if (periods !== undefined) where.push(`(${periods.map(within).join(" OR ")})`)
        }
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
      if (having !== undefined) {
        yield* need(having.entity.name, `the ${words(having.entity.name)} that have ${words(having.field.name)}`)
        const key = column(having.entity.name, having.key, `k__${having.key}`)
        for (const value of having.values) where.push(`${key} IN (${semiJoin(w, model, having, value)})`)
      }
      const measureConditions = (measure: ResolvedMeasure) =>
        Either.gen(function*() {
          const conditions: Array<string> = []
          for (const name of measure.filters ?? []) {
            const found = filterNamed(model, name)!
            yield* need(found.table.name, `filter ${name}`)
            conditions.push(column(found.table.name, found.filter.expr, `f__${found.filter.name}`))
          }
          return conditions
        })
      if (special === undefined) {
        for (const { measure, alias } of group.measures) {
          const value = measure.expr === undefined ? undefined : column(group.table, measure.expr, `v__${measure.name}`)
          const conditions = yield* measureConditions(measure)
          aggregates.set(
            alias,
            aggregate(w.dialect, measure, value, conditions.length === 0 ? undefined : conditions.join(" AND "))
          )
        }
        // Every alias of the stacked result, in one order: dimensions, then all measures (null where
        // another group computes it).
        const list = [
          ...select,
          ...allAliases.map((alias) => `${aggregates.get(alias) ?? w.dialect.absent} AS ${w.q(alias)}`)
        ]
        const from = joined(w, model, reach, needed, column, columns)
        branches.push(
          `SELECT ${list.join(", ")}\n  FROM ${from}${where.length === 0 ? "" : `\n  WHERE ${where.join(" AND ")}`}${
            groupBy.length === 0 ? "" : `\n  GROUP BY ${groupBy.join(", ")}`
          }`
        )
        continue
      }
      // One measure, read in two steps: its rows (filtered by its own filters too), then aggregated.
      const { measure, alias } = group.measures[0]!
      where.push(...(yield* measureConditions(measure)))
      branches.push(
        yield* branch({
          w,
          model,
          zone,
          table: group.table,
          measure,
          alias,
          special,
          select,
          where,
          column,
          need,
          from: () => joined(w, model, reach, needed, column, columns),
          // The aliases the rows are grouped by; a spine's periods are its own.
          grouped: spined ? dimensions.map((d) => d.alias) : dimensionAliases,
          allAliases,
          timeAlias,
          buckets,
          time
        })
      )
    }

    // Stack the groups and fold them on the dimensions: each dimension tuple has one row per group.
    const stacked = branches.length === 1
      ? branches[0]!
      : `SELECT ${
        [
          ...dimensionAliases.map((a) => w.q(a)),
          ...allAliases.map((a) => `MAX(${w.q(a)}) AS ${w.q(a)}`)
        ].join(", ")
      }\n  FROM (\n${branches.join("\n  UNION ALL\n")}\n  ) AS ${w.q("stacked")}${
        dimensionAliases.length === 0 ? "" : `\n  GROUP BY ${dimensionAliases.map((a) => w.q(a)).join(", ")}`
      }`
    // A measure joined to the time spine: every period of the range has a row, for each combination
    // of the other dimensions that has any.
    const spined = grain !== undefined && periods === undefined &&
      groups.some((g) => g.measures.some(({ measure }) => measure.join_to_timespine === true))
    const inner = !spined ? stacked : (() => {
      const q = (name: string) => `${w.q("q")}.${w.q(name)}`
      const bound = (side: "start" | "end") =>
        time?.[side] === undefined ? undefined : w.dialect.day(w.bind(time[side]!))
      const start = bound("start")
      const end = bound("end")
      const lo = start === undefined ? `MIN(${q(timeAlias!)})` : Sql.periodStart(w.dialect, buckets!, start)
      const hi = end === undefined ? `MAX(${q(timeAlias!)})` : w.dialect.shift(end, -1, "day")
      const bounds = start !== undefined && end !== undefined
        ? `(SELECT ${lo} AS ${w.q("lo")}, ${hi} AS ${w.q("hi")})`
        : `(SELECT ${lo} AS ${w.q("lo")}, ${hi} AS ${w.q("hi")} FROM (\n${stacked}\n  ) AS ${w.q("q")})`
      const others = dimensions.map((d) => d.alias)
      const g = (name: string) => `${w.q("g")}.${w.q(name)}`
      const bucket = `${w.q("s")}.${w.q("bucket")}`
      return `SELECT ${
        [
          ...others.map((a) => `${g(a)} AS ${w.q(a)}`),
          `${bucket} AS ${w.q(timeAlias!)}`,
          ...allAliases.map((a) => `${q(a)} AS ${w.q(a)}`)
        ].join(", ")
      }\n  FROM ${w.dialect.spine(bounds, grain!)} AS ${w.q("s")}${
        others.length === 0
          ? ""
          : `\n  CROSS JOIN (SELECT DISTINCT ${others.map((a) => w.q(a)).join(", ")} FROM (\n${stacked}\n  ) AS ${
            w.q("d")
          }) AS ${w.q("g")}`
      }\n  LEFT JOIN (\n${stacked}\n  ) AS ${w.q("q")} ON ${
        [`${q(timeAlias!)} = ${bucket}`, ...others.map((a) => w.dialect.sameValue(q(a), g(a)))].join(" AND ")
      }`
    })()

    const outputNames = [...dimensionAliases, ...outputs.map((o) => o.name)]
    const order = query.order ?? (timeAlias !== undefined
      ? [{ by: "time", direction: "asc" as const }]
      : dimensions.length === 0 || outputs.length === 0
      ? []
      : [{ by: outputs[0]!.name, direction: "desc" as const }])
    const orderSql: Array<string> = []
    // What each key of `orderSql` orders by.
    const orderedBy: Array<string> = []
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
      orderedBy.push(target)
    }
    // Ties (and a missing order) still give one order: every dimension after the requested keys.
    for (const alias of dimensionAliases) {
      if (!order.some((o) => o.by === alias || (o.by === "time" && alias === timeAlias))) {
        orderSql.push(`${w.q(alias)} ASC`)
        orderedBy.push(alias)
      }
    }
    const limit = query.limit ?? SemanticQuery.maxLimit
    const selected = `SELECT ${
      [
        ...dimensionAliases.map((a) => w.q(a)),
        ...outputs.map((o) => `${o.expr} AS ${w.q(o.name)}`)
      ].join(", ")
    }\nFROM (\n  ${inner}\n) AS ${w.q("q")}`
    let sql: string
    if (query.limit_per === undefined) {
      sql = `${selected}${orderSql.length === 0 ? "" : `\nORDER BY ${orderSql.join(", ")}`}\nLIMIT ${limit}`
    } else {
      // A ranking within groups: each row numbered in the query's order within its group, over the
      // computed columns (a share is still of all rows), and the first of each group kept.
      const per: Array<string> = []
      for (const name of query.limit_per.dimensions) {
        const alias = name === "time" && timeAlias !== undefined
          ? timeAlias
          : dimensions.find((d) => same(d.alias, name) || same(d.field.name, name))?.alias
        if (alias === undefined) {
          return yield* Either.left(
            new CompileError({ message: `cannot rank within ${name}: it is not one of ${dimensionAliases.join(", ")}` })
          )
        }
        if (!per.includes(alias)) per.push(alias)
      }
      if (per.length >= dimensionAliases.length || outputs.length === 0) {
        return yield* Either.left(
          new CompileError({
            message: "a ranking within groups needs a metric, and a dimension to rank besides the groups' own"
          })
        )
      }
      const within = orderSql.filter((_, i) => !per.includes(orderedBy[i]!))
      const names = [...dimensionAliases, ...outputs.map((o) => o.name)].map((a) => w.q(a)).join(", ")
      const rank = w.q("rank__")
      sql = `SELECT ${names}\nFROM (\n  SELECT ${names}, ROW_NUMBER() OVER (PARTITION BY ${
        per.map((a) => w.q(a)).join(", ")
      } ORDER BY ${within.join(", ")}) AS ${rank}\n  FROM (\n  ${selected}\n  ) AS ${w.q("o")}\n) AS ${
        w.q("r")
      }\nWHERE ${rank} <= ${query.limit_per.limit}\nORDER BY ${
        [...per.map((a) => `${w.q(a)} ASC`), ...within].join(", ")
      }\nLIMIT ${limit}`
    }

    return {
      sql,
      params: w.params,
      columns: [
        ...dimensions.map((d): OutputColumn => ({
          name: d.alias,
          kind: d.field.kind === "time" ? "time" : "dimension"
        })),
        ...(timeAlias === undefined ? [] : [{ name: timeAlias, kind: "time" as const }]),
        ...outputs.map((o): OutputColumn => ({ name: o.name, kind: "metric", format: o.format, unit: o.unit }))
      ],
      reading: SemanticReading.ofQuery(
        model,
        query,
        metrics,
        dimensions.map((d) => d.field),
        namedTime,
        filters,
        segments,
        order,
        having
      )
    }
  })

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
  // A semantic query (a dbt saved query) is compiled like any other.
  if (query.query !== undefined) return compile(model, query.query, dialectName, options)
  if (query.sql === undefined) return Either.left(new CompileError({ message: "it has neither sql nor a query" }))
  const text = query.sql
  // The model's format check refuses it first; a model read any other way is held to it here.
  const notOne = SqlStatement.notOneQuery(text)
  if (notOne !== undefined) return Either.left(new CompileError({ message: `not one SELECT or WITH query: ${notOne}` }))
  const w = new Writer(dialect(dialectName), options.rowFilters ?? true)
  const used = [...new Set([...text.matchAll(/\b__([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))]
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
    text.trim().replace(/;\s*$/, ""),
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
