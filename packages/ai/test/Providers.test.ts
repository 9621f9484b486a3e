import { afterEach, describe, expect, it } from "@effect/vitest"
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as Chunk from "effect/Chunk"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Anthropic from "../src/Anthropic.js"
import * as ChatCompletions from "../src/ChatCompletions.js"
import type { Policy } from "../src/internal/sse.js"
import * as OpenAiResponses from "../src/OpenAiResponses.js"
import { type Loopback, serve, sleep, sse, startSse } from "./utils/loopback.js"

const fast: Policy = {
  firstByteTimeout: Duration.seconds(5),
  idleTimeout: Duration.seconds(5),
  maxRetries: 3,
  baseDelay: Duration.millis(10),
  maxDelay: Duration.seconds(5)
}

const runSqlTool: LanguageModel.Tool = {
  name: "run_sql",
  description: "Runs SQL",
  parameters: { type: "object", properties: { sql: { type: "string" } }, required: ["sql"] }
}

const first: LanguageModel.GenerateRequest = {
  model: "m",
  system: "You are a test.",
  messages: [{ role: "user", content: "How many?" }],
  tools: [runSqlTool]
}

const second: LanguageModel.GenerateRequest = {
  ...first,
  messages: [
    ...first.messages,
    {
      role: "assistant",
      content: "",
      toolCalls: [{ id: "call_a", name: "run_sql", arguments: "{\"sql\":\"select 1\"}" }]
    },
    { role: "tool", toolCallId: "call_a", content: "{\"rows\":[[1]]}" }
  ]
}

const collect = (model: LanguageModel.LanguageModel.Service, request: LanguageModel.GenerateRequest) =>
  Effect.map(Stream.runCollect(model.generate(request)), Chunk.toReadonlyArray)

