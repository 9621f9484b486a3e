/**
 * Chats: the stored chat and its run lifecycle, messages and cells (execution steps), the wire
 * shapes of the Chat endpoints and their request schemas.
 *
 * A chat record carries the status of its latest agent run. Runs are detached from requests (a
 * dropped connection never kills one), so the status is the only thing that says whether a chat
 * can take another question.
 *
 * @since 0.1.0
 */
import * as Arr from "effect/Array"
import type * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Asset } from "./Asset.js"
import { Clarification } from "./Clarification.js"
import { Conflict } from "./Errors.js"
import { CellId, ChatId, ConnectorId, MemberId, MessageId, OrganizationId } from "./Ids.js"
import { limitParam, offsetParam } from "./Pagination.js"
import { Provenance } from "./Provenance.js"
import * as SemanticQuery from "./SemanticQuery.js"
import * as TrustedSchema from "./TrustedSchema.js"

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

/**
 * Who wrote a message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MessageRole = Schema.Literal("user", "assistant")
export type MessageRole = typeof MessageRole.Type

/**
 * Where a chat came from: the v2 API, the browser UI, a playbook run or an agent run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatSource = Schema.Literal("api", "ui", "playbook", "agent", "eval", "rerun")
export type ChatSource = typeof ChatSource.Type

/**
 * The status of a chat's latest run.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunStatus = Schema.Literal("running", "completed", "failed", "cancelled")
export type RunStatus = typeof RunStatus.Type

/**
 * How a run can end.
 *
 * @since 0.1.0
 * @category models
 */
export type RunOutcome = Exclude<RunStatus, "running">

/**
 * The cell types Sightline itself produces.
 *
 * @since 0.1.0
 * @category schemas
 */
export const KnownCellType = Schema.Literal(
  "markdown",
  "python",
  "sql",
  "bash",
  "web_search",
  "ontology_query",
  "query"
)
export type KnownCellType = typeof KnownCellType.Type

/**
 * A cell type. The list is open ("…" in the spec): a tool added later or by a host adapter may
 * produce a type core does not know, and stored cells must still decode, so any lower snake_case
 * name is accepted and clients render unknown types generically.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CellType = Schema.Union(
  KnownCellType,
  Schema.String.pipe(Schema.pattern(/^[a-z][a-z0-9_]{0,63}$/, {
    message: () => "a cell type is a lower snake_case name"
  }))
)
export type CellType = typeof CellType.Type

/**
 * Is this one of the cell types core knows?
 *
 * @since 0.1.0
 * @category guards
 */
export const isKnownCellType: (type: string) => type is KnownCellType = Schema.is(KnownCellType)

/**
 * The status of a cell.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CellStatus = Schema.Literal("completed", "running", "pending", "halted", "failed")
export type CellStatus = typeof CellStatus.Type

// ---------------------------------------------------------------------------------------------
// Stored records
// ---------------------------------------------------------------------------------------------

/**
 * A chat as stored; messages, cells and assets are stored beside it.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatRecord extends Schema.Class<ChatRecord>("@sightline/core/ChatRecord")({
  id: ChatId,
  organization_id: OrganizationId,
  creator_id: MemberId,
  /**
   * The audience the chat was made in (`Audience`: the fingerprint of the creating key's client
   * attributes); absent or `""` without attributes. Only callers of that audience reach the chat.
   */
  audience: Schema.optional(Schema.String),
  /** The model id (as listed by GET /v2/models) fixed when the chat was created. */
  model: Schema.String,
  /** The chat's title, served as `summary`. */
  summary: Schema.String,
  source: ChatSource,
  status: RunStatus,
  /**
   * The W3C trace context of the request that started the latest run, when that request was
   * traced: whoever follows or resumes the run links its trace to it.
   */
  run_traceparent: Schema.optional(Schema.String),
  /**
   * The connectors of the chat's latest run: a follow-up that names none answers from them. Absent
   * for a chat whose runs named none (and for chats from before the chat kept them).
   */
  connector_ids: Schema.optional(Schema.Array(ConnectorId)),
  created_at: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc
}) {}

