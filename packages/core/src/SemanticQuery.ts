/**
 * A semantic query: what to measure, split and filtered how, over which period, in which order. It
 * names things of a semantic model (`SemanticModel`) and never carries SQL: the compiler writes
 * the SQL, and every value in it is bound as a parameter. Its reading (`Reading`) says in words
 * and as data how a question was read.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { DialectName } from "./ConnectorRuntime.js"
import { ConnectorId } from "./Ids.js"

/**
 * The grains a time dimension can be read at.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Grain = Schema.Literal("day", "week", "month", "quarter", "year")
export type Grain = typeof Grain.Type

/**
 * The name of a custom granularity the model defines (a fiscal year starting in April is
 * `fiscal_year`). The compiler refuses a name the model does not define.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CustomGrainName = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]*$/, { message: () => "a custom granularity's name is lower_snake_case" }),
  Schema.maxLength(64)
).annotations({ description: "A custom granularity of the model (fiscal_year)" })

/**
 * A grain a query groups by: a standard one, or a custom granularity of the model by name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GrainName = Schema.Union(Grain, CustomGrainName)
export type GrainName = typeof GrainName.Type

/**
 * How a number is shown.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Format = Schema.Literal("number", "integer", "currency", "percent")
export type Format = typeof Format.Type

const Scalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

/**
 * A comparison of a dimension filter.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Operator = Schema.Literal("=", "!=", ">", ">=", "<", "<=", "in", "not_in", "between", "contains")
export type Operator = typeof Operator.Type

/**
 * A condition on a dimension, applied to rows before they are aggregated.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DimensionFilter = Schema.Struct({
  /** A dimension or time dimension: `channel`, or `orders.channel` where two tables share the name. */
  dimension: Schema.String,
  operator: Operator,
  /** One value; two for `between`; any number for `in` and `not_in`. */
  values: Schema.NonEmptyArray(Scalar)
})
export type DimensionFilter = typeof DimensionFilter.Type

/**
 * A calendar date (`2025-01-01`), read in the model's time zone.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CalendarDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a date is YYYY-MM-DD" })
)

/**
 * The time axis: which time dimension, at which grain, over which period (`start` ≤ t < `end`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TimeSelection = Schema.Struct({
  /** The time dimension; each metric's own when absent (orders by order date, returns by return date). */
  dimension: Schema.optional(Schema.String),
  /** Group by this grain (or a custom granularity of the model); the period's total when absent. */
  grain: Schema.optional(GrainName),
  start: Schema.optional(CalendarDate),
  /** The first day after the period. */
  end: Schema.optional(CalendarDate),
  /**
   * Several periods instead of one ("Q1 2024 vs Q1 2025"): a row is in one of them. Grouped by a
   * grain, each period's buckets are rows of their own; nothing between the periods is read.
   */
  periods: Schema.optional(
    Schema.Array(Schema.Struct({ start: CalendarDate, end: CalendarDate })).pipe(
      Schema.minItems(2),
      Schema.maxItems(12)
    )
      .annotations({ description: "Two to twelve periods (start ≤ t < end) to read instead of start and end" })
  )
})
export type TimeSelection = typeof TimeSelection.Type

/**
 * An ordering of the result by one of its columns.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OrderBy = Schema.Struct({
  /** A metric, a dimension, or `time`. */
  by: Schema.String,
  direction: Schema.optional(Schema.Literal("asc", "desc"))
})
export type OrderBy = typeof OrderBy.Type

