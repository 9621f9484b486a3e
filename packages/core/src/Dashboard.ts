/**
 * Dashboards as library files: `dashboards/<name>.yaml` in the Context Library, so a dashboard
 * gets review, history and checks as every other library file does.
 *
 * A dashboard names the connector whose semantic model governs it, the filters its tiles share (a
 * dimension's values, the period and its grain), and its tiles. A tile is a query (a semantic
 * query, a verified query with its parameters, or SQL where the caller may run SQL), how it is
 * drawn, which shared filters it follows, and where it sits on a 12-column grid. `parse` reads a
 * file with every problem naming the file and the line, as semantic models are read;
 * `tileQuery` is the semantic query a tile runs under the filters' current values; `check`
 * compiles every tile against the governing model, for a change's checks.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as Yaml from "yaml"
import * as Change from "./Change.js"
import * as ChartSpec from "./ChartSpec.js"
import { ConnectorId } from "./Ids.js"
import * as YamlFile from "./internal/yamlFile.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import type * as SemanticModel from "./SemanticModel.js"
import * as SemanticQuery from "./SemanticQuery.js"

/**
 * The folder of the library that holds dashboards.
 *
 * @since 0.1.0
 * @category constants
 */
export const folder = "dashboards/"

/**
 * Whether a library path is a dashboard file.
 *
 * @since 0.1.0
 * @category guards
 */
export const isDashboardPath = (path: string): boolean =>
  path.startsWith(folder) && /^[a-z0-9][a-z0-9_-]*\.ya?ml$/.test(path.slice(folder.length))

/**
 * A dashboard's name from its path (`dashboards/sales.yaml` → `sales`).
 *
 * @since 0.1.0
 * @category utils
 */
export const nameOf = (path: string): string => path.slice(folder.length).replace(/\.ya?ml$/, "")

/**
 * The grid's width, in columns.
 *
 * @since 0.1.0
 * @category constants
 */
export const gridColumns = 12

/**
 * Where a tile sits: its column and row, and its width and height in cells.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Layout = Schema.Struct({
  x: Schema.Int.pipe(Schema.between(0, gridColumns - 1)),
  y: Schema.Int.pipe(Schema.between(0, 1_000)),
  w: Schema.Int.pipe(Schema.between(1, gridColumns)),
  h: Schema.Int.pipe(Schema.between(1, 24))
})
export type Layout = typeof Layout.Type

/**
 * What a tile runs: a semantic query of the governing model, a verified query of it with its
 * parameters, or SQL (only where the caller may run SQL on the connector).
 *
 * @since 0.1.0
 * @category schemas
 */
export const TileQuery = Schema.Union(
  Schema.Struct({ semantic: SemanticQuery.SemanticQuery }),
  Schema.Struct({
    verified: Schema.String,
    params: Schema.optional(
      Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })
    )
  }),
  Schema.Struct({ sql: Schema.String.pipe(Schema.minLength(1)) })
)
export type TileQuery = typeof TileQuery.Type

/**
 * How a tile is drawn.
 *
 * @since 0.1.0
 * @category schemas
 */
export const VisualizationType = Schema.Literal("figure", "line", "bar", "stacked_bar", "area", "table", "waterfall")
export type VisualizationType = typeof VisualizationType.Type

/**
 * A tile's drawing: its type and the result columns on its channels (the query's own order of
 * columns when absent).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Visualization = Schema.Struct({
  type: VisualizationType,
  x: Schema.optional(Schema.String),
  y: Schema.optional(Schema.String),
  color: Schema.optional(Schema.String),
  /** A figure beside the same figure over the previous period. */
  compare: Schema.optional(Schema.Literal("previous_period"))
})
export type Visualization = typeof Visualization.Type

/**
 * A tile.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Tile = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  query: TileQuery,
  visualization: Visualization,
  /** The shared filters it follows: `time`, or a filter's dimension; all of them when absent. */
  follows: Schema.optional(Schema.Array(Schema.String)),
  layout: Layout
})
export type Tile = typeof Tile.Type

/**
 * A filter the tiles share: a dimension, with the values it starts with (none: every value).
 *
 * @since 0.1.0
 * @category schemas
 */
