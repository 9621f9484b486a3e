/**
 * A dashboard tile's rows as they are shown: the period a figure compares with, the Vega-Lite
 * specification of a chart (`ChartSpec`), and a figure's value beside the period before.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as ChartSpec from "./ChartSpec.js"
import type * as Dashboard from "./Dashboard.js"

const addMonths = (date: string, months: number): string => {
  const [y, m, d] = date.split("-").map(Number) as [number, number, number]
  return new Date(Date.UTC(y, m - 1 + months, d)).toISOString().slice(0, 10)
}
const addDays = (date: string, days: number): string =>
  new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

/**
 * The period just before `start` ≤ t < `end`, as long as it: whole months back for a period of
 * whole months (March before April, 2024 before 2025, Q4 before Q1), else as many days back.
 *
 * @since 0.1.0
 * @category utils
 */
export const previousPeriod = (
  period: { readonly start: string; readonly end: string }
): { readonly start: string; readonly end: string } => {
  const [sy, sm, sd] = period.start.split("-").map(Number) as [number, number, number]
  const [ey, em, ed] = period.end.split("-").map(Number) as [number, number, number]
  const months = (ey - sy) * 12 + (em - sm)
  if (sd === 1 && ed === 1 && months > 0) return { start: addMonths(period.start, -months), end: period.start }
  const days = Math.round(
    (Date.parse(`${period.end}T00:00:00Z`) - Date.parse(`${period.start}T00:00:00Z`)) / 86_400_000
  )
  return { start: addDays(period.start, -days), end: period.start }
}

const numericValues = (rows: ReadonlyArray<ReadonlyArray<unknown>>, i: number) =>
  rows.length > 0 && rows.every((row) => typeof row[i] === "number" || row[i] === null)

/** The columns a tile draws on its channels: the file's, else the query's first of each kind. */
const channels = (
  visualization: Dashboard.Visualization,
  columns: ReadonlyArray<Dashboard.TileColumn>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
) => {
  const measures = columns.filter((c, i) => c.kind === "metric" || (c.kind === undefined && numericValues(rows, i)))
  const others = columns.filter((c) => !measures.includes(c))
  const time = others.find((c) => c.kind === "time")
  const x = visualization.x ??
    (visualization.type === "line" || visualization.type === "area" ? time ?? others[0] : others[0] ?? time)?.name
  const color = visualization.color ??
    (visualization.type === "stacked_bar" || visualization.type === "line" || visualization.type === "area"
      ? others.find((c) => c.name !== x)?.name
      : undefined)
  return { x, y: visualization.y ?? measures[0]?.name, color }
}

/**
 * The Vega-Lite specification of a tile's rows, for any host to draw: `undefined` for a figure and
 * a table, which are drawn as numbers; `Left` when the rows do not fit the drawing (no numeric
 * column, a named column missing).
 *
 * @since 0.1.0
 * @category utils
 */
export const chartOf = (
  tile: Dashboard.Tile,
  columns: ReadonlyArray<Dashboard.TileColumn>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>
): Either.Either<ChartSpec.VegaLiteSpec, string> | undefined => {
  const type = tile.visualization.type
  if (type === "figure" || type === "table") return undefined
  const { color, x, y } = channels(tile.visualization, columns, rows)
  if (x === undefined || y === undefined) {
    return Either.left(`a ${type} needs a column to draw along and a numeric column to draw`)
  }
  if (type === "waterfall") {
    // A running total: each row a step from where the one before ended, then the total.
    const xi = columns.findIndex((c) => c.name === x)
    const yi = columns.findIndex((c) => c.name === y)
    if (xi < 0 || yi < 0) return Either.left(`no column ${xi < 0 ? x : y} in the tile's rows`)
    const steps = rows.map((row) => ({ label: String(row[xi]), change: Number(row[yi] ?? 0) }))
    const [first, ...rest] = steps
    if (first === undefined) return Either.left("no rows to draw")
    const total = steps.reduce((sum, step) => sum + step.change, 0)
    return Either.right(ChartSpec.waterfall(tile.title, y, { label: first.label, value: first.change }, rest, {
      label: "Total",
      value: total
    }))
  }
  return ChartSpec.build(
    {
      title: tile.title,
      mark: type === "stacked_bar" ? "bar" : type,
      x,
      y,
      ...(color === undefined ? {} : { color })
    },
    {
      columns: columns.map((c) => ({ name: c.name, type: c.type ?? (c.kind === "time" ? "date" : "") })),
      rows,
      ...ChartSpec.describedBy(columns)
    }
  )
}

/**
 * The figure of a tile's rows (its first row's first metric), with the previous period's rows when
 * it compares.
 *
 * @since 0.1.0
 * @category utils
 */
export const figureOf = (
  columns: ReadonlyArray<Dashboard.TileColumn>,
  rows: ReadonlyArray<ReadonlyArray<unknown>>,
  previous?: {
    readonly start: string
    readonly end: string
    readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
  }
): Dashboard.Figure | undefined => {
  const i = columns.findIndex((c, i) => c.kind === "metric" || (c.kind === undefined && numericValues(rows, i)))
  if (i < 0) return undefined
  const valueOf = (rows: ReadonlyArray<ReadonlyArray<unknown>>) => {
    const value = rows[0]?.[i]
    return typeof value === "number" ? value : value === null || value === undefined ? null : Number(value)
  }
  const value = valueOf(rows)
  const before = previous === undefined ? undefined : valueOf(previous.rows)
  const { format, unit } = columns[i]!
  return {
    column: columns[i]!.name,
    value,
    ...(format === undefined ? {} : { format }),
    ...(unit === undefined ? {} : { unit }),
    ...(previous === undefined ? {} : {
      previous: {
        start: previous.start,
        end: previous.end,
        value: before ?? null,
        ...(value !== null && before !== null && before !== undefined && before !== 0
          ? { change: (value - before) / Math.abs(before) }
          : {})
      }
    })
  }
}
