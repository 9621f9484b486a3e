/**
 * Core's `LanguageModel` for any OpenAI-compatible Chat Completions server (Ollama, vLLM, llama.cpp's
 * server, LM Studio, LiteLLM, OpenRouter): `POST {baseUrl}/chat/completions` with `stream: true`.
 * Text deltas are forwarded as they arrive; tool calls, which arrive in fragments spread over many
 * chunks (by `index`), are assembled and emitted whole before the finish part.
 *
 * @since 0.1.0
 */
import * as LanguageModel from "@sightline/core/LanguageModel"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Stream from "effect/Stream"
import * as Sse from "./internal/sse.js"

/**
 * Where the server is and how to talk to it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Config {
  /** The API base, e.g. `http://127.0.0.1:11434/v1` (the URL that `/chat/completions` and `/models` hang off). */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer`; many local servers need none. */
  readonly apiKey?: Redacted.Redacted | undefined
  /** Names the provider in errors (default `openai-compatible`). */
  readonly provider?: string | undefined
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
  stream_options: { include_usage: true },
  messages: [
    ...(request.system === undefined ? [] : [{ role: "system", content: request.system }]),
    ...request.messages.map((message) => {
      switch (message.role) {
        case "assistant":
          return {
            role: "assistant",
            content: message.content === "" ? null : message.content,
            ...(message.toolCalls === undefined || message.toolCalls.length === 0 ? {} : {
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: "function",
                function: { name: call.name, arguments: call.arguments }
              }))
            })
          }
        case "tool":
          return { role: "tool", tool_call_id: message.toolCallId ?? "", content: message.content }
        default:
          return { role: message.role, content: message.content }
      }
    })
  ],
  ...(request.tools === undefined || request.tools.length === 0 ? {} : {
    tools: request.tools.map((tool) => ({
      type: "function",
      function: { name: tool.name, description: tool.description, parameters: tool.parameters }
    }))
  }),
  ...(request.maxTokens === undefined ? {} : { max_tokens: request.maxTokens })
})

const finishReason = (reason: unknown, hasCalls: boolean): LanguageModel.FinishReason =>
  reason === "tool_calls" || reason === "function_call" || (hasCalls && reason !== "length")
    ? "tool_calls"
    : reason === "length"
    ? "length"
    : reason === "content_filter"
    ? "error"
    : "stop"

/**
 * The model over a server.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: Config): LanguageModel.LanguageModel.Service => {
  const provider = config.provider ?? "openai-compatible"
  const base = config.baseUrl.replace(/\/+$/, "")
  return LanguageModel.LanguageModel.of({
    generate: (request) =>
      Stream.suspend(() => {
        const calls = new Map<number, { id: string; name: string; arguments: string }>()
        let reason: unknown
        let usage: LanguageModel.Usage | undefined
        return Sse.stream({
          provider,
          url: `${base}/chat/completions`,
          headers: config.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(config.apiKey)}` },
          body: body(request),
          policy: config.policy ?? Sse.defaultPolicy,
          until: (event) => event.data.trim() === "[DONE]"
        }, {
          event: (chunk): Either.Either<ReadonlyArray<LanguageModel.Part>, LanguageModel.LanguageModelError> => {
            if (chunk?.error !== undefined) {
              return Either.left(
                new LanguageModel.LanguageModelError({
                  reason: "unavailable",
                  message: `${provider}: ${chunk.error.message ?? JSON.stringify(chunk.error)}`
                })
              )
            }
            if (chunk?.usage != null) {
              usage = {
                inputTokens: Number(chunk.usage.prompt_tokens ?? 0),
                outputTokens: Number(chunk.usage.completion_tokens ?? 0)
              }
            }
            const choice = chunk?.choices?.[0]
            if (choice === undefined) return Either.right([])
            if (choice.finish_reason != null) reason = choice.finish_reason
            for (const fragment of choice.delta?.tool_calls ?? []) {
              const index = Number(fragment.index ?? 0)
              const call = calls.get(index) ?? { id: "", name: "", arguments: "" }
              if (typeof fragment.id === "string" && fragment.id !== "") call.id = fragment.id
              if (typeof fragment.function?.name === "string") call.name += fragment.function.name
              if (typeof fragment.function?.arguments === "string") call.arguments += fragment.function.arguments
              calls.set(index, call)
            }
            const text = choice.delta?.content
            return Either.right(
              typeof text === "string" && text !== "" ? [LanguageModel.textDelta(text)] : []
            )
          },
          end: () => {
            const assembled = [...calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) =>
              LanguageModel.ToolCallPart.make({
                id: call.id === "" ? `call_${index}` : call.id,
                name: call.name,
                arguments: call.arguments
              })
            )
            const finish = LanguageModel.Finish.make({
              reason: finishReason(reason, assembled.length > 0),
              ...(usage === undefined ? {} : { usage })
            })
            return [...assembled, finish]
          }
        })
      })
  })
}

/**
 * The model ids the server lists at `GET {baseUrl}/models` (what Ollama and vLLM serve).
 *
 * @since 0.1.0
 * @category utils
 */
export const listModels = (config: Config): Effect.Effect<ReadonlyArray<string>, LanguageModel.LanguageModelError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(`${config.baseUrl.replace(/\/+$/, "")}/models`, {
        headers: config.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(config.apiKey)}` },
        signal
      })
      if (!response.ok) throw new Error(`${response.status} ${await response.text().catch(() => "")}`.trim())
      const listed = await response.json() as { data?: ReadonlyArray<{ id?: unknown }> }
      return (listed.data ?? []).flatMap((model) => typeof model.id === "string" ? [model.id] : [])
    },
    catch: (cause) =>
      new LanguageModel.LanguageModelError({
        reason: "unavailable",
        message: `${config.provider ?? "openai-compatible"}: cannot list models at ${config.baseUrl}: ${
          cause instanceof Error ? cause.message : String(cause)
        }`
      })
  }).pipe(
    Effect.timeoutFail({
      duration: "10 seconds",
      onTimeout: () =>
        new LanguageModel.LanguageModelError({
          reason: "unavailable",
          message: `cannot list models at ${config.baseUrl}: no answer within 10 s`
        })
    })
  )

/**
 * The model as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: Config): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.succeed(LanguageModel.LanguageModel, make(config))