/**
 * A chat message as stored.
 *
 * @since 0.1.0
 * @category models
 */
export class MessageRecord extends Schema.Class<MessageRecord>("@sightline/core/MessageRecord")({
  id: MessageId,
  organization_id: OrganizationId,
  chat_id: ChatId,
  role: MessageRole,
  content: Schema.String,
  cell_id: CellId,
  /** How an assistant's answer was made (answers stored before provenance was kept have none). */
  provenance: Schema.optional(Provenance),
  /** The question an assistant's answer asked back, with its choices, when it asked instead of answering. */
  clarification: Schema.optional(Clarification),
  created_at: Schema.DateTimeUtc
}) {}

const cellFields = {
  id: CellId,
  type: CellType,
  status: CellStatus,
  created_at: Schema.DateTimeUtc,
  error: Schema.optional(Schema.String),
  role: Schema.optional(MessageRole),
  content: Schema.optional(Schema.String),
  code: Schema.optional(Schema.String),
  query: Schema.optional(Schema.String),
  connector_id: Schema.optional(ConnectorId),
  output: Schema.optional(Schema.Array(Schema.String)),
  /** A rendered text preview of the dataframe the step produced. */
  dataframe_preview: Schema.optional(Schema.String),
  execution_time_ms: Schema.optional(Schema.NonNegativeInt),
  /** How a semantic query read the question (the metric and its definition, dimensions, filters, period, order). */
  reading: Schema.optional(SemanticQuery.Reading),
  /** The reviewed definition the result was computed from: a trusted answer. */
  trusted_source: Schema.optional(SemanticQuery.TrustedSource),
  /** The semantic query the step ran (`query_metrics`): what a follow-up refines with `based_on`. */
  semantic_query: Schema.optional(SemanticQuery.SemanticQuery),
  /** The earlier cell whose semantic query this one refined (`query_metrics` with `based_on`). */
  based_on_cell_id: Schema.optional(CellId)
}

/**
 * A cell as stored: the wire cell without its assets (stored as asset records), plus its chat.
 *
 * @since 0.1.0
 * @category models
 */
export class CellRecord extends Schema.Class<CellRecord>("@sightline/core/CellRecord")({
  ...cellFields,
  organization_id: OrganizationId,
  chat_id: ChatId
}) {}

// ---------------------------------------------------------------------------------------------
// Wire shapes
// ---------------------------------------------------------------------------------------------

/**
 * The `chat` of Get Chat.
 *
 * @since 0.1.0
 * @category models
 */
export class Chat extends Schema.Class<Chat>("@sightline/core/Chat")({
  id: ChatId,
  model: Schema.String
}) {}

/**
 * A cell (execution step or message) as served by the cells endpoints and the `cell` event.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatCell extends Schema.Class<ChatCell>("@sightline/core/ChatCell")({
  ...cellFields,
  assets: Schema.optional(Schema.Array(Asset))
}) {}

const messageFields = {
  content: Schema.String,
  created_at: Schema.DateTimeUtc,
  cell_id: CellId
}

/**
 * A user message (never has assets).
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserMessage = Schema.Struct({ role: Schema.Literal("user"), ...messageFields })
export type UserMessage = typeof UserMessage.Type

/**
 * An assistant message with the assets produced while generating it, and how it was made.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  /** The message's id: what feedback and a re-run name. */
  id: MessageId,
  ...messageFields,
  assets: Schema.Array(Asset),
  provenance: Schema.optional(Provenance),
  /** When the answer asked instead of answering: its question and choices (answer with `choice`). */
  clarification: Schema.optional(Clarification)
})
export type AssistantMessage = typeof AssistantMessage.Type

/**
 * A message of Get Chat: `assets` is present only on assistant messages.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatMessage = Schema.Union(UserMessage, AssistantMessage)
export type ChatMessage = typeof ChatMessage.Type

/**
 * An item of List Chats.
 *
 * @since 0.1.0
 * @category models
 */
