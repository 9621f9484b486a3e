/**
 * Answering questions: the agent loop behind `POST /v2/chats` and `POST /v2/chats/stream` (not to be
 * confused with the `Agent` resource, a saved prompt with triggers, whose runs call this loop).
 *
 * `ask` starts a run through `ChatRuns.start` (which checks the caller, the model and the connectors)
 * and runs it on a fiber of its own, detached from the request: a client that disconnects never
 * stops the run, and its answer is stored. Every event of the run is kept for the run's lifetime, so
 * any number of subscribers read it from the start and then follow it live. `cancel` ends the run in
 * the store and interrupts its fiber, which stops the model's request and the running query.
 *
 * The loop: the system prompt (`AnswerPrompt`) describes the chat's connectors (their semantic
 * models and introspected schemas), the caller's row-level security attributes and, with the
 * ontology on, the Context Library the caller may read (saved queries and notes); the model streams
 * text (forwarded as `text` events) and tool calls (`AnswerTools` declares them, `AnswerHandlers`
 * runs them: each call is a cell, written when it starts and when it ends, whose result goes back to
 * the model, errors too, so it can correct itself), for at most `maxSteps` generations.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberMap from "effect/FiberMap"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as AnswerHandlers from "./AnswerHandlers.js"
import { type RunConnector, systemPrompt } from "./AnswerPrompt.js"
import * as Asset from "./Asset.js"
import { AssetStore } from "./AssetStore.js"
import * as Audience from "./Audience.js"
import { Auditor } from "./Auditor.js"
import * as ChartRenderer from "./ChartRenderer.js"
import * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import * as ChatEventBus from "./ChatEventBus.js"
import { ChatRepo } from "./ChatRepo.js"
import * as ChatRuns from "./ChatRuns.js"
import * as Chats from "./Chats.js"
import type { ConnectorRecord } from "./Connector.js"
import * as Connector from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Connectors from "./Connectors.js"
import { type Conflict, InvalidRequest, type NotFound, type PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { type ChatId, type SandboxId } from "./Ids.js"
import * as RunEvents from "./internal/runEvents.js"
import * as LanguageModel from "./LanguageModel.js"
import { Library } from "./Library.js"
import * as LibraryContext from "./LibraryContext.js"
import * as Metrics from "./Metrics.js"
import * as Model from "./Model.js"
import * as Policy from "./Policy.js"
import * as Provenance from "./Provenance.js"
import * as Sandboxes from "./Sandboxes.js"
import * as SemanticLayer from "./SemanticLayer.js"
import * as ToolResult from "./ToolResult.js"
import * as Traced from "./Traced.js"
import * as WebSearch from "./WebSearch.js"

/**
 * Options of the loop.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The most generations of one run (a model that keeps calling tools is stopped there). */
  readonly maxSteps: number
  /** The most rows a query fetches. */
  readonly maxRows: number
  /** The statement timeout of a query, in milliseconds. */
  readonly queryTimeoutMillis: number
  /**
   * How often a running run writes its heartbeat (`ChatRuns.heartbeat`), which also finds a cancel
   * whose announcement was lost. Keep it well below `Chats.Options.staleRunAfter`. Absent: 5 s.
   */
  readonly heartbeatMillis?: number | undefined
}

/**
 * The defaults: 12 steps, 10,000 rows, 30 s per query, a heartbeat every 5 s.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = {
  maxSteps: 12,
  maxRows: ConnectorRuntime.defaultMaxRows,
  queryTimeoutMillis: ConnectorRuntime.defaultTimeoutMillis,
  heartbeatMillis: 5_000
}

/**
 * The `error` of a run interrupted by something other than a cancel (the server stopping).
 *
 * @since 0.1.0
 * @category constants
 */
export const interruptedMessage = "interrupted: the server stopped before the run finished"

/**
 * A run in progress or finished, as `ask` returns it.
 *
 * @since 0.1.0
 * @category models
 */
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
  readonly report: Effect.Effect<Option.Option<AnswerHandlers.WrittenReport>>
}