/**
 * The most rows a semantic query returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxLimit = 10_000

/**
 * A ranking within groups: the first `limit` rows, in the query's order, of each value of
 * `dimensions` ("the top 3 products in each region": `dimensions: ["region"]`, `limit: 3`). The
 * dimensions are some, never all, of the query's.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LimitPer = Schema.Struct({
  dimensions: Schema.NonEmptyArray(Schema.String),
  limit: Schema.Int.pipe(Schema.between(1, 1_000))
})
export type LimitPer = typeof LimitPer.Type

/**
 * A condition on an entity, not on rows: "customers who bought both Laptops and Phones" keeps the
 * customers that have rows (order lines) in each value, and then reads all of their rows. The rows
 * between them are those of the nearest table that reaches both along many-to-one relationships.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HavingEach = Schema.Struct({
  /** The table whose rows are kept: `customers`. It has a primary key of one column. */
  entity: Schema.String,
  /** A dimension the entity's rows lead to through another table: `category`. */
  dimension: Schema.String,
  /** Every one of these: an entity is kept when it has rows in each. */
  values: Schema.Array(Scalar).pipe(Schema.minItems(2), Schema.maxItems(10))
})
export type HavingEach = typeof HavingEach.Type

/**
 * A semantic query. With no metrics it lists the distinct values of its dimensions (the products
 * of a category, the customers of a region): a list, which the first dimension's table roots.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticQuery = Schema.Struct({
  metrics: Schema.Array(Schema.String).annotations({
    description: "Names of the model's metrics; none lists the distinct values of the dimensions"
  }),
  dimensions: Schema.optional(
    Schema.Array(Schema.String).annotations({
      description: "Dimensions to group by (`table.name` where two tables share one)"
    })
  ),
  time: Schema.optional(TimeSelection.annotations({ description: "The time axis: a grain to group by, a period" })),
  filters: Schema.optional(
    Schema.Array(DimensionFilter).annotations({ description: "Conditions on dimensions, applied before aggregating" })
  ),
  /** Named filters of the model (`completed_orders`). */
  segments: Schema.optional(Schema.Array(Schema.String).annotations({ description: "Named filters of the model" })),
  /** The first metric, highest first, when absent (time ascending when grouped by a grain). */
  order: Schema.optional(
    Schema.Array(OrderBy).annotations({
      description: "The order of the rows: the first metric, highest first, when absent (time when grouped by a grain)"
    })
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.between(1, maxLimit)).annotations({ description: "The most rows to return" })
  ),
  /** "The top 3 products in each region": a ranking within each group, not over all rows. */
  limit_per: Schema.optional(
    LimitPer.annotations({
      description: "Keep the first `limit` rows, in the query's order, within each value of these dimensions"
    })
  ),
  /** "Customers who bought both Laptops and Phones": only the entities with rows in each value. */
  having_each: Schema.optional(
    HavingEach.annotations({
      description: "Keep only the rows of an entity (a table with a primary key) that have rows in each of the values"
    })
  )
}).annotations({ identifier: "SemanticQuery" })
export type SemanticQuery = typeof SemanticQuery.Type

/**
 * A metric as a reading states it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReadingMetric = Schema.Struct({
  name: Schema.String,
  /** How it is computed, in words ("sum of line totals, cancelled orders excluded"). */
  definition: Schema.String
})

/**
 * How a question was read: the metric and its definition, the dimensions, filters, period and order.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Reading = Schema.Struct({
  /** All of it in one sentence: "Revenue (sum of ...) by channel in 2025, highest first". */
  text: Schema.String,
  metrics: Schema.Array(ReadingMetric),
  dimensions: Schema.Array(Schema.String),
  /** Each filter and segment in words. */
  filters: Schema.Array(Schema.String),
  /** The period in words ("2025", "all time"), and the grain. */
  period: Schema.String,
  grain: Schema.optional(GrainName),
  order: Schema.String,
  limit: Schema.optional(Schema.Number),
  /** A ranking within groups: the first rows of each group. */
  limit_per: Schema.optional(LimitPer)
}).annotations({ identifier: "Reading" })
export type Reading = typeof Reading.Type

// ---------------------------------------------------------------------------------------------
// The API's shapes
// ---------------------------------------------------------------------------------------------

