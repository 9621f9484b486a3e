/**
 * A dashboard delivered as a report: what a playbook with a `dashboard` sends instead of asking its
 * prompt.
 *
 * The tiles run as the playbook's owner (their row filters, their client attributes), with the
 * dashboard's default filters, through `Dashboards.query`: the same results the console shows them.
 * The run leaves a chat of its own, as a playbook's answer does: one cell per tile with its SQL,
 * reading and rows, and each chart as a chart cell. The report then has:
 * - a figure tile as its value and the change from the previous period;
 * - a chart tile as its PNG (`chart:<n>`), drawn by the `ChartRenderer` the reports use;
 * - a table tile as its first rows;
 * - a tile that failed as what went wrong, and the rest still goes out;
 * - a link to the dashboard in the console, where the server knows its public URL.
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Asset from "./Asset.js"
import { AssetStore } from "./AssetStore.js"
import type { ChartRenderer } from "./ChartRenderer.js"
import * as ChatRuns from "./ChatRuns.js"
import type * as Chats from "./Chats.js"
import { ConnectorRuntime } from "./ConnectorRuntime.js"
import type * as Dashboard from "./Dashboard.js"
import { Dashboards } from "./Dashboards.js"
import { IdGenerator } from "./IdGenerator.js"
import type { ChatId } from "./Ids.js"
import * as RunCells from "./internal/runCells.js"
import * as Tabular from "./internal/tabular.js"
import type * as Policy from "./Policy.js"
import * as Report from "./Report.js"
import * as SemanticModel from "./SemanticModel.js"
import * as SemanticReading from "./SemanticReading.js"

/**
 * The rows of a table tile a report lists (the dashboard has them all).
 *
 * @since 0.1.0
 * @category constants
 */
export const reportTableRows = 10

/**
 * A dashboard's run: its chat, the report, the PNGs its charts became and every asset it made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly chatId: ChatId
  readonly draft: Report.ReportDraft
  readonly images: ReadonlyArray<Report.ReportImage>
  readonly assets: ReadonlyArray<Asset.Asset>
}

const valueText = (value: unknown, format: SemanticModel.Format | undefined): string =>
  typeof value === "number" ? SemanticModel.formatValue(value, format) : value === null ? "—" : String(value)

/** A figure's value in its unit, and its change from the previous period where there is one. */
const figureText = (figure: Dashboard.Figure): string => {
  const unit = figure.unit === undefined || figure.format === "percent" ? "" : ` ${figure.unit}`
  const value = figure.value === null ? "no value" : `${valueText(figure.value, figure.format)}${unit}`
  const previous = figure.previous
  if (previous === undefined) return value
  const period = SemanticReading.periodWords(previous.start, previous.end)
  if (previous.change === undefined) {
    return `${value} (${period}: ${previous.value === null ? "no value" : valueText(previous.value, figure.format)})`
  }
  const percent = `${Math.abs(previous.change * 100).toFixed(1)}%`
  return `${value}, ${previous.change >= 0 ? "up" : "down"} ${percent} on ${period}`
}

/** A table tile's first rows, a line each, and how many more the dashboard has. */
const tableItems = (tile: Dashboard.TileResult): ReadonlyArray<string> => {
  const lines = tile.rows.slice(0, reportTableRows).map((row) =>
    row.map((value, i) => valueText(value, tile.columns[i]?.format)).join(" · ")
  )
  const more = tile.rows.length - reportTableRows
  return more > 0 ? [...lines, `… and ${more}${tile.truncated ? "+" : ""} more rows`] : lines
}

/**
 * The report of a dashboard's results; `charts` names the image of each chart tile by its index.
 *
 * @since 0.1.0
 * @category utils
 */
export const draftOf = (
  response: Dashboard.QueryResponse,
  options: { readonly charts: ReadonlyMap<number, string>; readonly link?: string | undefined }
): Report.ReportDraft => {
  const ok = response.tiles.filter((tile) => tile.status === "ok").length
  const blocks = response.tiles.map((tile): Report.Block => {
    if (tile.status === "failed") {
      return { type: "text", heading: tile.title, content: `This tile could not be read: ${tile.error ?? "failed"}` }
    }
    if (tile.figure !== undefined) return { type: "hero", heading: tile.title, content: figureText(tile.figure) }
    const chart = options.charts.get(tile.index)
    if (chart !== undefined) return { type: "image", image_url: chart, image_alt: tile.title, content: tile.title }
    return {
      type: "list",
      heading: `${tile.title} (${tile.columns.map((c) => c.name).join(" · ")})`,
      items: tableItems(tile)
    }
  })
  return {
    subject: response.title,
    summary: `${ok} of ${response.tiles.length} tiles of the ${response.title} dashboard, as they read now.`,
    blocks: options.link === undefined
      ? blocks
      : [...blocks, { type: "text", content: `Open the dashboard: ${options.link}` }]
  }
}