export class ChatSummary extends Schema.Class<ChatSummary>("@sightline/core/ChatSummary")({
  id: ChatId,
  summary: Schema.String,
  /** When the chat was created. */
  timestamp: Schema.DateTimeUtc,
  updated_at: Schema.DateTimeUtc,
  creator_email: Schema.String,
  /** The first user message, cut to 200 characters. */
  preview: Schema.String,
  source: Schema.String,
  model: Schema.String,
  is_running: Schema.Boolean
}) {}

/**
 * The response of GET /v2/chats/{id}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GetChatResponse = Schema.Struct({
  chat: Chat,
  messages: Schema.Array(ChatMessage),
  assets: Schema.Array(Asset)
})
export type GetChatResponse = typeof GetChatResponse.Type

/**
 * The response of GET /v2/chats.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListChatsResponse = Schema.Struct({
  chats: Schema.Array(ChatSummary),
  total_count: Schema.NonNegativeInt
})
export type ListChatsResponse = typeof ListChatsResponse.Type

/**
 * The response of GET /v2/chats/{id}/cells (newest first).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCellsResponse = Schema.Struct({
  chat_id: ChatId,
  cells: Schema.Array(ChatCell),
  has_more: Schema.Boolean
})
export type ChatCellsResponse = typeof ChatCellsResponse.Type

/**
 * The response of POST /v2/chats (the answer in one piece).
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateChatResponse = Schema.Struct({
  /** The id of the assistant message. */
  id: MessageId,
  created_at: Schema.DateTimeUtc,
  model: Schema.String,
  /** The answer as Markdown. */
  response: Schema.String,
  chat_id: ChatId,
  assets: Schema.Array(Asset),
  /** When the answer asked instead of answering: its question and choices (answer with `choice`). */
  clarification: Schema.optional(Clarification)
})
export type CreateChatResponse = typeof CreateChatResponse.Type

/**
 * The response of POST /v2/chats/{id}/cancel.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CancelChatResponse = Schema.Struct({ cancelled: Schema.Boolean })
export type CancelChatResponse = typeof CancelChatResponse.Type

/**
 * The `metadata` event that opens a Stream Chat response: the run's first description. `id` is the
 * id of the assistant message the run answers with (the `id` of POST /v2/chats).
 *
 * @since 0.1.0
 * @category schemas
 */
export const RunMetadata = Schema.Struct({
  id: MessageId,
  created_at: Schema.DateTimeUtc,
  model: Schema.String,
  chat_id: ChatId,
  is_continuation: Schema.Boolean
})
export type RunMetadata = typeof RunMetadata.Type

// ---------------------------------------------------------------------------------------------
// Requests
// ---------------------------------------------------------------------------------------------

/**
 * The sort fields of List Chats (`name` sorts by the summary).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatSortField = Schema.Literal("name", "created_at", "updated_at")
export type ChatSortField = typeof ChatSortField.Type

/**
 * A sort direction.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SortDirection = Schema.Literal("asc", "desc")
export type SortDirection = typeof SortDirection.Type

/**
 * The query of GET /v2/chats; out-of-range values are `invalid_request`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ListChatsQuery = Schema.Struct({
  limit: limitParam(1, 100, 20),
  offset: offsetParam,
  /** Case-insensitive substring of the summary or of the first user message. */
  search_term: Schema.optional(Schema.String),
  sort_by: Schema.optionalWith(ChatSortField, { default: () => "updated_at" as const }),
  sort_direction: Schema.optionalWith(SortDirection, { default: () => "desc" as const }),
  /**
   * The chats of this end user of the caller's (`POST /v2/embed/sessions`) instead of the caller's
   * own; an end user's session lists its own whatever it sends.
   */
  external_user_id: Schema.optional(Schema.String)
})
export type ListChatsQuery = typeof ListChatsQuery.Type

