/**
 * How the compiler reads a group's rows where a measure's kind needs more than one aggregate over
 * them: a semi-additive measure (only each period's last or first day), a percentile on a dialect
 * without the aggregate (the rows numbered in order), a cumulative metric (each period of a
 * generated time spine reads the rows of its window), an input read at the start of a coarser
 * period (the same, its window that period's first) and a conversion metric (the base rows
 * followed by a conversion of their entity). Each is one measure read in two steps: its rows, then
 * aggregated. Also the aggregates themselves, and the offsets that shift a time axis.
 *
 * @internal
 */
import * as Either from "effect/Either"
import type * as SemanticModel from "../SemanticModel.js"
import type { Grain, ResolvedMeasure, SemanticModel as Model } from "../SemanticModel.js"
import type * as SemanticQuery from "../SemanticQuery.js"
import {
  bucketsOf,
  CompileError,
  type Dialect,
  type FieldRef,
  fieldsOf,
  filterNamed,
  type Periods,
  periodStart,
  projection,
  resolveField,
  tableNamed,
  type Writer
} from "./semanticSql.js"

/**
 * How a group's rows are read before they are aggregated, where not as they are. A group read so
 * holds one measure, whose filters then limit the group's rows themselves.
 */
export type Special =
  /** A semi-additive measure: only the rows at each period's last (or first) day. */
  | {
    readonly _tag: "NonAdditive"
    readonly time: FieldRef
    readonly choice: "max" | "min"
    readonly groupings: ReadonlyArray<string>
  }
  /** A percentile where the dialect has no aggregate for one: the rows numbered in order. */
  | { readonly _tag: "Ranked"; readonly fraction: number; readonly discrete: boolean }
  /** A cumulative metric: each period of the time spine reads the rows of its window. */
  | { readonly _tag: "Cumulative"; readonly metric: SemanticModel.CumulativeMetric }
  /**
   * A derived metric's input with an `offset_to_grain`: each period of the time spine reads the rows
   * of the query's period in which its `grain` period starts.
   */
  | { readonly _tag: "GrainStart"; readonly grain: SemanticQuery.GrainName }
  /** A conversion metric's conversions: the base rows followed by a conversion of their entity. */
  | {
    readonly _tag: "Converted"
    readonly metric: SemanticModel.ConversionMetric
    readonly conversion: ResolvedMeasure
  }

export type Shift = { readonly count: number; readonly unit: Grain }

export const offsetOf = (offset: string): Shift => {
  const [count, unit] = offset.split(" ") as [string, string]
  return { count: Number(count), unit: unit.replace(/s$/, "") as Grain }
}

/** Two offsets as one, where they are in one unit (a derived metric's input of a period over period). */
export const addShifts = (a: Shift | undefined, b: Shift | undefined): Shift | undefined | "apart" =>
  a === undefined ? b : b === undefined ? a : a.unit === b.unit ? { count: a.count + b.count, unit: a.unit } : "apart"

export const aggregate = (
  dialect: Dialect,
  measure: ResolvedMeasure,
  value: string | undefined,
  condition: string | undefined
) => {
  const guarded = (expr: string) => condition === undefined ? expr : `CASE WHEN ${condition} THEN ${expr} END`
  switch (measure.agg) {
    case "count":
      return value === undefined
        ? condition === undefined ? "COUNT(*)" : `COUNT(${guarded("1")})`
        : `COUNT(${guarded(value)})`
    case "count_distinct":
      return `COUNT(DISTINCT ${guarded(value!)})`
    case "sum":
      return `SUM(${guarded(value!)})`
    case "sum_boolean":
      return `SUM(${guarded(`CASE WHEN ${value!} THEN 1 ELSE 0 END`)})`
    case "avg":
      return `AVG(${guarded(value!)})`
    case "min":
      return `MIN(${guarded(value!)})`
    case "max":
      return `MAX(${guarded(value!)})`
    case "median":
    case "percentile":
      // A dialect without the aggregate reads a percentile as a `Ranked` group instead.
      return dialect.percentile!(
        fractionOf(measure),
        measure.agg_params?.use_discrete_percentile === true,
        guarded(value!)
      )
  }
}

