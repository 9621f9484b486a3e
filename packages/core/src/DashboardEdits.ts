/**
 * Changes to a dashboard file, as text: tiles added (pinned, built by the agent) where the grid has
 * room, and tiles renamed or moved, each value replaced where it stands, so that a change's diff is
 * the edit alone and every comment stays.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Record from "effect/Record"
import * as Yaml from "yaml"
import * as Dashboard from "./Dashboard.js"
import * as YamlFile from "./internal/yamlFile.js"

/**
 * How a pinned query is drawn: a figure when it has neither dimensions nor a grain, a line over a
 * grain, bars over one dimension, stacked bars over two, else a table.
 *
 * @since 0.1.0
 * @category utils
 */
export const visualizationOf = (query: Dashboard.TileQuery): Dashboard.Visualization => {
  if (!("semantic" in query)) return { type: "table" }
  const semantic = query.semantic
  const dimensions = semantic.dimensions?.length ?? 0
  const grain = semantic.time?.grain !== undefined
  if (semantic.metrics.length === 0) return { type: "table" }
  if (!grain && dimensions === 0) return { type: "figure" }
  if (grain && dimensions <= 1) return { type: "line" }
  if (!grain && dimensions === 1) return { type: "bar" }
  if (!grain && dimensions === 2) return { type: "stacked_bar" }
  return { type: "table" }
}

/** A tile's size on the grid by how it is drawn: a figure is small, a table wide. */
const sizeOf = (type: Dashboard.VisualizationType): { readonly w: number; readonly h: number } =>
  type === "figure" ? { w: 3, h: 2 } : type === "table" ? { w: 12, h: 4 } : { w: 6, h: 4 }

/** Where a tile of this drawing goes after `tiles`: beside the last row's when there is room, else under them. */
const placed = (
  tiles: ReadonlyArray<{ readonly layout: Dashboard.Layout }>,
  type: Dashboard.VisualizationType
): Dashboard.Layout => {
  const { h, w } = sizeOf(type)
  const bottom = Math.max(0, ...tiles.map((t) => t.layout.y + t.layout.h))
  const lastRow = tiles.filter((t) => t.layout.y + t.layout.h === bottom)
  const rowTop = Math.min(bottom, ...lastRow.map((t) => t.layout.y))
  const right = Math.max(0, ...lastRow.map((t) => t.layout.x + t.layout.w))
  const beside = lastRow.length > 0 && right + w <= Dashboard.gridColumns &&
    !tiles.some((t) => Dashboard.overlaps(t.layout, { x: right, y: rowTop, w, h }))
  return beside ? { x: right, y: rowTop, w, h } : { x: 0, y: bottom, w, h }
}

/**
 * A dashboard file with more tiles: appended to the file's text (its comments and order kept), or
 * a new dashboard of those tiles on `connector`, titled `fresh.title` (else after its name). Each
 * tile goes beside the last row's tiles when there is room, else under them, and its title is told
 * apart from the others'. `Left` says why they cannot be added (the file does not read, another
 * connector governs it).
 *
 * @since 0.1.0
 * @category utils
 */