/**
 * The default page size of the cells endpoint, also used for any `limit` outside 1..500.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultCellsLimit = 200

/**
 * The largest page size of the cells endpoint.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxCellsLimit = 500

// The spec says out-of-range limits fall back rather than fail; a value that is not an integer at
// all falls back too, since rejecting it while accepting 10000 would be arbitrary.
const lenientCellsLimit = Schema.transform(Schema.String, Schema.Int, {
  strict: true,
  decode: (raw) => {
    const n = Number(raw)
    return Number.isInteger(n) && n >= 1 && n <= maxCellsLimit ? n : defaultCellsLimit
  },
  encode: (n) => String(n)
})

/**
 * The query of GET /v2/chats/{id}/cells: `limit` never fails (it falls back to 200), `offset` must be >= 0.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChatCellsQuery = Schema.Struct({
  limit: Schema.optionalWith(lenientCellsLimit, { default: () => defaultCellsLimit }),
  offset: offsetParam
})
export type ChatCellsQuery = typeof ChatCellsQuery.Type

/**
 * The tool configuration of a chat request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Tools = Schema.Struct({
  connector_ids: Schema.optional(Schema.Array(ConnectorId)),
  sql_enabled: Schema.optional(Schema.Boolean),
  python_enabled: Schema.optional(Schema.Boolean),
  web_search_enabled: Schema.optional(Schema.Boolean),
  ontology_enabled: Schema.optional(Schema.Boolean),
  bi_a_enabled: Schema.optional(Schema.Boolean),
  bi_b_enabled: Schema.optional(Schema.Boolean),
  file_storage_enabled: Schema.optional(Schema.Boolean)
})
export type Tools = typeof Tools.Type

/**
 * The message of the seed's 400 for `model` sent with `chat_id`.
 *
 * @since 0.1.0
 * @category constants
 */
export const modelWithChatIdMessage = "model is valid only on new chats: omit model when chat_id is set"

/**
 * The message of the 400 for `choice` sent without `chat_id`.
 *
 * @since 0.1.0
 * @category constants
 */
export const choiceWithoutChatMessage = "choice answers a chat's clarification: send it with that chat_id"

/**
 * The body of POST /v2/chats/stream and POST /v2/chats (JSON, or the fields of the multipart form).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StreamChatRequest = Schema.Struct({
  /** Required, unless `choice` answers the chat's clarification. */
  question: Schema.optional(Schema.String.pipe(
    Schema.filter((q) => q.trim().length > 0 || "question must not be empty", { jsonSchema: { pattern: "\\S" } })
  )),
  chat_id: Schema.optional(ChatId),
  /**
   * The id of a choice of the chat's last answer, when it asked a clarification: the run answers
   * that choice's question. Needs `chat_id`, and takes the place of `question`.
   */
  choice: Schema.optional(Schema.NonEmptyTrimmedString),
  model: Schema.optional(Schema.NonEmptyTrimmedString),
  tools: Schema.optional(Tools),
  /** Shorthand for `tools.connector_ids`; both lists are merged. */
  connector_ids: Schema.optional(Schema.Array(ConnectorId))
}).pipe(
  // The annotation says it with `allOf`: a top-level `oneOf` or `anyOf` would replace the struct's
  // JSON Schema instead of adding to it.
  Schema.filter(
    (body) =>
      body.model !== undefined && body.chat_id !== undefined
        ? { path: ["model"], message: modelWithChatIdMessage }
        : body.choice === undefined
        ? body.question !== undefined || { path: ["question"], message: "question is required" }
        : body.question === undefined
        ? body.chat_id !== undefined || { path: ["chat_id"], message: choiceWithoutChatMessage }
        : { path: ["choice"], message: "send either question or choice, not both" },
    {
      jsonSchema: {
        allOf: [
          { not: { required: ["model", "chat_id"] } },
          { not: { required: ["question", "choice"] } },
          { anyOf: [{ required: ["question"] }, { required: ["choice", "chat_id"] }] }
        ]
      }
    }
  )
)
export type StreamChatRequest = typeof StreamChatRequest.Type

