/**
 * The chat event bus between processes: two buses on their own PostgreSQL pools (two processes, as
 * far as PostgreSQL can tell) over one prefix hear each other; another prefix hears nothing. An
 * append is announced by the log itself (migration 14), so what is heard is each batch the store
 * commits.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import * as Chat from "@sightline/core/Chat"
import * as ChatEventBus from "@sightline/core/ChatEventBus"
import { ChatRepo } from "@sightline/core/ChatRepo"
import { ChatId } from "@sightline/core/Ids"
import { MemberRepo } from "@sightline/core/MemberRepo"
import { OrganizationRepo } from "@sightline/core/OrganizationRepo"
import { Fixtures } from "@sightline/core/testing"
import * as ChatEventBusPg from "@sightline/sql/ChatEventBusPg"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Pg from "pg"
import { forEachDatabase, postgresUrl } from "./utils/databases.js"

const bus = (prefix: string, options: ChatEventBusPg.Options = ChatEventBusPg.defaultOptions) =>
  Effect.map(
    Layer.build(
      ChatEventBusPg.layerWith(options).pipe(
        Layer.provide(PostgresClient.layer({ url: postgresUrl, maxConnections: 2 })),
        Layer.provide(TablePrefix.layer(prefix))
      )
    ),
    (context) => Context.get(context, ChatEventBus.ChatEventBus)
  )

/** Running chats of a new organization, stored through the store's repository. */
const runningChats = (context: Context.Context<ChatRepo | MemberRepo | OrganizationRepo>, count: number) =>
  Effect.gen(function*() {
    const { member, org } = yield* Fixtures.organizationWithMember.pipe(Effect.provide(context))
    const now = yield* DateTime.now
    return yield* Effect.forEach(Arr.makeBy(count, () => ChatId.make(crypto.randomUUID())), (id) => {
      const chat = new Chat.ChatRecord({
        id,
        organization_id: org.id,
        creator_id: member.id,
        model: "offline",
        summary: "A chat",
        source: "api",
        status: "running",
        created_at: now,
        updated_at: now
      })
      return Effect.as(Context.get(context, ChatRepo).create(chat), chat)
    })
  })

describe("ChatEventBusPg", () => {
  it("encodes and decodes announcements, and refuses anything else", () => {
    const chatId = ChatId.make(crypto.randomUUID())
    for (
      const announcement of [
        ChatEventBus.Announcement.Appended({ chatId, lastId: 42 }),
        ChatEventBus.Announcement.Cancelled({ chatId })
      ]
    ) expect(ChatEventBusPg.decode(ChatEventBusPg.encode(announcement))).toEqual(announcement)
    for (const bad of ["", "a", `a ${chatId}`, `a ${chatId} x`, `z ${chatId}`]) {
      expect(ChatEventBusPg.decode(bad)).toBeUndefined()
    }
  })
})