/**
 * What a finished run answered, as a caller that reads its result (not its stream) needs it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Answered {
  /** The rows of its last table; none when it showed no table. */
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>> | undefined
  /** The SQL of that table's cell. */
  readonly sql: string | undefined
  /** How that cell read the question, when it ran a semantic query. */
  readonly reading: string | undefined
  /** The answer's text. */
  readonly text: string
  /** Its last chart: the title and the Vega-Lite spec (JSON text); none when it drew none. */
  readonly chart: { readonly title: string; readonly spec: string } | undefined
  readonly done: ChatEvent.Done | undefined
}

/**
 * Reads a run to its end: its text, its last table and that table's SQL, its last chart; `onCell`
 * sees each cell as it starts and ends (progress for a caller that waits).
 *
 * @since 0.1.0
 * @category utils
 */
export const answered = (
  handle: Handle,
  onCell: (cell: Chat.ChatCell) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<Answered> =>
  Effect.suspend(() => {
    const cells = new Map<string, Chat.ChatCell>()
    let last: { readonly cellId: string; readonly content: string } | undefined
    let chart: Answered["chart"]
    let text = ""
    let done: ChatEvent.Done | undefined
    return Stream.runForEach(handle.events, ({ event }) =>
      Effect.suspend(() => {
        if (event.type === "text") text += event.text
        if (event.type === "asset" && event.asset.content !== undefined) {
          if (event.asset.type === "table") last = { cellId: event.asset.cell_id, content: event.asset.content }
          if (event.asset.type === "chart") chart = { title: event.asset.name, spec: event.asset.content }
        }
        if (ChatEvent.isDone(event)) done = event
        if (event.type !== "cell") return Effect.void
        cells.set(event.cell.id, event.cell)
        return onCell(event.cell)
      })).pipe(Effect.map(() => ({
        rows: last === undefined ? undefined : Option.getOrUndefined(Asset.tableRows(last.content)),
        sql: last === undefined ? undefined : cells.get(last.cellId)?.query ?? undefined,
        reading: last === undefined ? undefined : cells.get(last.cellId)?.reading?.text,
        text,
        chart,
        done
      })))
  })

/**
 * How a run is asked for, beyond what `ChatRuns.start` takes.
 *
 * @since 0.1.0
 * @category models
 */
export interface AskOptions extends ChatRuns.ChatRuns.StartOptions {
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
   * main: an evaluation of a change, or an answer re-run as it was given. Not a commit of the
   * library: `invalid_request`.
   */
  readonly commit?: string | undefined
}

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
 * What a run gathers, as it goes, for its answer's provenance and its usage entry in the audit log.
 * One per run, written only by the run's own fiber.
 */
interface Making {
  model?: { readonly id: string; readonly provider: string; readonly providerModel: string }
  /** Each generation's tokens (none when the provider did not say) and time. */
  readonly generations: Array<{ readonly usage?: LanguageModel.Usage | undefined; readonly millis: number }>
  readonly toolCalls: Array<Provenance.ToolCall>
  libraryCommit?: string | undefined
  semanticModels: ReadonlyArray<Provenance.SemanticModelUsed>
  clientAttributesHash?: string | undefined
}

const sum = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0)

/** The provenance of a run's answer; none before the run chose its model. */
const provenanceOf = (making: Making): Provenance.Provenance | undefined => {
  if (making.model === undefined) return undefined
  const reported = making.generations.flatMap((g) => g.usage === undefined ? [] : [g.usage])
  return {
    model: making.model.id,
    provider: making.model.provider,
    provider_model: making.model.providerModel,
    generations: making.generations.length,
    ...(reported.length === 0 ? {} : {
      input_tokens: sum(reported.map((u) => u.inputTokens)),
      output_tokens: sum(reported.map((u) => u.outputTokens))
    }),
    model_latency_ms: Math.round(sum(making.generations.map((g) => g.millis))),
    tool_calls: making.toolCalls,
    ...(making.libraryCommit === undefined ? {} : { library_commit: making.libraryCommit }),
    semantic_models: making.semanticModels,
    ...(making.clientAttributesHash === undefined ? {} : { client_attributes_hash: making.clientAttributesHash })
  }
}

/**
 * Answers questions.
 *
 * @since 0.1.0
 * @category services
 */
export class Answers extends Context.Tag("@sightline/core/Answers")<Answers, Answers.Service>() {}

