/**
 * Core's `LanguageModel` for OpenAI's Responses API (`POST {baseUrl}/responses`, streamed): text from
 * `response.output_text.delta`, tool calls from completed `function_call` output items, usage from
 * `response.completed`.
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
 * OpenAI's API base.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultBaseUrl = "https://api.openai.com/v1"

/**
 * Credentials and endpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  readonly apiKey: Redacted.Redacted
  /** Default `https://api.openai.com/v1` (an Azure or proxy base works as well). */
  readonly baseUrl?: string | undefined
  readonly policy?: Sse.Policy | undefined
}

/**
 * The request body of a generation.
 *
 * @since 0.1.0
 * @category utils
 */
export const body = (request: LanguageModel.GenerateRequest): Record<string, unknown> => ({
  model: request.model,
  stream: true,
  store: false,
  ...(request.system === undefined ? {} : { instructions: request.system }),
  input: request.messages.flatMap((message): ReadonlyArray<unknown> => {
    switch (message.role) {
      case "assistant":
        return [
          ...(message.content === "" ? [] : [{ role: "assistant", content: message.content }]),
          ...(message.toolCalls ?? []).map((call) => ({
            type: "function_call",
            call_id: call.id,
            name: call.name,
            arguments: call.arguments
          }))
        ]
      case "tool":
        return [{ type: "function_call_output", call_id: message.toolCallId ?? "", output: message.content }]
      case "system":
        return [{ role: "developer", content: message.content }]
      default:
        return [{ role: "user", content: message.content }]
    }
  }),
  ...(request.tools === undefined || request.tools.length === 0 ? {} : {
    tools: request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false
    }))
  }),
  ...(request.maxTokens === undefined ? {} : { max_output_tokens: request.maxTokens })
})

const provider = "openai"

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
        let calls = 0
        let incomplete = false
        let usage: LanguageModel.Usage | undefined
        return Sse.stream({
          provider,
          url: `${(config.baseUrl ?? defaultBaseUrl).replace(/\/+$/, "")}/responses`,
          headers: { authorization: `Bearer ${Redacted.value(config.apiKey)}` },
          body: body(request),
          policy: config.policy ?? Sse.defaultPolicy
        }, {
          event: (event): Either.Either<ReadonlyArray<LanguageModel.Part>, LanguageModel.LanguageModelError> => {
            switch (event?.type) {
              case "response.output_text.delta":
                return Either.right(
                  typeof event.delta === "string" && event.delta !== ""
                    ? [LanguageModel.textDelta(event.delta)]
                    : []
                )
              case "response.output_item.done": {
                const item = event.item
                if (item?.type !== "function_call") return Either.right([])
                calls += 1
                return Either.right([
                  LanguageModel.ToolCallPart.make({
                    id: String(item.call_id ?? item.id ?? `call_${calls}`),
                    name: String(item.name ?? ""),
                    arguments: typeof item.arguments === "string"
                      ? item.arguments
                      : JSON.stringify(item.arguments ?? {})
                  })
                ])
              }
              case "response.completed":
              case "response.incomplete": {
                incomplete = event.type === "response.incomplete"
                const reported = event.response?.usage
                if (reported != null) {
                  usage = {
                    inputTokens: Number(reported.input_tokens ?? 0),
                    outputTokens: Number(reported.output_tokens ?? 0)
                  }
                }
                return Either.right([])
              }
              case "response.failed":
              case "error": {
                const error = event.response?.error ?? event.error ?? event
                return Either.left(
                  new LanguageModel.LanguageModelError({
                    reason: error?.code === "rate_limit_exceeded" ? "rate_limited" : "unavailable",
                    message: `${provider}: ${error?.message ?? "the response failed"}`
                  })
                )
              }
              default:
                return Either.right([])
            }
          },
          end: () => [
            LanguageModel.Finish.make({
              reason: calls > 0 ? "tool_calls" : incomplete ? "length" : "stop",
              ...(usage === undefined ? {} : { usage })
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
