/**
 * The contract every `LanguageModel` adapter satisfies: the shape of the stream, tool calling, a
 * conversation that carries tool results, and errors mapped to `LanguageModelError`.
 *
 * The suite runs on real time (`it.live`) because adapters talk to real servers. Its prompts are
 * explicit enough that a capable model, or a deterministic offline model, answers them the same way.
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { fromParts, LanguageModel, LanguageModelError, type Part, type Tool } from "../LanguageModel.js"

/**
 * What the suite needs to know about the model under test.
 *
 * @since 0.1.0
 * @category models
 */
export interface LanguageModelContractOptions {
  /** The model name to send. */
  readonly model: string
  /** A model name the provider rejects; when given, the suite checks it fails with `invalid_request`. */
  readonly unknownModel?: string
}

/**
 * The tool the suite offers.
 *
 * @since 0.1.0
 * @category constants
 */
export const contractTool: Tool = {
  name: "get_time",
  description: "Returns the current time in a time zone.",
  parameters: {
    type: "object",
    properties: { timezone: { type: "string", description: "An IANA time zone such as UTC" } },
    required: ["timezone"]
  }
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

const expectWellFormed = (parts: ReadonlyArray<Part>) => {
  expect(parts.length).toBeGreaterThan(0)
  expect(parts.filter((part) => part._tag === "Finish")).toHaveLength(1)
  expect(parts[parts.length - 1]!._tag).toBe("Finish")
}

/**
 * Registers the `LanguageModel` contract suite for an adapter.
 *
 * @since 0.1.0
 * @category utils
 */
export const languageModelContract = (
  name: string,
  layer: Layer.Layer<LanguageModel, unknown>,
  options: LanguageModelContractOptions
): void => {
  describe(`LanguageModel contract: ${name}`, () => {
    const run = (request: Parameters<LanguageModel.Service["generate"]>[0]) =>
      Effect.flatMap(LanguageModel, (model) => Stream.runCollect(model.generate(request))).pipe(
        Effect.map(Chunk.toReadonlyArray)
      )

    it.live("streams text and ends with exactly one finish part", () =>
      Effect.gen(function*() {
        const parts = yield* run({
          model: options.model,
          system: "You are a terse assistant.",
          messages: [{ role: "user", content: "Say hello in one short sentence." }],
          maxTokens: 64
        })
        expectWellFormed(parts)
        const response = fromParts(parts)
        expect(["stop", "length"]).toContain(response.finishReason)
        expect(response.text.trim().length).toBeGreaterThan(0)
        expect(response.toolCalls).toHaveLength(0)
      }).pipe(Effect.provide(layer)))

    it.live("calls an offered tool with a JSON object of arguments", () =>
      Effect.gen(function*() {
        const parts = yield* run({
          model: options.model,
          messages: [{ role: "user", content: "What time is it in UTC? You must call the get_time tool." }],
          tools: [contractTool],
          maxTokens: 256
        })
        expectWellFormed(parts)
        const response = fromParts(parts)
        expect(response.finishReason).toBe("tool_calls")
        expect(response.toolCalls.length).toBeGreaterThan(0)
        for (const call of response.toolCalls) {
          expect(call.id.length).toBeGreaterThan(0)
          expect(call.name).toBe(contractTool.name)
          const args = parseJson(call.arguments)
          expect(typeof args === "object" && args !== null && !Array.isArray(args)).toBe(true)
        }
      }).pipe(Effect.provide(layer)))

    it.live("continues a conversation that carries a tool result", () =>
      Effect.gen(function*() {
        const parts = yield* run({
          model: options.model,
          messages: [
            { role: "user", content: "What time is it in UTC? Use the tool, then answer with the time." },
            {
              role: "assistant",
              content: "",
              toolCalls: [{ id: "call_contract_1", name: "get_time", arguments: "{\"timezone\":\"UTC\"}" }]
            },
            { role: "tool", toolCallId: "call_contract_1", content: "12:34" }
          ],
          tools: [contractTool],
          maxTokens: 128
        })
        expectWellFormed(parts)
        expect(fromParts(parts).finishReason).not.toBe("error")
      }).pipe(Effect.provide(layer)))

    it.live.skipIf(options.unknownModel === undefined)(
      "fails with LanguageModelError invalid_request for a model the provider does not know",
      () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(run({
            model: options.unknownModel!,
            messages: [{ role: "user", content: "Hello" }]
          }))
          expect(error).toBeInstanceOf(LanguageModelError)
          expect(error.reason).toBe("invalid_request")
          expect(error.retryable).toBe(false)
        }).pipe(Effect.provide(layer))
    )
  })
}
