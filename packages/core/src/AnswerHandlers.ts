/**
 * The tools of one run of the agent loop (`Answers`), over the run's context: which tools are
 * offered (the connectors with their semantic models, the library, web search, Python, the report),
 * and what each call does. Every call is a cell of the chat, written when it starts and when it
 * ends; its result goes back to the model (errors too, so that it can correct itself).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import type * as Schema from "effect/Schema"
import type { RunConnector } from "./AnswerPrompt.js"
import {
  askClarificationTool,
  buildDashboardTool,
  createChartTool,
  decodeArguments,
  InvestigateArguments,
  investigateTool,
  lastResultDataframe,
  libraryTools,
  maxLibraryFileChars,
  modelRows,
  QueryMetricsArguments,
  queryMetricsTool,
  ReadLibraryFileArguments,
  RunPythonArguments,
  runPythonTool,
  RunSavedQueryArguments,
  RunSqlArguments,
  runSqlTool,
  RunVerifiedQueryArguments,
  runVerifiedQueryTool,
  SearchLibraryArguments,
  toolNames,
  WebSearchArguments,
  webSearchTool,
  writeReportTool
} from "./AnswerTools.js"
import * as Asset from "./Asset.js"
import type { AssetStore } from "./AssetStore.js"
import type * as ChartRenderer from "./ChartRenderer.js"
import * as ChartSpec from "./ChartSpec.js"
import * as Chat from "./Chat.js"
import type * as ChatEvent from "./ChatEvent.js"
import type * as ChatRuns from "./ChatRuns.js"
import type * as Chats from "./Chats.js"
import * as Clarification from "./Clarification.js"
import type * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboard from "./Dashboard.js"
import type * as Dashboards from "./Dashboards.js"
import type { Conflict } from "./Errors.js"
import type { IdGenerator } from "./IdGenerator.js"
import { AssetId, CellId, type SandboxId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import * as Tabular from "./internal/tabular.js"
import * as Utf8 from "./internal/utf8.js"
import * as Investigation from "./Investigation.js"
import type * as LanguageModel from "./LanguageModel.js"
import * as LibraryContext from "./LibraryContext.js"
import type * as LibraryDiff from "./LibraryDiff.js"
import type * as Policy from "./Policy.js"
import * as Report from "./Report.js"
import type * as Sandboxes from "./Sandboxes.js"
import * as SemanticLayer from "./SemanticLayer.js"
import type * as SemanticQuery from "./SemanticQuery.js"
import * as SemanticReading from "./SemanticReading.js"
import * as ToolResult from "./ToolResult.js"
import * as WebSearch from "./WebSearch.js"

/**
 * The rows a `table` asset keeps inline (the CSV download has all of them).
 *
 * @since 0.1.0
 * @category constants
 */
export const tableAssetRows = 1_000

const imageMimeTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/svg+xml"])

/** The most output lines a `run_python` result shows the model (the cell keeps them all). */
const modelOutputLines = 50

/**
 * A chart of a report, rendered as an image asset of the run.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReportImage {
  /** The `image_url` the report uses for it (`chart:<n>`). */
  readonly ref: string
  readonly assetId: AssetId
  readonly storageKey: string
  readonly mimeType: string
}

/**
 * What `write_report` left: the model's draft and the images its chart references became.
 *
 * @since 0.1.0
 * @category models
 */
export interface WrittenReport {
  readonly draft: Report.ReportDraft
  /** Empty without a `ChartRenderer`, or when rendering failed (the report then shows the charts' titles). */
  readonly images: ReadonlyArray<ReportImage>
}

/** The last successful query of a run: what `create_chart` draws. */
interface LastResult extends ChartSpec.Data {
  readonly cellId: CellId
}

/**
 * The services the tools use.
 *
 * @since 0.1.0
 * @category models
 */
export interface Services {
  readonly runs: ChatRuns.ChatRuns.Service
  readonly runtime: ConnectorRuntime.ConnectorRuntime.Service
  readonly assetStore: AssetStore.Service
  readonly ids: IdGenerator.Service
  /** Without one, a report's charts are shown by their titles. */
  readonly renderer: Option.Option<ChartRenderer.ChartRenderer.Service>
  /** Without it, `build_dashboard` is never offered. */
  readonly dashboards?: Option.Option<Dashboards.Dashboards.Service> | undefined
}