forEachDatabase((database) => {
  if (database.name !== "postgres") return
  it.live(
    "postgres: each stored batch and each cancel reach the subscribers of its chat on every process of its prefix",
    () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const context = yield* Layer.build(database.store(prefix))
        const repo = Context.get(context, ChatRepo)
        const [a, b, elsewhere] = yield* Effect.all([bus(prefix), bus(prefix), bus(`${prefix}x_`)])
        const [chat, otherChat] = yield* runningChats(context, 2)
        const onA = yield* a.subscribe(chat.id)
        const onB = yield* b.subscribe(chat.id)
        const onOther = yield* b.subscribe(otherChat.id)
        const onElsewhere = yield* elsewhere.subscribe(chat.id)
        // LISTEN is set up on a fiber of its own: cancel until both processes hear it.
        const cancelled = ChatEventBus.Announcement.Cancelled({ chatId: chat.id })
        yield* a.publish(cancelled).pipe(
          Effect.zipRight(Queue.take(onB).pipe(Effect.timeout("200 millis"))),
          Effect.retry({ times: 25 })
        )
        expect(yield* Queue.take(onA).pipe(Effect.timeout("2 seconds"))).toEqual(cancelled)
        // Cancels repeat while LISTEN was being set up: start from a quiet queue.
        yield* Effect.sleep("100 millis")
        yield* Queue.takeAll(onA)
        yield* Queue.takeAll(onB)

        // Publishing an append sends nothing: the batch's own statement announces it, at commit.
        yield* a.publish(ChatEventBus.Announcement.Appended({ chatId: chat.id, lastId: 99 }))
        const append = (first: number, last: number) =>
          repo.appendEvents({
            organizationId: chat.organization_id,
            chatId: chat.id,
            runStart: 1,
            events: Arr.makeBy(last - first + 1, (i) => ({ id: first + i, event: { type: "text", text: `${i}` } }))
          })
        expect(yield* append(1, 3)).toBe(true)
        const appended = ChatEventBus.Announcement.Appended({ chatId: chat.id, lastId: 3 })
        expect(yield* Queue.take(onB).pipe(Effect.timeout("2 seconds"))).toEqual(appended)
        expect(yield* Queue.take(onA).pipe(Effect.timeout("2 seconds"))).toEqual(appended)
        // A batch the log refuses (its ids are taken) is not announced.
        expect(yield* append(2, 4)).toBe(false)
        for (let first = 4; first <= 40; first++) expect(yield* append(first, first)).toBe(true)
        // In the order of their commits; a subscriber that falls behind keeps the latest few.
        const heard: Array<number> = []
        while (heard.at(-1) !== 40) {
          const announcement = yield* Queue.take(onB).pipe(Effect.timeout("2 seconds"))
          if (announcement._tag === "Appended") heard.push(announcement.lastId)
        }
        expect(heard).toEqual([...heard].sort((x, y) => x - y))
        expect(heard.every((lastId) => lastId >= 4)).toBe(true)
        yield* Effect.sleep("100 millis")
        expect(Option.isNone(yield* Queue.poll(onOther))).toBe(true)
        expect(Option.isNone(yield* Queue.poll(onElsewhere))).toBe(true)
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "postgres: a process whose listening connection is lost listens again",
    () =>
      Effect.gen(function*() {
        const prefix = `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}_`
        const [a, b] = yield* Effect.all([bus(prefix), bus(prefix)])
        const chatId = ChatId.make(crypto.randomUUID())
        const onB = yield* b.subscribe(chatId)
        const cancelled = ChatEventBus.Announcement.Cancelled({ chatId })
        const heardOnB = a.publish(cancelled).pipe(
          Effect.zipRight(Queue.take(onB).pipe(Effect.timeout("200 millis"))),
          Effect.retry({ times: 50 })
        )
        yield* heardOnB
        // Both processes' listening connections end, as a restarted server or a network cut ends them.
        const sql = yield* Effect.map(
          Layer.build(PostgresClient.layer({ url: postgresUrl, maxConnections: 1 })),
          (context) => Context.get(context, SqlClient.SqlClient)
        )
        const ended = yield* sql<{ ended: boolean }>`
          SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
          WHERE query = ${`LISTEN "${prefix}chat_events"`}`
        expect(ended.length).toBe(2)
        yield* Effect.sleep("100 millis")
        yield* Queue.takeAll(onB)
        yield* heardOnB
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "postgres: a chat's appends are announced only while some process watches it",
    () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const context = yield* Layer.build(database.store(prefix))
        const repo = Context.get(context, ChatRepo)
        const sql = Context.get(context, SqlClient.SqlClient)
        const [a, b] = yield* Effect.all([bus(prefix), bus(prefix)])
        const [chat] = yield* runningChats(context, 1)

        // A plain listener on the channel hears the appends PostgreSQL announces. After each append,
        // a marker is sent on the same channel: notifications arrive in the order of their commits,
        // so whatever the append announced has arrived by the time the marker does.
        const heard: Array<string> = []
        const marked = new Map<string, () => void>()
        const client = new Pg.Client({ connectionString: postgresUrl })
        yield* Effect.acquireRelease(
          Effect.promise(async () => {
            client.on("notification", (message) => {
              if (message.payload?.startsWith("marker ")) marked.get(message.payload)?.()
              else if (message.payload?.startsWith("a ")) heard.push(message.payload)
            })
            await client.connect()
            await client.query(`LISTEN ${Pg.escapeIdentifier(`${prefix}chat_events`)}`)
          }),
          () => Effect.promise(() => client.end())
        )
        let last = 0
        /** Appends one event, and returns what the channel said about it. */
        const appendAndHear = Effect.gen(function*() {
          last += 1
          const appended = yield* repo.appendEvents({
            organizationId: chat.organization_id,
            chatId: chat.id,
            runStart: 1,
            events: [{ id: last, event: { type: "text", text: `${last}` } }]
          })
          expect(appended).toBe(true)
          const marker = `marker ${last}`
          yield* Effect.async<void>((resume) => {
            marked.set(marker, () => resume(Effect.void))
          }).pipe(
            Effect.zipLeft(sql`SELECT pg_notify(${`${prefix}chat_events`}, ${marker})`, { concurrent: true }),
            Effect.timeout("2 seconds")
          )
          return heard.splice(0, heard.length)
        })
        const announcement = () => `a ${chat.id} ${last}`

        // The run itself wants its cancel only: its appends are not announced.
        const run = yield* a.subscribe(chat.id, { appended: false })
        expect(yield* appendAndHear).toEqual([])

        // Two followers on another process: announced while either of them follows.
        const first = yield* Scope.make()
        const second = yield* Scope.make()
        const onB = yield* b.subscribe(chat.id).pipe(Scope.extend(first))
        yield* b.subscribe(chat.id).pipe(Scope.extend(second))
        expect(yield* appendAndHear).toEqual([announcement()])
        expect(yield* Queue.take(onB).pipe(Effect.timeout("2 seconds"))).toEqual(
          ChatEventBus.Announcement.Appended({ chatId: chat.id, lastId: last })
        )
        yield* Scope.close(first, Exit.void)
        expect(yield* appendAndHear).toEqual([announcement()])
        yield* Scope.close(second, Exit.void)
        expect(yield* appendAndHear).toEqual([])
        expect(yield* sql`SELECT 1 FROM ${sql(`${prefix}chat_watchers`)}`).toEqual([])

        // The run heard no append, and still hears its cancel.
        expect(Option.isNone(yield* Queue.poll(run))).toBe(true)
        const cancelled = ChatEventBus.Announcement.Cancelled({ chatId: chat.id })
        yield* b.publish(cancelled)
        expect(yield* Queue.take(run).pipe(Effect.timeout("2 seconds"))).toEqual(cancelled)

        // The watch of a process that died (no longer renewed) announces nothing once it expired.
        yield* sql`INSERT INTO ${sql(`${prefix}chat_watchers`)} (chat_id, listener, expires_at)
                   VALUES (${chat.id}, ${crypto.randomUUID()}, now() - interval '1 second')`
        expect(yield* appendAndHear).toEqual([])
      }).pipe(Effect.scoped),
    30_000
  )

  it.live(
    "postgres: a process renews its watches, writing again one taken for a dead process's, and clears expired ones",
    () =>
      Effect.gen(function*() {
        const prefix = database.freshPrefix()
        const context = yield* Layer.build(database.store(prefix))
        const sql = Context.get(context, SqlClient.SqlClient)
        const watchers = sql(`${prefix}chat_watchers`)
        // Renewed every 0.5 s.
        const a = yield* bus(prefix, { watchTtlSeconds: 1.5 })
        const chatId = ChatId.make(crypto.randomUUID())
        const dead = crypto.randomUUID()
        yield* sql`INSERT INTO ${watchers} (chat_id, listener, expires_at)
                   VALUES (${crypto.randomUUID()}, ${dead}, now() - interval '1 second')`
        yield* a.subscribe(chatId)
        const rows = sql<{ listener: string; left: number }>`
          SELECT listener, extract(epoch FROM expires_at - now())::float8 AS left FROM ${watchers}
          WHERE chat_id = ${chatId}`
        const [watched] = yield* rows
        expect(watched!.left).toBeGreaterThan(1)
        // Another process took it for a dead one's (this one stalled) and removed it.
        yield* sql`DELETE FROM ${watchers} WHERE chat_id = ${chatId}`
        const renewed = yield* rows.pipe(
          Effect.filterOrFail((found) => found.length === 1),
          Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 30 })
        )
        expect(renewed[0]!.listener).toBe(watched!.listener)
        expect(yield* sql`SELECT 1 FROM ${watchers} WHERE listener = ${dead}`).toEqual([])
      }).pipe(Effect.scoped),
    30_000
  )
})
