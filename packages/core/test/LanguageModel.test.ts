import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import {
  callTools,
  collect,
  Finish,
  fromParts,
  generate,
  type GenerateRequest,
  generateText,
  LanguageModelError,
  layerMemory,
  MemoryLanguageModel,
  Part,
  reply,
  TextDelta,
  textDelta,
  ToolCallPart
} from "../src/LanguageModel.js"
import { languageModelContract } from "../src/testing/LanguageModelContract.js"

// A scripted stand-in that answers the contract's prompts the way a compliant model would.
const compliant = layerMemory((request) => {
  if (request.model === "no-such-model") {
    return new LanguageModelError({ reason: "invalid_request", message: "unknown model no-such-model" })
  }
  const last = request.messages[request.messages.length - 1]
  return request.tools !== undefined && last?.role === "user"
    ? callTools({ name: request.tools[0]!.name, arguments: { timezone: "UTC" } })
    : [TextDelta.make({ text: "Hel" }), TextDelta.make({ text: "lo." }), Finish.make({ reason: "stop" })]
})

languageModelContract("layerMemory", compliant, { model: "scripted", unknownModel: "no-such-model" })

const request = (content: string): GenerateRequest => ({
  model: "m",
  messages: [{ role: "user", content }]
})

describe("LanguageModel.fromParts", () => {
  it("joins text, keeps tool calls in order and takes reason and usage from the finish part", () => {
    const response = fromParts([
      TextDelta.make({ text: "Let me " }),
      TextDelta.make({ text: "check." }),
      ToolCallPart.make({ id: "a", name: "sql", arguments: "{}" }),
      ToolCallPart.make({ id: "b", name: "python", arguments: "{\"code\":\"1\"}" }),
      Finish.make({ reason: "tool_calls", usage: { inputTokens: 10, outputTokens: 3 } })
    ])
    expect(response).toEqual({
      text: "Let me check.",
      toolCalls: [
        { id: "a", name: "sql", arguments: "{}" },
        { id: "b", name: "python", arguments: "{\"code\":\"1\"}" }
      ],
      finishReason: "tool_calls",
      usage: { inputTokens: 10, outputTokens: 3 }
    })
  })

  it("reads a stream without a finish part by what it holds", () => {
    expect(fromParts([TextDelta.make({ text: "hi" })]).finishReason).toBe("stop")
    expect(fromParts(callTools({ name: "sql", arguments: {} }).slice(0, 1)).finishReason).toBe("tool_calls")
    expect("usage" in fromParts([Finish.make({ reason: "length" })])).toBe(false)
  })
})

describe("LanguageModel helpers", () => {
  it("builds the parts of a reply and of a tool-calling turn", () => {
    expect(reply("done", { inputTokens: 1, outputTokens: 2 })).toEqual([
      { _tag: "TextDelta", text: "done" },
      { _tag: "Finish", reason: "stop", usage: { inputTokens: 1, outputTokens: 2 } }
    ])
    expect(callTools({ name: "sql", arguments: { q: "select 1" } }, { id: "x", name: "python", arguments: [] }))
      .toEqual([
        { _tag: "ToolCall", id: "call_1", name: "sql", arguments: "{\"q\":\"select 1\"}" },
        { _tag: "ToolCall", id: "x", name: "python", arguments: "[]" },
        { _tag: "Finish", reason: "tool_calls" }
      ])
  })

  it("builds a streamed piece of text as the schema's own constructor does", () => {
    for (const text of ["token ", "", "çà 🙂"]) {
      const delta = textDelta(text)
      expect(delta).toStrictEqual(TextDelta.make({ text }))
      expect(Schema.is(Part)(delta)).toBe(true)
    }
  })

  it("marks only transient errors retryable", () => {
    const retryable = (reason: LanguageModelError["reason"]) =>
      new LanguageModelError({ reason, message: "" }).retryable
    expect(retryable("unavailable")).toBe(true)
    expect(retryable("rate_limited")).toBe(true)
    expect(retryable("unauthorized")).toBe(false)
    expect(retryable("invalid_request")).toBe(false)
  })
})

describe("LanguageModel.layerMemory", () => {
  it.effect("plays a list script in order and records every request", () =>
    Effect.gen(function*() {
      const first = yield* generateText(request("one"))
      const parts = yield* Stream.runCollect(generate(request("two")))
      expect(first.toolCalls.map((call) => call.name)).toEqual(["sql"])
      expect(Chunk.toReadonlyArray(parts)).toEqual(reply("answer"))
      const recorded = yield* Effect.flatMap(MemoryLanguageModel, (memory) => memory.requests)
      expect(recorded.map((r) => r.messages[0]!.content)).toEqual(["one", "two"])
    }).pipe(Effect.provide(layerMemory([callTools({ name: "sql", arguments: {} }), reply("answer")]))))

  it.effect("fails with a scripted error", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(generateText(request("x")))
      expect(error).toEqual(new LanguageModelError({ reason: "rate_limited", message: "slow down" }))
    }).pipe(Effect.provide(layerMemory([new LanguageModelError({ reason: "rate_limited", message: "slow down" })]))))

  it.effect("dies when a list script runs out", () =>
    Effect.gen(function*() {
      yield* generateText(request("x"))
      const exit = yield* Effect.exit(generateText(request("y")))
      expect(Exit.isFailure(exit) && Cause.isDie(exit.cause)).toBe(true)
    }).pipe(Effect.provide(layerMemory([reply("only one")]))))

  it.effect("passes the request and its index to a function script", () =>
    Effect.gen(function*() {
      const texts = yield* Effect.forEach(["a", "b"], (content) =>
        Effect.map(generateText(request(content)), (r) => r.text))
      expect(texts).toEqual(["0:a", "1:b"])
    }).pipe(Effect.provide(layerMemory((req, i) =>
      reply(`${i}:${req.messages[0]!.content}`)
    ))))

  it.effect("collect keeps the stream's failure", () =>
    Effect.gen(function*() {
      const failing = Stream.concat(
        Stream.make(TextDelta.make({ text: "partial" })),
        Stream.fail(new LanguageModelError({ reason: "unavailable", message: "reset" }))
      )
      const error = yield* Effect.flip(collect(failing))
      expect(error.reason).toBe("unavailable")
    }))
})
