/**
 * The contract every `ChatRepo` implementation must meet.
 *
 * It runs on a shared, non-empty database: each test makes its own organizations and members with
 * random ids and never assumes a table is empty.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Asset from "../Asset.js"
import * as Chat from "../Chat.js"
import * as ChatEvent from "../ChatEvent.js"
import { ChatRepo } from "../ChatRepo.js"
import { AssetId, CellId, ChatId, ConnectorId, type MemberId, MessageId, type OrganizationId } from "../Ids.js"
import type { MemberRepo } from "../MemberRepo.js"
import type { OrganizationRepo } from "../OrganizationRepo.js"
import type * as Provenance from "../Provenance.js"
import { Transaction } from "../Transaction.js"
import * as Fixtures from "./Fixtures.js"

/**
 * Every port the suite needs (the SQL adapter's foreign keys need organizations and members).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = ChatRepo | OrganizationRepo | MemberRepo | Transaction

const base = DateTime.unsafeMake("2026-01-15T09:30:00.123Z")
const at = (seconds: number) => DateTime.add(base, { seconds })

// Records are compared in their encoded form: timestamps and branded ids compare as the strings they store.
const encodeChat = (record: Chat.ChatRecord) => Schema.encodeSync(Chat.ChatRecord)(record)
const encodeMessage = (record: Chat.MessageRecord) => Schema.encodeSync(Chat.MessageRecord)(record)
const encodeCell = (record: Chat.CellRecord) => Schema.encodeSync(Chat.CellRecord)(record)
const encodeAsset = (record: Asset.AssetRecord) => Schema.encodeSync(Asset.AssetRecord)(record)
const encodeSequenced = (sequenced: ChatEvent.Sequenced) => ({
  id: sequenced.id,
  event: Schema.encodeSync(ChatEvent.ChatEvent)(sequenced.event)
})

const metadataEvent = (of: Chat.ChatRecord, id: number): ChatEvent.Sequenced => ({
  id,
  event: {
    type: "metadata",
    id: MessageId.make(Fixtures.uuid()),
    created_at: base,
    model: of.model,
    chat_id: of.id,
    is_continuation: id > 1
  }
})

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

const chat = (
  organizationId: OrganizationId,
  creatorId: MemberId,
  options: Partial<
    Pick<Chat.ChatRecord, "summary" | "status" | "model" | "source" | "created_at" | "updated_at" | "audience">
  > = {}
): Chat.ChatRecord =>
  new Chat.ChatRecord({
    id: ChatId.make(Fixtures.uuid()),
    organization_id: organizationId,
    creator_id: creatorId,
    model: "offline",
    summary: "A chat",
    source: "api",
    status: "completed",
    created_at: base,
    updated_at: base,
    ...options
  })

const message = (
  of: Chat.ChatRecord,
  role: Chat.MessageRole,
  content: string,
  createdAt: DateTime.Utc = base
): Chat.MessageRecord =>
  new Chat.MessageRecord({
    id: MessageId.make(Fixtures.uuid()),
    organization_id: of.organization_id,
    chat_id: of.id,
    role,
    content,
    cell_id: CellId.make(Fixtures.uuid()),
    created_at: createdAt
  })

const cell = (of: Chat.ChatRecord, options: Partial<Chat.CellRecord> = {}): Chat.CellRecord =>
  new Chat.CellRecord({
    id: CellId.make(Fixtures.uuid()),
    organization_id: of.organization_id,
    chat_id: of.id,
    type: "python",
    status: "running",
    created_at: base,
    ...options
  })

const asset = (of: Chat.ChatRecord, options: Partial<Asset.AssetRecord> = {}): Asset.AssetRecord => {
  const id = AssetId.make(Fixtures.uuid())
  return new Asset.AssetRecord({
    id,
    organization_id: of.organization_id,
    chat_id: of.id,
    cell_id: CellId.make(Fixtures.uuid()),
    name: "chart.png",
    type: "chart",
    mime_type: "image/png",
    storage_key: Asset.storageKey({ organization_id: of.organization_id, chat_id: of.id, id }),
    created_at: base,
    ...options
  })
}

const createAll = (chats: ReadonlyArray<Chat.ChatRecord>) =>
  Effect.flatMap(ChatRepo, (repo) => Effect.forEach(chats, repo.create, { discard: true }))

const listOptions = (options: Partial<ChatRepo.ListOptions> = {}): ChatRepo.ListOptions => ({
  limit: 100,
  offset: 0,
  sortBy: "updated_at",
  sortDirection: "desc",
  ...options
})

const listIds = (organizationId: OrganizationId, options: Partial<ChatRepo.ListOptions> = {}) =>
  Effect.flatMap(
    ChatRepo,
    (repo) =>
      Effect.map(repo.list(organizationId, listOptions(options)), (result) => result.rows.map((row) => row.chat.id))
  )

/** The order the port promises: the sort key (summary folded to lower case for `name`), then id. */
const expectedOrder = (
  chats: ReadonlyArray<Chat.ChatRecord>,
  sortBy: Chat.ChatSortField,
  direction: Chat.SortDirection
) => {
  const keyOf = (c: Chat.ChatRecord): string | number =>
    sortBy === "name"
      ? c.summary.toLowerCase()
      : sortBy === "created_at"
      ? c.created_at.epochMillis
      : c.updated_at.epochMillis
  const sign = direction === "asc" ? 1 : -1
  return [...chats].sort((a, b) => {
    const ka = keyOf(a)
    const kb = keyOf(b)
    if (ka !== kb) return (ka < kb ? -1 : 1) * sign
    return (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) * sign
  }).map((c) => c.id)
}

