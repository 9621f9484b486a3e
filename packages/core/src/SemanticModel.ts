/**
 * A semantic model: what an organization's words mean over one connector's tables. It names the
 * logical tables, their dimensions, time dimensions, facts, measures and named filters, the
 * relationships between tables, derived metrics, verified queries and instructions for the model.
 *
 * The format is the Snowflake Cortex Analyst semantic model YAML (its key names, so a Snowflake
 * file loads as is: `tables`, `base_table`, `primary_key.columns`, `dimensions`, `time_dimensions`,
 * `facts`, `metrics` with an aggregate `expr`, `filters`, `relationships` with
 * `relationship_columns`, `verified_queries`, `custom_instructions`), with keys of our own where
 * Snowflake's leave the compiler guessing: structured `measures` (`agg`, `expr`, `filters`,
 * `format`), the `grains` of a time dimension, `row_filter`, model-level derived `metrics`
 * (`ratio`, `share`, `period_over_period`), `parameters` of verified queries, `time_zone`, and
 * `connector` / `connector_type` naming what the model describes.
 *
 * A model lives in the Context Library as `semantic/<name>.yaml`. `parse` reads one with messages
 * naming the file and line; `validate` checks it holds together (unique names, every reference
 * resolves) without a database. The compiler (`SemanticCompiler`) reads only validated models.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Yaml from "yaml"
import * as MetricExpression from "./internal/metricExpression.js"
import * as SqlStatement from "./internal/sqlStatement.js"
import * as YamlFile from "./internal/yamlFile.js"
import * as SemanticQuery from "./SemanticQuery.js"

// ---------------------------------------------------------------------------------------------
// The format
// ---------------------------------------------------------------------------------------------

const Name = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]*$/, {
    message: () => "a name is letters, digits and underscores, not starting with a digit"
  })
)
const Synonyms = Schema.optional(Schema.Array(Schema.String))
const Description = Schema.optional(Schema.String)
const Scalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

/**
 * A value a dimension takes, with the words people use for it ("APAC" for "Asia Pacific").
 *
 * @since 0.1.0
 * @category schemas
 */
export const DimensionValue = Schema.Struct({
  value: Scalar,
  synonyms: Synonyms,
  description: Description
})
export type DimensionValue = typeof DimensionValue.Type

// What dimensions and time dimensions both have.
const fieldFields = {
  name: Name,
  /** SQL over the base table's columns and facts; the name's column when absent. */
  expr: Schema.optional(Schema.String),
  data_type: Schema.optional(Schema.String),
  description: Description,
  synonyms: Synonyms,
  unique: Schema.optional(Schema.Boolean),
  /** Some of the values (all of them when `is_enum`). */
  sample_values: Schema.optional(Schema.Array(Scalar))
}

/**
 * A column, or an expression over the table's columns, to group and filter by.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Dimension = Schema.Struct({
  ...fieldFields,
  is_enum: Schema.optional(Schema.Boolean),
  /** Listed values with their synonyms: the complete set, like `is_enum`. */
  values: Schema.optional(Schema.Array(DimensionValue))
})
export type Dimension = typeof Dimension.Type

/**
 * The grains a time dimension can be read at (a query's word, read by models too).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Grain = SemanticQuery.Grain
export type Grain = SemanticQuery.Grain

/**
 * Every grain, finest first.
 *
 * @since 0.1.0
 * @category constants
 */
export const grains: ReadonlyArray<Grain> = Grain.literals

/**
 * A date or timestamp to group and filter by. A `data_type` of `DATE` is read as a calendar day;
 * anything else as a point in time, read in the model's time zone.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TimeDimension = Schema.Struct({
  ...fieldFields,
  /** The grains it may be grouped by; all of them when absent. */
  grains: Schema.optional(Schema.Array(Grain))
})
export type TimeDimension = typeof TimeDimension.Type