let server: Loopback | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe("ChatCompletions (OpenAI-compatible, loopback server)", () => {
  const model = () =>
    ChatCompletions.make({ baseUrl: `${server!.url}/v1`, apiKey: Redacted.make("sk-test"), policy: fast })

  it.live("streams text, assembles tool calls split across chunks, reports usage, and sends tool results back", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res, index) => {
          startSse(res)
          const delta = (d: unknown, finish: string | null = null) =>
            sse(res, { choices: [{ index: 0, delta: d, finish_reason: finish }] })
          if (index === 0) {
            delta({ role: "assistant", content: "Let me check. " })
            delta({
              tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "run_", arguments: "" } }]
            })
            delta({ tool_calls: [{ index: 0, function: { name: "sql", arguments: "{\"sq" } }] })
            delta({ tool_calls: [{ index: 0, function: { arguments: "l\":\"select 1\"}" } }] })
            delta({}, "tool_calls")
            sse(res, { choices: [], usage: { prompt_tokens: 12, completion_tokens: 5 } })
          } else {
            delta({ content: "It is " })
            delta({ content: "1." }, "stop")
          }
          sse(res, "[DONE]")
          res.end()
        })
      )
      const parts = yield* collect(model(), first)
      expect(parts).toEqual([
        LanguageModel.TextDelta.make({ text: "Let me check. " }),
        LanguageModel.ToolCallPart.make({ id: "call_a", name: "run_sql", arguments: "{\"sql\":\"select 1\"}" }),
        LanguageModel.Finish.make({ reason: "tool_calls", usage: { inputTokens: 12, outputTokens: 5 } })
      ])
      const answer = LanguageModel.fromParts(yield* collect(model(), second))
      expect(answer).toMatchObject({ text: "It is 1.", finishReason: "stop" })
      const [request1, request2] = server.received
      expect(request1!.path).toBe("/v1/chat/completions")
      expect(request1!.headers.authorization).toBe("Bearer sk-test")
      expect(request1!.body).toMatchObject({
        model: "m",
        stream: true,
        messages: [{ role: "system", content: "You are a test." }, { role: "user", content: "How many?" }],
        tools: [{ type: "function", function: { name: "run_sql" } }]
      })
      expect(request2!.body.messages.slice(2)).toEqual([
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_a",
            type: "function",
            function: { name: "run_sql", arguments: "{\"sql\":\"select 1\"}" }
          }]
        },
        { role: "tool", tool_call_id: "call_a", content: "{\"rows\":[[1]]}" }
      ])
    }))

  it.live("retries a 429 after the Retry-After it asks for, and a 503 with backoff", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res, index) => {
          if (index === 0) {
            res.writeHead(429, { "retry-after": "1", "content-type": "application/json" })
            return res.end(JSON.stringify({ error: { message: "slow down" } }))
          }
          if (index === 1) {
            res.writeHead(503)
            return res.end("busy")
          }
          startSse(res)
          sse(res, { choices: [{ index: 0, delta: { content: "ok" }, finish_reason: "stop" }] })
          sse(res, "[DONE]")
          res.end()
        })
      )
      const started = Date.now()
      const parts = yield* collect(model(), first)
      expect(LanguageModel.fromParts(parts).text).toBe("ok")
      expect(server.received).toHaveLength(3)
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000)
    }))

  it.live("gives up after the retries with the provider's reason; a 401 is not retried", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((request, res) => {
          res.writeHead(request.headers.authorization === "Bearer sk-test" ? 503 : 401, {
            "content-type": "application/json"
          })
          res.end(JSON.stringify({ error: { message: "nope" } }))
        })
      )
      const unavailable = yield* Effect.flip(collect(model(), first))
      expect(unavailable).toMatchObject({ reason: "unavailable", message: "openai-compatible: 503 nope" })
      expect(server.received).toHaveLength(4)
      const unauthorized = yield* Effect.flip(
        collect(ChatCompletions.make({ baseUrl: server.url, apiKey: Redacted.make("bad"), policy: fast }), first)
      )
      expect(unauthorized.reason).toBe("unauthorized")
      expect(server.received).toHaveLength(5)
    }))

  it.live("times out on the first byte and on a stalled stream, but not on an answer that keeps streaming", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve(async (request, res) => {
          const mode = request.body.model
          if (mode === "silent") return // never answers
          startSse(res)
          // A model that thinks first sends chunks without text (past the idle timeout in all).
          for (let i = 0; mode === "thinking" && i < 5; i++) {
            sse(res, { choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] })
            await sleep(120)
          }
          const chunks = mode === "stall" ? 1 : mode === "thinking" ? 2 : 8
          for (let i = 0; i < chunks; i++) {
            sse(res, { choices: [{ index: 0, delta: { content: `${i} ` }, finish_reason: null }] })
            await sleep(120)
          }
          if (mode === "stall") return
          sse(res, { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })
          sse(res, "[DONE]")
          res.end()
        })
      )
      const policy = {
        ...fast,
        maxRetries: 0,
        firstByteTimeout: Duration.millis(300),
        idleTimeout: Duration.millis(300)
      }
      const tight = ChatCompletions.make({ baseUrl: server.url, policy })
      const silent = yield* Effect.flip(collect(tight, { ...first, model: "silent" }))
      expect(silent.message).toMatch(/no answer from 127\.0\.0\.1:\d+ within/)
      const stalled = yield* Effect.flip(collect(tight, { ...first, model: "stall" }))
      expect(stalled.message).toMatch(/the stream stalled/)
      // Eight chunks over about a second, each within the 300 ms gap: the whole answer arrives.
      const long = LanguageModel.fromParts(yield* collect(tight, { ...first, model: "long" }))
      expect(long.text).toBe("0 1 2 3 4 5 6 7 ")
      // Chunks that carry no text still show the stream is alive.
      const thought = LanguageModel.fromParts(yield* collect(tight, { ...first, model: "thinking" }))
      expect(thought.text).toBe("0 1 ")
    }))

  it.live("interrupting the generation closes the provider's request", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve(async (_, res) => {
          startSse(res)
          for (let i = 0; i < 100 && !res.destroyed; i++) {
            sse(res, { choices: [{ index: 0, delta: { content: "word " }, finish_reason: null }] })
            await sleep(50)
          }
          res.end()
        })
      )
      const fiber = yield* Effect.fork(collect(model(), first))
      yield* Effect.sleep("200 millis")
      yield* Fiber.interrupt(fiber)
      const closed = yield* Effect.promise(() =>
        Promise.race([server!.aborted.then(() => true), sleep(1000).then(() => false)])
      )
      expect(closed).toBe(true)
    }))

  it.live("keeps one connection to the provider across answers", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res) => {
          startSse(res)
          sse(res, { choices: [{ index: 0, delta: { content: "hi" }, finish_reason: "stop" }] })
          sse(res, "[DONE]")
          res.end()
        })
      )
      for (let i = 0; i < 3; i++) expect(LanguageModel.fromParts(yield* collect(model(), first)).text).toBe("hi")
      expect(server.connections()).toBe(1)
    }))

  it.live("a connection that breaks mid-answer fails the generation as unavailable", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve(async (_, res) => {
          startSse(res)
          sse(res, { choices: [{ index: 0, delta: { content: "half " }, finish_reason: null }] })
          await sleep(20)
          res.socket?.destroy()
        })
      )
      const error = yield* Effect.flip(collect(model(), first))
      expect(error.reason).toBe("unavailable")
      expect(error.message).toMatch(/the stream broke/)
    }))

  it.live("a provider nobody answers for fails as unavailable once the retries are spent", () =>
    Effect.gen(function*() {
      // A port that was just free: nothing listens there.
      const closed = yield* Effect.promise(() => serve(() => undefined))
      yield* Effect.promise(() => closed.close())
      const unreachable = ChatCompletions.make({ baseUrl: `${closed.url}/v1`, policy: { ...fast, maxRetries: 1 } })
      const error = yield* Effect.flip(collect(unreachable, first))
      expect(error.reason).toBe("unavailable")
      expect(error.message).toMatch(/cannot reach 127\.0\.0\.1:\d+/)
    }))

  it.live("a key that cannot go in a header fails the request, and the key is not in the message", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() => serve((_, res) => res.end()))
      const broken = ChatCompletions.make({
        baseUrl: `${server.url}/v1`,
        apiKey: Redacted.make("sk-secret\nline"),
        policy: fast
      })
      const error = yield* Effect.flip(collect(broken, first))
      expect(error.reason).toBe("invalid_request")
      expect(error.message).not.toContain("sk-secret")
      expect(server.received).toHaveLength(0)
    }))

  it.live("lists the server's models", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res) => {
          res.writeHead(200, { "content-type": "application/json" })
          res.end(JSON.stringify({ object: "list", data: [{ id: "llama3.2" }, { id: "qwen2.5-coder" }] }))
        })
      )
      expect(yield* ChatCompletions.listModels({ baseUrl: `${server.url}/v1` })).toEqual(["llama3.2", "qwen2.5-coder"])
      expect(server.received[0]!.path).toBe("/v1/models")
    }))
})

