import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Asset from "../src/Asset.js"
import * as Chat from "../src/Chat.js"
import { AssetId, CellId, ChatId, ConnectorId, MemberId, MessageId, OrganizationId } from "../src/Ids.js"

const t0 = DateTime.unsafeMake("2026-02-01T08:00:00.000Z")
const t1 = DateTime.unsafeMake("2026-02-01T08:05:00.000Z")
const orgId = OrganizationId.make("00000000-0000-4000-8000-00000000000a")
const chatId = ChatId.make("00000000-0000-4000-8000-00000000000b")
const memberId = MemberId.make("00000000-0000-4000-8000-00000000000c")
const cellId = CellId.make("00000000-0000-4000-8000-00000000000d")

const chat = (status: Chat.RunStatus = "running") =>
  new Chat.ChatRecord({
    ...Chat.make({
      id: chatId,
      organizationId: orgId,
      creatorId: memberId,
      model: "offline",
      source: "api",
      question: "How did revenue move?",
      at: t0
    }),
    status
  })

const asset = Asset.toAsset(
  new Asset.AssetRecord({
    id: AssetId.make("00000000-0000-4000-8000-00000000000e"),
    organization_id: orgId,
    chat_id: chatId,
    cell_id: cellId,
    name: "a.txt",
    type: "text",
    mime_type: "text/plain",
    content: "x",
    created_at: t0
  })
)

const decode = <A, I>(schema: Schema.Schema<A, I>) => (input: unknown) => Schema.decodeUnknownEither(schema)(input)
const errorOf = <A, I>(schema: Schema.Schema<A, I>, input: unknown): string =>
  Either.match(Schema.decodeUnknownEither(schema)(input), {
    onLeft: (e) => ParseResult.TreeFormatter.formatErrorSync(e),
    onRight: () => "decoded"
  })

describe("Chat run lifecycle", () => {
  it("a new chat is running its first run, titled by the question's first line", () => {
    const created = Chat.make({
      id: chatId,
      organizationId: orgId,
      creatorId: memberId,
      model: "offline",
      source: "playbook",
      question: `  ${"x".repeat(150)}\nsecond line`,
      at: t0
    })
    expect(created.status).toBe("running")
    expect(created.summary).toBe("x".repeat(100))
    expect(created.created_at).toEqual(t0)
    expect(created.updated_at).toEqual(t0)
  })

  it.prop("only moves between running and a finished state", [Chat.RunStatus, Chat.RunStatus], ([from, to]) => {
    expect(Chat.canTransition(from, to)).toBe((from === "running") !== (to === "running"))
  })

  it("a finished chat starts a new run and bumps updated_at", () => {
    for (const status of ["completed", "failed", "cancelled"] as const) {
      const started = Either.getOrThrow(Chat.startRun(chat(status), t1))
      expect(started.status).toBe("running")
      expect(started.updated_at).toEqual(t1)
      expect(started.created_at).toEqual(t0)
    }
  })

  it("a running chat cannot start another run", () => {
    const error = Either.flip(Chat.startRun(chat("running"), t1)).pipe(Either.getOrThrow)
    expect(error._tag).toBe("Conflict")
    expect(error.message).toContain("already running")
  })

  it("a running run ends with its outcome; a finished one cannot end again", () => {
    for (const outcome of ["completed", "failed", "cancelled"] as const) {
      const finished = Either.getOrThrow(Chat.finishRun(chat("running"), outcome, t1))
      expect(finished.status).toBe(outcome)
      expect(finished.updated_at).toEqual(t1)
      const again = Either.flip(Chat.finishRun(finished, "completed", t1)).pipe(Either.getOrThrow)
      expect(again._tag).toBe("Conflict")
      expect(again.message).toContain(`its last run is ${outcome}`)
    }
  })
})