export declare namespace Answers {
  /** The loop's operations. */
  export interface Service {
    /**
     * Starts answering a question (`ChatRuns.start` decides who may ask what) and returns at once with
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

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/**
 * Builds the loop with the given options over the ports in context (scoped: runs end with the scope).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* Chats.Chats
    const runs = yield* ChatRuns.ChatRuns
    const chatRepo = yield* ChatRepo
    const connectorRepo = yield* ConnectorRepo
    const connectors = yield* Connectors.Connectors
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
    const auditor = yield* Auditor
    const heartbeatMillis = options.heartbeatMillis ?? defaultOptions.heartbeatMillis!

    const execute = (
      principal: Policy.Principal,
      run: ChatRuns.Run,
      sign: Chats.SignAssetUrl,
      emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>,
      askOptions: AskOptions,
      making: Making,
      onReport: (report: AnswerHandlers.WrittenReport) => void,
      // The model's last part of the final step: the answer is complete, all of it emitted, and it
      // is stored there and then (not after the model's stream is torn down, which waits on the
      // provider's body to end).
      answered: (answer: string) => Effect.Effect<void, Conflict>
    ) =>
      Effect.gen(function*() {
        const catalogue = yield* catalogues.catalogue(run.organizationId)
        const entry = Option.getOrElse(Model.findById(catalogue, run.model), () => catalogue.defaultModel)
        making.model = { id: entry.id, provider: entry.provider, providerModel: Model.providerModel(entry) }
        const clientAttributesJson = Policy.clientAttributesJson(principal)
        // A fingerprint, never the attributes: the caller's audience.
        const audience = Policy.audienceOf(principal)
        if (audience !== Audience.none) making.clientAttributesHash = audience
        const records: Array<ConnectorRecord> = []
        if (run.tools.sql) {
          for (const id of run.tools.connectorIds) {
            const record = yield* connectorRepo.get(run.organizationId, id)
            if (Option.isSome(record)) records.push(record.value)
          }
        }
        const models = records.length === 0 ? [] : yield* semantic.modelsFor(principal, records, askOptions.commit)
        const connectors: Array<RunConnector> = []
        for (const [i, record] of records.entries()) {
          const schema = yield* Effect.either(runtime.introspect(record))
          connectors.push({
            record,
            schema: Either.mapLeft(schema, (e) => e.message),
            semantic: Either.mapLeft(models[i]!, (e) => e.message)
          })
        }
        making.semanticModels = connectors.flatMap((c): ReadonlyArray<Provenance.SemanticModelUsed> => {
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
          ? yield* library.snapshotFor(principal, askOptions.commit).pipe(Effect.option)
          : Option.none()
        const files = Option.match(view, {
          onNone: () => HashMap.empty<string, Uint8Array>(),
          onSome: (v) => v.files
        })
        // The commit it read: the one it was pinned to, or main's as its files or models were read
        // (main's head itself when it read neither, so that a re-run reads what it could have read).
        making.libraryCommit = askOptions.commit ??
          Option.getOrUndefined(Option.flatMap(view, (v) => v.ref)) ??
          making.semanticModels.find((m) => m.commit !== undefined)?.commit ??
          Option.getOrUndefined((yield* library.main(run.organizationId)).head)
        const hasLibrary = HashMap.size(files) > 0
        const search = run.tools.webSearch ? Option.getOrUndefined(webSearch) : undefined
        const python = run.tools.python
          ? Option.getOrUndefined(Option.filter(sandboxes, (service) => service.available))
          : undefined
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

        const { runTool, tools } = AnswerHandlers.make({ runs, runtime, assetStore, ids, renderer }, {
          principal,
          run,
          sign,
          emit,
          source: askOptions.source,
          report: askOptions.report === true,
          onReport,
          connectors,
          files,
          clientAttributesJson,
          maxRows: options.maxRows,
          queryTimeoutMillis: options.queryTimeoutMillis,
          search,
          python,
          sandboxId
        })
        const semanticContext = connectors.flatMap((c): ReadonlyArray<LanguageModel.SemanticContext> =>
          Either.isRight(c.semantic)
            ? [{
              connector_id: c.record.id,
              model: c.semantic.right.model.file,
              reviewed: c.semantic.right.source.kind === "library"
            }]
            : []
        )
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
          const began = yield* Clock.currentTimeMillis
          let firstToken = true
          yield* Stream.runForEach(
            model.generate({
              model: Model.providerModel(entry),
              provider: entry.provider,
              system,
              // A copy: the loop goes on appending, and the request must stay what was sent.
              messages: [...messages],
              ...(tools.length > 0 ? { tools } : {}),
              ...(semanticContext.length > 0 ? { semantic: semanticContext } : {})
            }),
            (part) => {
              if (part._tag === "TextDelta") {
                if (part.text === "") return Effect.void
                text += part.text
                if (!firstToken) return emit({ type: "text", text: part.text })
                firstToken = false
                return Effect.zipRight(
                  Effect.flatMap(
                    Clock.currentTimeMillis,
                    (now) => Effect.annotateCurrentSpan("sightline.time_to_first_token_ms", now - began)
                  ),
                  emit({ type: "text", text: part.text })
                )
              }
              if (part._tag === "ToolCall") calls.push({ id: part.id, name: part.name, arguments: part.arguments })
              if (part._tag !== "Finish") return Effect.void
              return Effect.flatMap(Clock.currentTimeMillis, (now) => {
                making.generations.push({ usage: part.usage, millis: now - began })
                // Said before the model's stream is torn down, so that the answer's last words are
                // still queued, not yet on their way to the log, when the run ends with them.
                return Effect.zipRight(
                  Effect.zipRight(
                    part.usage === undefined
                      ? Effect.void
                      : Metrics.tokensUsed(entry.id, run.organizationId, part.usage),
                    Effect.annotateCurrentSpan({
                      "gen_ai.response.finish_reasons": [part.reason],
                      ...(part.usage === undefined ? {} : {
                        "gen_ai.usage.input_tokens": part.usage.inputTokens,
                        "gen_ai.usage.output_tokens": part.usage.outputTokens
                      })
                    })
                  ),
                  calls.length === 0 ? answered(answer + text) : Effect.void
                )
              })
            }
          ).pipe(
            // One span per generation, with the GenAI semantic conventions' attributes (never the
            // prompt, the data it carries, or the answer).
            Effect.withSpan(`chat ${Model.providerModel(entry)}`, {
              kind: "client",
              attributes: {
                "gen_ai.operation.name": "chat",
                "gen_ai.provider.name": entry.provider,
                "gen_ai.request.model": Model.providerModel(entry),
                "gen_ai.conversation.id": run.chatId
              }
            })
          )
          answer += text
          if (calls.length === 0) break
          messages.push({ role: "assistant", content: text, toolCalls: calls })
          for (const call of calls) {
            const started = yield* Clock.currentTimeMillis
            const result = yield* runTool(call).pipe(
              Effect.withSpan(`execute_tool ${call.name}`, {
                attributes: {
                  "gen_ai.operation.name": "execute_tool",
                  "gen_ai.tool.name": call.name,
                  ...(call.id === undefined ? {} : { "gen_ai.tool.call.id": call.id }),
                  "gen_ai.conversation.id": run.chatId
                }
              })
            )
            const durationMs = (yield* Clock.currentTimeMillis) - started
            making.toolCalls.push(Provenance.toolCall(call, { failed: result._tag === "Failed", durationMs }))
            messages.push(ToolResult.toMessage(result, call.id))
          }
        }
        return answer
      })

    /**
     * One audit entry per run that called its model (`model.usage`): each generation's tokens and
     * time, so usage can be summed per member, key and model (`GET /v2/usage`).
     */
    const recordUsage = (principal: Policy.Principal, run: ChatRuns.Run, askOptions: AskOptions, making: Making) => {
      const provenance = provenanceOf(making)
      if (provenance === undefined || making.generations.length === 0) return Effect.void
      const calls = making.generations.map((g) => ({
        ms: Math.round(g.millis),
        ...(g.usage === undefined ? {} : { input: g.usage.inputTokens, output: g.usage.outputTokens })
      }))
      return auditor.recordBy(principal, {
        action: "model.usage",
        resourceType: "chat",
        resourceId: run.chatId,
        details: {
          model: provenance.model,
          provider: provenance.provider,
          source: askOptions.source ?? "api",
          ...(principal.auth._tag === "ApiKey" ? { api_key_id: principal.auth.keyId } : {}),
          input: provenance.input_tokens ?? 0,
          output: provenance.output_tokens ?? 0,
          calls
        }
      }).pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("the usage of a run was not recorded", cause)),
        Effect.asVoid
      )
    }

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
        // Tables (CSV, Excel, Parquet, JSON) become a FILES connector of the asker's, which every
        // model answers from; the sandbox, where there is one, gets every file too.
        const tables = askOptions.files.filter((file) =>
          file.path !== undefined && Connector.fileFormatOf(file.name) !== undefined
        )
        const others = askOptions.files.filter((file) => !tables.includes(file))
        if (others.length > 0) {
          if (!Option.exists(sandboxes, (service) => service.available)) {
            return yield* new InvalidRequest({
              message: `files: ${
                others.map((file) => file.name).join(", ")
              } would go to the chat's sandbox, and sandboxes are not available on this server (tables: CSV, TSV, Excel, Parquet, JSON, NDJSON)`
            })
          }
          if (request.tools?.python_enabled === false) {
            return yield* new InvalidRequest({ message: "files: uploaded files need tools.python_enabled" })
          }
        }
        if (tables.length > 0) {
          const made = yield* connectors.createForChat(
            principal,
            tables.map((file) => ({ path: file.path!, fileName: file.name, sizeBytes: file.bytes.length }))
          )
          request = { ...request, connector_ids: [...(request.connector_ids ?? []), made.id] }
        }
      }
      if (askOptions.commit !== undefined) {
        yield* Effect.catchTag(
          library.at(principal.organizationId, askOptions.commit),
          "NotFound",
          () => new InvalidRequest({ message: `${askOptions.commit} is not a commit of the library` })
        )
      }
      const { metadata, run } = yield* runs.start(principal, request, askOptions)
      let report: AnswerHandlers.WrittenReport | undefined
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

      const making: Making = { generations: [], toolCalls: [], semanticModels: [] }
      const work = Effect.gen(function*() {
        const writer = yield* RunEvents.make({
          first: run.firstEventId,
          append: (batch) => runs.appendEvents(run, batch),
          readAfter: (id) => runs.readEvents(run, id),
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
            Effect.zipRight(runs.finish(run, "failed", message)),
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
          Effect.zipRight(runs.heartbeat(run)),
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
              runs.complete(run, answer, events, provenanceOf(making)),
              (stored) => writer.stored(Arr.append(events, stored.done))
            )).pipe(
              Effect.zipRight(Effect.sync(() => {
                completed = true
              })),
              Effect.zipRight(Effect.sleep(Duration.zero)),
              Effect.uninterruptible
            )
        yield* Effect.raceFirst(
          execute(principal, run, sign, writer.emit, askOptions, making, (written) => {
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
        // The tokens spent, whatever became of the answer, once its end is out.
        Effect.ensuring(Effect.suspend(() => recordUsage(principal, run, askOptions, making))),
        Effect.annotateLogs({ chat_id: run.chatId, run_id: run.messageId }),
        // The run is a span of its own, in the trace of the request that started it, that lives
        // until its end is out: the model's generations and the tools are its children.
        Effect.withSpan("Answers.run", {
          attributes: { "gen_ai.conversation.id": run.chatId, "sightline.run.id": run.messageId }
        })
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

/**
 * The dependencies of the loop.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | Chats.Chats
  | ChatRuns.ChatRuns
  | ChatEventBus.ChatEventBus
  | ChatRepo
  | ConnectorRepo
  | Connectors.Connectors
  | ConnectorRuntime.ConnectorRuntime
  | LanguageModel.LanguageModel
  | Model.ModelCatalogue
  | AssetStore
  | IdGenerator
  | Library
  | SemanticLayer.SemanticLayer
  | Auditor

/**
 * The loop with the default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Answers, never, Requirements> = Layer.scoped(Answers, makeWith(defaultOptions))

/**
 * The loop with other options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<Answers, never, Requirements> =>
  Layer.scoped(Answers, makeWith(options))