/**
 * A named row-level expression that measures aggregate (Snowflake's `facts`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Fact = Schema.Struct({
  name: Name,
  expr: Schema.String,
  data_type: Schema.optional(Schema.String),
  description: Description,
  synonyms: Synonyms,
  sample_values: Schema.optional(Schema.Array(Scalar))
})
export type Fact = typeof Fact.Type

/**
 * How a measure aggregates.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Aggregation = Schema.Literal(
  "sum",
  "count",
  "count_distinct",
  "avg",
  "min",
  "max",
  "median",
  "percentile",
  "sum_boolean"
)
export type Aggregation = typeof Aggregation.Type

/**
 * How a number is shown (a query's result column says it too).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Format = SemanticQuery.Format
export type Format = SemanticQuery.Format

/**
 * A number as a measure of this format is written in prose (a report, a finding): a percent from
 * its fraction, an integer rounded, a currency with cents; thousands separated.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatValue = (n: number, format: Format | undefined): string =>
  format === "percent"
    ? `${(n * 100).toFixed(2)}%`
    : format === "integer"
    ? Math.round(n).toLocaleString("en-US")
    : n.toLocaleString("en-US", {
      minimumFractionDigits: format === "currency" ? 2 : 0,
      maximumFractionDigits: 2
    })

/**
 * The parameters of a `percentile` (MetricFlow's `agg_params`): which one (0.9 is the 90th), and
 * whether it is a value of the rows (discrete) or interpolated between the two nearest (continuous,
 * the default). A `median` is the continuous 0.5.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AggregationParameters = Schema.Struct({
  percentile: Schema.optional(Schema.Number.pipe(Schema.between(0, 1, {
    message: () => "a percentile is between 0 and 1 (0.9 is the 90th)"
  }))),
  use_discrete_percentile: Schema.optional(Schema.Boolean)
})
export type AggregationParameters = typeof AggregationParameters.Type

/**
 * A semi-additive measure's time (MetricFlow's `non_additive_dimension`): a balance, a headcount or
 * a stock level adds up across accounts but not across days, so each period reads only the rows at
 * its last (`max`, the default) or first (`min`) day; with `window_groupings`, each of those
 * entities' own last or first day (each account's latest balance, then summed).
 *
 * @since 0.1.0
 * @category schemas
 */
export const NonAdditiveDimension = Schema.Struct({
  /** A time dimension of the measure's table, or `table.name` of one it reaches. */
  name: Schema.String,
  window_choice: Schema.optional(Schema.Literal("max", "min")),
  /** Columns (or SQL over the measure's table) naming the entities that each keep their own day. */
  window_groupings: Schema.optional(Schema.Array(Schema.String))
})
export type NonAdditiveDimension = typeof NonAdditiveDimension.Type

/**
 * An aggregation over an expression of its table.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Measure = Schema.Struct({
  name: Name,
  agg: Aggregation,
  /** SQL over the table's columns and facts; every row (`count`) when absent. */
  expr: Schema.optional(Schema.String),
  agg_params: Schema.optional(AggregationParameters),
  non_additive_dimension: Schema.optional(NonAdditiveDimension),
  /** The value a period or group with no rows reads instead of nothing (MetricFlow's `fill_nulls_with`). */
  fill_nulls_with: Schema.optional(Schema.Number),
  /**
   * Read by a time grain, every period of the range has a row, those with no rows included
   * (MetricFlow's `join_to_timespine`), each for every combination of the other dimensions read.
   */
  join_to_timespine: Schema.optional(Schema.Boolean),
  /** Named filters (of this table or one it reaches) that a row must pass to count. */
  filters: Schema.optional(Schema.Array(Name)),
  /**
   * The time dimension it is read over by default: its table's first when absent; `orders.order_date`
   * names one of a table it reaches.
   */
  time_dimension: Schema.optional(Schema.String),
  /**
   * The measure that also counts what this one's filters leave out (`orders` → `all_orders`): a
   * breakdown or a filter by a dimension those filters constrain (orders by status) reads it
   * instead, so the groups they remove do not silently vanish.
   */
  unfiltered: Schema.optional(Name),
  /**
   * The dimensions an investigation breaks this metric's change down by, in order (the model's
   * `drivers` when absent): region before category reads "Europe, mostly Laptops".
   */
  drivers: Schema.optional(Schema.Array(Schema.String)),
  format: Schema.optional(Format),
  /** The currency or unit (`USD`, `units`). */
  unit: Schema.optional(Schema.String),
  description: Description,
  synonyms: Synonyms
})
export type Measure = typeof Measure.Type

/**
 * A Snowflake table metric: an aggregate expression (`SUM(amount)`), read into a `Measure`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TableMetric = Schema.Struct({
  name: Name,
  expr: Schema.String,
  description: Description,
  synonyms: Synonyms
})
export type TableMetric = typeof TableMetric.Type

/**
 * A named predicate over a table (a segment: "completed orders").
 *
 * @since 0.1.0
 * @category schemas
 */
export const Filter = Schema.Struct({
  name: Name,
  expr: Schema.String,
  description: Description,
  synonyms: Synonyms
})
export type Filter = typeof Filter.Type