describe("Chat renderings", () => {
  it("previews cut the first user message to 200 characters without splitting a character", () => {
    expect(Chat.previewOf("short")).toBe("short")
    expect(Chat.previewOf("a".repeat(250))).toBe("a".repeat(200))
    const emoji = "📈".repeat(250)
    expect(Array.from(Chat.previewOf(emoji))).toHaveLength(200)
    expect(Chat.previewOf(emoji)).toBe("📈".repeat(200))
  })

  it("a summary row reports is_running and the creation time as timestamp", () => {
    const running = Chat.toSummary(chat("running"), { preview: "p", creatorEmail: "ada@example.com" })
    expect(Schema.encodeSync(Chat.ChatSummary)(running)).toEqual({
      id: chatId,
      summary: "How did revenue move?",
      timestamp: "2026-02-01T08:00:00.000Z",
      updated_at: "2026-02-01T08:00:00.000Z",
      creator_email: "ada@example.com",
      preview: "p",
      source: "api",
      model: "offline",
      is_running: true
    })
    expect(Chat.toSummary(chat("failed"), { preview: "", creatorEmail: "" }).is_running).toBe(false)
  })

  it("only assistant messages carry assets", () => {
    const base = { organization_id: orgId, chat_id: chatId, content: "hi", cell_id: cellId, created_at: t0 }
    const user = Chat.toChatMessage(
      new Chat.MessageRecord({ ...base, id: MessageId.make("00000000-0000-4000-8000-000000000001"), role: "user" }),
      [asset]
    )
    const assistant = Chat.toChatMessage(
      new Chat.MessageRecord({
        ...base,
        id: MessageId.make("00000000-0000-4000-8000-000000000002"),
        role: "assistant"
      }),
      [asset]
    )
    expect("assets" in user).toBe(false)
    expect(assistant).toMatchObject({ role: "assistant", assets: [asset] })
    const encodedUser = Schema.encodeSync(Chat.ChatMessage)(user)
    expect(Object.keys(encodedUser).sort()).toEqual(["cell_id", "content", "created_at", "role"])
    expect(Schema.encodeSync(Chat.ChatMessage)(assistant)).toHaveProperty("assets")
  })

  it("a served cell drops its storage fields and leaves assets out when there are none", () => {
    const record = new Chat.CellRecord({
      id: cellId,
      organization_id: orgId,
      chat_id: chatId,
      type: "sql",
      status: "completed",
      created_at: t0,
      query: "select 1",
      connector_id: ConnectorId.make(3),
      output: ["1"],
      execution_time_ms: 12
    })
    const bare = Schema.encodeSync(Chat.ChatCell)(Chat.toChatCell(record, []))
    expect(bare).toEqual({
      id: cellId,
      type: "sql",
      status: "completed",
      created_at: "2026-02-01T08:00:00.000Z",
      query: "select 1",
      connector_id: 3,
      output: ["1"],
      execution_time_ms: 12
    })
    expect(Chat.toChatCell(record, [asset]).assets).toEqual([asset])
  })

  it("cells of unknown (snake_case) types still decode; malformed types do not", () => {
    const cell = { id: cellId, status: "running", created_at: "2026-02-01T08:00:00.000Z" }
    expect(Either.isRight(decode(Chat.ChatCell)({ ...cell, type: "web_search" }))).toBe(true)
    expect(Either.isRight(decode(Chat.ChatCell)({ ...cell, type: "vector_lookup" }))).toBe(true)
    expect(Either.isLeft(decode(Chat.ChatCell)({ ...cell, type: "Vector Lookup" }))).toBe(true)
    expect(Either.isLeft(decode(Chat.ChatCell)({ ...cell, type: "sql", status: "done" }))).toBe(true)
    expect(Chat.isKnownCellType("ontology_query")).toBe(true)
    expect(Chat.isKnownCellType("vector_lookup")).toBe(false)
  })
})

