/**
 * Charts as data: the agent's `create_chart` tool takes a small, declarative request (a mark and
 * the result columns on each axis) and Sightline builds the Vega-Lite spec itself from the rows of a
 * query it ran. Model-written code is never executed to draw, and every spec is checked against
 * `VegaLiteSpec` (the subset of Vega-Lite v6 Sightline emits) before it is stored.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as SemanticModel from "./SemanticModel.js"

/**
 * The media type of a chart's spec, as its asset stores it.
 *
 * @since 0.1.0
 * @category constants
 */
export const mimeType = "application/vnd.vegalite.v6+json"

/**
 * The marks a chart may use.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Mark = Schema.Literal("bar", "line", "point", "area", "arc")
export type Mark = typeof Mark.Type

/**
 * The input of the `create_chart` tool (its JSON Schema is derived from this).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChartRequest = Schema.Struct({
  title: Schema.optional(Schema.String.pipe(Schema.maxLength(200)).annotations({ description: "A short title" })),
  mark: Mark,
  x: Schema.String.annotations({ description: "Result column on the x axis (category for arc)" }),
  y: Schema.String.annotations({ description: "Numeric result column on the y axis (size for arc)" }),
  color: Schema.optional(Schema.String.annotations({ description: "Optional result column for colour" }))
})
export type ChartRequest = typeof ChartRequest.Type

const FieldType = Schema.Literal("quantitative", "temporal", "nominal", "ordinal")
const Channel = Schema.Struct({
  field: Schema.String,
  type: FieldType,
  title: Schema.optional(Schema.String),
  /** `null`: the categories in the result's order (a ranking's, a series'), not alphabetical. */
  sort: Schema.optional(Schema.Null),
  axis: Schema.optional(Schema.Struct({
    /** A d3 number format: the measure's (a percent, a currency). */
    format: Schema.optional(Schema.String),
    /** `0`: labels are never cut short (a ranking's names). */
    labelLimit: Schema.optional(Schema.Number)
  }))
})
const Tooltip = Schema.Struct({
  field: Schema.String,
  type: FieldType,
  title: Schema.optional(Schema.String),
  format: Schema.optional(Schema.String)
})

/**
 * The Vega-Lite v6 subset Sightline emits: inline data, one mark, x/y (or theta) and colour channels.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VegaLiteSpec = Schema.Struct({
  $schema: Schema.Literal("https://vega.github.io/schema/vega-lite/v6.json"),
  title: Schema.optional(Schema.String),
  width: Schema.Literal("container"),
  data: Schema.Struct({ values: Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown })) }),
  mark: Schema.Struct({ type: Mark, tooltip: Schema.Literal(true) }),
  encoding: Schema.Struct({
    x: Schema.optional(Channel),
    y: Schema.optional(Channel),
    /** Where a bar ends, when it does not start at zero (a waterfall's steps). */
    y2: Schema.optional(Schema.Struct({ field: Schema.String })),
    theta: Schema.optional(Channel),
    color: Schema.optional(Channel),
    /** What hovering a mark shows, each number in its measure's format. */
    tooltip: Schema.optional(Schema.Array(Tooltip))
  })
})
export type VegaLiteSpec = typeof VegaLiteSpec.Type

/**
 * The most rows a chart embeds.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxChartRows = 5_000

/**
 * The rows a chart is drawn from: column names and types, and the rows as arrays.
 *
 * @since 0.1.0
 * @category models
 */
export interface Data {
  readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  /** How a column's numbers are written, where a semantic model says (a measure's `format`). */
  readonly formats?: Readonly<Record<string, SemanticModel.Format | undefined>> | undefined
  /** A column's currency or unit (`USD`), where a semantic model says: its axis and tooltip name it. */
  readonly units?: Readonly<Record<string, string | undefined>> | undefined
}

/**
 * How a result's columns write their numbers (`formats`, `units`), from what the semantic model says
 * of each column.
 *
 * @since 0.1.0
 * @category utils
 */