const fractionOf = (measure: ResolvedMeasure) => measure.agg === "median" ? 0.5 : measure.agg_params?.percentile ?? 0.5

export const timeOf = (model: Model, measure: ResolvedMeasure, named: FieldRef | undefined): FieldRef | undefined => {
  if (named !== undefined) return named
  if (measure.time_dimension !== undefined) return Either.getOrUndefined(resolveField(model, measure.time_dimension))
  const table = tableNamed(model, measure.table)
  const first = table.time_dimensions?.[0]?.name
  return first === undefined ? undefined : fieldsOf(table).find((f) => f.kind === "time" && f.name === first)
}

/** How a measure's rows are read before they are aggregated, where its kind needs it. */
export const specialOf = (
  model: Model,
  measure: ResolvedMeasure,
  dialect: Dialect
): Either.Either<Special | undefined, CompileError> => {
  const nonAdditive = measure.non_additive_dimension
  const percentile = measure.agg === "median" || measure.agg === "percentile"
  if (nonAdditive !== undefined) {
    if (percentile) {
      return Either.left(
        new CompileError({ message: `measure ${measure.name}: a ${measure.agg} cannot also be semi-additive` })
      )
    }
    return Either.flatMap(resolveField(model, nonAdditive.name), (time) =>
      time.kind !== "time"
        ? Either.left(
          new CompileError({ message: `measure ${measure.name}: ${nonAdditive.name} is not a time dimension` })
        )
        : Either.right({
          _tag: "NonAdditive",
          time,
          choice: nonAdditive.window_choice ?? "max",
          groupings: nonAdditive.window_groupings ?? []
        }))
  }
  return Either.right(
    percentile && dialect.percentile === undefined
      ? {
        _tag: "Ranked",
        fraction: fractionOf(measure),
        discrete: measure.agg_params?.use_discrete_percentile === true
      }
      : undefined
  )
}

/** What a group read in two steps is read with: the compiler's writer, the rows' parts so far, the query. */
export interface BranchContext {
  readonly w: Writer
  readonly model: Model
  readonly zone: string
  readonly table: string
  readonly measure: ResolvedMeasure
  readonly alias: string
  readonly special: Special
  /** The rows' columns (`value AS alias`) and conditions so far. */
  readonly select: Array<string>
  readonly where: Array<string>
  readonly column: (table: string, expr: string, alias: string) => string
  readonly need: (table: string, what: string) => Either.Either<void, CompileError>
  /** The FROM of the rows: the group's table joined to what they read. */
  readonly from: () => string
  /** The aliases the rows are grouped by. */
  readonly grouped: ReadonlyArray<string>
  /** Every measure's alias of the stacked result, in order. */
  readonly allAliases: ReadonlyArray<string>
  readonly timeAlias: string | undefined
  /** The periods the query groups by. */
  readonly buckets: Periods | undefined
  readonly time: SemanticQuery.TimeSelection | undefined
}