describe("OpenAiResponses (Responses API, loopback server)", () => {
  it.live("streams text and function calls, reports usage, retries a 429, and sends function outputs back", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res, index) => {
          if (index === 0) {
            res.writeHead(429, { "retry-after": "0" })
            return res.end("{}")
          }
          startSse(res)
          const event = (data: Record<string, unknown>) => sse(res, data, String(data.type))
          event({ type: "response.created", response: { id: "r1" } })
          if (index === 1) {
            event({ type: "response.output_text.delta", delta: "Checking. " })
            event({ type: "response.function_call_arguments.delta", delta: "{\"sql\"" })
            event({
              type: "response.output_item.done",
              item: {
                type: "function_call",
                id: "fc_1",
                call_id: "call_a",
                name: "run_sql",
                arguments: "{\"sql\":\"select 1\"}"
              }
            })
            event({ type: "response.completed", response: { usage: { input_tokens: 30, output_tokens: 9 } } })
          } else {
            event({ type: "response.output_text.delta", delta: "It is 1." })
            event({ type: "response.completed", response: { usage: { input_tokens: 40, output_tokens: 4 } } })
          }
          res.end()
        })
      )
      const model = OpenAiResponses.make({
        apiKey: Redacted.make("sk-openai"),
        baseUrl: `${server.url}/v1`,
        policy: fast
      })
      expect(yield* collect(model, first)).toEqual([
        LanguageModel.TextDelta.make({ text: "Checking. " }),
        LanguageModel.ToolCallPart.make({ id: "call_a", name: "run_sql", arguments: "{\"sql\":\"select 1\"}" }),
        LanguageModel.Finish.make({ reason: "tool_calls", usage: { inputTokens: 30, outputTokens: 9 } })
      ])
      expect(LanguageModel.fromParts(yield* collect(model, second))).toMatchObject({
        text: "It is 1.",
        finishReason: "stop"
      })
      expect(server.received.map((r) => r.path)).toEqual(["/v1/responses", "/v1/responses", "/v1/responses"])
      expect(server.received[1]!.body).toMatchObject({
        instructions: "You are a test.",
        input: [{ role: "user", content: "How many?" }],
        tools: [{ type: "function", name: "run_sql" }]
      })
      expect(server.received[2]!.body.input.slice(1)).toEqual([
        { type: "function_call", call_id: "call_a", name: "run_sql", arguments: "{\"sql\":\"select 1\"}" },
        { type: "function_call_output", call_id: "call_a", output: "{\"rows\":[[1]]}" }
      ])
    }))
})

