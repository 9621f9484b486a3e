/**
 * The language model port: what the agent asks of a model, independent of the provider.
 *
 * A generation is a stream of parts (text deltas, complete tool calls, one final finish part), so
 * the agent can forward text to SSE subscribers as it arrives. Adapters (OpenAI, Anthropic, any
 * OpenAI-compatible server, a deterministic offline model) live in `@sightline/ai`; they assemble a
 * tool call from the provider's fragments before emitting it, and fail the stream with
 * `LanguageModelError` when the provider cannot be reached or refuses the request.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as JSONSchema from "effect/JSONSchema"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import * as SemanticModel from "./SemanticModel.js"
import * as SemanticQuery from "./SemanticQuery.js"

/**
 * Who speaks in a message.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("system", "user", "assistant", "tool")
export type Role = typeof Role.Type

/**
 * A tool call as the model made it. `arguments` is JSON text, decoded by the caller against the tool's schema.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})
export type ToolCall = typeof ToolCall.Type

/**
 * One message of the conversation. An `assistant` message carries the `toolCalls` it made; a `tool`
 * message carries the result of one call in `content` and names it with `toolCallId`, with its data
 * in `structured` (as MCP's `structuredContent`) and `isError` when it failed (`ToolResult`).
 * Providers send `content`; the data is for readers of the conversation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Message = Schema.Struct({
  role: Role,
  content: Schema.String,
  toolCalls: Schema.optional(Schema.Array(ToolCall)),
  toolCallId: Schema.optional(Schema.String),
  structured: Schema.optional(Schema.Unknown),
  isError: Schema.optional(Schema.Boolean)
})
export type Message = typeof Message.Type

/**
 * A tool the model may call: `parameters` is a JSON Schema object describing its arguments.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Tool = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  parameters: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})
export type Tool = typeof Tool.Type

/**
 * A tool declared once, as the Effect schema of its arguments: its `parameters` are that schema's
 * JSON Schema (`JSONSchema.make`, inlined: providers take no `$ref` in tool parameters), and the
 * same schema decodes the model's arguments.
 *
 * @since 0.1.0
 * @category schemas
 */
export const toolOf = <A, I>(name: string, description: string, schema: Schema.Schema<A, I>): Tool => {
  const definitions: Record<string, JSONSchema.JsonSchema7> = {}
  const root = JSONSchema.fromAST(schema.ast, { definitions, topLevelReferenceStrategy: "skip" })
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline)
    if (typeof node !== "object" || node === null) return node
    const ref = (node as { readonly $ref?: unknown }).$ref
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) return inline(definitions[ref.slice("#/$defs/".length)])
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]))
  }
  return { name, description, parameters: inline(root) as Record<string, unknown> }
}

/**
 * A connector's semantic model, as data, for a model that reads data rather than prose (the
 * offline model): language models read the prompt's rendering of it instead.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticContext = Schema.Struct({
  connector_id: Schema.Int,
  model: SemanticModel.SemanticModelFile,
  /** A model of the library, reviewed under OWNERS (a derived one is not). */
  reviewed: Schema.Boolean
})
export type SemanticContext = typeof SemanticContext.Type

/**
 * An earlier answer of the chat, as data: the question, how its last table's query read it (or its
 * SQL), and that table's first rows. A follow-up's "the second one" or "it" names one of these rows,
 * and "and per channel?" refines that reading. The offline model reads it; language models read the
 * prompt's rendering of it (`AnswerPrompt`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const EarlierAnswer = Schema.Struct({
  question: Schema.String,
  /** The cell of its last table's query: what `query_metrics` refines with `based_on`. */
  cell_id: Schema.optional(Schema.String),
  /** That query, when it was a semantic query. */
  semantic_query: Schema.optional(SemanticQuery.SemanticQuery),
  /** The reading of its last table's query, when it ran a semantic query. */
  reading: Schema.optional(Schema.String),
  /** That query's SQL. */
  sql: Schema.optional(Schema.String),
  connector_id: Schema.optional(Schema.Int),
  columns: Schema.Array(Schema.String),
  /** The first rows of the table (at most `earlierRows`). */
  rows: Schema.Array(Schema.Array(Schema.Unknown)),
  /** How many rows the query returned. */
  row_count: Schema.Number
})
export type EarlierAnswer = typeof EarlierAnswer.Type

/**
 * A generation request.
 *
 * @since 0.1.0
 * @category schemas
 */
