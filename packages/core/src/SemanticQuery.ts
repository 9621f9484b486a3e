/**
 * A semantic query: what to measure, split and filtered how, over which period, in which order. It
 * names things of a semantic model (`SemanticModel`) and never carries SQL: the compiler writes
 * the SQL, and every value in it is bound as a parameter. Its reading (`Reading`) says in words
 * and as data how a question was read.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { Grain } from "./SemanticModel.js"

const Scalar = Schema.Union(Schema.String, Schema.Number, Schema.Boolean)

/** A comparison of a dimension filter. */
export const Operator = Schema.Literal("=", "!=", ">", ">=", "<", "<=", "in", "not_in", "between", "contains")
export type Operator = typeof Operator.Type

/** A condition on a dimension, applied to rows before they are aggregated. */
export const DimensionFilter = Schema.Struct({
  /** A dimension or time dimension: `channel`, or `orders.channel` where two tables share the name. */
  dimension: Schema.String,
  operator: Operator,
  /** One value; two for `between`; any number for `in` and `not_in`. */
  values: Schema.NonEmptyArray(Scalar)
})
export type DimensionFilter = typeof DimensionFilter.Type

/** A calendar date (`2025-01-01`), read in the model's time zone. */
export const CalendarDate = Schema.String.pipe(
  Schema.pattern(/^\d{4}-\d{2}-\d{2}$/, { message: () => "a date is YYYY-MM-DD" })
)

/** The time axis: which time dimension, at which grain, over which period (`start` ≤ t < `end`). */
export const TimeSelection = Schema.Struct({
  /** The time dimension; each metric's own when absent (orders by order date, returns by return date). */
  dimension: Schema.optional(Schema.String),
  /** Group by this grain; the period's total when absent. */
  grain: Schema.optional(Grain),
  start: Schema.optional(CalendarDate),
  /** The first day after the period. */
  end: Schema.optional(CalendarDate)
})
export type TimeSelection = typeof TimeSelection.Type

/** An ordering of the result by one of its columns. */
export const OrderBy = Schema.Struct({
  /** A metric, a dimension, or `time`. */
  by: Schema.String,
  direction: Schema.optional(Schema.Literal("asc", "desc"))
})
export type OrderBy = typeof OrderBy.Type

/** The most rows a semantic query returns. */
export const maxLimit = 10_000

/** A semantic query. */
export const SemanticQuery = Schema.Struct({
  metrics: Schema.NonEmptyArray(Schema.String),
  dimensions: Schema.optional(Schema.Array(Schema.String)),
  time: Schema.optional(TimeSelection),
  filters: Schema.optional(Schema.Array(DimensionFilter)),
  /** Named filters of the model (`completed_orders`). */
  segments: Schema.optional(Schema.Array(Schema.String)),
  /** The first metric, highest first, when absent (time ascending when grouped by a grain). */
  order: Schema.optional(Schema.Array(OrderBy)),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, maxLimit)))
}).annotations({ identifier: "SemanticQuery" })
export type SemanticQuery = typeof SemanticQuery.Type

/** A metric as a reading states it. */
export const ReadingMetric = Schema.Struct({
  name: Schema.String,
  /** How it is computed, in words ("sum of line totals, cancelled orders excluded"). */
  definition: Schema.String
})

/** How a question was read: the metric and its definition, the dimensions, filters, period and order. */
export const Reading = Schema.Struct({
  /** All of it in one sentence: "Revenue (sum of ...) by channel in 2025, highest first". */
  text: Schema.String,
  metrics: Schema.Array(ReadingMetric),
  dimensions: Schema.Array(Schema.String),
  /** Each filter and segment in words. */
  filters: Schema.Array(Schema.String),
  /** The period in words ("2025", "all time"), and the grain. */
  period: Schema.String,
  grain: Schema.optional(Grain),
  order: Schema.String,
  limit: Schema.optional(Schema.Number)
}).annotations({ identifier: "Reading" })
export type Reading = typeof Reading.Type