describe("Anthropic (Messages API, loopback server)", () => {
  it.live("streams text and tool_use blocks assembled from input_json_delta, with usage; tool results go back as one user turn", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res, index) => {
          startSse(res)
          const event = (data: Record<string, unknown>) => sse(res, data, String(data.type))
          event({ type: "message_start", message: { usage: { input_tokens: 21, output_tokens: 1 } } })
          if (index === 0) {
            event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
            event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Checking. " } })
            event({ type: "content_block_stop", index: 0 })
            event({
              type: "content_block_start",
              index: 1,
              content_block: { type: "tool_use", id: "toolu_1", name: "run_sql", input: {} }
            })
            event({
              type: "content_block_delta",
              index: 1,
              delta: { type: "input_json_delta", partial_json: "{\"sql\": \"sel" }
            })
            event({
              type: "content_block_delta",
              index: 1,
              delta: { type: "input_json_delta", partial_json: "ect 1\"}" }
            })
            event({ type: "content_block_stop", index: 1 })
            event({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 17 } })
          } else {
            event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
            event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "It is 1." } })
            event({ type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 4 } })
          }
          event({ type: "message_stop" })
          res.end()
        })
      )
      const model = Anthropic.make({ apiKey: Redacted.make("sk-ant"), baseUrl: server.url, policy: fast })
      expect(yield* collect(model, first)).toEqual([
        LanguageModel.TextDelta.make({ text: "Checking. " }),
        LanguageModel.ToolCallPart.make({ id: "toolu_1", name: "run_sql", arguments: "{\"sql\": \"select 1\"}" }),
        LanguageModel.Finish.make({ reason: "tool_calls", usage: { inputTokens: 21, outputTokens: 17 } })
      ])
      expect(LanguageModel.fromParts(yield* collect(model, second))).toMatchObject({
        text: "It is 1.",
        finishReason: "stop"
      })
      const [request1, request2] = server.received
      expect(request1!.path).toBe("/v1/messages")
      expect(request1!.headers["x-api-key"]).toBe("sk-ant")
      expect(request1!.headers["anthropic-version"]).toBe(Anthropic.apiVersion)
      expect(request1!.body).toMatchObject({
        system: "You are a test.",
        max_tokens: Anthropic.defaultMaxTokens,
        tools: [{ name: "run_sql", input_schema: runSqlTool.parameters }]
      })
      expect(request2!.body.messages.slice(1)).toEqual([
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "call_a", name: "run_sql", input: { sql: "select 1" } }]
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_a", content: "{\"rows\":[[1]]}" }] }
      ])
    }))

  it.live("an overloaded error event mid-stream fails the generation as unavailable", () =>
    Effect.gen(function*() {
      server = yield* Effect.promise(() =>
        serve((_, res) => {
          startSse(res)
          sse(res, { type: "message_start", message: { usage: { input_tokens: 1 } } }, "message_start")
          sse(res, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, "error")
          res.end()
        })
      )
      const model = Anthropic.make({ apiKey: Redacted.make("k"), baseUrl: server.url, policy: fast })
      expect(yield* Effect.flip(collect(model, first))).toMatchObject({
        reason: "unavailable",
        message: "anthropic: Overloaded"
      })
    }))
})
