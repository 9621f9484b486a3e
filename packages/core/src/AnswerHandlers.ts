/**
 * The tools of one run of the agent loop (`Answers`), over the run's context: which tools are
 * offered (the connectors with their semantic models, the library, web search, Python, the report),
 * and what each call does. Every call is a cell of the chat, written when it starts and when it
 * ends (`internal/runCells.ts` writes them); its result goes back to the model (errors too, so that
 * it can correct itself).
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
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
import type * as ChatEvent from "./ChatEvent.js"
import type * as ChatRuns from "./ChatRuns.js"
import type * as Chats from "./Chats.js"
import * as Clarification from "./Clarification.js"
import type * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboard from "./Dashboard.js"
import type * as Dashboards from "./Dashboards.js"
import type { Conflict } from "./Errors.js"
import type { IdGenerator } from "./IdGenerator.js"
import type { SandboxId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import * as RunCells from "./internal/runCells.js"
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
export const tableAssetRows: number = RunCells.tableAssetRows

const imageMimeTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/svg+xml"])

/** The most output lines a `run_python` result shows the model (the cell keeps them all). */
const modelOutputLines = 50

/**
 * What `write_report` left: the model's draft and the images its chart references became.
 *
 * @since 0.1.0
 * @category models
 */
export interface WrittenReport {
  readonly draft: Report.ReportDraft
  /** Empty without a `ChartRenderer`, or when rendering failed (the report then shows the charts' titles). */
  readonly images: ReadonlyArray<Report.ReportImage>
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
  const { renderer } = services
  const { connectors, emit, files, onReport, principal, python, run, search } = context
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
  const cells = RunCells.make(services, context)
  const { addAsset, drawChart, endCell, newCell, statement } = cells
  const executeQuery = (...args: Parameters<typeof statement>) => Effect.map(statement(...args), (ran) => ran.result)

  const notEnabled = (id: number) =>
    ToolResult.failed(
      `connector ${id} is not enabled in this chat (enabled: ${connectors.map((c) => c.record.id).join(", ")})`,
      "invalid"
    )

  const runSql = (args: typeof RunSqlArguments.Type) => {
    const connector = connectors.find((c) => c.record.id === args.connector_id)
    if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
    // The model writes this SQL at the caller's request: it runs only where the database, not
    // the SQL, enforces the caller's client attributes.
    const refusal = ConnectorUse.writtenSqlRefusal(principal, connector.record)
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
    const base = based_on === undefined ? undefined : cells.refinable(based_on)
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
              // A chart of these rows writes each measure's numbers in its format and unit.
              cells.describeLast(ran.cellId, ChartSpec.describedBy(planned.compiled.columns))
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
        const lastResult = cells.lastResult()
        if (lastResult !== undefined && loadedQueries !== cells.queries()) {
          yield* service.loadDataframe(principal, sandboxId, {
            name: lastResultDataframe,
            columns: lastResult.columns.map((c) => c.name),
            rows: lastResult.rows
          })
          loadedQueries = cells.queries()
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
      const lastResult = cells.lastResult()
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
      const { charts } = cells
      const missing = numbers.find((n) => n < 1 || n > charts.length)
      if (missing !== undefined) {
        return ToolResult.failed(
          `there is no chart:${missing} (this run has ${charts.length} chart${charts.length === 1 ? "" : "s"})`,
          "invalid"
        )
      }
      const cell = yield* newCell("report", { content: draft.subject })
      const { assets, images } = yield* cells.chartImages(cell.id, numbers, renderer)
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
