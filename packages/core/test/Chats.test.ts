import { describe, expect, it } from "@effect/vitest"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import * as Asset from "../src/Asset.js"
import * as Chat from "../src/Chat.js"
import * as ChatEvent from "../src/ChatEvent.js"
import { ChatRepo } from "../src/ChatRepo.js"
import * as ChatRuns from "../src/ChatRuns.js"
import * as Chats from "../src/Chats.js"
import * as Connector from "../src/Connector.js"
import { ConnectorRepo } from "../src/ConnectorRepo.js"
import { AssetId, CellId, ChatId, type MemberId, ModelNumber, type OrganizationId, RoleId } from "../src/Ids.js"
import type { Member } from "../src/Member.js"
import type * as Permission from "../src/Permission.js"
import * as Policy from "../src/Policy.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"

const TestLayer = Layer.merge(Chats.layer, ChatRuns.layer).pipe(Layer.provideMerge(Memory.layer))

// --- fixtures ------------------------------------------------------------------------------------

const role = (
  name: string,
  permissions: ReadonlyArray<Permission.Permission>,
  options: { readonly isSystem?: boolean; readonly model?: Policy.ModelConfig } = {}
): Policy.RoleInfo => ({
  id: RoleId.make(Fixtures.uuid()),
  name,
  permissions,
  isSystem: options.isSystem ?? false,
  model: options.model ?? { allowModelChoice: true }
})

/** The `member` system role: chat read and write, connector read. */
const memberRole = role("member", [], { isSystem: true })
const adminRole = role("admin", [], { isSystem: true })

const principalOf = (member: Member, roles: ReadonlyArray<Policy.RoleInfo> = [memberRole]): Policy.Principal => ({
  organizationId: member.organization_id,
  memberId: member.id,
  isServiceAccount: false,
  roles,
  auth: Policy.Session()
})

/** Two members of one organization and a member of another. */
const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const other = yield* Fixtures.organization("Other Org")
  const aliceMember = yield* Fixtures.member(org.id, { email: "alice@example.com" })
  const bob = yield* Fixtures.member(org.id)
  const mallory = yield* Fixtures.member(other.id)
  return {
    org,
    other,
    aliceMember,
    alice: principalOf(aliceMember),
    bob: principalOf(bob),
    mallory: principalOf(mallory)
  }
})

const sign: Chats.SignAssetUrl = (id) => Effect.succeed(`https://sightline.test/v2/assets/${id}?signature=x`)

const decodeList = Schema.decodeUnknownSync(Chat.ListChatsQuery)
const decodeCells = Schema.decodeUnknownSync(Chat.ChatCellsQuery)
const ask = (question: string, rest: Partial<Chat.StreamChatRequest> = {}): Chat.StreamChatRequest => ({
  question,
  ...rest
})

// The error of an effect expected to fail. An unexpected success dies with the value as JSON, so the
// report stays readable (printing the raw value, full of Effect data types, can stall the reporter).
const failure = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.matchEffect(effect, {
    onFailure: Effect.succeed,
    onSuccess: (value) => Effect.dieMessage(`expected a failure, got ${JSON.stringify(value)}`)
  })

const connector = (organizationId: OrganizationId, ownerId: MemberId, isPublic: boolean) =>
  Effect.gen(function*() {
    const created = yield* (yield* ConnectorRepo).create(
      Connector.make({
        organizationId,
        ownerId,
        config: { connector_type: "DEMO", name: "demo", demo: { dataset: "retail" } },
        at: yield* DateTime.now
      }),
      Connector.initialAccess(ownerId, { is_public: isPublic, grants: [] })
    )
    return created.id
  })

const sqlCell = (id: CellId, status: Chat.CellStatus, at: DateTime.Utc): ChatRuns.CellInput => ({
  id,
  type: "sql",
  status,
  query: "select 1",
  created_at: at
})

/**
 * A finished exchange: a question, a SQL step (written at start and at end) that produced a stored
 * chart, an inline text asset, and the answer.
 */