export const describedBy = (
  columns: ReadonlyArray<
    { readonly name: string; readonly format?: SemanticModel.Format | undefined; readonly unit?: string | undefined }
  >
): Pick<Data, "formats" | "units"> => ({
  formats: Object.fromEntries(columns.map((c) => [c.name, c.format])),
  units: Object.fromEntries(columns.map((c) => [c.name, c.unit]))
})

/**
 * The d3 number formats of a measure's format: on an axis (short: `1.23M`, `50k`, `45%`), and in a
 * tooltip (whole: `1,234,567.89`, `45.2%`).
 *
 * @since 0.1.0
 * @category utils
 */
export const numberFormats = (format: SemanticModel.Format): { readonly axis: string; readonly tooltip: string } => {
  switch (format) {
    case "percent":
      return { axis: ".0%", tooltip: ".1%" }
    case "currency":
      return { axis: ".3~s", tooltip: ",.2f" }
    case "integer":
      return { axis: ".3~s", tooltip: ",d" }
    case "number":
      return { axis: ".3~s", tooltip: ",.2~f" }
  }
}

const numericType = /int|numeric|decimal|real|double|float|money|number|bigint/i
const temporalType = /date|time/i

const fieldTypeOf = (type: string, values: ReadonlyArray<unknown>): typeof FieldType.Type =>
  numericType.test(type) || (values.length > 0 && values.every((v) => typeof v === "number" || v === null))
    ? "quantitative"
    : temporalType.test(type)
    ? "temporal"
    : "nominal"

const day = 86_400_000

/** The next period after `at` at the grain its series steps by (UTC dates, as results give them). */
const nextPeriod = (at: Date, step: number): Date => {
  if (step < 28 * day) return new Date(at.getTime() + step)
  const months = step < 89 * day ? 1 : step < 365 * day ? 3 : 12
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + months, at.getUTCDate()))
}

/**
 * A time series with a row of no value for each period it misses, so that its line breaks there
 * rather than joining the periods on either side as if they had been measured. The step is the
 * series' shortest (a day, a week, a month, a quarter, a year); each colour is its own series.
 */
const withGaps = (
  records: ReadonlyArray<Record<string, unknown>>,
  x: string,
  y: string,
  color: string | undefined
): ReadonlyArray<Record<string, unknown>> => {
  const at = (record: Record<string, unknown>) => new Date(String(record[x])).getTime()
  if (records.some((record) => Number.isNaN(at(record)))) return records
  const times = [...new Set(records.map(at))].sort((a, b) => a - b)
  const steps = times.slice(1).map((t, i) => t - times[i]!)
  if (steps.length === 0) return records
  const step = Math.min(...steps)
  // A series of irregular points (events, not periods) has no gaps to keep.
  if (step < day || steps.some((s) => s > step * 1_000)) return records
  const filled: Array<Record<string, unknown>> = []
  const series = Arr.groupBy(records, (record) => (color === undefined ? "" : String(record[color])))
  for (const [key, points] of Object.entries(series)) {
    const sorted = [...points].sort((a, b) => at(a) - at(b))
    sorted.forEach((point, i) => {
      filled.push(point)
      const next = sorted[i + 1]
      if (next === undefined) return
      for (let t = nextPeriod(new Date(at(point)), step); t.getTime() < at(next); t = nextPeriod(t, step)) {
        const text = String(point[x])
        // Written as the series writes its dates: a day, or a point in time.
        const when = /^\d{4}-\d\d-\d\d$/.test(text) ? t.toISOString().slice(0, 10) : t.toISOString()
        filled.push({ [x]: when, [y]: null, ...(color === undefined ? {} : { [color]: key }) })
      }
    })
  }
  return filled.length > maxChartRows ? records : filled
}

/**
 * Builds and validates the spec of a chart request over a result; `Left` says what is wrong, for the model.
 *
 * @since 0.1.0
 * @category utils
 */