/**
 * Where a logical table's rows come from.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BaseTable = Schema.Struct({
  database: Schema.optional(Schema.String),
  schema: Schema.optional(Schema.String),
  table: Schema.String
})
export type BaseTable = typeof BaseTable.Type

/**
 * A logical table.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Table = Schema.Struct({
  name: Name,
  description: Description,
  synonyms: Synonyms,
  base_table: BaseTable,
  primary_key: Schema.optional(Schema.Struct({ columns: Schema.Array(Schema.String) })),
  /**
   * A predicate every read of the table passes, whoever asks: row-level security. It may name the
   * caller's client attributes as `_svc.client_attributes_json.<field>`, bound as parameters.
   */
  row_filter: Schema.optional(Schema.String),
  dimensions: Schema.optional(Schema.Array(Dimension)),
  time_dimensions: Schema.optional(Schema.Array(TimeDimension)),
  facts: Schema.optional(Schema.Array(Fact)),
  measures: Schema.optional(Schema.Array(Measure)),
  metrics: Schema.optional(Schema.Array(TableMetric)),
  filters: Schema.optional(Schema.Array(Filter))
})
export type Table = typeof Table.Type

/**
 * A join between two tables, from the many side (`left_table`) to the one side.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Relationship = Schema.Struct({
  name: Name,
  left_table: Name,
  right_table: Name,
  relationship_columns: Schema.NonEmptyArray(
    Schema.Struct({ left_column: Schema.String, right_column: Schema.String })
  ),
  relationship_type: Schema.optional(Schema.Literal("many_to_one", "one_to_one")),
  join_type: Schema.optional(Schema.Literal("left_outer", "inner"))
})
export type Relationship = typeof Relationship.Type

/**
 * A ratio of two measures' totals (never an average of ratios).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RatioMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("ratio"),
  numerator: Name,
  denominator: Name,
  /**
   * The dimensions an investigation breaks this metric's change down by, in order (the model's
   * `drivers` when absent): region before category reads "Europe, mostly Laptops".
   */
  drivers: Schema.optional(Schema.Array(Schema.String)),
  format: Schema.optional(Format),
  description: Description,
  synonyms: Synonyms
})

/**
 * A measure as a share of its total over the rows of the answer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ShareMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("share"),
  measure: Name,
  format: Schema.optional(Format),
  description: Description,
  synonyms: Synonyms
})

/**
 * A measure against the same period one `offset` earlier.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PeriodOverPeriodMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("period_over_period"),
  measure: Name,
  /** How far back: `1 year`, `3 months`, `1 week`, `7 days`. */
  offset: Schema.String.pipe(Schema.pattern(/^\d{1,3} (day|week|month|quarter|year)s?$/, {
    message: () => "an offset is a count and a unit: 1 year, 3 months, 7 days"
  })),
  /** `growth` (the change over the earlier value), `difference` or `previous` (the earlier value). */
  calculation: Schema.optional(Schema.Literal("growth", "difference", "previous")),
  format: Schema.optional(Format),
  description: Description,
  synonyms: Synonyms
})

const Offset = Schema.String.pipe(Schema.pattern(/^\d{1,4} (day|week|month|quarter|year)s?$/, {
  message: () => "a window is a count and a unit: 7 days, 1 month, 1 year"
}))

/**
 * A metric an expression derives from other metrics (MetricFlow's `derived`): `expr` is arithmetic
 * (`+ - * /`, parentheses, numbers, and `coalesce`, `nullif`, `abs`, `greatest`, `least`, `round`)
 * over the inputs by name or alias. An input with an `offset_window` is read that much earlier
 * ("revenue against the month before"). One with an `offset_to_grain` is read, for each period of
 * the query, in the period where its grain's period starts ("each day's orders against the first
 * day of its month"): it needs a query by a grain no coarser than that one. A division is exact,
 * and nothing when the divisor is zero.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ExpressionMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("derived"),
  expr: Schema.String,
  metrics: Schema.NonEmptyArray(Schema.Struct({
    name: Name,
    /** The name `expr` uses for it, where two inputs are one metric (now and a month ago). */
    alias: Schema.optional(Name),
    offset_window: Schema.optional(Offset),
    /** A grain or custom granularity: the input is read at the start of its period. */
    offset_to_grain: Schema.optional(SemanticQuery.GrainName)
  })),
  fill_nulls_with: Schema.optional(Schema.Number),
  format: Schema.optional(Format),
  unit: Schema.optional(Schema.String),
  description: Description,
  synonyms: Synonyms
})
export type ExpressionMetric = typeof ExpressionMetric.Type