export const GenerateRequest = Schema.Struct({
  /** The provider's model name (the catalogue maps model ids to it). */
  model: Schema.String,
  /** The catalogue's provider of the model (`openai`, `anthropic`, `offline`, ...): adapters that serve several route on it. */
  provider: Schema.optional(Schema.String),
  system: Schema.optional(Schema.String),
  messages: Schema.Array(Message),
  tools: Schema.optional(Schema.Array(Tool)),
  maxTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  /** The chat's connectors' semantic models, as data. */
  semantic: Schema.optional(Schema.Array(SemanticContext)),
  /** The chat's earlier answers that showed a table, oldest first, as data. */
  earlier: Schema.optional(Schema.Array(EarlierAnswer))
})
export type GenerateRequest = typeof GenerateRequest.Type

/**
 * Token counts of a generation, when the provider reports them.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Usage = Schema.Struct({
  inputTokens: Schema.Int.pipe(Schema.nonNegative()),
  outputTokens: Schema.Int.pipe(Schema.nonNegative())
})
export type Usage = typeof Usage.Type

/**
 * Why a generation ended: `stop` (a complete answer), `tool_calls` (the model waits for tool results),
 * `length` (`maxTokens` reached) or `error` (the provider ended the generation abnormally after it started,
 * e.g. a content filter; a request that fails outright fails the stream instead).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FinishReason = Schema.Literal("stop", "tool_calls", "length", "error")
export type FinishReason = typeof FinishReason.Type

/**
 * A piece of generated text.
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextDelta = Schema.TaggedStruct("TextDelta", { text: Schema.String })
export type TextDelta = typeof TextDelta.Type

/**
 * A piece of text a provider streamed, the value `TextDelta.make` builds, without its check (the
 * text is a string already): every token of every answer is one, where the check cost more than
 * the rest of the token's decoding.
 *
 * @since 0.1.0
 * @category utils
 */
export const textDelta = (text: string): TextDelta => ({ _tag: "TextDelta", text })

/**
 * A complete tool call.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCallPart = Schema.TaggedStruct("ToolCall", ToolCall.fields)
export type ToolCallPart = typeof ToolCallPart.Type

/**
 * The last part of every generation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Finish = Schema.TaggedStruct("Finish", {
  reason: FinishReason,
  usage: Schema.optional(Usage)
})
export type Finish = typeof Finish.Type

/**
 * A part of a generation stream.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Part = Schema.Union(TextDelta, ToolCallPart, Finish)
export type Part = typeof Part.Type

/**
 * Why a request failed: the provider is `unavailable` (network, 5xx, timeout), `rate_limited`,
 * `unauthorized` (bad credentials), or rejected an `invalid_request` (unknown model, context too long).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ErrorReason = Schema.Literal("unavailable", "rate_limited", "unauthorized", "invalid_request")
export type ErrorReason = typeof ErrorReason.Type

/**
 * A generation that could not be carried out. Not an API error: the agent decides whether to retry
 * (`retryable`) and how to report it in the chat.
 *
 * @since 0.1.0
 * @category errors
 */
export class LanguageModelError extends Schema.TaggedError<LanguageModelError>()("LanguageModelError", {
  reason: ErrorReason,
  message: Schema.String
}) {
  /** Whether the same request may succeed later. */
  get retryable(): boolean {
    return this.reason === "unavailable" || this.reason === "rate_limited"
  }
}

/**
 * A whole generation, collected from its parts.
 *
 * @since 0.1.0
 * @category models
 */
export interface Response {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ToolCall>
  readonly finishReason: FinishReason
  readonly usage?: Usage
}

/**
 * Generates replies.
 *
 * @since 0.1.0
 * @category services
 */
export class LanguageModel extends Context.Tag("@sightline/core/LanguageModel")<
  LanguageModel,
  LanguageModel.Service
>() {}

export declare namespace LanguageModel {
  /** A provider's model endpoint. */
  export interface Service {
    /** Streams a generation; the last part is a `Finish`, and it is the only one. */
    readonly generate: (request: GenerateRequest) => Stream.Stream<Part, LanguageModelError>
  }
}

/**
 * Collects parts into a response: text deltas joined, tool calls in order, the finish part's reason and usage.
 *
 * @since 0.1.0
 * @category utils
 */