/**
 * The body of POST /v2/chats: the same fields as Stream Chat.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CreateChatRequest = StreamChatRequest
export type CreateChatRequest = StreamChatRequest

/**
 * The tools of a run once defaults are applied.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedTools {
  readonly connectorIds: ReadonlyArray<ConnectorId>
  readonly sql: boolean
  readonly python: boolean
  readonly webSearch: boolean
  readonly ontology: boolean
  readonly biA: boolean
  readonly biB: boolean
  readonly fileStorage: boolean
}

/**
 * The connectors of a request: `tools.connector_ids` and the `connector_ids` shorthand merged,
 * duplicates removed, in the order given. Merging (rather than one list winning) never silently
 * drops a connector the caller named.
 *
 * @since 0.1.0
 * @category utils
 */
export const connectorIds = (request: Pick<StreamChatRequest, "tools" | "connector_ids">): ReadonlyArray<ConnectorId> =>
  Arr.dedupe([...(request.tools?.connector_ids ?? []), ...(request.connector_ids ?? [])])

/**
 * Whether a request names its connectors (even none, with an empty list). A follow-up that does
 * not answers from the connectors its chat kept.
 *
 * @since 0.1.0
 * @category utils
 */
export const namesConnectors = (request: Pick<StreamChatRequest, "tools" | "connector_ids">): boolean =>
  request.connector_ids !== undefined || request.tools?.connector_ids !== undefined

/**
 * The tools of a run. Unset flags default to what answers a data question without reaching
 * outside the deployment: SQL, Python and the ontology on; web search, the BI integrations and
 * file storage off until asked for.
 *
 * @since 0.1.0
 * @category utils
 */
export const resolveTools = (request: Pick<StreamChatRequest, "tools" | "connector_ids">): ResolvedTools => {
  const tools = request.tools ?? {}
  return {
    connectorIds: connectorIds(request),
    sql: tools.sql_enabled ?? true,
    python: tools.python_enabled ?? true,
    webSearch: tools.web_search_enabled ?? false,
    ontology: tools.ontology_enabled ?? true,
    biA: tools.bi_a_enabled ?? false,
    biB: tools.bi_b_enabled ?? false,
    fileStorage: tools.file_storage_enabled ?? false
  }
}

// ---------------------------------------------------------------------------------------------
// Constructors and renderings
// ---------------------------------------------------------------------------------------------

/**
 * The length of a chat preview, in characters.
 *
 * @since 0.1.0
 * @category constants
 */
export const previewLength = 200

/**
 * The length of the summary a chat starts with, in characters.
 *
 * @since 0.1.0
 * @category constants
 */
export const initialSummaryLength = 100

// Cut by code points, as PostgreSQL's `left()` does, so a surrogate pair is never split and the
// memory and SQL repositories agree.
const cut = (text: string, length: number): string => {
  const chars = Array.from(text)
  return chars.length <= length ? text : chars.slice(0, length).join("")
}

/**
 * The preview of a chat: its first user message cut to 200 characters.
 *
 * @since 0.1.0
 * @category utils
 */
export const previewOf = (firstUserMessage: string): string => cut(firstUserMessage, previewLength)

/**
 * The summary a new chat starts with: the first line of the question, cut to 100 characters.
 *
 * @since 0.1.0
 * @category utils
 */
export const initialSummary = (question: string): string =>
  cut(question.trim().split("\n", 1)[0]!.trim(), initialSummaryLength)

/**
 * A new chat: it is created by its first question, so its first run is already running.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly id: ChatId
  readonly organizationId: OrganizationId
  readonly creatorId: MemberId
  /** The creator's audience (`Policy.audienceOf`); none when absent. */
  readonly audience?: string | undefined
  readonly model: string
  readonly source: ChatSource
  readonly question: string
  readonly at: DateTime.Utc
}): ChatRecord =>
  new ChatRecord({
    id: options.id,
    organization_id: options.organizationId,
    creator_id: options.creatorId,
    ...(options.audience === undefined || options.audience === "" ? {} : { audience: options.audience }),
    model: options.model,
    summary: initialSummary(options.question),
    source: options.source,
    status: "running",
    created_at: options.at,
    updated_at: options.at
  })