/**
 * A measure accumulated over time (MetricFlow's `cumulative`): each period of a time grain reads
 * the measure over every row up to its end (a running total), over a trailing `window` ending there
 * ("the last 7 days"), or since the start of its `grain_to_date` (month-to-date, year-to-date, or
 * a custom granularity's: fiscal-year-to-date). The
 * periods come from a time spine the compiler generates. `period_agg` says which day of a coarser
 * period is read: its `last` (the default) or its `first` (MetricFlow's default).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CumulativeMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("cumulative"),
  measure: Name,
  window: Schema.optional(Offset),
  grain_to_date: Schema.optional(SemanticQuery.GrainName),
  period_agg: Schema.optional(Schema.Literal("last", "first")),
  fill_nulls_with: Schema.optional(Schema.Number),
  format: Schema.optional(Format),
  description: Description,
  synonyms: Synonyms
})
export type CumulativeMetric = typeof CumulativeMetric.Type

/**
 * How often a base event is followed by a conversion event of the same entity within a window
 * (MetricFlow's `conversion`): a visit, then an order by the same customer within 7 days.
 * `conversions` is the base measure over the base rows that converted; `conversion_rate` (the
 * default) divides it by the base measure.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConversionMetric = Schema.Struct({
  name: Name,
  type: Schema.Literal("conversion"),
  base_measure: Name,
  conversion_measure: Name,
  /** The column (or SQL over the base table) that names the entity: `customer_id`. */
  entity: Schema.String,
  /** The same entity in the conversion measure's table, where it is named otherwise. */
  conversion_entity: Schema.optional(Schema.String),
  /** How long after the base event a conversion counts; any time later when absent. */
  window: Schema.optional(Offset),
  calculation: Schema.optional(Schema.Literal("conversion_rate", "conversions")),
  /**
   * What the conversion must share with its base event besides the entity (MetricFlow's
   * `constant_properties`): SQL over each table, equal (the same product viewed, then bought).
   */
  constant_properties: Schema.optional(Schema.Array(Schema.Struct({
    base_property: Schema.String,
    conversion_property: Schema.String
  }))),
  format: Schema.optional(Format),
  description: Description,
  synonyms: Synonyms
})
export type ConversionMetric = typeof ConversionMetric.Type

/**
 * A metric derived from measures.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DerivedMetric = Schema.Union(
  RatioMetric,
  ShareMetric,
  PeriodOverPeriodMetric,
  ExpressionMetric,
  CumulativeMetric,
  ConversionMetric
)
export type DerivedMetric = typeof DerivedMetric.Type

/**
 * A parameter of a verified query.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Parameter = Schema.Struct({
  name: Name,
  type: Schema.optional(Schema.Literal("string", "number", "date", "boolean")),
  description: Description,
  default: Schema.optional(Scalar)
})
export type Parameter = typeof Parameter.Type

/**
 * A question with SQL (or a semantic query) a person checked. The SQL reads logical tables as `__<table>` (each the
 * table's dimensions, time dimensions and facts, with its row filter applied) and names parameters
 * as `:name`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VerifiedQuery = Schema.Struct({
  name: Name,
  question: Schema.String,
  sql: Schema.optional(Schema.String),
  /**
   * Or the answer as a semantic query (a dbt saved query), which the compiler writes in the
   * connector's dialect. A query takes no parameters.
   */
  query: Schema.optional(SemanticQuery.SemanticQuery),
  parameters: Schema.optional(Schema.Array(Parameter)),
  verified_by: Schema.optional(Schema.String),
  /** When it was verified: Unix seconds (Snowflake's form) or an ISO date. */
  verified_at: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
  use_as_onboarding_question: Schema.optional(Schema.Boolean)
})
export type VerifiedQuery = typeof VerifiedQuery.Type

