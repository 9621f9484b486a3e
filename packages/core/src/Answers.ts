/**
 * Answering questions: the agent loop behind `POST /v2/chats` and `POST /v2/chats/stream` (not to be
 * confused with the `Agent` resource, a saved prompt with triggers, whose runs call this loop).
 *
 * `ask` starts a run through `Chats.start` (which checks the caller, the model and the connectors)
 * and runs it on a fiber of its own, detached from the request: a client that disconnects never
 * stops the run, and its answer is stored. Every event of the run is kept for the run's lifetime, so
 * any number of subscribers read it from the start and then follow it live. `cancel` ends the run in
 * the store and interrupts its fiber, which stops the model's request and the running query.
 *
 * The loop: the system prompt describes the chat's connectors (their introspected schemas), the
 * caller's row-level security attributes and, with the ontology on, the Context Library the caller
 * may read (saved queries and notes); the model streams text (forwarded as `text` events) and
 * tool calls; each tool call is a cell, written when it starts and when it ends, whose result goes
 * back to the model (errors too, so it can correct its SQL), for at most `maxSteps` generations.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberMap from "effect/FiberMap"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { type RunConnector, systemPrompt } from "./AnswerPrompt.js"
import {
  createChartTool,
  decodeArguments,
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
import { AssetStore } from "./AssetStore.js"
import * as ChartRenderer from "./ChartRenderer.js"
import * as ChartSpec from "./ChartSpec.js"
import * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import * as ChatEventBus from "./ChatEventBus.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import { type Conflict, InvalidRequest, type NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { AssetId, CellId, type ChatId, type SandboxId } from "./Ids.js"
import * as ConnectorUse from "./internal/connectorUse.js"
import * as RunEvents from "./internal/runEvents.js"
import * as Tabular from "./internal/tabular.js"
import * as Utf8 from "./internal/utf8.js"
import * as LanguageModel from "./LanguageModel.js"
import { Library } from "./Library.js"
import * as LibraryContext from "./LibraryContext.js"
import * as Model from "./Model.js"
import * as Policy from "./Policy.js"
import * as Report from "./Report.js"
import * as Sandboxes from "./Sandboxes.js"
import * as SemanticCompiler from "./SemanticCompiler.js"
import * as SemanticLayer from "./SemanticLayer.js"
import type * as SemanticQuery from "./SemanticQuery.js"
import * as Traced from "./Traced.js"
import * as WebSearch from "./WebSearch.js"

/** Options of the loop. */
export interface Options {
  /** The most generations of one run (a model that keeps calling tools is stopped there). */
  readonly maxSteps: number
  /** The most rows a query fetches. */
  readonly maxRows: number
  /** The statement timeout of a query, in milliseconds. */
  readonly queryTimeoutMillis: number
  /**
   * How often a running run writes its heartbeat (`Chats.heartbeat`), which also finds a cancel
   * whose announcement was lost. Keep it well below `Chats.Options.staleRunAfter`. Absent: 5 s.
   */
  readonly heartbeatMillis?: number | undefined
}

/** The defaults: 12 steps, 10,000 rows, 30 s per query, a heartbeat every 5 s. */
export const defaultOptions: Options = {
  maxSteps: 12,
  maxRows: ConnectorRuntime.defaultMaxRows,
  queryTimeoutMillis: ConnectorRuntime.defaultTimeoutMillis,
  heartbeatMillis: 5_000
}

/** The rows a `table` asset keeps inline (the CSV download has all of them). */
export const tableAssetRows = 1_000

/** The `error` of a run interrupted by something other than a cancel (the server stopping). */
export const interruptedMessage = "interrupted: the server stopped before the run finished"

/** A run in progress or finished, as `ask` returns it. */
export interface Handle {
  /** The `metadata` event's description. */
  readonly metadata: Chat.RunMetadata
  /** Every event of the run from the first, then live, ending with `done`. Each read starts over. */
  readonly events: Stream.Stream<ChatEvent.Sequenced>
  /**
   * Hands `listener` every event of the run so far, at once, then each batch as the run publishes
   * it, synchronously and without a fiber, the last holding `done`. Returns what stops it. For a
   * response that pushes the events on: a stream's fiber would add its hops to every event.
   */
  readonly listen: (listener: (events: ReadonlyArray<ChatEvent.Sequenced>) => void) => () => void
  /** Waits for the run to end. */
  readonly done: Effect.Effect<ChatEvent.Done>
  /** Waits for the run to end; then the report it wrote with `write_report`, if it did (see `AskOptions.report`). */
  readonly report: Effect.Effect<Option.Option<WrittenReport>>
}

