import { describe, expect, it } from "@effect/vitest"
import * as Arr from "effect/Array"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as ChatEvent from "../../src/ChatEvent.js"
import * as RunEvents from "../../src/internal/runEvents.js"

const text = (words: string): ChatEvent.ChatEvent => ({ type: "text", text: words })

// A log whose appends wait on `gate` (when set), so a test can hold a batch in flight.
const makeLog = Effect.gen(function*() {
  const appended: Array<ReadonlyArray<number>> = []
  const published: Array<number> = []
  let gate: Deferred.Deferred<void> | undefined
  const writer = yield* RunEvents.make({
    first: 1,
    append: (batch: Arr.NonEmptyReadonlyArray<ChatEvent.Sequenced>) =>
      Effect.zipRight(
        gate === undefined ? Effect.void : Deferred.await(gate),
        Effect.sync(() => {
          appended.push(batch.map((e) => e.id))
          return true
        })
      ),
    readAfter: () => Effect.succeed([]),
    publish: (events) => Effect.sync(() => published.push(...events.map((e) => e.id)))
  })
  return {
    writer,
    appended,
    published,
    hold: Effect.map(Deferred.make<void>(), (held) => {
      gate = held
      return held
    })
  }
})

describe("RunEvents", () => {
  it.scoped("take waits for the batch in flight and hands over what queued after it, unwritten", () =>
    Effect.gen(function*() {
      const { appended, hold, published, writer } = yield* makeLog
      const held = yield* hold
      yield* writer.emit(text("a"))
      // The writer takes event 2 and waits in its append; 3 and 4 queue behind it.
      yield* Effect.yieldNow()
      yield* writer.emit(text("b"))
      yield* writer.emit(text("c"))
      const taking = yield* Effect.fork(writer.take)
      yield* Effect.yieldNow()
      expect(taking.unsafePoll()).toBeNull()
      yield* Deferred.succeed(held, undefined)
      const taken = yield* Fiber.join(taking)
      expect(taken.map((e) => e.id)).toEqual([3, 4])
      expect(taken.map((e) => e.event)).toEqual([text("b"), text("c")])
      // Only the batch in flight was written and published; the run stores the rest with its end.
      expect(appended).toEqual([[2]])
      expect(published).toEqual([2])
      yield* writer.stored(Arr.append(taken, { id: 5, event: { type: "done", status: "completed" } }))
      expect(published).toEqual([2, 3, 4, 5])
    }))

  it.scoped("drain waits for the batch in flight and for what queued behind it", () =>
    Effect.gen(function*() {
      const { appended, hold, published, writer } = yield* makeLog
      const held = yield* hold
      yield* writer.emit(text("a"))
      yield* Effect.yieldNow()
      yield* writer.emit(text("b"))
      const draining = yield* Effect.fork(writer.drain)
      yield* Effect.yieldNow()
      expect(draining.unsafePoll()).toBeNull()
      yield* Deferred.succeed(held, undefined)
      yield* Fiber.join(draining)
      expect(appended).toEqual([[2], [3]])
      expect(published).toEqual([2, 3])
    }))

  it.scoped("after take nothing more is written, and drain returns at once", () =>
    Effect.gen(function*() {
      const { appended, writer } = yield* makeLog
      expect(yield* writer.take).toEqual([])
      yield* writer.emit(text("late"))
      yield* writer.drain
      expect(appended).toEqual([])
    }))
})