const exchange = (principal: Policy.Principal) =>
  Effect.gen(function*() {
    const runs = yield* ChatRuns.ChatRuns
    const { run } = yield* runs.start(principal, ask("Revenue by region?"))
    yield* TestClock.adjust("1 second")
    const stepId = CellId.make(Fixtures.uuid())
    const startedAt = yield* DateTime.now
    yield* runs.appendCell(run, sqlCell(stepId, "running", startedAt))
    yield* TestClock.adjust("1 second")
    yield* runs.appendCell(run, { ...sqlCell(stepId, "completed", startedAt), output: ["1"] })
    const chartId = AssetId.make(Fixtures.uuid())
    const chart = yield* runs.addAsset(run, {
      id: chartId,
      cell_id: stepId,
      name: "revenue.png",
      type: "chart",
      mime_type: "image/png",
      storage_key: Asset.storageKey({ organization_id: run.organizationId, chat_id: run.chatId, id: chartId })
    })
    const note = yield* runs.addAsset(run, {
      id: AssetId.make(Fixtures.uuid()),
      cell_id: stepId,
      name: "notes.txt",
      type: "text",
      mime_type: "text/plain",
      content: "inline notes"
    })
    yield* TestClock.adjust("1 second")
    const { message: answer } = yield* runs.complete(run, "Revenue is up.", [])
    return { run, stepId, chart, note, answer }
  })

// --- start -----------------------------------------------------------------------------------------