/** A chart of a report, rendered as an image asset of the run. */
export interface ReportImage {
  /** The `image_url` the report uses for it (`chart:<n>`). */
  readonly ref: string
  readonly assetId: AssetId
  readonly storageKey: string
  readonly mimeType: string
}

/** What `write_report` left: the model's draft and the images its chart references became. */
export interface WrittenReport {
  readonly draft: Report.ReportDraft
  /** Empty without a `ChartRenderer`, or when rendering failed (the report then shows the charts' titles). */
  readonly images: ReadonlyArray<ReportImage>
}

/** How a run is asked for, beyond what `Chats.start` takes. */
export interface AskOptions extends Chats.Chats.StartOptions {
  /** Offer `write_report` and ask the model to end with a report (playbook runs). */
  readonly report?: boolean | undefined
  /**
   * Data given to the model with the question (an agent's webhook payload). It is shown as data,
   * not instructions, and never stored in the chat.
   */
  readonly context?: string | undefined
  /**
   * Files sent with the question (`POST /v2/chats/stream` as multipart, up to 10): written to the
   * chat's sandbox workspace under `uploads/` and named to the model. Needs sandboxes and Python.
   */
  readonly files?: ReadonlyArray<UploadedFile> | undefined
}

/** A file sent with a question. */
export interface UploadedFile {
  readonly name: string
  readonly bytes: Uint8Array
}

/** The most files one question may carry. */
export const maxUploadedFiles = 10

/** Where uploaded files land in the sandbox workspace. */
export const uploadsDir = "uploads"

/**
 * The workspace path of an uploaded file: its base name with anything but letters, digits, `.`, `-`
 * and `_` replaced, never a dotfile or an OWNERS file, and distinct from the names before it.
 */
export const uploadPath = (name: string, taken: ReadonlySet<string>): string => {
  const base = (name.split(/[\\/]/).pop() ?? "").replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "").slice(0, 120)
  const safe = base === "" || base.toUpperCase() === "OWNERS" ? "upload" : base
  let candidate = `${uploadsDir}/${safe}`
  for (let n = 2; taken.has(candidate); n++) candidate = `${uploadsDir}/${n}-${safe}`
  return candidate
}

/** Answers questions. */
export class Answers extends Context.Tag("@sightline/core/Answers")<Answers, Answers.Service>() {}

export declare namespace Answers {
  /** The loop's operations. */
  export interface Service {
    /**
     * Starts answering a question (`Chats.start` decides who may ask what) and returns at once with
     * the run's handle; the run goes on whatever happens to the caller.
     */
    readonly ask: (
      principal: Policy.Principal,
      request: Chat.StreamChatRequest,
      sign: Chats.SignAssetUrl,
      options?: AskOptions
    ) => Effect.Effect<Handle, Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict>
    /** `POST /v2/chats/{id}/cancel`: `Chats.cancel`, then interrupts the run when it runs on this process. */
    readonly cancel: (
      principal: Policy.Principal,
      id: ChatId
    ) => Effect.Effect<Chat.CancelChatResponse, Unauthenticated | PermissionDenied | NotFound>
  }
}

const imageMimeTypes = new Set(["image/png", "image/jpeg", "image/gif", "image/svg+xml"])

/** The most output lines a `run_python` result shows the model (the cell keeps them all). */
const modelOutputLines = 50

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/** The last successful query of a run: what `create_chart` draws. */
interface LastResult extends ChartSpec.Data {
  readonly cellId: CellId
}

