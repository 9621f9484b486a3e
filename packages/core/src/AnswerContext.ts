/**
 * What a run of `Answers` answers with, gathered once before its model is called: the chat's model,
 * the conversation so far, the connectors with their semantic models and schemas, the Context
 * Library the caller may read, the files sent with the question (written to the chat's sandbox),
 * the system prompt and the tools. `AnswerLoop` then only generates and calls tools.
 *
 * A rule about what a run is told (a new tool, what a follow-up carries over) belongs here; a rule
 * about how the run goes (steps, spans, the end) belongs to `AnswerLoop`.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as AnswerHandlers from "./AnswerHandlers.js"
import { type RunConnector, systemPrompt } from "./AnswerPrompt.js"
import { AssetStore } from "./AssetStore.js"
import * as Audience from "./Audience.js"
import * as ChartRenderer from "./ChartRenderer.js"
import type * as Chat from "./Chat.js"
import type * as ChatEvent from "./ChatEvent.js"
import * as ChatRuns from "./ChatRuns.js"
import type * as Chats from "./Chats.js"
import type * as Clarification from "./Clarification.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Dashboards from "./Dashboards.js"
import type { Conflict } from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import type { SandboxId } from "./Ids.js"
import type * as RunLedger from "./internal/runLedger.js"
import type * as LanguageModel from "./LanguageModel.js"
import { Library } from "./Library.js"
import * as LibraryContext from "./LibraryContext.js"
import * as Model from "./Model.js"
import * as Policy from "./Policy.js"
import type * as Provenance from "./Provenance.js"
import * as Sandboxes from "./Sandboxes.js"
import * as SemanticLayer from "./SemanticLayer.js"
import type * as ToolResult from "./ToolResult.js"
import * as WebSearch from "./WebSearch.js"

/**
 * A file sent with a question.
 *
 * @since 0.1.0
 * @category models
 */
export interface UploadedFile {
  readonly name: string
  readonly bytes: Uint8Array
  /** Where the bytes are on disk, while the request lasts: a table's file is loaded from there. */
  readonly path?: string | undefined
}

/**
 * The most files one question may carry.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxUploadedFiles = 10

/**
 * Where uploaded files land in the sandbox workspace.
 *
 * @since 0.1.0
 * @category constants
 */
export const uploadsDir = "uploads"

/**
 * The workspace path of an uploaded file: its base name with anything but letters, digits, `.`, `-`
 * and `_` replaced, never a dotfile or an OWNERS file, and distinct from the names before it.
 *
 * @since 0.1.0
 * @category utils
 */
export const uploadPath = (name: string, taken: ReadonlySet<string>): string => {
  const base = (name.split(/[\\/]/).pop() ?? "").replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "").slice(0, 120)
  const safe = base === "" || base.toUpperCase() === "OWNERS" ? "upload" : base
  let candidate = `${uploadsDir}/${safe}`
  for (let n = 2; taken.has(candidate); n++) candidate = `${uploadsDir}/${n}-${safe}`
  return candidate
}

/**
 * How a run was asked for, as far as what it is told goes.
 *
 * @since 0.1.0
 * @category models
 */
export interface Asked {
  /** What asked: a chat, a playbook or an agent. */
  readonly source?: Chat.ChatSource | undefined
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
  /**
   * The library commit the answer reads (its semantic models and the Context Library) instead of
   * main: an evaluation of a change, or an answer re-run as it was given.
   */
  readonly commit?: string | undefined
}

/**
 * What gathering needs beyond the services: the started run, and where its tools write.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly principal: Policy.Principal
  readonly started: ChatRuns.Started
  readonly asked: Asked
  readonly sign: Chats.SignAssetUrl
  /** Queues an event of the run. */
  readonly emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>
  /** Where `write_report` hands its report. */
  readonly onReport: (report: AnswerHandlers.WrittenReport) => void
  /** Where `ask_clarification` hands what it asked. */
  readonly onClarification: (clarification: Clarification.Clarification) => void
}

/**
 * A run, ready for its model.
 *
 * @since 0.1.0
 * @category models
 */
export interface AnswerContext {
  readonly principal: Policy.Principal
  readonly run: ChatRuns.Run
  /** The chat's model, as the organization's catalogue has it. */
  readonly model: Model.CatalogueEntry
  readonly system: string
  /** The conversation so far, the question last. */
  readonly history: ReadonlyArray<LanguageModel.Message>
  /** The tools offered, and what a call does. */
  readonly tools: ReadonlyArray<LanguageModel.Tool>
  readonly runTool: (call: LanguageModel.ToolCall) => Effect.Effect<ToolResult.ToolResult, Conflict>
  /** The semantic models of the run's connectors, for a model that reads them (the offline one). */
  readonly semantic: ReadonlyArray<LanguageModel.SemanticContext>
  /**
   * The conversation's earlier answers that showed a table, the latest last: how each read its
   * question and its first rows, which a follow-up's words ("the second one", "and by region?")
   * refer to. In the prompt for language models, and as data for the offline model.
   */
  readonly earlier: ReadonlyArray<LanguageModel.EarlierAnswer>
  /** What the run read, for its provenance. */
  readonly basis: RunLedger.Basis
}