const isoDay = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a date as YYYY-MM-DD" })
)
const monthDay = Schema.String.pipe(
  Schema.pattern(/^(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/, { message: () => "a day of the year as MM-DD" })
)

/**
 * A period the business names ("back to school", "the spring sale"): the days it spans, both
 * included, either once (`from`, `to` as YYYY-MM-DD) or every year (`every_year`, MM-DD to MM-DD; a
 * range that ends before it starts runs into the next year). A question that names it without a
 * year reads its latest occurrence that has begun.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NamedPeriod = Schema.Struct({
  name: Name,
  synonyms: Synonyms,
  description: Description,
  from: Schema.optional(isoDay),
  to: Schema.optional(isoDay),
  every_year: Schema.optional(Schema.Struct({ from: monthDay, to: monthDay }))
})
export type NamedPeriod = typeof NamedPeriod.Type

/**
 * A custom granularity (MetricFlow's name): a period of a standard grain that starts in another
 * month, as a fiscal year starting on April 1 (`grain: year`, `start_month: 4`) or its quarters. A
 * query groups by it by name (`grain: fiscal_year`); each bucket is named by its first day
 * (2025-04-01 for the fiscal year from April 2025 to March 2026). No time spine table is needed.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CustomGranularity = Schema.Struct({
  name: SemanticQuery.CustomGrainName.pipe(
    Schema.filter((name) => !grains.includes(name as Grain) || `${name} is a standard grain`)
  ),
  label: Schema.optional(Schema.String),
  synonyms: Synonyms,
  description: Description,
  grain: Schema.Literal("quarter", "year"),
  /** The month the first period starts in, 1 (January) to 12. */
  start_month: Schema.Int.pipe(Schema.between(1, 12))
})
export type CustomGranularity = typeof CustomGranularity.Type

/**
 * A semantic model file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticModelFile = Schema.Struct({
  name: Name,
  description: Description,
  /** The connector it describes, by name. */
  connector: Schema.optional(Schema.String),
  /** Or every connector of a type that has no model naming it (the shipped DEMO model). */
  connector_type: Schema.optional(Schema.String),
  /** The IANA time zone that ranges and grains are read in; UTC when absent. */
  time_zone: Schema.optional(Schema.String),
  tables: Schema.NonEmptyArray(Table),
  relationships: Schema.optional(Schema.Array(Relationship)),
  metrics: Schema.optional(Schema.Array(DerivedMetric)),
  verified_queries: Schema.optional(Schema.Array(VerifiedQuery)),
  /** The periods the business names, which questions may use. */
  periods: Schema.optional(Schema.Array(NamedPeriod)),
  /** Periods of a standard grain that start in another month (a fiscal year), which queries group by. */
  custom_granularities: Schema.optional(Schema.Array(CustomGranularity)),
  /** The dimensions an investigation breaks a metric's change down by, in order, where a metric names none. */
  drivers: Schema.optional(Schema.Array(Schema.String)),
  custom_instructions: Schema.optional(Schema.String),
  module_custom_instructions: Schema.optional(Schema.Struct({
    sql_generation: Schema.optional(Schema.String),
    question_categorization: Schema.optional(Schema.String)
  }))
})
export type SemanticModelFile = typeof SemanticModelFile.Type

// ---------------------------------------------------------------------------------------------
// Problems
// ---------------------------------------------------------------------------------------------

/**
 * What is wrong with a model, where.
 *
 * @since 0.1.0
 * @category models
 */
export type Problem = YamlFile.Problem

/**
 * A problem as one line: `semantic/demo.yaml:12: ...`.
 *
 * @since 0.1.0
 * @category constants
 */
export const formatProblem = YamlFile.formatProblem

// ---------------------------------------------------------------------------------------------
// The model as the compiler reads it
// ---------------------------------------------------------------------------------------------

/**
 * A measure with its table.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedMeasure extends Measure {
  readonly table: string
}

/**
 * A model read and checked: measures normalised, every name resolvable.
 *
 * @since 0.1.0
 * @category models
 */
export interface SemanticModel {
  readonly file: SemanticModelFile
  /** Where it was read from. */
  readonly path: string
  readonly timeZone: string
  readonly tables: ReadonlyArray<Table>
  readonly measures: ReadonlyArray<ResolvedMeasure>
  readonly metrics: ReadonlyArray<DerivedMetric>
  readonly relationships: ReadonlyArray<Relationship>
  readonly verifiedQueries: ReadonlyArray<VerifiedQuery>
}

// Whether parentheses nest properly: `a) - SUM(b` (from `SUM(a) - SUM(b)`) does not.
const balanced = (expr: string): boolean => {
  let depth = 0
  for (const char of expr) {
    depth += char === "(" ? 1 : char === ")" ? -1 : 0
    if (depth < 0) return false
  }
  return depth === 0
}

const aggregateCall = /^\s*(sum|count|avg|average|min|max)\s*\(\s*(distinct\s+)?([\s\S]*)\)\s*$/i

/**
 * A Snowflake table metric as a measure, when its expression is one aggregate over a row
 * expression (`SUM(orders.amount)`, `COUNT(DISTINCT customer_id)`); the table's own prefix is
 * dropped, since a measure's expression is read over its table.
 *
 * @since 0.1.0
 * @category utils
 */