describe("ChatRuns.start", () => {
  it.effect("creates a running chat with the default model, stores the question and answers the metadata", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      yield* TestClock.adjust("1 hour")
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { metadata, run } = yield* runs.start(alice, ask("Revenue by region?\nPlease be brief."))
      const now = yield* DateTime.now
      expect(metadata).toEqual({
        id: run.messageId,
        created_at: now,
        model: "offline",
        chat_id: run.chatId,
        is_continuation: false
      })
      expect(Schema.is(Chat.RunMetadata)(metadata)).toBe(true)
      expect(run.tools).toEqual(Chat.resolveTools({}))
      const stored = Option.getOrThrow(yield* (yield* ChatRepo).get(alice.organizationId, run.chatId))
      expect(stored).toMatchObject({
        creator_id: alice.memberId,
        model: "offline",
        summary: "Revenue by region?",
        source: "api",
        status: "running"
      })
      const chat = yield* chats.get(alice, run.chatId, sign)
      expect(chat.messages).toEqual([
        {
          role: "user",
          content: "Revenue by region?\nPlease be brief.",
          created_at: now,
          cell_id: chat.messages[0]!.cell_id
        }
      ])
      // The question is also a markdown cell, the one its message names.
      const cell = yield* chats.cell(alice, run.chatId, chat.messages[0]!.cell_id, sign)
      expect(cell).toMatchObject({
        type: "markdown",
        status: "completed",
        role: "user",
        content: "Revenue by region?\nPlease be brief."
      })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("uses a model the caller may choose, and records the source", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { metadata } = yield* runs.start(alice, ask("q", { model: "offline-fast" }), { source: "playbook" })
      expect(metadata.model).toBe("offline-fast")
      const listed = yield* chats.list(alice, decodeList({}))
      expect(listed.chats[0]).toMatchObject({ model: "offline-fast", source: "playbook" })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 403 for a model outside the catalogue or the caller's roles, or a choice its roles forbid", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const unknown = yield* failure(runs.start(alice, ask("q", { model: "gpt-unknown" })))
      expect(unknown._tag).toBe("PermissionDenied")
      expect(unknown.message).toContain("not available")
      const restricted = role("restricted", ["chat:write"], {
        model: { allowedModelIds: [ModelNumber.make(1)], allowModelChoice: true }
      })
      const notAllowed = yield* failure(
        runs.start({ ...alice, roles: [restricted] }, ask("q", { model: "offline-fast" }))
      )
      expect(notAllowed._tag).toBe("PermissionDenied")
      expect(notAllowed.message).toContain("not permitted")
      const noChoice = role("no choice", ["chat:write"], { model: { allowModelChoice: false } })
      const chose = yield* failure(runs.start({ ...alice, roles: [noChoice] }, ask("q", { model: "offline-fast" })))
      expect(chose._tag).toBe("PermissionDenied")
      // Naming the model the caller gets anyway is not a choice.
      const same = yield* runs.start({ ...alice, roles: [noChoice] }, ask("q", { model: "offline" }))
      expect(same.metadata.model).toBe("offline")
      expect((yield* chats.list(alice, decodeList({}))).total_count).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 400 for model together with chat_id, before looking at the chat", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const runs = yield* ChatRuns.ChatRuns
      // Built by hand: the request schema already refuses it, the service must too.
      const error = yield* failure(
        runs.start(alice, { question: "q", chat_id: ChatId.make(Fixtures.uuid()), model: "offline" })
      )
      expect(error._tag).toBe("InvalidRequest")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs chat:write (403)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const error = yield* failure(
        (yield* ChatRuns.ChatRuns).start({ ...alice, roles: [role("reader", ["chat:read"])] }, ask("q"))
      )
      expect(error._tag).toBe("PermissionDenied")
      expect(error.message).toContain("chat:write")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("checks the connectors of tools and connector_ids: usable ones are merged, others are 400", () =>
    Effect.gen(function*() {
      const { alice, bob, org } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const own = yield* connector(org.id, alice.memberId, false)
      const shared = yield* connector(org.id, bob.memberId, true)
      const privateToBob = yield* connector(org.id, bob.memberId, false)
      const { run } = yield* runs.start(
        alice,
        ask("q", { tools: { connector_ids: [own], web_search_enabled: true }, connector_ids: [shared, own] })
      )
      expect(run.tools).toMatchObject({ connectorIds: [own, shared], webSearch: true, sql: true })
      const error = yield* failure(runs.start(alice, ask("q", { connector_ids: [privateToBob] })))
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message).toBe(`invalid connector_ids: connector ${privateToBob} not found or not accessible`)
      // Nothing was created by the refused question.
      expect((yield* chats.list(alice, decodeList({}))).total_count).toBe(1)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("continues a finished chat with its model; a running chat is 409", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const first = yield* runs.start(alice, ask("First question", { model: "offline-fast" }))
      const busy = yield* failure(runs.start(alice, ask("too soon", { chat_id: first.run.chatId })))
      expect(busy._tag).toBe("Conflict")
      yield* runs.complete(first.run, "First answer", [])
      yield* TestClock.adjust("1 minute")
      const second = yield* runs.start(alice, ask("Second question", { chat_id: first.run.chatId }))
      expect(second.metadata).toMatchObject({ chat_id: first.run.chatId, model: "offline-fast", is_continuation: true })
      const chat = yield* chats.get(alice, first.run.chatId, sign)
      expect(chat.messages.map((m) => [m.role, m.content])).toEqual([
        ["user", "First question"],
        ["assistant", "First answer"],
        ["user", "Second question"]
      ])
      const [summary] = (yield* chats.list(alice, decodeList({}))).chats
      expect(summary).toMatchObject({ summary: "First question", is_running: true, updated_at: yield* DateTime.now })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 404 for continuing another member's chat (even as admin) or another organization's", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      yield* runs.finish(run, "completed")
      for (const caller of [bob, { ...bob, roles: [adminRole] }, mallory]) {
        const error = yield* failure(runs.start(caller, ask("mine?", { chat_id: run.chatId })))
        expect(error).toMatchObject({ _tag: "NotFound", message: "Resource not found" })
      }
      const error = yield* failure(runs.start(alice, ask("q", { chat_id: ChatId.make(Fixtures.uuid()) })))
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))
})

// --- list ------------------------------------------------------------------------------------------

describe("Chats.list", () => {
  it.effect("lists the caller's own chats as ChatSummary rows", () =>
    Effect.gen(function*() {
      const { alice, bob } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const long = "x".repeat(150) + "\n" + "y".repeat(150)
      const first = yield* runs.start(alice, ask(long))
      yield* runs.finish(first.run, "completed")
      yield* TestClock.adjust("1 minute")
      const second = yield* runs.start(alice, ask("Churn last month?"))
      yield* runs.start(bob, ask("Bob's own question"))

      const listed = yield* chats.list(alice, decodeList({}))
      expect(listed.total_count).toBe(2)
      // Default order: updated_at descending.
      expect(listed.chats.map((c) => c.id)).toEqual([second.run.chatId, first.run.chatId])
      const [newest, oldest] = listed.chats
      expect(newest).toBeInstanceOf(Chat.ChatSummary)
      expect(newest).toEqual(
        new Chat.ChatSummary({
          id: second.run.chatId,
          summary: "Churn last month?",
          timestamp: second.metadata.created_at,
          updated_at: second.metadata.created_at,
          creator_email: "alice@example.com",
          preview: "Churn last month?",
          source: "api",
          model: "offline",
          is_running: true
        })
      )
      expect(oldest!.summary).toBe("x".repeat(100))
      expect(oldest!.preview).toBe(long.slice(0, 200))
      expect(oldest!.is_running).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("searches, sorts and pages, with the total of all matches", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      for (const question of ["Beta revenue", "alpha revenue", "Gamma churn"]) {
        yield* runs.start(alice, ask(question))
        yield* TestClock.adjust("1 second")
      }
      const search = yield* chats.list(
        alice,
        decodeList({ search_term: "REVENUE", sort_by: "name", sort_direction: "asc" })
      )
      expect(search.chats.map((c) => c.summary)).toEqual(["alpha revenue", "Beta revenue"])
      const page = yield* chats.list(
        alice,
        decodeList({ limit: "1", offset: "1", sort_by: "created_at", sort_direction: "asc" })
      )
      expect(page.total_count).toBe(3)
      expect(page.chats.map((c) => c.summary)).toEqual(["alpha revenue"])
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs chat:read (403)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const error = yield* failure(
        (yield* Chats.Chats).list({ ...alice, roles: [role("none", ["playbook:read"])] }, decodeList({}))
      )
      expect(error._tag).toBe("PermissionDenied")
    }).pipe(Effect.provide(TestLayer)))
})

// --- get -------------------------------------------------------------------------------------------

describe("Chats.get", () => {
  it.effect("returns the chat, its messages with the answer's assets, and every asset with message_cell_id", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const { run, stepId, chart, note, answer } = yield* exchange(alice)
      const got = yield* chats.get(alice, run.chatId, sign)
      expect(got.chat).toEqual(new Chat.Chat({ id: run.chatId, model: "offline" }))
      const chartAsset = new Asset.Asset({
        name: "revenue.png",
        type: "chart",
        url: `https://sightline.test/v2/assets/${chart.id}?signature=x`,
        cell_id: stepId,
        message_cell_id: run.messageCellId,
        created_at: chart.created_at
      })
      // Inline text is served as content, without a URL.
      const noteAsset = new Asset.Asset({
        name: "notes.txt",
        type: "text",
        content: "inline notes",
        cell_id: stepId,
        message_cell_id: run.messageCellId,
        created_at: note.created_at
      })
      expect(got.assets).toEqual([chartAsset, noteAsset])
      expect(got.messages).toHaveLength(2)
      const [user, assistant] = got.messages
      expect(user!.role).toBe("user")
      expect("assets" in user!).toBe(false)
      expect(assistant).toEqual({
        role: "assistant",
        id: run.messageId,
        content: "Revenue is up.",
        created_at: answer.created_at,
        cell_id: run.messageCellId,
        assets: [chartAsset, noteAsset]
      })
      expect(answer.id).toBe(run.messageId)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 404 for another member's chat (even as admin) and another organization's", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("private"))
      for (const caller of [bob, { ...bob, roles: [adminRole] }, mallory]) {
        const error = yield* failure(chats.get(caller, run.chatId, sign))
        expect(error).toMatchObject({ _tag: "NotFound", message: "Resource not found" })
      }
    }).pipe(Effect.provide(TestLayer)))

  it.effect("needs chat:read (403), even for the creator; an API key reads back its owner's chats", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      const error = yield* failure(chats.get({ ...alice, roles: [role("none", ["playbook:read"])] }, run.chatId, sign))
      expect(error._tag).toBe("PermissionDenied")
      const key: Policy.Principal = {
        ...alice,
        auth: Policy.ApiKey({
          keyId: Fixtures.uuid() as never,
          assumedRoleIds: [memberRole.id],
          inheritAllRoles: false,
          fullMemberAccess: false
        })
      }
      expect((yield* chats.get(key, run.chatId, sign)).chat.id).toBe(run.chatId)
    }).pipe(Effect.provide(TestLayer)))
})

