/**
 * The write side of a chat's runs: start a run for a question, append its cells, assets and
 * events, store its answer and end it. The read side of `/v2/chats` is `Chats`.
 *
 * Runs are detached from requests, so the run lifecycle of `Chat` is the only coordination between
 * a run and the rest of the world:
 * - `start` checks the caller once and returns a `Run` handle; the later writes take the handle
 *   (no principal: the handle is the capability, held only by the code that started the run).
 * - Every write of a run first checks that the run is still the chat's current one (still
 *   `running`, and its question is still the chat's latest). `Chats.cancel`, or a newer run, makes
 *   the old run's next write fail with `Conflict`, which is how a run on another process learns it
 *   must stop.
 * - Crash recovery: every write of a run refreshes the chat's `updated_at`, and so does its
 *   `heartbeat` (every few seconds). A `running` chat without one for `staleRunAfter` (a minute by
 *   default) is treated as failed: `is_running` reads false, the next question starts a new run
 *   instead of a `Conflict`, and a follower ends it (`endStaleRun`). `Chats.cancel` also ends a
 *   stuck run at once. No sweeper job is needed.
 * - The event log: `start` logs the run's `metadata` with the run, and every write that ends a run
 *   (`complete`, `finish`, `Chats.cancel`, the stale-run end) logs its `done` with the end.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Asset from "./Asset.js"
import * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import { ChatRepo } from "./ChatRepo.js"
import * as Chats from "./Chats.js"
import * as Clarification from "./Clarification.js"
import type { ConnectorRecord } from "./Connector.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { enforce, toError } from "./Decision.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { CellId, ChatId, type ConnectorId, type MemberId, MessageId, type OrganizationId } from "./Ids.js"
import * as RunLog from "./internal/chatRunLog.js"
import { requireUsable, usable } from "./internal/connectorUse.js"
import * as EarlierAnswers from "./internal/earlierAnswers.js"
import type * as LanguageModel from "./LanguageModel.js"
import * as Metrics from "./Metrics.js"
import * as Model from "./Model.js"
import * as Models from "./Models.js"
import { OutboundEvents } from "./OutboundEvents.js"
import * as Policy from "./Policy.js"
import type * as Provenance from "./Provenance.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"

/**
 * A cell as a run writes it: the stored cell without its chat and organization.
 *
 * @since 0.1.0
 * @category models
 */
export type CellInput = Omit<Chat.CellRecord, "organization_id" | "chat_id">

/**
 * An asset as a run adds it. The run picks the id (it uploads the bytes under `Asset.storageKey`
 * first); exactly one of `storage_key` and `content` is set.
 *
 * @since 0.1.0
 * @category models
 */
export type AssetInput = Omit<Asset.AssetRecord, "organization_id" | "chat_id" | "message_cell_id" | "created_at">

/**
 * A started run: what its later writes need.
 *
 * @since 0.1.0
 * @category models
 */
export interface Run {
  readonly organizationId: OrganizationId
  readonly chatId: ChatId
  /** Who asked: the run acts as this member (connector access, ownership of what it creates). */
  readonly memberId: MemberId
  /** The assistant message the run answers with: the `id` of the metadata event. */
  readonly messageId: MessageId
  /** The cell of that message; every asset of the run points at it as `message_cell_id`. */
  readonly messageCellId: CellId
  /** The user message that started the run; the run is current while it is the chat's latest. */
  readonly userMessageId: MessageId
  readonly question: string
  /** The model id of the chat (a chat keeps the model it started with). */
  readonly model: string
  readonly tools: Chat.ResolvedTools
  readonly isContinuation: boolean
  readonly startedAt: DateTime.Utc
  /** The id of the run's first event (`metadata`, stored by `start`); ids go on from there. */
  readonly firstEventId: number
}

/**
 * What `start` returns: the run handle and the `metadata` event that opens the stream.
 *
 * @since 0.1.0
 * @category models
 */
export interface Started {
  readonly run: Run
  readonly metadata: Chat.RunMetadata
  /** The chat's messages as the run starts, its question last: the conversation the model is given. */
  readonly history: ReadonlyArray<Chat.MessageRecord>
  /**
   * The connectors the run answers from, as `start` checked them, in the request's order: those of
   * `tools.connectorIds` when SQL is on, none otherwise.
   */
  readonly connectors: ReadonlyArray<ConnectorRecord>
  /** The chat's latest answers that showed a table, oldest first: what a follow-up refers to. */
  readonly earlier: ReadonlyArray<LanguageModel.EarlierAnswer>
}