/**
 * The limits a run's tools work within.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** The most rows a query fetches. */
  readonly maxRows: number
  /** The statement timeout of a query, in milliseconds. */
  readonly queryTimeoutMillis: number
}

/**
 * The services gathering reads.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | ChatRuns.ChatRuns
  | ConnectorRuntime.ConnectorRuntime
  | Model.ModelCatalogue
  | AssetStore
  | IdGenerator
  | Library
  | SemanticLayer.SemanticLayer

/**
 * Gathers a run's context, over the services in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (limits: Limits) =>
  Effect.gen(function*() {
    const runs = yield* ChatRuns.ChatRuns
    const runtime = yield* ConnectorRuntime.ConnectorRuntime
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
    // Optional: without it, `build_dashboard` is never offered.
    const dashboards = yield* Effect.serviceOption(Dashboards.Dashboards)

    return (input: Input) =>
      Effect.gen(function*() {
        const { asked, principal, started: { run } } = input
        const catalogue = yield* catalogues.catalogue(run.organizationId)
        const entry = Option.getOrElse(Model.findById(catalogue, run.model), () => catalogue.defaultModel)
        const clientAttributesJson = Policy.clientAttributesJson(principal)
        const records = input.started.connectors
        const models = records.length === 0 ? [] : yield* semantic.modelsFor(principal, records, asked.commit)
        const connectors: Array<RunConnector> = []
        for (const [i, record] of records.entries()) {
          const schema = yield* Effect.either(runtime.introspect(record))
          connectors.push({
            record,
            schema: Either.mapLeft(schema, (e) => e.message),
            semantic: Either.mapLeft(models[i]!, (e) => e.message)
          })
        }
        const semanticModels = connectors.flatMap((c): ReadonlyArray<Provenance.SemanticModelUsed> => {
          if (Either.isLeft(c.semantic)) return []
          const source = c.semantic.right.source
          return [{
            connector_id: c.record.id,
            model: source.model,
            source: source.kind,
            ...(source.kind === "library" ? { path: source.path } : {}),
            ...(source.kind === "library" && source.commit !== undefined ? { commit: source.commit } : {})
          }]
        })
        // The library as this caller may read it under the OWNERS rules.
        const view = run.tools.ontology
          ? yield* library.snapshotFor(principal, asked.commit).pipe(Effect.option)
          : Option.none()
        const files = Option.match(view, {
          onNone: () => HashMap.empty<string, Uint8Array>(),
          onSome: (v) => v.files
        })
        // The commit it read: the one it was pinned to, or main's as its files or models were read
        // (main's head itself when it read neither, so that a re-run reads what it could have read).
        const libraryCommit = asked.commit ??
          Option.getOrUndefined(Option.flatMap(view, (v) => v.ref)) ??
          semanticModels.find((m) => m.commit !== undefined)?.commit ??
          Option.getOrUndefined((yield* library.main(run.organizationId)).head)
        const search = run.tools.webSearch ? Option.getOrUndefined(webSearch) : undefined
        const python = run.tools.python
          ? Option.getOrUndefined(Option.filter(sandboxes, (service) => service.available))
          : undefined
        // Uploaded files go into the chat's sandbox before the model sees the question.
        let sandboxId: SandboxId | undefined
        const uploads: Array<{ readonly path: string; readonly sizeBytes: number }> = []
        if (python !== undefined && asked.files !== undefined && asked.files.length > 0) {
          sandboxId = yield* python.forChat(principal, run.chatId)
          const taken = new Set<string>()
          for (const file of asked.files) {
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
          maxRows: limits.maxRows,
          library: HashMap.size(files) > 0 ? LibraryContext.render(files) : undefined,
          report: asked.report,
          context: asked.context,
          earlier: input.started.earlier
        })
        const { runTool, tools } = AnswerHandlers.make({ runs, runtime, assetStore, ids, renderer, dashboards }, {
          principal,
          run,
          sign: input.sign,
          emit: input.emit,
          source: asked.source,
          report: asked.report === true,
          onReport: input.onReport,
          // Only a person can answer a clarification: a playbook, an agent or an evaluation cannot.
          clarify: asked.report !== true &&
            (asked.source === undefined || asked.source === "api" || asked.source === "ui"),
          onClarification: input.onClarification,
          connectors,
          files,
          clientAttributesJson,
          maxRows: limits.maxRows,
          queryTimeoutMillis: limits.queryTimeoutMillis,
          search,
          python,
          sandboxId,
          earlier: input.started.earlier
        })
        // A fingerprint, never the attributes: the caller's audience.
        const audience = Policy.audienceOf(principal)
        return {
          principal,
          run,
          model: entry,
          system,
          history: input.started.history.map((message) => ({ role: message.role, content: message.content })),
          tools,
          runTool,
          semantic: connectors.flatMap((c): ReadonlyArray<LanguageModel.SemanticContext> =>
            Either.isRight(c.semantic)
              ? [{
                connector_id: c.record.id,
                model: c.semantic.right.model.file,
                reviewed: c.semantic.right.source.kind === "library"
              }]
              : []
          ),
          earlier: input.started.earlier,
          basis: {
            model: { id: entry.id, provider: entry.provider, providerModel: Model.providerModel(entry) },
            libraryCommit,
            semanticModels,
            clientAttributesHash: audience === Audience.none ? undefined : audience
          }
        } satisfies AnswerContext
      })
  })