describe("Chats.assetForSignedUrl", () => {
  it.effect("finds an asset in any organization without a caller, and is NotFound for an unknown id", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const { chart, note } = yield* exchange(alice)
      expect((yield* chats.assetForSignedUrl(note.id)).record.content).toBe("inline notes")
      // A stored asset whose bytes are missing is as absent as an unknown one.
      expect((yield* failure(chats.assetForSignedUrl(chart.id)))._tag).toBe("NotFound")
      const error = yield* failure(chats.assetForSignedUrl(AssetId.make(Fixtures.uuid())))
      expect(error._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))
})

// --- cells -----------------------------------------------------------------------------------------

describe("Chats.cells and Chats.cell", () => {
  it.effect("pages cells newest first, each with its assets (no message_cell_id)", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const { run, stepId, chart } = yield* exchange(alice)
      const all = yield* chats.cells(alice, run.chatId, decodeCells({}), sign)
      expect(all.chat_id).toBe(run.chatId)
      expect(all.has_more).toBe(false)
      expect(all.cells.map((c) => [c.type, c.role ?? null])).toEqual([
        ["markdown", "assistant"],
        ["sql", null],
        ["markdown", "user"]
      ])
      const step = all.cells[1]!
      expect(step).toBeInstanceOf(Chat.ChatCell)
      expect(step).toMatchObject({ id: stepId, status: "completed", output: ["1"] })
      expect(step.assets!.map((a) => a.name)).toEqual(["revenue.png", "notes.txt"])
      expect(step.assets![0]!.url).toBe(`https://sightline.test/v2/assets/${chart.id}?signature=x`)
      expect(step.assets!.every((a) => a.message_cell_id === undefined)).toBe(true)
      expect("assets" in all.cells[0]!).toBe(false)

      const first = yield* chats.cells(alice, run.chatId, decodeCells({ limit: "2" }), sign)
      expect(first.cells).toHaveLength(2)
      expect(first.has_more).toBe(true)
      const rest = yield* chats.cells(alice, run.chatId, decodeCells({ limit: "2", offset: "2" }), sign)
      expect(rest.cells.map((c) => c.role)).toEqual(["user"])
      expect(rest.has_more).toBe(false)
      // A limit outside 1..500 falls back to 200 rather than failing.
      expect((yield* chats.cells(alice, run.chatId, decodeCells({ limit: "0" }), sign)).cells).toHaveLength(3)
      expect((yield* chats.cells(alice, run.chatId, { limit: 1000, offset: 0 }, sign)).cells).toHaveLength(3)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("reads one cell; an unknown cell, or one of another chat, is 404", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run, stepId } = yield* exchange(alice)
      const step = yield* chats.cell(alice, run.chatId, stepId, sign)
      expect(step).toMatchObject({ id: stepId, type: "sql", query: "select 1" })
      expect(step.assets).toHaveLength(2)
      const other = yield* runs.start(alice, ask("another chat"))
      expect((yield* failure(chats.cell(alice, other.run.chatId, stepId, sign)))._tag).toBe("NotFound")
      expect((yield* failure(chats.cell(alice, run.chatId, CellId.make(Fixtures.uuid()), sign)))._tag).toBe("NotFound")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("is 404 for another member and another organization", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const chats = yield* Chats.Chats
      const { run, stepId } = yield* exchange(alice)
      for (const caller of [bob, mallory]) {
        expect((yield* failure(chats.cells(caller, run.chatId, decodeCells({}), sign)))._tag).toBe("NotFound")
        expect((yield* failure(chats.cell(caller, run.chatId, stepId, sign)))._tag).toBe("NotFound")
      }
    }).pipe(Effect.provide(TestLayer)))
})