/**
 * How a run can finish on its own (`cancelled` comes from `cancel`).
 *
 * @since 0.1.0
 * @category models
 */
export type FinishOutcome = "completed" | "failed"

/**
 * What an answer keeps beside its text: how it was made, and the clarification it asked, if it asked one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Made {
  readonly provenance?: Provenance.Provenance | undefined
  readonly clarification?: Clarification.Clarification | undefined
}

/**
 * What `complete` stored: the answer and the `done` event it logged.
 *
 * @since 0.1.0
 * @category models
 */
export interface Completed {
  readonly message: Chat.MessageRecord
  readonly done: ChatEvent.Sequenced
}

/**
 * The writes of chat runs.
 *
 * @since 0.1.0
 * @category services
 */
export class ChatRuns extends Context.Tag("@sightline/core/ChatRuns")<ChatRuns, ChatRuns.Service>() {}

export declare namespace ChatRuns {
  /** Options of `start`. */
  export interface StartOptions {
    /** Where a new chat comes from (`api` by default; `playbook` and `agent` for their runs). */
    readonly source?: Chat.ChatSource | undefined
    /**
     * Connectors the run answers from besides those the request names or the chat kept: the
     * tables uploaded with the question (`Connectors.createForChat`). The chat keeps them too.
     */
    readonly alsoConnectorIds?: ReadonlyArray<ConnectorId> | undefined
  }

  /** The run operations: `start` checks the caller; every later write takes the run's handle. */
  export interface Service {
    /**
     * Starts a run for a question (`chat:write`; continuing also needs the chat). Resolves the model
     * (`model` with `chat_id` → `InvalidRequest`, a model not permitted → `PermissionDenied`), checks
     * the connectors of `tools`/`connector_ids` (`InvalidRequest` for one the caller cannot use),
     * creates the chat or starts its next run (a running chat → `Conflict`), and stores the question.
     */
    readonly start: (
      principal: Policy.Principal,
      request: Chat.StreamChatRequest,
      options?: ChatRuns.StartOptions
    ) => Effect.Effect<Started, Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict>
    /**
     * Stores a cell of the run, or replaces it (a step is written when it starts and again when it
     * ends); returns it as the `cell` event carries it. `Conflict` once the run is no longer current.
     */
    readonly appendCell: (run: Run, cell: CellInput) => Effect.Effect<Chat.ChatCell, Conflict>
    /**
     * Stores an asset of the run, owned by the run's answer (`message_cell_id`). Its `cell_id` must
     * be a cell of the chat or the answer's cell, and exactly one of `storage_key` and `content` must
     * be set (`InvalidRequest` otherwise).
     */
    readonly addAsset: (run: Run, asset: AssetInput) => Effect.Effect<Asset.AssetRecord, Conflict | InvalidRequest>
    /**
     * Stores the run's answer and ends it as `completed` with its `done` event, in one statement
     * (the answer, then the end of the stream, without a second round of locks between them). `events` are the run's events not yet in its log, stored before
     * the `done`.
     */
    readonly complete: (
      run: Run,
      content: string,
      events: ReadonlyArray<ChatEvent.Sequenced>,
      made?: Made | undefined
    ) => Effect.Effect<Completed, Conflict>
    /**
     * Ends the run as `completed` or `failed` (`error` is logged, and is the `done` event's) and
     * logs its `done` event, which it returns; `Conflict` once it is no longer current.
     */
    readonly finish: (run: Run, outcome: FinishOutcome, error?: string) => Effect.Effect<ChatEvent.Sequenced, Conflict>

    /**
     * Appends events of the run to its chat's log (`ChatRepo.appendEvents`); false once the run is
     * over, ended by someone else.
     */
    readonly appendEvents: (
      run: Run,
      events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>
    ) => Effect.Effect<boolean>
    /** The run's logged events after an id. */
    readonly readEvents: (run: Run, after: number) => Effect.Effect<ReadonlyArray<ChatEvent.Sequenced>>
    /** The run's heartbeat (refreshes the chat's `updated_at`); false once the run is over. */
    readonly heartbeat: (run: Run) => Effect.Effect<boolean>