/** Builds the loop with the given options over the ports in context (scoped: runs end with the scope). */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const chatRepo = yield* ChatRepo
    const connectorRepo = yield* ConnectorRepo
    const runtime = yield* ConnectorRuntime.ConnectorRuntime
    const model = yield* LanguageModel.LanguageModel
    const catalogues = yield* Model.ModelCatalogue
    const assetStore = yield* AssetStore
    const ids = yield* IdGenerator
    const library = yield* Library
    const semantic = yield* SemanticLayer.SemanticLayer
    // Optional: without a configured search, `web_search` is never offered.
    const webSearch = yield* Effect.serviceOption(WebSearch.WebSearch)
    // Optional: without one, a report's charts are shown by their titles.
    const renderer = yield* Effect.serviceOption(ChartRenderer.ChartRenderer)
    // Optional: without sandboxes (or where they cannot run), `run_python` is never offered.
    const sandboxes = yield* Effect.serviceOption(Sandboxes.Sandboxes)
    const running = yield* FiberMap.make<ChatId>()
    const bus = yield* ChatEventBus.ChatEventBus
    const heartbeatMillis = options.heartbeatMillis ?? defaultOptions.heartbeatMillis!

    const execute = (
      principal: Policy.Principal,
      run: Chats.Run,
      sign: Chats.SignAssetUrl,
      emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>,
      askOptions: AskOptions,
      onReport: (report: WrittenReport) => void,
      // The model's last part of the final step: the answer is complete, all of it emitted, and it
      // is stored there and then (not after the model's stream is torn down, which waits on the
      // provider's body to end).
      answered: (answer: string) => Effect.Effect<void, Conflict>
    ) =>
      Effect.gen(function*() {
        const catalogue = yield* catalogues.catalogue(run.organizationId)
        const entry = Option.getOrElse(Model.findById(catalogue, run.model), () => catalogue.defaultModel)
        const clientAttributesJson = Policy.clientAttributesJson(principal)
        const connectors: Array<RunConnector> = []
        if (run.tools.sql) {
          for (const id of run.tools.connectorIds) {
            const record = yield* connectorRepo.get(run.organizationId, id)
            if (Option.isNone(record)) continue
            const schema = yield* Effect.either(runtime.introspect(record.value))
            const governing = yield* Effect.either(semantic.modelFor(principal, record.value))
            connectors.push({
              record: record.value,
              schema: Either.mapLeft(schema, (e) => e.message),
              semantic: Either.mapLeft(governing, (e) => e.message)
            })
          }
        }
        // The library as this caller may read it under the OWNERS rules.
        const files = run.tools.ontology
          ? yield* library.snapshotFor(principal).pipe(
            Effect.map((view) => view.files),
            Effect.orElseSucceed(() => HashMap.empty<string, Uint8Array>())
          )
          : HashMap.empty<string, Uint8Array>()
        const hasLibrary = HashMap.size(files) > 0
        const search = run.tools.webSearch ? Option.getOrUndefined(webSearch) : undefined
        const python = run.tools.python
          ? Option.getOrUndefined(Option.filter(sandboxes, (service) => service.available))
          : undefined
        const modelled = connectors.some((c) => Either.isRight(c.semantic))
        const verified = connectors.some((c) =>
          Either.isRight(c.semantic) && c.semantic.right.source.kind === "library" &&
          c.semantic.right.model.verifiedQueries.length > 0
        )
        const tools = [
          ...(modelled ? [queryMetricsTool] : []),
          ...(verified ? [runVerifiedQueryTool] : []),
          ...(connectors.length > 0 ? [runSqlTool, createChartTool] : []),
          ...(hasLibrary
            ? libraryTools.filter((t) => t.name !== toolNames.runSavedQuery || connectors.length > 0)
            : []),
          ...(search === undefined ? [] : [webSearchTool]),
          ...(python === undefined ? [] : [runPythonTool]),
          ...(askOptions.report === true ? [writeReportTool] : [])
        ]
        // Uploaded files go into the chat's sandbox before the model sees the question.
        let sandboxId: SandboxId | undefined
        const uploads: Array<{ readonly path: string; readonly sizeBytes: number }> = []
        if (python !== undefined && askOptions.files !== undefined && askOptions.files.length > 0) {
          sandboxId = yield* python.forChat(principal, run.chatId)
          const taken = new Set<string>()
          for (const file of askOptions.files) {
            const path = uploadPath(file.name, taken)
            taken.add(path)
            yield* python.writeFile(principal, sandboxId, path, file.bytes)
            uploads.push({ path, sizeBytes: file.bytes.length })
          }
        }
        const system = systemPrompt({
          uploads,
          question: run.question,
          connectors,
          sql: run.tools.sql,
          clientAttributesJson,
          maxRows: options.maxRows,
          library: hasLibrary ? LibraryContext.render(files) : undefined,
          report: askOptions.report,
          context: askOptions.context
        })
        const messages: Array<LanguageModel.Message> = (yield* chatRepo.listMessages(run.organizationId, run.chatId))
          .map((message) => ({ role: message.role, content: message.content }))

        let lastResult: LastResult | undefined
        let queries = 0
        const charts: Array<{ readonly title: string; readonly spec: unknown }> = []

        const newCell = (type: string, fields: Partial<Chats.CellInput>) =>
          Effect.gen(function*() {
            const base: Chats.CellInput = {
              id: CellId.make(yield* ids.uuid),
              type,
              status: "running",
              created_at: yield* DateTime.now,
              ...fields
            }
            yield* emit({ type: "cell", cell: yield* chats.appendCell(run, base) })
            return base
          })

        const endCell = (cell: Chats.CellInput, fields: Partial<Chats.CellInput>, assets: ReadonlyArray<Asset.Asset>) =>
          Effect.gen(function*() {
            const stored = yield* chats.appendCell(run, { ...cell, ...fields })
            yield* emit({ type: "cell", cell: assets.length === 0 ? stored : new Chat.ChatCell({ ...stored, assets }) })
          })

        const addAsset = (input: Omit<Chats.AssetInput, "id">, bytes?: Uint8Array) =>
          Effect.gen(function*() {
            const id = AssetId.make(yield* ids.uuid)
            const storageKey = bytes === undefined
              ? undefined
              : Asset.storageKey({ organization_id: run.organizationId, chat_id: run.chatId, id })
            if (bytes !== undefined && storageKey !== undefined) {
              yield* assetStore.put(storageKey, { bytes, mimeType: input.mime_type })
            }
            const record = yield* chats.addAsset(run, {
              ...input,
              id,
              ...(storageKey === undefined ? {} : { storage_key: storageKey })
            }).pipe(Effect.catchTag("InvalidRequest", (e) => Effect.die(e)))
            const url = record.storage_key === undefined ? undefined : yield* sign(record.id)
            const asset = Asset.toAsset(record, { url })
            yield* emit({ type: "asset", asset })
            return { asset, record }
          })

        const notEnabled = (id: number) =>
          `error: connector ${id} is not enabled in this chat (enabled: ${
            connectors.map((c) => c.record.id).join(", ")
          })`

        // Runs one statement as a cell of `type`, with its table, CSV and preview.
        const executeQuery = (
          connector: RunConnector,
          type: string,
          sql: string,
          params: ReadonlyArray<string | number | boolean | null>,
          fields: Partial<Chats.CellInput>,
          // What the model reads before the rows (how the question was read, where the SQL came from).
          preamble: Readonly<Record<string, unknown>> = {}
        ) =>
          Effect.gen(function*() {
            const cell = yield* newCell(type, { query: sql, connector_id: connector.record.id, ...fields })
            const started = yield* Clock.currentTimeMillis
            const result = yield* Effect.either(runtime.query(connector.record, {
              sql,
              params,
              clientAttributesJson,
              maxRows: options.maxRows,
              timeoutMillis: options.queryTimeoutMillis
            }))
            const elapsed = Math.max(0, Math.round((yield* Clock.currentTimeMillis) - started))
            if (Either.isLeft(result)) {
              yield* endCell(cell, { status: "failed", error: result.left.message, execution_time_ms: elapsed }, [])
              return `error: ${result.left.message}`
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
                  content: JSON.stringify({
                    columns,
                    rows: rows.slice(0, tableAssetRows),
                    row_count: rows.length,
                    truncated: truncated || rows.length > tableAssetRows
                  })
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
            return JSON.stringify({
              ...preamble,
              columns: names,
              rows: rows.slice(0, modelRows),
              row_count: rows.length,
              truncated,
              ...(result.right.affectedRows === undefined ? {} : { affected_rows: result.right.affectedRows })
            })
          })

        const runSql = (args: typeof RunSqlArguments.Type) => {
          const connector = connectors.find((c) => c.record.id === args.connector_id)
          if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
          // The model writes this SQL at the caller's request: it runs only where the database, not
          // the SQL, enforces the caller's client attributes.
          const refusal = ConnectorUse.rawSqlRefusal(principal, connector.record)
          return refusal === undefined
            ? executeQuery(connector, "sql", args.sql, [], {})
            : Effect.succeed(`error: ${refusal}`)
        }

        // The metric definitions of a library model are reviewed: an answer from them is trusted.
        const trustedFrom = (
          governing: SemanticLayer.Governing,
          kind: SemanticQuery.TrustedSource["kind"],
          name: string
        ): Partial<Chats.CellInput> =>
          governing.source.kind === "library" && governing.source.path !== undefined &&
            governing.source.commit !== undefined
            ? { trusted_source: { kind, name, path: governing.source.path, commit: governing.source.commit } }
            : {}

        const queryMetrics = (args: typeof QueryMetricsArguments.Type) => {
          const connector = connectors.find((c) => c.record.id === args.connector_id)
          if (connector === undefined) return Effect.succeed(notEnabled(args.connector_id))
          if (Either.isLeft(connector.semantic)) return Effect.succeed(`error: ${connector.semantic.left}`)
          const governing = connector.semantic.right
          // A derived model was reviewed by nobody: for such keys its SQL is like run_sql's.
          const refusal = governing.source.kind === "derived"
            ? ConnectorUse.rawSqlRefusal(principal, connector.record)
            : undefined
          if (refusal !== undefined) return Effect.succeed(`error: ${refusal}`)
          const { connector_id: _, ...query } = args
          const rowFilters = SemanticCompiler.rowFiltersFor(clientAttributesJson)
          return Either.match(SemanticCompiler.compile(governing.model, query, governing.dialect, { rowFilters }), {
            onLeft: (error) => Effect.succeed(`error: ${error.message}`),
            onRight: (compiled) =>
              executeQuery(connector, "sql", compiled.sql, compiled.params, {
                reading: compiled.reading,
                ...trustedFrom(governing, "metric", query.metrics.join(", "))
              }, { reading: compiled.reading.text })
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
          if (candidates.length === 0) return Effect.succeed(`error: no verified query named ${args.name}`)
          if (candidates.length > 1) {
            return Effect.succeed(`error: several connectors have a verified query ${args.name}: give connector_id`)
          }
          const { connector, governing, query } = candidates[0]!
          const rowFilters = SemanticCompiler.rowFiltersFor(clientAttributesJson)
          return Either.match(
            SemanticCompiler.verifiedSql(governing.model, query, args.params ?? {}, governing.dialect, { rowFilters }),
            {
              onLeft: (error) => Effect.succeed(`error: ${error.message}`),
              onRight: (bound) =>
                executeQuery(
                  connector,
                  "sql",
                  bound.sql,
                  bound.params,
                  { content: query.question, ...trustedFrom(governing, "verified_query", query.name) },
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
            return JSON.stringify({ hits })
          })

        const readLibraryFile = (args: typeof ReadLibraryFileArguments.Type) =>
          Effect.gen(function*() {
            // Only files of the caller's pruned snapshot exist here; OWNERS files are never shown.
            const file = LibraryContext.textFiles(files).find((f) => f.path === args.path)
            const cell = yield* newCell("ontology_query", { content: `read: ${args.path}` })
            if (file === undefined) {
              yield* endCell(cell, { status: "failed", error: "no such file", execution_time_ms: 0 }, [])
              return `error: no library file ${args.path}`
            }
            yield* endCell(cell, {
              status: "completed",
              output: [`${file.text.length} characters`],
              execution_time_ms: 0
            }, [])
            return file.text.length > maxLibraryFileChars ? `${file.text.slice(0, maxLibraryFileChars)}…` : file.text
          })

        const runSavedQuery = (args: typeof RunSavedQueryArguments.Type) => {
          const saved = LibraryContext.savedQueries(files).find((q) => q.path === args.path)
          if (saved === undefined) return Effect.succeed(`error: no saved query ${args.path}`)
          const id = args.connector_id ?? saved.connectorId ??
            (connectors.length === 1 ? connectors[0]!.record.id : undefined)
          if (id === undefined) return Effect.succeed("error: say which connector to run it on (connector_id)")
          const connector = connectors.find((c) => c.record.id === id)
          if (connector === undefined) return Effect.succeed(notEnabled(id))
          const bound = LibraryContext.bindNamedParams(saved.sql, args.params ?? {})
          if (bound.missing.length > 0) {
            return Effect.succeed(`error: missing values for parameters: ${bound.missing.join(", ")}`)
          }
          return executeQuery(connector, "query", bound.text, bound.params, { content: saved.path })
        }

        // The chat's sandbox, started on the first run_python (or for uploads); the last query's rows go
        // in before each cell. Its executions say what asked: a chat, a playbook or an agent.
        let loadedQueries = 0
        const executionSource = askOptions.source === "playbook" || askOptions.source === "agent"
          ? askOptions.source
          : "chat"
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
              return `error: ${ran.left.message}`
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
            return JSON.stringify({
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
              return `error: ${found.left.message}`
            }
            yield* endCell(cell, {
              status: "completed",
              output: found.right.map((result) => `${result.title} <${result.url}>`),
              execution_time_ms: elapsed
            }, [])
            return JSON.stringify({ results: found.right })
          })

        const createChart = (args: ChartSpec.ChartRequest) =>
          Effect.gen(function*() {
            if (lastResult === undefined) return "error: run a query with run_sql before drawing a chart"
            const spec = ChartSpec.build(args, lastResult)
            if (Either.isLeft(spec)) return `error: ${spec.left}`
            const title = `${args.title ?? `${args.y} by ${args.x}`}`.slice(0, 200)
            const cell = yield* newCell("chart", { content: title })
            const { asset } = yield* addAsset({
              cell_id: cell.id,
              name: title,
              type: "chart",
              mime_type: "application/vnd.vegalite.v5+json",
              content: JSON.stringify(spec.right)
            })
            yield* endCell(cell, { status: "completed", output: ["chart created"], execution_time_ms: 0 }, [asset])
            charts.push({ title, spec: spec.right })
            return JSON.stringify({ status: "chart created", image_url: Report.chartRef(charts.length) })
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
              return `error: there is no chart:${missing} (this run has ${charts.length} chart${
                charts.length === 1 ? "" : "s"
              })`
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
            return "report saved"
          })

        const unknownTool = (call: LanguageModel.ToolCall) => Effect.succeed(`error: there is no tool ${call.name}`)
        const withArguments = <A, I>(
          schema: Schema.Schema<A, I>,
          call: LanguageModel.ToolCall,
          run: (args: A) => Effect.Effect<string, Conflict>
        ) =>
          Either.match(decodeArguments(schema, call.arguments), {
            onLeft: (message) => Effect.succeed(`error: invalid arguments: ${message}`),
            onRight: run
          })

        const runTool = (call: LanguageModel.ToolCall): Effect.Effect<string, Conflict> => {
          switch (call.name) {
            case toolNames.queryMetrics:
              return modelled ? withArguments(QueryMetricsArguments, call, queryMetrics) : unknownTool(call)
            case toolNames.runVerifiedQuery:
              return verified ? withArguments(RunVerifiedQueryArguments, call, runVerifiedQuery) : unknownTool(call)
            case toolNames.runSql:
              return Either.match(decodeArguments(RunSqlArguments, call.arguments), {
                onLeft: (message) => Effect.succeed(`error: invalid arguments: ${message}`),
                onRight: runSql
              })
            case toolNames.createChart:
              return Either.match(decodeArguments(ChartSpec.ChartRequest, call.arguments), {
                onLeft: (message) => Effect.succeed(`error: invalid arguments: ${message}`),
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
              return askOptions.report === true
                ? withArguments(Report.ReportDraft, call, writeReport)
                : unknownTool(call)
            default:
              return unknownTool(call)
          }
        }

        let answer = ""
        for (let step = 0;; step++) {
          if (step === options.maxSteps) {
            const note = `\n\n_Stopped after ${options.maxSteps} steps without a final answer._`
            answer += note
            yield* emit({ type: "text", text: note })
            break
          }
          let text = ""
          const calls: Array<LanguageModel.ToolCall> = []
          yield* Stream.runForEach(
            model.generate({
              model: Model.providerModel(entry),
              provider: entry.provider,
              system,
              // A copy: the loop goes on appending, and the request must stay what was sent.
              messages: [...messages],
              ...(tools.length > 0 ? { tools } : {})
            }),
            (part) => {
              if (part._tag === "TextDelta") {
                if (part.text === "") return Effect.void
                text += part.text
                return emit({ type: "text", text: part.text })
              }
              if (part._tag === "ToolCall") calls.push({ id: part.id, name: part.name, arguments: part.arguments })
              // Said before the model's stream is torn down, so that the answer's last words are
              // still queued, not yet on their way to the log, when the run ends with them.
              if (part._tag === "Finish" && calls.length === 0) return answered(answer + text)
              return Effect.void
            }
          )
          answer += text
          if (calls.length === 0) break
          messages.push({ role: "assistant", content: text, toolCalls: calls })
          for (const call of calls) {
            messages.push({ role: "tool", toolCallId: call.id, content: yield* runTool(call) })
          }
        }
        return answer
      })

    const ask = Traced.fn("Answers.ask")(function*(
      principal: Policy.Principal,
      request: Chat.StreamChatRequest,
      sign: Chats.SignAssetUrl,
      askOptions: AskOptions = {}
    ) {
      if (askOptions.files !== undefined && askOptions.files.length > 0) {
        if (askOptions.files.length > maxUploadedFiles) {
          return yield* new InvalidRequest({ message: `files: at most ${maxUploadedFiles} files` })
        }
        if (!Option.exists(sandboxes, (service) => service.available)) {
          return yield* new InvalidRequest({
            message: "files: uploaded files go to the chat's sandbox, and sandboxes are not available on this server"
          })
        }
        if (request.tools?.python_enabled === false) {
          return yield* new InvalidRequest({ message: "files: uploaded files need tools.python_enabled" })
        }
      }
      const { metadata, run } = yield* chats.start(principal, request, askOptions)
      let report: WrittenReport | undefined
      // Every published event stays here for the run's lifetime: a listener that comes late (or a
      // stream that reads slowly) still has the whole run from `metadata`, at its own pace.
      const published: Array<ChatEvent.Sequenced> = []
      const listeners = new Set<(events: ReadonlyArray<ChatEvent.Sequenced>) => void>()
      const done = yield* Deferred.make<ChatEvent.Done>()
      let ended = false
      // What the log holds after this run's `done` (a newer run's events) is not this run's to tell.
      const publish = (batch: ReadonlyArray<ChatEvent.Sequenced>) =>
        Effect.suspend(() => {
          if (batch.length === 0) return Effect.void
          let broken: unknown
          // This batch's `done`, if the run ends with it.
          let end: ChatEvent.Done | undefined
          if (!ended) {
            let told = batch
            for (let i = 0; i < batch.length; i++) {
              const event = batch[i]!.event
              if (ChatEvent.isDone(event)) {
                ended = true
                end = event
                told = batch.slice(0, i + 1)
                break
              }
            }
            for (const sequenced of told) published.push(sequenced)
            // A listener that throws is dropped, and the run and its other listeners go on.
            for (const listener of listeners) {
              try {
                listener(told)
              } catch (defect) {
                listeners.delete(listener)
                broken = defect
              }
            }
          }
          return Effect.zipRight(
            end === undefined ? Effect.void : Deferred.succeed(done, end),
            bus.publish(ChatEventBus.Announcement.Appended({ chatId: run.chatId, lastId: batch[batch.length - 1]!.id }))
          ).pipe(
            Effect.zipLeft(broken === undefined ? Effect.void : Effect.logError("a listener of a run failed", broken))
          )
        })
      const listen = (listener: (events: ReadonlyArray<ChatEvent.Sequenced>) => void) => {
        if (published.length > 0) listener(published.slice())
        listeners.add(listener)
        return () => {
          listeners.delete(listener)
        }
      }
      // `start` stored the metadata with the run.
      yield* publish([{ id: run.firstEventId, event: { type: "metadata", ...metadata } }])

      const work = Effect.gen(function*() {
        const writer = yield* RunEvents.make({
          first: run.firstEventId,
          append: (batch) => chats.appendEvents(run, batch),
          readAfter: (id) => chats.readEvents(run, id),
          publish
        })
        // The end someone else wrote (a cancel, a newer run): it is in the log; hand it on. Only a
        // chat that is gone altogether has none, and then this process's readers are told alone.
        const endedElsewhere = writer.catchUp.pipe(
          Effect.zipRight(Deferred.isDone(done)),
          Effect.flatMap((ended) =>
            ended ? Effect.void : publish([{
              id: Number.MAX_SAFE_INTEGER,
              event: { type: "done", status: "failed", error: ChatEvent.cancelledMessage }
            }])
          )
        )
        const fail = (message: string) =>
          writer.drain.pipe(
            Effect.zipRight(chats.finish(run, "failed", message)),
            Effect.flatMap((done) => writer.stored([done])),
            Effect.catchTag("Conflict", () => endedElsewhere)
          )
        // A cancel on another process is announced at once, and the heartbeat reads the store in any
        // case every `heartbeatMillis` (and keeps the run from being taken for dead). The run wrote
        // its appends itself: it asks for its cancel only, so that its appends are announced only
        // when someone follows the chat.
        const announcements = yield* bus.subscribe(run.chatId, { appended: false })
        const cancelAnnounced = Queue.take(announcements).pipe(
          Effect.repeat({ until: (announcement) => announcement._tag === "Cancelled" })
        )
        // The watch runs beside the run until its scope closes, and the run races only the watch's
        // verdict: an answer that ends interrupts a wait on a deferred, not the watch's own race
        // (its timer and its queue), on the way to `done`.
        const stop = yield* Deferred.make<never, Errors.Conflict>()
        yield* Effect.raceFirst(cancelAnnounced, Effect.sleep(Duration.millis(heartbeatMillis))).pipe(
          Effect.zipRight(chats.heartbeat(run)),
          Effect.repeat({ while: (live) => live }),
          Effect.zipRight(Effect.fail(new Errors.Conflict({ message: ChatEvent.cancelledMessage }))),
          Effect.intoDeferred(stop),
          Effect.forkScoped
        )
        const stopped = Deferred.await(stop)
        // What the run said and has not been stored yet goes into the log with its end, so the end
        // is the last event: taken from the writer once the answer is complete, as the model's
        // final step finishes (or, when the run returns without one, at its return). A cancel that
        // comes meanwhile waits for the end being stored, and then finds it in the log.
        //
        // Once `done` is out, the run sleeps once before it goes on to tear down (the model's stream,
        // its scope): a timer, so that the process waits in the kernel. A write on loopback wakes its
        // reader on the writer's CPU, expecting the writer to sleep, so a reader on the same machine
        // (a proxy in front of the server, an embedding host, `pnpm bench:chat`'s client) otherwise
        // got `done` only after that teardown, about a millisecond of CPU later.
        let completed = false
        const complete = (answer: string) =>
          Effect.flatMap(writer.take, (events) =>
            Effect.flatMap(
              chats.complete(run, answer, events),
              (stored) => writer.stored(Arr.append(events, stored.done))
            )).pipe(
              Effect.zipRight(Effect.sync(() => {
                completed = true
              })),
              Effect.zipRight(Effect.sleep(Duration.zero)),
              Effect.uninterruptible
            )
        yield* Effect.raceFirst(
          execute(principal, run, sign, writer.emit, askOptions, (written) => {
            report = written
          }, complete),
          stopped
        ).pipe(
          Effect.flatMap((answer) => completed ? Effect.void : complete(answer)),
          Effect.catchTags({
            LanguageModelError: (error) => fail(`the model failed: ${error.message}`),
            // The run was cancelled or replaced while it worked (possibly from another process).
            Conflict: () => endedElsewhere
          }),
          Effect.catchAllDefect((defect) =>
            Effect.logError("chat run failed with a defect", defect).pipe(
              Effect.zipRight(fail(Errors.defaultMessage.internal))
            )
          ),
          // A cancel has already ended the run in the store (so `finish` is a `Conflict`); any other
          // interruption (the server stopping) ends it as failed, so the chat takes questions again.
          Effect.onInterrupt(() => fail(interruptedMessage))
        )
      }).pipe(
        Effect.scoped,
        Effect.annotateLogs({ chat_id: run.chatId, run_id: run.messageId })
      )
      yield* FiberMap.run(running, run.chatId, work)

      return {
        metadata,
        // Unbounded: every event, however slowly it is read (a bounded buffer would drop some).
        events: Stream.asyncPush<ChatEvent.Sequenced>(
          (emit) =>
            Effect.acquireRelease(
              Effect.sync(() =>
                listen((events) => {
                  void emit.chunk(Chunk.unsafeFromArray(events))
                  if (ChatEvent.isDone(events[events.length - 1]!.event)) void emit.end()
                })
              ),
              (stop) => Effect.sync(stop)
            ),
          { bufferSize: "unbounded" }
        ),
        listen,
        done: Deferred.await(done),
        report: Effect.map(Deferred.await(done), () => Option.fromNullable(report))
      }
    })

    const cancel = Traced.fn("Answers.cancel")(function*(principal: Policy.Principal, id: ChatId) {
      const result = yield* chats.cancel(principal, id)
      if (result.cancelled) {
        if (Option.isSome(yield* FiberMap.get(running, id).pipe(Effect.option))) {
          // Interrupting waits for the run's finalizers, so `done` is out before the response.
          yield* FiberMap.remove(running, id)
        } else {
          // The run is on another process (or none): tell whichever runs it.
          yield* bus.publish(ChatEventBus.Announcement.Cancelled({ chatId: id }))
        }
      }
      return result
    })

    return Answers.of({ ask, cancel })
  })

/** The dependencies of the loop. */
export type Requirements =
  | Chats.Chats
  | ChatEventBus.ChatEventBus
  | ChatRepo
  | ConnectorRepo
  | ConnectorRuntime.ConnectorRuntime
  | LanguageModel.LanguageModel
  | Model.ModelCatalogue
  | AssetStore
  | IdGenerator
  | Library
  | SemanticLayer.SemanticLayer

/** The loop with the default options. */
export const layer: Layer.Layer<Answers, never, Requirements> = Layer.scoped(Answers, makeWith(defaultOptions))

/** The loop with other options. */
export const layerWith = (options: Options): Layer.Layer<Answers, never, Requirements> =>
  Layer.scoped(Answers, makeWith(options))
