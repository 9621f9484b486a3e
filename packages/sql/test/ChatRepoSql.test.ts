/**
 * What the ChatRepo contract cannot show, on real databases:
 * - listing, sorting, searching, cells and assets are served by indexes (EXPLAIN of the statements
 *   the repository runs, on thousands of chats); search uses trigram indexes where `pg_trgm` exists;
 * - a transaction that fails (by error, defect or interruption) after writing a chat and a message
 *   leaves neither;
 * - concurrent appends to one chat keep every message, in one order, with the first user message
 *   as the chat's preview; a cell id raced by two chats lands in exactly one.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Chat from "@sightline/core/Chat"
import { ChatRepo } from "@sightline/core/ChatRepo"
import { CellId, ChatId, type MemberId, MessageId, type OrganizationId } from "@sightline/core/Ids"
import { MemberRepo } from "@sightline/core/MemberRepo"
import { Fixtures } from "@sightline/core/testing"
import { Transaction } from "@sightline/core/Transaction"
import * as Arr from "effect/Array"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import { TablePrefix } from "../src/TablePrefix.js"
import { forEachDatabase } from "./utils/databases.js"
import { capturePlans } from "./utils/explain.js"

const base = DateTime.unsafeMake("2026-02-01T08:00:00.000Z")

const newChat = (organizationId: OrganizationId, creatorId: MemberId, summary = "A chat") =>
  new Chat.ChatRecord({
    id: ChatId.make(Fixtures.uuid()),
    organization_id: organizationId,
    creator_id: creatorId,
    model: "offline",
    summary,
    source: "api",
    status: "running",
    created_at: base,
    updated_at: base
  })

const newMessage = (chat: Chat.ChatRecord, role: Chat.MessageRole, content: string) =>
  new Chat.MessageRecord({
    id: MessageId.make(Fixtures.uuid()),
    organization_id: chat.organization_id,
    chat_id: chat.id,
    role,
    content,
    cell_id: CellId.make(Fixtures.uuid()),
    created_at: base
  })

const setup = Effect.gen(function*() {
  const org = yield* Fixtures.organization()
  const member = yield* Fixtures.member(org.id)
  return { org, member }
})

/** Whether the server has `pg_trgm` (PostgreSQL with contrib: yes; PGlite without its contrib bundle: no). */
const hasTrigram = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) => Effect.map(sql`SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'`, (rows) => rows.length > 0)
)