export const measureOfMetric = (table: string, metric: TableMetric): Either.Either<Measure, string> => {
  const match = aggregateCall.exec(metric.expr)
  if (match === null || !balanced(match[3]!)) {
    return Either.left(`metric ${metric.name}: its expr must be one aggregate such as SUM(amount)`)
  }
  const fn = match[1]!.toLowerCase()
  const distinct = match[2] !== undefined
  let expr = match[3]!.trim().replaceAll(new RegExp(`\\b${table}\\.`, "g"), "")
  if (expr === "*") expr = ""
  const agg: Aggregation = distinct
    ? "count_distinct"
    : fn === "average"
    ? "avg"
    : (fn as Aggregation)
  return Either.right({
    name: metric.name,
    agg,
    ...(expr === "" ? {} : { expr }),
    ...(metric.description === undefined ? {} : { description: metric.description }),
    ...(metric.synonyms === undefined ? {} : { synonyms: metric.synonyms })
  })
}

const timeZonePattern = /^(UTC|[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)*|[+-]\d{2}:\d{2})$/

/** Where a name is defined, for the duplicate check. */
const names = (table: Table): ReadonlyArray<readonly [kind: string, name: string]> => [
  ...(table.dimensions ?? []).map((d) => ["dimension", d.name] as const),
  ...(table.time_dimensions ?? []).map((d) => ["time dimension", d.name] as const),
  ...(table.facts ?? []).map((d) => ["fact", d.name] as const),
  ...(table.filters ?? []).map((d) => ["filter", d.name] as const)
]

/**
 * Checks a decoded file holds together, and normalises it for the compiler.
 *
 * @since 0.1.0
 * @category utils
 */