export const DimensionFilter = Schema.Struct({
  dimension: Schema.String,
  values: Schema.optional(Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean)))
})
export type DimensionFilter = typeof DimensionFilter.Type

/**
 * A dashboard file.
 *
 * @since 0.1.0
 * @category schemas
 */
export const DashboardFile = Schema.Struct({
  title: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  description: Schema.optional(Schema.String),
  /** The connector whose semantic model governs the tiles, by name. */
  connector: Schema.String,
  filters: Schema.optional(Schema.Struct({
    dimensions: Schema.optional(Schema.Array(DimensionFilter)),
    /** The period and grain the tiles start with. */
    time: Schema.optional(SemanticQuery.TimeSelection)
  })),
  /** How long a tile's rows are kept for the next viewer (seconds); until the library's main moves when absent. */
  cache_seconds: Schema.optional(Schema.Int.pipe(Schema.between(0, 7 * 86_400))),
  tiles: Schema.NonEmptyArray(Tile)
})
export type DashboardFile = typeof DashboardFile.Type

/**
 * What is wrong with a dashboard file, where.
 *
 * @since 0.1.0
 * @category models
 */
export type Problem = YamlFile.Problem

/**
 * A problem as one line: `dashboards/sales.yaml:12: ...`.
 *
 * @since 0.1.0
 * @category utils
 */
export const formatProblem = YamlFile.formatProblem

/** The line of the node at `path` in the file's YAML (for problems found after decoding). */
const lineAt = (text: string, path: ReadonlyArray<string | number>): number | undefined => {
  const lineCounter = new Yaml.LineCounter()
  const document = Yaml.parseDocument(text, { lineCounter })
  const node = document.getIn(path as Array<PropertyKey>, true)
  const range = Yaml.isNode(node) ? node.range : undefined
  return range === undefined || range === null ? undefined : lineCounter.linePos(range[0]).line
}

/**
 * Do two tiles' places on the grid share a cell?
 *
 * @since 0.1.0
 * @category utils
 */
export const overlaps = (a: Layout, b: Layout): boolean =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h

/** The names a tile may follow: `time`, and each shared dimension. */
const followable = (file: DashboardFile): ReadonlyArray<string> => [
  "time",
  ...(file.filters?.dimensions ?? []).map((filter) => filter.dimension)
]

/**
 * Reads a dashboard file: YAML, then the format (unknown keys are problems), then what the format
 * alone cannot say: tiles inside the grid and not on each other, titles told apart, and followed
 * filters that exist. Every problem names the file and, where it has one, the line.
 *
 * @since 0.1.0
 * @category utils
 */
export const parse = (path: string, text: string): Either.Either<DashboardFile, ReadonlyArray<Problem>> =>
  Either.flatMap(YamlFile.decode(DashboardFile, path, text), (file) => {
    const problems: Array<Problem> = []
    const at = (tile: number, message: string, ...key: Array<string>) =>
      problems.push({ path, line: lineAt(text, ["tiles", tile, ...key]), message: `tiles.${tile}: ${message}` })
    const names = followable(file)
    file.tiles.forEach((tile, i) => {
      if (tile.layout.x + tile.layout.w > gridColumns) {
        at(
          i,
          `the tile reaches past the grid's ${gridColumns} columns (x ${tile.layout.x} + w ${tile.layout.w})`,
          "layout"
        )
      }
      const covered = file.tiles.findIndex((other, j) => j < i && overlaps(other.layout, tile.layout))
      if (covered >= 0) at(i, `the tile lies over tiles.${covered} (${file.tiles[covered]!.title})`, "layout")
      if (file.tiles.findIndex((other) => other.title === tile.title) < i) {
        at(i, `another tile is titled ${JSON.stringify(tile.title)}`, "title")
      }
      for (const name of tile.follows ?? []) {
        if (!names.includes(name)) {
          at(i, `follows ${name}, which is not a shared filter (${names.join(", ")})`, "follows")
        }
      }
    })
    return problems.length === 0 ? Either.right(file) : Either.left(problems)
  })

/**
 * Values of the shared filters, as a viewer sets them: a dimension's values (empty: every value),
 * and the period.
 *
 * @since 0.1.0
 * @category models
 */