/**
 * How a snapshot is made.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly sign: Chats.SignAssetUrl
  /** The dashboard in the console, for the report's last line. */
  readonly link?: string | undefined
  /** Without one, a chart tile is reported as its rows. */
  readonly renderer: Option.Option<ChartRenderer.Service>
}

/**
 * What `snapshot` needs.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = Dashboards | ChatRuns.ChatRuns | ConnectorRuntime | AssetStore | IdGenerator

/**
 * Runs a dashboard as `principal` and writes its run: a chat with a cell per tile, the charts as
 * PNGs where a renderer is configured, and the report of it all.
 *
 * @since 0.1.0
 * @category constructors
 */
export const snapshot = (
  principal: Policy.Principal,
  name: string,
  options: Options
) =>
  Effect.gen(function*() {
    const dashboards = yield* Dashboards
    const runs = yield* ChatRuns.ChatRuns
    const response = yield* dashboards.query(principal, name, {})
    const { run } = yield* runs.start(principal, {
      question: `The ${response.title} dashboard`,
      connector_ids: [response.connector_id]
    }, { source: "playbook" })
    return yield* write(runs, run, response, options)
  })

const write = (
  runs: ChatRuns.ChatRuns.Service,
  run: ChatRuns.Run,
  response: Dashboard.QueryResponse,
  options: Options
) =>
  Effect.gen(function*() {
    const assets: Array<Asset.Asset> = []
    const cells = RunCells.make({
      runs,
      runtime: yield* ConnectorRuntime,
      assetStore: yield* AssetStore,
      ids: yield* IdGenerator
    }, {
      run,
      sign: options.sign,
      // Nobody follows this run as it goes: its cells are stored, and its chat shows them. Its
      // assets are the run's, as a playbook's answer lists them.
      emit: (event) => Effect.sync(() => event.type === "asset" && assets.push(event.asset)),
      // It runs no statement of its own: the tiles ran through `Dashboards.query`.
      clientAttributesJson: "{}",
      maxRows: 0,
      queryTimeoutMillis: 0,
      earlier: []
    })
    const charts = new Map<number, string>()
    for (const tile of response.tiles) {
      const cell = yield* cells.newCell("sql", {
        content: tile.title,
        ...(tile.sql === undefined ? {} : { query: tile.sql }),
        connector_id: response.connector_id,
        ...(tile.reading === undefined ? {} : { reading: tile.reading }),
        ...(tile.trusted === undefined ? {} : { trusted_source: tile.trusted })
      })
      if (tile.status === "failed") {
        yield* cells.endCell(cell, { status: "failed", error: tile.error ?? "failed", execution_time_ms: 0 }, [])
        continue
      }
      const names = tile.columns.map((c) => c.name)
      const count = `${tile.rows.length}${tile.truncated ? "+" : ""} rows`
      const { asset } = yield* cells.addAsset({
        cell_id: cell.id,
        name: tile.title,
        type: "table",
        mime_type: "application/json",
        content: JSON.stringify(
          {
            columns: tile.columns.map((c) => ({ name: c.name, type: c.type })),
            rows: tile.rows,
            row_count: tile.rows.length,
            truncated: tile.truncated
          } satisfies Asset.TableContent
        )
      })
      yield* cells.endCell(cell, {
        status: "completed",
        output: [count],
        dataframe_preview: Tabular.preview(names, tile.rows.slice(0, reportTableRows), count),
        execution_time_ms: 0
      }, [asset])
      if (tile.chart !== undefined && tile.figure === undefined) {
        const ref = yield* cells.drawChart(tile.title, tile.chart)
        // Without a renderer the mail could not show the chart: its rows stand in.
        if (Option.isSome(options.renderer)) charts.set(tile.index, ref)
      }
    }
    const draft = draftOf(response, { charts, link: options.link })
    const reportCell = yield* cells.newCell("report", { content: draft.subject })
    const numbers = [...charts.values()].flatMap((ref) => {
      const n = Report.chartNumber(ref)
      return n === undefined ? [] : [n]
    })
    const drawn = yield* cells.chartImages(reportCell.id, numbers, options.renderer)
    yield* cells.endCell(reportCell, {
      status: "completed",
      output: [`report with ${draft.blocks.length} blocks`],
      execution_time_ms: 0
    }, drawn.assets)
    yield* runs.complete(run, draft.summary, [])
    return { chatId: run.chatId, draft, images: drawn.images, assets } satisfies Snapshot
  }).pipe(
    // A run that cannot finish its cells ends as failed, rather than waiting to be found stale.
    Effect.tapErrorCause((cause) =>
      runs.finish(
        run,
        "failed",
        Option.match(Cause.failureOption(cause), {
          onNone: () => "the dashboard's run stopped",
          onSome: (e) => e.message
        })
      ).pipe(Effect.ignore)
    )
  )