export const validate = (
  path: string,
  file: SemanticModelFile
): Either.Either<SemanticModel, ReadonlyArray<Problem>> => {
  const problems: Array<string> = []
  const tableNames = new Set<string>()
  const measures: Array<ResolvedMeasure> = []
  const filterNames = new Set<string>()
  for (const table of file.tables) {
    if (tableNames.has(table.name)) problems.push(`table ${table.name} is defined twice`)
    tableNames.add(table.name)
    const seen = new Map<string, string>()
    for (const [kind, name] of names(table)) {
      const before = seen.get(name)
      if (before !== undefined) problems.push(`table ${table.name}: ${kind} ${name} clashes with the ${before} ${name}`)
      seen.set(name, kind)
    }
    for (const filter of table.filters ?? []) {
      if (filterNames.has(filter.name)) problems.push(`filter ${filter.name} is defined in two tables`)
      filterNames.add(filter.name)
    }
    for (const measure of table.measures ?? []) measures.push({ ...measure, table: table.name })
    for (const metric of table.metrics ?? []) {
      Either.match(measureOfMetric(table.name, metric), {
        onLeft: (message) => problems.push(`table ${table.name}: ${message}`),
        onRight: (measure) => measures.push({ ...measure, table: table.name })
      })
    }
    for (const measure of table.measures ?? []) {
      if (measure.agg !== "count" && measure.expr === undefined) {
        problems.push(`measure ${measure.name}: a ${measure.agg} needs an expr`)
      }
    }
  }
  const timeDimensions = file.tables.flatMap((t) =>
    (t.time_dimensions ?? []).flatMap((d) => [d.name, `${t.name}.${d.name}`])
  )
  for (const measure of measures) {
    if (measure.time_dimension !== undefined && !timeDimensions.includes(measure.time_dimension)) {
      problems.push(`measure ${measure.name}: no time dimension named ${measure.time_dimension}`)
    }
  }
  const metricNames = new Set<string>()
  for (const name of [...measures.map((m) => m.name), ...(file.metrics ?? []).map((m) => m.name)]) {
    if (metricNames.has(name)) problems.push(`metric ${name} is defined twice (metric names are unique in a model)`)
    metricNames.add(name)
  }
  const measureNames = new Set(measures.map((m) => m.name))
  for (const measure of measures) {
    for (const filter of measure.filters ?? []) {
      if (!filterNames.has(filter)) problems.push(`measure ${measure.name}: no filter named ${filter}`)
    }
    if (
      measure.unfiltered !== undefined && (measure.unfiltered === measure.name || !measureNames.has(measure.unfiltered))
    ) {
      problems.push(`measure ${measure.name}: its unfiltered measure ${measure.unfiltered} is not another measure`)
    }
  }
  // Drivers name dimensions (`table.name` where two tables share one); a time dimension is no driver.
  const dimensionNames = new Set(
    file.tables.flatMap((t) => (t.dimensions ?? []).flatMap((d) => [d.name, `${t.name}.${d.name}`]))
  )
  const driverProblems = (owner: string, drivers: ReadonlyArray<string> | undefined) => {
    for (const driver of drivers ?? []) {
      if (!dimensionNames.has(driver)) problems.push(`${owner}: driver ${driver} is not a dimension`)
    }
  }
  driverProblems("drivers", file.drivers)
  for (const measure of measures) driverProblems(`measure ${measure.name}`, measure.drivers)
  for (const metric of file.metrics ?? []) {
    if (metric.type === "ratio") driverProblems(`metric ${metric.name}`, metric.drivers)
  }
  for (const measure of measures) {
    if (measure.agg === "percentile" && measure.agg_params?.percentile === undefined) {
      problems.push(`measure ${measure.name}: a percentile needs agg_params.percentile (0.9 is the 90th)`)
    }
    if (measure.agg_params !== undefined && measure.agg !== "percentile" && measure.agg !== "median") {
      problems.push(`measure ${measure.name}: agg_params are for a percentile or a median, not a ${measure.agg}`)
    }
    const nonAdditive = measure.non_additive_dimension
    if (nonAdditive !== undefined && !timeDimensions.includes(nonAdditive.name)) {
      problems.push(`measure ${measure.name}: its non_additive_dimension ${nonAdditive.name} is not a time dimension`)
    }
  }
  const derivedNames = new Set((file.metrics ?? []).map((m) => m.name))
  for (const metric of file.metrics ?? []) {
    const inputs = metric.type === "ratio"
      ? [metric.numerator, metric.denominator]
      : metric.type === "conversion"
      ? [metric.base_measure, metric.conversion_measure]
      : metric.type === "derived"
      ? []
      : [metric.measure]
    for (const input of inputs) {
      if (!measureNames.has(input)) problems.push(`metric ${metric.name}: no measure named ${input}`)
    }
    const isGrain = (name: string) =>
      grains.includes(name as Grain) || (file.custom_granularities ?? []).some((g) => g.name === name)
    if (metric.type === "cumulative" && metric.grain_to_date !== undefined && !isGrain(metric.grain_to_date)) {
      problems.push(
        `metric ${metric.name}: grain_to_date ${metric.grain_to_date} is not a grain or a custom granularity`
      )
    }
    if (metric.type === "derived") {
      for (const input of metric.metrics) {
        if (!measureNames.has(input.name) && !derivedNames.has(input.name)) {
          problems.push(`metric ${metric.name}: no metric named ${input.name}`)
        }
        if (input.offset_to_grain !== undefined && !isGrain(input.offset_to_grain)) {
          problems.push(
            `metric ${metric.name}: its input ${input.name}'s offset_to_grain ${input.offset_to_grain} is not a grain or a custom granularity`
          )
        }
        if (input.offset_to_grain !== undefined && input.offset_window !== undefined) {
          problems.push(
            `metric ${metric.name}: its input ${input.name} has an offset_window and an offset_to_grain: keep one`
          )
        }
      }
      const said = new Set(metric.metrics.map((input) => input.alias ?? input.name))
      if (said.size < metric.metrics.length) {
        problems.push(`metric ${metric.name}: two inputs go by one name: give each its own alias`)
      }
      Either.match(MetricExpression.parse(metric.expr), {
        onLeft: (message) => problems.push(`metric ${metric.name}: expr: ${message}`),
        onRight: (expression) => {
          for (const name of MetricExpression.names(expression)) {
            if (!said.has(name)) {
              problems.push(`metric ${metric.name}: expr names ${name}, which is not one of its metrics`)
            }
          }
        }
      })
    }
  }
  // A derived metric never reads itself, however far down.
  const inputsOf = (name: string): ReadonlyArray<string> => {
    const metric = (file.metrics ?? []).find((m) => m.name === name)
    return metric?.type === "derived" ? metric.metrics.map((input) => input.name) : []
  }
  for (const metric of file.metrics ?? []) {
    const seen = new Set<string>()
    const stack = [...inputsOf(metric.name)]
    while (stack.length > 0) {
      const at = stack.pop()!
      if (at === metric.name) {
        problems.push(`metric ${metric.name} is derived from itself`)
        break
      }
      if (seen.has(at)) continue
      seen.add(at)
      stack.push(...inputsOf(at))
    }
  }
  const relationshipNames = new Set<string>()
  for (const relationship of file.relationships ?? []) {
    if (relationshipNames.has(relationship.name)) problems.push(`relationship ${relationship.name} is defined twice`)
    relationshipNames.add(relationship.name)
    for (const side of [relationship.left_table, relationship.right_table]) {
      if (!tableNames.has(side)) problems.push(`relationship ${relationship.name}: no table named ${side}`)
    }
  }
  const queryNames = new Set<string>()
  for (const query of file.verified_queries ?? []) {
    if (queryNames.has(query.name)) problems.push(`verified query ${query.name} is defined twice`)
    queryNames.add(query.name)
    if ((query.sql === undefined) === (query.query === undefined)) {
      problems.push(`verified query ${query.name}: give its sql or its query, one of them`)
      continue
    }
    if (query.query !== undefined && (query.parameters ?? []).length > 0) {
      problems.push(`verified query ${query.name}: a semantic query takes no parameters`)
    }
    const notOne = query.sql === undefined ? undefined : SqlStatement.notOneQuery(query.sql)
    if (notOne !== undefined) problems.push(`verified query ${query.name}: not one SELECT or WITH query: ${notOne}`)
    for (const match of (query.sql ?? "").matchAll(/\b__([A-Za-z_][A-Za-z0-9_]*)/g)) {
      if (!tableNames.has(match[1]!)) problems.push(`verified query ${query.name}: no table named ${match[1]}`)
    }
  }
  const periodNames = new Set<string>()
  for (const period of file.periods ?? []) {
    if (periodNames.has(period.name)) problems.push(`period ${period.name} is defined twice`)
    periodNames.add(period.name)
    const once = period.from !== undefined || period.to !== undefined
    if (once === (period.every_year !== undefined)) {
      problems.push(`period ${period.name}: give either from and to (once) or every_year (each year)`)
    } else if (once && (period.from === undefined || period.to === undefined)) {
      problems.push(`period ${period.name}: give both from and to`)
    } else if (once && period.from! > period.to!) {
      problems.push(`period ${period.name}: from ${period.from} is after to ${period.to}`)
    }
  }
  const granularityNames = new Set<string>()
  for (const granularity of file.custom_granularities ?? []) {
    if (granularityNames.has(granularity.name)) {
      problems.push(`custom granularity ${granularity.name} is defined twice`)
    }
    granularityNames.add(granularity.name)
  }
  const timeZone = file.time_zone ?? "UTC"
  if (!timeZonePattern.test(timeZone)) problems.push(`time_zone ${timeZone} is not a time zone name`)
  if (problems.length > 0) return Either.left(problems.map((message) => ({ path, message })))
  return Either.right({
    file,
    path,
    timeZone,
    tables: file.tables,
    measures,
    metrics: file.metrics ?? [],
    relationships: file.relationships ?? [],
    verifiedQueries: file.verified_queries ?? []
  })
}

