import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Answers from "../src/Answers.js"
import { AssetStore } from "../src/AssetStore.js"
import * as AssetStoreModule from "../src/AssetStore.js"
import * as Auth from "../src/Auth.js"
import type * as ChatEvent from "../src/ChatEvent.js"
import { ChatRepo } from "../src/ChatRepo.js"
import * as ChatRuns from "../src/ChatRuns.js"
import * as Chats from "../src/Chats.js"
import * as Connector from "../src/Connector.js"
import { ConnectorRepo } from "../src/ConnectorRepo.js"
import * as ConnectorRuntime from "../src/ConnectorRuntime.js"
import * as Connectors from "../src/Connectors.js"
import { type ConnectorId, RoleId } from "../src/Ids.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as Library from "../src/Library.js"
import * as Policy from "../src/Policy.js"
import * as SemanticLayer from "../src/SemanticLayer.js"
import * as Fixtures from "../src/testing/Fixtures.js"
import * as Memory from "../src/testing/Memory.js"
import * as WebSearch from "../src/WebSearch.js"

const memberRole: Policy.RoleInfo = {
  id: RoleId.make(Fixtures.uuid()),
  name: "member",
  permissions: [],
  isSystem: true,
  model: { allowModelChoice: true }
}

const sales: ConnectorRuntime.MemoryTable = {
  table: {
    name: "public.sales",
    rowEstimate: 3,
    columns: [
      { name: "region", type: "text", nullable: false, primaryKey: true },
      { name: "revenue", type: "numeric", nullable: false, primaryKey: false }
    ]
  },
  rows: [{ region: "EU", revenue: 10 }, { region: "US", revenue: 32 }, { region: "APAC", revenue: 7 }]
}

const layerWithModel = <M>(model: Layer.Layer<M | LanguageModel.LanguageModel>, options: Answers.Options) =>
  Answers.layerWith(options).pipe(
    Layer.provideMerge(SemanticLayer.layer),
    Layer.provideMerge(Layer.mergeAll(Chats.layer, ChatRuns.layer, Library.layer, Connectors.layer)),
    Layer.provideMerge(Auth.layer),
    Layer.provideMerge(Layer.merge(model, ConnectorRuntime.layerMemory([sales]))),
    Layer.provideMerge(Memory.layer)
  )

const layerWith = (script: LanguageModel.Script, options: Answers.Options = Answers.defaultOptions) =>
  layerWithModel(LanguageModel.layerMemory(script), options)

// A model that streams one delta and then never finishes: only an interruption ends its runs.
const endless = Layer.succeed(LanguageModel.LanguageModel, {
  generate: () => Stream.concat(Stream.make(LanguageModel.TextDelta.make({ text: "thinking" })), Stream.never)
})

const sign: Chats.SignAssetUrl = (id) => Effect.succeed(`/v2/assets/${id}?expires=1&signature=x`)

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  const principal: Policy.Principal = {
    organizationId: org.id,
    memberId: member.id,
    isServiceAccount: false,
    roles: [memberRole],
    auth: Policy.ApiKey({
      keyId: Fixtures.uuid() as never,
      assumedRoleIds: [memberRole.id],
      inheritAllRoles: false,
      fullMemberAccess: true,
      clientId: "{\"region\":\"EU\"}"
    })
  }
  // A key with client attributes has SQL written for it only where the database enforces them:
  // session metadata signed with the connector's secret.
  const repo = yield* ConnectorRepo
  const created = yield* repo.create(
    {
      ...Connector.make({
        organizationId: org.id,
        ownerId: member.id,
        config: {
          connector_type: "POSTGRES",
          name: "Sales",
          postgres: {
            host: "db.example.com",
            port: 5432,
            user: "analyst",
            password: Redacted.make(""),
            database: "sales",
            ssl_mode: "require",
            client_attributes_secret: Redacted.make("the key")
          }
        },
        at: yield* DateTime.now
      }),
      include_db_session_metadata: true
    },
    Connector.initialAccess(member.id)
  )
  return { principal, connectorId: created.id as ConnectorId }
})