export const fromParts = (parts: Iterable<Part>): Response => {
  let text = ""
  const toolCalls: Array<ToolCall> = []
  let finish: Finish | undefined
  for (const part of parts) {
    if (part._tag === "TextDelta") text += part.text
    else if (part._tag === "ToolCall") toolCalls.push({ id: part.id, name: part.name, arguments: part.arguments })
    else finish = part
  }
  // A stream cut short of its finish part (an adapter bug) reads as its parts suggest.
  const finishReason = finish?.reason ?? (toolCalls.length > 0 ? "tool_calls" : "stop")
  return finish?.usage === undefined
    ? { text, toolCalls, finishReason }
    : { text, toolCalls, finishReason, usage: finish.usage }
}

/**
 * Collects a generation stream into a response.
 *
 * @since 0.1.0
 * @category utils
 */
export const collect = <E, R>(parts: Stream.Stream<Part, E, R>): Effect.Effect<Response, E, R> =>
  Effect.map(Stream.runCollect(parts), fromParts)

/**
 * Streams a generation from the `LanguageModel` in context.
 *
 * @since 0.1.0
 * @category utils
 */
export const generate = (request: GenerateRequest): Stream.Stream<Part, LanguageModelError, LanguageModel> =>
  Stream.unwrap(Effect.map(LanguageModel, (model) => model.generate(request)))

/**
 * Runs a generation of the `LanguageModel` in context to the end and collects it.
 *
 * @since 0.1.0
 * @category utils
 */
export const generateText = (request: GenerateRequest): Effect.Effect<Response, LanguageModelError, LanguageModel> =>
  Effect.flatMap(LanguageModel, (model) => collect(model.generate(request)))

/**
 * The parts of a plain answer: the text, then `Finish` with `stop`.
 *
 * @since 0.1.0
 * @category utils
 */
export const reply = (text: string, usage?: Usage): ReadonlyArray<Part> => [
  TextDelta.make({ text }),
  Finish.make(usage === undefined ? { reason: "stop" } : { reason: "stop", usage })
]

/**
 * The parts of a turn that calls tools (arguments given as values, sent as JSON text), then `Finish` with `tool_calls`.
 *
 * @since 0.1.0
 * @category utils
 */
export const callTools = (
  ...calls: ReadonlyArray<{ readonly id?: string; readonly name: string; readonly arguments: unknown }>
): ReadonlyArray<Part> => [
  ...calls.map((call, i) =>
    ToolCallPart.make({ id: call.id ?? `call_${i + 1}`, name: call.name, arguments: JSON.stringify(call.arguments) })
  ),
  Finish.make({ reason: "tool_calls" })
]

/**
 * One scripted generation: the parts to stream, or the error to fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type Turn = ReadonlyArray<Part> | LanguageModelError

/**
 * What the memory model answers: a list of turns played in order (one per `generate`), or a function
 * of the request and the number of earlier requests.
 *
 * @since 0.1.0
 * @category models
 */
export type Script = ReadonlyArray<Turn> | ((request: GenerateRequest, index: number) => Turn)

/**
 * What the memory model received, for assertions in tests.
 *
 * @since 0.1.0
 * @category services
 */
export class MemoryLanguageModel extends Context.Tag("@sightline/core/LanguageModel/MemoryLanguageModel")<
  MemoryLanguageModel,
  MemoryLanguageModel.Service
>() {}

export declare namespace MemoryLanguageModel {
  /** The recorded requests. */
  export interface Service {
    /** Every request so far, oldest first. */
    readonly requests: Effect.Effect<ReadonlyArray<GenerateRequest>>
  }
}

/**
 * A scripted model for unit tests: it understands nothing and streams the scripted turns verbatim.
 * A list script that runs out is a defect (the test expected fewer generations).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory = (script: Script): Layer.Layer<LanguageModel | MemoryLanguageModel> =>
  Layer.effectContext(Effect.map(Ref.make<ReadonlyArray<GenerateRequest>>([]), (requests) => {
    const turnOf = (request: GenerateRequest, index: number): Turn | undefined =>
      typeof script === "function" ? script(request, index) : script[index]
    const model = LanguageModel.of({
      generate: (request) =>
        Stream.unwrap(Ref.modify(requests, (seen) => {
          const turn = turnOf(request, seen.length)
          const stream: Stream.Stream<Part, LanguageModelError> = turn === undefined
            ? Stream.dieMessage(`LanguageModel.layerMemory: script exhausted after ${seen.length} turns`)
            : turn instanceof LanguageModelError
            ? Stream.fail(turn)
            : Stream.fromIterable(turn)
          return [stream, [...seen, request]]
        }))
    })
    return Context.make(LanguageModel, model).pipe(
      Context.add(MemoryLanguageModel, MemoryLanguageModel.of({ requests: Ref.get(requests) }))
    )
  }))
