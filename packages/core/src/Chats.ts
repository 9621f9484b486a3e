/**
 * The chats use cases: the read side of `/v2/chats` (list, get, cells, one cell, cancel) and the
 * write primitives an agent run uses (start a run, append cells, the answer and assets, finish).
 *
 * Visibility: a chat is visible to its creator only, org admins included (a conversation is
 * personal, and roles never replace ownership in the policy engine). Everyone else gets
 * `NotFound`, exactly as for a chat that does not exist.
 *
 * Runs are detached from requests, so the run lifecycle of `Chat` is the only coordination between
 * a run and the rest of the world:
 * - `start` checks the caller once and returns a `Run` handle; the later writes take the handle
 *   (no principal: the handle is the capability, held only by the code that started the run).
 * - Every write of a run first checks that the run is still the chat's current one (still
 *   `running`, and its question is still the chat's latest). `cancel`, or a newer run, makes the
 *   old run's next write fail with `Conflict`, which is how a run on another process learns it
 *   must stop.
 * - Crash recovery: every write of a run refreshes the chat's `updated_at`, and so does its
 *   `heartbeat` (every few seconds). A `running` chat without one for `staleRunAfter` (a minute by
 *   default) is treated as failed: `is_running` reads false, the next question starts a new run
 *   instead of a `Conflict`, and a follower ends it (`endStaleRun`). `cancel` also ends a stuck run
 *   at once. No sweeper job is needed.
 * - The event log: `start` logs the run's `metadata` with the run, and every write that ends a run
 *   (`complete`, `finish`, `cancel`, the stale-run end) logs its `done` with the end.
 *
 * Asset URLs are signed per fetch by the http package: the reads take a `SignAssetUrl` function
 * and return the finished wire shapes, so the storage key never leaves core.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Asset from "./Asset.js"
import { AssetStore, type StoredObject } from "./AssetStore.js"
import * as Chat from "./Chat.js"
import * as ChatEvent from "./ChatEvent.js"
import { ChatRepo } from "./ChatRepo.js"
import { ConnectorRepo } from "./ConnectorRepo.js"
import { enforce, toError } from "./Decision.js"
import type { Conflict, InvalidRequest, NotFound, PermissionDenied, Unauthenticated } from "./Errors.js"
import * as Errors from "./Errors.js"
import { IdGenerator } from "./IdGenerator.js"
import { type AssetId, CellId, ChatId, type MemberId, MessageId, type OrganizationId } from "./Ids.js"
import { requireUsable } from "./internal/connectorUse.js"
import { MemberRepo } from "./MemberRepo.js"
import * as Model from "./Model.js"
import * as Policy from "./Policy.js"
import type * as Provenance from "./Provenance.js"
import * as Traced from "./Traced.js"
import { Transaction } from "./Transaction.js"
import * as TrustedSchema from "./TrustedSchema.js"

/** Signs the URL of a stored asset (`GET /v2/assets/{id}?expires=…&signature=…`); given by the http package. */
export type SignAssetUrl = (assetId: AssetId) => Effect.Effect<string>

/** A cell as a run writes it: the stored cell without its chat and organization. */
export type CellInput = Omit<Chat.CellRecord, "organization_id" | "chat_id">

/**
 * An asset as a run adds it. The run picks the id (it uploads the bytes under `Asset.storageKey`
 * first); exactly one of `storage_key` and `content` is set.
 */
export type AssetInput = Omit<Asset.AssetRecord, "organization_id" | "chat_id" | "message_cell_id" | "created_at">

/** An asset with its stored bytes (`bytes` is absent for inline assets, which carry `content`). */
export interface SignedAsset {
  readonly record: Asset.AssetRecord
  readonly bytes?: StoredObject | undefined
}

/** A started run: what its later writes need. */
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

/** What `start` returns: the run handle and the `metadata` event that opens the stream. */
export interface Started {
  readonly run: Run
  readonly metadata: Chat.RunMetadata
}

/** How a run can finish on its own (`cancelled` comes from `cancel`). */
export type FinishOutcome = "completed" | "failed"

/** What `complete` stored: the answer and the `done` event it logged. */
export interface Completed {
  readonly message: Chat.MessageRecord
  readonly done: ChatEvent.Sequenced
}