/**
 * Registers the `ChatRepo` contract suite against `layer`.
 *
 * @since 0.1.0
 * @category utils
 */
export const chatRepoContract = (name: string, layer: Layer.Layer<Requirements, unknown>): void => {
  describe(name, () => {
    it.effect("create then get round-trips every field", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const record = chat(org.id, member.id, {
          summary: "Umsatz nach Region — ünïcode 📈",
          status: "failed",
          model: "claude-sonnet-4",
          source: "playbook",
          created_at: at(1),
          updated_at: at(90)
        })
        yield* repo.create(record)
        expect(Option.map(yield* repo.get(org.id, record.id), encodeChat)).toEqual(Option.some(encodeChat(record)))
        expect(Option.map(yield* repo.getForUpdate(org.id, record.id), encodeChat)).toEqual(
          Option.some(encodeChat(record))
        )
      }).pipe(Effect.provide(layer)))

    it.effect("get and getForUpdate see only the chat's own organization", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* Fixtures.organization()
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        expect(Option.isNone(yield* repo.get(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.getForUpdate(other.id, record.id))).toBe(true)
        expect(Option.isNone(yield* repo.get(org.id, ChatId.make(Fixtures.uuid())))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("create rejects a duplicate id with Conflict and keeps the original", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const original = chat(org.id, member.id, { summary: "original" })
        yield* repo.create(original)
        const duplicate = new Chat.ChatRecord({ ...original, summary: "duplicate" })
        expect((yield* Effect.flip(repo.create(duplicate)))._tag).toBe("Conflict")
        expect(Option.map(yield* repo.get(org.id, original.id), (c) => c.summary)).toEqual(Option.some("original"))
      }).pipe(Effect.provide(layer)))

    it.effect("update writes summary, status, connector_ids and updated_at, and nothing else", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const connectorIds = [ConnectorId.make(5), ConnectorId.make(3)]
        const record = new Chat.ChatRecord({
          ...chat(org.id, member.id, { status: "running" }),
          connector_ids: connectorIds
        })
        yield* repo.create(record)
        expect(Option.map(yield* repo.get(org.id, record.id), encodeChat)).toEqual(Option.some(encodeChat(record)))
        const finished = new Chat.ChatRecord({
          ...record,
          summary: "Renamed",
          status: "completed",
          connector_ids: [ConnectorId.make(7)],
          updated_at: at(60),
          model: "tampered",
          source: "agent",
          created_at: at(-60)
        })
        yield* repo.update(finished)
        const stored = yield* repo.get(org.id, record.id)
        expect(Option.map(stored, encodeChat)).toEqual(
          Option.some(encodeChat(
            new Chat.ChatRecord({
              ...record,
              summary: "Renamed",
              status: "completed",
              connector_ids: [ConnectorId.make(7)],
              updated_at: at(60)
            })
          ))
        )
        // A chat whose latest run named no connectors keeps none.
        const { connector_ids: _, ...without } = finished
        yield* repo.update(new Chat.ChatRecord(without))
        expect(Option.map(yield* repo.get(org.id, record.id), (c) => c.connector_ids)).toEqual(Option.some(undefined))
      }).pipe(Effect.provide(layer)))

    it.effect("update of a chat that is absent or in another organization is NotFound and changes nothing", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id, { status: "running" })
        yield* repo.create(record)
        const hijack = new Chat.ChatRecord({ ...record, organization_id: other.org.id, status: "cancelled" })
        expect((yield* Effect.flip(repo.update(hijack)))._tag).toBe("NotFound")
        expect(Option.map(yield* repo.get(org.id, record.id), encodeChat)).toEqual(Option.some(encodeChat(record)))
        expect((yield* Effect.flip(repo.update(chat(org.id, member.id))))._tag).toBe("NotFound")
      }).pipe(Effect.provide(layer)))

    it.effect("list shows only the organization's chats and counts every match", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const mine = [chat(org.id, member.id), chat(org.id, member.id), chat(org.id, member.id)]
        yield* createAll([...mine, chat(other.org.id, other.member.id)])
        const result = yield* repo.list(org.id, listOptions())
        expect(result.totalCount).toBe(3)
        expect(result.rows.map((row) => row.chat.id).sort()).toEqual(mine.map((c) => c.id).sort())
        expect(result.rows.map((row) => encodeChat(row.chat)).sort((a, b) => a.id < b.id ? -1 : 1)).toEqual(
          mine.map(encodeChat).sort((a, b) => a.id < b.id ? -1 : 1)
        )
      }).pipe(Effect.provide(layer)))

    it.effect("list sorts by name, created_at and updated_at in both directions, ties broken by id", () =>
      Effect.gen(function*() {
        const { member, org } = yield* setup
        const chats = [
          chat(org.id, member.id, { summary: "bravo", created_at: at(3), updated_at: at(10) }),
          chat(org.id, member.id, { summary: "Alpha", created_at: at(1), updated_at: at(30) }),
          chat(org.id, member.id, { summary: "charlie", created_at: at(2), updated_at: at(20) }),
          chat(org.id, member.id, { summary: "alpha", created_at: at(2), updated_at: at(20) }),
          chat(org.id, member.id, { summary: "delta", created_at: at(2), updated_at: at(5) })
        ]
        yield* createAll(chats)
        for (const sortBy of Chat.ChatSortField.literals) {
          for (const sortDirection of Chat.SortDirection.literals) {
            expect(yield* listIds(org.id, { sortBy, sortDirection })).toEqual(
              expectedOrder(chats, sortBy, sortDirection)
            )
          }
        }
        // Spot-check the case folding of `name` independently of the reference order.
        const byName = yield* listIds(org.id, { sortBy: "name", sortDirection: "asc" })
        expect(byName.slice(2)).toEqual([chats[0]!.id, chats[2]!.id, chats[4]!.id])
      }).pipe(Effect.provide(layer)))

    it.effect("list pages with offset and limit; total_count is the count of every match", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const chats = [1, 2, 3, 4, 5].map((s) => chat(org.id, member.id, { updated_at: at(s) }))
        yield* createAll(chats)
        const all = expectedOrder(chats, "updated_at", "desc")
        const pages = []
        for (const offset of [0, 2, 4]) {
          const page = yield* repo.list(org.id, listOptions({ limit: 2, offset }))
          expect(page.totalCount).toBe(5)
          pages.push(...page.rows.map((row) => row.chat.id))
        }
        expect(pages).toEqual(all)
        const beyond = yield* repo.list(org.id, listOptions({ limit: 2, offset: 10 }))
        expect(beyond.rows).toEqual([])
        expect(beyond.totalCount).toBe(5)
      }).pipe(Effect.provide(layer)))

    it.effect("search matches the summary or the first user message, case-insensitively and literally", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const bySummary = chat(org.id, member.id, { summary: "Revenue by Region" })
        const byQuestion = chat(org.id, member.id, { summary: "Untitled" })
        const laterMention = chat(org.id, member.id, { summary: "Untitled" })
        const assistantFirst = chat(org.id, member.id, { summary: "Untitled" })
        const percent = chat(org.id, member.id, { summary: "50% growth" })
        const digits = chat(org.id, member.id, { summary: "500 growth" })
        const underscore = chat(org.id, member.id, { summary: "table a_b" })
        const letter = chat(org.id, member.id, { summary: "table axb" })
        yield* createAll([bySummary, byQuestion, laterMention, assistantFirst, percent, digits, underscore, letter])
        yield* repo.appendMessage(message(byQuestion, "user", "What is our CHURN rate?", at(1)))
        yield* repo.appendMessage(message(laterMention, "user", "hello", at(1)))
        yield* repo.appendMessage(message(laterMention, "user", "and revenue? churn?", at(2)))
        yield* repo.appendMessage(message(assistantFirst, "assistant", "churn report", at(1)))
        yield* repo.appendMessage(message(assistantFirst, "user", "thanks", at(2)))

        const search = (searchTerm: string) => Effect.map(listIds(org.id, { searchTerm }), (ids) => [...ids].sort())
        expect(yield* search("revenue")).toEqual([bySummary.id])
        expect(yield* search("churn")).toEqual([byQuestion.id])
        expect(yield* search("50%")).toEqual([percent.id])
        expect(yield* search("a_b")).toEqual([underscore.id])
        expect(yield* search("growth")).toEqual([percent.id, digits.id].sort())
        expect(yield* search("")).toHaveLength(8)
        const counted = yield* repo.list(org.id, listOptions({ searchTerm: "GROWTH", limit: 1 }))
        expect(counted.totalCount).toBe(2)
        expect(counted.rows).toHaveLength(1)
      }).pipe(Effect.provide(layer)))

    it.effect("list rows carry the first user message cut to 200 characters as preview", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const long = chat(org.id, member.id, { updated_at: at(2) })
        const empty = chat(org.id, member.id, { updated_at: at(1) })
        yield* createAll([long, empty])
        const question = `${"é".repeat(150)}${"📈".repeat(100)}`
        yield* repo.appendMessage(message(long, "assistant", "greeting first", at(0)))
        yield* repo.appendMessage(message(long, "user", question, at(1)))
        yield* repo.appendMessage(message(long, "user", "second question", at(2)))
        const rows = (yield* repo.list(org.id, listOptions())).rows
        expect(rows.map((row) => row.preview)).toEqual([`${"é".repeat(150)}${"📈".repeat(50)}`, ""])
      }).pipe(Effect.provide(layer)))

    it.effect("list filters by creator", () =>
      Effect.gen(function*() {
        const { member, org } = yield* setup
        const colleague = yield* Fixtures.member(org.id)
        const mine = chat(org.id, member.id)
        const theirs = chat(org.id, colleague.id)
        yield* createAll([mine, theirs])
        expect(yield* listIds(org.id, { creatorId: member.id })).toEqual([mine.id])
        expect(yield* listIds(org.id, { creatorId: colleague.id })).toEqual([theirs.id])
      }).pipe(Effect.provide(layer)))

    it.effect("list filters by audience, with its total, and a chat keeps its audience", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const east = chat(org.id, member.id, { audience: "a".repeat(64) })
        const west = chat(org.id, member.id, { audience: "b".repeat(64) })
        const none = chat(org.id, member.id)
        yield* createAll([east, west, none])
        const listed = (audience: string) =>
          Effect.map(
            repo.list(org.id, listOptions({ creatorId: member.id, audience })),
            (page) => ({ ids: page.rows.map((row) => row.chat.id), total: page.totalCount })
          )
        expect(yield* listed("a".repeat(64))).toEqual({ ids: [east.id], total: 1 })
        expect(yield* listed("")).toEqual({ ids: [none.id], total: 1 })
        expect(yield* listIds(org.id, { creatorId: member.id })).toHaveLength(3)
        expect(Option.getOrThrow(yield* repo.get(org.id, west.id)).audience).toBe("b".repeat(64))
        expect(Option.getOrThrow(yield* repo.get(org.id, none.id)).audience).toBeUndefined()
      }).pipe(Effect.provide(layer)))

    it.effect("deleteMany deletes one creator's chats of one audience, with what they hold, and nothing else", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const audience = "c".repeat(64)
        const gone = [chat(org.id, member.id, { audience }), chat(org.id, member.id, { audience })]
        const kept = [chat(org.id, member.id), chat(org.id, member.id, { audience: "d".repeat(64) })]
        const foreign = chat(other.org.id, other.member.id, { audience })
        yield* createAll([...gone, ...kept, foreign])
        yield* Effect.forEach([...gone, ...kept], (of) =>
          Effect.all([
            repo.appendMessage(message(of, "user", "a question", at(1))),
            repo.upsertCell(cell(of)),
            repo.addAsset(asset(of))
          ]), { discard: true })

        const deleted = yield* repo.deleteMany(org.id, { creatorId: member.id, audience })
        expect([...deleted].sort()).toEqual(gone.map((c) => c.id).sort())
        for (const of of gone) {
          expect(Option.isNone(yield* repo.get(org.id, of.id))).toBe(true)
          expect(yield* repo.listMessages(org.id, of.id)).toEqual([])
          expect(yield* repo.listAssets(org.id, of.id)).toEqual([])
        }
        for (const of of kept) {
          expect(Option.isSome(yield* repo.get(org.id, of.id))).toBe(true)
          expect(yield* repo.listMessages(org.id, of.id)).toHaveLength(1)
          expect(yield* repo.listAssets(org.id, of.id)).toHaveLength(1)
        }
        expect(Option.isSome(yield* repo.get(other.org.id, foreign.id))).toBe(true)
        // The creator's count follows.
        expect((yield* repo.list(org.id, listOptions({ creatorId: member.id }))).totalCount).toBe(2)
        expect(yield* repo.deleteMany(org.id, { creatorId: member.id, audience })).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("total_count per creator and for the organization follows creates", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const colleague = yield* Fixtures.member(org.id)
        const elsewhere = yield* setup
        yield* createAll([
          chat(org.id, member.id),
          chat(org.id, member.id),
          chat(org.id, colleague.id),
          chat(elsewhere.org.id, elsewhere.member.id)
        ])
        const total = (organizationId: OrganizationId, creatorId?: MemberId) =>
          Effect.map(
            repo.list(organizationId, listOptions(creatorId === undefined ? {} : { creatorId })),
            (page) => page.totalCount
          )
        expect(yield* total(org.id)).toBe(3)
        expect(yield* total(org.id, member.id)).toBe(2)
        expect(yield* total(org.id, colleague.id)).toBe(1)
        expect(yield* total(elsewhere.org.id)).toBe(1)
        yield* createAll([chat(org.id, member.id)])
        expect(yield* total(org.id, member.id)).toBe(3)
      }).pipe(Effect.provide(layer)))

    it.effect("messages list in append order, even at equal timestamps, and round-trip every field", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        const messages = [
          message(record, "user", "first", at(5)),
          message(record, "assistant", "## Answer\n\n| a | b |\n|---|---|", at(5)),
          message(record, "user", "third — ünïcode", at(5)),
          message(record, "assistant", "", at(6))
        ]
        yield* Effect.forEach(messages, repo.appendMessage, { discard: true })
        expect((yield* repo.listMessages(org.id, record.id)).map(encodeMessage)).toEqual(messages.map(encodeMessage))
        expect(yield* repo.listMessages(other.org.id, record.id)).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("appendMessage needs a chat of the message's organization and a fresh id", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        const foreign = new Chat.MessageRecord({ ...message(record, "user", "x"), organization_id: other.org.id })
        expect((yield* Effect.flip(repo.appendMessage(foreign)))._tag).toBe("NotFound")
        const missing = message(chat(org.id, member.id), "user", "x")
        expect((yield* Effect.flip(repo.appendMessage(missing)))._tag).toBe("NotFound")
        const first = message(record, "user", "x")
        yield* repo.appendMessage(first)
        const again = new Chat.MessageRecord({ ...first, content: "y" })
        expect((yield* Effect.flip(repo.appendMessage(again)))._tag).toBe("Conflict")
        expect((yield* repo.listMessages(org.id, record.id)).map((m) => m.content)).toEqual(["x"])
      }).pipe(Effect.provide(layer)))

    it.effect("completeRun stores the answer and ends the run in one step, only for the current run", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const running = chat(org.id, member.id, { status: "running" })
        yield* repo.create(running)
        const first = message(running, "user", "First?")
        const second = message(running, "user", "Second?")
        yield* repo.appendMessage(first)
        yield* repo.appendMessage(second)
        const answer = (content: string) => {
          const m = message(running, "assistant", content, at(5))
          return {
            message: m,
            cell: cell(running, { id: m.cell_id, type: "markdown", status: "completed", role: "assistant", content })
          }
        }
        const done = { type: "done", status: "completed" } as const
        yield* repo.appendEvents({
          organizationId: org.id,
          chatId: running.id,
          runStart: 1,
          events: [metadataEvent(running, 1), { id: 2, event: { type: "text", text: "Hi" } }]
        })
        // A run whose question is no longer the latest writes nothing.
        const stale = answer("Old answer")
        expect(yield* repo.completeRun({ ...stale, userMessageId: first.id, at: at(5), runStart: 1, events: [], done }))
          .toEqual(Option.none())
        // The answer keeps how it was made.
        const provenance: Provenance.Provenance = {
          model: "offline",
          provider: "offline",
          provider_model: "offline",
          generations: 2,
          input_tokens: 120,
          output_tokens: 8,
          model_latency_ms: 3,
          tool_calls: [{ name: "query_metrics", arguments: "{\"connector_id\":1}", failed: false, duration_ms: 4 }],
          library_commit: "a".repeat(40),
          semantic_models: [],
          client_attributes_hash: "b".repeat(64)
        }
        const plain = answer("New answer")
        // And the clarification it asked, when it asked instead of answering.
        const clarification = {
          question: "Which Priya do you mean?",
          choices: [
            { id: "1", label: "Priya Okafor", question: "Orders of Priya Okafor" },
            { id: "2", label: "Priya Shah", question: "Orders of Priya Shah" }
          ]
        }
        const fresh = { ...plain, message: new Chat.MessageRecord({ ...plain.message, provenance, clarification }) }
        // The `done` event takes the log's next id, in the same step.
        expect(
          yield* repo.completeRun({ ...fresh, userMessageId: second.id, at: at(6), runStart: 1, events: [], done })
        )
          .toEqual(Option.some(3))
        expect((yield* repo.readEvents(org.id, running.id, 1, 2)).map(encodeSequenced)).toEqual([
          encodeSequenced({ id: 3, event: done })
        ])
        const stored = Option.getOrThrow(yield* repo.get(org.id, running.id))
        expect(stored.status).toBe("completed")
        expect(stored.updated_at).toEqual(at(6))
        expect((yield* repo.listMessages(org.id, running.id)).map((m) => m.content)).toEqual([
          "First?",
          "Second?",
          "New answer"
        ])
        expect((yield* repo.listMessages(org.id, running.id))[2]!.provenance).toEqual(provenance)
        expect((yield* repo.listMessages(org.id, running.id))[0]!.provenance).toBeUndefined()
        expect((yield* repo.listMessages(org.id, running.id))[2]!.clarification).toEqual(clarification)
        expect((yield* repo.listMessages(org.id, running.id))[0]!.clarification).toBeUndefined()
        expect(Option.map(yield* repo.getCell(org.id, running.id, fresh.cell.id), encodeCell))
          .toEqual(Option.some(encodeCell(fresh.cell)))
        expect(yield* repo.getCell(org.id, running.id, stale.cell.id)).toEqual(Option.none())
        // The chat is no longer running: a second answer writes nothing.
        const again = answer("Again")
        expect(
          yield* repo.completeRun({ ...again, userMessageId: second.id, at: at(7), runStart: 1, events: [], done })
        )
          .toEqual(Option.none())
        expect(yield* repo.listMessages(org.id, running.id)).toHaveLength(3)
        expect(yield* repo.latestRun(org.id, running.id)).toEqual(Option.some({ start: 1, last: 3 }))
      }).pipe(Effect.provide(layer)))

    it.effect("completeRun logs the run's last events with its done, only when they follow the log", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const running = chat(org.id, member.id, { status: "running" })
        yield* repo.create(running)
        const question = message(running, "user", "Why?")
        yield* repo.appendMessage(question)
        yield* repo.appendEvents({
          organizationId: org.id,
          chatId: running.id,
          runStart: 1,
          events: [metadataEvent(running, 1)]
        })
        const answer = message(running, "assistant", "Because.", at(5))
        const input = {
          message: answer,
          cell: cell(running, { id: answer.cell_id, type: "markdown", status: "completed", role: "assistant" }),
          userMessageId: question.id,
          at: at(5),
          runStart: 1,
          done: { type: "done", status: "completed" } as const
        }
        const text = (id: number, words: string): ChatEvent.Sequenced => ({ id, event: { type: "text", text: words } })
        // Events that skip an id (a batch before them never reached the log) write nothing.
        expect(yield* repo.completeRun({ ...input, events: [text(3, "Because"), text(4, ".")] }))
          .toEqual(Option.none())
        expect(Option.getOrThrow(yield* repo.get(org.id, running.id)).status).toBe("running")
        expect(yield* repo.listMessages(org.id, running.id)).toHaveLength(1)
        expect(yield* repo.latestRun(org.id, running.id)).toEqual(Option.some({ start: 1, last: 1 }))
        // Following the log, they go in before the done, which takes the id after them.
        expect(yield* repo.completeRun({ ...input, events: [text(2, "Because"), text(3, ".")] }))
          .toEqual(Option.some(4))
        expect((yield* repo.readEvents(org.id, running.id, 1, 1)).map(encodeSequenced)).toEqual(
          [text(2, "Because"), text(3, "."), { id: 4, event: input.done }].map(encodeSequenced)
        )
        expect(yield* repo.latestRun(org.id, running.id)).toEqual(Option.some({ start: 1, last: 4 }))
        expect(Option.getOrThrow(yield* repo.get(org.id, running.id)).status).toBe("completed")
      }).pipe(Effect.provide(layer)))

    it.effect("the event log takes a run's events in order, only while it runs and is the latest run", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id, { status: "running" })
        yield* repo.create(record)
        const append = (runStart: number, events: ReadonlyArray<ChatEvent.Sequenced>) =>
          repo.appendEvents({
            organizationId: org.id,
            chatId: record.id,
            runStart,
            events: events as unknown as readonly [ChatEvent.Sequenced, ...Array<ChatEvent.Sequenced>]
          })
        const text = (id: number, value: string): ChatEvent.Sequenced => ({ id, event: { type: "text", text: value } })
        expect(yield* repo.latestRun(org.id, record.id)).toEqual(Option.none())
        const metadata = metadataEvent(record, 1)
        // The first id of a chat is 1, and ids follow on without gaps or repeats.
        expect(yield* append(1, [text(2, "gap")])).toBe(false)
        expect(yield* append(1, [metadata])).toBe(true)
        expect(yield* append(1, [text(3, "gap")])).toBe(false)
        expect(yield* append(1, [text(2, "Hel"), text(3, "lo")])).toBe(true)
        expect(yield* append(1, [text(3, "again")])).toBe(false)
        expect(yield* repo.latestRun(org.id, record.id)).toEqual(Option.some({ start: 1, last: 3 }))
        expect((yield* repo.readEvents(org.id, record.id, 1, 1)).map(encodeSequenced)).toEqual(
          [text(2, "Hel"), text(3, "lo")].map(encodeSequenced)
        )
        expect((yield* repo.readEvents(org.id, record.id, 1, 0)).map(encodeSequenced)[0]).toEqual(
          encodeSequenced(metadata)
        )
        // Another organization sees no log, and cannot write to it.
        expect(yield* repo.readEvents(other.org.id, record.id, 1, 0)).toEqual([])
        expect(yield* repo.latestRun(other.org.id, record.id)).toEqual(Option.none())
        expect(
          yield* repo.appendEvents({
            organizationId: other.org.id,
            chatId: record.id,
            runStart: 1,
            events: [text(4, "x")]
          })
        ).toBe(false)
        // The heartbeat refreshes the running chat for its latest run only.
        expect(yield* repo.heartbeat({ organizationId: org.id, chatId: record.id, runStart: 1, at: at(30) })).toBe(true)
        expect(Option.map(yield* repo.get(org.id, record.id), (c) => c.updated_at)).toEqual(Option.some(at(30)))
        expect(yield* repo.heartbeat({ organizationId: org.id, chatId: record.id, runStart: 4, at: at(31) })).toBe(
          false
        )
        // A chat that is no longer running takes no events and no heartbeat.
        yield* repo.update(new Chat.ChatRecord({ ...record, status: "cancelled", updated_at: at(40) }))
        expect(yield* append(1, [text(4, "late")])).toBe(false)
        expect(yield* repo.heartbeat({ organizationId: org.id, chatId: record.id, runStart: 1, at: at(41) })).toBe(
          false
        )
        // A new run goes on from the last id; the old run can no longer write.
        yield* repo.update(new Chat.ChatRecord({ ...record, status: "running", updated_at: at(50) }))
        expect(yield* append(4, [metadataEvent(record, 4)])).toBe(true)
        expect(yield* append(1, [text(5, "old run")])).toBe(false)
        expect(yield* append(4, [text(5, "new run")])).toBe(true)
        expect(yield* repo.latestRun(org.id, record.id)).toEqual(Option.some({ start: 4, last: 5 }))
        expect((yield* repo.readEvents(org.id, record.id, 1, 0)).map((e) => e.id)).toEqual([1, 2, 3])
        expect((yield* repo.readEvents(org.id, record.id, 4, 0)).map((e) => e.id)).toEqual([4, 5])
        expect((yield* repo.readEvents(org.id, record.id, 4, 4)).map(encodeSequenced)).toEqual(
          [encodeSequenced(text(5, "new run"))]
        )
      }).pipe(Effect.provide(layer)))

    it.effect("upsertCell stores a cell, then replaces it in place; every field round-trips", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        const started = cell(record, {
          type: "sql",
          status: "running",
          query: "select * from sales",
          created_at: at(1)
        })
        const earlier = cell(record, {
          type: "markdown",
          status: "completed",
          created_at: at(1),
          role: "user",
          content: "q"
        })
        yield* repo.upsertCell(earlier)
        yield* repo.upsertCell(started)
        const finished = new Chat.CellRecord({
          ...started,
          status: "failed",
          error: "relation \"sales\" does not exist",
          code: "df = run()",
          connector_id: ConnectorId.make(12),
          output: ["line 1", "", "line 3 — ünïcode"],
          dataframe_preview: "a | b\n1 | 2",
          execution_time_ms: 1534,
          role: "assistant",
          content: "Tried a query",
          semantic_query: {
            metrics: ["revenue"],
            dimensions: ["channel"],
            time: { grain: "month", start: "2025-01-01", end: "2026-01-01" },
            filters: [{ dimension: "region", operator: "in", values: ["Europe", "APAC"] }],
            order: [{ by: "revenue", direction: "desc" }],
            limit: 5
          },
          based_on_cell_id: earlier.id
        })
        yield* repo.upsertCell(finished)
        expect(Option.map(yield* repo.getCell(org.id, record.id, started.id), encodeCell)).toEqual(
          Option.some(encodeCell(finished))
        )
        const page = yield* repo.listCells(org.id, record.id, { limit: 10, offset: 0 })
        // Equal timestamps: the later-stored cell first, and replacing kept its place.
        expect(page.cells.map(encodeCell)).toEqual([encodeCell(finished), encodeCell(earlier)])
        expect(page.hasMore).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("listCells is newest first and pages with has_more", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        const cells = [
          cell(record, { created_at: at(3) }),
          cell(record, { created_at: at(1) }),
          cell(record, { created_at: at(2) }),
          cell(record, { created_at: at(2) }),
          cell(record, { created_at: at(5) })
        ]
        yield* Effect.forEach(cells, repo.upsertCell, { discard: true })
        const expected = [cells[4], cells[0], cells[3], cells[2], cells[1]].map((c) => c!.id)
        const first = yield* repo.listCells(org.id, record.id, { limit: 2, offset: 0 })
        const second = yield* repo.listCells(org.id, record.id, { limit: 2, offset: 2 })
        const last = yield* repo.listCells(org.id, record.id, { limit: 2, offset: 4 })
        expect([first.hasMore, second.hasMore, last.hasMore]).toEqual([true, true, false])
        expect([...first.cells, ...second.cells, ...last.cells].map((c) => c.id)).toEqual(expected)
        const exact = yield* repo.listCells(org.id, record.id, { limit: 5, offset: 0 })
        expect(exact.hasMore).toBe(false)
        expect(exact.cells).toHaveLength(5)
      }).pipe(Effect.provide(layer)))

    it.effect("cells are visible only through their chat and organization", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        const sibling = chat(org.id, member.id)
        yield* createAll([record, sibling])
        const stored = cell(record)
        yield* repo.upsertCell(stored)
        expect(Option.isSome(yield* repo.getCell(org.id, record.id, stored.id))).toBe(true)
        expect(Option.isNone(yield* repo.getCell(org.id, sibling.id, stored.id))).toBe(true)
        expect(Option.isNone(yield* repo.getCell(other.org.id, record.id, stored.id))).toBe(true)
        expect((yield* repo.listCells(other.org.id, record.id, { limit: 10, offset: 0 })).cells).toEqual([])
        expect((yield* repo.listCells(org.id, sibling.id, { limit: 10, offset: 0 })).cells).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("upsertCell needs a chat of the cell's organization and never moves a cell between chats", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        const sibling = chat(org.id, member.id)
        yield* createAll([record, sibling])
        const foreign = new Chat.CellRecord({ ...cell(record), organization_id: other.org.id })
        expect((yield* Effect.flip(repo.upsertCell(foreign)))._tag).toBe("NotFound")
        const stored = cell(record)
        yield* repo.upsertCell(stored)
        const moved = new Chat.CellRecord({ ...stored, chat_id: sibling.id })
        expect((yield* Effect.flip(repo.upsertCell(moved)))._tag).toBe("Conflict")
        expect(Option.isSome(yield* repo.getCell(org.id, record.id, stored.id))).toBe(true)
        expect(Option.isNone(yield* repo.getCell(org.id, sibling.id, stored.id))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("assets round-trip, list oldest first per chat and are scoped by organization", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        const sibling = chat(org.id, member.id)
        yield* createAll([record, sibling])
        const stored = asset(record, {
          created_at: at(2),
          message_cell_id: CellId.make(Fixtures.uuid()),
          size_bytes: 4096,
          name: "revenue — Q1.png"
        })
        const { storage_key: _key, ...text } = asset(record, {
          created_at: at(1),
          type: "text",
          mime_type: "text/markdown",
          name: "notes.md"
        })
        const inline = new Asset.AssetRecord({ ...text, content: "# Notes\nünïcode" })
        const later = asset(record, { created_at: at(2) })
        yield* Effect.forEach([stored, inline, later, asset(sibling)], repo.addAsset, { discard: true })
        expect((yield* repo.listAssets(org.id, record.id)).map(encodeAsset)).toEqual(
          [inline, stored, later].map(encodeAsset)
        )
        expect(Option.map(yield* repo.getAsset(org.id, inline.id), encodeAsset)).toEqual(
          Option.some(encodeAsset(inline))
        )
        expect(Option.isNone(yield* repo.getAsset(other.org.id, stored.id))).toBe(true)
        expect(yield* repo.listAssets(other.org.id, record.id)).toEqual([])
        // Those of some answers only.
        expect((yield* repo.listAssets(org.id, record.id, [stored.message_cell_id!])).map((a) => a.id)).toEqual([
          stored.id
        ])
        expect(yield* repo.listAssets(org.id, record.id, [])).toEqual([])
        expect(yield* repo.listAssets(other.org.id, record.id, [stored.message_cell_id!])).toEqual([])
        expect(Option.map(yield* repo.findAssetForSignedUrl(stored.id), encodeAsset)).toEqual(
          Option.some(encodeAsset(stored))
        )
        expect(Option.isNone(yield* repo.findAssetForSignedUrl(AssetId.make(Fixtures.uuid())))).toBe(true)
      }).pipe(Effect.provide(layer)))

    it.effect("addAsset needs a chat of the asset's organization and a fresh id", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const other = yield* setup
        const record = chat(org.id, member.id)
        yield* repo.create(record)
        const foreign = new Asset.AssetRecord({ ...asset(record), organization_id: other.org.id })
        expect((yield* Effect.flip(repo.addAsset(foreign)))._tag).toBe("NotFound")
        const first = asset(record)
        yield* repo.addAsset(first)
        expect((yield* Effect.flip(repo.addAsset(new Asset.AssetRecord({ ...first, name: "again" }))))._tag).toBe(
          "Conflict"
        )
        expect((yield* repo.listAssets(org.id, record.id)).map((a) => a.name)).toEqual([first.name])
      }).pipe(Effect.provide(layer)))

    it.effect("a failed transaction leaves no chat, message, cell or asset behind", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const existing = chat(org.id, member.id, { status: "completed" })
        yield* repo.create(existing)
        const record = chat(org.id, member.id)
        const write = Effect.all([
          repo.create(record),
          repo.appendMessage(message(record, "user", "q")),
          repo.upsertCell(cell(record)),
          repo.addAsset(asset(record)),
          repo.appendMessage(message(existing, "user", "follow-up")),
          repo.update(new Chat.ChatRecord({ ...existing, status: "running", updated_at: at(9) }))
        ], { discard: true })
        const exit = yield* Effect.exit(tx.withTransaction(Effect.zipRight(write, Effect.fail("boom" as const))))
        expect(exit._tag).toBe("Failure")
        expect(Option.isNone(yield* repo.get(org.id, record.id))).toBe(true)
        expect(yield* repo.listMessages(org.id, existing.id)).toEqual([])
        expect(Option.map(yield* repo.get(org.id, existing.id), encodeChat)).toEqual(Option.some(encodeChat(existing)))
        expect((yield* repo.list(org.id, listOptions())).totalCount).toBe(1)

        yield* tx.withTransaction(write)
        expect(Option.isSome(yield* repo.get(org.id, record.id))).toBe(true)
        expect(yield* repo.listMessages(org.id, record.id)).toHaveLength(1)
        expect((yield* repo.listCells(org.id, record.id, { limit: 10, offset: 0 })).cells).toHaveLength(1)
        expect(yield* repo.listAssets(org.id, record.id)).toHaveLength(1)
      }).pipe(Effect.provide(layer)))
  })
}
