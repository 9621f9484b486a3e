import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as ChatEventBus from "../src/ChatEventBus.js"
import { ChatId } from "../src/Ids.js"

describe("ChatEventBus", () => {
  it.scoped("hands a chat's announcements to its subscribers; one that wants its cancel only gets no append", () =>
    Effect.gen(function*() {
      const bus = yield* ChatEventBus.make
      const chatId = ChatId.make(crypto.randomUUID())
      const follower = yield* bus.subscribe(chatId)
      const run = yield* bus.subscribe(chatId, { appended: false })
      const elsewhere = yield* bus.subscribe(ChatId.make(crypto.randomUUID()))

      const appended = ChatEventBus.Announcement.Appended({ chatId, lastId: 3 })
      const cancelled = ChatEventBus.Announcement.Cancelled({ chatId })
      yield* bus.publish(appended)
      yield* bus.publish(cancelled)

      expect(Array.from(yield* Queue.takeAll(follower))).toEqual([appended, cancelled])
      expect(Option.isNone(yield* Queue.poll(elsewhere))).toBe(true)
      expect(yield* Queue.take(run)).toEqual(cancelled)
      expect(Option.isNone(yield* Queue.poll(run))).toBe(true)
    }))
})