    /**
     * Ends the chat's run as `failed` when it is stale (its process stopped), logging its `done`
     * event with `ChatEvent.abandonedMessage`. Nothing happens for a chat whose run is live or over.
     */
    readonly endStaleRun: (organizationId: OrganizationId, id: ChatId) => Effect.Effect<void>
  }
}

const notCurrent = (run: Run, reason: string) =>
  new Errors.Conflict({ message: `run ${run.messageId} of chat ${run.chatId} ${reason}` })

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/**
 * Builds the run writer with the given options over the ports in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWith = (options: Chats.Options) =>
  Effect.gen(function*() {
    const chats = yield* ChatRepo
    const catalogues = yield* Model.ModelCatalogue
    const tx = yield* Transaction
    const ids = yield* IdGenerator
    const connectors = yield* ConnectorRepo
    const outbound = yield* OutboundEvents
    const staleRunAfter = options.staleRunAfter

    const uuid = ids.uuid

    // The question a choice stands for: a choice of the clarification the chat's last answer asked.
    const chosen = (organizationId: OrganizationId, chatId: ChatId, id: string) =>
      Effect.gen(function*() {
        const messages = yield* chats.listMessages(organizationId, chatId)
        const last = Arr.findLast(messages, (message) => message.role === "assistant")
        const clarification = Option.flatMapNullable(last, (message) => message.clarification)
        if (Option.isNone(clarification)) {
          return yield* new Errors.InvalidRequest({
            message: `choice ${id}: the chat's last answer asked no clarification to choose from`
          })
        }
        return yield* Option.match(Clarification.choice(clarification.value, id), {
          onNone: () =>
            new Errors.InvalidRequest({
              message: `choice ${id} is not one of the clarification's choices (${
                clarification.value.choices.map((c) => c.id).join(", ")
              })`
            }),
          onSome: (c) => Effect.succeed(c.question)
        })
      })

    const start = Traced.fn("ChatRuns.start")(
      function*(principal: Policy.Principal, request: Chat.StreamChatRequest, startOptions?: ChatRuns.StartOptions) {
        const organizationId = principal.organizationId
        // A continuation is checked against its chat below; a new chat needs only the permission.
        if (request.chat_id === undefined) {
          yield* enforce(Policy.requirePermission(principal, "chat:write"))
        }
        const catalogue = Models.toPolicyCatalogue(yield* catalogues.catalogue(organizationId))
        const resolved = Policy.resolveChatModel(
          principal,
          { requested: request.model, chatId: request.chat_id },
          catalogue
        )
        if (resolved._tag === "Deny") return yield* toError(resolved)
        const requested = Chat.resolveTools(request)
        // The connectors of the run: those the request names, or else those the chat kept from its
        // latest run; and those made for this question (its uploaded tables) in either case.
        const withConnectors = (ids: ReadonlyArray<ConnectorId>): Chat.ResolvedTools => ({
          ...requested,
          connectorIds: Arr.dedupe([...ids, ...(startOptions?.alsoConnectorIds ?? [])])
        })
        const named = Chat.namesConnectors(request)

        const { metadata, run } = yield* tx.withTransaction(Effect.gen(function*() {
          const now = yield* DateTime.now
          const checkTools = (tools: Chat.ResolvedTools, field: string) =>
            requireUsable(connectors, principal, tools.connectorIds, now, field)
          let chat: Chat.ChatRecord
          let tools = withConnectors(requested.connectorIds)
          // The question, or the one the chosen choice of the chat's clarification stands for.
          let question = request.question ?? ""
          if (request.question === undefined && (request.choice === undefined || request.chat_id === undefined)) {
            return yield* new Errors.InvalidRequest({ message: "question is required" })
          }
          if (request.chat_id !== undefined) {
            const found = yield* chats.getForUpdate(organizationId, request.chat_id)
            if (Option.isNone(found)) return yield* new Errors.NotFound()
            yield* enforce(
              Policy.canWrite(principal, "chat", Chats.accessOf(found.value), now)
            )
            if (request.choice !== undefined) {
              question = yield* chosen(organizationId, found.value.id, request.choice)
            }
            if (named) yield* checkTools(tools, "invalid connector_ids")
            else {
              // A kept connector deleted or closed to the caller since is named, so that the asker
              // names the connectors to use instead: a follow-up never loses one silently.
              tools = withConnectors(found.value.connector_ids ?? [])
              yield* checkTools(tools, "the chat's connectors (name connector_ids to replace them)")
            }
            // A run whose process died never finishes; past the stale limit it counts as failed, so
            // the chat takes questions again instead of answering `Conflict` forever.
            let previous = found.value
            if (Chats.isStale(previous, now, staleRunAfter)) {
              yield* RunLog.logEnd(chats, previous, {
                type: "done",
                status: "failed",
                error: ChatEvent.abandonedMessage
              })
              previous = yield* Effect.orDie(Chat.finishRun(previous, "failed", now))
            }
            chat = yield* Chat.startRun(previous, now)
          } else {
            const endUser = Policy.endUserOf(principal)
            if (!named && endUser !== undefined) {
              // The widget names no connectors: an end user asks about those its session reaches.
              tools = withConnectors(
                endUser.connectorIds ?? (yield* usable(connectors, principal, organizationId, now)).map((c) => c.id)
              )
            }
            yield* checkTools(tools, "invalid connector_ids")
            const model = yield* Option.match(resolved.model, {
              onNone: () => Effect.dieMessage("a new chat always resolves a model"),
              onSome: (entry) => Effect.succeed(entry.id)
            })
            chat = Chat.make({
              id: ChatId.make(yield* uuid),
              organizationId,
              creatorId: principal.memberId,
              audience: Policy.audienceOf(principal),
              model,
              source: startOptions?.source ?? "api",
              question,
              at: now
            })
          }
          // The trace that started the run, for its followers (only a traced request has one), and
          // the connectors it answers from, which the chat keeps for the next question.
          const traceparent = yield* Traced.traceparent
          const { connector_ids: _kept, run_traceparent: _, ...rest } = chat
          chat = new Chat.ChatRecord({
            ...rest,
            ...(traceparent === undefined ? {} : { run_traceparent: traceparent }),
            ...(tools.connectorIds.length === 0 ? {} : { connector_ids: tools.connectorIds })
          })
          if (request.chat_id !== undefined) yield* Effect.orDie(chats.update(chat))
          else yield* Effect.orDie(chats.create(chat))
          const userMessageId = MessageId.make(yield* uuid)
          const userCellId = CellId.make(yield* uuid)
          // Every message is also a `markdown` cell, so the cells endpoint shows the conversation and a
          // message's `cell_id` names a real cell.
          yield* Effect.orDie(chats.upsertCell(
            new Chat.CellRecord({
              id: userCellId,
              organization_id: organizationId,
              chat_id: chat.id,
              type: "markdown",
              status: "completed",
              role: "user",
              content: question,
              created_at: now
            })
          ))
          yield* Effect.orDie(chats.appendMessage(
            new Chat.MessageRecord({
              id: userMessageId,
              organization_id: organizationId,
              chat_id: chat.id,
              role: "user",
              content: question,
              cell_id: userCellId,
              created_at: now
            })
          ))
          // Event ids go on across the chat's runs, so a `Last-Event-ID` names one event of the chat.
          const firstEventId = Option.match(yield* chats.latestRun(organizationId, chat.id), {
            onNone: () => 1,
            onSome: (latest) => latest.last + 1
          })
          const run: Run = {
            organizationId,
            chatId: chat.id,
            memberId: principal.memberId,
            messageId: MessageId.make(yield* uuid),
            messageCellId: CellId.make(yield* uuid),
            userMessageId,
            question,
            model: chat.model,
            tools,
            isContinuation: request.chat_id !== undefined,
            startedAt: now,
            firstEventId
          }
          const metadata: Chat.RunMetadata = {
            id: run.messageId,
            created_at: now,
            model: run.model,
            chat_id: run.chatId,
            is_continuation: run.isContinuation
          }
          // The run starts in the log with the chat: a follower never finds a running chat without it.
          const logged = yield* chats.appendEvents({
            organizationId,
            chatId: chat.id,
            runStart: firstEventId,
            events: [{ id: firstEventId, event: { type: "metadata", ...metadata } }]
          })
          if (!logged) return yield* Effect.dieMessage(`chat ${chat.id}: the log refused the start of its run`)
          return { run, metadata }
        }))
        // What the run reads is read after the chat's row lock is released: the chat is `running`,
        // so no other run appends to it meanwhile, and the lock is held only for the writes.
        const history = yield* chats.listMessages(organizationId, run.chatId)
        const records = run.tools.sql
          ? Arr.getSomes(yield* Effect.forEach(run.tools.connectorIds, (id) => connectors.get(organizationId, id)))
          : []
        const earlier = yield* EarlierAnswers.read(chats, organizationId, run.chatId, history)
        return { run, metadata, history, connectors: records, earlier }
      }
    )

    // Locks the chat and checks that the run is still its current one: `running`, and started by the
    // chat's latest question (a cancelled run, or one a newer run replaced, must stop writing).
    const current = (run: Run) =>
      Effect.gen(function*() {
        const chat = yield* chats.getForUpdate(run.organizationId, run.chatId)
        if (Option.isNone(chat)) return yield* notCurrent(run, "no longer exists")
        if (chat.value.status !== "running") return yield* notCurrent(run, `is over (the chat is ${chat.value.status})`)
        const messages = yield* chats.listMessages(run.organizationId, run.chatId)
        const latest = Arr.findLast(messages, (message) => message.role === "user")
        if (!Option.exists(latest, (message) => message.id === run.userMessageId)) {
          return yield* notCurrent(run, "was replaced by a newer run")
        }
        return chat.value
      })

    // A write of a run: checks the run, does the write and refreshes the chat's heartbeat.
    const runWrite = <A, E>(run: Run, write: (now: DateTime.Utc) => Effect.Effect<A, E>) =>
      tx.withTransaction(Effect.gen(function*() {
        const chat = yield* current(run)
        const now = yield* DateTime.now
        const result = yield* write(now)
        yield* Effect.orDie(chats.update(new Chat.ChatRecord({ ...chat, updated_at: now })))
        return result
      }))

    const appendCell = Traced.fn("ChatRuns.appendCell")(function*(run: Run, input: CellInput) {
      return yield* runWrite(run, () => {
        const record = new Chat.CellRecord({ ...input, organization_id: run.organizationId, chat_id: run.chatId })
        // The chat exists (checked under its lock); a cell id of another chat is a clash the run caused.
        return Effect.as(
          Effect.catchTag(chats.upsertCell(record), "NotFound", (error) => Effect.die(error)),
          Chat.toChatCell(record, [])
        )
      })
    })

    // The answer's message and its `markdown` cell, built from the run's own typed values without
    // checking them again: they are on the path of every answer's end, where the check cost about
    // 60 µs a pair.
    const answerMessage = (run: Run, content: string, now: DateTime.Utc, made: Made) =>
      new Chat.MessageRecord({
        id: run.messageId,
        organization_id: run.organizationId,
        chat_id: run.chatId,
        role: "assistant",
        content,
        cell_id: run.messageCellId,
        ...(made.provenance === undefined ? {} : { provenance: made.provenance }),
        ...(made.clarification === undefined ? {} : { clarification: made.clarification }),
        created_at: now
      }, true)
    const answerCell = (run: Run, content: string, now: DateTime.Utc) =>
      new Chat.CellRecord({
        id: run.messageCellId,
        organization_id: run.organizationId,
        chat_id: run.chatId,
        type: "markdown",
        status: "completed",
        role: "assistant",
        content,
        created_at: now
      }, true)

    // One statement of the store (`ChatRepo.completeRun`): the end of every answer waits on it.
    const complete = Traced.fn("ChatRuns.complete")(function*(
      run: Run,
      content: string,
      events: ReadonlyArray<ChatEvent.Sequenced>,
      made?: Made
    ) {
      const now = yield* DateTime.now
      const message = answerMessage(run, content, now, made ?? {})
      const done: ChatEvent.Done = { type: "done", status: "completed" }
      const stored = yield* chats.completeRun({
        message,
        cell: answerCell(run, content, now),
        userMessageId: run.userMessageId,
        at: now,
        runStart: run.firstEventId,
        events,
        done
      })
      if (Option.isSome(stored)) {
        yield* Metrics.runEnded("completed")
        // Told once the answer is stored, beside its `done` rather than before it: the answer's
        // end stays one statement on the pool (no transaction around it), and its reader waits for
        // no lookup of endpoints. A process that dies in between loses this one event.
        yield* Effect.forkDaemon(
          outbound.publish(run.organizationId, "chat.completed", { chat_id: run.chatId, message_id: message.id })
        )
        return { message, done: { id: stored.value, event: done } }
      }
      // Nothing was written: say why, as the other writes of a run do.
      yield* tx.withTransaction(current(run))
      return yield* notCurrent(run, "already stored its answer")
    })

    const addAsset = Traced.fn("ChatRuns.addAsset")(function*(run: Run, input: AssetInput) {
      if ((input.storage_key === undefined) === (input.content === undefined)) {
        return yield* new Errors.InvalidRequest({
          message: "an asset has exactly one of storage_key (stored bytes) and content (inline text)"
        })
      }
      return yield* runWrite(run, (now) =>
        Effect.gen(function*() {
          // The answer's cell is written last (with the answer), so assets may name it before it exists.
          if (input.cell_id !== run.messageCellId) {
            const cell = yield* chats.getCell(run.organizationId, run.chatId, input.cell_id)
            if (Option.isNone(cell)) {
              return yield* new Errors.InvalidRequest({
                message: `asset ${input.id}: cell ${input.cell_id} is not a cell of chat ${run.chatId}`
              })
            }
          }
          const asset = new Asset.AssetRecord({
            ...input,
            organization_id: run.organizationId,
            chat_id: run.chatId,
            message_cell_id: run.messageCellId,
            created_at: now
          })
          yield* Effect.catchTag(chats.addAsset(asset), "NotFound", (error) => Effect.die(error))
          return asset
        }))
    })

    const finish = Traced.fn("ChatRuns.finish")(function*(run: Run, outcome: FinishOutcome, error?: string) {
      const done: ChatEvent.Done = outcome === "completed"
        ? { type: "done", status: "completed" }
        : { type: "done", status: "failed", error: error ?? Errors.defaultMessage.execution_failed }
      const logged = yield* tx.withTransaction(Effect.gen(function*() {
        const chat = yield* current(run)
        const id = yield* RunLog.logEnd(chats, chat, done)
        const finished = yield* Effect.orDie(Chat.finishRun(chat, outcome, yield* DateTime.now))
        yield* Effect.orDie(chats.update(finished))
        return id
      }))
      yield* Metrics.runEnded(outcome === "completed" ? "completed" : "failed")
      if (outcome === "failed") {
        yield* Effect.logWarning("chat run failed").pipe(
          Effect.annotateLogs({ chat_id: run.chatId, run_id: run.messageId, error: error ?? "" })
        )
      }
      return { id: logged, event: done }
    })

    const appendEvents = (run: Run, events: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>) =>
      chats.appendEvents({ organizationId: run.organizationId, chatId: run.chatId, runStart: run.firstEventId, events })

    const readEvents = (run: Run, after: number) =>
      chats.readEvents(run.organizationId, run.chatId, run.firstEventId, after)

    const heartbeat = (run: Run) =>
      Effect.flatMap(
        DateTime.now,
        (at) =>
          chats.heartbeat({ organizationId: run.organizationId, chatId: run.chatId, runStart: run.firstEventId, at })
      )

    const endStaleRun = Traced.fn("ChatRuns.endStaleRun")(function*(organizationId: OrganizationId, id: ChatId) {
      yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const chat = yield* chats.getForUpdate(organizationId, id)
        if (Option.isNone(chat) || !Chats.isStale(chat.value, now, staleRunAfter)) {
          return
        }
        yield* RunLog.logEnd(chats, chat.value, { type: "done", status: "failed", error: ChatEvent.abandonedMessage })
        yield* Effect.orDie(chats.update(yield* Effect.orDie(Chat.finishRun(chat.value, "failed", now))))
        yield* Effect.logWarning("chat run abandoned: its heartbeat went stale").pipe(
          Effect.annotateLogs({ chat_id: id })
        )
      }))
    })

    return ChatRuns.of({
      start,
      appendCell,
      complete,
      addAsset,
      finish,
      appendEvents,
      readEvents,
      heartbeat,
      endStaleRun
    })
  })

/**
 * Builds the run writer with the default options.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = makeWith(Chats.defaultOptions)

/**
 * The run writer over the repositories, the model catalogue, `Transaction` and `IdGenerator` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ChatRuns,
  never,
  ChatRepo | ConnectorRepo | Model.ModelCatalogue | Transaction | IdGenerator | OutboundEvents
> = Layer.effect(ChatRuns, make)

/**
 * `layer` with other options (the same `staleRunAfter` as the `Chats` it runs beside).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (
  options: Chats.Options
): Layer.Layer<
  ChatRuns,
  never,
  ChatRepo | ConnectorRepo | Model.ModelCatalogue | Transaction | IdGenerator | OutboundEvents
> => Layer.effect(ChatRuns, makeWith(options))
