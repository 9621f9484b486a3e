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
 * A run goes in two steps: `AnswerContext` gathers what it answers with (the connectors, their
 * semantic models and schemas, the Context Library, the conversation, the system prompt and the
 * tools), then `AnswerLoop` generates and calls tools. This module keeps the run's life: its event
 * writer and readers (`internal/runEvents`), the watch for a cancel, its end, and its usage entry.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberMap from "effect/FiberMap"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Stream from "effect/Stream"
import * as AnswerContext from "./AnswerContext.js"
import type * as AnswerHandlers from "./AnswerHandlers.js"
import * as AnswerLoop from "./AnswerLoop.js"
import * as Asset from "./Asset.js"
import { Auditor } from "./Auditor.js"
import type * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import * as ChatEventBus from "./ChatEventBus.js"
import * as ChatRuns from "./ChatRuns.js"
import * as Chats from "./Chats.js"
import type * as Clarification from "./Clarification.js"
import * as Connector from "./Connector.js"
import * as ConnectorRuntime from "./ConnectorRuntime.js"
import * as Connectors from "./Connectors.js"
import { type Conflict, InvalidRequest, type NotFound, PermissionDenied, type Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import type { ChatId } from "./Ids.js"
import * as RunEvents from "./internal/runEvents.js"
import * as RunLedger from "./internal/runLedger.js"
import * as LanguageModel from "./LanguageModel.js"
import { Library } from "./Library.js"
import * as Policy from "./Policy.js"
import * as Sandboxes from "./Sandboxes.js"
import * as Traced from "./Traced.js"

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
  /** What it asked instead of answering, with the choices to answer with; none when it answered. */
  readonly clarification: Clarification.Clarification | undefined
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
    let clarification: Answered["clarification"]
    let text = ""
    let done: ChatEvent.Done | undefined
    return Stream.runForEach(handle.events, ({ event }) =>
      Effect.suspend(() => {
        if (event.type === "text") text += event.text
        if (event.type === "asset" && event.asset.content !== undefined) {
          if (event.asset.type === "table") last = { cellId: event.asset.cell_id, content: event.asset.content }
          if (event.asset.type === "chart") chart = { title: event.asset.name, spec: event.asset.content }
        }
        if (event.type === "clarification") clarification = { question: event.question, choices: event.choices }
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
        clarification,
        done
      })))
  })

/**
 * How a run is asked for, beyond what `ChatRuns.start` takes (see `AnswerContext.Asked`). A `commit`
 * that is not a commit of the library is `invalid_request`.
 *
 * @since 0.1.0
 * @category models
 */
export interface AskOptions extends ChatRuns.ChatRuns.StartOptions, AnswerContext.Asked {}

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
    const connectors = yield* Connectors.Connectors
    const model = yield* LanguageModel.LanguageModel
    const library = yield* Library
    // Optional: without sandboxes (or where they cannot run), uploads other than tables are refused.
    const sandboxes = yield* Effect.serviceOption(Sandboxes.Sandboxes)
    const gather = yield* AnswerContext.make(options)
    const running = yield* FiberMap.make<ChatId>()
    const bus = yield* ChatEventBus.ChatEventBus
    const auditor = yield* Auditor
    const heartbeatMillis = options.heartbeatMillis ?? defaultOptions.heartbeatMillis!

    /**
     * One audit entry per run that called its model (`model.usage`): each generation's tokens and
     * time, so usage can be summed per member, key and model (`GET /v2/usage`).
     */
    // One audit entry per run that called its model (`model.usage`).
    const recordUsage = (principal: Policy.Principal, run: ChatRuns.Run, source: string, ledger: RunLedger.Ledger) => {
      const details = RunLedger.usage(ledger, {
        source,
        apiKeyId: principal.auth._tag === "ApiKey" ? principal.auth.keyId : undefined
      })
      if (details === undefined) return Effect.void
      return auditor.recordBy(principal, {
        action: "model.usage",
        resourceType: "chat",
        resourceId: run.chatId,
        details
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
        // Files become a connector of the key's owner, which the host's own people then see: an end
        // user's session attaches none.
        if (Policy.endUserOf(principal) !== undefined) {
          return yield* new PermissionDenied({ message: "permission denied: an end user's session attaches no files" })
        }
        if (askOptions.files.length > AnswerContext.maxUploadedFiles) {
          return yield* new InvalidRequest({ message: `files: at most ${AnswerContext.maxUploadedFiles} files` })
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
          askOptions = { ...askOptions, alsoConnectorIds: [...(askOptions.alsoConnectorIds ?? []), made.id] }
        }
      }
      if (askOptions.commit !== undefined) {
        yield* Effect.catchTag(
          library.at(principal.organizationId, askOptions.commit),
          "NotFound",
          () => new InvalidRequest({ message: `${askOptions.commit} is not a commit of the library` })
        )
      }
      const started = yield* runs.start(principal, request, askOptions)
      const { metadata, run } = started
      let report: AnswerHandlers.WrittenReport | undefined
      // The clarification the run asked, kept on its answer's message.
      let clarification: Clarification.Clarification | undefined
      const readers = yield* RunEvents.broadcast((lastId) =>
        bus.publish(ChatEventBus.Announcement.Appended({ chatId: run.chatId, lastId }))
      )
      // `start` stored the metadata with the run.
      yield* readers.publish([{ id: run.firstEventId, event: { type: "metadata", ...metadata } }])

      const ledger = RunLedger.make()
      const work = Effect.gen(function*() {
        const writer = yield* RunEvents.make({
          first: run.firstEventId,
          append: (batch) => runs.appendEvents(run, batch),
          readAfter: (id) => runs.readEvents(run, id),
          publish: readers.publish
        })
        // A plan announced is kept with the answer too, for a reader who comes after the stream.
        const emit = (event: ChatEvent.ChatEvent) => {
          if (event.type === "plan") RunLedger.planned(ledger, { title: event.title, steps: event.steps })
          return writer.emit(event)
        }
        // The end someone else wrote (a cancel, a newer run): it is in the log; hand it on. Only a
        // chat that is gone altogether has none, and then this process's readers are told alone.
        const endedElsewhere = writer.catchUp.pipe(
          Effect.zipRight(readers.ended),
          Effect.flatMap((ended) =>
            ended ? Effect.void : readers.publish([{
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
              runs.complete(run, answer, events, { provenance: RunLedger.provenance(ledger), clarification }),
              (stored) => writer.stored(Arr.append(events, stored.done))
            )).pipe(
              Effect.zipRight(Effect.sync(() => {
                completed = true
              })),
              Effect.zipRight(Effect.sleep(Duration.zero)),
              Effect.uninterruptible
            )
        yield* Effect.raceFirst(
          gather({
            principal,
            started,
            asked: askOptions,
            sign,
            emit,
            onReport: (written) => {
              report = written
            },
            onClarification: (asked) => {
              clarification = asked
            }
          }).pipe(
            Effect.flatMap((context) => {
              ledger.basis = context.basis
              return AnswerLoop.loop(context, model, {
                maxSteps: options.maxSteps,
                emit,
                ledger,
                answered: complete
              })
            })
          ),
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
        Effect.ensuring(Effect.suspend(() => recordUsage(principal, run, askOptions.source ?? "api", ledger))),
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
        events: readers.events,
        listen: readers.listen,
        done: readers.done,
        report: Effect.map(readers.done, () => Option.fromNullable(report))
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
  | AnswerContext.Requirements
  | Chats.Chats
  | ChatEventBus.ChatEventBus
  | Connectors.Connectors
  | LanguageModel.LanguageModel
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
