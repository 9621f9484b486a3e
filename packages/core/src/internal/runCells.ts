/**
 * What one run of the agent writes as it goes: its cells, each written when it starts and when it
 * ends; the assets they hold; statements run as cells with their table, CSV and preview; and charts.
 * It keeps what the run's later tools read back: the last result (`create_chart`, `run_python`),
 * the charts drawn (`write_report`) and the semantic queries `based_on` may name.
 *
 * The tools (`AnswerHandlers`) decide what a call does; this module is how a call leaves its trace.
 */
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { RunConnector } from "../AnswerPrompt.js"
import { modelRows } from "../AnswerTools.js"
import * as Asset from "../Asset.js"
import type { AssetStore } from "../AssetStore.js"
import type * as ChartRenderer from "../ChartRenderer.js"
import * as ChartSpec from "../ChartSpec.js"
import * as Chat from "../Chat.js"
import type * as ChatEvent from "../ChatEvent.js"
import type * as ChatRuns from "../ChatRuns.js"
import type * as Chats from "../Chats.js"
import type * as ConnectorRuntime from "../ConnectorRuntime.js"
import type { Conflict } from "../Errors.js"
import type { IdGenerator } from "../IdGenerator.js"
import { AssetId, CellId } from "../Ids.js"
import type * as LanguageModel from "../LanguageModel.js"
import * as Report from "../Report.js"
import type * as SemanticQuery from "../SemanticQuery.js"
import * as ToolResult from "../ToolResult.js"
import * as Tabular from "./tabular.js"
import * as Utf8 from "./utf8.js"

/** The rows a `table` asset keeps inline (the CSV download has all of them). */
export const tableAssetRows = 1_000

/** The last successful query of a run: what `create_chart` draws and `run_python` loads. */
export interface LastResult extends ChartSpec.Data {
  readonly cellId: CellId
}

/** A semantic query of the chat that `based_on` may name, by its cell. */
export interface Refinable {
  readonly connectorId: number
  readonly query: SemanticQuery.SemanticQuery
}

/** One statement run as a cell: what the model is told, and the rows for a tool that reads them further. */
export interface Ran {
  readonly result: ToolResult.ToolResult
  readonly cellId: CellId
  readonly table: ChartSpec.Data | undefined
  readonly error?: string
}

export interface Services {
  readonly runs: ChatRuns.ChatRuns.Service
  readonly runtime: ConnectorRuntime.ConnectorRuntime.Service
  readonly assetStore: AssetStore.Service
  readonly ids: IdGenerator.Service
}

export interface Context {
  readonly run: ChatRuns.Run
  readonly sign: Chats.SignAssetUrl
  readonly emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>
  readonly clientAttributesJson: string
  readonly maxRows: number
  readonly queryTimeoutMillis: number
  readonly earlier: ReadonlyArray<LanguageModel.EarlierAnswer>
}