/**
 * One run, as its tools see it.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunContext {
  readonly principal: Policy.Principal
  readonly run: ChatRuns.Run
  readonly sign: Chats.SignAssetUrl
  readonly emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>
  /** What asked: a chat, a playbook or an agent (the sandbox's executions say so). */
  readonly source: string | undefined
  /** Offer `write_report`; what it wrote goes to `onReport`. */
  readonly report: boolean
  readonly onReport: (report: WrittenReport) => void
  /** Offer `ask_clarification` (a person asked, who can answer); what it asked goes to `onClarification`. */
  readonly clarify: boolean
  readonly onClarification: (clarification: Clarification.Clarification) => void
  readonly connectors: ReadonlyArray<RunConnector>
  /** The library as the caller may read it (empty without the ontology). */
  readonly files: LibraryDiff.Files
  readonly clientAttributesJson: string
  readonly maxRows: number
  readonly queryTimeoutMillis: number
  readonly search: WebSearch.WebSearch.Service | undefined
  readonly python: Sandboxes.Sandboxes.Service | undefined
  /** The chat's sandbox, when the question's uploads started it. */
  readonly sandboxId: SandboxId | undefined
  /** The chat's earlier answers: the queries `query_metrics` may refine with `based_on`. */
  readonly earlier: ReadonlyArray<LanguageModel.EarlierAnswer>
}

/**
 * The tools of a run: what is offered, and what a call does.
 *
 * @since 0.1.0
 * @category models
 */
export interface Handlers {
  readonly tools: ReadonlyArray<LanguageModel.Tool>
  readonly runTool: (call: LanguageModel.ToolCall) => Effect.Effect<ToolResult.ToolResult, Conflict>
}

/** The parts a waterfall shows before the rest are one bar ("all others"). */
const waterfallParts = 8