/** Options of the chats service. */
export interface Options {
  /**
   * A `running` chat without a write for this long is treated as failed (its process died). A run
   * writes a heartbeat every `Answers.Options.heartbeatMillis`, which must stay well below this.
   */
  readonly staleRunAfter: Duration.DurationInput
}

/** The default options: a run is stale after a minute without a write (twelve missed heartbeats). */
export const defaultOptions: Options = { staleRunAfter: Duration.minutes(1) }

/** The chats use cases. */
export class Chats extends Context.Tag("@sightline/core/Chats")<Chats, Chats.Service>() {}

export declare namespace Chats {
  /** Options of `start`. */
  export interface StartOptions {
    /** Where a new chat comes from (`api` by default; `playbook` and `agent` for their runs). */
    readonly source?: Chat.ChatSource | undefined
  }

  /** The chat operations. The caller comes first; a chat of anyone else is `NotFound`. */
  export interface Service {
    /** `GET /v2/chats` (`chat:read`): the caller's chats, filtered, sorted and paged. */
    readonly list: (
      principal: Policy.Principal,
      query: Chat.ListChatsQuery
    ) => Effect.Effect<Chat.ListChatsResponse, Unauthenticated | PermissionDenied>
    /**
     * `GET /v2/chats/{id}` (`chat:read`): the chat, its messages (each assistant message with the
     * assets produced for it) and every asset of the chat, with `message_cell_id`.
     */
    readonly get: (
      principal: Policy.Principal,
      id: ChatId,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.GetChatResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/chats/{id}/cells` (`chat:read`): a page of cells, newest first, each with its assets. */
    readonly cells: (
      principal: Policy.Principal,
      id: ChatId,
      query: Chat.ChatCellsQuery,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.ChatCellsResponse, Unauthenticated | PermissionDenied | NotFound>
    /** `GET /v2/chats/{id}/cells/{cellId}` (`chat:read`): one cell with its assets. */
    readonly cell: (
      principal: Policy.Principal,
      id: ChatId,
      cellId: CellId,
      sign: SignAssetUrl
    ) => Effect.Effect<Chat.ChatCell, Unauthenticated | PermissionDenied | NotFound>
    /**
     * `POST /v2/chats/{id}/cancel` (`chat:write`): ends the running run as `cancelled`;
     * `{cancelled: false}` when nothing was running (cancelling twice is not an error).
     */
    readonly cancel: (
      principal: Policy.Principal,
      id: ChatId
    ) => Effect.Effect<Chat.CancelChatResponse, Unauthenticated | PermissionDenied | NotFound>
    /**
     * The asset a signed URL names, in whichever organization it lives (`NotFound` when none). There
     * is no caller: only for serving `GET /v2/assets/{id}` once the URL's signature is verified, which
     * proves the holder was handed the URL by someone who could read the chat.
     */
    readonly assetForSignedUrl: (id: AssetId) => Effect.Effect<SignedAsset, NotFound>

    /**
     * Starts a run for a question (`chat:write`; continuing also needs the chat). Resolves the model
     * (`model` with `chat_id` → `InvalidRequest`, a model not permitted → `PermissionDenied`), checks
     * the connectors of `tools`/`connector_ids` (`InvalidRequest` for one the caller cannot use),
     * creates the chat or starts its next run (a running chat → `Conflict`), and stores the question.
     */
    readonly start: (
      principal: Policy.Principal,
      request: Chat.StreamChatRequest,
      options?: StartOptions
    ) => Effect.Effect<Started, Unauthenticated | PermissionDenied | NotFound | InvalidRequest | Conflict>
    /**
     * Stores a cell of the run, or replaces it (a step is written when it starts and again when it
     * ends); returns it as the `cell` event carries it. `Conflict` once the run is no longer current.
     */
    readonly appendCell: (run: Run, cell: CellInput) => Effect.Effect<Chat.ChatCell, Conflict>
    /**
     * Stores the run's answer: the assistant message (id `run.messageId`) and its `markdown` cell
     * (`run.messageCellId`). One answer per run: a second one is a `Conflict`.
     */
    readonly appendAssistantMessage: (run: Run, content: string) => Effect.Effect<Chat.MessageRecord, Conflict>
    /**
     * Stores an asset of the run, owned by the run's answer (`message_cell_id`). Its `cell_id` must
     * be a cell of the chat or the answer's cell, and exactly one of `storage_key` and `content` must
     * be set (`InvalidRequest` otherwise).
     */
    readonly addAsset: (run: Run, asset: AssetInput) => Effect.Effect<Asset.AssetRecord, Conflict | InvalidRequest>
    /**
     * Stores the run's answer and ends it as `completed` with its `done` event, in one statement
     * (`appendAssistantMessage` then `finish`, without a second round of locks between the answer
     * and the end of the stream). `events` are the run's events not yet in its log, stored before
     * the `done`.
     */
    readonly complete: (
      run: Run,
      content: string,
      events: ReadonlyArray<ChatEvent.Sequenced>,
      provenance?: Provenance.Provenance | undefined
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

    /** The chat, for a caller who may read it (`chat:read`); `NotFound` as for `get`. */
    readonly visible: (
      principal: Policy.Principal,
      id: ChatId
    ) => Effect.Effect<Chat.ChatRecord, Unauthenticated | PermissionDenied | NotFound>
    /**
     * Ends the chat's run as `failed` when it is stale (its process stopped), logging its `done`
     * event with `ChatEvent.abandonedMessage`. Nothing happens for a chat whose run is live or over.
     */
    readonly endStaleRun: (organizationId: OrganizationId, id: ChatId) => Effect.Effect<void>
  }
}

// -----------------------------------------------------------------------------------------------
// Rules
// -----------------------------------------------------------------------------------------------

/** Who may reach a chat: its creator only (no grants, no org-wide visibility). */
export const accessOf = (chat: Chat.ChatRecord): Policy.ObjectAccess => ({
  organizationId: chat.organization_id,
  ownerId: chat.creator_id,
  isPublic: false,
  grants: []
})

/** Is the chat `running` without a write for `staleRunAfter` (its run's process is presumed dead)? */
export const isStale = (chat: Chat.ChatRecord, now: DateTime.Utc, staleRunAfter: Duration.DurationInput): boolean =>
  chat.status === "running" && DateTime.lessThanOrEqualTo(DateTime.addDuration(chat.updated_at, staleRunAfter), now)

/** The policy engine's view of the model catalogue. */
export const policyCatalogue = (catalogue: Model.Catalogue): Policy.Catalogue => ({
  models: catalogue.entries.map((entry) => ({ number: entry.number, id: entry.id, provider: entry.provider })),
  defaultModel: catalogue.defaultModel.number
})

const notCurrent = (run: Run, reason: string) =>
  new Errors.Conflict({ message: `run ${run.messageId} of chat ${run.chatId} ${reason}` })

// -----------------------------------------------------------------------------------------------
// The service
// -----------------------------------------------------------------------------------------------

/** Builds the chats use cases with the given options over the ports in context. */
export const makeWith = (options: Options) =>
  Effect.gen(function*() {
    const chats = yield* ChatRepo
    const members = yield* MemberRepo
    const catalogues = yield* Model.ModelCatalogue
    const tx = yield* Transaction
    const ids = yield* IdGenerator
    const assetStore = yield* AssetStore
    const connectors = yield* ConnectorRepo
    const staleRunAfter = options.staleRunAfter

    const uuid = ids.uuid

    // The chat if the caller may see it (`chat:read`), else `NotFound`/`PermissionDenied`.
    const readable = (principal: Policy.Principal, id: ChatId) =>
      Effect.gen(function*() {
        const chat = yield* chats.get(principal.organizationId, id)
        if (Option.isNone(chat)) return yield* new Errors.NotFound()
        yield* enforce(
          Policy.canRead(principal, "chat", accessOf(chat.value), yield* DateTime.now)
        )
        return chat.value
      })

    const render = (asset: Asset.AssetRecord, sign: SignAssetUrl, withMessageCellId: boolean) =>
      asset.storage_key === undefined
        ? Effect.succeed(Asset.toAsset(asset, { withMessageCellId }))
        : Effect.map(sign(asset.id), (url) => Asset.toAsset(asset, { url, withMessageCellId }))

    // Cells with the assets they produced (cells never carry `message_cell_id`: Get Chat only).
    const renderCells = (
      cells: ReadonlyArray<Chat.CellRecord>,
      assets: ReadonlyArray<Asset.AssetRecord>,
      sign: SignAssetUrl
    ) =>
      Effect.forEach(cells, (cell) =>
        Effect.map(
          Effect.forEach(assets.filter((asset) => asset.cell_id === cell.id), (asset) => render(asset, sign, false)),
          (rendered) => Chat.toChatCell(cell, rendered)
        ))

    const list = Traced.fn("Chats.list")(function*(principal: Policy.Principal, query: Chat.ListChatsQuery) {
      yield* enforce(Policy.requirePermission(principal, "chat:read"))
      const page = yield* chats.list(principal.organizationId, {
        limit: query.limit,
        offset: query.offset,
        searchTerm: query.search_term,
        sortBy: query.sort_by,
        sortDirection: query.sort_direction,
        creatorId: principal.memberId
      })
      // Only the caller's own chats are listed, so every creator e-mail is the caller's (which
      // authentication already read, saving a statement on every listing).
      const creatorEmail = principal.email ?? Option.match(
        yield* members.get(principal.organizationId, principal.memberId),
        { onNone: () => "", onSome: (member) => member.email }
      )
      const now = yield* DateTime.now
      return {
        chats: page.rows.map(({ chat, preview }) => {
          const summary = Chat.toSummary(chat, { preview, creatorEmail })
          return isStale(chat, now, staleRunAfter)
            ? TrustedSchema.make(Chat.ChatSummary, { ...summary, is_running: false })
            : summary
        }),
        total_count: page.totalCount
      }
    })

    const get = Traced.fn("Chats.get")(function*(principal: Policy.Principal, id: ChatId, sign: SignAssetUrl) {
      const chat = yield* readable(principal, id)
      const [messages, assets] = yield* Effect.all([
        chats.listMessages(principal.organizationId, id),
        chats.listAssets(principal.organizationId, id)
      ])
      const rendered = yield* Effect.forEach(assets, (asset) => render(asset, sign, true))
      return {
        chat: Chat.toChat(chat),
        messages: messages.map((message) =>
          Chat.toChatMessage(message, rendered.filter((asset) => asset.message_cell_id === message.cell_id))
        ),
        assets: rendered
      }
    })

    const cells = Traced.fn("Chats.cells")(
      function*(principal: Policy.Principal, id: ChatId, query: Chat.ChatCellsQuery, sign: SignAssetUrl) {
        yield* readable(principal, id)
        // The query schema already falls back; in-process callers get the same rule.
        const limit = Number.isInteger(query.limit) && query.limit >= 1 && query.limit <= Chat.maxCellsLimit
          ? query.limit
          : Chat.defaultCellsLimit
        const [page, assets] = yield* Effect.all([
          chats.listCells(principal.organizationId, id, { limit, offset: query.offset }),
          chats.listAssets(principal.organizationId, id)
        ])
        return { chat_id: id, cells: yield* renderCells(page.cells, assets, sign), has_more: page.hasMore }
      }
    )

    const cell = Traced.fn("Chats.cell")(
      function*(principal: Policy.Principal, id: ChatId, cellId: CellId, sign: SignAssetUrl) {
        yield* readable(principal, id)
        const found = yield* chats.getCell(principal.organizationId, id, cellId)
        if (Option.isNone(found)) return yield* new Errors.NotFound()
        const assets = yield* chats.listAssets(principal.organizationId, id)
        const [rendered] = yield* renderCells([found.value], assets, sign)
        return rendered!
      }
    )

    const cancel = Traced.fn("Chats.cancel")(function*(principal: Policy.Principal, id: ChatId) {
      return yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const chat = yield* chats.getForUpdate(principal.organizationId, id)
        if (Option.isNone(chat)) return yield* new Errors.NotFound()
        yield* enforce(
          Policy.canWrite(principal, "chat", accessOf(chat.value), now)
        )
        if (chat.value.status !== "running") return { cancelled: false }
        // The `done` goes into the log here, with the end: the run's process may be gone.
        yield* logEnd(chat.value, { type: "done", status: "failed", error: ChatEvent.cancelledMessage })
        const cancelled = yield* Effect.orDie(Chat.finishRun(chat.value, "cancelled", now))
        yield* Effect.orDie(chats.update(cancelled))
        return { cancelled: true }
      }))
    })

    const start = Traced.fn("Chats.start")(
      function*(principal: Policy.Principal, request: Chat.StreamChatRequest, startOptions?: Chats.StartOptions) {
        const organizationId = principal.organizationId
        // A continuation is checked against its chat below; a new chat needs only the permission.
        if (request.chat_id === undefined) {
          yield* enforce(Policy.requirePermission(principal, "chat:write"))
        }
        const catalogue = policyCatalogue(yield* catalogues.catalogue(organizationId))
        const resolved = Policy.resolveChatModel(
          principal,
          { requested: request.model, chatId: request.chat_id },
          catalogue
        )
        if (resolved._tag === "Deny") return yield* toError(resolved)
        const tools = Chat.resolveTools(request)

        return yield* tx.withTransaction(Effect.gen(function*() {
          const now = yield* DateTime.now
          const checkTools = requireUsable(connectors, principal, tools.connectorIds, now, "invalid connector_ids")
          let chat: Chat.ChatRecord
          if (request.chat_id !== undefined) {
            const found = yield* chats.getForUpdate(organizationId, request.chat_id)
            if (Option.isNone(found)) return yield* new Errors.NotFound()
            yield* enforce(
              Policy.canWrite(principal, "chat", accessOf(found.value), now)
            )
            yield* checkTools
            // A run whose process died never finishes; past the stale limit it counts as failed, so
            // the chat takes questions again instead of answering `Conflict` forever.
            let previous = found.value
            if (isStale(previous, now, staleRunAfter)) {
              yield* logEnd(previous, { type: "done", status: "failed", error: ChatEvent.abandonedMessage })
              previous = yield* Effect.orDie(Chat.finishRun(previous, "failed", now))
            }
            chat = yield* Chat.startRun(previous, now)
            yield* Effect.orDie(chats.update(chat))
          } else {
            yield* checkTools
            const model = yield* Option.match(resolved.model, {
              onNone: () => Effect.dieMessage("a new chat always resolves a model"),
              onSome: (entry) => Effect.succeed(entry.id)
            })
            chat = Chat.make({
              id: ChatId.make(yield* uuid),
              organizationId,
              creatorId: principal.memberId,
              model,
              source: startOptions?.source ?? "api",
              question: request.question,
              at: now
            })
            yield* Effect.orDie(chats.create(chat))
          }
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
              content: request.question,
              created_at: now
            })
          ))
          yield* Effect.orDie(chats.appendMessage(
            new Chat.MessageRecord({
              id: userMessageId,
              organization_id: organizationId,
              chat_id: chat.id,
              role: "user",
              content: request.question,
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
            question: request.question,
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
      }
    )

    // Logs the end of the chat's latest run under the next id, while the chat (locked by the caller)
    // is still `running`: the writes that end a run write its `done` with them, so a follower never
    // waits on a run that is over. A chat without a log (older than the log) has nothing to end.
    const logEnd = (chat: Chat.ChatRecord, done: ChatEvent.Done) =>
      Effect.gen(function*() {
        const latest = yield* chats.latestRun(chat.organization_id, chat.id)
        if (Option.isNone(latest)) return 0
        const id = latest.value.last + 1
        const logged = yield* chats.appendEvents({
          organizationId: chat.organization_id,
          chatId: chat.id,
          runStart: latest.value.start,
          events: [{ id, event: done }]
        })
        if (!logged) return yield* Effect.dieMessage(`chat ${chat.id}: the log refused the end of its run`)
        return id
      })

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

    const appendCell = Traced.fn("Chats.appendCell")(function*(run: Run, input: CellInput) {
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
    const answerMessage = (run: Run, content: string, now: DateTime.Utc, provenance?: Provenance.Provenance) =>
      new Chat.MessageRecord({
        id: run.messageId,
        organization_id: run.organizationId,
        chat_id: run.chatId,
        role: "assistant",
        content,
        cell_id: run.messageCellId,
        ...(provenance === undefined ? {} : { provenance }),
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

    // Stores the answer; the caller holds the chat's lock.
    const storeAnswer = (run: Run, content: string, now: DateTime.Utc) =>
      Effect.gen(function*() {
        const message = answerMessage(run, content, now)
        yield* Effect.catchTag(chats.appendMessage(message), "NotFound", (error) => Effect.die(error)).pipe(
          Effect.mapError(() => notCurrent(run, "already stored its answer"))
        )
        yield* Effect.orDie(chats.upsertCell(answerCell(run, content, now)))
        return message
      })

    const appendAssistantMessage = Traced.fn("Chats.appendAssistantMessage")(function*(run: Run, content: string) {
      return yield* runWrite(run, (now) => storeAnswer(run, content, now))
    })

    // One statement of the store (`ChatRepo.completeRun`): the end of every answer waits on it.
    const complete = Traced.fn("Chats.complete")(function*(
      run: Run,
      content: string,
      events: ReadonlyArray<ChatEvent.Sequenced>,
      provenance?: Provenance.Provenance
    ) {
      const now = yield* DateTime.now
      const message = answerMessage(run, content, now, provenance)
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
      if (Option.isSome(stored)) return { message, done: { id: stored.value, event: done } }
      // Nothing was written: say why, as the other writes of a run do.
      yield* tx.withTransaction(current(run))
      return yield* notCurrent(run, "already stored its answer")
    })

    const addAsset = Traced.fn("Chats.addAsset")(function*(run: Run, input: AssetInput) {
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

    const assetForSignedUrl = Traced.fn("Chats.assetForSignedUrl")(function*(id: AssetId) {
      const asset = yield* chats.findAssetForSignedUrl(id)
      if (Option.isNone(asset)) return yield* new Errors.NotFound()
      const key = asset.value.storage_key
      if (key === undefined) return { record: asset.value }
      // A record whose bytes are gone (a crash between the two writes) is as absent as no record.
      const bytes = yield* assetStore.get(key)
      if (Option.isNone(bytes)) return yield* new Errors.NotFound()
      return { record: asset.value, bytes: bytes.value }
    })

    const finish = Traced.fn("Chats.finish")(function*(run: Run, outcome: FinishOutcome, error?: string) {
      const done: ChatEvent.Done = outcome === "completed"
        ? { type: "done", status: "completed" }
        : { type: "done", status: "failed", error: error ?? Errors.defaultMessage.execution_failed }
      const logged = yield* tx.withTransaction(Effect.gen(function*() {
        const chat = yield* current(run)
        const id = yield* logEnd(chat, done)
        const finished = yield* Effect.orDie(Chat.finishRun(chat, outcome, yield* DateTime.now))
        yield* Effect.orDie(chats.update(finished))
        return id
      }))
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
      Effect.flatMap(DateTime.now, (at) =>
        chats.heartbeat({ organizationId: run.organizationId, chatId: run.chatId, runStart: run.firstEventId, at }))

    const visible = (principal: Policy.Principal, id: ChatId) =>
      readable(principal, id)

    const endStaleRun = Traced.fn("Chats.endStaleRun")(function*(organizationId: OrganizationId, id: ChatId) {
      yield* tx.withTransaction(Effect.gen(function*() {
        const now = yield* DateTime.now
        const chat = yield* chats.getForUpdate(organizationId, id)
        if (Option.isNone(chat) || !isStale(chat.value, now, staleRunAfter)) {
          return
        }
        yield* logEnd(chat.value, { type: "done", status: "failed", error: ChatEvent.abandonedMessage })
        yield* Effect.orDie(chats.update(yield* Effect.orDie(Chat.finishRun(chat.value, "failed", now))))
        yield* Effect.logWarning("chat run abandoned: its heartbeat went stale").pipe(
          Effect.annotateLogs({ chat_id: id })
        )
      }))
    })

    return Chats.of({
      list,
      get,
      cells,
      cell,
      cancel,
      assetForSignedUrl,
      start,
      appendCell,
      appendAssistantMessage,
      complete,
      addAsset,
      finish,
      appendEvents,
      readEvents,
      heartbeat,
      visible,
      endStaleRun
    })
  })

/** Builds the chats use cases with the default options. */
export const make = makeWith(defaultOptions)

/** The chats use cases over the repositories, the model catalogue, `Transaction` and `IdGenerator` in context. */
export const layer: Layer.Layer<
  Chats,
  never,
  ChatRepo | MemberRepo | ConnectorRepo | Model.ModelCatalogue | Transaction | IdGenerator | AssetStore
> = Layer.effect(Chats, make)

/** `layer` with other options (a shorter stale limit in tests, a longer one for slow warehouses). */
export const layerWith = (
  options: Options
): Layer.Layer<
  Chats,
  never,
  ChatRepo | MemberRepo | ConnectorRepo | Model.ModelCatalogue | Transaction | IdGenerator | AssetStore
> => Layer.effect(Chats, makeWith(options))