export interface FilterValues {
  readonly dimensions?: Readonly<Record<string, ReadonlyArray<string | number | boolean>>> | undefined
  readonly time?: SemanticQuery.TimeSelection | undefined
}

/**
 * The semantic query a tile runs under the shared filters: their defaults, replaced by `values`
 * where the viewer set them, for the filters it follows. A tile's own filters stay (a shared
 * filter narrows a tile, never widens it), and so does its own period, until the viewer picks one.
 *
 * @since 0.1.0
 * @category utils
 */
export const tileQuery = (
  file: DashboardFile,
  tile: Tile,
  values: FilterValues = {}
): SemanticQuery.SemanticQuery | undefined => {
  if (!("semantic" in tile.query)) return undefined
  const query = tile.query.semantic
  const follows = (name: string) => tile.follows === undefined || tile.follows.includes(name)
  const shared = (file.filters?.dimensions ?? []).flatMap((filter): Array<SemanticQuery.DimensionFilter> => {
    const chosen = values.dimensions?.[filter.dimension] ?? filter.values ?? []
    return follows(filter.dimension) && Arr.isNonEmptyReadonlyArray(chosen)
      ? [{ dimension: filter.dimension, operator: "in", values: chosen }]
      : []
  })
  const period = values.time ?? file.filters?.time
  const own = query.time
  // The shared grain switches the grain of a tile that has one (a series by month, then by week);
  // it never makes a series of a figure. A tile's own period (an answer pinned with "last year")
  // stands against the dashboard's default, and gives way to a period the viewer picks: the period
  // picker moves every tile that follows time.
  const keepsOwn = values.time === undefined &&
    (own?.start !== undefined || own?.end !== undefined || own?.periods !== undefined)
  const time = !follows("time") || period === undefined ? own : withoutUndefined({
    dimension: own?.dimension ?? period.dimension,
    grain: own?.grain === undefined ? undefined : period.grain ?? own.grain,
    start: keepsOwn ? own?.start : period.start,
    end: keepsOwn ? own?.end : period.end,
    periods: keepsOwn ? own?.periods : period.periods
  })
  return {
    ...query,
    ...(time === undefined || Object.keys(time).length === 0 ? {} : { time }),
    ...(shared.length === 0 ? {} : { filters: [...(query.filters ?? []), ...shared] })
  }
}

const withoutUndefined = <A extends object>(value: A): A =>
  Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as A

/**
 * Compiles every semantic tile, at the filters' defaults, against the governing model: the
 * problems of those that do not compile, naming the tile and its line. A change that edits a
 * dashboard fails its check on any.
 *
 * @since 0.1.0
 * @category utils
 */
export const check = (
  path: string,
  text: string,
  file: DashboardFile,
  model: SemanticModel.SemanticModel,
  dialect: SemanticCompiler.DialectName
): ReadonlyArray<Problem> =>
  file.tiles.flatMap((tile, i) => {
    const where = { path, line: lineAt(text, ["tiles", i, "query"]) }
    if ("verified" in tile.query) {
      const name = tile.query.verified
      return model.verifiedQueries.some((query) => query.name === name)
        ? []
        : [{ ...where, message: `tiles.${i} (${tile.title}): the model has no verified query ${name}` }]
    }
    const query = tileQuery(file, tile)
    if (query === undefined) return []
    return Either.match(SemanticCompiler.compile(model, query, dialect), {
      onLeft: (error) => [{ ...where, message: `tiles.${i} (${tile.title}): ${error.message}` }],
      onRight: () => []
    })
  })

// ---------------------------------------------------------------------------------------------
// A tile's result
// ---------------------------------------------------------------------------------------------