/**
 * The tools of one run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (services: Services, context: RunContext): Handlers => {
  const { assetStore, ids, renderer, runs, runtime } = services
  const { clientAttributesJson, connectors, emit, files, onReport, principal, python, run, search, sign } = context
  const hasLibrary = HashMap.size(files) > 0
  // A dashboard is built for a person who asked for one, over a model the organization reviewed.
  const dashboards =
    context.clarify && connectors.some((c) => Either.isRight(c.semantic) && c.semantic.right.source.kind === "library")
      ? Option.getOrUndefined(services.dashboards ?? Option.none())
      : undefined
  const modelled = connectors.some((c) => Either.isRight(c.semantic))
  const verified = connectors.some((c) =>
    Either.isRight(c.semantic) && c.semantic.right.source.kind === "library" &&
    c.semantic.right.model.verifiedQueries.length > 0
  )
  const tools = [
    ...(modelled ? [queryMetricsTool, investigateTool] : []),
    ...(verified ? [runVerifiedQueryTool] : []),
    ...(connectors.length > 0 ? [runSqlTool, createChartTool] : []),
    ...(hasLibrary
      ? libraryTools.filter((t) => t.name !== toolNames.runSavedQuery || connectors.length > 0)
      : []),
    ...(search === undefined ? [] : [webSearchTool]),
    ...(python === undefined ? [] : [runPythonTool]),
    ...(context.report ? [writeReportTool] : []),
    ...(context.clarify ? [askClarificationTool] : []),
    ...(dashboards === undefined ? [] : [buildDashboardTool])
  ]
  let sandboxId = context.sandboxId
  let lastResult: LastResult | undefined
  // The semantic queries `based_on` may name: the earlier answers', then this run's own.
  const refinable = new Map<string, { readonly connectorId: number; readonly query: SemanticQuery.SemanticQuery }>(
    context.earlier.flatMap((answer) =>
      answer.cell_id !== undefined && answer.semantic_query !== undefined && answer.connector_id !== undefined
        ? [[answer.cell_id, { connectorId: answer.connector_id, query: answer.semantic_query }]]
        : []
    )
  )
  let queries = 0
  const charts: Array<{ readonly title: string; readonly spec: unknown }> = []

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

  const notEnabled = (id: number) =>
    ToolResult.failed(
      `connector ${id} is not enabled in this chat (enabled: ${connectors.map((c) => c.record.id).join(", ")})`,
      "invalid"
    )

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
  ) =>
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
        clientAttributesJson,
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

  const executeQuery = (...args: Parameters<typeof statement>) => Effect.map(statement(...args), (ran) => ran.result)

  const runSql = (args: typeof RunSqlArguments.Type) => {
    const connector = connectors.find((c) => c.record.id === args.connector_id)
    if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
    // The model writes this SQL at the caller's request: it runs only where the database, not
    // the SQL, enforces the caller's client attributes.
    const refusal = ConnectorUse.rawSqlRefusal(principal, connector.record)
    return refusal === undefined
      ? executeQuery(connector, "sql", args.sql, [], {})
      : Effect.succeed(ToolResult.failed(refusal, "refused"))
  }

  // What the plan decided about trust, on the cell.
  const trustedCell = (trusted: SemanticQuery.TrustedSource | undefined): Partial<ChatRuns.CellInput> =>
    trusted === undefined ? {} : { trusted_source: trusted }
  const planFailure = (error: SemanticLayer.PlanRefused | SemanticLayer.PlanInvalid) =>
    Effect.succeed(
      error._tag === "PlanRefused"
        ? ToolResult.failed(error.reason, "refused")
        : ToolResult.failed(error.message, "invalid")
    )

  const queryMetrics = (args: typeof QueryMetricsArguments.Type) => {
    const connector = connectors.find((c) => c.record.id === args.connector_id)
    if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
    if (Either.isLeft(connector.semantic)) return Effect.succeed(ToolResult.failed(connector.semantic.left))
    const { based_on, connector_id: _, ...given } = args
    // The query refined, with each field given in its place.
    const base = based_on === undefined ? undefined : refinable.get(based_on)
    if (based_on !== undefined && (base === undefined || base.connectorId !== args.connector_id)) {
      return Effect.succeed(ToolResult.failed(
        `based_on: ${based_on} is not the cell of a semantic query on connector ${args.connector_id} in this ` +
          "chat's earlier answers or this answer",
        "invalid"
      ))
    }
    const metrics = given.metrics ?? base?.query.metrics
    if (metrics === undefined) {
      return Effect.succeed(ToolResult.failed("metrics: required without based_on", "invalid"))
    }
    const query: SemanticQuery.SemanticQuery = { ...base?.query, ...given, metrics }
    return Either.match(
      SemanticLayer.plan(principal, connector.record, connector.semantic.right, { _tag: "Metrics", query }),
      {
        onLeft: planFailure,
        onRight: (planned) =>
          statement(connector, "sql", planned.sql, planned.params, {
            reading: planned.compiled.reading,
            ...trustedCell(planned.trusted),
            semantic_query: query,
            ...(based_on === undefined ? {} : { based_on_cell_id: based_on })
          }, { reading: planned.compiled.reading.text }).pipe(
            Effect.map((ran) => {
              // A chart of these rows writes each measure's numbers in its format.
              if (lastResult !== undefined && lastResult.cellId === ran.cellId) {
                lastResult = {
                  ...lastResult,
                  formats: Object.fromEntries(planned.compiled.columns.map((c) => [c.name, c.format]))
                }
              }
              return ran.result
            })
          )
      }
    )
  }

  // An investigation: its plan announced, its steps run as cells (four at once), the top
  // contributor of the first driver drilled into, and what they found.
  const investigate = (args: typeof InvestigateArguments.Type) => {
    const connector = connectors.find((c) => c.record.id === args.connector_id)
    if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
    if (Either.isLeft(connector.semantic)) return Effect.succeed(ToolResult.failed(connector.semantic.left))
    const governing = connector.semantic.right
    const planned = Investigation.plan(governing.model, args)
    if (Either.isLeft(planned)) return Effect.succeed(ToolResult.failed(planned.left.message, "invalid"))
    const investigation = planned.right
    const runStep = (step: Investigation.Step): Effect.Effect<Investigation.Ran, Conflict> =>
      Either.match(
        SemanticLayer.plan(principal, connector.record, governing, { _tag: "Metrics", query: step.query }),
        {
          onLeft: (error) =>
            Effect.succeed({ step, failed: error._tag === "PlanRefused" ? error.reason : error.message }),
          onRight: (compiled) =>
            Effect.map(
              statement(connector, "sql", compiled.sql, compiled.params, {
                content: step.title,
                reading: compiled.compiled.reading,
                ...trustedCell(compiled.trusted),
                semantic_query: step.query
              }),
              (ran): Investigation.Ran =>
                ran.table === undefined
                  ? { step, cellId: ran.cellId, failed: ran.error ?? "the query returned no table" }
                  : {
                    step,
                    cellId: ran.cellId,
                    breakdown: Investigation.breakdown(investigation, step, compiled.compiled.columns, ran.table.rows)
                  }
            )
        }
      )
    return Effect.gen(function*() {
      const ran = yield* Investigation.run(investigation, runStep, (steps) =>
        emit({
          type: "plan",
          title: steps[0]!.title,
          steps: steps.map(({ id, level, title }) => ({ id, title, level }))
        }))
      const found = Investigation.findings(investigation, ran)
      // The bridge from one period to the other by the first driver's parts, as a chart a report may show.
      const first = ran.find((r) => r.step.level === 1 && r.step.dimension === investigation.drivers[0])?.breakdown
      const { compared_with, metric, period } = investigation.request
      if (first === undefined || compared_with === undefined || period === undefined || first.parts.length === 0) {
        return ToolResult.data(found)
      }
      const label = (p: { readonly start: string; readonly end: string }) => SemanticReading.periodWords(p.start, p.end)
      const shown = first.parts.slice(0, waterfallParts)
      const rest = first.parts.slice(waterfallParts).reduce((sum, part) => sum + part.change, 0)
      const title = `${metric.replaceAll("_", " ")} from ${label(compared_with)} to ${label(period)} by ${
        first.dimension.replaceAll("_", " ")
      }`.slice(0, 200)
      const spec = ChartSpec.waterfall(
        title,
        metric.replaceAll("_", " "),
        { label: label(compared_with), value: first.before },
        [
          ...shown.map((part) => ({ label: String(part.value), change: part.change })),
          ...(first.parts.length > waterfallParts ? [{ label: "all others", change: rest }] : [])
        ],
        { label: label(period), value: first.after }
      )
      return ToolResult.data({ ...found, chart: { title, image_url: yield* drawChart(title, spec) } })
    })
  }

  const runVerifiedQuery = (args: typeof RunVerifiedQueryArguments.Type) => {
    const candidates = connectors.flatMap((connector) => {
      if (Either.isLeft(connector.semantic)) return []
      const governing = connector.semantic.right
      if (governing.source.kind !== "library") return []
      if (args.connector_id !== undefined && connector.record.id !== args.connector_id) return []
      return governing.model.verifiedQueries.filter((q) => q.name === args.name)
        .map((query) => ({ connector, governing, query }))
    })
    if (candidates.length === 0) {
      return Effect.succeed(ToolResult.failed(`no verified query named ${args.name}`, "invalid"))
    }
    if (candidates.length > 1) {
      return Effect.succeed(
        ToolResult.failed(`several connectors have a verified query ${args.name}: give connector_id`, "invalid")
      )
    }
    const { connector, governing, query } = candidates[0]!
    return Either.match(
      SemanticLayer.plan(principal, connector.record, governing, {
        _tag: "Verified",
        name: query.name,
        params: args.params ?? {}
      }),
      {
        onLeft: planFailure,
        onRight: (planned) =>
          executeQuery(
            connector,
            "sql",
            planned.sql,
            planned.params,
            { content: query.question, ...trustedCell(planned.trusted) },
            { verified_query: query.name, question: query.question }
          )
      }
    )
  }

  const searchLibrary = (args: typeof SearchLibraryArguments.Type) =>
    Effect.gen(function*() {
      const cell = yield* newCell("ontology_query", { content: `search: ${args.query}` })
      const hits = LibraryContext.search(files, args.query)
      yield* endCell(cell, {
        status: "completed",
        output: hits.length === 0 ? ["no matches"] : hits.map((hit) => hit.path),
        execution_time_ms: 0
      }, [])
      return ToolResult.data({ hits })
    })

  const readLibraryFile = (args: typeof ReadLibraryFileArguments.Type) =>
    Effect.gen(function*() {
      // Only files of the caller's pruned snapshot exist here; OWNERS files are never shown.
      const file = LibraryContext.textFiles(files).find((f) => f.path === args.path)
      const cell = yield* newCell("ontology_query", { content: `read: ${args.path}` })
      if (file === undefined) {
        yield* endCell(cell, { status: "failed", error: "no such file", execution_time_ms: 0 }, [])
        return ToolResult.failed(`no library file ${args.path}`, "invalid")
      }
      yield* endCell(cell, {
        status: "completed",
        output: [`${file.text.length} characters`],
        execution_time_ms: 0
      }, [])
      return ToolResult.text(
        file.text.length > maxLibraryFileChars ? `${file.text.slice(0, maxLibraryFileChars)}…` : file.text
      )
    })

  const runSavedQuery = (args: typeof RunSavedQueryArguments.Type) => {
    const saved = LibraryContext.savedQueries(files).find((q) => q.path === args.path)
    if (saved === undefined) return Effect.succeed(ToolResult.failed(`no saved query ${args.path}`, "invalid"))
    const id = args.connector_id ?? saved.connectorId ??
      (connectors.length === 1 ? connectors[0]!.record.id : undefined)
    if (id === undefined) {
      return Effect.succeed(ToolResult.failed("say which connector to run it on (connector_id)", "invalid"))
    }
    const connector = connectors.find((c) => c.record.id === id)
    if (connector === undefined) return Effect.succeed(notEnabled(id))
    const bound = LibraryContext.bindNamedParams(saved.sql, args.params ?? {})
    if (bound.missing.length > 0) {
      return Effect.succeed(
        ToolResult.failed(`missing values for parameters: ${bound.missing.join(", ")}`, "invalid")
      )
    }
    return executeQuery(connector, "query", bound.text, bound.params, { content: saved.path })
  }

  // The chat's sandbox, started on the first run_python (or for uploads); the last query's rows go
  // in before each cell. Its executions say what asked: a chat, a playbook or an agent.
  let loadedQueries = 0
  const executionSource = context.source === "playbook" || context.source === "agent" ? context.source : "chat"
  const runPython = (service: Sandboxes.Sandboxes.Service, args: typeof RunPythonArguments.Type) =>
    Effect.gen(function*() {
      const cell = yield* newCell("python", { code: args.code })
      const started = yield* Clock.currentTimeMillis
      const ran = yield* Effect.either(Effect.gen(function*() {
        sandboxId ??= yield* service.forChat(principal, run.chatId)
        if (lastResult !== undefined && loadedQueries !== queries) {
          yield* service.loadDataframe(principal, sandboxId, {
            name: lastResultDataframe,
            columns: lastResult.columns.map((c) => c.name),
            rows: lastResult.rows
          })
          loadedQueries = queries
        }
        return {
          id: sandboxId,
          result: yield* service.execute(principal, sandboxId, { code: args.code }, executionSource)
        }
      }))
      if (Either.isLeft(ran)) {
        const elapsed = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
        yield* endCell(cell, { status: "failed", error: ran.left.message, execution_time_ms: elapsed }, [])
        return ToolResult.failed(ran.left.message)
      }
      const { id, result } = ran.right
      const assets: Array<Asset.Asset> = []
      for (const file of result.files) {
        if (!imageMimeTypes.has(file.mime_type)) continue
        const content = yield* Effect.option(service.readFile(principal, id, file.name))
        if (Option.isNone(content)) continue
        assets.push(
          (yield* addAsset(
            { cell_id: cell.id, name: file.name, type: "image", mime_type: file.mime_type },
            content.value.bytes
          )).asset
        )
      }
      const frames = result.dataframes.map((df) => `${df.name}: ${df.num_rows} rows × ${df.num_cols} columns`)
      yield* endCell(cell, {
        status: result.error === undefined ? "completed" : "failed",
        output: [...(result.output ?? [])],
        ...(result.error === undefined ? {} : { error: result.error }),
        ...(frames.length === 0 ? {} : { dataframe_preview: frames.join("\n") }),
        execution_time_ms: result.execution_time_ms
      }, assets)
      const output = result.output ?? []
      return ToolResult.data({
        output: output.length > modelOutputLines
          ? [...output.slice(0, modelOutputLines), `… ${output.length - modelOutputLines} more lines`]
          : output,
        ...(result.error === undefined ? {} : { error: result.error }),
        dataframes: result.dataframes,
        files: result.files.map((f) => f.name)
      })
    })

  const searchWeb = (service: WebSearch.WebSearch.Service, args: typeof WebSearchArguments.Type) =>
    Effect.gen(function*() {
      const cell = yield* newCell("web_search", { content: args.query })
      const started = yield* Clock.currentTimeMillis
      const found = yield* Effect.either(service.search(args.query, WebSearch.defaultLimit))
      const elapsed = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
      if (Either.isLeft(found)) {
        yield* endCell(cell, { status: "failed", error: found.left.message, execution_time_ms: elapsed }, [])
        return ToolResult.failed(found.left.message)
      }
      yield* endCell(cell, {
        status: "completed",
        output: found.right.map((result) => `${result.title} <${result.url}>`),
        execution_time_ms: elapsed
      }, [])
      return ToolResult.data({ results: found.right })
    })

  const createChart = (args: ChartSpec.ChartRequest) =>
    Effect.gen(function*() {
      if (lastResult === undefined) {
        return ToolResult.failed("run a query with run_sql before drawing a chart", "invalid")
      }
      const spec = ChartSpec.build(args, lastResult)
      if (Either.isLeft(spec)) return ToolResult.failed(spec.left, "invalid")
      const title = `${args.title ?? `${args.y} by ${args.x}`}`.slice(0, 200)
      return ToolResult.data({ status: "chart created", image_url: yield* drawChart(title, spec.right) })
    })

  const writeReport = (draft: Report.ReportDraft) =>
    Effect.gen(function*() {
      const numbers = [
        ...new Set(
          Report.imageUrls(draft.blocks).flatMap((url) => {
            const n = Report.chartNumber(url)
            return n === undefined ? [] : [n]
          })
        )
      ]
      const missing = numbers.find((n) => n < 1 || n > charts.length)
      if (missing !== undefined) {
        return ToolResult.failed(
          `there is no chart:${missing} (this run has ${charts.length} chart${charts.length === 1 ? "" : "s"})`,
          "invalid"
        )
      }
      const cell = yield* newCell("report", { content: draft.subject })
      const images: Array<ReportImage> = []
      const assets: Array<Asset.Asset> = []
      if (Option.isSome(renderer)) {
        for (const n of numbers) {
          const chart = charts[n - 1]!
          const png = yield* Effect.either(renderer.value.png(chart.spec))
          // A chart that cannot be drawn is shown by its title; the report still goes out.
          if (Either.isLeft(png)) {
            yield* Effect.logWarning("a report chart could not be rendered", png.left.message)
            continue
          }
          const { asset, record } = yield* addAsset(
            { cell_id: cell.id, name: `${chart.title}.png`, type: "image", mime_type: "image/png" },
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
      }
      onReport({ draft, images })
      yield* endCell(cell, {
        status: "completed",
        output: [`report with ${draft.blocks.length} blocks`],
        execution_time_ms: 0
      }, assets)
      return ToolResult.text("report saved")
    })

  // The question goes out on the stream at once; the answer's message keeps it (the last one asked).
  const askClarification = (input: Clarification.ClarificationInput) =>
    Effect.gen(function*() {
      const clarification = Clarification.fromInput(input)
      context.onClarification(clarification)
      yield* emit({ type: "clarification", ...clarification })
      return ToolResult.data({
        asked: true,
        choices: clarification.choices.length,
        next: "end your turn now, restating the question in one sentence; do not answer any choice"
      })
    })

  const buildDashboard = (builder: Dashboards.Dashboards.Service, args: Dashboard.BuildRequest) =>
    Effect.gen(function*() {
      const path = Dashboard.pathOf(args.name)
      const cell = yield* newCell("dashboard", { content: path, connector_id: args.connector_id })
      const started = Date.now()
      const built = yield* Effect.either(builder.build(principal, args, { chatId: run.chatId, aiGenerated: true }))
      if (Either.isLeft(built)) {
        yield* endCell(
          cell,
          { status: "failed", error: built.left.message, execution_time_ms: Date.now() - started },
          []
        )
        return ToolResult.failed(built.left.message, "invalid")
      }
      const { change } = built.right
      const filed = `change #${change.change_number} ${change.status === "approved" ? "merged" : change.status}`
      yield* endCell(cell, {
        status: "completed",
        output: [`${filed}: ${args.tiles.length} tiles in ${path}`],
        execution_time_ms: Date.now() - started
      }, [])
      return ToolResult.data({
        path,
        change_number: change.change_number,
        status: change.status,
        tiles: args.tiles.map((tile) => ({ title: tile.title, type: tile.visualization.type }))
      })
    })

  const unknownTool = (call: LanguageModel.ToolCall) =>
    Effect.succeed(ToolResult.failed(`there is no tool ${call.name}`, "invalid"))
  const invalidArguments = (message: string) =>
    Effect.succeed(ToolResult.failed(`invalid arguments: ${message}`, "invalid"))
  const withArguments = <A, I>(
    schema: Schema.Schema<A, I>,
    call: LanguageModel.ToolCall,
    run: (args: A) => Effect.Effect<ToolResult.ToolResult, Conflict>
  ) =>
    Either.match(decodeArguments(schema, call.arguments), {
      onLeft: invalidArguments,
      onRight: run
    })

  const runTool = (call: LanguageModel.ToolCall): Effect.Effect<ToolResult.ToolResult, Conflict> => {
    switch (call.name) {
      case toolNames.queryMetrics:
        return modelled ? withArguments(QueryMetricsArguments, call, queryMetrics) : unknownTool(call)
      case toolNames.investigate:
        return modelled ? withArguments(InvestigateArguments, call, investigate) : unknownTool(call)
      case toolNames.buildDashboard:
        return dashboards === undefined
          ? unknownTool(call)
          : withArguments(Dashboard.BuildRequest, call, (args) => buildDashboard(dashboards, args))
      case toolNames.runVerifiedQuery:
        return verified ? withArguments(RunVerifiedQueryArguments, call, runVerifiedQuery) : unknownTool(call)
      case toolNames.runSql:
        return Either.match(decodeArguments(RunSqlArguments, call.arguments), {
          onLeft: invalidArguments,
          onRight: runSql
        })
      case toolNames.createChart:
        return Either.match(decodeArguments(ChartSpec.ChartRequest, call.arguments), {
          onLeft: invalidArguments,
          onRight: createChart
        })
      case toolNames.searchLibrary:
        return hasLibrary ? withArguments(SearchLibraryArguments, call, searchLibrary) : unknownTool(call)
      case toolNames.readLibraryFile:
        return hasLibrary ? withArguments(ReadLibraryFileArguments, call, readLibraryFile) : unknownTool(call)
      case toolNames.runSavedQuery:
        return hasLibrary && connectors.length > 0
          ? withArguments(RunSavedQueryArguments, call, runSavedQuery)
          : unknownTool(call)
      case toolNames.webSearch:
        return search === undefined
          ? unknownTool(call)
          : withArguments(WebSearchArguments, call, (args) => searchWeb(search, args))
      case toolNames.runPython:
        return python === undefined
          ? unknownTool(call)
          : withArguments(RunPythonArguments, call, (args) => runPython(python, args))
      case toolNames.writeReport:
        return context.report ? withArguments(Report.ReportDraft, call, writeReport) : unknownTool(call)
      case toolNames.askClarification:
        return context.clarify
          ? withArguments(Clarification.ClarificationInput, call, askClarification)
          : unknownTool(call)
      default:
        return unknownTool(call)
    }
  }

  return { tools, runTool }
}