/** The group's subquery, with a column for every alias of the stack (null where another computes it). */
export const branch = (context: BranchContext): Either.Either<string, CompileError> =>
  Either.gen(function*() {
    const {
      alias,
      allAliases,
      column,
      buckets,
      from,
      grouped,
      measure,
      model,
      need,
      select,
      special,
      table,
      time,
      timeAlias,
      w,
      where,
      zone
    } = context
    const value = measure.expr === undefined ? "1" : column(table, measure.expr, `v__${measure.name}`)
    select.push(`${value} AS ${w.q("v__")}`)
    const r = (name: string) => `${w.q("r")}.${w.q(name)}`
    let rows: () => string = () => ""
    let outer: { readonly from: string; readonly where?: string; readonly keys: ReadonlyArray<string> } = {
      from: "",
      keys: grouped.map(r)
    }
    let aggregated: string | undefined = undefined
    // Each period of a generated time spine reads the rows of its window, from each of `from` up to
    // `upTo`. The spine's periods are the query's, or those the rows span.
    const bucket = `${w.q("s")}.${w.q("bucket")}`
    const spined = (upTo: string, from: ReadonlyArray<string>) => {
      const bound = (side: "start" | "end") =>
        time?.[side] === undefined ? undefined : w.dialect.day(w.bind(time[side]!))
      const start = bound("start")
      const end = bound("end")
      const lo = periodStart(w.dialect, buckets!, start ?? `MIN(${r("t__")})`)
      const hi = end === undefined ? `MAX(${r("t__")})` : w.dialect.shift(end, -1, "day")
      const bounds = start !== undefined && end !== undefined
        ? `(SELECT ${lo} AS ${w.q("lo")}, ${hi} AS ${w.q("hi")})`
        : `(SELECT ${lo} AS ${w.q("lo")}, ${hi} AS ${w.q("hi")} FROM ${inner()} AS ${w.q("r")})`
      const spine = w.dialect.spine(bounds, buckets!.grain)
      rows = () =>
        `${spine} AS ${w.q("s")}\n  JOIN ${inner()} AS ${w.q("r")} ON ${
          [`${r("t__")} < ${upTo}`, ...from.map((f) => `${r("t__")} >= ${f}`)].join(" AND ")
        }`
      outer = { from: "spine", keys: [...grouped.map(r), bucket] }
    }
    switch (special._tag) {
      case "NonAdditive": {
        // Each period's (and each entity's) last or first day, as the rows' own column.
        yield* need(special.time.table.name, special.time.name)
        const day = w.dialect.truncate(
          "day",
          w.dialect.local(
            column(special.time.table.name, special.time.expr, `n__${special.time.name}`),
            special.time.isDate,
            zone
          )
        )
        select.push(`${day} AS ${w.q("n__")}`)
        special.groupings.forEach((expr, i) => select.push(`${column(table, expr, `g__${i}`)} AS ${w.q(`g__${i}`)}`))
        const partition = [...grouped, ...special.groupings.map((_, i) => `g__${i}`)].map(r)
        // Ranked rather than compared with MAX() OVER: MariaDB computes a MIN or MAX window again
        // for every row of its partition (13 s for the DEMO's 30,000 order lines), a rank with one sort.
        const latest = w.dialect.orderKey(r("n__"), special.choice === "min" ? "asc" : "desc")
        rows = () =>
          `(SELECT ${w.q("r")}.*, RANK() OVER (${
            partition.length === 0 ? "" : `PARTITION BY ${partition.join(", ")} `
          }ORDER BY ${latest}) AS ${w.q("w__")} FROM ${inner()} AS ${w.q("r")})`
        outer = { from: "", where: `${r("w__")} = 1 AND ${r("n__")} IS NOT NULL`, keys: grouped.map(r) }
        break
      }
      case "Ranked": {
        // Each group's values numbered in order, for the dialect that has no percentile aggregate.
        where.push(`${value} IS NOT NULL`)
        const partition = grouped.length === 0 ? "" : `PARTITION BY ${grouped.map(r).join(", ")}`
        rows = () =>
          `(SELECT ${w.q("r")}.*, ROW_NUMBER() OVER (${partition} ORDER BY ${r("v__")}) AS ${
            w.q("n__")
          }, COUNT(*) OVER (${partition}) AS ${w.q("c__")} FROM ${inner()} AS ${w.q("r")})`
        const p = special.fraction
        const at = (position: string) => `MIN(CASE WHEN ${r("n__")} = ${position} THEN ${r("v__")} END)`
        if (special.discrete) {
          aggregated = at(`GREATEST(CEIL(${p} * ${r("c__")}), 1)`)
        } else {
          const position = `(1 + ${p} * (${r("c__")} - 1))`
          aggregated = `(${at(`FLOOR(${position})`)} + (MAX(${position}) - MAX(FLOOR(${position}))) * (${
            at(`CEIL(${position})`)
          } - ${at(`FLOOR(${position})`)}))`
        }
        break
      }
      case "Converted": {
        const metric = special.metric
        const conversion = special.conversion
        const baseTime = timeOf(model, measure, undefined)
        const conversionTime = timeOf(model, conversion, undefined)
        if (baseTime === undefined || conversionTime?.table.name !== conversion.table) {
          return yield* Either.left(
            new CompileError({
              message:
                `metric ${metric.name} needs a time dimension of ${measure.name} and one of ${conversion.name}'s own table`
            })
          )
        }
        const ownFilters = (conversion.filters ?? []).map((name) => filterNamed(model, name)!)
        if (ownFilters.some((f) => f.table.name !== conversion.table)) {
          return yield* Either.left(
            new CompileError({
              message:
                `metric ${metric.name}: ${conversion.name}'s filters must be on its own table to find conversions`
            })
          )
        }
        yield* need(baseTime.table.name, baseTime.name)
        const at = w.dialect.local(
          column(baseTime.table.name, baseTime.expr, `t__${baseTime.name}`),
          baseTime.isDate,
          zone
        )
        const entity = column(table, metric.entity, "e__")
        const c = (name: string) => `${w.q("c")}.${w.q(name)}`
        const later = w.dialect.local(c("t"), conversionTime.isDate, zone)
        const found = projection(w, model, tableNamed(model, conversion.table), [
          [metric.conversion_entity ?? metric.entity, "e"],
          [conversionTime.expr, "t"],
          ...ownFilters.map((f, i) => [f.filter.expr, `f${i}`] as const),
          ...(metric.constant_properties ?? []).map((p, i) => [p.conversion_property, `p${i}`] as const)
        ])
        const matched = [
          `${c("e")} = ${entity}`,
          `${later} >= ${at}`,
          ...(metric.window === undefined
            ? []
            : [`${later} < ${w.dialect.shift(at, offsetOf(metric.window).count, offsetOf(metric.window).unit)}`]),
          ...ownFilters.map((_, i) => c(`f${i}`)),
          ...(metric.constant_properties ?? []).map((p, i) =>
            `${c(`p${i}`)} = ${column(table, p.base_property, `p__${i}`)}`
          )
        ]
        select.push(
          `CASE WHEN EXISTS (SELECT 1 FROM ${found} AS ${w.q("c")} WHERE ${
            matched.join(" AND ")
          }) THEN 1 ELSE 0 END AS ${w.q("x__")}`
        )
        aggregated = aggregate(w.dialect, measure, r("v__"), `${r("x__")} = 1`)
        break
      }
      case "Cumulative": {
        const metric = special.metric
        const upTo = metric.period_agg === "first"
          ? w.dialect.shift(bucket, 1, "day")
          : w.dialect.shift(bucket, 1, buckets!.grain)
        const from = metric.window !== undefined
          ? [w.dialect.shift(upTo, -offsetOf(metric.window).count, offsetOf(metric.window).unit)]
          : metric.grain_to_date !== undefined
          ? [periodStart(w.dialect, yield* bucketsOf(model, metric.grain_to_date), bucket)]
          : []
        spined(upTo, from)
        break
      }
      case "GrainStart": {
        // The query's period that holds the first day of the bucket's `grain` period.
        const first = periodStart(
          w.dialect,
          buckets!,
          periodStart(w.dialect, yield* bucketsOf(model, special.grain), bucket)
        )
        spined(w.dialect.shift(first, 1, buckets!.grain), [first])
        break
      }
    }
    aggregated ??= aggregate(w.dialect, measure, r("v__"), undefined)
    // The rows: written once for each place that reads them, each with placeholders of its own.
    function inner() {
      return `(SELECT ${select.join(", ")}\n  FROM ${from()}${
        where.length === 0 ? "" : `\n  WHERE ${where.join(" AND ")}`
      })`
    }
    const source = outer.from === "spine"
      ? rows()
      : special._tag === "Converted"
      ? `${inner()} AS ${w.q("r")}`
      : `${rows()} AS ${w.q("r")}`
    const keys = outer.keys
    const list = [
      ...grouped.map((a) => `${r(a)} AS ${w.q(a)}`),
      ...(outer.from === "spine" ? [`${bucket} AS ${w.q(timeAlias!)}`] : []),
      ...allAliases.map((a) => `${a === alias ? aggregated : w.dialect.absent} AS ${w.q(a)}`)
    ]
    return (
      `SELECT ${list.join(", ")}\n  FROM ${source}${outer.where === undefined ? "" : `\n  WHERE ${outer.where}`}${
        keys.length === 0 ? "" : `\n  GROUP BY ${keys.join(", ")}`
      }`
    )
  })
