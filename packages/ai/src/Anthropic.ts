/**
 * Core's `LanguageModel` for Anthropic's Messages API (`POST {baseUrl}/v1/messages`, streamed):
 * text from `text_delta`s, tool calls assembled from `tool_use` blocks and their `input_json_delta`
 * fragments, usage from `message_start` and `message_delta`.
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Sse from "./internal/sse.js"

/**
 * Anthropic's API base.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.anthropic.com"

/**
 * The API version header Sightline speaks.
 *
 * @since 0.1.0
 * @category constants
 */
export const apiVersion = "2023-06-01"

/**
 * The output cap of a generation when the request sets none (the API requires one).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxTokens = 8192

/**
 * Credentials and endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly apiKey: Redacted.Redacted
  readonly baseUrl?: string | undefined
  readonly policy?: Sse.Policy | undefined
}

const parseInput = (text: string): unknown => {
  try {
    return JSON.parse(text === "" ? "{}" : text)
  } catch {
    return {}
  }
}

/**
 * The request body of a generation: consecutive tool results travel in one user message.
 *
 * @since 0.1.0
 * @category utils
 */
export const body = (request: LanguageModel.GenerateRequest): Record<string, unknown> => {
  const messages: Array<{ role: "user" | "assistant"; content: Array<unknown> }> = []
  const push = (role: "user" | "assistant", blocks: ReadonlyArray<unknown>) => {
    const last = messages.at(-1)
    if (last !== undefined && last.role === role) last.content.push(...blocks)
    else messages.push({ role, content: [...blocks] })
  }
  for (const message of request.messages) {
    switch (message.role) {
      case "assistant":
        push("assistant", [
          ...(message.content === "" ? [] : [{ type: "text", text: message.content }]),
          ...(message.toolCalls ?? []).map((call) => ({
            type: "tool_use",
            id: call.id,
            name: call.name,
            input: parseInput(call.arguments)
          }))
        ])
        break
      case "tool":
        push("user", [{ type: "tool_result", tool_use_id: message.toolCallId ?? "", content: message.content }])
        break
      default:
        push("user", [{ type: "text", text: message.content }])
    }
  }
  return {
    model: request.model,
    stream: true,
    max_tokens: request.maxTokens ?? defaultMaxTokens,
    ...(request.system === undefined ? {} : { system: request.system }),
    messages,
    ...(request.tools === undefined || request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        input_schema: tool.parameters
      }))
    })
  }
}

const provider = "anthropic"

/**
 * The model over the API.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): LanguageModel.LanguageModel.Service =>
  LanguageModel.LanguageModel.of({
    generate: (request) =>
      Stream.suspend(() => {
        const blocks = new Map<number, { id: string; name: string; json: string }>()
        let stopReason: unknown
        let inputTokens = 0
        let outputTokens = 0
        let reported = false
        return Sse.stream({
          provider,
          url: `${(config.baseUrl ?? defaultBaseUrl).replace(/\/+$/, "")}/v1/messages`,
          headers: { "x-api-key": Redacted.value(config.apiKey), "anthropic-version": apiVersion },
          body: body(request),
          policy: config.policy ?? Sse.defaultPolicy,
          until: (event) => event.event === "message_stop"
        }, {
          event: (event): Either.Either<ReadonlyArray<LanguageModel.Part>, LanguageModel.LanguageModelError> => {
            switch (event?.type) {
              case "message_start":
                reported = true
                inputTokens = Number(event.message?.usage?.input_tokens ?? 0)
                outputTokens = Number(event.message?.usage?.output_tokens ?? 0)
                return Either.right([])
              case "content_block_start":
                if (event.content_block?.type === "tool_use") {
                  blocks.set(Number(event.index), {
                    id: String(event.content_block.id),
                    name: String(event.content_block.name),
                    json: ""
                  })
                }
                return Either.right([])
              case "content_block_delta": {
                const delta = event.delta
                if (delta?.type === "text_delta" && typeof delta.text === "string" && delta.text !== "") {
                  return Either.right([LanguageModel.textDelta(delta.text)])
                }
                if (delta?.type === "input_json_delta") {
                  const block = blocks.get(Number(event.index))
                  if (block !== undefined) block.json += String(delta.partial_json ?? "")
                }
                return Either.right([])
              }
              case "content_block_stop": {
                const block = blocks.get(Number(event.index))
                if (block === undefined) return Either.right([])
                blocks.delete(Number(event.index))
                return Either.right([
                  LanguageModel.ToolCallPart.make({
                    id: block.id,
                    name: block.name,
                    arguments: block.json === "" ? "{}" : block.json
                  })
                ])
              }
              case "message_delta":
                if (event.delta?.stop_reason != null) stopReason = event.delta.stop_reason
                if (event.usage?.output_tokens != null) outputTokens = Number(event.usage.output_tokens)
                return Either.right([])
              case "error":
                return Either.left(
                  new LanguageModel.LanguageModelError({
                    reason: event.error?.type === "rate_limit_error" ? "rate_limited" : "unavailable",
                    message: `${provider}: ${event.error?.message ?? "stream error"}`
                  })
                )
              default:
                return Either.right([])
            }
          },
          end: () => [
            LanguageModel.Finish.make({
              reason: stopReason === "tool_use"
                ? "tool_calls"
                : stopReason === "max_tokens"
                ? "length"
                : stopReason === "refusal"
                ? "error"
                : "stop",
              ...(reported ? { usage: { inputTokens, outputTokens } } : {})
            })
          ]
        })
      })
  })

/**
 * The model as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: Config): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, make(config))