// --- the run lifecycle -----------------------------------------------------------------------------

describe("Chats run lifecycle", () => {
  it.effect("cancel ends a running run; the run's next writes are 409 and the chat takes a new question", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("long question"))
      expect(yield* chats.cancel(alice, run.chatId)).toEqual({ cancelled: true })
      const stored = Option.getOrThrow(yield* (yield* ChatRepo).get(alice.organizationId, run.chatId))
      expect(stored.status).toBe("cancelled")
      expect((yield* chats.list(alice, decodeList({}))).chats[0]!.is_running).toBe(false)
      const write = yield* failure(
        runs.appendCell(run, sqlCell(CellId.make(Fixtures.uuid()), "running", yield* DateTime.now))
      )
      expect(write._tag).toBe("Conflict")
      expect(write.message).toContain("is over (the chat is cancelled)")
      expect((yield* failure(runs.finish(run, "completed")))._tag).toBe("Conflict")
      // Nothing to cancel is not an error.
      expect(yield* chats.cancel(alice, run.chatId)).toEqual({ cancelled: false })
      const next = yield* runs.start(alice, ask("again", { chat_id: run.chatId }))
      expect(next.metadata.is_continuation).toBe(true)
      // The old run cannot write into the new one.
      const stale = yield* failure(runs.complete(run, "late answer", []))
      expect(stale.message).toContain("was replaced by a newer run")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("cancel is 404 for another member or organization and 403 without chat:write", () =>
    Effect.gen(function*() {
      const { alice, bob, mallory } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      expect((yield* failure(chats.cancel(bob, run.chatId)))._tag).toBe("NotFound")
      expect((yield* failure(chats.cancel(mallory, run.chatId)))._tag).toBe("NotFound")
      const readOnly = yield* failure(chats.cancel({ ...alice, roles: [role("reader", ["chat:read"])] }, run.chatId))
      expect(readOnly._tag).toBe("PermissionDenied")
      expect(Option.getOrThrow(yield* (yield* ChatRepo).get(alice.organizationId, run.chatId)).status).toBe("running")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("complete stores one answer and ends the run; finish records the outcome once", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      const completed = yield* runs.complete(run, "answer", [])
      expect(completed.done.event).toEqual({ type: "done", status: "completed" })
      expect((yield* failure(runs.complete(run, "second answer", [])))._tag).toBe("Conflict")
      expect((yield* chats.get(alice, run.chatId, sign)).messages.map((m) => m.content)).toEqual(["q", "answer"])
      const next = yield* runs.start(alice, ask("q2", { chat_id: run.chatId }))
      yield* runs.finish(next.run, "failed", "the model was unavailable")
      const stored = Option.getOrThrow(yield* (yield* ChatRepo).get(alice.organizationId, run.chatId))
      expect(stored.status).toBe("failed")
      expect((yield* failure(runs.finish(next.run, "completed")))._tag).toBe("Conflict")
      expect((yield* failure(runs.complete(next.run, "late answer", [])))._tag).toBe("Conflict")
    }).pipe(Effect.provide(TestLayer)))

  it.effect("a run silent for a minute is stale: not running, ended in the log, and the next question replaces it", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      expect(run.firstEventId).toBe(1)
      // Heartbeats and writes keep it live: 40 + 40 seconds with a heartbeat in between is not stale.
      yield* TestClock.adjust("40 seconds")
      expect(yield* runs.heartbeat(run)).toBe(true)
      yield* TestClock.adjust("40 seconds")
      expect((yield* chats.list(alice, decodeList({}))).chats[0]!.is_running).toBe(true)
      expect((yield* failure(runs.start(alice, ask("q2", { chat_id: run.chatId }))))._tag).toBe("Conflict")

      yield* TestClock.adjust("25 seconds")
      expect((yield* chats.list(alice, decodeList({}))).chats[0]!.is_running).toBe(false)
      const replaced = yield* runs.start(alice, ask("q2", { chat_id: run.chatId }))
      expect(replaced.metadata.is_continuation).toBe(true)
      expect((yield* chats.list(alice, decodeList({}))).chats[0]!.is_running).toBe(true)
      // The stale run's end is in the log before the new run's start, whose ids go on from there.
      expect((yield* runs.readEvents(run, 0)).map((e) => e.event)).toEqual([
        expect.objectContaining({ type: "metadata" }),
        { type: "done", status: "failed", error: ChatEvent.abandonedMessage }
      ])
      expect(replaced.run.firstEventId).toBe(3)
      // The presumed-dead run, if it was only slow, can no longer write.
      expect((yield* failure(runs.finish(run, "completed"))).message).toContain("was replaced by a newer run")
      expect(yield* runs.heartbeat(run)).toBe(false)
      expect(yield* runs.appendEvents(run, [{ id: 4, event: { type: "text", text: "late" } }])).toBe(false)
      const done = yield* runs.finish(replaced.run, "completed")
      expect(done).toEqual({ id: 4, event: { type: "done", status: "completed" } })
    }).pipe(Effect.provide(TestLayer)))

  it.effect("endStaleRun ends only a stale run, with its done in the log", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      yield* TestClock.adjust("30 seconds")
      yield* runs.endStaleRun(alice.organizationId, run.chatId)
      expect((yield* chats.visible(alice, run.chatId)).status).toBe("running")
      yield* TestClock.adjust("31 seconds")
      yield* runs.endStaleRun(alice.organizationId, run.chatId)
      expect((yield* chats.visible(alice, run.chatId)).status).toBe("failed")
      expect((yield* runs.readEvents(run, 1)).map((e) => e.event)).toEqual([
        { type: "done", status: "failed", error: ChatEvent.abandonedMessage }
      ])
      // Twice is nothing more.
      yield* runs.endStaleRun(alice.organizationId, run.chatId)
      expect(yield* runs.readEvents(run, 1)).toHaveLength(1)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("cancel logs the run's end with it", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      expect(yield* runs.appendEvents(run, [{ id: 2, event: { type: "text", text: "Hi" } }])).toBe(true)
      expect(yield* chats.cancel(alice, run.chatId)).toEqual({ cancelled: true })
      expect((yield* runs.readEvents(run, 1)).map((e) => e.event)).toEqual([
        { type: "text", text: "Hi" },
        { type: "done", status: "failed", error: ChatEvent.cancelledMessage }
      ])
      expect(yield* runs.appendEvents(run, [{ id: 4, event: { type: "text", text: "late" } }])).toBe(false)
    }).pipe(Effect.provide(TestLayer)))

  it.effect("the stale limit is configurable", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      yield* TestClock.adjust("5 seconds")
      expect((yield* runs.start(alice, ask("q2", { chat_id: run.chatId }))).metadata.is_continuation).toBe(true)
    }).pipe(
      Effect.provide(
        Layer.merge(Chats.layerWith({ staleRunAfter: "5 seconds" }), ChatRuns.layerWith({ staleRunAfter: "5 seconds" }))
          .pipe(Layer.provideMerge(Memory.layer))
      )
    ))

  it.effect("addAsset needs exactly one of storage_key and content, and a cell of the chat", () =>
    Effect.gen(function*() {
      const { alice } = yield* setup
      const chats = yield* Chats.Chats
      const runs = yield* ChatRuns.ChatRuns
      const { run } = yield* runs.start(alice, ask("q"))
      const base = { name: "a", type: "text" as const, mime_type: "text/plain", cell_id: run.messageCellId }
      const both = yield* failure(
        runs.addAsset(run, { ...base, id: AssetId.make(Fixtures.uuid()), content: "x", storage_key: "k" })
      )
      expect(both._tag).toBe("InvalidRequest")
      const neither = yield* failure(runs.addAsset(run, { ...base, id: AssetId.make(Fixtures.uuid()) }))
      expect(neither._tag).toBe("InvalidRequest")
      const unknownCell = CellId.make(Fixtures.uuid())
      const orphan = yield* failure(
        runs.addAsset(run, { ...base, id: AssetId.make(Fixtures.uuid()), cell_id: unknownCell, content: "x" })
      )
      expect(orphan.message).toContain(`cell ${unknownCell} is not a cell of chat ${run.chatId}`)
      // The answer's cell may be named before the answer is stored.
      const early = yield* runs.addAsset(run, { ...base, id: AssetId.make(Fixtures.uuid()), content: "x" })
      expect(early.message_cell_id).toBe(run.messageCellId)
      expect((yield* chats.get(alice, run.chatId, sign)).assets).toHaveLength(1)
    }).pipe(Effect.provide(TestLayer)))
})
