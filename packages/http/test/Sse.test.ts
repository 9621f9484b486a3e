import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Sse from "../src/internal/sse.js"

/** What a body's reader receives, as text, until it ends. */
const readAll = (body: Sse.Body) =>
  Effect.promise(async () => {
    let text = ""
    for await (const chunk of body.readable) text += Buffer.from(chunk).toString("utf8")
    return text
  })

const sleep = (millis: number) => Effect.sleep(`${millis} millis`)

describe("Sse.body", () => {
  it.live("sends a comment only after a silence as long as the keep-alive, and again after each", () =>
    Effect.gen(function*() {
      const body = Sse.body({ keepAliveTimer: "300 millis" })
      const read = yield* Effect.fork(readAll(body))
      body.send(Sse.event(1, { type: "text", text: "a" }))
      // Events closer together than the keep-alive, for longer than it: no comment between them.
      for (let id = 2; id <= 9; id++) {
        yield* sleep(50)
        body.send(Sse.event(id, { type: "text", text: "b" }))
      }
      yield* sleep(1_000)
      body.end()
      const text = yield* Fiber.join(read)
      expect(text.slice(0, text.indexOf("id: 9"))).not.toContain(": keep-alive")
      // A second of silence after the last event: a comment at 300 ms, and again at 600 (and 900).
      expect(text.slice(text.indexOf("id: 9")).split(": keep-alive\n\n").length - 1).toBeGreaterThanOrEqual(2)
    }))

  it.live("ends once, ignores what is sent after, and tells onClose when the response is over", () =>
    Effect.gen(function*() {
      const body = Sse.body()
      let closed = 0
      body.onClose(() => closed++)
      body.send(Sse.event(1, { type: "done", status: "completed" }))
      body.end()
      body.end()
      body.send(Sse.event(2, { type: "text", text: "late" }))
      const text = yield* readAll(body)
      expect(text).toBe("id: 1\ndata: {\"type\":\"done\",\"status\":\"completed\"}\n\n")
      yield* sleep(10)
      expect(closed).toBe(1)
    }))

  it.live("a client gone (the body destroyed) stops the keep-alive and tells onClose", () =>
    Effect.gen(function*() {
      const body = Sse.body({ keepAliveTimer: "20 millis" })
      let closed = false
      body.onClose(() => {
        closed = true
      })
      body.readable.destroy()
      yield* sleep(60)
      expect(closed).toBe(true)
      // Nothing was pushed into the destroyed stream.
      expect(body.readable.readableLength).toBe(0)
    }))
})