export const build = (request: ChartRequest, data: Data): Either.Either<VegaLiteSpec, string> => {
  const names = data.columns.map((c) => c.name)
  const index = (name: string) => names.indexOf(name)
  for (const field of [request.x, request.y, ...(request.color === undefined ? [] : [request.color])]) {
    if (index(field) < 0) return Either.left(`no column ${field} in the result (columns: ${names.join(", ")})`)
  }
  const rows = data.rows.slice(0, maxChartRows)
  const column = (name: string) => rows.map((row) => row[index(name)])
  const channel = (name: string) => {
    const type = fieldTypeOf(data.columns[index(name)]!.type, column(name))
    return { field: name, type }
  }
  const y = channel(request.y)
  if (y.type !== "quantitative") return Either.left(`column ${request.y} is not numeric: it cannot size the marks`)
  const records = rows.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])))
  const values = (request.mark === "line" || request.mark === "area") && channel(request.x).type === "temporal"
    ? withGaps(records, request.x, request.y, request.color)
    : records
  const format = data.formats?.[request.y]
  const unit = data.units?.[request.y]
  // The unit is written beside the measure's name (`revenue (USD)`): a number alone does not say
  // which currency it is in.
  const title = unit === undefined ? {} : { title: `${request.y} (${unit})` }
  const measure = {
    ...y,
    ...title,
    ...(format === undefined ? {} : { axis: { format: numberFormats(format).axis } })
  }
  // Bars and slices keep the result's order: a ranking stays ranked, a series in time order.
  const category = { field: request.x, type: "nominal" as const, sort: null }
  // Bars over categories (a ranking) lie down, so that each name is written out whole; bars over
  // time stand, as a series does.
  const across = request.mark === "bar" && channel(request.x).type !== "temporal"
  const color = request.color === undefined ? {} : { color: { field: request.color, type: "nominal" as const } }
  const encoding = request.mark === "arc"
    ? { theta: y, color: category }
    : across
    ? { y: { ...category, axis: { labelLimit: 0 } }, x: measure, ...color }
    : { x: request.mark === "bar" ? category : channel(request.x), y: measure, ...color }
  const tooltip = format === undefined && unit === undefined ? {} : {
    tooltip: [
      ...names.filter((name) => name !== request.y && (name === request.x || name === request.color)).map((name) => ({
        field: name,
        type: name === request.x && !across && request.mark !== "bar" ? channel(name).type : ("nominal" as const)
      })),
      {
        field: request.y,
        type: "quantitative" as const,
        ...title,
        ...(format === undefined ? {} : { format: numberFormats(format).tooltip })
      }
    ]
  }
  const spec = {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json" as const,
    ...(request.title === undefined ? {} : { title: request.title }),
    width: "container" as const,
    data: { values },
    mark: { type: request.mark, tooltip: true as const },
    encoding: { ...encoding, ...tooltip }
  }
  return Either.mapLeft(
    Schema.decodeUnknownEither(VegaLiteSpec)(spec),
    (error) => `invalid chart: ${ParseResult.TreeFormatter.formatErrorSync(error)}`
  )
}

/**
 * A waterfall: the bridge from one total to another by each part of the change, each bar starting
 * where the one before ended (the totals from zero), coloured by whether it rose or fell.
 *
 * @since 0.1.0
 * @category utils
 */
export const waterfall = (
  title: string,
  measure: string,
  from: { readonly label: string; readonly value: number },
  parts: ReadonlyArray<{ readonly label: string; readonly change: number }>,
  to: { readonly label: string; readonly value: number }
): VegaLiteSpec => {
  let at = from.value
  const values = [
    { step: from.label, start: 0, end: from.value, kind: "total" },
    ...parts.map((part) => {
      const start = at
      at += part.change
      return { step: part.label, start, end: at, kind: part.change < 0 ? "fell" : "rose" }
    }),
    { step: to.label, start: 0, end: to.value, kind: "total" }
  ]
  return {
    $schema: "https://vega.github.io/schema/vega-lite/v6.json",
    title,
    width: "container",
    data: { values },
    mark: { type: "bar", tooltip: true },
    encoding: {
      x: { field: "step", type: "nominal", sort: null, title: "" },
      y: { field: "start", type: "quantitative", title: measure },
      y2: { field: "end" },
      color: { field: "kind", type: "nominal", title: "" }
    }
  }
}