export const make = (services: Services, context: Context) => {
  const { assetStore, ids, runs, runtime } = services
  const { emit, run, sign } = context
  let lastResult: LastResult | undefined
  let queries = 0
  const charts: Array<{ readonly title: string; readonly spec: unknown }> = []
  // The semantic queries `based_on` may name: the earlier answers', then this run's own.
  const refinable = new Map<string, Refinable>(
    context.earlier.flatMap((answer) =>
      answer.cell_id !== undefined && answer.semantic_query !== undefined && answer.connector_id !== undefined
        ? [[answer.cell_id, { connectorId: answer.connector_id, query: answer.semantic_query }]]
        : []
    )
  )

  const newCell = (type: string, fields: Partial<ChatRuns.CellInput>) =>
    Effect.gen(function*() {
      const base: ChatRuns.CellInput = {
        id: CellId.make(yield* ids.uuid),
        type,
        status: "running",
        created_at: yield* DateTime.now,
        ...fields
      }
      yield* emit({ type: "cell", cell: yield* runs.appendCell(run, base) })
      return base
    })

  const endCell = (cell: ChatRuns.CellInput, fields: Partial<ChatRuns.CellInput>, assets: ReadonlyArray<Asset.Asset>) =>
    Effect.gen(function*() {
      const stored = yield* runs.appendCell(run, { ...cell, ...fields })
      yield* emit({ type: "cell", cell: assets.length === 0 ? stored : new Chat.ChatCell({ ...stored, assets }) })
    })

  const addAsset = (input: Omit<ChatRuns.AssetInput, "id">, bytes?: Uint8Array) =>
    Effect.gen(function*() {
      const id = AssetId.make(yield* ids.uuid)
      const storageKey = bytes === undefined
        ? undefined
        : Asset.storageKey({ organization_id: run.organizationId, chat_id: run.chatId, id })
      if (bytes !== undefined && storageKey !== undefined) {
        yield* assetStore.put(storageKey, { bytes, mimeType: input.mime_type })
      }
      const record = yield* runs.addAsset(run, {
        ...input,
        id,
        ...(storageKey === undefined ? {} : { storage_key: storageKey })
      }).pipe(Effect.catchTag("InvalidRequest", (e) => Effect.die(e)))
      const url = record.storage_key === undefined ? undefined : yield* sign(record.id)
      const asset = Asset.toAsset(record, { url })
      yield* emit({ type: "asset", asset })
      return { asset, record }
    })

  /** A chart as a cell of its own with its spec as an asset, kept for reports: its image URL there. */
  const drawChart = (title: string, spec: unknown) =>
    Effect.gen(function*() {
      const cell = yield* newCell("chart", { content: title })
      const { asset } = yield* addAsset({
        cell_id: cell.id,
        name: title,
        type: "chart",
        mime_type: ChartSpec.mimeType,
        content: JSON.stringify(spec)
      })
      yield* endCell(cell, { status: "completed", output: ["chart created"], execution_time_ms: 0 }, [asset])
      charts.push({ title, spec })
      return Report.chartRef(charts.length)
    })

  // Runs one statement as a cell of `type`, with its table, CSV and preview: what the model is told,
  // and the cell's rows for a tool that reads them further (an investigation), or why it failed.
  const statement = (
    connector: RunConnector,
    type: string,
    sql: string,
    params: ReadonlyArray<string | number | boolean | null>,
    fields: Partial<ChatRuns.CellInput>,
    // What the model reads before the rows (how the question was read, where the SQL came from).
    preamble: Readonly<Record<string, unknown>> = {}
  ): Effect.Effect<Ran, Conflict> =>
    Effect.gen(function*() {
      const cell = yield* newCell(type, { query: sql, connector_id: connector.record.id, ...fields })
      // A semantic query can be refined later in the run, by its cell's id, which the model is told.
      const refinableCell = fields.semantic_query === undefined ? {} : { cell_id: cell.id }
      if (fields.semantic_query !== undefined) {
        refinable.set(cell.id, { connectorId: connector.record.id, query: fields.semantic_query })
      }
      const started = yield* Clock.currentTimeMillis
      const result = yield* Effect.either(runtime.query(connector.record, {
        sql,
        params,
        clientAttributesJson: context.clientAttributesJson,
        maxRows: context.maxRows,
        timeoutMillis: context.queryTimeoutMillis
      }))
      const elapsed = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
      if (Either.isLeft(result)) {
        yield* endCell(cell, { status: "failed", error: result.left.message, execution_time_ms: elapsed }, [])
        return {
          result: ToolResult.failed(result.left.message),
          cellId: cell.id,
          table: undefined,
          error: result.left.message
        }
      }
      const { columns, rows, truncated } = result.right
      const names = columns.map((c) => c.name)
      const count = `${rows.length}${truncated ? "+" : ""} rows`
      const assets: Array<Asset.Asset> = []
      queries += 1
      if (columns.length > 0) {
        assets.push(
          (yield* addAsset({
            cell_id: cell.id,
            name: `result-${queries}`,
            type: "table",
            mime_type: "application/json",
            content: JSON.stringify(
              {
                columns,
                rows: rows.slice(0, tableAssetRows),
                row_count: rows.length,
                truncated: truncated || rows.length > tableAssetRows
              } satisfies Asset.TableContent
            )
          })).asset,
          (yield* addAsset(
            { cell_id: cell.id, name: `result-${queries}.csv`, type: "download", mime_type: "text/csv" },
            Utf8.encodeText(Tabular.csv(names, rows))
          )).asset
        )
        lastResult = { cellId: cell.id, columns, rows }
      }
      yield* endCell(cell, {
        status: "completed",
        output: [result.right.affectedRows === undefined ? count : `${result.right.affectedRows} rows affected`],
        ...(columns.length > 0
          ? { dataframe_preview: Tabular.preview(names, rows.slice(0, modelRows), count) }
          : {}),
        execution_time_ms: elapsed
      }, assets)
      return {
        result: ToolResult.data({
          ...preamble,
          ...refinableCell,
          columns: names,
          rows: rows.slice(0, modelRows),
          row_count: rows.length,
          truncated,
          ...(result.right.affectedRows === undefined ? {} : { affected_rows: result.right.affectedRows })
        }),
        cellId: cell.id,
        table: { columns, rows }
      }
    })

  // The charts numbered (`chart:<n>`) as PNG assets of a cell, for a report's mail; a chart that
  // cannot be drawn is left out (the report shows its title) and the report still goes out.
  const chartImages = (
    cellId: CellId,
    numbers: ReadonlyArray<number>,
    renderer: Option.Option<ChartRenderer.ChartRenderer.Service>
  ) =>
    Effect.gen(function*() {
      const images: Array<Report.ReportImage> = []
      const assets: Array<Asset.Asset> = []
      if (Option.isNone(renderer)) return { images, assets }
      for (const n of numbers) {
        const chart = charts[n - 1]
        if (chart === undefined) continue
        const png = yield* Effect.either(renderer.value.png(chart.spec))
        if (Either.isLeft(png)) {
          yield* Effect.logWarning("a report chart could not be rendered", png.left.message)
          continue
        }
        const { asset, record } = yield* addAsset(
          { cell_id: cellId, name: `${chart.title}.png`, type: "image", mime_type: "image/png" },
          png.right
        )
        assets.push(asset)
        images.push({
          ref: Report.chartRef(n),
          assetId: record.id,
          storageKey: record.storage_key!,
          mimeType: record.mime_type
        })
      }
      return { images, assets }
    })

  return {
    newCell,
    chartImages,
    endCell,
    addAsset,
    drawChart,
    statement,
    refinable: (cellId: string): Refinable | undefined => refinable.get(cellId),
    /** The charts drawn so far, in order: `chart:<n>` is the n-th. */
    charts: charts as ReadonlyArray<{ readonly title: string; readonly spec: unknown }>,
    lastResult: (): LastResult | undefined => lastResult,
    /** How many statements returned rows: `run_python` reloads the last result when it grew. */
    queries: (): number => queries,
    /** A chart of the last result writes each measure's numbers in its format and unit (`query_metrics`). */
    describeLast: (cellId: CellId, measures: Pick<ChartSpec.Data, "formats" | "units">) => {
      if (lastResult !== undefined && lastResult.cellId === cellId) lastResult = { ...lastResult, ...measures }
    }
  }
}

export type RunCells = ReturnType<typeof make>
