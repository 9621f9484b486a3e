/**
 * The agent loop of one run, over its gathered `AnswerContext`: the model streams text (emitted as
 * `text` events) and tool calls, each call runs and its result goes back to the model (errors too,
 * so that it can correct itself), for at most `maxSteps` generations. Every generation and tool
 * call is entered in the run's ledger as it happens, so that a run that fails still counts them.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type * as AnswerContext from "./AnswerContext.js"
import type * as ChatEvent from "./ChatEvent.js"
import type { Conflict } from "./Errors.js"
import type * as RunLedger from "./internal/runLedger.js"
import type * as LanguageModel from "./LanguageModel.js"
import * as Metrics from "./Metrics.js"
import * as Model from "./Model.js"
import * as Provenance from "./Provenance.js"
import * as ToolResult from "./ToolResult.js"

/**
 * What the loop works with beside its context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** The most generations (a model that keeps calling tools is stopped there). */
  readonly maxSteps: number
  /** Queues an event of the run. */
  readonly emit: (event: ChatEvent.ChatEvent) => Effect.Effect<void>
  /** Where each generation and tool call is entered. */
  readonly ledger: RunLedger.Ledger
  /**
   * Called with the whole answer at the model's last part of its final step, once all of it is
   * emitted: the run stores it there and then, not after the model's stream is torn down (which
   * waits on the provider's body to end).
   */
  readonly answered: (answer: string) => Effect.Effect<void, Conflict>
}

/**
 * Runs the loop; returns the answer's text.
 *
 * @since 0.1.0
 * @category utils
 */
export const loop = (
  context: AnswerContext.AnswerContext,
  model: LanguageModel.LanguageModel.Service,
  options: Options
): Effect.Effect<string, LanguageModel.LanguageModelError | Conflict> =>
  Effect.gen(function*() {
    const { answered, emit, ledger, maxSteps } = options
    const { run, runTool, system, tools } = context
    const entry = context.model
    const providerModel = Model.providerModel(entry)
    const messages: Array<LanguageModel.Message> = [...context.history]
    let answer = ""
    for (let step = 0;; step++) {
      if (step === maxSteps) {
        const note = `\n\n_Stopped after ${maxSteps} steps without a final answer._`
        answer += note
        yield* emit({ type: "text", text: note })
        break
      }
      let text = ""
      const calls: Array<LanguageModel.ToolCall> = []
      const began = yield* Clock.currentTimeMillis
      let firstToken = true
      yield* Stream.runForEach(
        model.generate({
          model: providerModel,
          provider: entry.provider,
          system,
          // A copy: the loop goes on appending, and the request must stay what was sent.
          messages: [...messages],
          ...(tools.length > 0 ? { tools } : {}),
          ...(context.semantic.length > 0 ? { semantic: context.semantic } : {}),
          ...(context.earlier.length > 0 ? { earlier: context.earlier } : {})
        }),
        (part) => {
          if (part._tag === "TextDelta") {
            if (part.text === "") return Effect.void
            text += part.text
            if (!firstToken) return emit({ type: "text", text: part.text })
            firstToken = false
            return Effect.zipRight(
              Effect.flatMap(
                Clock.currentTimeMillis,
                (now) => Effect.annotateCurrentSpan("sightline.time_to_first_token_ms", now - began)
              ),
              emit({ type: "text", text: part.text })
            )
          }
          if (part._tag === "ToolCall") calls.push({ id: part.id, name: part.name, arguments: part.arguments })
          if (part._tag !== "Finish") return Effect.void
          return Effect.flatMap(Clock.currentTimeMillis, (now) => {
            ledger.generations.push({ usage: part.usage, millis: now - began })
            // Said before the model's stream is torn down, so that the answer's last words are
            // still queued, not yet on their way to the log, when the run ends with them.
            return Effect.zipRight(
              Effect.zipRight(
                part.usage === undefined
                  ? Effect.void
                  : Metrics.tokensUsed(entry.id, run.organizationId, part.usage),
                Effect.annotateCurrentSpan({
                  "gen_ai.response.finish_reasons": [part.reason],
                  ...(part.usage === undefined ? {} : {
                    "gen_ai.usage.input_tokens": part.usage.inputTokens,
                    "gen_ai.usage.output_tokens": part.usage.outputTokens
                  })
                })
              ),
              calls.length === 0 ? answered(answer + text) : Effect.void
            )
          })
        }
      ).pipe(
        // One span per generation, with the GenAI semantic conventions' attributes (never the
        // prompt, the data it carries, or the answer).
        Effect.withSpan(`chat ${providerModel}`, {
          kind: "client",
          attributes: {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": entry.provider,
            "gen_ai.request.model": providerModel,
            "gen_ai.conversation.id": run.chatId
          }
        })
      )
      answer += text
      if (calls.length === 0) break
      messages.push({ role: "assistant", content: text, toolCalls: calls })
      for (const call of calls) {
        const started = yield* Clock.currentTimeMillis
        const result = yield* runTool(call).pipe(
          Effect.withSpan(`execute_tool ${call.name}`, {
            attributes: {
              "gen_ai.operation.name": "execute_tool",
              "gen_ai.tool.name": call.name,
              ...(call.id === undefined ? {} : { "gen_ai.tool.call.id": call.id }),
              "gen_ai.conversation.id": run.chatId
            }
          })
        )
        const durationMs = (yield* Clock.currentTimeMillis) - started
        ledger.toolCalls.push(Provenance.toolCall(call, { failed: result._tag === "Failed", durationMs }))
        messages.push(ToolResult.toMessage(result, call.id))
      }
    }
    return answer
  })