/**
 * The body of `POST /v2/semantic/query` and `POST /v2/semantic/compile`: a query on one connector's model.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticQueryRequest = Schema.Struct({
  connector_id: ConnectorId,
  ...SemanticQuery.fields
}).annotations({ identifier: "SemanticQueryRequest" })
export type SemanticQueryRequest = typeof SemanticQueryRequest.Type

/**
 * Where a model came from: a file of the library at a commit, or the connector's schema.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelSource = Schema.Struct({
  kind: Schema.Literal("library", "derived"),
  /** The model's name. */
  model: Schema.String,
  /** The library file (`library` only). */
  path: Schema.optional(Schema.String),
  /** The library commit it was read at (`library` only). */
  commit: Schema.optional(Schema.String)
}).annotations({ identifier: "ModelSource" })
export type ModelSource = typeof ModelSource.Type

/**
 * What makes a result trusted: it was computed from a definition the organization reviewed, a
 * metric of a library model or a verified query, at this library commit.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TrustedSource = Schema.Struct({
  kind: Schema.Literal("metric", "verified_query"),
  /** The metric (or metrics, comma-separated) or the verified query. */
  name: Schema.String,
  /** The model file. */
  path: Schema.String,
  commit: Schema.String,
  /** The values given for a verified query's parameters (its defaults stand for the rest). */
  params: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
  )
}).annotations({ identifier: "TrustedSource" })
export type TrustedSource = typeof TrustedSource.Type

/**
 * A result column: a dimension, the time axis or a metric, with its format.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResultColumn = Schema.Struct({
  name: Schema.String,
  kind: Schema.Literal("dimension", "time", "metric"),
  format: Schema.optional(Format),
  /** A metric's currency or unit (`USD`), as its model declares it. */
  unit: Schema.optional(Schema.String)
})
export type ResultColumn = typeof ResultColumn.Type

/**
 * A value bound to a placeholder of the SQL.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Param = Schema.Union(Schema.String, Schema.Number, Schema.Boolean, Schema.Null)

/**
 * The response of `POST /v2/semantic/compile`: the SQL a query runs, without running it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CompiledQuery = Schema.Struct({
  /** One statement; `$1`, `$2`, ... are `params`; `_svc.client_attributes_json.<field>` is bound to the caller's. */
  sql: Schema.String,
  params: Schema.Array(Param),
  dialect: DialectName,
  columns: Schema.Array(ResultColumn),
  reading: Reading,
  source: ModelSource
}).annotations({ identifier: "CompiledQuery" })
export type CompiledQuery = typeof CompiledQuery.Type

/**
 * The response of `POST /v2/semantic/query`: the rows, and how the query was read and run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticQueryResult = Schema.Struct({
  ...CompiledQuery.fields,
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  /** More rows existed than `limit` (or the connector's caps) let through. */
  truncated: Schema.Boolean
}).annotations({ identifier: "SemanticQueryResult" })
export type SemanticQueryResult = typeof SemanticQueryResult.Type

/**
 * A verified query of a library model to run, with values for its parameters.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VerifiedQueryRequest = Schema.Struct({
  connector_id: ConnectorId.annotations({ description: "The connector whose library model holds the query" }),
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)).annotations({
    description: "The verified query's name (describe_data, or the model's verified_queries)"
  }),
  params: Schema.optional(
    Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
      .annotations({ description: "A value for each of its parameters; a parameter's default applies when left out" })
  ),
  limit: Schema.optional(
    Schema.Int.pipe(Schema.between(1, maxLimit)).annotations({ description: "The most rows to return" })
  )
}).annotations({ identifier: "VerifiedQueryRequest" })
export type VerifiedQueryRequest = typeof VerifiedQueryRequest.Type

/**
 * What a verified query answered: the question it answers, the SQL it ran, its rows, and the
 * definition that vouches for them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VerifiedQueryResult = Schema.Struct({
  question: Schema.String,
  sql: Schema.String,
  params: Schema.Array(Param),
  dialect: DialectName,
  columns: Schema.Array(Schema.Struct({ name: Schema.String, type: Schema.String })),
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  /** More rows existed than `limit` (or the connector's caps) let through. */
  truncated: Schema.Boolean,
  trusted: TrustedSource
}).annotations({ identifier: "VerifiedQueryResult" })
export type VerifiedQueryResult = typeof VerifiedQueryResult.Type