/**
 * A result column as a tile reads it: its name, its database type where the database said, and,
 * for a semantic query, what it is (a dimension, the time, a metric) and its metric's format.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TileColumn = Schema.Struct({
  name: Schema.String,
  type: Schema.optional(Schema.String),
  kind: Schema.optional(Schema.Literal("dimension", "time", "metric")),
  format: SemanticQuery.ResultColumn.fields.format,
  unit: SemanticQuery.ResultColumn.fields.unit
})
export type TileColumn = typeof TileColumn.Type

/**
 * The most rows a tile runs for: as many as a chart draws.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxTileRows = ChartSpec.maxChartRows

/**
 * A figure: the tile's first metric over its period, and over the period before when it compares.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Figure = Schema.Struct({
  /** The measure shown. */
  column: Schema.String,
  value: Schema.NullOr(Schema.Number),
  format: SemanticQuery.ResultColumn.fields.format,
  unit: SemanticQuery.ResultColumn.fields.unit,
  previous: Schema.optional(Schema.Struct({
    start: SemanticQuery.CalendarDate,
    end: SemanticQuery.CalendarDate,
    value: Schema.NullOr(Schema.Number),
    /** `(value - previous) / previous`; absent when the previous value is zero or none. */
    change: Schema.optional(Schema.Number)
  }))
})
export type Figure = typeof Figure.Type

// ---------------------------------------------------------------------------------------------
// Names and new tiles
// ---------------------------------------------------------------------------------------------

/**
 * A dashboard's name, as its file is named (`dashboards/<name>.yaml`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Name = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: () => "a dashboard's name is 1 to 64 lowercase letters, digits, - and _, starting with a letter or digit"
  })
)

/**
 * The library path of a dashboard.
 *
 * @since 0.1.0
 * @category utils
 */
export const pathOf = (name: string): string => `${folder}${name}.yaml`

/**
 * A tile to add: where it goes is decided on adding.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NewTile = Schema.Struct({
  title: Tile.fields.title,
  query: TileQuery,
  visualization: Visualization,
  follows: Tile.fields.follows
})
export type NewTile = typeof NewTile.Type

// ---------------------------------------------------------------------------------------------
// The API's shapes
// ---------------------------------------------------------------------------------------------

/**
 * A dashboard in a list: what it is called and shows, or why it does not read.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Summary = Schema.Struct({
  name: Schema.String,
  path: Schema.String,
  title: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String),
  connector: Schema.optional(Schema.String),
  tiles: Schema.optional(Schema.Int),
  /** Why the file on main does not read as a dashboard (only a direct write to the store puts one there). */
  problems: Schema.optional(Schema.Array(Schema.String))
}).annotations({ identifier: "DashboardSummary" })
export type Summary = typeof Summary.Type

/**
 * The response of `GET /v2/dashboards`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListResponse = Schema.Struct({
  /** The library commit read; absent while the library is empty. */
  commit: Schema.optional(Schema.String),
  dashboards: Schema.Array(Summary)
}).annotations({ identifier: "DashboardList" })
export type ListResponse = typeof ListResponse.Type

/**
 * The response of `GET /v2/dashboards/{name}`: the definition, at a library commit.
 *
 * @since 0.1.0
 * @category schemas
 */
export const View = Schema.Struct({
  name: Schema.String,
  path: Schema.String,
  commit: Schema.String,
  definition: DashboardFile
}).annotations({ identifier: "Dashboard" })
export type View = typeof View.Type

/**
 * The body of `POST /v2/dashboards/{name}/query`: values of the shared filters (their defaults
 * where absent).
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryRequest = Schema.Struct({
  filters: Schema.optional(Schema.Struct({
    /** A shared dimension's values; an empty list reads every value. */
    dimensions: Schema.optional(
      Schema.Record({
        key: Schema.String,
        value: Schema.Array(Schema.Union(Schema.String, Schema.Number, Schema.Boolean)).pipe(Schema.maxItems(100))
      })
    ),
    /** The period and grain, in place of the dashboard's. */
    time: Schema.optional(SemanticQuery.TimeSelection)
  }))
}).annotations({ identifier: "DashboardQueryRequest" })
export type QueryRequest = typeof QueryRequest.Type