/**
 * Reads a model file: YAML, then the format, then `validate`. Every problem names the file and,
 * where it has one, the line.
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (path: string, text: string): Either.Either<SemanticModel, ReadonlyArray<Problem>> =>
  Either.flatMap(YamlFile.decode(SemanticModelFile, path, text), (file) => validate(path, file))

/**
 * Which connector a model file says it describes, read even when the file is not a valid model (so
 * a broken model is reported where it applies rather than silently replaced).
 *
 * @since 0.1.0
 * @category utils
 */
export const declaredTarget = (text: string): { readonly connector?: string; readonly connector_type?: string } => {
  try {
    const value: unknown = Yaml.parse(text)
    if (typeof value !== "object" || value === null) return {}
    const { connector, connector_type } = value as Record<string, unknown>
    return {
      ...(typeof connector === "string" ? { connector } : {}),
      ...(typeof connector_type === "string" ? { connector_type } : {})
    }
  } catch {
    return {}
  }
}

/**
 * Writes a model file as YAML (what `GET /v2/connectors/{id}/semantic-model` returns).
 *
 * @since 0.1.0
 * @category utils
 */
export const stringify = (file: SemanticModelFile): string => Yaml.stringify(file, { lineWidth: 0 })

/**
 * The folder of the library that holds semantic models.
 *
 * @since 0.1.0
 * @category constants
 */
export const folder = "semantic"

/**
 * Whether a library path is a semantic model file.
 *
 * @since 0.1.0
 * @category guards
 */
export const isModelPath = (path: string): boolean => path.startsWith(`${folder}/`) && /\.ya?ml$/i.test(path)