/**
 * The `chat` of Get Chat.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChat = (record: ChatRecord): Chat => TrustedSchema.make(Chat, { id: record.id, model: record.model })

/**
 * A List Chats item. The creator's e-mail comes from the member (the use case resolves it).
 *
 * @since 0.1.0
 * @category utils
 */
export const toSummary = (
  record: ChatRecord,
  options: { readonly preview: string; readonly creatorEmail: string }
): ChatSummary =>
  TrustedSchema.make(ChatSummary, {
    id: record.id,
    summary: record.summary,
    timestamp: record.created_at,
    updated_at: record.updated_at,
    creator_email: options.creatorEmail,
    preview: options.preview,
    source: record.source,
    model: record.model,
    is_running: record.status === "running"
  })

/**
 * A message of Get Chat; `assets` (rendered by the caller, URLs signed) is kept only for assistant messages.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChatMessage = (record: MessageRecord, assets: ReadonlyArray<Asset>): ChatMessage =>
  record.role === "assistant"
    ? {
      role: "assistant",
      id: record.id,
      content: record.content,
      created_at: record.created_at,
      cell_id: record.cell_id,
      assets,
      ...(record.provenance === undefined ? {} : { provenance: record.provenance }),
      ...(record.clarification === undefined ? {} : { clarification: record.clarification })
    }
    : { role: "user", content: record.content, created_at: record.created_at, cell_id: record.cell_id }

/**
 * A cell as served; `assets` is left out when the cell produced none.
 *
 * @since 0.1.0
 * @category utils
 */
export const toChatCell = (record: CellRecord, assets: ReadonlyArray<Asset>): ChatCell => {
  const { chat_id: _chat, organization_id: _org, ...cell } = record
  return TrustedSchema.make(ChatCell, assets.length > 0 ? { ...cell, assets } : cell)
}

// ---------------------------------------------------------------------------------------------
// Run lifecycle
// ---------------------------------------------------------------------------------------------

const transitions: { readonly [S in RunStatus]: ReadonlyArray<RunStatus> } = {
  running: ["completed", "failed", "cancelled"],
  completed: ["running"],
  failed: ["running"],
  cancelled: ["running"]
}

/**
 * Is `from → to` a legal run transition?
 *
 * @since 0.1.0
 * @category utils
 */
export const canTransition = (from: RunStatus, to: RunStatus): boolean => transitions[from].includes(to)

const withStatus = (chat: ChatRecord, status: RunStatus, at: DateTime.Utc): ChatRecord =>
  new ChatRecord({ ...chat, status, updated_at: at })

/**
 * Starts a new run (a follow-up question). A chat takes one question at a time: while a run is
 * going, another one would interleave its messages and cells with it, so it is a conflict.
 *
 * @since 0.1.0
 * @category utils
 */
export const startRun = (chat: ChatRecord, at: DateTime.Utc): Either.Either<ChatRecord, Conflict> =>
  canTransition(chat.status, "running")
    ? Either.right(withStatus(chat, "running", at))
    : Either.left(
      new Conflict({
        message: `chat ${chat.id} is already running: wait for the current run to finish or cancel it`
      })
    )

/**
 * Ends the running run with its outcome; a chat that is not running has no run to end.
 *
 * @since 0.1.0
 * @category utils
 */
export const finishRun = (
  chat: ChatRecord,
  outcome: RunOutcome,
  at: DateTime.Utc
): Either.Either<ChatRecord, Conflict> =>
  canTransition(chat.status, outcome)
    ? Either.right(withStatus(chat, outcome, at))
    : Either.left(
      new Conflict({
        message: `chat ${chat.id} has no running run to mark ${outcome} (its last run is ${chat.status})`
      })
    )
