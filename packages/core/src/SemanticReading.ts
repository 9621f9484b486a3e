/**
 * The reading of a compiled semantic query: how the compiler says, in words a person checks, what it
 * computed ("Top 5: Revenue (sum of line total) by product in 2025, highest first"), and the words
 * it says it with (a measure's definition, a period, the month names).
 *
 * @since 0.1.0
 */
import { canonical, type FieldRef, filterNamed, type MetricRef, same, words } from "./internal/semanticSql.js"
import type * as SemanticModel from "./SemanticModel.js"
import type { ResolvedMeasure, SemanticModel as Model } from "./SemanticModel.js"
import type * as SemanticQuery from "./SemanticQuery.js"

// ---------------------------------------------------------------------------------------------
// The reading
// ---------------------------------------------------------------------------------------------

const aggregationWords: Record<SemanticModel.Aggregation, string> = {
  sum: "sum of",
  count: "count of",
  count_distinct: "number of distinct",
  avg: "average of",
  min: "smallest",
  max: "largest",
  median: "median of",
  percentile: "percentile of",
  sum_boolean: "number of rows where"
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
  const how = measure.agg === "percentile"
    ? `${Math.round((measure.agg_params?.percentile ?? 0) * 1000) / 10}th percentile of`
    : aggregationWords[measure.agg]
  const at = measure.non_additive_dimension === undefined
    ? ""
    : ` at each period's ${measure.non_additive_dimension.window_choice === "min" ? "first" : "last"} ${
      words(measure.non_additive_dimension.name.split(".").at(-1)!)
    }`
  return `${how} ${what}${at}${conditions.length === 0 ? "" : `, ${conditions.join(" and ")}`}`
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
    case "derived":
      return metric.metrics.reduce(
        (text, input) =>
          input.alias === undefined
            ? text
            : input.offset_window !== undefined
            ? text.replaceAll(words(input.alias), `${words(input.name)} ${input.offset_window} earlier`)
            : input.offset_to_grain !== undefined
            ? text.replaceAll(
              words(input.alias),
              `${words(input.name)} at the start of the ${grainWords(model, input.offset_to_grain)}`
            )
            : text,
        words(metric.expr)
      )
    case "cumulative":
      return `${words(metric.measure)} ${
        metric.window !== undefined
          ? `over the ${metric.window} up to each period's end`
          : metric.grain_to_date !== undefined
          ? `${grainWords(model, metric.grain_to_date)} to date`
          : "in total up to each period's end"
      }`
    case "conversion":
      return `${metric.calculation === "conversions" ? "" : "share of "}${words(metric.base_measure)} followed by ${
        words(metric.conversion_measure)
      } of the same ${words(metric.entity)}${metric.window === undefined ? "" : ` within ${metric.window}`}`
  }
}

/** A grain in words: a custom granularity with the month its periods start in. */
const grainWords = (model: Model, grain: string): string => {
  const custom = model.file.custom_granularities?.find((g) => g.name === grain)
  return custom === undefined
    ? grain
    : `${words(custom.name)} (from ${monthNames[custom.start_month - 1]})`
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)

/**
 * The months, in English, January first: the one list of them (the offline model's reader says and
 * reads them too).
 *
 * @since 0.1.0
 * @category constants
 */
export const monthNames: ReadonlyArray<string> = [
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
    if (months === 6 && (sm - 1) % 6 === 0) return `H${(sm + 5) / 6} ${sy}`
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

/**
 * The reading of a query compiled on `model`, from what the compiler resolved its names to.
 *
 * @since 0.1.0
 * @category utils
 */
export const ofQuery = (
  model: Model,
  query: SemanticQuery.SemanticQuery,
  metrics: ReadonlyArray<MetricRef>,
  dimensions: ReadonlyArray<FieldRef>,
  namedTime: FieldRef | undefined,
  filters: ReadonlyArray<{ readonly filter: SemanticQuery.DimensionFilter; readonly field: FieldRef }>,
  segments: ReadonlyArray<{ readonly filter: SemanticModel.Filter }>,
  order: ReadonlyArray<SemanticQuery.OrderBy>,
  having?: {
    readonly entity: { readonly name: string }
    readonly field: FieldRef
    readonly bridge: string
    readonly values: ReadonlyArray<string | number | boolean>
  }
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
    ...segments.map(({ filter }) => filter.description ?? words(filter.name)),
    // "Customers have order items in category Laptops and in category Phones".
    ...(having === undefined ? [] : [
      `${words(having.entity.name)} have ${words(having.bridge)} ${
        having.values.map((v) => `in ${words(having.field.name)} ${String(canonical(having.field, v))}`).join(" and ")
      }`
    ])
  ]
  const grain = query.time?.grain
  const periods = query.time?.periods
  const period = periods === undefined
    ? periodWords(query.time?.start, query.time?.end)
    : periods.map((p) => periodWords(p.start, p.end)).join(" and ")
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
  const by = [
    ...dimensions.map((d) => words(d.name)),
    ...(grain !== undefined ? [grainWords(model, grain)] : periods === undefined ? [] : ["period"])
  ]
  // A list says what it lists.
  const listed = dimensions.map((d) => words(d.name)).join(" and ")
  const table = dimensions.length === 0 ? "" : words(dimensions[0]!.table.name)
  const metricText = readingMetrics.length === 0
    // "Every product", "every region of customers".
    ? `Every ${listed}${table.startsWith(words(dimensions[0]!.name)) ? "" : ` of ${table}`}`
    : readingMetrics.map((m) => `${capitalized(words(m.name))} (${m.definition})`).join(" and ")
  const text = [
    // The rows a limit keeps are the first of the order: the lowest ones when it goes up.
    query.limit_per !== undefined
      ? `${orderWords === "lowest first" ? "Bottom" : "Top"} ${query.limit_per.limit} ${
        dimensions.filter((d) => !query.limit_per!.dimensions.some((p) => same(p, d.name))).map((d) => words(d.name))
          .join(" and ")
      } in each ${query.limit_per.dimensions.map(words).join(" and ")}: `
      : query.limit !== undefined && readingMetrics.length === 0
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
    ...(query.limit === undefined ? {} : { limit: query.limit }),
    ...(query.limit_per === undefined ? {} : { limit_per: query.limit_per })
  }
}