forEachDatabase((database) =>
  describe(`ChatRepoSql (${database.name})`, () => {
    for (
      const [label, failWith] of [
        ["an error", Effect.fail("boom" as const)],
        ["a defect", Effect.die("crash")],
        ["an interruption", Effect.interrupt]
      ] as const
    ) {
      it.live(`a transaction that ends in ${label} after a chat and a message leaves neither`, () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const tx = yield* Transaction
          const { member, org } = yield* setup
          const chat = newChat(org.id, member.id)
          const exit = yield* Effect.exit(tx.withTransaction(Effect.gen(function*() {
            yield* repo.create(chat)
            yield* repo.appendMessage(newMessage(chat, "user", "what happened?"))
            // Both rows are visible inside the transaction before it fails.
            expect(yield* repo.listMessages(org.id, chat.id)).toHaveLength(1)
            return yield* failWith
          })))
          expect(Exit.isFailure(exit)).toBe(true)
          expect(yield* repo.get(org.id, chat.id)).toEqual(Option.none())
          expect(yield* repo.listMessages(org.id, chat.id)).toEqual([])
          const sql = yield* SqlClient.SqlClient
          const prefix = yield* TablePrefix
          const left = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM ${sql(prefix.name("chat_messages"))} WHERE chat_id = ${chat.id}`
          expect(left).toEqual([{ n: 0 }])
        }).pipe(Effect.provide(database.shared)))
    }

    it.live(
      "concurrent appends to one chat keep every message in one order; the first user message is the preview",
      () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const tx = yield* Transaction
          const { member, org } = yield* setup
          const chat = newChat(org.id, member.id)
          yield* repo.create(chat)
          // Each append in its own transaction that also reads and writes the chat, as a run does.
          const appends = Arr.makeBy(24, (i) =>
            tx.withTransaction(Effect.gen(function*() {
              yield* repo.appendMessage(newMessage(chat, i % 3 === 0 ? "assistant" : "user", `message ${i}`))
              const current = Option.getOrThrow(yield* repo.getForUpdate(org.id, chat.id))
              yield* repo.update(new Chat.ChatRecord({ ...current, updated_at: DateTime.add(base, { seconds: i }) }))
            })))
          yield* Effect.all(appends, { concurrency: "unbounded", discard: true })
          const messages = yield* repo.listMessages(org.id, chat.id)
          expect(messages.map((m) => m.content).sort()).toEqual(Arr.makeBy(24, (i) => `message ${i}`).sort())
          expect(yield* repo.listMessages(org.id, chat.id)).toEqual(messages)
          const firstUser = messages.find((m) => m.role === "user")!
          const listed = yield* repo.list(org.id, { limit: 10, offset: 0, sortBy: "updated_at", sortDirection: "desc" })
          expect(listed.rows.map((row) => row.preview)).toEqual([firstUser.content])
        }).pipe(Effect.provide(database.shared)),
      60_000
    )

    it.live("a cell id raced by two chats is stored in exactly one of them", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const chats = Arr.makeBy(6, () => newChat(org.id, member.id))
        yield* Effect.forEach(chats, repo.create, { discard: true })
        const id = CellId.make(Fixtures.uuid())
        const exits = yield* Effect.all(
          chats.map((chat) =>
            Effect.exit(repo.upsertCell(
              new Chat.CellRecord({
                id,
                organization_id: org.id,
                chat_id: chat.id,
                type: "python",
                status: "running",
                created_at: base
              })
            ))
          ),
          { concurrency: "unbounded" }
        )
        expect(exits.filter(Exit.isSuccess)).toHaveLength(1)
        for (const exit of exits.filter(Exit.isFailure)) {
          expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("Conflict")
        }
        const holders = yield* Effect.filter(chats, (chat) =>
          Effect.map(repo.getCell(org.id, chat.id, id), Option.isSome))
        expect(holders).toHaveLength(1)
      }).pipe(Effect.provide(database.shared)))

    it.live("a chat lock taken by getForUpdate holds other writers of the chat until commit", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const tx = yield* Transaction
        const { member, org } = yield* setup
        const chat = newChat(org.id, member.id)
        yield* repo.create(chat)
        const order: Array<string> = []
        const locked = yield* Effect.makeLatch(false)
        const holder = yield* Effect.fork(tx.withTransaction(Effect.gen(function*() {
          yield* repo.getForUpdate(org.id, chat.id)
          yield* locked.open
          yield* Effect.sleep("300 millis")
          order.push("holder commits")
        })))
        yield* locked.await
        yield* repo.appendMessage(newMessage(chat, "user", "waits"))
        order.push("append done")
        yield* Fiber.join(holder)
        expect(order).toEqual(["holder commits", "append done"])
      }).pipe(Effect.provide(database.shared)))

    it.live("hard-deleting the creator removes the member's chats with their messages, cells and assets", () =>
      Effect.gen(function*() {
        const repo = yield* ChatRepo
        const { member, org } = yield* setup
        const chat = newChat(org.id, member.id)
        yield* repo.create(chat)
        yield* repo.appendMessage(newMessage(chat, "user", "bye"))
        const colleague = yield* Fixtures.member(org.id)
        yield* repo.create(newChat(org.id, colleague.id))
        const total = (creatorId?: MemberId) =>
          Effect.map(
            repo.list(org.id, { limit: 20, offset: 0, sortBy: "updated_at", sortDirection: "desc", creatorId }),
            (page) =>
              page.totalCount
          )
        expect([yield* total(), yield* total(member.id)]).toEqual([2, 1])
        yield* (yield* MemberRepo).hardDelete(org.id, member.id)
        expect(yield* repo.get(org.id, chat.id)).toEqual(Option.none())
        expect(yield* repo.listMessages(org.id, chat.id)).toEqual([])
        // The kept counts follow the cascade (the trigger fires for the rows it deletes).
        expect([yield* total(), yield* total(member.id)]).toEqual([1, 0])
      }).pipe(Effect.provide(database.shared)))

    describe("indexes (EXPLAIN of the repository's own statements, thousands of chats)", () => {
      const prefix = database.freshPrefix()
      const store = database.store(prefix)

      /**
       * 4 organizations with 1 000 chats each, every chat with cells and assets: enough rows that the
       * planner's choices are the ones a real deployment gets. Built once for the tests below.
       */
      let populated:
        | { readonly org: { readonly id: OrganizationId }; readonly member: { readonly id: MemberId } }
        | undefined
      const populate = Effect.suspend(() =>
        populated !== undefined ? Effect.succeed(populated) : Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const owners = yield* Effect.forEach(Arr.range(1, 4), () => setup)
          const table = (name: string) => sql(`${prefix}${name}`)
          yield* sql`INSERT INTO ${table("chats")} (id, organization_id, creator_id, model, summary, source, status,
            first_question, created_at, updated_at)
          SELECT gen_random_uuid(), m.organization_id, m.id, 'offline', 'Chat ' || md5(m.id::text || g),
            'api', 'completed', 'Question ' || md5(g || m.id::text),
            timestamptz '2025-01-01T00:00:00Z' + g * interval '1 minute',
            timestamptz '2025-06-01T00:00:00Z' + g * interval '1 minute'
          FROM ${table("members")} m, generate_series(1, 1000) g
          WHERE m.organization_id IN ${sql.in(owners.map(({ org }) => org.id))}`
          yield* sql`INSERT INTO ${table("chat_cells")} (id, organization_id, chat_id, type, status, created_at)
          SELECT gen_random_uuid(), c.organization_id, c.id, 'python', 'completed', c.created_at + g * interval '1 second'
          FROM ${table("chats")} c, generate_series(1, 5) g`
          yield* sql`INSERT INTO ${table("chat_assets")} (id, organization_id, chat_id, cell_id, name, type, mime_type,
            content, created_at)
          SELECT gen_random_uuid(), c.organization_id, c.id, gen_random_uuid(), 'a.txt', 'text', 'text/plain', 'x',
            c.created_at
          FROM ${table("chats")} c, generate_series(1, 3) g`
          // VACUUM also moves the new rows out of the GIN indexes' pending lists, as autovacuum would.
          for (const name of ["chats", "chat_cells", "chat_assets"]) yield* sql`VACUUM ANALYZE ${table(name)}`
          populated = owners[2]!
          return populated
        })
      )

      const uses = (plan: string, index: string) =>
        new RegExp(`(Index (Only )?Scan( Backward)?|Bitmap Index Scan) (using |on )${prefix}${index}\\b`).test(plan)

      it.live("every sort of the listing reads its index in order: no sequential scan, no sort", () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const { org } = yield* populate
          for (
            const [sortBy, index] of [["name", "chats_name_idx"], ["created_at", "chats_created_idx"], [
              "updated_at",
              "chats_updated_idx"
            ]] as const
          ) {
            for (const sortDirection of ["asc", "desc"] as const) {
              const { plans, result } = yield* capturePlans(
                repo.list(org.id, { limit: 20, offset: 40, sortBy, sortDirection })
              )
              expect(result.rows).toHaveLength(20)
              expect(result.totalCount).toBe(1000)
              const page = plans.find((p) =>
                /ORDER BY/.test(p.sql)
              )!
              expect(uses(page.plan, index)).toBe(true)
              expect(page.plan).not.toMatch(/Seq Scan|Sort/)
            }
          }
        }).pipe(Effect.provide(store)), 120_000)

      it.live("the creator filter reads the creator index", () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const { member, org } = yield* populate
          const { plans, result } = yield* capturePlans(
            repo.list(org.id, {
              limit: 20,
              offset: 0,
              sortBy: "updated_at",
              sortDirection: "desc",
              creatorId: member.id
            })
          )
          expect(result.totalCount).toBe(1000)
          expect(result.rows).toHaveLength(20)
          // One statement: the page reads the creator index, its total one row of the kept counts.
          expect(plans).toHaveLength(1)
          const plan = plans[0]!.plan
          expect(uses(plan, "chats_creator_idx")).toBe(true)
          expect(uses(plan, "chat_counts_pkey")).toBe(true)
          expect(plan).not.toMatch(/Seq Scan|Sort/)
        }).pipe(Effect.provide(store)), 120_000)

      it.live("search uses the trigram indexes where pg_trgm exists, else the organization's index", () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const { member, org } = yield* populate
          const needle = newChat(org.id, member.id, "Quarterly zyxwv overview")
          yield* repo.create(needle)
          const { plans, result } = yield* capturePlans(
            repo.list(org.id, {
              limit: 20,
              offset: 0,
              sortBy: "updated_at",
              sortDirection: "desc",
              searchTerm: "ZYXWV"
            })
          )
          expect(result.rows.map((row) =>
            row.chat.id
          )).toEqual([needle.id])
          expect(result.totalCount).toBe(1)
          if (yield* hasTrigram) {
            for (const { plan } of plans) {
              expect(uses(plan, "chats_summary_trgm_idx")).toBe(true)
              expect(uses(plan, "chats_question_trgm_idx")).toBe(true)
            }
          } else {
            // PGlite ships pg_trgm only in a contrib bundle its client does not load: search filters
            // the organization's rows, found through an index of the organization.
            expect(database.name).toBe("pglite")
            for (const { plan } of plans) {
              expect(plan).toMatch(new RegExp(`Index.* (using|on) ${prefix}chats_`))
              expect(plan).not.toMatch(/Seq Scan/)
            }
          }
        }).pipe(Effect.provide(store)), 120_000)

      it.live("cells, assets and messages are read through their chat's index", () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const { org } = yield* populate
          const [row] = (yield* repo.list(org.id, { limit: 1, offset: 0, sortBy: "name", sortDirection: "asc" })).rows
          const chatId = row!.chat.id
          const cells = yield* capturePlans(repo.listCells(org.id, chatId, { limit: 2, offset: 1 }))
          expect(cells.result.cells).toHaveLength(2)
          expect(cells.result.hasMore).toBe(true)
          expect(uses(cells.plans[0]!.plan, "chat_cells_chat_idx")).toBe(true)
          expect(cells.plans[0]!.plan).not.toMatch(/Seq Scan|Sort/)
          const assets = yield* capturePlans(repo.listAssets(org.id, chatId))
          expect(assets.result).toHaveLength(3)
          expect(uses(assets.plans[0]!.plan, "chat_assets_chat_idx")).toBe(true)
          expect(assets.plans[0]!.plan).not.toMatch(/Seq Scan/)
          const messages = yield* capturePlans(repo.listMessages(org.id, chatId))
          expect(uses(messages.plans[0]!.plan, "chat_messages_chat_idx")).toBe(true)
        }).pipe(Effect.provide(store)), 120_000)

      it.live("an answer's end finds its chat by key, not among the organization's chats", () =>
        Effect.gen(function*() {
          const repo = yield* ChatRepo
          const { member, org } = yield* populate
          const chat = newChat(org.id, member.id, "A running answer")
          yield* repo.create(chat)
          const question = newMessage(chat, "user", "Why?")
          yield* repo.appendMessage(question)
          const answer = newMessage(chat, "assistant", "Because.")
          const { plans, result } = yield* capturePlans(
            repo.completeRun({
              message: answer,
              cell: new Chat.CellRecord({
                id: answer.cell_id,
                organization_id: org.id,
                chat_id: chat.id,
                type: "markdown",
                status: "completed",
                role: "assistant",
                content: "Because.",
                created_at: base
              }),
              userMessageId: question.id,
              at: base,
              runStart: 1,
              events: [],
              done: { type: "done", status: "completed" }
            }),
            /^\s*WITH\b/i
          )
          expect(result).toEqual(Option.some(1))
          expect(plans).toHaveLength(1)
          // Every read of the chats table in the statement (the lock and the end) is one key lookup.
          // (With statistics this fresh a join would find the key too; with stale ones it scanned the
          // organization's chats, which is why the end names the chat by its key.)
          const plan = plans[0]!.plan
          const chatScans = plan.split("\n").filter((line) =>
            new RegExp(` on ${prefix}chats\\b`).test(line)
          )
          expect(chatScans.length).toBeGreaterThanOrEqual(2)
          for (const line of chatScans) {
            expect(line).toMatch(new RegExp(`(Update on|Index Scan using ${prefix}chats_(pkey|organization_id_key)) `))
          }
          expect(plan).not.toMatch(new RegExp(`(Seq|Bitmap Heap) Scan on ${prefix}chats\\b`))
        }).pipe(Effect.provide(store)), 120_000)

      it.live("a long event log is read from its end: the latest run and the events after an id", () =>
        Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          const repo = yield* ChatRepo
          const { member, org } = yield* populate
          const chat = newChat(org.id, member.id, "A long answer")
          yield* repo.create(chat)
          // Two runs: 1..1000 and 1001..3000, one event per batch (as a paced answer is stored).
          yield* sql`INSERT INTO ${sql(`${prefix}chat_events`)} (organization_id, chat_id, first_id, last_id,
            run_start, events)
          SELECT ${org.id}::uuid, ${chat.id}::uuid, g, g, CASE WHEN g <= 1000 THEN 1 ELSE 1001 END,
            jsonb_build_array(jsonb_build_object('type', 'text', 'text', 't' || g))
          FROM generate_series(1, 3000) g`
          yield* sql`ANALYZE ${sql(`${prefix}chat_events`)}`
          const latest = yield* capturePlans(repo.latestRun(org.id, chat.id))
          expect(latest.result).toEqual(Option.some({ start: 1001, last: 3000 }))
          // One step down the key's index, not an aggregate over every batch of the chat.
          expect(latest.plans[0]!.plan).toMatch(new RegExp(`Index Scan Backward using ${prefix}chat_events_pkey`))
          expect(latest.plans[0]!.plan).not.toMatch(/Aggregate|Seq Scan/)
          const tail = yield* capturePlans(repo.readEvents(org.id, chat.id, 1001, 2990))
          expect(tail.result.map(({ id }) =>
            id
          )).toEqual(Arr.range(2991, 3000))
          // The batches from the one after `after`, found by an index bound on `first_id`.
          expect(tail.plans[0]!.plan).toMatch(/Index Cond: .*first_id >=/)
          expect(tail.plans[0]!.plan).not.toMatch(/Seq Scan/)
        }).pipe(Effect.provide(store)), 120_000)
    })
  })
)
