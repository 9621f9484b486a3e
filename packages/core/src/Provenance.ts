/**
 * How an answer was made, stored with its assistant message (`GET /v2/chats/{id}` serves it per
 * message): the model and its provider, the tokens and the model's time, each tool call, the
 * library commit and the semantic models the answer read, and a fingerprint of the client
 * attributes it ran under (never the attributes). With it an answer can be re-run as it was given
 * (`Chats.rerun`) and usage summed (`GET /v2/usage`).
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { ConnectorId } from "./Ids.js"

/**
 * One tool call of the answer, in order.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolCall = Schema.Struct({
  name: Schema.String,
  /** The call's arguments as the model wrote them (JSON: the SQL of a query, a semantic query), cut at 8,000 characters. */
  arguments: Schema.String,
  /** The connector the call named, when it named one. */
  connector_id: Schema.optional(ConnectorId),
  /** The tool's answer started with `error:`. */
  failed: Schema.Boolean,
  duration_ms: Schema.NonNegativeInt
}).annotations({ identifier: "ProvenanceToolCall" })
export type ToolCall = typeof ToolCall.Type

/**
 * The semantic model that governed a connector of the answer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SemanticModelUsed = Schema.Struct({
  connector_id: ConnectorId,
  /** The model's `name`. */
  model: Schema.String,
  /** `library`: a reviewed file of the library (its `path` at `commit`); `derived`: from the schema. */
  source: Schema.Literal("library", "derived"),
  path: Schema.optional(Schema.String),
  commit: Schema.optional(Schema.String)
}).annotations({ identifier: "ProvenanceSemanticModel" })
export type SemanticModelUsed = typeof SemanticModelUsed.Type

/**
 * An investigation's plan as the answer ran it: what it investigated and its steps, each shown as
 * a cell whose content is the step's title. The stream announces it as a `plan` event; the answer
 * keeps the last one of each investigation, so the plan is there after a reload.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Plan = Schema.Struct({
  /** What is investigated ("Revenue in February 2025 and March 2025"). */
  title: Schema.String,
  steps: Schema.Array(Schema.Struct({ id: Schema.String, title: Schema.String, level: Schema.Int }))
}).annotations({ identifier: "ProvenancePlan" })
export type Plan = typeof Plan.Type

/**
 * How an answer was made.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Provenance = Schema.Struct({
  /** The catalogue's model id, its provider and the provider's model name. */
  model: Schema.String,
  provider: Schema.String,
  provider_model: Schema.String,
  /** Model generations (steps) the answer took. */
  generations: Schema.NonNegativeInt,
  /** Tokens in and out over every generation, as the provider reported them (absent when it did not). */
  input_tokens: Schema.optional(Schema.NonNegativeInt),
  output_tokens: Schema.optional(Schema.NonNegativeInt),
  /** Time spent in the model's generations, tool calls excluded. */
  model_latency_ms: Schema.NonNegativeInt,
  tool_calls: Schema.Array(ToolCall),
  /** The library commit the answer read (its models and files); absent for an empty library. */
  library_commit: Schema.optional(Schema.String),
  semantic_models: Schema.Array(SemanticModelUsed),
  /**
   * SHA-256 of the organization and the client attributes the answer ran under, when it ran under
   * any: equal for equal attributes within an organization, and never the attributes themselves.
   */
  client_attributes_hash: Schema.optional(Schema.String),
  /** The plans of the investigations the answer ran, in order (none for an answer that ran none). */
  plans: Schema.optional(Schema.Array(Plan))
}).annotations({ identifier: "Provenance" })
export type Provenance = typeof Provenance.Type

/**
 * The longest arguments a tool call keeps.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxArgumentsLength = 8_000

/**
 * A tool call as kept: its arguments cut, and the connector they name read leniently (they are the model's JSON).
 *
 * @since 0.1.0
 * @category utils
 */
export const toolCall = (
  call: { readonly name: string; readonly arguments: string },
  outcome: { readonly failed: boolean; readonly durationMs: number }
): ToolCall => {
  let connector: ConnectorId | undefined
  try {
    const parsed: unknown = JSON.parse(call.arguments)
    const named = typeof parsed === "object" && parsed !== null
      ? (parsed as { readonly connector_id?: unknown }).connector_id
      : undefined
    if (Schema.is(ConnectorId)(named)) connector = named
  } catch {
    // Arguments that are not JSON name no connector.
  }
  return {
    name: call.name,
    arguments: call.arguments.slice(0, maxArgumentsLength),
    ...(connector === undefined ? {} : { connector_id: connector }),
    failed: outcome.failed,
    duration_ms: Math.max(0, Math.round(outcome.durationMs))
  }
}