export const withTiles = (
  name: string,
  text: string | undefined,
  connector: string,
  added: ReadonlyArray<Dashboard.NewTile>,
  fresh: {
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly filters?: Dashboard.DashboardFile["filters"] | undefined
  } = {}
): Either.Either<{ readonly text: string; readonly indexes: ReadonlyArray<number> }, string> => {
  const path = Dashboard.pathOf(name)
  const existing = text === undefined ? undefined : Dashboard.parse(path, text)
  if (existing !== undefined && Either.isLeft(existing)) {
    return Either.left(`${path} does not read: ${existing.left.map(Dashboard.formatProblem).join("; ")}`)
  }
  const file = existing?.right
  if (file !== undefined && file.connector !== connector) {
    return Either.left(`${path} shows connector ${file.connector}, not ${connector}: add it to another dashboard`)
  }
  const tiles: Array<{ readonly title: string; readonly layout: Dashboard.Layout }> = [...(file?.tiles ?? [])]
  const indexes: Array<number> = []
  let edited = text
  for (const tile of added) {
    const titles = new Set(tiles.map((t) => t.title))
    let title = tile.title.slice(0, 190)
    for (let n = 2; titles.has(title); n++) title = `${tile.title.slice(0, 190)} (${n})`
    const layout = placed(tiles, tile.visualization.type)
    const next = YamlFile.appendTo(
      edited,
      "tiles",
      Record.filter(Predicate.isNotUndefined)({ ...tile, title, layout }),
      Record.filter(Predicate.isNotUndefined)({
        title: fresh.title ?? name.replace(/[-_]+/g, " ").replace(/^./, (c) => c.toUpperCase()),
        description: fresh.description,
        connector,
        filters: fresh.filters,
        tiles: []
      })
    )
    if (Option.isNone(next)) return Either.left(`${path} does not read as YAML with a list of tiles`)
    edited = next.value
    indexes.push(tiles.length)
    tiles.push({ title, layout })
  }
  if (edited === undefined) return Either.left("no tiles to add")
  // What is filed must read as a dashboard: the checks would refuse it otherwise.
  const done = edited
  return Either.map(
    Either.mapLeft(Dashboard.parse(path, done), (problems) => problems.map(Dashboard.formatProblem).join("; ")),
    () => ({ text: done, indexes })
  )
}

/**
 * A dashboard file with one more tile (see `withTiles`).
 *
 * @since 0.1.0
 * @category utils
 */
export const withTile = (
  name: string,
  text: string | undefined,
  connector: string,
  tile: Dashboard.NewTile
): Either.Either<{ readonly text: string; readonly index: number }, string> =>
  Either.map(withTiles(name, text, connector, [tile]), ({ indexes, text }) => ({ text, index: indexes[0]! }))

/**
 * A dashboard file with tiles renamed or moved, its comments and everything else kept; `Left` says
 * why not (a tile that does not exist, a grid the edit breaks, naming the tile and line).
 *
 * @since 0.1.0
 * @category utils
 */
export const edited = (
  path: string,
  text: string,
  edits: Dashboard.EditRequest["tiles"]
): Either.Either<string, string> => {
  const document = Yaml.parseDocument(text)
  if (document.errors.length > 0) return Either.left(`${path} does not read as YAML`)
  const tiles = document.get("tiles")
  if (!Yaml.isSeq(tiles)) return Either.left(`${path} has no list of tiles`)
  // Each value is replaced where it stands in the text, so that the change's diff is the edit alone.
  const replacements: Array<{ readonly start: number; readonly end: number; readonly text: string }> = []
  for (const [i, edit] of edits.entries()) {
    if (edit.index >= tiles.items.length) {
      return Either.left(`tiles.${edit.index}: the dashboard has ${tiles.items.length} tiles`)
    }
    if (edits.findIndex((other) => other.index === edit.index) < i) {
      return Either.left(`tiles.${edit.index}: edited twice; give its title and layout in one edit`)
    }
    for (
      const [key, value] of [
        ["title", edit.title === undefined ? undefined : Yaml.stringify(edit.title, { lineWidth: 0 }).trimEnd()],
        [
          "layout",
          edit.layout === undefined
            ? undefined
            : `{ x: ${edit.layout.x}, y: ${edit.layout.y}, w: ${edit.layout.w}, h: ${edit.layout.h} }`
        ]
      ] as const
    ) {
      if (value === undefined) continue
      const node = document.getIn(["tiles", edit.index, key], true)
      const range = Yaml.isNode(node) ? node.range : undefined
      if (range === undefined || range === null) return Either.left(`tiles.${edit.index} has no ${key} to replace`)
      replacements.push({ start: range[0], end: range[1], text: value })
    }
  }
  let next = text
  for (const { end, start, text: value } of replacements.sort((a, b) => b.start - a.start)) {
    // A block mapping's range takes in its last line break: it stays.
    const trailing = /\s*$/.exec(next.slice(start, end))![0]
    next = `${next.slice(0, start)}${value}${trailing}${next.slice(end)}`
  }
  return Either.map(
    Either.mapLeft(Dashboard.parse(path, next), (problems) => problems.map(Dashboard.formatProblem).join("; ")),
    () => next
  )
}
