/**
 * The chat event bus between processes: two buses on their own PostgreSQL pools (two processes, as
 * far as PostgreSQL can tell) over one prefix hear each other; another prefix hears nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as ChatEventBus from "@sightline/core/ChatEventBus"
import { ChatId } from "@sightline/core/Ids"
import * as ChatEventBusPg from "@sightline/sql/ChatEventBusPg"
import * as PostgresClient from "@sightline/sql/PostgresClient"
import * as TablePrefix from "@sightline/sql/TablePrefix"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import { forEachDatabase, postgresUrl } from "./utils/databases.js"

const bus = (prefix: string) =>
  Effect.map(
    Layer.build(ChatEventBusPg.layer.pipe(
      Layer.provide(PostgresClient.layer({ url: postgresUrl, maxConnections: 2 })),
      Layer.provide(TablePrefix.layer(prefix))
    )),
    (context) => Context.get(context, ChatEventBus.ChatEventBus)
  )

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
    "postgres: an announcement reaches the subscribers of its chat on every process of its prefix",
    () =>
      Effect.gen(function*() {
        const prefix = `t${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}_`
        const [a, b, elsewhere] = yield* Effect.all([bus(prefix), bus(prefix), bus(`${prefix}x_`)])
        const chatId = ChatId.make(crypto.randomUUID())
        const otherChat = ChatId.make(crypto.randomUUID())
        const onA = yield* a.subscribe(chatId)
        const onB = yield* b.subscribe(chatId)
        const onOther = yield* b.subscribe(otherChat)
        const onElsewhere = yield* elsewhere.subscribe(chatId)
        // LISTEN is set up on a fiber of its own: publish until it is heard.
        const appended = ChatEventBus.Announcement.Appended({ chatId, lastId: 7 })
        yield* a.publish(appended).pipe(
          Effect.zipRight(Queue.take(onB).pipe(Effect.timeout("200 millis"))),
          Effect.retry({ times: 25 })
        )
        // Heard by the publishing process too, through its own listening connection.
        expect(yield* Queue.take(onA).pipe(Effect.timeout("2 seconds"))).toEqual(appended)
        yield* b.publish(ChatEventBus.Announcement.Cancelled({ chatId }))
        // Hints may repeat (a retried publish above can still be in flight): skip to the cancel.
        expect(
          yield* Queue.take(onA).pipe(
            Effect.repeat({ until: (heard) => heard._tag === "Cancelled" }),
            Effect.timeout("2 seconds")
          )
        ).toEqual(ChatEventBus.Announcement.Cancelled({ chatId }))
        yield* Effect.sleep("100 millis")
        expect(Option.isNone(yield* Queue.poll(onOther))).toBe(true)
        expect(Option.isNone(yield* Queue.poll(onElsewhere))).toBe(true)

        // Publishing returns before PostgreSQL is asked, and what queued up meanwhile goes out
        // together: of a chat's appends only the latest, so a subscriber never hears its log shrink.
        yield* Queue.takeAll(onB)
        const heard: Array<number> = []
        for (let lastId = 100; lastId <= 160; lastId++) {
          yield* a.publish(ChatEventBus.Announcement.Appended({ chatId, lastId }))
        }
        while (heard.at(-1) !== 160) {
          const announcement = yield* Queue.take(onB).pipe(Effect.timeout("2 seconds"))
          if (announcement._tag === "Appended") heard.push(announcement.lastId)
        }
        expect(heard).toEqual([...heard].sort((x, y) => x - y))
        expect(new Set(heard).size).toBe(heard.length)
        expect(heard.length).toBeLessThan(61)
      }).pipe(Effect.scoped),
    30_000
  )
})