/**
 * One tile's result: its rows, how its query was read, whether a reviewed definition vouches for
 * it, and how to draw it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TileResult = Schema.Struct({
  index: Schema.Int,
  title: Schema.String,
  visualization: Visualization,
  layout: Layout,
  status: Schema.Literal("ok", "failed"),
  /** Why the tile has no rows (`failed`): the others are still answered. */
  error: Schema.optional(Schema.String),
  /** The statement run, with the caller's client attributes bound by the database. */
  sql: Schema.optional(Schema.String),
  columns: Schema.Array(TileColumn),
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  truncated: Schema.Boolean,
  /** How a semantic query read the tile: its metric and definition, dimensions, filters, period. */
  reading: Schema.optional(SemanticQuery.Reading),
  /** The reviewed definition the rows were computed from (a library metric or verified query). */
  trusted: Schema.optional(SemanticQuery.TrustedSource),
  /** The tile's Vega-Lite specification (absent for a figure and a table). */
  chart: Schema.optional(ChartSpec.VegaLiteSpec),
  figure: Schema.optional(Figure),
  /** The result was kept from an earlier run of the tile at this commit, with these filters and client attributes. */
  cached: Schema.Boolean
}).annotations({ identifier: "DashboardTileResult" })
export type TileResult = typeof TileResult.Type

/**
 * The response of `POST /v2/dashboards/{name}/query`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const QueryResponse = Schema.Struct({
  name: Schema.String,
  title: Schema.String,
  commit: Schema.String,
  connector_id: ConnectorId,
  tiles: Schema.Array(TileResult)
}).annotations({ identifier: "DashboardQueryResponse" })
export type QueryResponse = typeof QueryResponse.Type

/**
 * The body of `POST /v2/chats/{id}/cells/{cellId}/pin`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PinRequest = Schema.Struct({
  /** The dashboard to add the tile to: created when there is none. */
  dashboard: Name,
  /** The tile's title: the answer's question when absent. */
  title: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(190)))
}).annotations({ identifier: "PinRequest" })
export type PinRequest = typeof PinRequest.Type

/**
 * The response of a pin: the tile's place, and the library change that adds it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PinResult = Schema.Struct({
  path: Schema.String,
  /** The tile's index in the dashboard once the change merges. */
  tile: Schema.Int,
  change: Change.LibraryChangeResult
}).annotations({ identifier: "PinResult" })
export type PinResult = typeof PinResult.Type

/**
 * A dashboard to build, or tiles to add to one (`build_dashboard`): the tiles are placed on the
 * grid in their order; a dashboard that exists keeps its title, filters and tiles.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BuildRequest = Schema.Struct({
  connector_id: ConnectorId.annotations({
    description: "The connector whose library semantic model governs the tiles"
  }),
  name: Name.annotations({
    description: "The dashboard's file name: dashboards/<name>.yaml (an existing one is added to)"
  }),
  title: Schema.optional(DashboardFile.fields.title),
  description: Schema.optional(Schema.String.pipe(Schema.maxLength(1_000))),
  filters: DashboardFile.fields.filters,
  tiles: Schema.Array(NewTile).pipe(Schema.minItems(1), Schema.maxItems(16))
}).annotations({ identifier: "BuildDashboardRequest" })
export type BuildRequest = typeof BuildRequest.Type

/**
 * What building a dashboard filed: its file, where the new tiles are, and the library change.
 *
 * @since 0.1.0
 * @category schemas
 */
export const BuildResult = Schema.Struct({
  path: Schema.String,
  tiles: Schema.Array(Schema.Int),
  change: Change.LibraryChangeResult
}).annotations({ identifier: "BuildDashboardResult" })
export type BuildResult = typeof BuildResult.Type

/**
 * The body of `POST /v2/dashboards/{name}/edit`: tiles renamed or moved, by index.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EditRequest = Schema.Struct({
  tiles: Schema.Array(Schema.Struct({
    index: Schema.Int.pipe(Schema.nonNegative()),
    title: Schema.optional(Tile.fields.title),
    layout: Schema.optional(Layout)
  })).pipe(Schema.minItems(1), Schema.maxItems(64))
}).annotations({ identifier: "EditDashboardRequest" })
export type EditRequest = typeof EditRequest.Type

/**
 * The response of an edit: the library change that makes it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const EditResult = Schema.Struct({
  path: Schema.String,
  change: Change.LibraryChangeResult
}).annotations({ identifier: "EditDashboardResult" })
export type EditResult = typeof EditResult.Type