const collect = (handle: Answers.Handle) =>
  Effect.map(Stream.runCollect(handle.events), (chunk) => Chunk.toReadonlyArray(chunk))

const types = (events: ReadonlyArray<ChatEvent.Sequenced>) => events.map((e) => e.event.type)

describe("Answers.ask", () => {
  it.effect("runs SQL, draws a chart and answers: events in order with increasing ids, everything stored", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      const answers = yield* Answers.Answers
      const handle = yield* answers.ask(
        principal,
        { question: "revenue by region", connector_ids: [connectorId] },
        sign
      )
      const events = yield* collect(handle)
      expect(types(events)).toEqual([
        "metadata",
        "text",
        "cell",
        "asset",
        "asset",
        "cell",
        "cell",
        "asset",
        "cell",
        "text",
        "done"
      ])
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1))
      expect(events.at(-1)!.event).toEqual({ type: "done", status: "completed" })
      // The log holds what the asker was handed, the answer's last words (stored with its end) included.
      const metadata = events[0]!.event
      if (metadata.type !== "metadata") throw new Error("shapes")
      const logged = yield* (yield* ChatRepo).readEvents(principal.organizationId, metadata.chat_id, 1, 0)
      expect(logged.map((e) => [e.id, e.event.type])).toEqual(events.map((e) => [e.id, e.event.type]))
      expect(logged.at(-2)!.event).toEqual(events.at(-2)!.event)
      const [, , started, table, download, ended] = events.map((e) => e.event)
      expect(started).toMatchObject({
        type: "cell",
        cell: { type: "sql", status: "running", query: "select * from public.sales" }
      })
      expect(ended).toMatchObject({ type: "cell", cell: { status: "completed", output: ["3 rows"] } })
      if (ended!.type !== "cell" || table!.type !== "asset" || download!.type !== "asset") throw new Error("shapes")
      expect(ended.cell.dataframe_preview).toContain("US      32")
      expect(JSON.parse(table.asset.content!).rows).toEqual([["EU", 10], ["US", 32], ["APAC", 7]])
      expect(download.asset.url).toMatch(/^\/v2\/assets\//)

      // The model saw the schema, the caller's attribute names (never their values) and the result.
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests[0]!.system).toContain("table public.sales (~3 rows)")
      expect(requests[0]!.system).toContain("fields: region")
      expect(requests[0]!.system).not.toContain("EU")
      const toolResult = requests[1]!.messages.at(-1)!
      expect(toolResult).toMatchObject({ role: "tool", toolCallId: "call_1" })
      expect(JSON.parse(toolResult.content)).toMatchObject({ columns: ["region", "revenue"], row_count: 3 })

      // The answer and the CSV bytes are stored.
      const repo = yield* ChatRepo
      const messages = yield* repo.listMessages(principal.organizationId, handle.metadata.chat_id)
      expect(messages.map((m) => [m.role, m.content])).toEqual([
        ["user", "revenue by region"],
        ["assistant", "Let me look. US leads with 32."]
      ])
      const stored = yield* repo.listAssets(principal.organizationId, handle.metadata.chat_id)
      const csv = stored.find((a) => a.type === "download")!
      const bytes = yield* (yield* AssetStore).get(csv.storage_key!)
      expect(AssetStoreModule.text(Option.getOrThrow(bytes))).toBe("region,revenue\r\nEU,10\r\nUS,32\r\nAPAC,7\r\n")
      expect(stored.find((a) => a.type === "chart")!.content).toContain("\"mark\":{\"type\":\"bar\"")
      const chat = yield* repo.get(principal.organizationId, handle.metadata.chat_id)
      expect(Option.map(chat, (c) => c.status)).toEqual(Option.some("completed"))
    }).pipe(Effect.provide(layerWith([
      [
        LanguageModel.TextDelta.make({ text: "Let me look. " }),
        ...LanguageModel.callTools({
          name: "run_sql",
          arguments: { connector_id: 1, sql: "select * from public.sales" }
        })
      ],
      LanguageModel.callTools({ name: "create_chart", arguments: { mark: "bar", x: "region", y: "revenue" } }),
      LanguageModel.reply("US leads with 32.")
    ]))))

  it.effect("returns tool errors to the model, which can correct itself", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      const handle = yield* (yield* Answers.Answers).ask(
        principal,
        { question: "q", connector_ids: [connectorId] },
        sign
      )
      const events = yield* collect(handle)
      const cells = events.flatMap((e) => e.event.type === "cell" ? [e.event.cell] : [])
      expect(cells.map((c) => c.status)).toEqual(["running", "failed"])
      expect(cells[1]!.error).toContain("cannot run")
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests[1]!.messages.at(-1)!.content).toMatch(/^error: memory runtime: cannot run/)
      expect(requests[2]!.messages.at(-1)!.content).toMatch(/^error: there is no tool nope/)
      expect(requests[3]!.messages.at(-1)!.content).toMatch(/^error: run a query with run_sql before/)
      expect(events.at(-1)!.event).toEqual({ type: "done", status: "completed" })
    }).pipe(Effect.provide(layerWith([
      LanguageModel.callTools({ name: "run_sql", arguments: { connector_id: 1, sql: "drop table x" } }),
      LanguageModel.callTools({ name: "nope", arguments: {} }),
      LanguageModel.callTools({ name: "create_chart", arguments: { mark: "bar", x: "a", y: "b" } }),
      LanguageModel.reply("I could not.")
    ]))))

  it.effect("for a key with client attributes, no SQL runs on a connector that does not enforce them", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      // The same connector without its signed session metadata: binding-only security.
      const repo = yield* ConnectorRepo
      const stored = Option.getOrThrow(yield* repo.get(principal.organizationId, connectorId))
      yield* repo.update(new Connector.ConnectorRecord({ ...stored, include_db_session_metadata: false }, true))
      const handle = yield* (yield* Answers.Answers).ask(
        principal,
        { question: "q", connector_ids: [connectorId] },
        sign
      )
      const events = yield* collect(handle)
      expect(events.flatMap((e) => e.event.type === "cell" ? [e.event.cell] : [])).toEqual([])
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests[1]!.messages.at(-1)!.content).toBe(
        `error: connector ${connectorId} does not enforce this key's client attributes in the database (signed ` +
          "session metadata), so SQL written for this key cannot run on it: use a saved query of the Context Library"
      )
    }).pipe(Effect.provide(layerWith([
      LanguageModel.callTools({ name: "run_sql", arguments: { connector_id: 1, sql: "select * from public.sales" } }),
      LanguageModel.reply("I could not.")
    ]))))

  it.effect("stops after maxSteps generations", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      const handle = yield* (yield* Answers.Answers).ask(
        principal,
        { question: "q", connector_ids: [connectorId] },
        sign
      )
      const done = yield* handle.done
      expect(done.status).toBe("completed")
      expect((yield* (yield* LanguageModel.MemoryLanguageModel).requests).length).toBe(2)
      const messages = yield* (yield* ChatRepo).listMessages(principal.organizationId, handle.metadata.chat_id)
      expect(messages.at(-1)!.content).toContain("Stopped after 2 steps")
    }).pipe(Effect.provide(layerWith(
      () =>
        LanguageModel.callTools({ name: "run_sql", arguments: { connector_id: 1, sql: "select * from public.sales" } }),
      { ...Answers.defaultOptions, maxSteps: 2 }
    ))))

  it.effect("a failing model ends the run as failed, with the reason", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const handle = yield* (yield* Answers.Answers).ask(principal, { question: "q" }, sign)
      expect(yield* handle.done).toEqual({
        type: "done",
        status: "failed",
        error: "the model failed: slow down"
      })
      const chat = yield* (yield* ChatRepo).get(principal.organizationId, handle.metadata.chat_id)
      expect(Option.map(chat, (c) => c.status)).toEqual(Option.some("failed"))
    }).pipe(Effect.provide(layerWith([
      new LanguageModel.LanguageModelError({ reason: "rate_limited", message: "slow down" })
    ]))))

  it.live("cancel interrupts the run: the model's stream stops and done says cancelled", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const answers = yield* Answers.Answers
      const handle = yield* answers.ask(principal, { question: "q" }, sign)
      const reader = yield* Effect.fork(collect(handle))
      yield* Effect.sleep("50 millis")
      expect(yield* answers.cancel(principal, handle.metadata.chat_id)).toEqual({ cancelled: true })
      const events = yield* Fiber.join(reader)
      expect(events.at(-1)!.event).toMatchObject({
        type: "done",
        status: "failed",
        error: expect.stringMatching(/^cancelled/)
      })
      const chat = yield* (yield* ChatRepo).get(principal.organizationId, handle.metadata.chat_id)
      expect(Option.map(chat, (c) => c.status)).toEqual(Option.some("cancelled"))
    }).pipe(Effect.provide(layerWithModel(endless, Answers.defaultOptions))))

  it.live("the answer is stored and done told at the model's Finish, before its stream ends", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const handle = yield* (yield* Answers.Answers).ask(principal, { question: "q" }, sign)
      // The model's stream never ends after its Finish: only the end being taken at Finish tells done.
      const done = yield* handle.done.pipe(
        Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => new Error("done waited for the stream's end") })
      )
      expect(done).toEqual({ type: "done", status: "completed" })
      const repo = yield* ChatRepo
      const messages = yield* repo.listMessages(principal.organizationId, handle.metadata.chat_id)
      expect(messages.map((m) => m.content)).toEqual(["q", "All done."])
      const chat = yield* repo.get(principal.organizationId, handle.metadata.chat_id)
      expect(Option.map(chat, (c) => c.status)).toEqual(Option.some("completed"))
    }).pipe(Effect.provide(layerWithModel(
      Layer.succeed(LanguageModel.LanguageModel, {
        generate: () => Stream.concat(Stream.fromIterable(LanguageModel.reply("All done.")), Stream.never)
      }),
      Answers.defaultOptions
    ))))

  it.effect("listen hands the run so far at once, then each batch as published, and stops when told", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const handle = yield* (yield* Answers.Answers).ask(principal, { question: "q" }, sign)
      const early: Array<ReadonlyArray<ChatEvent.Sequenced>> = []
      handle.listen((batch) => early.push(batch))
      const stopped: Array<ReadonlyArray<ChatEvent.Sequenced>> = []
      handle.listen((batch) => stopped.push(batch))()
      yield* handle.done
      const events = yield* collect(handle)
      expect(types(events)).toEqual(["metadata", "text", "text", "done"])
      // The early listener had the metadata at once, then every later batch: all of it, in order.
      expect(early[0]!.map((e) => e.event.type)).toEqual(["metadata"])
      expect(early.flat()).toEqual(events)
      // A listener stopped at once had the backlog only.
      expect(stopped).toEqual([early[0]])
      // A listener that comes after the end has the whole run in one batch, ending with done.
      const late: Array<ReadonlyArray<ChatEvent.Sequenced>> = []
      handle.listen((batch) => late.push(batch))
      expect(late).toEqual([events])
    }).pipe(Effect.provide(layerWith([
      [LanguageModel.TextDelta.make({ text: "One, " }), ...LanguageModel.reply("two.")]
    ]))))

  it.effect("with the ontology on: saved queries and notes in the prompt, library tools that see only what OWNERS lets the caller read", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      yield* Fixtures.seedMain(principal.organizationId, principal.memberId, {
        "sales/by_region.sql": "-- Revenue per region\nselect * from public.sales",
        "sales/filtered.sql": "select * from public.sales where region = :region and amount > :min",
        "ontology/revenue.md": "Revenue means the amount of a sale, in USD.",
        "secret/OWNERS": "reader: role:finance\ninherit: false\nowner: role:finance",
        "secret/salaries.md": "Salaries are confidential."
      })
      const handle = yield* (yield* Answers.Answers).ask(principal, {
        question: "revenue",
        connector_ids: [connectorId]
      }, sign)
      const events = yield* collect(handle)
      expect(events.at(-1)!.event).toEqual({ type: "done", status: "completed" })
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      const system = requests[0]!.system!
      expect(system).toContain("- sales/by_region.sql (no parameters): Revenue per region")
      expect(system).toContain("- sales/filtered.sql (parameters: region, min)")
      expect(system).toContain("Revenue means the amount of a sale")
      expect(system).not.toContain("Salaries")
      expect(requests[0]!.tools!.map((t) => t.name)).toEqual([
        "query_metrics",
        "investigate",
        "run_sql",
        "create_chart",
        "search_library",
        "read_library_file",
        "run_saved_query",
        // A person asked: the run may ask back.
        "ask_clarification"
      ])
      const results = requests.slice(1).map((r) => r.messages.at(-1)!.content)
      expect(JSON.parse(results[0]!).hits.map((h: { path: string }) => h.path)).toEqual([
        "ontology/revenue.md",
        "sales/by_region.sql"
      ])
      expect(results[1]).toBe("error: no library file secret/salaries.md")
      expect(results[2]).toBe("error: no library file secret/OWNERS")
      expect(JSON.parse(results[3]!)).toMatchObject({ columns: ["region", "revenue"], row_count: 3 })
      expect(results[4]).toBe("error: missing values for parameters: region, min")
      const cells = events.flatMap((e) =>
        e.event.type === "cell" && e.event.cell.status !== "running" ? [e.event.cell] : []
      )
      expect(cells.map((c) => [c.type, c.status])).toEqual([
        ["ontology_query", "completed"],
        ["ontology_query", "failed"],
        ["ontology_query", "failed"],
        ["query", "completed"]
      ])
      expect(cells[3]!.content).toBe("sales/by_region.sql")
    }).pipe(Effect.provide(layerWith([
      LanguageModel.callTools({ name: "search_library", arguments: { query: "revenue" } }),
      LanguageModel.callTools({ name: "read_library_file", arguments: { path: "secret/salaries.md" } }),
      LanguageModel.callTools({ name: "read_library_file", arguments: { path: "secret/OWNERS" } }),
      LanguageModel.callTools({ name: "run_saved_query", arguments: { path: "sales/by_region.sql" } }),
      LanguageModel.callTools({ name: "run_saved_query", arguments: { path: "sales/filtered.sql" } }),
      LanguageModel.reply("done")
    ]))))

  it.effect("with the ontology off, the library is neither shown nor reachable", () =>
    Effect.gen(function*() {
      const { connectorId, principal } = yield* setup
      yield* Fixtures.seedMain(principal.organizationId, principal.memberId, { "notes.md": "A note" })
      const handle = yield* (yield* Answers.Answers).ask(
        principal,
        { question: "q", connector_ids: [connectorId], tools: { ontology_enabled: false } },
        sign
      )
      yield* handle.done
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests[0]!.system).not.toContain("A note")
      // The connector's schema gives a derived model: query_metrics comes with any readable connector.
      expect(requests[0]!.tools!.map((t) => t.name)).toEqual([
        "query_metrics",
        "investigate",
        "run_sql",
        "create_chart",
        "ask_clarification"
      ])
      expect(requests[1]!.messages.at(-1)!.content).toBe("error: there is no tool search_library")
    }).pipe(Effect.provide(layerWith([
      LanguageModel.callTools({ name: "search_library", arguments: { query: "note" } }),
      LanguageModel.reply("done")
    ]))))

  it.effect("web_search is offered when a search is configured and the chat enables it", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const answers = yield* Answers.Answers
      const handle = yield* answers.ask(principal, { question: "news", tools: { web_search_enabled: true } }, sign)
      const events = yield* collect(handle)
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests[0]!.tools!.map((t) => t.name)).toEqual(["web_search", "ask_clarification"])
      expect(JSON.parse(requests[1]!.messages.at(-1)!.content).results[0]).toEqual({
        title: "Sightline",
        url: "https://example.test/sightline",
        snippet: "An analytics chat"
      })
      const cells = events.flatMap((e) => e.event.type === "cell" ? [e.event.cell] : [])
      expect(cells.map((c) => [c.type, c.status])).toEqual([["web_search", "running"], ["web_search", "completed"]])
      // Without the flag the tool is neither offered nor callable.
      const off = yield* answers.ask(principal, { question: "news", chat_id: handle.metadata.chat_id }, sign)
      yield* off.done
      const later = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect((later[2]!.tools ?? []).map((t) => t.name)).toEqual(["ask_clarification"])
      expect(later[3]!.messages.at(-1)!.content).toBe("error: there is no tool web_search")
    }).pipe(Effect.provide(
      layerWith([
        LanguageModel.callTools({ name: "web_search", arguments: { query: "sightline" } }),
        LanguageModel.reply("found it"),
        LanguageModel.callTools({ name: "web_search", arguments: { query: "sightline" } }),
        LanguageModel.reply("no search")
      ]).pipe(Layer.provide(WebSearch.layerMemory([
        { title: "Sightline", url: "https://example.test/sightline", snippet: "An analytics chat" }
      ])))
    )))
  it.effect("ask_clarification: the event goes out, the message keeps it, and a choice is asked as its question", () =>
    Effect.gen(function*() {
      const { principal } = yield* setup
      const answers = yield* Answers.Answers
      const handle = yield* answers.ask(principal, { question: "revenue from web" }, sign)
      const events = yield* collect(handle)
      const asked = events.flatMap((e) => e.event.type === "clarification" ? [e.event] : [])
      expect(asked).toEqual([{
        type: "clarification",
        question: "Which web?",
        choices: [
          { id: "1", label: "the web channel", question: "revenue from the web channel" },
          { id: "2", label: "the web source", question: "revenue from the web source" }
        ]
      }])
      expect(events.at(-1)!.event).toEqual({ type: "done", status: "completed" })
      const chatId = handle.metadata.chat_id
      const messages = yield* (yield* ChatRepo).listMessages(principal.organizationId, chatId)
      expect(messages.at(-1)!.clarification).toEqual({ question: asked[0]!.question, choices: asked[0]!.choices })
      // A choice is asked as its question, stored as the asker's message.
      const chosen = yield* answers.ask(principal, { chat_id: chatId, choice: "2" }, sign)
      yield* chosen.done
      const requests = yield* (yield* LanguageModel.MemoryLanguageModel).requests
      expect(requests.at(-1)!.messages.at(-1)).toMatchObject({ role: "user", content: "revenue from the web source" })
      // Only the last answer's clarification can be chosen from, by a choice it offers.
      const refused = yield* Effect.flip(answers.ask(principal, { chat_id: chatId, choice: "1" }, sign))
      expect(refused).toMatchObject({
        _tag: "InvalidRequest",
        message: expect.stringMatching(/asked no clarification/)
      })
    }).pipe(Effect.provide(layerWith([
      LanguageModel.callTools({
        name: "ask_clarification",
        arguments: {
          question: "Which web?",
          choices: [
            { label: "the web channel", question: "revenue from the web channel" },
            { label: "the web source", question: "revenue from the web source" },
            { label: "again", question: "revenue from the web channel" }
          ]
        }
      }),
      LanguageModel.reply("Which web? The channel or the source?"),
      LanguageModel.reply("Web source revenue is 10.")
    ]))))
})