describe("Chat requests", () => {
  it("List Chats defaults to 20 newest-updated first and rejects out-of-range values", () => {
    expect(Schema.decodeUnknownSync(Chat.ListChatsQuery)({})).toEqual({
      limit: 20,
      offset: 0,
      sort_by: "updated_at",
      sort_direction: "desc"
    })
    const ok = Schema.decodeUnknownSync(Chat.ListChatsQuery)({
      limit: "100",
      offset: "40",
      search_term: "rev",
      sort_by: "name",
      sort_direction: "asc"
    })
    expect(ok).toEqual({ limit: 100, offset: 40, search_term: "rev", sort_by: "name", sort_direction: "asc" })
    for (
      const bad of [{ limit: "0" }, { limit: "101" }, { limit: "2.5" }, { offset: "-1" }, { sort_by: "title" }, {
        sort_direction: "up"
      }]
    ) {
      expect(Either.isLeft(decode(Chat.ListChatsQuery)(bad))).toBe(true)
    }
  })

  it("the cells limit falls back to 200 outside 1..500 instead of failing; offset still must be >= 0", () => {
    const limitOf = (limit: string) => Schema.decodeUnknownSync(Chat.ChatCellsQuery)({ limit }).limit
    expect(Schema.decodeUnknownSync(Chat.ChatCellsQuery)({})).toEqual({ limit: 200, offset: 0 })
    expect(limitOf("1")).toBe(1)
    expect(limitOf("500")).toBe(500)
    expect(limitOf("0")).toBe(200)
    expect(limitOf("501")).toBe(200)
    expect(limitOf("-3")).toBe(200)
    expect(limitOf("many")).toBe(200)
    expect(Either.isLeft(decode(Chat.ChatCellsQuery)({ offset: "-1" }))).toBe(true)
  })

  it("a question must have content", () => {
    expect(Either.isRight(decode(Chat.StreamChatRequest)({ question: "Why?" }))).toBe(true)
    expect(errorOf(Chat.StreamChatRequest, { question: "  \n " })).toContain("question must not be empty")
    expect(Either.isLeft(decode(Chat.StreamChatRequest)({}))).toBe(true)
  })

  it("model together with chat_id is rejected with a message naming the rule", () => {
    expect(Either.isRight(decode(Chat.StreamChatRequest)({ question: "q", model: "offline" }))).toBe(true)
    expect(Either.isRight(decode(Chat.StreamChatRequest)({ question: "q", chat_id: chatId }))).toBe(true)
    const message = errorOf(Chat.StreamChatRequest, { question: "q", chat_id: chatId, model: "offline" })
    expect(message).toContain(Chat.modelWithChatIdMessage)
    expect(message).toContain("model")
  })

  it("connector ids must be positive integers", () => {
    expect(Either.isLeft(decode(Chat.StreamChatRequest)({ question: "q", connector_ids: [0] }))).toBe(true)
    expect(Either.isLeft(decode(Chat.StreamChatRequest)({ question: "q", tools: { connector_ids: ["1"] } }))).toBe(true)
  })

  it("the connector_ids shorthand merges with tools.connector_ids, without duplicates", () => {
    const request = Schema.decodeUnknownSync(Chat.StreamChatRequest)({
      question: "q",
      connector_ids: [3, 1],
      tools: { connector_ids: [1, 2] }
    })
    expect(Chat.connectorIds(request)).toEqual([1, 2, 3])
    expect(Chat.connectorIds({ connector_ids: [ConnectorId.make(4)] })).toEqual([4])
    expect(Chat.connectorIds({})).toEqual([])
  })

  it("unset tool flags get their defaults and explicit ones win", () => {
    expect(Chat.resolveTools({})).toEqual({
      connectorIds: [],
      sql: true,
      python: true,
      webSearch: false,
      ontology: true,
      biA: false,
      biB: false,
      fileStorage: false
    })
    const explicit = Chat.resolveTools({
      tools: { sql_enabled: false, web_search_enabled: true, file_storage_enabled: true, bi_a_enabled: true }
    })
    expect(explicit).toMatchObject({ sql: false, webSearch: true, fileStorage: true, biA: true, python: true })
  })
})
